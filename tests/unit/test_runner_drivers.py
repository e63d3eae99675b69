"""The runner with guest and FUSE drivers, through the fake executor (no root needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.plan.core import make_plan
from fsarena.run.runner import Runner
from fsarena.run.sessions import new_session
from fsarena.session.store import Session, load
from tests.fakes import FakeExecutor


def _run(
    tmp_path: Path, fs: list[str], ex: FakeExecutor | None = None
) -> tuple[FakeExecutor, Session]:
    plan = make_plan("article-a-2006", fs, 1, 0.001, 7, str(tmp_path / "work"))
    ex = ex or FakeExecutor()
    session = new_session(plan, {}, {})
    Runner(plan, ex, session, tmp_path / "s.json", "tmpfs").run()
    return ex, load(tmp_path / "s.json")


def test_a_guest_sequence_runs_every_task_inside_the_guest(tmp_path: Path) -> None:
    ex, session = _run(tmp_path, ["jfs@uml"])
    kinds = [c[0] for c in ex.calls]
    # The datasets' disk is made once, from the source directory, before any guest boots.
    disk = next(c for c in ex.calls if c[0] == "call" and "-d" in c)
    assert disk[1] == "mkfs.ext4" and disk[-1].endswith("/guest-source.img")
    assert kinds.index("call") < kinds.index("start_guest")
    start = next(c for c in ex.calls if c[0] == "start_guest")
    assert start[1] == "uml" and start[2].endswith("images/jfs@uml-r1.img")
    assert start[3].endswith("guest-source.img")
    # No loop device: the image is the guest's disk. Every task's commands run in the guest.
    # (The host attaches a loop device only for the device's ceiling, measured with fio.)
    assert [c[1] for c in ex.calls if c[0] == "attach"] == [
        str(tmp_path / "work/images/ceiling-r1.img")
    ]
    timed = [c[1] for c in ex.calls if c[0] == "uml:measure"]
    assert timed[0] == "mkfs.jfs" and timed[-1] == "umount"
    assert {c[1] for c in ex.calls if c[0] == "measure"} == {"fio"}
    # Caches dropped in the guest and then on the host (its disks are host files).
    in_guest = kinds[kinds.index("start_guest") :]
    # 11 timed tasks (none before the 2 capacity probes), and the 2 repeated finds (mkfs,
    # mount, umount repeat without a drop); machine-wide: a guest's caches are its own.
    assert in_guest.count("uml:drop_caches") == in_guest.count("drop_caches") == 11 + 2
    assert [c[1] for c in ex.calls if c[0] == "uml:verify"] == ["iso", "iso", "tree", "tree"]
    # The guest is stopped, then its image removed, then the datasets' disk.
    tail = kinds[kinds.index("uml:close") :]
    assert tail[:2] == ["uml:close", "remove"]
    assert ("remove", str(tmp_path / "work/guest-source.img")) in ex.calls
    assert all(r.status == "ok" for r in session.runs)
    assert session.profiles_as_run["jfs@uml"].group == "guest:uml"
    assert session.profiles_as_run["jfs@uml"].reference == "ext4@uml"


def test_no_datasets_disk_without_a_guest(tmp_path: Path) -> None:
    ex, _ = _run(tmp_path, ["ext4"])
    assert not any(c[0] == "call" and "-d" in c for c in ex.calls)


def test_fusefat_ends_writing_tasks_with_a_global_sync(tmp_path: Path) -> None:
    ex, session = _run(tmp_path, ["vfat@fuse"])
    mount = next(c for c in ex.calls if c[0] == "measure" and c[1] == "fusefat")
    assert mount[-1].endswith("mnt/vfat@fuse")
    syncs = [c for c in ex.calls if c[0] == "measure" and c[1] == "sync"]
    assert len(syncs) == 7 and all(c == ("measure", "sync") for c in syncs)
    assert session.profiles_as_run["vfat@fuse"].syncfs is False


def test_a_guest_is_stopped_on_ctrl_c(tmp_path: Path) -> None:
    class Interrupting(FakeExecutor):
        def drop_caches(self) -> None:
            super().drop_caches()
            if sum(c[0] == "uml:drop_caches" for c in self.calls) == 4:
                raise KeyboardInterrupt

    ex = Interrupting()
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, ["jfs@uml"], ex)
    kinds = [c[0] for c in ex.calls]
    assert kinds.count("uml:close") == 1
    removed = [c[1] for c in ex.calls if c[0] == "remove"]
    assert any(r.endswith("jfs@uml-r1.img") for r in removed)
    assert any(r.endswith("guest-source.img") for r in removed)
    assert load(tmp_path / "s.json").status == "interrupted"
