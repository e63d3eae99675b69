"""The measurement seam: every effect the runner has on the machine goes through an executor.

Two narrow protocols (host/seams.py, re-exported here): TaskExecutor, what a
sequence's tasks do (the host's, or a guest kernel's), and Host, the host's
plumbing (images, loop devices, guests); Executor is both, the host's.

The runner, statistics and reports are tested without root by giving the runner
a fake executor that records calls (as hyperfine's MockExecutor does); the real
one below runs the commands, attaches loop devices and drops caches.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.host import cgroups, mounts
from fsarena.host.ledger import Ledger, loops_backed_by
from fsarena.host.seams import (
    Executor,
    Guest,
    GuestSpec,
    Host,
    ImageCopy,
    Runtime,
    SpaceInfo,
    TaskExecutor,
)
from fsarena.interrupt import deferred, whole
from fsarena.measure import tooltext
from fsarena.measure.collect import Command, Timed, measure_commands, wait_group_gone

# The seam's protocols and records, where the real executor's users import them from.
__all__ = [
    "Executor", "Guest", "GuestSpec", "Host", "ImageCopy", "RealExecutor", "Runtime",
    "SpaceInfo", "TaskExecutor",
]  # fmt: skip


def _run(
    argv: Sequence[str],
    timeout_s: float | None = None,
    *,
    group: bool = False,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    # Output goes to files, not pipes: a command that leaves a daemon behind (a
    # FUSE mount) would hold a pipe open, and reading it would wait for umount.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        # A stop raised inside Popen, after the fork, would leave the helper running on
        # unseen: a mount that lands after teardown looked (fsarena.interrupt). Held, then
        # raised below, where the helper is stopped with fsarena.
        with deferred() as held:
            try:
                proc = subprocess.Popen(
                    list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                    cwd=cwd, env=env, start_new_session=group,
                )  # fmt: skip
            except FileNotFoundError as exc:
                raise FsarenaError(f"command not found: {argv[0]}; run `fsarena check`") from exc
        with proc:
            try:
                held.check()
                returncode = wait_exited(proc, timeout_s)
            except subprocess.TimeoutExpired:
                _stop(proc, group)
                raise FsarenaError(
                    f"`{' '.join(argv)}` timed out after {timeout_s:.0f} s"
                ) from None
            except BaseException:
                # Ctrl-C: as subprocess.run did, a moment for the helper to end on its own
                # (a mount half done), then it stops with fsarena.
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(0.25)
                _stop(proc, group)
                raise
        out.seek(0)
        err.seek(0)
        # errors="replace": a helper's output is only read for messages; bytes that are not
        # UTF-8 (a binary on stdout) must not turn into a crash.
        return subprocess.CompletedProcess(
            proc.args,
            returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )


def _stop(proc: subprocess.Popen[bytes], group: bool) -> None:
    """Kill a helper; one started as a group, with every process it started, until all
    are gone (none of them may still write on a filesystem the teardown unmounts)."""
    if group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.kill()
    proc.wait()
    if group:
        wait_group_gone(proc.pid)


def run_helper_group(
    argv: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """A helper that starts helpers of its own (`git pull`: fetch, upload-pack, index-pack),
    in a process group of its own: a stop signal kills the whole group, and waits until
    it is gone, before the teardown unmounts what they were writing on. (A stop killed
    `git pull` alone: its children wrote on, the filesystem stayed busy past the
    teardown's patience, and its loop device was left attached to a deleted image.)"""
    return _run(argv, group=True, cwd=cwd, env=env)


def _until_released(backing: Path, image: str) -> None:
    """Until the loop device no longer holds the image (or RELEASE_WAIT_S): its
    backing_file gone, or naming another file (the device reused by someone else)."""
    deadline = time.monotonic() + RELEASE_WAIT_S
    while time.monotonic() < deadline:
        try:
            if backing.read_text().strip() != image:
                return
        except OSError:
            return
        time.sleep(0.01)


def _mounted(device: str) -> bool:
    with contextlib.suppress(OSError):
        return any(line.split()[0] == device for line in Path("/proc/mounts").open())
    return False


def _still_attached(image: str) -> bool:
    """Whether a loop device still has image as its backing file (sysfs)."""
    real = os.path.realpath(image)
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        with contextlib.suppress(OSError):
            if os.path.realpath(backing.read_text().strip()) == real:
                return True
    return False


def wait_exited(proc: subprocess.Popen[bytes], timeout_s: float | None) -> int:
    """Wait for proc's exit and return its code; subprocess.TimeoutExpired after timeout_s.

    Popen.wait(timeout) polls, sleeping up to 50 ms between looks, so every helper
    (each cold-cache umount and mount, ~30 per sequence) ended up to 50 ms after it
    had exited: measured 2-40 ms a call. A pidfd becomes readable the moment the
    process exits; where the kernel has none (Linux < 5.3), the polling wait.
    """
    if timeout_s is None:
        return proc.wait()
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout_s)
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout_s)
    finally:
        os.close(pidfd)
    if not ready:
        raise subprocess.TimeoutExpired(proc.args, timeout_s)
    return proc.wait()


