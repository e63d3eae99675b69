"""The runner with guest and FUSE drivers, through the fake executor (no root needed)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fsarena.aging.profiles import resolve_age
from fsarena.aging.runtime import guest_unsupported
from fsarena.host.executor import ImageCopy
from fsarena.plan.model import make_plan
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load
from tests.fakes import FakeExecutor


def _run(
    tmp_path: Path, fs: list[str], ex: FakeExecutor | None = None
) -> tuple[FakeExecutor, Session]:
    plan = make_plan("article-a-2006", fs, 1, 0.001, 7, str(tmp_path / "work"))
    ex = ex or FakeExecutor()
    session = new_session(plan, {}, {})
    Runner(plan, ex, session, tmp_path / "s.json", "tmpfs", datasets=ex.datasets).run()
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
    # fio, and the page cache's read: fio run twice by a shell holding the device open.
    assert {c[1] for c in ex.calls if c[0] == "measure"} == {"fio", "sh"}
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
    # Each writing task: the global sync(2), then the flush of the loop device (durable()).
    assert syncs[0::2] == [("measure", "sync")] * 7
    assert len(syncs) == 14 and all(c[2].startswith("/dev/") for c in syncs[1::2])
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


class _ImageFiles(FakeExecutor):
    """Images as real (tiny) files: an aged image is snapshotted and restored with a real cp."""

    def create_image(self, path: str, size_bytes: int) -> None:
        super().create_image(path, size_bytes)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(b"the aged image\n")

    def copy_image(self, source: str, dest: str) -> ImageCopy:
        copy = super().copy_image(source, dest)  # recorded, as every host call
        shutil.copyfile(source, dest)
        return copy


def _aged(tmp_path: Path, fs: list[str], age: str) -> tuple[FakeExecutor, Session]:
    plan = make_plan("article-a-2006", fs, 2, 0.001, 7, str(tmp_path / "work"), age=age)
    ex = _ImageFiles()
    Runner(
        plan, ex, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs", datasets=ex.datasets
    ).run()
    return ex, load(tmp_path / "s.json")


def _sequence(ex: FakeExecutor, image: str) -> list[tuple[str, ...]]:
    """The calls of the sequence whose guest booted with `image`, up to its guest's close."""
    start = next(i for i, c in enumerate(ex.calls) if c[0] == "start_guest" and c[2] == image)
    end = next(i for i, c in enumerate(ex.calls[start:], start) if c[0] == "uml:close")
    return ex.calls[start : end + 1]


def test_an_aged_guest_ages_inside_the_guest_once_and_restores_its_snapshot(
    tmp_path: Path,
) -> None:
    ex, session = _aged(tmp_path, ["jfs@uml"], "churn")
    images = tmp_path / "work/images"
    snapshot = images / "jfs@uml-aged-s7.snapshot"
    first = [c[:2] for c in _sequence(ex, str(images / "jfs@uml+churn-r1.img"))]
    # mkfs and mount inside the guest (untimed), the aging inside it, umount; then the
    # tasks, from the aged filesystem (the fresh twin's tree is already there).
    age = first.index(("uml:job", "age"))
    assert first.index(("uml:call", "mkfs.jfs")) < first.index(("uml:call", "mount")) < age
    assert first[age + 1] == ("uml:call", "umount")
    assert first.count(("uml:job", "age")) == 1
    assert ("uml:job", "layout") in first
    # The guest's image was copied on the host while the guest had it unmounted: the
    # second aged repetition boots with that copy, never mkfs'ed, never aged again.
    assert snapshot.read_bytes() == b"the aged image\n"
    assert [c[1:] for c in ex.calls if c[0] == "copy_image"] == [
        (str(images / "jfs@uml+churn-r1.img"), str(snapshot)),  # after the guest's umount
        (str(snapshot), str(images / "jfs@uml+churn-r2.img")),  # before the guest boots
    ]
    second = [c[:2] for c in _sequence(ex, str(images / "jfs@uml+churn-r2.img"))]
    assert ("uml:job", "age") not in second and ("uml:call", "mkfs.jfs") not in second
    assert ("create_image", str(images / "jfs@uml+churn-r2.img")) not in ex.calls
    # The first timed command on the restored image mounts it.
    assert next(c for c in second if c[0] == "uml:measure") == ("uml:measure", "mount")
    # The fresh sequences write the aged file set inside the guest, for the same reads.
    fresh = [c[:2] for c in _sequence(ex, str(images / "jfs@uml-r1.img"))]
    assert fresh.index(("uml:job", "clean_tree")) < fresh.index(("uml:job", "layout"))
    aged_runs = [r for r in session.runs if r.filesystem == "jfs@uml+churn"]
    assert {r.status for r in aged_runs if r.task != "mkfs"} == {"ok"}
    record = session.aging["jfs@uml"]
    assert record.manifest_digest and record.on_disk_matches
    assert record.snapshot_method in ("reflink", "sparse copy")
    assert session.profiles_as_run["jfs@uml+churn"].group == "aged:guest:uml"


def test_git_replay_does_not_age_a_guest_and_says_why() -> None:
    why = guest_unsupported(resolve_age("git-replay"))
    assert why.startswith("git replay does not run inside guest kernels: ")
    assert why.endswith("the fill and churn profiles age them")
    assert guest_unsupported(resolve_age("churn")) == guest_unsupported(resolve_age("fill")) == ""


def test_a_fuse_driver_ages_on_its_fuse_mount_on_the_host(tmp_path: Path) -> None:
    ex, session = _aged(tmp_path, ["vfat@fuse"], "churn")
    calls = [c[:2] for c in ex.calls]
    age = calls.index(("job", "age"))
    assert calls[age - 1] == ("call", "fusefat")  # mounted by its FUSE driver, then aged
    assert calls[age + 1] == ("call", "umount")
    assert calls.count(("job", "age")) == 1
    assert session.aging["vfat@fuse"].on_disk_matches
    assert session.profiles_as_run["vfat@fuse+churn"].group == "aged:fuse"
    assert all(r.status == "ok" for r in session.runs if r.task != "mkfs"), [
        (r.filesystem, r.task, r.error) for r in session.runs if r.status != "ok"
    ]
