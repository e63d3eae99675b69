"""A trace as a dataset (`kind = "trace"`): what `fsarena run --replay TRACE` plans with.

`[datasets.trace] kind = "trace"  path = "/srv/db.fstrace.gz"` (or `--replay
TRACE`) names a trace `fsarena capture` wrote; the replay tasks (tasks/replay.py)
make its initial tree on each fresh filesystem and replay its calls. The trace
is read whole and checked when the plan is made, so a truncated or damaged one
stops the run before anything is made, in one line (capture/trace.py). Nothing
is copied to the source: the replay writes its own files. A trace is a recorded
workload: --scale does not shrink it.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from fsarena.capture import trace
from fsarena.datasets.spec import DatasetSpec, Layout, check_factor, require


@functools.lru_cache(maxsize=4)
def _read(path: str, size: int, mtime_ns: int) -> trace.Trace:
    """The trace, read once per version of the file (a plan asks many times)."""
    del size, mtime_ns  # the cache key: a rewritten file is read again
    return trace.read(Path(path))


def load(path: str) -> trace.Trace:
    st = os.stat(path)
    return _read(path, st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    del size, mtime_ns
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@dataclass(frozen=True, kw_only=True)
class TraceSpec(DatasetSpec):
    """A captured trace, replayed (see the module docstring)."""

    kind: ClassVar[str] = "trace"
    on_source: ClassVar[bool] = False
    proportional: ClassVar[bool] = False
    name: str = "trace"
    path: str
    seed: int = 0  # unused: the workload is the trace's

    def __post_init__(self) -> None:
        super().__post_init__()
        require(os.path.isabs(self.path), f"path must be absolute, got {self.path!r}")
        require(os.path.isfile(self.path), f"path {self.path!r} is not a trace file")
        load(self.path)  # checked whole now: FsarenaError naming what is wrong

    @property
    def trace(self) -> trace.Trace:
        return load(self.path)

    @property
    def total_bytes(self) -> int:
        """Room the replay needs: the initial tree and every byte the calls wrote (at most)."""
        summary = self.trace.summary
        return summary.tree_bytes + summary.written_bytes

    def to_dict(self) -> dict[str, object]:
        """The spec, and the trace file's SHA-256: which trace was replayed, in the session."""
        st = os.stat(self.path)
        s = self.trace.summary
        captured = {
            "fstype": s.fstype,
            "device_class": s.device_class,
            "duration_s": s.duration_s,
            "fs_call_s": s.fs_call_s,
            "calls": s.calls,
            "per_call": s.per_call,
            "unreplayable_share_pct": s.unreplayable_share_pct,
            "compress_ratio": s.compress_ratio,
        }
        return {
            **super().to_dict(),
            "sha256": _digest(self.path, st.st_size, st.st_mtime_ns),
            "captured": captured,
        }

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return self

    def plan(self) -> Layout:
        return Layout((), ())

    def description(self) -> str:
        s = self.trace.summary
        where = f"{s.fstype} ({s.device_class})" if s.fstype else "an unknown filesystem"
        names = "anonymised" if s.anonymised else "names kept"
        return (
            f"your trace {self.path}: {s.calls:,} calls over {s.duration_s:,.1f} s, captured on "
            f"{where}, {s.fs_call_s:.3f} s inside file-system calls; initial tree "
            f"{s.tree_bytes / 1e6:,.1f} MB; {s.unreplayable_share_pct:.1f} % of the bytes moved "
            f"not replayable; {names}"
        )

    def compressibility(self) -> str:
        ratio = self.trace.summary.compress_ratio
        if ratio is None:
            return "as captured: not sampled (no file read or written was left to sample)"
        return (
            f"as captured: sampled blocks compressed to {100 * ratio:.0f} % of their size (zlib); "
            "the replay writes data of that compressibility"
        )
