"""Recording a workload through the logger, and the self-check that makes a recording valid.

Steps (shared/design/powerloss.md, section 2): mkfs on a plain image file in
the private tmpfs, keep a copy as the post-mkfs snapshot, serve the image
through flogfs, attach it with `losetup --direct-io=on` (FUSE writeback cache
off: every write and flush reaches the logger in order), mount, run the
workload (markers after every operation), umount (its writes and flushes are
recorded too), mark "umount", detach, unmount the logger. Then the whole log
is replayed onto the snapshot: unless that equals the final image byte for
byte, the log is not the truth and the recording is invalid.
"""

from __future__ import annotations

import os
import shutil
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.powerloss.log import FlogLog, apply, files_equal
from fsarena.powerloss.scratch import FlogDaemon, call, loop_device, mount, unmount
from fsarena.powerloss.workload import Workload, run

MIB = 1 << 20
IMAGE_BYTES = 256 * MIB  # the design's size; mkfs.xfs needs 300 MB (profile minimum)


def image_size(profile: FilesystemProfile) -> int:
    size = max(IMAGE_BYTES, profile.min_size_bytes)
    return (size + MIB - 1) // MIB * MIB


@dataclass(frozen=True)
class Recording:
    """The files of one recording, all in one directory of the tmpfs."""

    directory: Path

    @property
    def snapshot(self) -> Path:
        return self.directory / "snapshot.img"

    @property
    def final(self) -> Path:
        return self.directory / "final.img"

    @property
    def log(self) -> Path:
        return self.directory / "flog.log"


def sparse_copy(src: Path, dst: Path) -> None:
    """Copy an image keeping its holes (a 256 MiB image with 30 MB of data copies in ms)."""
    call(["cp", "--sparse=always", str(src), str(dst)])


def record(
    profile: FilesystemProfile, workload: Workload, directory: Path
) -> tuple[Recording, float]:
    """Make the filesystem, record the workload on it; returns the recording and its seconds."""
    rec = Recording(directory)
    directory.mkdir(parents=True)
    with open(rec.final, "xb") as f:
        f.truncate(image_size(profile))
    call(profile.mkfs_argv(str(rec.final)))
    sparse_copy(rec.final, rec.snapshot)
    start = time.perf_counter()
    with ExitStack() as stack:
        daemon = stack.enter_context(FlogDaemon(rec.final, rec.log, directory / "fuse"))
        device = stack.enter_context(loop_device(daemon.disk, direct_io=True))
        mountpoint = directory / "mnt"
        stack.callback(unmount, profile, device, mountpoint)
        mounted, _, error = mount(profile.mount_argv(device, str(mountpoint)), mountpoint)
        if not mounted:
            raise FsarenaError(f"cannot mount {profile.name} through the logger: {error}")
        run(workload, mountpoint, daemon.mark)
        unmount(profile, device, mountpoint)
        mark(daemon.mark, "umount")
    return rec, time.perf_counter() - start


def mark(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def replay_matches(rec: Recording, log: FlogLog) -> bool:
    """The self-check: snapshot + every logged write == the final image, byte for byte."""
    replayed = rec.directory / "replayed.img"
    sparse_copy(rec.snapshot, replayed)
    try:
        apply(log, (r for r in log.records if r.is_mutation), replayed)
        return files_equal(replayed, rec.final)
    finally:
        replayed.unlink()


def clean_mount_ms(
    profile: FilesystemProfile, image: Path, scratch: Path, n: int = 10
) -> list[float]:
    """Mount times of the cleanly unmounted final image (nothing to recover), n times.

    Made exactly as a crash state's mount is (a fresh copy on a fresh loop
    device each time), so the two differ only by the recovery.
    """
    copy, mountpoint = scratch / "clean.img", scratch / "clean-mnt"
    times = []
    for _ in range(n):
        sparse_copy(image, copy)
        try:
            with loop_device(copy, direct_io=False) as device:
                try:
                    argv = profile.mount_argv(device, str(mountpoint))
                    mounted, ms, error = mount(argv, mountpoint)
                    if not mounted:
                        raise FsarenaError(
                            f"the final {profile.name} image does not mount: {error}"
                        )
                    times.append(ms)
                finally:
                    unmount(profile, device, mountpoint)
        finally:
            copy.unlink(missing_ok=True)
    return times


def discard(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
