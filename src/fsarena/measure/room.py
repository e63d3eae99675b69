"""Room the datasets need on a test filesystem: the one formula images are sized by.

The plan sizes each loop image with it, and a report's advice after ENOSPC reads
it back from the session's datasets, so the size it suggests holds the data.
Two copies of the largest dataset (copy within), or one of each dataset with
per-file block slack, whichever is more; +30 % for metadata, +256 MiB.
"""

from __future__ import annotations

from collections.abc import Iterable

MIB = 1 << 20
SLACK_PER_FILE_BYTES = 2 * 8192  # a partly used block, and its metadata, per file


def room_needed_bytes(datasets: Iterable[tuple[int, int]]) -> int:
    """Bytes a test filesystem needs for datasets given as (total_bytes, files)."""
    sizes = list(datasets)
    largest = max((b for b, _ in sizes), default=0)
    together = sum(b for b, _ in sizes) + sum(n for _, n in sizes) * SLACK_PER_FILE_BYTES
    return int(max(2 * largest, together) * 1.3) + 256 * MIB
