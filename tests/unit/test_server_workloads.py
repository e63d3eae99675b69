"""Today's server workloads: their parameters as data, their scaling, parsers and skips."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.datasets.manifest import Manifest
from fsarena.datasets.spec import DatasetSpec
from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES
from fsarena.plan.catalog import DATASET_KINDS, DATASETS, WORKLOADS, customized, scaled_specs
from fsarena.plan.model import make_plan
from fsarena.report.outcome import banner
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import load
from fsarena.tasks import TASKS, SourceDataset, TaskContext
from fsarena.tasks.dbench import DbenchSpec, parse_dbench
from fsarena.tasks.fio import parse_fio
from fsarena.tasks.fsmark import parse_fsmark
from fsarena.tasks.pgbench import PgbenchSpec, parse_pgbench, percentile_from_pgbench_log
from fsarena.tasks.sqlite import insert_script
from tests.fakes import FakeExecutor

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"
MIB = 1 << 20


def test_scaling_shrinks_sizes_and_durations_never_concurrency() -> None:
    specs = scaled_specs(["pgbench", "dbench", "fio", "fsmark", "sqlite"], {}, 0.1)
    pg = specs["pgbench"]
    assert isinstance(pg, PgbenchSpec)
    assert (pg.scale_factor, pg.duration_s, pg.clients, pg.jobs) == (10, 6, 8, 2)
    dbench = specs["dbench"].to_dict()
    assert (dbench["clients"], dbench["duration_s"]) == (8, 6)
    assert specs["fsmark"].to_dict()["threads"] == 4
    assert specs["fio"].to_dict()["size_bytes"] == 409 * MIB
    assert specs["fio"].to_dict()["block_bytes"] == 4096


def test_a_tiny_scale_stops_at_each_floor() -> None:
    specs = scaled_specs(["pgbench", "fio", "sqlite"], {}, 0.0001)
    pg = specs["pgbench"]
    assert isinstance(pg, PgbenchSpec)
    assert (pg.scale_factor, pg.duration_s) == (1, 5)
    assert pg.memory_bytes >= pg.shared_buffers_bytes + 64 * MIB
    assert specs["fio"].to_dict()["runtime_s"] == 3
    assert specs["sqlite"].to_dict()["inserts"] == 100


def test_a_database_at_scale_one_is_larger_than_the_servers_memory() -> None:
    pg = DATASETS["pgbench"]
    assert isinstance(pg, PgbenchSpec)
    assert pg.database_bytes > pg.memory_bytes > pg.shared_buffers_bytes


def test_a_suite_changes_parameters_and_typos_are_named() -> None:
    assert customized("dbench", {"clients": 12}).to_dict()["clients"] == 12
    with pytest.raises(FsarenaError, match=r"datasets.dbench.client: unknown key"):
        customized("dbench", {"client": 12})


def test_each_family_declares_its_parameters_and_the_catalog_collects_them() -> None:
    declared = {t.parameters for t in TASKS.values() if t.parameters is not None}
    assert {"sqlite", "pgbench", "fsmark", "dbench", "fio"} <= {s.name for s in WORKLOADS}
    assert set(WORKLOADS) == declared
    for spec in WORKLOADS:
        assert DATASETS[spec.name] is spec and DATASET_KINDS[spec.kind] is type(spec)
    for task in TASKS.values():  # the parameters are one of the datasets the task uses
        assert task.parameters is None or task.parameters.name in task.datasets, task.name


def test_a_task_reads_its_parameters_as_planned_and_a_wrong_kind_is_named() -> None:
    def ctx(spec: DatasetSpec) -> TaskContext:
        source = SourceDataset("/src", Manifest("dbench", "", (), ()), spec)
        return TaskContext(PROFILES["ext4"], "/dev/loop9", "/mnt", "/s", {"dbench": source},
                           FakeExecutor())  # fmt: skip

    planned = customized("dbench", {"clients": 3}).scaled(0.5)
    assert ctx(planned).parameters(DbenchSpec) == DbenchSpec(
        name="dbench", clients=3, duration_s=30
    )
    with pytest.raises(FsarenaError, match='dataset "dbench" must be of kind "dbench"'):
        ctx(customized("dbench", {"kind": "fio"})).parameters(DbenchSpec)


def test_the_sqlite_script_names_its_journal_mode_and_one_insert_per_line() -> None:
    script = insert_script("WAL", 3, 16).splitlines()
    assert script[0] == "PRAGMA journal_mode=WAL;"
    assert len(script) == 4 and all(line.startswith("INSERT INTO t(") for line in script[1:])
    assert "BEGIN" not in "".join(script)  # autocommit: one transaction per INSERT


def test_parsers_read_real_tool_output() -> None:
    assert parse_fsmark((TOOLS / "fs_mark-3.3.txt").read_text()) == 939.6
    assert parse_dbench((TOOLS / "dbench-4.0.txt").read_text()) == (126.052, 32.592)
    fio = parse_fio((TOOLS / "fio-3.33-randwrite.json").read_text(), "write")
    assert fio["fio_iops"] == pytest.approx(2994.502749)
    assert fio["fio_lat_p99_ms"] == pytest.approx(4.75136)
    assert fio["fio_sync_p99_ms"] == pytest.approx(10.81344)
    pg = parse_pgbench((TOOLS / "pgbench-15.txt").read_text())
    assert pg["pgbench_failed"] == 0 and pg["pgbench_tps"] > 0
    assert pg["pgbench_transactions"] > 0 and pg["pgbench_latency_avg_ms"] > 0


def test_the_p99_is_the_nearest_rank_of_the_logged_latencies() -> None:
    lines = [f"0 {i} {(i + 1) * 1000} 0 1700000000 {i}" for i in range(200)]
    assert percentile_from_pgbench_log(lines, 99.0) == 198.0  # rank 198 of 200, in ms
    real = (TOOLS / "pgbench-15-log.txt").read_text().splitlines()
    assert percentile_from_pgbench_log(real, 99.0) > 0
    with pytest.raises(FsarenaError, match="no completed transaction"):
        percentile_from_pgbench_log(["0 1 failed 0 1 2"], 99.0)


def test_postgresql_is_skipped_with_its_reason_where_files_have_no_unix_owner(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "pg.toml"
    suite.write_text(
        'name = "pg"\nfilesystems = ["vfat"]\n'
        'tasks = ["mkfs", "mount", "pgbench_init", "pgbench_oltp", "umount"]\n'
    )
    plan = make_plan(str(suite), ["vfat"], 1, 0.01, 7, str(tmp_path / "work"))
    path = tmp_path / "session.json"
    ex = FakeExecutor()
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    runs = {r.task: r for r in load(path).runs}
    for task in ("pgbench_init", "pgbench_oltp"):
        assert runs[task].status == "skipped"
        assert "no Unix owners" in runs[task].error
    assert runs["umount"].status == "ok"  # a skip does not end the sequence
    # A task this filesystem cannot run is not a loss: the session is complete, and
    # no report opens with "only part was measured" (a skip after a failure would).
    session = load(path)
    assert all(runs[t].fault == "unsupported" for t in ("pgbench_init", "pgbench_oltp"))
    assert session.status == "complete" and banner(session) is None
    next(r for r in session.runs if r.task == "pgbench_init").fault = ""
    assert session.settled() == "partial"


def test_a_pgbench_run_without_any_transaction_is_an_error_that_says_so() -> None:
    # pgbench's real output in a User-Mode Linux guest: no tps and no latency lines.
    text = (TOOLS / "pgbench-15-uml-no-transaction.txt").read_text()
    with pytest.raises(FsarenaError, match="completed no transaction"):
        parse_pgbench(text)
