"""What is fsarena's to undo (host/cleanup.py): decided from the ledger and the machine's facts."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.host.cleanup import (
    Claims,
    Loop,
    Machine,
    Mount,
    claims,
    cleanup,
    in_the_way,
    live_runs,
    mount_table,
    refusal,
    top_mount,
)
from fsarena.host.ledger import Entry, Ledger
from fsarena.run.launch import workdir_lock


def _mounts(*rows: tuple[str, str, str]) -> list[Mount]:
    """(target, fstype, source) in mount order; each stacked on what is there before it."""
    table: list[Mount] = []
    for i, (target, fstype, source) in enumerate(rows, start=100):
        below = [m.mount_id for m in table if m.target == target]
        table.append(Mount(i, below[-1] if below else 1, target, fstype, source))
    return table


def _decide(
    workdir: Path,
    *mounts: tuple[str, str, str],
    loops: tuple[tuple[str, str], ...] = (),
    live: dict[str, int] | None = None,
) -> Claims:
    machine = Machine(_mounts(*mounts), [Loop(d, f) for d, f in loops], live or {})
    return claims(str(workdir), machine)


def test_a_users_tmpfs_as_the_work_directory_is_not_ours(tmp_path: Path) -> None:
    found = _decide(tmp_path, (str(tmp_path), "tmpfs", "mydata"))
    assert not found and found.ours == ()
    assert [f.path for f in found.foreign] == [str(tmp_path)]
    assert "own filesystem" in found.foreign[0].why and found.foreign[0].advice == ""


def test_a_recorded_mount_is_ours_only_from_its_recorded_source(tmp_path: Path) -> None:
    mnt = str(tmp_path / "mnt" / "ext4")
    Ledger(str(tmp_path)).track("mount", mnt, "/dev/loop7")
    assert _decide(tmp_path, (mnt, "ext4", "/dev/loop7")).ours == (
        Entry("mount", mnt, "/dev/loop7"),
    )
    other = _decide(tmp_path, (mnt, "ext4", "/dev/sdz1"))
    assert other.ours == () and "not the filesystem fsarena mounted there" in other.foreign[0].why
    assert f"umount {mnt}" in other.foreign[0].advice
    gone = _decide(tmp_path)
    assert gone.ours == () and gone.gone == (Entry("mount", mnt, "/dev/loop7"),)


def test_drivers_that_name_their_mount_are_proven_by_fsarenas_names(tmp_path: Path) -> None:
    mnt = str(tmp_path / "mnt" / "tmpfs")
    Ledger(str(tmp_path)).track("mount", mnt, "/dev/loop7")  # the tmpfs profile's device
    assert _decide(tmp_path, (mnt, "tmpfs", "fsarena-tmpfs")).ours
    assert not _decide(tmp_path, (mnt, "tmpfs", "mydata")).ours
    assert _decide(tmp_path, (mnt, "fuse", "fusefat")).ours
    assert not _decide(tmp_path, (mnt, "fuseblk", "/dev/sdz1")).ours


def test_stacked_mounts_only_the_top_one_counts(tmp_path: Path) -> None:
    mnt = str(tmp_path / "mnt" / "ext4")
    Ledger(str(tmp_path)).track("mount", mnt, "/dev/loop7")
    ours_on_top = _decide(tmp_path, (mnt, "xfs", "/dev/sdz1"), (mnt, "ext4", "/dev/loop7"))
    assert ours_on_top.ours == (Entry("mount", mnt, "/dev/loop7"),)
    theirs_on_top = _decide(tmp_path, (mnt, "ext4", "/dev/loop7"), (mnt, "xfs", "/dev/sdz1"))
    assert theirs_on_top.ours == ()


def test_a_ledger_without_sources_proves_mounts_by_fsarenas_loops_and_tmpfs(tmp_path: Path) -> None:
    book = Ledger(str(tmp_path))
    image, src, mnt = (str(tmp_path / p) for p in ("images/a.img", "source", "mnt/a"))
    for kind, ident in (("mount", src), ("image", image), ("loop", image), ("mount", mnt)):
        book.track(kind, ident)  # as main 68aab35 wrote them: no source
    Path(image).parent.mkdir()
    Path(image).write_bytes(b"")
    loops = (("/dev/loop3", image),)
    found = _decide(
        tmp_path, (src, "tmpfs", "fsarena-source"), (mnt, "ext4", "/dev/loop3"), loops=loops
    )
    assert {e.ident for e in found.ours} == {src, image, mnt}
    assert [e.kind for e in found.ours] == ["mount", "loop", "image", "mount"], "newest first"
    theirs = _decide(tmp_path, (src, "tmpfs", "mydata"), (mnt, "ext4", "/dev/loop9"), loops=loops)
    assert {e.kind for e in theirs.ours} == {"loop", "image"}
    assert {f.path for f in theirs.foreign} == {src, mnt}


def test_unrecorded_mounts_and_loops_under_the_work_directory_are_left_alone(
    tmp_path: Path,
) -> None:
    sub = str(tmp_path / "other-run")
    found = _decide(
        tmp_path,
        (f"{sub}/mnt/xfs", "xfs", "/dev/loop5"),
        (str(tmp_path / "mine"), "tmpfs", "user"),
        loops=(("/dev/loop5", f"{sub}/images/xfs.img"),),
        live={sub: 4242},
    )
    assert not found
    by_path = {f.path: f for f in found.foreign}
    assert "held by the live run in" in by_path[f"{sub}/mnt/xfs"].why
    assert "process 4242" in by_path[f"{sub}/images/xfs.img"].why
    assert "no ledger records it" in by_path[str(tmp_path / "mine")].why
    assert [f.path for f in in_the_way(found)] == []
    mnt = str(tmp_path / "mnt" / "ext4")
    blocking = _decide(tmp_path, (mnt, "ext4", "/dev/sdq"))
    assert [f.path for f in in_the_way(blocking)] == [mnt], "a run would mount over it"


def test_a_killed_run_in_a_subdirectory_is_named_by_its_own_ledger(tmp_path: Path) -> None:
    sub = tmp_path / "b"
    Ledger(str(sub)).track("mount", str(sub / "mnt" / "x"), "/dev/loop2")
    found = _decide(tmp_path, (str(sub / "mnt" / "x"), "ext4", "/dev/loop2"))
    assert found.ours == ()
    assert f"fsarena cleanup --workdir {sub}" in found.foreign[0].why


def test_mounts_and_loops_inside_our_filesystem_are_released_with_it(tmp_path: Path) -> None:
    mnt = str(tmp_path / "mnt" / "ext4")
    Ledger(str(tmp_path)).track("mount", mnt, "/dev/loop7")
    found = _decide(
        tmp_path,
        (mnt, "ext4", "/dev/loop7"),
        (f"{mnt}/store/merged", "overlay", "overlay"),
        loops=(("/dev/loop8", f"{mnt}/disk.img"),),
    )
    assert found.ours == (Entry("mount", mnt, "/dev/loop7"),) and found.foreign == ()


def test_a_recorded_path_outside_the_work_directory_is_never_ours(tmp_path: Path) -> None:
    precious = tmp_path.parent / "precious.img"
    Ledger(str(tmp_path)).track("image", str(precious))
    precious.write_bytes(b"keep")
    try:
        found = _decide(tmp_path)
        assert found.ours == () and "outside" in found.foreign[0].why
    finally:
        precious.unlink()


def test_mountinfo_is_parsed_with_its_escapes(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 0:21 / / rw - ext4 /dev/vda1 rw\n"
        "40 22 0:40 / /w/my\\040dir rw,relatime shared:5 - tmpfs mine rw\n"
        "41 40 0:41 / /w/my\\040dir rw - tmpfs fsarena-source rw\n"
    )
    table = mount_table(str(info))
    assert table[1] == Mount(40, 22, "/w/my dir", "tmpfs", "mine")
    assert top_mount("/w/my dir", table) == table[2]
    assert top_mount("/nowhere", table) is None


@pytest.mark.parametrize("path", ["/", "/var", "/tmp", "/home", "/usr", "/var/tmp", "/etc"])
def test_system_directories_are_refused(path: str) -> None:
    assert "system directory" in refusal(path)


def _hold_lock(workdir: str, ready: multiprocessing.synchronize.Event, done: object) -> None:
    with workdir_lock(workdir):
        ready.set()
        done.wait()  # type: ignore[attr-defined]


def test_a_live_runs_lock_inside_or_around_refuses_cleanup(tmp_path: Path) -> None:
    live = tmp_path / "runs" / "b"
    ctx = multiprocessing.get_context("fork")
    ready, done = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold_lock, args=(str(live), ready, done))
    holder.start()
    try:
        assert ready.wait(10)
        assert live_runs().get(str(live)) == holder.pid
        assert "holds the work directory" in refusal(str(tmp_path))
        assert "holds the work directory" in refusal(str(tmp_path / "runs"))
        assert "inside the work directory" in refusal(str(live / "mnt"))
        assert f"process {holder.pid}) is using {live}" in refusal(str(live))
        assert refusal(str(tmp_path / "elsewhere")) == ""
        with pytest.raises(FsarenaError, match="refusing"), workdir_lock(str(tmp_path)):
            cleanup(str(tmp_path))
    finally:
        done.set()
        holder.join()
    assert refusal(str(tmp_path)) == ""


def test_cleanup_needs_the_work_directorys_lock(tmp_path: Path) -> None:
    with pytest.raises(FsarenaError, match="without holding its lock"):
        cleanup(str(tmp_path))
    with workdir_lock(str(tmp_path)):
        assert cleanup(str(tmp_path)).done == ()
    assert os.path.exists(tmp_path / "lock")