def _kernel_said(argv: Sequence[str], records: list[str]) -> str:
    """What the kernel logged about a failed mount's device (mount(8) only points at dmesg)."""
    if not Path(argv[0]).name.startswith("mount"):
        return ""
    devices = [Path(a).name for a in argv if a.startswith("/dev/")]
    lines = tooltext.about(records, *devices)[-3:]
    return f"; the kernel said: {' | '.join(lines)}" if lines else ""


# The image retire_image keeps between sequences, beside theirs in the images directory.
SPARE_IMAGE = "spare.img"
# How long a detach waits for the kernel to let go of the image: a device another
# process still has open (udev's probe after a change) is only marked to detach at
# its last close, and until then the image's blocks stay allocated after it is deleted
# (on a tmpfs work directory, the next image of a repetition then found no room).
RELEASE_WAIT_S = 10.0

BLKFLSBUF = 0x1261  # linux/fs.h: _IO(0x12, 97), write back and invalidate a device's buffers


def _loop_direct_io(device: str) -> bool:
    """False for a loop device whose image is read through the host's page cache."""
    dio = Path(f"/sys/class/block/{Path(os.path.realpath(device)).name}/loop/dio")
    return not dio.exists() or dio.read_text().strip() == "1"


def keep_allocated(device: str) -> None:
    """Turn discard off on a loop device, so nothing punches holes in its image.

    mkfs discards the whole device (5 times per repetition in the lifecycle tasks) and
    some filesystems discard online; on a loop device each discard punches a hole in
    the host's image file, which the next write allocates again inside a timed region.
    A block device given with --device keeps its discards: they are the device's own.
    Where the kernel refuses, the holes show in the allocated share every run records.
    """
    limit = Path(f"/sys/class/block/{Path(os.path.realpath(device)).name}/queue/discard_max_bytes")
    with contextlib.suppress(OSError):
        limit.write_text("0\n")


class _Removal(threading.Thread):
    """One file deleted in a thread (RealExecutor.remove_spare_image)."""

    def __init__(self, path: str) -> None:
        super().__init__(name="fsarena-remove", daemon=False)
        self.path = path

    def run(self) -> None:
        with contextlib.suppress(OSError):  # what stays is told by settle, from the ledger
            os.unlink(self.path)


