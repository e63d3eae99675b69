"""The dataset source, the articles' "second disk": a tmpfs when memory allows, else a loop image.

Reading the datasets must not touch the device under test. A tmpfs costs no
disk I/O at all, so copy-in tasks measure the test filesystem's write path
only; it is used when the datasets take at most 40 % of the available memory.
Otherwise the datasets live on their own ext4 loop image, which shares the
host's disk with the test images (the report says which source was used).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES, SOURCE_FILESYSTEM
from fsarena.host.executor import Executor

MIB = 1 << 20
TMPFS_NAME = "fsarena-source"  # the tmpfs's source name: with its mount point, proof it is ours
TMPFS_SHARE_OF_AVAILABLE = 0.4


def mem_available_bytes(meminfo: Path = Path("/proc/meminfo")) -> int:
    for line in meminfo.read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def choose_source(requested: str, data_bytes: int, available_bytes: int) -> str:
    """'tmpfs' or 'image', from the user's choice ('auto', 'tmpfs', 'image') and memory."""
    fits = data_bytes <= TMPFS_SHARE_OF_AVAILABLE * available_bytes
    if requested == "tmpfs" and not fits:
        raise FsarenaError(
            f"the datasets ({data_bytes // MIB} MiB) do not fit in a tmpfs within 40 % of the "
            f"available memory ({available_bytes // MIB} MiB); "
            "use --source image or a smaller --scale"
        )
    if requested == "auto":
        return "tmpfs" if fits else "image"
    return requested


def source_size_bytes(data_bytes: int, files: int = 0) -> int:
    """A source big enough for the datasets: room for file-system overhead and per-file slack."""
    return int(data_bytes * 1.1) + files * 4096 + 256 * MIB


@dataclass
class Source:
    """A mounted source filesystem holding the datasets."""

    kind: str  # "tmpfs" | "image"
    mountpoint: str
    size_bytes: int
    image: str = ""
    device: str | None = None
    mounted: bool = field(default=False)
    created: bool = field(default=False)  # the image, by this run (never an earlier run's)

    def setup(self, executor: Executor) -> None:
        executor.make_dir(self.mountpoint)
        if self.kind == "tmpfs":
            opts = f"size={self.size_bytes},mode=0755"
            executor.track("mount", self.mountpoint, TMPFS_NAME)
            executor.call(["mount", "-t", "tmpfs", "-o", opts, TMPFS_NAME, self.mountpoint])
        else:
            executor.create_image(self.image, self.size_bytes)
            self.created = True
            self.device = executor.attach_loop(self.image)
            profile = PROFILES[SOURCE_FILESYSTEM]
            executor.call(profile.mkfs_argv(self.device))
            executor.track("mount", self.mountpoint, self.device)
            executor.call(profile.mount_argv(self.device, self.mountpoint))
        self.mounted = True

    def teardown(self, executor: Executor) -> None:
        """Undo only what setup made: an image that was there before is not this run's."""
        # Mounted, or a stop landed once the mount was made and before `mounted` was set
        # (the run refused to start over a mount not its own there).
        if self.mounted or executor.is_mounted(self.mountpoint):
            executor.call(["umount", self.mountpoint])
            self.mounted = False
        executor.untrack("mount", self.mountpoint)
        if self.device is not None:
            executor.detach_loop(self.device)
            self.device = None
        if self.image and self.created:
            executor.remove_path(self.image)
            self.created = False

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "size_bytes": self.size_bytes}
