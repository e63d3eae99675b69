"""The layout a tree has on disk: FIEMAP extents per file, a static layout score, free space.

- Extents: the FS_IOC_FIEMAP ioctl (what filefrag uses), per file, synced first
  (FIEMAP_FLAG_SYNC) so delayed allocation has placed every block.
- Static layout score, after Conway et al.'s dynamic layout score (FAST '17):
  read the tree's files in traversal order (sorted walk, as `grep -r` and
  `tar` visit it) and count a discontiguity whenever an extent does not start
  where the previous one ended; score = 1 - discontiguities / 4 KiB blocks.
  1 is a tree laid out as one sequential run; a score near 0, a seek per block.
  Conway's dynamic score needs blktrace, which cannot trace here: with
  debugfs mounted, `blktrace -d /dev/loopN` sets the trace up (BLKTRACESETUP
  succeeds) but opening its relay files fails, "Thread 0 failed open
  /sys/kernel/debug/block/loop0/trace0: 1/Operation not permitted" (kernel
  6.18, checked 2026-11-24). fsarena reports the static score, computed from
  the same definition, and labels it static.
- Free-space fragmentation: the filesystem's own read-only tool, named with
  the regexes that read its output in the profile (e2freefrag, xfs_db freesp);
  filesystems without one report none.
"""

from __future__ import annotations

import fcntl
import os
import re
import struct
from dataclasses import dataclass

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.host.executor import TaskExecutor

FS_IOC_FIEMAP = 0xC020660B  # _IOWR('f', 11, struct fiemap)
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST = 0x1
_HEADER = struct.Struct("=QQLLLL")  # fm_start, fm_length, flags, mapped, extent_count, reserved
_EXTENT = struct.Struct("=QQQQQLLLL")  # logical, physical, length, 2 reserved, flags, 3 reserved
_BATCH = 256  # extents asked for per ioctl
BLOCK = 4096  # the unit of the layout score, as in Conway's blocks read


def extents(path: str) -> list[tuple[int, int]]:
    """(physical byte offset, length) of every extent of a file, in logical order."""
    found: list[tuple[int, int]] = []
    start = 0
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        while True:
            buf = bytearray(_HEADER.size + _BATCH * _EXTENT.size)
            _HEADER.pack_into(buf, 0, start, 2**64 - 1 - start, FIEMAP_FLAG_SYNC, 0, _BATCH, 0)
            fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
            mapped = _HEADER.unpack_from(buf, 0)[3]
            last = False
            for i in range(mapped):
                ext = _EXTENT.unpack_from(buf, _HEADER.size + i * _EXTENT.size)
                found.append((ext[1], ext[2]))
                start = ext[0] + ext[2]
                last = bool(ext[5] & FIEMAP_EXTENT_LAST)
            if mapped == 0 or last:
                return found
    finally:
        os.close(fd)


def traversal(root: str) -> list[str]:
    """Every file under root in the sorted depth-first order of `grep -r` / `tar`."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        out += [os.path.join(folder, f) for f in sorted(files)]
    return out


@dataclass(frozen=True)
class TreeLayout:
    files: int
    extents: int
    fragmented: int  # files of more than one extent
    blocks: int
    discontiguities: int

    def values(self) -> dict[str, float]:
        with_data = max(1, self.files)
        return {
            "extents_per_file": self.extents / with_data,
            "fragmented_files_pct": 100.0 * self.fragmented / with_data,
            "layout_score": 1.0 - self.discontiguities / self.blocks if self.blocks else 1.0,
        }


def tree_layout(root: str) -> TreeLayout:
    """Extents and the static layout score of the tree under root."""
    files = total = fragmented = blocks = jumps = 0
    previous_end: int | None = None
    for path in traversal(root):
        found = extents(path)
        files += 1
        total += len(found)
        fragmented += len(found) > 1
        for physical, length in found:
            blocks += max(1, -(-length // BLOCK))
            jumps += physical != previous_end
            previous_end = physical + length
    return TreeLayout(files, total, fragmented, blocks, jumps)


def free_space(
    profile: FilesystemProfile, executor: TaskExecutor, device: str, block_bytes: int
) -> dict[str, float]:
    """Free extents and their mean size from the filesystem's own tool; {} when it has none."""
    if not profile.freespace:
        return {}
    argv = [a.replace("{device}", device) for a in profile.freespace]
    text = executor.output(argv)
    values: dict[str, float] = {}
    for name, pattern in profile.freespace_patterns:
        match = re.search(pattern, text)
        if match is None:
            raise FsarenaError(
                f"{argv[0]} printed no {name} (pattern {pattern!r}); is {argv[0]} too new or old?"
            )
        values[name] = float(match[1])
    extents_ = values.get("free_extents", 0.0)
    if extents_ and "free_blocks" in values:
        values["free_extent_mean_bytes"] = values["free_blocks"] * block_bytes / extents_
    values.pop("free_blocks", None)
    return values
