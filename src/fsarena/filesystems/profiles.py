"""Filesystem profiles as data: what a profile is, and one row per filesystem.

This table is the only place in fsarena that knows anything about a particular
filesystem: no other module branches on a filesystem's name. To add a
filesystem, or a variant such as btrfs with zstd compression, add one profile.
Deriving variants and resolving users' names: fsarena.filesystems.variants.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

MIB = 1 << 20


@dataclass(frozen=True)
class FuseDriver:
    """How a FUSE (user-space) implementation mounts a filesystem, and what it cannot do."""

    command: tuple[str, ...]  # argv; "{device}" and "{mountpoint}" are replaced
    package: str  # the Debian package that provides it
    syncfs: bool = True  # False: syncfs(2) does not reach its data, a global sync(2) must
    unix_ownership: bool | None = None  # None: as the filesystem itself

    @property
    def tool(self) -> str:
        return self.command[0]


# The drivers a profile may name, in its `drivers` tuple, and the kind each one is:
# "kernel" the host kernel; "fuse" a user-space driver on the host; "guest" a
# guest kernel (named after the driver) that runs the tasks inside itself.
DRIVER_KINDS: dict[str, str] = {
    "kernel": "kernel",
    "fuse": "fuse",
    "kvm": "guest",
    "uml": "guest",
    "qemu": "guest",
}

# Every guest run also runs this filesystem in the same guest: guest times are
# reported relative to it, since they measure the emulator as well.
REFERENCE_FILESYSTEM = "ext4"


@dataclass(frozen=True)
class FilesystemProfile:
    """How to make and mount one filesystem (or one option variant of it), and through what."""

    name: str  # unique; what users type in --fs ("vfat", or "vfat@fuse" for a driver variant)
    fstype: str  # the kernel's name, as in /proc/filesystems and mount -t
    mkfs: tuple[str, ...]  # argv; "{device}" is replaced by the target device
    mount_options: tuple[str, ...] = ()  # empty: the kernel's defaults, as the articles used
    driver: str = "kernel"  # "kernel" | "fuse" | "guest" (the kind of the chosen driver)
    packages: tuple[str, ...] = ()  # Debian packages that provide the mkfs tool
    min_size_bytes: int = 64 * MIB  # the smallest device mkfs accepts
    notes: str = ""  # why the options differ from the defaults, if they do
    # Read-only consistency check of an unmounted device ("{device}"); empty: none known,
    # so the power-loss test cannot judge this filesystem. Exit code 0 means clean.
    fsck: tuple[str, ...] = ()
    # Run after every umount of a crash state ("{device}"): copies of one image share
    # an fsid, which the kernel must forget before the next copy appears elsewhere.
    after_umount: tuple[str, ...] = ()
    # Drivers that can run it, best first (see fsarena.filesystems.drivers for the order's reasons).
    drivers: tuple[str, ...] = ("kernel", "kvm", "uml", "qemu")
    fuse: FuseDriver | None = None  # the FUSE implementation, if there is one
    # Modules a guest kernel loads for it, in order; dependencies that modules.dep
    # names are loaded first by themselves, but not those the kernel requests at
    # mount time (a checksum or a character set), which must be listed. Empty: fstype.
    guest_modules: tuple[str, ...] = ()
    # Capabilities that tasks and the runner consult, instead of names:
    syncfs: bool = True  # syncfs(2) writes its data back; else the timed region needs sync(2)
    unix_ownership: bool = True  # chmod/chown work; else tar needs --no-same-owner/-permissions
    mount_command: tuple[str, ...] = ()  # argv replacing `mount -t fstype` when set
    on_device: bool = True  # False: keeps its data in memory (device counters stay at zero)
    # overlayfs can use it as a container's upper layer (d_type, xattrs, RENAME_WHITEOUT);
    # "" when it can, else why not (a container task records a skip with it).
    overlay_upper_unsupported: str = ""
    guest: str = ""  # the guest kernel that runs it, when driver == "guest"
    base: str = ""  # the profile this variant was made from ("" for a base profile)
    never: str = ""  # why no driver can ever run it here (e.g. never merged into Linux)
    # Free-space fragmentation: a read-only tool on the device ("{device}") and, per value,
    # a regex whose group 1 is that number in its output; empty: no tool known.
    freespace: tuple[str, ...] = ()
    freespace_patterns: tuple[tuple[str, str], ...] = ()  # ("free_extents", regex), ...
    # Mount options (their names before "=") that make the filesystem compress what it
    # writes: its logical bytes are then not its device bytes (the ceiling check and the
    # report's compression section read this, never the filesystem's name).
    compress_options: tuple[str, ...] = ()
    # A read-only tool that tells the space the files under a path ("{path}") take on
    # the device against their size (btrfs's compsize); empty: none known.
    space_usage: tuple[str, ...] = ()
    space_usage_package: str = ""  # the Debian package that provides it
    # chattr attributes set on a task's data directory before any data is written
    # ("+C": no copy-on-write for a database's files); a per-directory configuration.
    data_dir_attributes: tuple[str, ...] = ()

    @property
    def mkfs_tool(self) -> str:
        return self.mkfs[0]

    @property
    def group(self) -> str:
        """Which results it may be ranked against: same driver kind (and same guest)."""
        return f"guest:{self.guest}" if self.driver == "guest" else self.driver

    @property
    def driver_label(self) -> str:
        """The driver in words: "host kernel", "FUSE", "uml guest kernel"."""
        words = {"kernel": "host kernel", "fuse": "FUSE", "guest": f"{self.guest} guest kernel"}
        return words[self.driver]

    @property
    def reference(self) -> str:
        """The profile whose times this one's are reported against ("" for none)."""
        return f"{REFERENCE_FILESYSTEM}@{self.guest}" if self.driver == "guest" else ""

    @property
    def modules(self) -> tuple[str, ...]:
        return self.guest_modules or (self.fstype,)

    @property
    def compresses(self) -> bool:
        """Whether its mount options make it compress what it writes."""
        return any(o.split("=")[0] in self.compress_options for o in self.mount_options)

    def space_usage_argv(self, path: str) -> tuple[str, ...]:
        return tuple(arg.replace("{path}", path) for arg in self.space_usage)

    def mkfs_argv(self, device: str) -> tuple[str, ...]:
        return tuple(arg.replace("{device}", device) for arg in self.mkfs)

    def mount_argv(self, device: str, mountpoint: str) -> tuple[str, ...]:
        if self.mount_command:
            return tuple(
                a.replace("{device}", device).replace("{mountpoint}", mountpoint)
                for a in self.mount_command
            )
        opts = ("-o", ",".join(self.mount_options)) if self.mount_options else ()
        return ("mount", "-t", self.fstype, *opts, device, mountpoint)

    def fsck_argv(self, device: str) -> tuple[str, ...]:
        return tuple(arg.replace("{device}", device) for arg in self.fsck)

    def after_umount_argv(self, device: str) -> tuple[str, ...]:
        return tuple(arg.replace("{device}", device) for arg in self.after_umount)

    def sync_argv(self, mountpoint: str) -> tuple[str, ...]:
        """The command that ends a writing task's timed region: syncfs(2), or sync(2)."""
        return ("sync", "-f", mountpoint) if self.syncfs else ("sync",)

    def tar_extract_flags(self) -> tuple[str, ...]:
        """What tar needs to extract here: without Unix ownership, chown/chmod would fail."""
        return () if self.unix_ownership else ("--no-same-owner", "--no-same-permissions")

    def to_dict(self) -> dict[str, object]:
        from fsarena.guest.kernels import GUESTS

        label = GUESTS[self.guest].label if self.driver == "guest" else None
        return {
            **asdict(self),
            "group": self.group,
            "reference": self.reference,
            "guest_label": label,
        }


