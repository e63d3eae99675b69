"""The power-loss test without root: workloads, the oracle on plain directories, states, reports."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.powerloss.log import FSYNC, MARK, WRITE, FlogLog
from fsarena.powerloss.model import Model, Snapshot, matches
from fsarena.powerloss.results import (
    PowerlossDetails,
    StateOutcome,
    ViolationRecord,
    WorkloadResult,
    filesystem_values,
    summarize,
)
from fsarena.powerloss.states import generate, intervals
from fsarena.powerloss.workload import builtin_workloads, parse_script, parse_workload
from fsarena.report import render
from fsarena.session.file import Run, Session


def workload(script: str, watch: str = "") -> Model:
    text = f'name = "t"\nwatch = [{watch}]\nscript = """{script}"""\n'
    return Model(parse_workload(text, "test"))


# ---------------------------------------------------------------- workloads


def test_builtin_workloads_cover_the_promises() -> None:
    found = builtin_workloads()
    assert list(found) == ["create-fsync", "rename-over", "append-log", "mail-spool", "db-journal"]
    verbs = {op.verb for w in found.values() for op in w.ops}
    assert verbs == {"mkdir", "write", "append", "overwrite", "truncate", "fsync", "fdatasync",
                     "rename", "link", "unlink", "sync"}  # fmt: skip
    for w in found.values():
        Model(w)  # every script is valid for the model


def test_repeat_expands_with_expressions() -> None:
    ops = parse_script("repeat 3: overwrite db {(i*5+7)%16*4096} 4K t{i}; fsync f{i:02}", "t")
    assert [op.offset for op in ops if op.verb == "overwrite"] == [
        12 * 4096,
        17 % 16 * 4096,
        6 * 4096,
    ]
    assert [op.path for op in ops if op.verb == "fsync"] == ["f01", "f02", "f03"]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("frobnicate x", "unknown operation"),
        ("write x 4Q", "not a size"),
        ("write /etc/passwd 4K", "must be relative"),
        ("repeat 2: write f{len(i)} 1K", "may use only i"),
        ("fsync missing", "not an existing file"),
        ("write d/x 1K", "directory d does not exist"),
    ],
)
def test_bad_scripts_say_what_is_wrong(script: str, message: str) -> None:
    with pytest.raises(FsarenaError, match=message):
        workload(script)


def test_same_tag_same_content_and_versions_differ() -> None:
    w = parse_workload('name = "t"\nscript = "write a 1K v1\\nwrite a 1K v2\\nwrite a 1K v1"', "t")
    assert w.data(0) == w.data(2) != w.data(1)
    assert len(w.data(0)) == 1024 and w.data(0).count(0) < 100


# ---------------------------------------------------------------- oracle


def materialize(snap: Snapshot, root: Path) -> None:
    """Write a model snapshot out as a directory tree: a crash state that kept everything."""
    for path, ino in sorted(snap.names.items()):
        if ino in snap.dirs:
            (root / path).mkdir(parents=True, exist_ok=True)
    for path, ino in snap.names.items():
        if ino not in snap.dirs:
            (root / path).write_bytes(snap.contents[ino])


SCRIPT = """
mkdir d
fsync d
fsync .
write d/a 4K v1
fsync d/a
write d/b 4K v1
write big 64K
fsync d
"""


def test_a_complete_state_keeps_every_promise(tmp_path: Path) -> None:
    model = workload(SCRIPT, '"big"')
    for t in range(len(model.snaps)):
        root = tmp_path / f"t{t}"
        root.mkdir()
        materialize(model.snaps[t], root)
        verdict = model.judge(root, t)
        assert verdict.violations == (), t
    assert model.judge(tmp_path / "t7", 7).unsynced == {"big": "intact"}


def test_lost_fsynced_file_is_a_violation(tmp_path: Path) -> None:
    model = workload(SCRIPT, '"big"')
    materialize(model.snaps[7], tmp_path)  # d/a fsync'ed by op 4 (snapshot 5); big by op 6
    (tmp_path / "d/a").write_bytes(bytes(4096))
    (tmp_path / "big").write_bytes(b"")
    verdict = model.judge(tmp_path, 7)
    assert [(v.path, v.kind) for v in verdict.violations] == [("d/a", "lost")]
    assert "all zeros" in verdict.violations[0].detail
    assert verdict.unsynced == {"big": "empty"}
    (tmp_path / "d/a").unlink()
    assert model.judge(tmp_path, 7).violations[0].detail == "missing"


def test_unsynced_name_is_not_judged_until_its_directory_is_synced(tmp_path: Path) -> None:
    model = workload(SCRIPT)
    materialize(model.snaps[6], tmp_path)
    (tmp_path / "d/b").unlink()  # created, never fsync'ed: may vanish
    assert model.judge(tmp_path, 6).violations == ()
    assert [v.path for v in model.judge(tmp_path, 8).violations] == ["d/b"]  # after fsync d


def test_rename_over_old_or_new_but_never_neither(tmp_path: Path) -> None:
    model = workload("write t 1K v1\nfsync t\nfsync .\nwrite t.tmp 1K v2\nfsync t.tmp\n"
                     "rename t.tmp t\nfsync .\n")  # fmt: skip
    old, new = model.snaps[2].contents[model.snaps[2].names["t"]], model.workload.data(3)
    (tmp_path / "t").write_bytes(old)
    (tmp_path / "t.tmp").write_bytes(new)
    assert model.judge(tmp_path, 6).violations == ()  # rename issued, dir not yet synced
    (tmp_path / "t.tmp").unlink()
    assert [v.path for v in model.judge(tmp_path, 6).violations] == ["t"]  # v2 nowhere
    (tmp_path / "t").write_bytes(new)
    assert model.judge(tmp_path, 7).violations == ()
    (tmp_path / "t.tmp").write_bytes(new)  # the synced rename undone
    assert [v.kind for v in model.judge(tmp_path, 7).violations] == ["resurrected"]


def test_sectors_may_mix_promised_and_later_versions() -> None:
    durable, later = b"a" * 1024, b"b" * 1024
    assert matches(b"a" * 512 + b"b" * 512, durable, [later])
    assert not matches(b"a" * 512 + b"\0" * 512, durable, [later])
    assert matches(b"a" * 1024 + b"\0" * 100, durable, [])  # beyond the promise: free
    assert matches(b"a" * 100, durable, [b"a" * 100])  # a later truncate
    assert not matches(b"a" * 100, durable, [])


# ---------------------------------------------------------------- states


def write_log(path: Path, records: list[tuple[int, int, bytes]]) -> None:
    out = bytearray()
    for seq, (kind, off, payload) in enumerate(records):
        length = len(payload) if kind in (WRITE, MARK) else 0
        out += struct.pack("<4sIQQQQII", b"FLOG", kind, seq, off, length, 0, 0, len(payload))
        out += payload
    path.write_bytes(out)


def test_states_cover_flushes_prefixes_subsets_and_dedup(tmp_path: Path) -> None:
    snapshot = tmp_path / "snap.img"
    snapshot.write_bytes(bytes(64 * 512))
    recs = [(WRITE, i * 512, bytes([i + 1]) * 512) for i in range(10)]
    recs.insert(3, (FSYNC, 0, b""))
    recs.insert(4, (MARK, 0, b"op 0"))
    recs.append((WRITE, 0, bytes([1]) * 512))  # rewrites sector 0 with what it holds
    write_log(tmp_path / "log", recs)
    with FlogLog(tmp_path / "log") as log:
        spans = intervals(log.records)
        assert [len(s.writes) for s in spans] == [3, 8]
        assert spans[1].marks == ("op 0",)
        a = generate(log, snapshot, 5, cap=1000)
        b = generate(log, snapshot, 5, cap=1000)
        assert [s.name for s in a.states] == [s.name for s in b.states]
        kinds = {s.kind for s in a.states}
        assert {"flush", "prefix", "subset", "final"} <= kinds
        assert a.unique < a.generated
        capped = generate(log, snapshot, 5, cap=4)
        assert len(capped.states) == 4 and capped.states[-1].kind == "final"


def test_a_log_that_is_not_one_is_refused(tmp_path: Path) -> None:
    (tmp_path / "log").write_bytes(b"x" * 100)
    with pytest.raises(FsarenaError, match="not a flogfs log"):
        FlogLog(tmp_path / "log")


# ---------------------------------------------------------------- records and report


def outcome(name: str, lost: bool = False, mounted: bool = True) -> StateOutcome:
    return StateOutcome(
        state=name, kind="flush", interval=1, writes_durable=3, writes_kept=0,
        writes_dropped=0, ops_returned=4, mounted=mounted, mount_ms=5.0 if mounted else None,
        fsck_clean=not lost, fsck_exit=4 if lost else 0, fsck_ms=10.0,
        violations=[ViolationRecord(path="d/a", kind="lost", detail="missing")] if lost else [],
        unsynced={"big": "empty"},
    )  # fmt: skip


def result(fs: str, states: list[StateOutcome], control: bool = False) -> WorkloadResult:
    return WorkloadResult(
        filesystem=fs, workload="create-fsync", control=control, seed=1, states_cap=10,
        clean_mount_ms=[3.0, 4.0], states=states,
    )  # fmt: skip


def test_statistics_are_computed_from_the_states() -> None:
    r = result("xfs", [outcome("a"), outcome("b", lost=True), outcome("c", mounted=False)])
    s = summarize(r)
    assert (s.states, s.mounted, s.fsck_clean, s.states_losing_data) == (3, 2, 2, 1)
    assert s.files_lost == ("d/a",) and s.unsynced["big"]["empty"] == 3
    values = filesystem_values([r])
    assert values["crash_files_lost"] == 1 and values["crash_clean_mount_ms"] == 3.5


def session_with(results: list[WorkloadResult]) -> Session:
    runs = [
        Run(filesystem=r.filesystem, task="powerloss", repetition=1, started_at="x",
            status="ok", values=filesystem_values([r]),
            details=PowerlossDetails(filesystem=r.filesystem, seed=1, states_cap=10,
                                     workloads=[r]).model_dump(mode="json"))
        for r in results
    ]  # fmt: skip
    from fsarena.tasks.powerloss import Powerloss

    info = {"powerloss": {"kind": "safety", "timed": False, "columns": list(Powerloss.columns)}}
    plan = {"filesystems": [r.filesystem for r in results], "tasks": ["powerloss"],
            "task_info": info, "crashtest": {"states_cap": 10, "seed": 1}}  # fmt: skip
    return Session(tool_version="t", created_at="x", plan=plan, runs=runs)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_report_shows_findings(fmt: str) -> None:
    control = result("ext4-nobarrier", [outcome("a", lost=True)], control=True)
    bad = result("xfs", [outcome("a"), outcome("b", lost=True)])
    text = render(session_with([control, bad]), fmt)
    assert "fsync'ed files lost" in text and "states losing fsync'ed data" in text
    assert "ext4-nobarrier (control)" in text and "the harness sees losses" in text
    assert "SERIOUS: xfs create-fsync: fsync'ed data lost in 1 of 2 states: d/a" in text
    assert "empty" in text


def test_csv_and_json_carry_the_values() -> None:
    session = session_with([result("xfs", [outcome("a")])])
    assert "crash_mounted_pct" in render(session, "csv")
    assert '"crash_fsck_clean_pct"' in render(session, "json")


def test_guest_and_fuse_drivers_are_not_crash_tested() -> None:
    from fsarena.filesystems.variants import profile_for
    from fsarena.powerloss.engine import testable

    assert testable(profile_for("ext4@uml")) == (
        "the power-loss test runs host kernel drivers only, not the uml guest kernel"
    )
    assert "not the FUSE" in testable(profile_for("ntfs@fuse"))
