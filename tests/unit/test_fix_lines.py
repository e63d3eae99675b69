"""Fix lines that say what would work (issue 24, finding 7): measured, not guessed.

A failed user command is not sent to `fsarena check`; ENOSPC's advice is a size that
holds the data; a failed umount is not called a failed mount; a tool's usage text
stays out of the progress line.
"""

from __future__ import annotations

from pathlib import Path

from fsarena.cli.progress import describe_run
from fsarena.measure.room import MIB, room_needed_bytes
from fsarena.measure.tooltext import brief
from fsarena.plan.model import make_plan
from fsarena.report.outcome import outcome
from fsarena.run.faults import explain
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Run, Session
from tests.fakes import FakeExecutor

XFS_USAGE = "mkfs.xfs: invalid option -- 'Z'\nunknown option -Z \nUsage: mkfs.xfs\n" + "".join(
    f"/* option {i} */\t\t[-o{i} size=num]\n" for i in range(26)
)


def _session(tmp_path: Path, fail_on: str | None = None) -> Session:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "work"))
    session = new_session(plan, {"kernel": "k1"}, {})
    ex = FakeExecutor(fail_on=fail_on)
    return Runner(plan, ex, session, tmp_path / "s.json", "tmpfs", datasets=ex.datasets).run()


def test_a_failed_command_is_not_sent_to_fsarena_check(tmp_path: Path) -> None:
    session = _session(tmp_path, fail_on="cp")
    fixes = outcome(session).fixes
    assert any("command failed on its own" in f for f in fixes), fixes
    assert not any("fsarena check" in f for f in fixes), fixes


def test_enospc_advice_is_a_size_that_holds_the_data(tmp_path: Path) -> None:
    session = _session(tmp_path)
    run = session.runs[2]
    run.status, run.fault, run.error = "failed", "enospc", "ENOSPC: No space left on device"
    for record in session.datasets.values():
        record.total_bytes, record.files = 3 << 30, 1000
    for profile in session.profiles_as_run.values():
        profile.image_size_bytes = 1 << 30  # --image-size 1G: doubling it (2G) is still short
    need = room_needed_bytes([(3 << 30, 1000)] * len(session.datasets))
    fix = next(f for f in outcome(session).fixes if "--image-size" in f)
    assert f"--image-size {-(-need // MIB)}M" in fix and need > 2 << 30, fix


def test_a_failed_umount_is_not_a_failed_mount() -> None:
    code, text = explain("`umount /w/mnt/ext4` failed: umount: /w/mnt/ext4: target is busy.")
    assert code == "umount" and text.startswith("unmounting the filesystem failed"), text
    assert explain("`mount /dev/loop0 /w/mnt/ext4` failed: mount: wrong fs type")[0] == "mount"


def test_a_usage_text_stays_out_of_the_progress_line() -> None:
    run = Run(filesystem="xfs", task="mkfs", repetition=1, started_at="t", status="failed",
              error=f"exit code 1: {XFS_USAGE}")  # fmt: skip
    line = describe_run(run)
    assert "\n" not in line and "Usage" not in line and "unknown option -Z" in line, line
    assert "(+27 more lines in the session)" in line
    assert brief("one reason\nand its detail") == "one reason | and its detail"
