"""Filesystem profiles as data, and probing whether this host can make and mount each.

This table is the only place in fsarena that knows anything about a particular
filesystem: no other module branches on a filesystem's name. To add a
filesystem, or a variant such as btrfs with zstd compression, add one profile.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from fsarena.errors import FsarenaError

MIB = 1 << 20


@dataclass(frozen=True)
class FilesystemProfile:
    """How to make and mount one filesystem (or one option variant of it)."""

    name: str  # unique; what users type in --fs
    fstype: str  # the kernel's name, as in /proc/filesystems and mount -t
    mkfs: tuple[str, ...]  # argv; "{device}" is replaced by the target device
    mount_options: tuple[str, ...] = ()  # empty: the kernel's defaults, as the articles used
    driver: str = "kernel"
    packages: tuple[str, ...] = ()  # Debian packages that provide the mkfs tool
    min_size_bytes: int = 64 * MIB  # the smallest device mkfs accepts
    notes: str = ""  # why the options differ from the defaults, if they do
    # Read-only consistency check of an unmounted device ("{device}"); empty: none known,
    # so the crash test cannot judge this filesystem. Exit code 0 means clean.
    fsck: tuple[str, ...] = ()
    # Run after every umount of a crash state ("{device}"): copies of one image share
    # an fsid, which the kernel must forget before the next copy appears elsewhere.
    after_umount: tuple[str, ...] = ()

    @property
    def mkfs_tool(self) -> str:
        return self.mkfs[0]

    def mkfs_argv(self, device: str) -> tuple[str, ...]:
        return tuple(arg.replace("{device}", device) for arg in self.mkfs)

    def mount_argv(self, device: str, mountpoint: str) -> tuple[str, ...]:
        opts = ("-o", ",".join(self.mount_options)) if self.mount_options else ()
        return ("mount", "-t", self.fstype, *opts, device, mountpoint)

    def fsck_argv(self, device: str) -> tuple[str, ...]:
        return tuple(arg.replace("{device}", device) for arg in self.fsck)

    def after_umount_argv(self, device: str) -> tuple[str, ...]:
        return tuple(arg.replace("{device}", device) for arg in self.after_umount)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


E2FSCK = ("e2fsck", "-f", "-n", "{device}")
EXT4_MKFS = (
    "mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", "{device}"
)  # fmt: skip

# -F / -f only stop mkfs from asking about an old signature on a fresh loop
# image; they change nothing in the filesystem made.
PROFILES: dict[str, FilesystemProfile] = {
    p.name: p
    for p in (
        FilesystemProfile(
            "ext2",
            "ext2",
            ("mkfs.ext2", "-F", "-q", "{device}"),
            packages=("e2fsprogs",),
            fsck=E2FSCK,
        ),
        FilesystemProfile(
            "ext3",
            "ext3",
            ("mkfs.ext3", "-F", "-q", "{device}"),
            packages=("e2fsprogs",),
            fsck=E2FSCK,
        ),
        FilesystemProfile(
            "ext4",
            "ext4",
            EXT4_MKFS,
            packages=("e2fsprogs",),
            fsck=E2FSCK,
            notes=(
                "inode tables and journal initialised at mkfs time: with the default lazy "
                "init, mkfs.ext4 leaves ext4lazyinit writing 48 MiB in the background during "
                "the first seconds after mount (measured), which would be charged to the first "
                "tasks; the on-disk format is the default one"
            ),
        ),
        FilesystemProfile(
            "xfs",
            "xfs",
            ("mkfs.xfs", "-f", "-q", "{device}"),
            packages=("xfsprogs",),
            min_size_bytes=300 * MIB,  # xfsprogs >= 5.19 refuses smaller filesystems
            fsck=("xfs_repair", "-n", "{device}"),
        ),
        FilesystemProfile(
            "btrfs",
            "btrfs",
            ("mkfs.btrfs", "-f", "-q", "{device}"),
            packages=("btrfs-progs",),
            min_size_bytes=128 * MIB,
            fsck=("btrfs", "check", "--readonly", "{device}"),
            after_umount=("btrfs", "device", "scan", "--forget", "{device}"),
        ),
    )
}

# The crash test's negative control, kept out of PROFILES (never a real choice):
# ext4 told not to issue cache flushes, so a power cut can lose what fsync
# promised. It must lose fsync'ed data in simulated power cuts; if it does not,
# the harness cannot see losses.
CRASH_CONTROL = FilesystemProfile(
    "ext4-nobarrier",
    "ext4",
    EXT4_MKFS,
    mount_options=("nobarrier",),
    packages=("e2fsprogs",),
    fsck=E2FSCK,
    notes="negative control of the crash test: no cache flushes, fsync'ed data can be lost",
)


def derive(
    name: str,
    base: FilesystemProfile,
    mount_options: Iterable[str] | None = None,
    mkfs_options: Iterable[str] = (),
    notes: str = "",
) -> FilesystemProfile:
    """A variant of a profile (a suite's `[filesystems.NAME]` table): other options, same type.

    mount_options replace the base's; mkfs_options are added before the device.
    """
    at = base.mkfs.index("{device}") if "{device}" in base.mkfs else len(base.mkfs)
    mkfs = (*base.mkfs[:at], *mkfs_options, *base.mkfs[at:])
    return replace(
        base,
        name=name,
        mkfs=mkfs,
        mount_options=base.mount_options if mount_options is None else tuple(mount_options),
        notes=notes or f"variant of {base.name}" + (f": {base.notes}" if base.notes else ""),
    )


# The filesystem of the dataset source image, when the datasets do not fit in memory.
SOURCE_FILESYSTEM = "ext4"


@dataclass(frozen=True)
class Support:
    """Whether a profile can run here, and if not, why and what to do."""

    profile: FilesystemProfile
    available: bool
    reason: str = ""


def kernel_filesystems(proc_filesystems: Path = Path("/proc/filesystems")) -> set[str]:
    """Filesystem types the running kernel has (built in or already loaded)."""
    try:
        lines = proc_filesystems.read_text().splitlines()
    except OSError:
        return set()
    return {line.split()[-1] for line in lines if line.strip()}


def _try_load_module(fstype: str) -> bool:
    """Ask the kernel for the filesystem the way mount would: modprobe, if there is one."""
    modprobe = shutil.which("modprobe")
    if modprobe is None:
        return False
    result = subprocess.run(
        [modprobe, "-q", fstype], stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    return result.returncode == 0


def probe(profile: FilesystemProfile, kernel: set[str] | None = None) -> Support:
    """Probe by trying: the kernel must list the type (after a modprobe), the mkfs tool must run."""
    have = kernel if kernel is not None else kernel_filesystems()
    if profile.fstype not in have and not (
        kernel is None
        and _try_load_module(profile.fstype)
        and profile.fstype in kernel_filesystems()
    ):
        return Support(
            profile,
            False,
            f"the running kernel has no {profile.fstype} (not in /proc/filesystems, "
            "and no module could be loaded)",
        )
    if shutil.which(profile.mkfs_tool) is None:
        pkgs = " ".join(profile.packages) or profile.mkfs_tool
        return Support(profile, False, f"{profile.mkfs_tool} not found: apt-get install {pkgs}")
    return Support(profile, True)


def resolve(
    names: Iterable[str], profiles: Mapping[str, FilesystemProfile] = PROFILES
) -> list[FilesystemProfile]:
    """Profiles for user-typed names, in the given order; unknown names are an error."""
    chosen: list[FilesystemProfile] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        if name not in profiles:
            known = ", ".join(sorted(profiles))
            raise FsarenaError(f"unknown filesystem {name!r}; known filesystems: {known}")
        if profiles[name] not in chosen:
            chosen.append(profiles[name])
    if not chosen:
        raise FsarenaError("no filesystem selected; name some with --fs, e.g. --fs ext4,xfs")
    return chosen
