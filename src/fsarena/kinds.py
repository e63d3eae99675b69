"""The kinds of work: every task belongs to one, and the verdicts are given per kind.

One table, in the order the reports give their verdicts; a leaf (it imports
nothing of fsarena), so every package may read it, as it may read errors.py.
A task names its kind (Task.kind); a test checks that every task's kind is here.
"""

from __future__ import annotations

# kind -> its title in reports, in report order.
KINDS: dict[str, str] = {
    "lifecycle": "filesystem lifecycle (mkfs, mount, umount)",
    "large_files": "large files",
    "file_trees": "file trees",
    "listing_search": "listing and search",
    "small_files": "small files",
    "archives": "archives (compress, decompress)",
    "space": "space efficiency",
    "development": "development (git)",
    "packages_containers": "packages and containers",
    "backups": "backups (rsync)",
    "your_workload": "your workload",  # `fsarena run --command`: the user's own tasks
    # `fsarena run --replay TRACE`: a captured service replayed (tasks/replay.py), by the
    # question each timing model answers.
    "replay_capacity": "your service replayed (capacity)",
    "replay_paced": "your service replayed at its pace (latency)",
    # Not a task's kind: the CPU cost of every timed task but the archives' (a verdict
    # of its own in analysis/kinds.py, where the compressor would set the pace).
    "cpu": "CPU cost",
    "synthetic": "synthetic benchmarks",
    "safety": "safety (power loss)",
    "databases": "databases",
    "small_synced_files": "small synced files",
    "file_serving": "file serving",
    "random_io": "random I/O",
    "aged_reads": "reads of an aged tree (--age)",
    # Shown beside the honest figure, never a verdict (dd_write_unsynced: the page cache).
    "demonstration": "page-cache demonstrations (never a verdict)",
    "layout": "on-disk layout (--age)",
}
