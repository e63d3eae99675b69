"""The whole order of an aged run, through the fake host: age, snapshot, restore, mount, tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import fsarena.run.sequence as sequence_module
from fsarena.plan.model import make_plan
from fsarena.run.aging_phase import remove_snapshots
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load
from tests.fakes import FakeExecutor, TickingClock
from tests.unit.test_runner import CEILING, COLD_MOUNTED, MOUNT_5, SOURCE, UMOUNT_5

# The drift check of a round a minute or more after the last: one short fio write on its
# own image.
DRIFT = ["mkdir", "create_image", "attach", "flush_device", "measure:fio", "read_text",
         "detach", "retire"]  # fmt: skip
TASKS = [
    "mkdir", "flush_device", *MOUNT_5,  # mount, timed (the first is the state the rest need)
    "mkdir", *COLD_MOUNTED, "measure:cp", "measure:sync", "measure:sync", "verify",
    *COLD_MOUNTED, *UMOUNT_5,
]  # fmt: skip


class _Host(FakeExecutor):
    """The fake host, and the aging workload recorded as one call (it writes real files)."""

    def age(self) -> dict[str, Any]:
        self.calls.append(("age",))
        return {"wall_s": 2.0, "bytes_written": 4e6, "stopped_by": "bytes", "manifest_digest": "d"}


def _aged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: _Host
) -> tuple[list[str], Session]:
    monkeypatch.setattr(sequence_module, "age_mounted", lambda ctx, plan: host.age())
    plan = make_plan("quick", ["ext4"], 2, 0.001, 7, str(tmp_path / "w"), age="churn")
    plan = plan.model_copy(update={"tasks": ["mount", "iso_copy_in", "umount"]})
    # Rounds minutes apart (the clock ticks 10 s a reading): round 2 gets its drift check.
    Runner(plan, host, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs",
           clock=TickingClock(), datasets=host.datasets).run()  # fmt: skip
    timed = ("call", "measure")
    kinds = [f"{c[0]}:{c[1]}" if c[0] in timed else c[0] for c in host.calls]
    return kinds, load(tmp_path / "s.json")


def test_execution_order_of_an_aged_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = _Host()
    kinds, session = _aged(tmp_path, monkeypatch, host)
    assert session.order == [["ext4", "ext4+churn"], ["ext4+churn", "ext4"]]
    assert kinds == [
        *SOURCE,
        *CEILING,
        # Round 1, fresh ext4: a new image, mkfs untimed (the plan times no mkfs).
        "create_image", "attach", "mkdir", "call:mkfs.ext4", *TASKS, "detach", "retire",
        # Round 1, aged ext4: made, mounted, aged, unmounted, snapshotted, then its tasks.
        "create_image", "attach", "mkdir", "call:mkfs.ext4",
        "mkdir", "call:mount", "age", "call:umount", "copy_image",
        *TASKS, "detach", "retire",  # made by create_image: retired as any made image
        *DRIFT,
        # Round 2, aged ext4 first: restored from the snapshot (no mkfs, no aging), then
        # attached, then mounted: the restore comes before the mount.
        # A restored image is a copy: deleted, never kept as the spare.
        "mkdir", "copy_image", "call:fallocate", "attach", "mkdir", *TASKS, "detach", "remove",
        "create_image", "attach", "mkdir", "call:mkfs.ext4", *TASKS, "detach", "retire",
        "call:umount",  # the source (a tmpfs: no image of its own)
        "remove",  # the snapshot, when the run ends
        "remove_spare",  # and the spare image, last
    ]  # fmt: skip
    copies = [c[1:] for c in host.calls if c[0] == "copy_image"]
    snapshot = f"{tmp_path}/w/images/ext4-aged-s7.snapshot"
    assert copies == [
        (f"{tmp_path}/w/images/ext4+churn-r1.img", snapshot),  # the snapshot of the aged image
        (snapshot, f"{tmp_path}/w/images/ext4+churn-r2.img"),  # its restore for round 2
    ]
    assert host.calls[-2:] == [("remove", snapshot), ("remove_spare",)]
    aged = [r for r in session.runs if r.filesystem == "ext4+churn"]
    assert [(r.repetition, r.task, r.status) for r in aged] == [
        (1, "mount", "ok"), (1, "iso_copy_in", "ok"), (1, "umount", "ok"),
        (2, "mount", "ok"), (2, "iso_copy_in", "ok"), (2, "umount", "ok"),
    ]  # fmt: skip
    assert session.aging["ext4"].snapshot_method == "sparse copy"


class _NoSnapshot(_Host):
    """A host where the snapshot is never found: the restore is skipped."""

    def exists(self, path: str) -> bool:
        return False


def test_the_order_test_sees_a_skipped_restore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the restore, round 2 ages again instead: the order differs where it must.
    kinds, _ = _aged(tmp_path, monkeypatch, _NoSnapshot())
    assert kinds.count("age") == 2
    assert kinds.count("copy_image") == 2  # two snapshots, no restore
    second = [i for i, k in enumerate(kinds) if k == "age"][1]
    assert kinds[second - 8 : second + 3] == [
        "detach", "retire",  # the drift check's image
        "create_image", "attach", "mkdir", "call:mkfs.ext4",  # made again, not restored
        "mkdir", "call:mount", "age", "call:umount", "copy_image",
    ]  # fmt: skip


def test_git_replays_host_copy_is_removed_when_the_run_ends(tmp_path: Path) -> None:
    host = _Host()
    plan = make_plan("quick", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"), age="git-replay")
    runner = Runner(
        plan, host, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs", datasets=host.datasets
    )
    remove_snapshots(runner.scope)  # what run() does last, whatever happened before
    assert host.calls == [
        ("remove", f"{tmp_path}/w/images/ext4-aged-s7.snapshot"),
        ("remove", f"{tmp_path}/w/scratch/git-replay"),
    ]
