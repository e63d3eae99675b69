"""The initial tree: what the traced calls found at the start, for a replay to make first.

From each path's first evidence (capture/resolve.py: Evidence): a path that
existed is a directory, a file of a size, or a symbolic link. Its type and size
come from the calls where they said (an open reads the inode's), else from its
state at the end of the capture when no call changed it; a file is at least as
long as the reads before any write reached. Every directory above a path that
existed, or above a path the calls made, existed too, unless the calls made it
(a mkdir) or moved it there (a rename): the replay does that itself. What
cannot be known (a file truncated on open: its earlier size) is recorded as the
calls left it, and said in docs/replay.md. A path a call changed without saying
what was there before (a rename's target) is left to the calls: nothing later can
tell its start (a stat after the rename sees what the rename put there).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from typing import Any

from fsarena.capture.facts import Found
from fsarena.capture.resolve import Evidence


def _ancestors(path: str) -> list[str]:
    found = []
    parent = posixpath.dirname(path)
    while parent not in ("/", ""):
        found.append(parent)
        parent = posixpath.dirname(parent)
    return found


def _entry(path: str, ev: Evidence, look: Callable[[str], Found]) -> list[Any] | None:
    kind, size, target = ev.kind, ev.size_bytes, ""
    if not (kind and size >= 0) and not ev.modified:  # as it is now, as it was then
        now = look(path)
        kind, size, target = kind or now.kind, now.size_bytes, now.target
    kind = kind or "f"
    if kind == "d":
        return ["d", path]
    if kind == "l":
        return ["l", path, target] if target else None
    return ["f", path, max(size, ev.read_end, 0)]


def initial_tree(
    evidence: Mapping[str, Evidence], look: Callable[[str], Found], root: str = "/"
) -> list[list[Any]]:
    """Tree records, parents first: ["d", path], ["f", path, size], ["l", path, target]."""
    entries: dict[str, list[Any]] = {}
    for path, ev in evidence.items():
        if ev.existed:
            entry = _entry(path, ev, look)
            if entry is not None:
                entries[path] = entry
    # Above what existed, and above what the calls made (an open that created, a mkdir),
    # but not a directory the calls made or moved there themselves: the replay makes it.
    made = [p for p, ev in evidence.items() if ev.existed or (ev.existed is False and ev.modified)]
    needed = {a for p in made for a in _ancestors(p)}
    for directory in needed:
        seen = evidence.get(directory)
        if seen is not None and seen.modified and not seen.existed:
            continue
        if directory != root and entries.get(directory, ["d"])[0] == "d":
            entries[directory] = ["d", directory]
    return [entries[p] for p in sorted(entries, key=lambda p: (p.count("/"), p))]


def tree_bytes(tree: list[list[Any]]) -> int:
    return sum(int(e[2]) for e in tree if e[0] == "f")