@dataclass
class RealExecutor:
    """Executor on this machine (root); records what it creates in the ledger, if given one."""

    ledger: Ledger | None = None
    call_timeout_s: float | None = None  # untimed helpers (mkfs to reach a state) get a limit too
    # How to boot a guest kernel (fsarena.guest.host.boot), given by whoever runs sequences:
    # the measurement seam knows guests only through this, so it imports nothing of them.
    boot: Callable[[GuestSpec, TaskExecutor], Guest] | None = None
    # The one image kept between sequences (retire_image): (path, size in bytes).
    spare: tuple[str, int] | None = None
    # remove_spare_image deletes in a thread, joined by settle(): whoever sets this calls
    # settle before it looks at the ledger or ends (machines.run.executor_for does).
    background_removal: bool = False
    _removals: list[_Removal] = field(default_factory=list)

    def track(self, kind: str, ident: str, source: str = "") -> None:
        if self.ledger is not None:
            self.ledger.track(kind, ident, source)

    def untrack(self, kind: str, ident: str) -> None:
        if self.ledger is not None:
            self.ledger.untrack(kind, ident)

    def call(self, argv: Sequence[str]) -> None:
        self.output(argv)

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        return measure_commands(commands, device, timeout_s)

    def drop_caches(self) -> None:
        # drop_caches frees only clean pages, so write everything back first.
        os.sync()
        try:
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        except OSError as exc:
            raise FsarenaError(
                f"cannot drop caches ({exc}); fsarena must run as root on the host"
            ) from exc

    def flush_device(self, device: str) -> bool:
        # Unmounted, a filesystem's page, dentry and inode caches are gone with its
        # superblock; what is left is the device's own cache (metadata read through it),
        # which BLKFLSBUF writes back and drops. A loop device without direct I/O keeps
        # the image's pages in the host's page cache too: False, and the caller drops all.
        # O_EXCL fails while any filesystem still holds the device (a copy of the mount in
        # another mount namespace keeps the superblock, and its caches, alive).
        try:
            fd = os.open(device, os.O_RDONLY | os.O_EXCL)
        except OSError as exc:
            if exc.errno == errno.EBUSY:
                return False
            raise FsarenaError(f"cannot open {device} to flush its cache: {exc}") from exc
        try:
            os.fsync(fd)
            fcntl.ioctl(fd, BLKFLSBUF)
        finally:
            os.close(fd)
        return _loop_direct_io(device)

    def space(self, mountpoint: str) -> SpaceInfo:
        st = os.statvfs(mountpoint)
        return SpaceInfo(
            st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize, st.f_bfree * st.f_frsize
        )

    def device_size(self, device: str) -> int:
        with open(device, "rb") as f:
            return f.seek(0, os.SEEK_END)

    def make_dir(self, path: str) -> None:
        Path(path).mkdir(parents=True, exist_ok=True)

    def remove_path(self, path: str) -> None:
        p = Path(path)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
        self.untrack("image", path)
        self.untrack("tree", path)

    def create_image(self, path: str, size_bytes: int) -> None:
        # Allocated on the host before anything is timed (fallocate(2), no data written):
        # a sparse image made the host allocate a block at every first write, inside the
        # timed region, at a cost that differed per filesystem. Where the host filesystem
        # cannot preallocate, the image stays sparse; every run reads back how much of it
        # is allocated (measure.collect.read_loop_state), so the report can say so.
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(path):  # not this run's: never recorded (cleanup would delete it)
            raise FsarenaError(
                f"cannot create image {path}: it exists and this run did not make it; "
                f"if an earlier run left it, `fsarena cleanup --workdir {Path(path).parent.parent}`"
                ", else choose another --workdir"
            )
        self.track("image", path)  # before it exists, as every resource
        made: list[str] = []  # the name, once this call made a file there (O_EXCL, link)
        try:
            # Whole: a stop that comes meanwhile is raised once the image is made (and
            # removed just below); cut short, a half-made image outlived its record.
            with whole():
                if not self._take_spare(path, size_bytes, made):
                    self._allocate(path, size_bytes, made)
        except BaseException:
            for name in made:  # never a file this call did not make
                with contextlib.suppress(OSError):
                    os.unlink(name)
            self.untrack("image", path)
            raise

    def _allocate(self, path: str, size_bytes: int, made: list[str]) -> None:
        try:
            with open(path, "xb") as f:
                made.append(path)
                f.truncate(size_bytes)
        except OSError as exc:
            raise FsarenaError(
                f"cannot create image {path}: {exc.strerror}; choose another --workdir"
            ) from exc
        done = _run(["fallocate", "--length", str(size_bytes), path])
        if done.returncode != 0 and "not supported" not in done.stderr:
            raise FsarenaError(
                f"cannot allocate image {path} ({size_bytes / 1e9:.1f} GB): "
                f"{done.stderr.strip()}; free space in the work directory or choose another "
                "--workdir"
            )

    def retire_image(self, path: str) -> None:
        # Deleting a used image cost 0.43-0.56 s a sequence on this VM's ext4 (2.6 GB of
        # blocks freed through the host's journal; article A, ext4 and xfs, load 3-6).
        # `fallocate --zero-range` took 0.002-0.03 s and leaves the file as create_image
        # makes it: every block allocated, reading as zeros (unwritten extents), so the
        # next filesystem starts from the same host state, on the same host blocks. A host
        # filesystem that cannot zero a range (tmpfs) gets the image deleted, as before.
        # One spare at most, so the work directory never holds more images than before.
        if _still_attached(path):
            # `losetup --detach` of a device still in use (a mount a teardown could not
            # undo) only sets autoclear and succeeds: zeroing the image then would wipe a
            # mounted filesystem under the kernel. Deleted, as before the spare, instead.
            self.remove_path(path)
            return
        size = os.stat(path).st_size
        spare = str(Path(path).with_name(SPARE_IMAGE))
        zeroed = _run(["fallocate", "--zero-range", "--length", str(size), path])
        if self.spare is not None or zeroed.returncode != 0:
            self.remove_path(path)
            return
        self.track("image", spare)  # before it exists, as every image
        try:
            os.link(path, spare)  # never replaces a file: EEXIST if one is there
        except OSError:
            self.untrack("image", spare)  # not made: an earlier run's, left alone
            self.remove_path(path)
            return
        os.unlink(path)
        self.untrack("image", path)
        self.spare = (spare, size)

    def _take_spare(self, path: str, size_bytes: int, made: list[str]) -> bool:
        """Give the spare image the name path, if it has this size; else delete it."""
        if self.spare is None:
            return False
        spare, size = self.spare
        self.spare = None
        if size != size_bytes or Path(spare).parent != Path(path).parent:
            self.remove_path(spare)
            return False
        os.link(spare, path)  # path was checked free by the caller; link never replaces
        made.append(path)
        os.unlink(spare)
        self.untrack("image", spare)
        return True

    def remove_spare_image(self) -> None:
        if self.spare is None:
            return
        spare, _ = self.spare
        self.spare = None
        if not self.background_removal:
            self.remove_path(spare)
            return
        # Freeing a used image's blocks is the host filesystem's work: 0.46-0.50 s for
        # the 2.6 GB of an article-A image here (ext4 mounted with discard), whatever its
        # extents. Nothing is measured after the last sequence, so it runs beside the
        # run's end and its reports; its ledger entry stays until settle() has seen it
        # gone.
        removal = _Removal(spare)
        removal.start()
        self._removals.append(removal)

    def settle(self) -> None:
        """Wait for the deletions running in the background; untrack what is gone (what
        is not stays in the ledger, for `fsarena cleanup`)."""
        while self._removals:
            removal = self._removals.pop(0)
            with whole():  # a stop waits the half second: the ledger then tells the truth
                removal.join()
                if not os.path.lexists(removal.path):
                    self.untrack("image", removal.path)

    def copy_image(self, source: str, dest: str) -> ImageCopy:
        # Whether the host filesystem can reflink is probed by trying, never guessed
        # from its name (aged snapshots: fsarena.aging.snapshot).
        method = "reflink"
        if _run(["cp", "--reflink=always", source, dest]).returncode != 0:
            method = "sparse copy"
            done = _run(["cp", "--sparse=always", source, dest])
            if done.returncode != 0:
                raise FsarenaError(
                    f"cannot copy {source} to {dest}: {done.stderr.strip()}; "
                    "is the work directory full?"
                )
        return ImageCopy(method, os.stat(dest).st_blocks * 512)

    def attach_loop(self, image: str) -> str:
        # Direct I/O: a buffered loop device caches every block twice (in the
        # filesystem's page cache and in the image file's), which adds noise.
        # losetup and sysfs name the backing file by its canonical path.
        self.track("loop", os.path.realpath(image))
        try:
            result = _run(["losetup", "--find", "--show", "--direct-io=on", image])
        except BaseException:
            # A stop while losetup ran: it may have attached the image before it ended, and
            # its device's name never reached us (the image would then be deleted under it).
            with contextlib.suppress(FsarenaError, OSError):  # else the ledger keeps it
                for device in loops_backed_by(image):
                    self.call(["losetup", "--detach", device])
                self.untrack("loop", os.path.realpath(image))
            raise
        if result.returncode != 0:
            self.untrack("loop", os.path.realpath(image))
            raise FsarenaError(
                f"cannot attach {image} to a loop device: {result.stderr.strip()}; "
                "check that /dev/loop-control exists and that you are root"
            )
        device = result.stdout.strip()
        keep_allocated(device)
        return device

    def detach_loop(self, device: str) -> None:
        backing = Path(f"/sys/class/block/{Path(device).name}/loop/backing_file")
        image = backing.read_text().strip() if backing.exists() else ""
        self.call(["losetup", "--detach", device])
        if image and not _mounted(device):  # a mount holds it until unmounted: no wait ends
            _until_released(backing, image)
        if image:
            self.untrack("loop", image.removesuffix(" (deleted)"))

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def count_lines(self, path: str) -> int:
        with open(path, "rb") as f:
            return sum(1 for _ in f)

    def output(self, argv: Sequence[str]) -> str:
        with tooltext.kernel_messages() as kernel:
            # An untimed mount or umount is its one syscall where that is all the binary
            # would do (host/mounts.py): no process start.
            done = mounts.in_process(argv)
            result = _run(argv, self.call_timeout_s) if done is None else done
        if result.returncode != 0:
            text = result.stderr or result.stdout
            detail = tooltext.meaningful(text)
            # Without a usage text, the last lines: mount(8) puts its reason first and a
            # hint about dmesg last; with one (a bad mkfs option), the lines before it.
            usage_cut = len(detail) < len([x for x in text.splitlines() if x.strip()])
            shown = detail[:3] if usage_cut else detail[-3:]
            tail = " ".join(shown) if shown else f"exit code {result.returncode}"
            said = _kernel_said(argv, kernel)
            raise FsarenaError(f"`{' '.join(argv)}` failed: {tail}{said}")
        return result.stdout

    def read_text(self, path: str) -> str:
        return Path(path).read_text()

    def write_file(self, path: str, data: bytes) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_bytes(data)

    def create_memory_cgroup(self, limit_bytes: int) -> str:
        return cgroups.create_memory_cgroup(limit_bytes, before=lambda p: self.track("cgroup", p))

    def create_cpu_cgroup(self, beside: str) -> str:
        return cgroups.create_cpu_cgroup(beside, before=lambda p: self.track("cgroup", p))

    def create_task_cgroup(self) -> str:
        return cgroups.create_task_cgroup(before=lambda p: self.track("cgroup", p))

    def remove_cgroup(self, path: str) -> None:
        cgroups.remove_cgroup(path)
        self.untrack("cgroup", path)

    def is_mounted(self, mountpoint: str) -> bool:
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The table findmnt reads, read here: no process start.
            return mounts.mounted_type(mountpoint) is not None
        result = _run(["findmnt", "-J", "--mountpoint", mountpoint])
        if result.returncode != 0:
            return False
        return bool(json.loads(result.stdout).get("filesystems"))

    def start_guest(self, spec: GuestSpec) -> Guest:
        if self.boot is None:
            raise FsarenaError(
                "fsarena bug: this executor was made without a way to boot guest kernels"
            )
        return self.boot(spec, self)
