"""Faults as data, teardown bookkeeping and resumption, with a fake executor (no root)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.plan.model import Plan, make_plan
from fsarena.run.new_session import new_session
from fsarena.run.resume import check_unchanged, finished_sequences, mismatches, resumable
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load, save
from fsarena.session.records import TargetRecord
from tests.fakes import FakeExecutor

TASKS = 13  # article A's sequence


def _plan(tmp_path: Path, fs: list[str], reps: int = 1) -> Plan:
    return make_plan("article-a-2006", fs, reps, 0.001, 7, str(tmp_path / "work"))


def _run(plan: Plan, ex: FakeExecutor, path: Path, session: Session | None = None, **kw):  # type: ignore[no-untyped-def]
    session = session or new_session(plan, {"kernel": "k1"}, {"cp": "9.1"})
    return Runner(plan, ex, session, path, "tmpfs", **kw, datasets=ex.datasets).run()


class Interrupting(FakeExecutor):
    """Ctrl-C during the n-th copy."""

    def __init__(self, at_copy: int) -> None:
        super().__init__()
        self.copies_left = at_copy

    def measure(self, commands, device, timeout_s):  # type: ignore[no-untyped-def]
        if commands[0].argv[0] == "cp":
            self.copies_left -= 1
            if self.copies_left == 0:
                raise KeyboardInterrupt
        return super().measure(commands, device, timeout_s)


def test_ledger_is_balanced_after_a_run_and_after_an_interrupt(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["ext4", "xfs"])
    ex = FakeExecutor()
    _run(plan, ex, tmp_path / "s.json")
    assert ex.tracked == []
    stopped = Interrupting(at_copy=3)
    with pytest.raises(KeyboardInterrupt):
        _run(plan, stopped, tmp_path / "t.json")
    assert stopped.tracked == [] and not stopped.mounted


def test_unavailable_filesystem_is_recorded_as_skipped_with_why(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["ext4", "xfs"])
    ex = FakeExecutor()
    session = _run(plan, ex, tmp_path / "s.json", unavailable={"xfs": "mkfs.xfs not found"})
    xfs = [r for r in session.runs if r.filesystem == "xfs"]
    assert len(xfs) == TASKS and all(r.status == "skipped" for r in xfs)
    assert "mkfs.xfs not found" in xfs[0].error and xfs[0].fault == "unsupported"
    assert all(r.status == "ok" for r in session.runs if r.filesystem == "ext4")
    assert not any(c[0] == "attach" and "xfs" in c[1] for c in ex.calls), "no target made"


def test_target_that_cannot_be_set_up_fails_its_sequence_only(tmp_path: Path) -> None:
    class NoLoop(FakeExecutor):
        def attach_loop(self, image: str) -> str:
            if "ext4" in image:
                raise FsarenaError("cannot attach: no free loop device")
            return super().attach_loop(image)

    session = _run(_plan(tmp_path, ["ext4", "xfs"]), NoLoop(), tmp_path / "s.json")
    ext4 = [r for r in session.runs if r.filesystem == "ext4"]
    assert ext4[0].status == "failed" and "no free loop device" in ext4[0].error
    assert all(r.status == "skipped" for r in ext4[1:])
    assert all(r.status == "ok" for r in session.runs if r.filesystem == "xfs")


def test_os_errors_of_a_task_are_recorded_not_raised(tmp_path: Path) -> None:
    class Full(FakeExecutor):
        def make_dir(self, path: str) -> None:
            if path.endswith("/iso1"):
                raise OSError(28, "No space left on device", path)
            super().make_dir(path)

    session = _run(_plan(tmp_path, ["ext4"]), Full(), tmp_path / "s.json")
    run = next(r for r in session.runs if r.task == "iso_copy_in")
    assert run.status == "failed" and run.fault == "enospc"
    assert run.error.startswith("ENOSPC") and run.error.endswith("/iso1)")
    assert session.status == "partial"  # went through its plan; a run failed


def test_timed_out_task_is_a_failure_with_its_reason(tmp_path: Path) -> None:
    class Slow(FakeExecutor):
        def measure(self, commands, device, timeout_s):  # type: ignore[no-untyped-def]
            timed = super().measure(commands, device, timeout_s)
            if commands[0].argv[0] == "find":
                from dataclasses import replace

                return type(timed)(replace(timed.measurement, timed_out=True, exit_code=-9), "")
            return timed

    plan = _plan(tmp_path, ["ext4"]).model_copy(update={"task_timeout_s": 5.0})
    session = _run(plan, Slow(), tmp_path / "s.json")
    run = next(r for r in session.runs if r.task == "tree_find_pattern")
    assert run.status == "failed" and run.fault == "timeout" and "after 5 s" in run.error
    assert run.measurement is not None, "what was measured until the kill is kept"


def test_resume_skips_finished_sequences_and_redoes_the_unfinished(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["ext4", "xfs"], reps=2)
    path = tmp_path / "s.json"
    with pytest.raises(KeyboardInterrupt):
        _run(plan, Interrupting(at_copy=9), path)  # 4 copies per sequence: in the 3rd
    before = load(path)
    assert before.status == "interrupted"
    done = finished_sequences(before, plan.tasks)
    assert len(done) == 2
    kept = {r.key: r for r in before.runs if (r.filesystem, r.repetition) in done}
    assert len(kept) == 2 * TASKS and len(before.runs) > 2 * TASKS, "a partial third sequence"

    ex = FakeExecutor()
    after = _run(plan, ex, path, session=resumable(path))
    assert after.status == "complete" and after.order[: len(before.order)] == before.order
    assert len(after.runs) == 4 * TASKS
    assert len({r.key for r in after.runs}) == 4 * TASKS, "partial runs were replaced"
    for key, run in kept.items():
        assert next(r for r in after.runs if r.key == key) == run, "finished runs untouched"
    mkfs = [c for c in ex.calls if c[0] == "measure" and c[1].startswith("mkfs")]
    assert len(mkfs) == 2 * 5, "only the two unfinished sequences were run again"


def test_resume_refuses_what_changed(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["ext4"])
    save(new_session(plan, {"kernel": "6.1"}, {"cp": "9.1", "mkfs.ext4": "1.47.0"}), tmp_path / "r")
    recorded = load(tmp_path / "r")  # as stored: JSON lists where the profile has tuples
    same = new_session(plan, {"kernel": "6.1"}, {"cp": "9.1", "mkfs.ext4": "1.47.0"})
    assert mismatches(recorded, same) == []
    other = new_session(plan, {"kernel": "6.18"}, {"cp": "9.1", "mkfs.ext4": "1.47.2"})
    found = mismatches(recorded, other)
    assert found == [
        "kernel: '6.1' then, '6.18' now",
        "tool mkfs.ext4: '1.47.0' then, '1.47.2' now",
    ]
    with pytest.raises(FsarenaError, match=r"cannot be resumed: kernel.*start a new run"):
        check_unchanged(recorded, other, Path("s.json"))
    swapped = new_session(plan, {"kernel": "6.1"}, {"cp": "9.1", "mkfs.ext4": "1.47.0"})
    recorded.target = TargetRecord(path="/dev/sdb1", serial="A1", signatures_destroyed=["ext4"])
    swapped.target = TargetRecord(path="/dev/sdb1", serial="B2", signatures_destroyed=["xfs"])
    assert mismatches(recorded, swapped) == ["device serial: 'A1' then, 'B2' now"]
    bigger = new_session(plan.model_copy(update={"scale": 0.5}), {"kernel": "6.1"}, {})
    assert any(m.startswith("plan scale") for m in mismatches(recorded, bigger))


def test_resume_refuses_a_complete_session_and_other_datasets(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["ext4"])
    path = tmp_path / "s.json"
    _run(plan, FakeExecutor(), path)
    with pytest.raises(FsarenaError, match="complete; there is nothing to resume"):
        resumable(path)
    session = load(path)
    session.status = "interrupted"
    session.datasets["iso"].manifest_digest = "0" * 64
    save(session, path)
    with pytest.raises(FsarenaError, match="dataset iso differs"):
        _run(plan, FakeExecutor(), path, session=resumable(path))


def test_a_ceiling_fio_cannot_measure_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    class NoFio(FakeExecutor):
        def measure(self, commands, device, timeout_s):  # type: ignore[no-untyped-def]
            if commands[0].argv[0] == "fio":
                self.fail_on = "fio"
            timed = super().measure(commands, device, timeout_s)
            self.fail_on = None
            return timed

    ex = NoFio()
    session = _run(_plan(tmp_path, ["ext4"]), ex, tmp_path / "s.json")
    assert session.status == "complete" and all(r.status == "ok" for r in session.runs)
    assert [w.code for w in session.warnings] == ["ceiling"]
    assert ex.tracked == [], "the ceiling's image and loop device were released"


def test_resume_measures_no_ceiling_for_rounds_already_done(tmp_path: Path) -> None:
    plan = _plan(tmp_path, ["ext4", "xfs"], reps=2)
    path = tmp_path / "s.json"
    with pytest.raises(KeyboardInterrupt):
        _run(plan, Interrupting(at_copy=13), path)  # in round 2's second sequence
    before = load(path)
    # Round 2 began a moment after round 1's ceiling: it shared that figure.
    assert [(c.repetition, c.kind) for c in before.ceilings] == [(1, "full")] * 2 + [(1, "cache")]
    _run(plan, FakeExecutor(), path, session=resumable(path))
    after = load(path)
    # Round 1's ceiling is not measured again; the resumed round 2 gets a drift check
    # (how long the session lay interrupted is not known).
    assert after.ceilings[:3] == before.ceilings
    assert [(c.repetition, c.kind) for c in after.ceilings[3:]] == [(2, "drift")]


def test_resume_knows_driver_names_and_suite_variants(tmp_path: Path) -> None:
    suite = tmp_path / "v.toml"
    suite.write_text(
        'name = "v"\ntasks = ["mkfs", "mount", "umount"]\n'
        '[filesystems.btrfs-zstd]\nbase = "btrfs"\nmount_options = ["compress=zstd"]\n'
    )
    plan = make_plan(str(suite), None, 1, 0.001, 7, str(tmp_path / "work"))
    plan = plan.model_copy(update={"filesystems": ["btrfs-zstd@uml", "jfs@uml", "ext4@uml"]})
    save(new_session(plan, {"kernel": "k1"}, {}), tmp_path / "s.json")
    assert resumable(tmp_path / "s.json").plan.filesystems == plan.filesystems
    session = load(tmp_path / "s.json")
    session.plan.filesystems = ["jfs@vm"]
    save(session, tmp_path / "bad.json")
    with pytest.raises(FsarenaError, match="names jfs@vm, unknown to this fsarena"):
        resumable(tmp_path / "bad.json")


def test_a_resumed_session_warms_up_again(tmp_path: Path) -> None:
    # Interrupted after its warm-up: the resumed run's host caches are cold again, so it
    # warms up before its first round, which would otherwise count cold samples.
    plan = _plan(tmp_path, ["ext4"], reps=2).model_copy(update={"warmup_rounds": 1})
    path = tmp_path / "s.json"
    with pytest.raises(KeyboardInterrupt):
        _run(plan, Interrupting(at_copy=6), path)  # 4 copies in the warm-up, then round 1
    assert load(path).warmup, "the first run had warmed up"
    ex = FakeExecutor()
    _run(plan, ex, path, session=resumable(path))
    mkfs = [c for c in ex.calls if c[0] == "measure" and c[1].startswith("mkfs")]
    assert len(mkfs) == 3 * 5, "the warm-up and the two rounds"
