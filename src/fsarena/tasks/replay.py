"""Your service, replayed: a trace `fsarena capture` wrote, replayed on each fresh filesystem.

Untimed, the trace becomes the native replayer's program (capture/program.py)
and its initial tree is made under `replay/` on the test filesystem (every
directory, every file at its size filled with data of the captured
compressibility, every link), then synced; caches are dropped. Timed,
fsarena-replay (native/replay.c) reads back the program as setup parsed it (so
the parse of a long trace is not timed) and repeats the calls, one thread per traced
thread, each thread in its traced order, and a call on a path or file waits for
the calls of other threads on it that had returned before it started in the
trace (ROOT's resource ordering); the region ends with the filesystem's sync and
one device flush, as every writing task's does.

Two timing models, two tasks, two kinds of work, each answering its question:
- `replay` (kind replay_capacity), as fast as possible: how long the calls take
  when nothing waits but the filesystem and the calls' order. Capacity: the
  total time.
- `replay_paced` (kind replay_paced), at the traced pace: each thread keeps its
  traced think time between a call's return and its next call (less the
  tracer's own time in that gap: its probes' on every call of the thread since,
  replayed or not), then the time from the last call to the end of the traced
  processes (or of the capture, when it cut them off), so the replay
  lasts what the service took where the filesystem keeps up, and falls behind
  where it does not. Its time is comparable with running the service itself
  (`--command`); the latency of the calls (p50, p99, p99.9, per call type in the
  run's details) and how far behind the traced pace it ended are its figures.

Verified: at most 1 % of the calls may diverge (succeed where the traced call
failed, or fail where it succeeded); the count is kept either way. On the
filesystem type and device class the trace was captured on, the run records
its replay error: how far its time inside the calls is from the capture's
(analysis/replay.py turns the runs' errors into the resolution the answer must
respect).
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any, ClassVar

from fsarena.capture import facts
from fsarena.capture.dataset import TraceSpec
from fsarena.capture.program import Compiler
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command, Measurement
from fsarena.measure.native import native_tool
from fsarena.tasks.base import Check, Task, TaskContext

ROOT = "replay"
DIVERGED_MAX = 0.01  # the share of calls that may diverge before the replay is not the trace
INCOMPRESSIBLE = 1.0  # the data a replay writes when the capture sampled none


@functools.lru_cache(maxsize=2)
def _program(path: str, mtime_ns: int) -> str:
    del mtime_ns
    spec_trace = TraceSpec(path=path).trace
    return Compiler(spec_trace).compile()


def device_class_of(device: str) -> str:
    """The class of the test filesystem's device, as the capture names its own."""
    try:
        rdev = os.stat(device).st_rdev
    except OSError:
        return ""
    return facts.device_class(f"{os.major(rdev)}:{os.minor(rdev)}")


# Beside the program, `fsarena-replay setup` saves it as parsed, for the timed run to read
# back without parsing (native/replay.c).
LOADED = ".bin"


