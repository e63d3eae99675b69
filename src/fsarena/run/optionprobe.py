"""Whether this kernel and mkfs take each option: found by trying it on a small image.

The options table says since when the documentation has an option; only trying it
says whether the running kernel and the installed mkfs accept it (xfstests'
`_require_*` way). For each filesystem one small loop image (the profile's smallest
size) is made in the work directory through the ledger, like any target; each
option is tried on it in turn: mkfs with the option's mkfs arguments, mount with its
mount options, a per-directory attribute set with chattr and read back with lsattr,
then umount. An option refused at any step is unavailable, with the tool's own
error line (and what the kernel logged) as the reason; the image, its loop device
and the mount are undone whatever happened.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.filesystems.options import Option, configuration
from fsarena.filesystems.profiles import PROFILES, FilesystemProfile
from fsarena.host.executor import Executor
from fsarena.interrupt import whole
from fsarena.targets import LoopTarget
from fsarena.tasks.base import set_attributes

PROBE_DIR = "option-probe"  # under the work directory: images/, mnt/


@dataclass(frozen=True)
class Probed:
    """One option tried on one filesystem here."""

    fs: str
    option: str
    available: bool
    reason: str = ""  # the refusing tool's own words; "" when available
    step: str = ""  # where it was refused: "mkfs", "mount", "chattr"
    seconds: float = 0.0

    def line(self) -> str:
        if self.available:
            return f"{self.fs} {self.option}: available here"
        return f"{self.fs} {self.option}: unavailable here ({self.step} refused it): {self.reason}"


def probe_options(
    executor: Executor, workdir: str, wanted: Iterable[tuple[str, Option]]
) -> list[Probed]:
    """Try every (filesystem, option) on a small image of that filesystem, in order."""
    by_fs: dict[str, list[Option]] = {}
    for fs, option in wanted:
        by_fs.setdefault(fs, []).append(option)
    found: list[Probed] = []
    for fs, options in by_fs.items():
        found.extend(_probe_filesystem(executor, workdir, PROFILES[fs], options))
    return found


def _probe_filesystem(
    executor: Executor, workdir: str, profile: FilesystemProfile, options: list[Option]
) -> list[Probed]:
    root = Path(workdir, PROBE_DIR)
    image = str(root / "images" / f"{profile.name}.img")
    mountpoint = str(root / "mnt" / profile.name)
    target = LoopTarget(image, profile.min_size_bytes)
    with ExitStack() as undo:  # last to first, whatever failed
        undo.callback(target.teardown, executor)
        device = target.setup(executor)
        executor.make_dir(mountpoint)
        undo.callback(executor.remove_path, mountpoint)
        return [_try(executor, profile.name, o, device, mountpoint) for o in options]
    raise AssertionError("unreachable")  # mypy: ExitStack may swallow


def _try(executor: Executor, fs: str, option: Option, device: str, mountpoint: str) -> Probed:
    started = time.monotonic()
    variant = configuration(fs, option)
    step = "mkfs"
    try:
        executor.call(variant.mkfs_argv(device))
        step = "mount"
        executor.track("mount", mountpoint, device)
        try:
            executor.call(variant.mount_argv(device, mountpoint))
            step = "chattr"
            _try_attributes(executor, variant, mountpoint)
        finally:
            _unmount(executor, variant, device, mountpoint)
    except FsarenaError as exc:
        return Probed(fs, option.name, False, str(exc), step, time.monotonic() - started)
    return Probed(fs, option.name, True, seconds=time.monotonic() - started)


def _unmount(executor: Executor, variant: FilesystemProfile, device: str, mountpoint: str) -> None:
    """Whatever the mount did (a stop signal can land once the mount is made and before
    its caller knows): unmounted if mounted, then forgotten; a stop waits for the step."""
    with whole():
        try:
            if executor.is_mounted(mountpoint):
                executor.call(("umount", mountpoint))
            executor.untrack("mount", mountpoint)
        finally:
            if variant.after_umount:  # btrfs: the kernel forgets the device's fsid
                executor.call(variant.after_umount_argv(device))


def _try_attributes(executor: Executor, profile: FilesystemProfile, mountpoint: str) -> None:
    """A per-directory attribute, set on an empty directory and read back."""
    if profile.data_dir_attributes:
        directory = f"{mountpoint}/data"
        executor.make_dir(directory)
        set_attributes(executor, directory, profile.data_dir_attributes)


def probe_here(workdir: str, wanted: Iterable[tuple[str, Option]]) -> list[Probed]:
    """probe_options on this machine, under the work directory's lock and ledger: what a
    crash leaves behind, `fsarena cleanup --workdir` finds and undoes."""
    from fsarena.host.executor import RealExecutor
    from fsarena.host.ledger import Ledger
    from fsarena.run.launch import workdir_lock

    workdir = str(Path(workdir).resolve())
    with workdir_lock(workdir):
        try:
            return probe_options(RealExecutor(ledger=Ledger(workdir)), workdir, wanted)
        finally:  # its directories too, once empty (never anything else's)
            root = Path(workdir, PROBE_DIR)
            for empty in (root / "images", root / "mnt", root):
                with contextlib.suppress(OSError):
                    empty.rmdir()
