"""What the power-loss test does to the machine: a private tmpfs, the flogfs daemon, loops, mounts.

Everything here is undone by its own context manager, also on errors and
Ctrl-C: mounts are unmounted, loop devices detached, the FUSE file system
unmounted with fusermount3 -u, and the one daemon started is stopped by its pid.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.host.ledger import Ledger, release_under
from fsarena.interrupt import deferred
from fsarena.measure.native import native_tool

FUSERMOUNT = "fusermount3"
TMPFS_NAME = "fsarena-crash"  # the tmpfs's source name: with its mount point, proof it is ours


def run(argv: Sequence[str], timeout_s: float = 120.0) -> subprocess.CompletedProcess[str]:
    """Run a helper command, returning its result (never raising on its exit code).

    A stop signal that comes while the helper starts is raised once it is held here
    (fsarena.interrupt.deferred): raised inside Popen, it would leave a mount or a
    losetup running on after the teardown that should undo it.
    """
    try:
        with deferred() as held:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
    except FileNotFoundError:
        raise FsarenaError(f"command not found: {argv[0]}; run scripts/setup.sh") from None
    with proc:
        try:
            held.check()
            out, err = proc.communicate(timeout=timeout_s)
        except BaseException:  # a timeout, Ctrl-C (communicate gave it 0.25 s to end)
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def call(argv: Sequence[str], timeout_s: float = 120.0) -> str:
    """Run a helper command that must succeed; return its stdout."""
    result = run(argv, timeout_s)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        raise FsarenaError(
            f"`{' '.join(argv)}` failed: {lines[-1] if lines else f'exit {result.returncode}'}"
        )
    return result.stdout


def is_mounted(path: Path) -> bool:
    target = str(path.resolve()) if path.exists() else str(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == target for line in f)


@contextlib.contextmanager
def tmpfs(path: Path, size_bytes: int) -> Iterator[Path]:
    """A private tmpfs at path, unmounted (with everything in it) on exit.

    Recorded in the ledger of path's parent (the work directory) with its source
    name, so that `fsarena cleanup` can prove it is fsarena's after a kill -9 (and
    release the loop devices and FUSE mount inside it with it).
    """
    path.mkdir(parents=True, exist_ok=True)
    if is_mounted(path):
        raise FsarenaError(f"{path} is already a mount point; is another power-loss test using it?")
    ledger = Ledger(str(path.parent))
    ledger.track("mount", str(path), TMPFS_NAME)
    try:  # the mount inside: a stop that lands once it is made still unmounts it
        call(["mount", "-t", "tmpfs", "-o", f"size={size_bytes},mode=0700", TMPFS_NAME, str(path)])
        yield path
    finally:
        # A Ctrl-C between `losetup --show` attaching a device and printing its
        # name leaves a loop device nobody knows of, holding the tmpfs busy.
        release_under(str(path))
        if is_mounted(path):
            _umount_when_free(path)
        ledger.untrack("mount", str(path))


def _umount_when_free(path: Path, timeout_s: float = 5.0) -> None:
    """umount, retrying briefly while a just-detached loop device lets go of its file."""
    deadline = time.monotonic() + timeout_s
    while True:
        result = run(["umount", str(path)])
        if result.returncode == 0 or not is_mounted(path):
            return
        if time.monotonic() > deadline:
            raise FsarenaError(
                f"`umount {path}` failed: {result.stderr.strip()}; "
                f"run `fsarena cleanup --workdir {path.parent}`"
            )
        time.sleep(0.1)


@contextlib.contextmanager
def loop_device(image: Path, direct_io: bool) -> Iterator[str]:
    """Attach a free loop device (always `losetup -f --show`: others use loops here too)."""
    dio = f"--direct-io={'on' if direct_io else 'off'}"
    device = call(["losetup", "-f", "--show", dio, str(image)]).strip()
    try:
        yield device
    finally:
        call(["losetup", "-d", device])


def mount(argv: Sequence[str], mountpoint: Path) -> tuple[bool, float, str]:
    """Run a mount argv: (mounted, wall ms including fork and exec, error)."""
    mountpoint.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    result = run(argv)
    elapsed_ms = (time.perf_counter() - start) * 1000
    mounted = result.returncode == 0 and is_mounted(mountpoint)
    error = "" if mounted else (result.stderr.strip() or f"mount exit {result.returncode}")
    return mounted, elapsed_ms, error[-300:]


def unmount(profile: FilesystemProfile, device: str, mountpoint: Path) -> None:
    """Unmount if mounted, then what the profile needs after a mount attempt (btrfs: forget).

    The after-umount step runs even when the mount failed (a failed mount may still
    have registered the device); it is best effort, as it has nothing to undo then.
    """
    if is_mounted(mountpoint):
        call(["umount", str(mountpoint)])
    if profile.after_umount:
        run(profile.after_umount_argv(device))


class FlogDaemon:
    """flogfs serving backing as MNT/disk.img and logging to log; stopped only by its own pid."""

    def __init__(self, backing: Path, log: Path, mountpoint: Path) -> None:
        self.backing, self.log, self.mountpoint = backing, log, mountpoint
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def disk(self) -> Path:
        return self.mountpoint / "disk.img"

    @property
    def mark(self) -> Path:
        return self.mountpoint / "mark"

    def start(self, timeout_s: float = 10.0) -> None:
        self.mountpoint.mkdir(parents=True, exist_ok=True)
        argv = [native_tool("flogfs"), str(self.backing), str(self.log), str(self.mountpoint)]
        with deferred() as held:  # a stop raised inside Popen would orphan the daemon
            proc = self.proc = subprocess.Popen(
                [*argv, "-f", "-o", "allow_other"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches fsarena, which then unmounts in order
            )
        try:
            held.check()
            deadline = time.monotonic() + timeout_s
            while not (is_mounted(self.mountpoint) and self.disk.exists()):
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                    raise FsarenaError(
                        f"the flogfs logger did not come up at {self.mountpoint}: "
                        f"{err.strip() or 'no message'}; check /dev/fuse and that fuse3 is "
                        "installed"
                    )
                time.sleep(0.01)
        except BaseException:  # `with FlogDaemon(...)` calls no __exit__ when start raises
            self.stop()
            raise

    def stop(self) -> None:
        """Unmount (fusermount3 -u) and wait for the daemon; kill it by pid only if it hangs."""
        if is_mounted(self.mountpoint):
            result = run([FUSERMOUNT, "-u", str(self.mountpoint)])
            if result.returncode != 0 and is_mounted(self.mountpoint):
                run([FUSERMOUNT, "-u", "-z", str(self.mountpoint)])
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()

    def __enter__(self) -> FlogDaemon:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def require_fuse() -> None:
    """Fail early, with what to do, when the logger cannot run here."""
    if not os.path.exists("/dev/fuse"):
        raise FsarenaError("/dev/fuse is missing: the power-loss test needs FUSE (modprobe fuse)")
    if shutil.which(FUSERMOUNT) is None:
        raise FsarenaError(f"{FUSERMOUNT} not found: apt-get install fuse3 (scripts/setup.sh)")
    native_tool("flogfs")