class _Replay(Task):
    # 2: a call's directory is looked up before its clock starts (native/replay.c), so
    # its latency no longer holds that lookup: not pooled with version 1's.
    # 3: paced, the think time leaves out the tracer's time on the calls not replayed and
    # before a thread's first call, and the tail ends at the traced processes' exit; each
    # on a filesystem made for it (Task.fresh); the timed run reads the program back as
    # setup parsed it instead of parsing it (0.06-0.1 s less per 120,000 calls).
    version = 3
    datasets = ("trace",)
    fresh = True  # the trace's initial tree on a filesystem nothing else has used
    writes = True
    timing: ClassVar[str]
    _result: dict[str, Any] | None = None

    def _files(self, ctx: TaskContext) -> tuple[str, str]:
        return f"{ctx.scratch}/{self.name}.prog", f"{ctx.scratch}/{self.name}.json"

    def _ratio(self, ctx: TaskContext) -> str:
        ratio = ctx.parameters(TraceSpec).trace.summary.compress_ratio
        return f"{ratio if ratio is not None else INCOMPRESSIBLE:.4f}"

    def prepare(self, ctx: TaskContext) -> None:
        spec = ctx.parameters(TraceSpec)
        program, result = self._files(ctx)
        text = _program(spec.path, os.stat(spec.path).st_mtime_ns)
        ctx.executor.write_file(program, text.encode())
        ctx.executor.remove_path(result)
        root = ctx.path(ROOT)
        ctx.executor.remove_path(root)
        ctx.executor.make_dir(root)
        ctx.executor.call((native_tool("replay"), "setup", program, root, self._ratio(ctx)))
        ctx.sync()
        self._result = None

    def commands(self, ctx: TaskContext) -> list[Command]:
        program, result = self._files(ctx)
        argv = (native_tool("replay"), "run", program, ctx.path(ROOT), self._ratio(ctx),
                self.timing, result)  # fmt: skip
        return [Command(argv)]

    def _read(self, ctx: TaskContext) -> dict[str, Any]:
        if self._result is None:
            self._result = json.loads(ctx.executor.read_text(self._files(ctx)[1]))
        return self._result

    def verify(self, ctx: TaskContext) -> list[Check]:
        try:
            result = self._read(ctx)
        except (OSError, ValueError, FsarenaError) as exc:
            return [Check("replay result read", False, str(exc))]
        ops, diverged = int(result["ops"]), int(result["diverged"])
        ok = diverged <= DIVERGED_MAX * max(1, ops)
        detail = f"{diverged:,} of {ops:,} calls diverged (at most {DIVERGED_MAX:.0%} may)"
        return [Check("replay followed the trace", ok, detail)]

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        r = self._read(ctx)
        values = {
            "replay_fs_s": r["fs_ns"] / 1e9,
            "replay_p50_us": r["p50_ns"] / 1e3,
            "replay_p99_us": r["p99_ns"] / 1e3,
            "replay_p999_us": r["p999_ns"] / 1e3,
            "replay_calls": float(r["ops"]),
            "replay_diverged": float(r["diverged"]),
        }
        if self.timing == "paced":
            values["replay_lag_s"] = r["lag_end_ns"] / 1e9
        if (error := self._error_pct(ctx, values["replay_fs_s"])) is not None:
            values["replay_error_pct"] = error
        return values

    def _error_pct(self, ctx: TaskContext, replay_fs_s: float) -> float | None:
        """The replay error, on the capture's own filesystem type and device class only."""
        s = ctx.parameters(TraceSpec).trace.summary
        if ctx.profile.driver != "kernel" or ctx.profile.fstype != s.fstype or s.fs_call_s <= 0:
            return None
        if device_class_of(ctx.device) != s.device_class:
            return None
        return 100.0 * abs(replay_fs_s / s.fs_call_s - 1.0)

    def details(self) -> dict[str, Any]:
        """Per call type: count, time and latency percentiles (ns), lag; the run keeps them."""
        if self._result is None:
            return {}
        r = self._result
        keep = ("mode", "threads", "lag_max_ns", "lag_end_ns", "diverged", "calls")
        return {"replay": {k: r[k] for k in keep if k in r}}

    def cleanup(self, ctx: TaskContext) -> None:
        program, result = self._files(ctx)
        for path in (program, program + LOADED, result):
            ctx.executor.remove_path(path)


_COLUMNS = (
    "wall_s",
    "replay_fs_s",
    "replay_p50_us",
    "replay_p99_us",
    "replay_p999_us",
    "replay_calls",
    "replay_diverged",
    "replay_error_pct",
    "cpu_pct",
    "device_write_bytes",
)


class ReplayCapacity(_Replay):
    """The captured calls replayed as fast as possible (capacity: the total time).

    Every thread issues its next call as soon as its previous one returned and the
    calls it waits for (same path or file, other threads, returned earlier in the
    trace) are done: no think time, so the time is the filesystem's and the order's.
    """

    name = "replay"
    kind = "replay_capacity"
    timing = "fast"
    columns: ClassVar[tuple[str, ...] | None] = _COLUMNS


class ReplayPaced(_Replay):
    """The captured calls replayed at the traced pace (latency: percentiles, the lag).

    Every thread keeps its traced think time between a call's return and its next
    call, and starts at its traced time: the replay lasts what the service took
    where the filesystem keeps up, longer where it does not (replay_lag_s: how far
    behind the traced pace it ended).
    """

    name = "replay_paced"
    kind = "replay_paced"
    timing = "paced"
    columns: ClassVar[tuple[str, ...] | None] = (*_COLUMNS[:5], "replay_lag_s", *_COLUMNS[5:])


TASKS = (ReplayCapacity, ReplayPaced)
