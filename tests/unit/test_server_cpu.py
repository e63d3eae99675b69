"""The CPU of the servers fsarena starts: read from their cgroup, counted in the CPU cost.

The cgroup readers and the choice of cgroup run on directories shaped like the
kernel's (the real ones: tests/integration/test_server_cpu.py and
test_cgroups_real.py); pgbench's arithmetic runs on the fake executor, whose
server cgroup counts CPU as cgroup v2's cpu.stat does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from fsarena.analysis.kinds import CPU_KIND
from fsarena.analysis.verdicts import analyse
from fsarena.datasets.manifest import Manifest
from fsarena.filesystems.profiles import PROFILES
from fsarena.host import cgroups
from fsarena.measure.metrics import METRICS, metric_value
from fsarena.plan.catalog import DATASETS
from fsarena.tasks.base import SourceDataset, TaskContext
from fsarena.tasks.pgbench import PgbenchOltp
from tests.fakes import FakeExecutor
from tests.sessions import make_session, measurement

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"


def test_cpu_stat_of_cgroup_v2_is_read_in_seconds(tmp_path: Path) -> None:
    (tmp_path / "cpu.stat").write_text(
        "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n"
    )
    assert cgroups.cpu_usage(str(tmp_path)) == cgroups.CpuUsage(2.0, 0.5)


def test_cpuacct_of_cgroup_v1_is_the_exact_usage_split_as_its_ticks(tmp_path: Path) -> None:
    (tmp_path / "cpuacct.usage").write_text("4000000000\n")  # ns: 4 s
    (tmp_path / "cpuacct.stat").write_text("user 300\nsystem 100\n")  # ticks: 3:1
    used = cgroups.cpu_usage(str(tmp_path))
    assert used is not None
    assert used.user_s == pytest.approx(3.0) and used.sys_s == pytest.approx(1.0)
    assert used.since(cgroups.CpuUsage(1.0, 0.5)) == cgroups.CpuUsage(2.0, 0.5)
    assert cgroups.cpu_usage(str(tmp_path / "missing")) is None


def _v1(base: Path) -> Path:
    (base / "memory").mkdir(parents=True)
    (base / "memory" / "memory.limit_in_bytes").write_text("")
    (base / "cpuacct").mkdir()
    (base / "cpuacct" / "cpuacct.usage").write_text("0\n")
    return base


def test_on_cgroup_v1_the_server_gets_a_cpuacct_cgroup_of_its_own(tmp_path: Path) -> None:
    base = _v1(tmp_path)
    told: list[str] = []
    made = cgroups.create_cpu_cgroup(str(base / "memory" / "fsarena-1-0"), told.append, base)
    assert Path(made).parent == base / "cpuacct" and Path(made).is_dir()
    assert Path(made).name.startswith("fsarena-") and told == [made]  # in the ledger first


def test_on_cgroup_v2_the_memory_cgroup_counts_cpu_itself(tmp_path: Path) -> None:
    memory = tmp_path / "fsarena-1-0"
    memory.mkdir()
    (memory / "cpu.stat").write_text("usage_usec 0\nuser_usec 0\nsystem_usec 0\n")
    told: list[str] = []
    assert cgroups.create_cpu_cgroup(str(memory), told.append, tmp_path) == str(memory)
    assert told == []  # nothing made


def test_a_hybrid_without_cpuacct_counts_in_the_unified_hierarchy(tmp_path: Path) -> None:
    (tmp_path / "unified").mkdir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    (tmp_path / "unified" / "cgroup.procs").write_text("")
    made = cgroups.create_cpu_cgroup("/sys/fs/cgroup/memory/fsarena-1-0", None, tmp_path)
    assert Path(made).parent == tmp_path / "unified"
    # A v2 cgroup without cpu.stat (kernel < 4.15) is never left for another one: its
    # processes would leave its memory limit.
    beside = tmp_path / "unified" / "fsarena-1-9"
    beside.mkdir()
    assert cgroups.create_cpu_cgroup(str(beside), None, tmp_path) == ""
    assert cgroups.create_cpu_cgroup("", None, tmp_path / "none") == ""


@dataclass
class _Server(FakeExecutor):
    """A fake whose psql answers a size and whose pgbench left its summary and log."""

    def output(self, argv: Sequence[str]) -> str:
        if "psql" in argv[0]:
            return "16000000\n"
        if argv[:2] == ("sh", "-c") and "cat" in argv[2]:
            return (TOOLS / "pgbench-15-log.txt").read_text()
        return super().output(argv)


def _oltp(executor: FakeExecutor) -> tuple[PgbenchOltp, TaskContext]:
    spec = DATASETS["pgbench"]
    source = SourceDataset("/src", Manifest("pgbench", "", (), ()), spec)
    ctx = TaskContext(PROFILES["ext4"], "/dev/loop9", "/mnt", "/scratch", {"pgbench": source},
                      executor)  # fmt: skip
    executor.files["/scratch/pgbench.txt"] = (TOOLS / "pgbench-15.txt").read_text()
    task = PgbenchOltp()
    task.cgroup = "/sys/fs/cgroup/memory/fsarena-1-0"
    task.cpu_cgroup = executor.create_cpu_cgroup(task.cgroup)  # as _start makes it
    return task, ctx


def test_pgbench_counts_the_servers_cpu_over_the_timed_region_only() -> None:
    executor = _Server(cpu_cgroup="/sys/fs/cgroup/cpuacct/fsarena-1-1",
                       server_cpu_usec=(3_000_000, 1_000_000))  # fmt: skip
    task, ctx = _oltp(executor)
    task.region_starts(ctx)
    m = executor.measure([], ctx.device, 60).measurement
    task.region_ended(ctx)
    m = replace(m, extra=task.extra(ctx, m))
    # The server's start-up (0.7 + 0.3 s before the region) is not the task's.
    assert m.extra["server_user_s"] == pytest.approx(3.0)
    assert m.extra["server_sys_s"] == pytest.approx(1.0)
    assert metric_value(m, "server_cpu_s") == pytest.approx(4.0)
    clients = m.user_s + m.sys_s
    assert metric_value(m, "cpu_s") == pytest.approx(clients + 4.0)
    tx = m.extra["pgbench_transactions"]
    assert m.extra["cpu_ms_per_transaction"] == pytest.approx((clients + 4.0) / tx * 1e3)
    assert not METRICS["server_cpu_s"].ranked  # its cost is judged in cpu_s, per transaction


def test_without_a_cgroup_that_counts_cpu_nothing_is_invented() -> None:
    executor = _Server()  # create_cpu_cgroup answers ""
    task, ctx = _oltp(executor)
    task.region_starts(ctx)
    m = executor.measure([], ctx.device, 60).measurement
    task.region_ended(ctx)
    extra = task.extra(ctx, m)
    assert "server_user_s" not in extra and "server_sys_s" not in extra
    m = replace(m, extra=extra)
    assert metric_value(m, "server_cpu_s") is None
    assert metric_value(m, "cpu_s") == pytest.approx(m.user_s + m.sys_s)


def _cpu_fact(server_s: float | None) -> str:
    session = make_session(
        {"ext4": {"iso_copy_in": [1.0, 1.1]}, "xfs": {"iso_copy_in": [2.0, 2.1]}}
    )
    if server_s is not None:
        for run in session.runs:
            if run.measurement is not None:
                extra = {"server_user_s": server_s, "server_sys_s": 0.0}
                run.measurement = replace(run.measurement, extra={**run.measurement.extra, **extra})
    columns = {t: ["wall_s"] for t in session.tasks() if session.plan.task_info[t].timed}
    return next(k.text for k in analyse(session, columns).answer.kinds if k.kind == CPU_KIND)


def test_the_cpu_cost_says_whose_cpu_it_counts() -> None:
    counted = _cpu_fact(5.0)
    assert "and of the servers they started (PostgreSQL" in counted
    assert "servers started outside" not in counted
    assert "ext4 5.4" in counted  # 0.4 s of the task's own + 5 s of the server's, median
    old = _cpu_fact(None)  # a session without server figures says what it always said
    assert "servers started outside the timed commands (PostgreSQL) are not in it" in old
    assert measurement(1.0).extra == {}
