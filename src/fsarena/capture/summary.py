"""A capture's own figures, computed from its events: time in file-system calls, latencies, bytes.

These are what a replay is judged against (the replay error, analysis/replay.py):
the time the traced threads spent inside the replayable calls, summed, and per
call type the count and the latency percentiles (nearest rank on the measured
durations). A close the kernel made (at exit, exec or dup2 onto the descriptor)
was no call of the service's, and is not counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from fsarena.capture.calls import READS, REPLAYED, UNREPLAYABLE, WRITES

PERCENTILES = (("p50_us", 50.0), ("p99_us", 99.0), ("p999_us", 99.9))


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    """Nearest rank: the smallest value with at least pct % of the values at or below it."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return float(sorted_values[rank - 1])


def timed(event: list[Any]) -> bool:
    """A call the service made (not a close the kernel did for it) and a replay repeats."""
    name = event[4]
    if name not in REPLAYED:
        return False
    return not (name == "close" and len(event) > 9 and event[9])


def captured(events: Iterable[list[Any]]) -> dict[str, Any]:
    """Calls, time in them, per call type count and percentiles, bytes read and written."""
    durations: dict[str, list[int]] = {}
    read = written = 0
    for e in events:
        if not timed(e):
            continue
        durations.setdefault(e[4], []).append(e[1])
        if e[4] in READS and e[5] > 0:
            read += e[5]
        elif e[4] in WRITES and e[5] > 0:
            written += e[5]
    per_call = {}
    for name, values in sorted(durations.items()):
        values.sort()
        row: dict[str, float] = {"count": len(values), "total_s": round(sum(values) / 1e9, 9)}
        for key, pct in PERCENTILES:
            row[key] = round(percentile(values, pct) / 1e3, 3)
        per_call[name] = row
    total_ns = sum(sum(v) for v in durations.values())
    return {
        "calls": sum(len(v) for v in durations.values()),
        "fs_call_s": round(total_ns / 1e9, 9),
        "per_call": per_call,
        "bytes_read": read,
        "bytes_written": written,
    }


def unreplayable(counts: dict[str, int], traced_bytes: int) -> dict[str, Any]:
    """What the trace saw but a replay cannot repeat, and its share of the bytes moved.

    The bytes not in the trace: those in-kernel copies moved (their results) and the
    length of every file mapping (mmap'd I/O: the bytes the service touched through it
    are not seen; the mapping's length is the most it could have moved).
    """
    moved = sum(v for k, v in counts.items() if k.endswith("_bytes") and not k.startswith("msync"))
    total = traced_bytes + moved
    share = 100.0 * moved / total if total else 0.0
    return {**dict(sorted(counts.items())), "bytes": moved, "share_pct": round(share, 2)}


def names() -> tuple[str, ...]:
    """Every call type a trace may hold an event of (for docs and the replayer's table)."""
    return tuple(sorted(REPLAYED | UNREPLAYABLE))