# The kernel asks for crc32c when mounting ext4 (and ext2/ext3 through it); a
# guest kernel without kmod cannot load it on demand, so it is loaded first.
EXT4_MODULES = ("crc32c_generic", "ext4")

E2FSCK = ("e2fsck", "-f", "-n", "{device}")
# Free extents and free blocks of ext2/3/4 (e2freefrag) and xfs (xfs_db's freesp summary).
E2FREEFRAG = ("e2freefrag", "{device}")
E2FREEFRAG_PATTERNS = (
    ("free_extents", r"Num\. free extent:\s*(\d+)"),
    ("free_blocks", r"Free blocks:\s*(\d+)"),
)
XFS_FREESP = ("xfs_db", "-r", "-c", "freesp -s", "{device}")
XFS_FREESP_PATTERNS = (
    ("free_extents", r"total free extents\s+(\d+)"),
    ("free_blocks", r"total free blocks\s+(\d+)"),
)
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
            freespace=E2FREEFRAG,
            freespace_patterns=E2FREEFRAG_PATTERNS,
            guest_modules=EXT4_MODULES,  # Debian's kernel mounts ext2 with the ext4 driver
        ),
        FilesystemProfile(
            "ext3",
            "ext3",
            ("mkfs.ext3", "-F", "-q", "{device}"),
            packages=("e2fsprogs",),
            fsck=E2FSCK,
            freespace=E2FREEFRAG,
            freespace_patterns=E2FREEFRAG_PATTERNS,
            guest_modules=EXT4_MODULES,  # guest kernels mount ext3 with the ext4 driver
        ),
        FilesystemProfile(
            "ext4",
            "ext4",
            EXT4_MKFS,
            packages=("e2fsprogs",),
            fsck=E2FSCK,
            freespace=E2FREEFRAG,
            freespace_patterns=E2FREEFRAG_PATTERNS,
            guest_modules=EXT4_MODULES,
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
            guest_modules=("crc32c_generic", "xfs"),
            min_size_bytes=300 * MIB,  # xfsprogs >= 5.19 refuses smaller filesystems
            fsck=("xfs_repair", "-n", "{device}"),
            freespace=XFS_FREESP,
            freespace_patterns=XFS_FREESP_PATTERNS,
        ),
        FilesystemProfile(
            "btrfs",
            "btrfs",
            ("mkfs.btrfs", "-f", "-q", "{device}"),
            packages=("btrfs-progs",),
            guest_modules=("crc32c_generic", "btrfs"),
            min_size_bytes=128 * MIB,
            fsck=("btrfs", "check", "--readonly", "{device}"),
            after_umount=("btrfs", "device", "scan", "--forget", "{device}"),
            compress_options=("compress", "compress-force"),
            # -b: bytes, not rounded units; -x: this filesystem only.
            space_usage=("compsize", "-b", "-x", "{path}"),
            space_usage_package="btrfs-compsize",
        ),
        FilesystemProfile("jfs", "jfs", ("mkfs.jfs", "-q", "{device}"), packages=("jfsutils",)),
        FilesystemProfile(
            "reiserfs",
            "reiserfs",
            ("mkfs.reiserfs", "-q", "-f", "{device}"),
            packages=("reiserfsprogs",),
            notes="ReiserFS 3.6; deprecated since Linux 5.18, removed in 6.13",
        ),
        FilesystemProfile(
            "vfat",
            "vfat",
            ("mkfs.vfat", "-F", "32", "{device}"),
            packages=("dosfstools",),
            # The in-kernel driver before the FUSE one: fusefat 0.1 is what almost
            # nobody mounts FAT with, and it ignores syncfs and lacks chmod/chown.
            drivers=("kernel", "kvm", "uml", "qemu", "fuse"),
            fuse=FuseDriver(
                ("fusefat", "-o", "rw+", "{device}", "{mountpoint}"), "fusefat", syncfs=False
            ),
            guest_modules=("vfat", "nls_cp437", "nls_iso8859-1"),  # default codepage, iocharset
            unix_ownership=False,
            overlay_upper_unsupported=(
                "FAT has no xattrs and no RENAME_WHITEOUT: overlayfs cannot use it as upper layer"
            ),
            notes="FAT32 (-F 32), as article B used",
        ),
        FilesystemProfile(
            "exfat",
            "exfat",
            ("mkfs.exfat", "{device}"),
            packages=("exfatprogs",),
            # exfat-fuse is what kernels before 5.7 needed; the in-kernel driver comes first.
            drivers=("kernel", "kvm", "qemu", "fuse"),
            fuse=FuseDriver(("mount.exfat-fuse", "{device}", "{mountpoint}"), "exfat-fuse"),
            guest_modules=("exfat", "nls_utf8"),  # its default iocharset
            unix_ownership=False,
            overlay_upper_unsupported=(
                "exFAT has no xattrs, no RENAME_WHITEOUT: overlayfs cannot use it as upper layer"
            ),
            notes="User-Mode Linux (6.1) has no exfat; Debian's 6.1 kernel under qemu has",
        ),
        FilesystemProfile(
            "ntfs",
            "ntfs3",
            ("mkfs.ntfs", "--quick", "--force", "{device}"),
            packages=("ntfs-3g",),
            # ntfs-3g is how most systems mount NTFS, and Debian's 6.1 kernel has no ntfs3.
            drivers=("kernel", "fuse", "kvm", "qemu"),
            fuse=FuseDriver(("ntfs-3g", "{device}", "{mountpoint}"), "ntfs-3g"),
            overlay_upper_unsupported=(
                "ntfs3 has no RENAME_WHITEOUT: overlayfs cannot use it as an upper layer"
            ),
            notes=(
                "--quick: without it mkfs.ntfs writes zeros over the whole device first, "
                "which times the device, not the filesystem (Windows formats quick by default); "
                "--force: the target is a whole device, not a partition. Kernel driver: ntfs3"
            ),
        ),
        FilesystemProfile(
            "f2fs",
            "f2fs",
            ("mkfs.f2fs", "-f", "-q", "{device}"),
            packages=("f2fs-tools",),
            guest_modules=("crc32_generic", "f2fs"),  # f2fs asks for crc32 when mounting
            compress_options=("compress_algorithm",),
        ),
        FilesystemProfile(
            "nilfs2",
            "nilfs2",
            ("mkfs.nilfs2", "-f", "-q", "{device}"),
            packages=("nilfs-tools",),
            min_size_bytes=128 * MIB,
        ),
        FilesystemProfile(
            "tmpfs",
            "tmpfs",
            ("true",),
            drivers=("kernel",),
            on_device=False,
            # Sized like the device, so capacity compares with the others.
            mount_command=(
                "sh",
                "-c",
                'exec mount -t tmpfs -o "size=$(blockdev --getsize64 "$0")" fsarena-tmpfs "$1"',
                "{device}",
                "{mountpoint}",
            ),
            notes=(
                "baseline: memory only, no device and nothing to make (mkfs times starting "
                "`true`); the fastest a filesystem can be on this machine"
            ),
        ),
        FilesystemProfile(
            "reiser4",
            "reiser4",
            ("mkfs.reiser4", "-y", "-f", "{device}"),
            packages=("reiser4progs",),
            drivers=(),
            never=(
                "Reiser4 was never merged into Linux: it exists only as out-of-tree kernel "
                "patches that neither this kernel nor any guest kernel fsarena boots carries"
            ),
        ),
    )
}

# The power-loss test's negative control, kept out of PROFILES (never a real choice):
# ext4 told not to issue cache flushes, so a power cut can lose what fsync
# promised. It must lose fsync'ed data in simulated power cuts; if it does not,
# the harness cannot see losses.
POWERLOSS_CONTROL = FilesystemProfile(
    "ext4-nobarrier",
    "ext4",
    EXT4_MKFS,
    mount_options=("nobarrier",),
    packages=("e2fsprogs",),
    fsck=E2FSCK,
    notes="negative control of the power-loss test: no cache flushes, fsync'ed data can be lost",
)


# The filesystem of the dataset source image, when the datasets do not fit in memory.
SOURCE_FILESYSTEM = "ext4"
