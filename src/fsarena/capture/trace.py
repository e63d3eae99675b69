"""The trace file: one versioned, compressed record of a capture (format in docs/replay.md).

A trace is gzip-compressed JSON Lines:

- line 1, the header (an object): "format" = "fsarena-trace", "version", what was
  captured (target, duration, how it ended), the filesystems its paths were on
  (fstype, device class), the data's sampled compressibility, the captured calls'
  own figures (time in file-system calls, per call type count and latency
  percentiles), what could not be replayed, what was left out, /proc/PID/io;
- then the initial tree (["d", path], ["f", path, size], ["l", path, target]),
  the descriptors open at the start (["fd", oid, pid, fd, path, flags, pos]),
  and the events, in start order: [t_us, duration_ns, pid, tid, call, result,
  ...arguments] (capture/resolve.py writes them; docs/replay.md lists each call's);
- last, {"end": {"records": N}}: a trace without it, or with another count, was
  cut short, and is refused.

Reading checks all of it, so a truncated or damaged trace gives one line naming
what is wrong (FsarenaError) before a replay touches anything.
"""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError

FORMAT = "fsarena-trace"
# History of the format (keep one fixture per version in tests/fixtures/traces):
# 1 (issue 37): first version.
VERSION = 1
SUFFIX = ".fstrace.gz"
TREE_KINDS = ("d", "f", "l")
# Where an event holds paths, by call: its indices (a symlink's first is its target).
# Each path but a symlink's target is followed by how many of its trailing components
# the call looked up itself (-1: all, from the root).
PATH_FIELDS: dict[str, tuple[int, ...]] = {
    "open": (7,),
    "stat": (6,),
    "unlink": (6,),
    "rmdir": (6,),
    "mkdir": (6,),
    "rename": (6, 8),
    "link": (6, 8),
    "symlink": (6, 7),
    "truncate": (6,),
}


@dataclass
class Trace:
    """A trace in memory: its header, initial tree, descriptors open at the start, events."""

    header: dict[str, Any]
    tree: list[list[Any]] = field(default_factory=list)
    preopened: list[list[Any]] = field(default_factory=list)
    events: list[list[Any]] = field(default_factory=list)

    @property
    def summary(self) -> TraceSummary:
        return TraceSummary.of(self.header)


@dataclass(frozen=True)
class TraceSummary:
    """The header's figures a replay and a report read (defaults: not recorded)."""

    fstype: str = ""  # the filesystem most of the calls were on
    device_class: str = ""  # "loop", "rotational", "non-rotational", "virtual"
    duration_s: float = 0.0
    fs_call_s: float = 0.0  # time inside the replayable calls, summed over threads
    calls: int = 0
    per_call: dict[str, dict[str, float]] = field(default_factory=dict)
    compress_ratio: float | None = None  # compressed / original size of sampled blocks
    tree_bytes: int = 0
    written_bytes: int = 0
    unreplayable_share_pct: float = 0.0
    anonymised: bool = True

    @classmethod
    def of(cls, header: dict[str, Any]) -> TraceSummary:
        own = header.get("own_filesystem") or {}
        captured = header.get("captured") or {}
        unreplayable = header.get("unreplayable") or {}
        compress = header.get("compressibility") or {}
        return cls(
            fstype=str(own.get("fstype", "")),
            device_class=str(own.get("device_class", "")),
            duration_s=float(header.get("duration_s", 0.0)),
            fs_call_s=float(captured.get("fs_call_s", 0.0)),
            calls=int(captured.get("calls", 0)),
            per_call=dict(captured.get("per_call") or {}),
            compress_ratio=compress.get("ratio"),
            tree_bytes=int(header.get("tree_bytes", 0)),
            written_bytes=int(captured.get("bytes_written", 0)),
            unreplayable_share_pct=float(unreplayable.get("share_pct", 0.0)),
            anonymised=bool(header.get("anonymised", True)),
        )


def write(trace: Trace, path: Path) -> int:
    """Write the trace atomically (a new file, renamed into place); its size in bytes."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    records = [*trace.tree, *trace.preopened, *trace.events]
    header = {"format": FORMAT, "version": VERSION, **trace.header}
    try:
        with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6) as out:
            out.write(_line(header))
            for record in records:
                out.write(_line(record))
            out.write(_line({"end": {"records": len(records)}}))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path.stat().st_size


def _line(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False) + "\n"


def read(path: Path) -> Trace:
    """The whole trace, checked; FsarenaError naming the problem if it is not one."""
    lines = _lines(path)
    header = _header(path, next(lines, None))
    trace = Trace(header)
    count = 0
    for number, record in lines:
        if isinstance(record, dict):
            _end(path, number, record, count)
            return trace
        count += 1
        _place(path, number, record, trace)
    raise FsarenaError(
        f"{path}: the trace ends after {count} records without its end mark: it was cut short "
        "(a copy that did not finish, a full disk); capture it again or copy it whole"
    )


def read_header(path: Path) -> dict[str, Any]:
    """Only the header (for `fsarena list`-like uses); the rest is not checked."""
    return _header(path, next(_lines(path), None))


def _lines(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for number, text in enumerate(f, 1):
                try:
                    yield number, json.loads(text)
                except ValueError:
                    raise FsarenaError(
                        f"{path}: line {number} of the trace is not JSON: the file is damaged; "
                        "capture it again"
                    ) from None
    except FileNotFoundError:
        raise FsarenaError(
            f"trace {path} not found: give the file `fsarena capture -o` wrote"
        ) from None
    except IsADirectoryError:
        raise FsarenaError(f"trace {path} is a directory: give the trace file") from None
    except PermissionError:
        raise FsarenaError(f"cannot read trace {path}: permission denied") from None
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError) as exc:
        raise FsarenaError(
            f"{path}: not a complete fsarena trace ({_why(exc)}); capture it again or copy it whole"
        ) from None


def _why(exc: Exception) -> str:
    if isinstance(exc, EOFError):
        return "its compressed data ends early: the file was cut short"
    if isinstance(exc, gzip.BadGzipFile):
        return "not gzip-compressed"
    if isinstance(exc, UnicodeDecodeError):
        return "its text is not UTF-8"
    return f"its compressed data is damaged: {exc}"


def _header(path: Path, first: tuple[int, Any] | None) -> dict[str, Any]:
    if first is None:
        raise FsarenaError(f"{path}: an empty trace; capture it again")
    header = first[1]
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise FsarenaError(f"{path}: not an fsarena trace (no {FORMAT} header)")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION or version < 1:
        raise FsarenaError(
            f"{path}: trace format version {version!r}, this fsarena reads 1 to {VERSION}: "
            "replay it with the fsarena that captured it, or a newer one"
        )
    return header


def _end(path: Path, number: int, record: dict[str, Any], count: int) -> None:
    end = record.get("end")
    if not isinstance(end, dict) or end.get("records") != count:
        raise FsarenaError(
            f"{path}: line {number}: the end mark counts {end!r} records where the trace holds "
            f"{count}: the file is damaged; capture it again"
        )


def _place(path: Path, number: int, record: Any, trace: Trace) -> None:
    """A record into its list; FsarenaError for one of no known shape."""
    if isinstance(record, list) and record:
        head = record[0]
        if head in TREE_KINDS and len(record) >= 2 and isinstance(record[1], str):
            trace.tree.append(record)
            return
        if head == "fd" and len(record) == 7:
            trace.preopened.append(record)
            return
        if isinstance(head, int) and len(record) >= 6 and isinstance(record[4], str):
            trace.events.append(record)
            return
    raise FsarenaError(f"{path}: line {number} is no trace record ({str(record)[:60]}): damaged")
