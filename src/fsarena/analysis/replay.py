"""The replay error: how faithful a replay was, and the resolution the answer must respect.

A replayed trace (tasks/replay.py) is measured against the capture itself on
the filesystem type and device class the trace was captured on: each such run
recorded replay_error_pct, the distance of its time inside file-system calls
from the capture's, |replay / capture - 1| (summed over threads, the calls a
replay repeats). The replay error of a task is the median of its runs' (n
runs on the capture's own filesystem), computed here from the raw runs, never
stored. Beside it, per call type, the replay's latency percentiles against the
capture's (the call type that took the capture most time is the one told).

The resolution floor: a difference between filesystems on a replay task that is
smaller than its replay error is within the replay's own error, so it is never
a win. `resolution_floor(session, task)` is that fraction (0.062 for 6.2 %);
None when the run did not measure it (no filesystem of the capture's type and
device class), in which case the report says the fidelity was not checked.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from fsarena.session.file import Run, Session
from fsarena.session.records import CapturedRecord

TRACE_DATASET = "trace"
ERROR_METRIC = "replay_error_pct"
FS_METRIC = "replay_fs_s"


@dataclass(frozen=True)
class CallError:
    """One call type's latency in the capture and (median over runs) in the replay, in µs."""

    call: str
    captured_p50_us: float
    replay_p50_us: float
    captured_p99_us: float
    replay_p99_us: float

    @staticmethod
    def off_pct(replayed: float, captured: float) -> float:
        return 100.0 * abs(replayed / captured - 1.0) if captured > 0 else float("nan")


@dataclass(frozen=True)
class ReplayError:
    """A replay task's error on the capture's own filesystem type and device class."""

    task: str
    error_pct: float  # median over the runs
    runs: int
    fstype: str
    device_class: str
    captured_fs_s: float
    replay_fs_s: float  # median over the same runs
    replay_fs_range: tuple[float, float]  # the fastest and the slowest of them: their spread
    top_call: CallError | None  # the call type the capture spent most time in


def captured(session: Session) -> CapturedRecord | None:
    """The capture's own figures, from the trace dataset's record (None: no trace replayed)."""
    record = session.datasets.get(TRACE_DATASET)
    return record.spec.captured if record is not None else None


def _matching(session: Session, task: str) -> list[Run]:
    return [r for r in session.ok_runs() if r.task == task and r.value(ERROR_METRIC) is not None]


def replay_error(session: Session, task: str) -> ReplayError | None:
    """The task's replay error, or None when no run measured it."""
    facts = captured(session)
    runs = _matching(session, task)
    if facts is None or not runs:
        return None
    errors = [v for r in runs if (v := r.value(ERROR_METRIC)) is not None]
    times = [v for r in runs if (v := r.value(FS_METRIC)) is not None]
    return ReplayError(
        task=task,
        error_pct=statistics.median(errors),
        runs=len(errors),
        fstype=facts.fstype,
        device_class=facts.device_class,
        captured_fs_s=float(facts.fs_call_s),
        replay_fs_s=statistics.median(times) if times else float("nan"),
        replay_fs_range=(min(times), max(times)) if times else (float("nan"), float("nan")),
        top_call=_top_call(facts, runs),
    )


def _top_call(facts: CapturedRecord, runs: list[Run]) -> CallError | None:
    if not facts.per_call:
        return None
    call, row = max(facts.per_call.items(), key=lambda kv: float(kv[1].get("total_s", 0.0)))
    p50, p99 = [], []
    for run in runs:
        mine = (run.details.get("replay") or {}).get("calls", {}).get(call)
        if mine and mine.get("count"):
            p50.append(mine["p50_ns"] / 1e3)
            p99.append(mine["p99_ns"] / 1e3)
    if not p50:
        return None
    return CallError(
        call,
        float(row.get("p50_us", 0.0)),
        statistics.median(p50),
        float(row.get("p99_us", 0.0)),
        statistics.median(p99),
    )


def replay_tasks(session: Session) -> list[str]:
    """The session's replay tasks (those whose runs hold a replay's details), in plan order."""
    kinds = {t for t, info in session.plan.task_info.items() if info.datasets == [TRACE_DATASET]}
    return [t for t in session.tasks() if t in kinds]


def resolution_floor(session: Session, task: str) -> float | None:
    """The smallest difference between filesystems a replay task can tell, as a fraction.

    The answer must call no difference on this task (or a kind it weighs in) a win
    below it; None: not measured (the report says the fidelity was not checked).
    """
    found = replay_error(session, task)
    return None if found is None else found.error_pct / 100.0


def resolution_floors(session: Session) -> dict[str, float]:
    """Every replay task's floor that was measured: task -> fraction."""
    return {
        t: floor
        for t in replay_tasks(session)
        if (floor := resolution_floor(session, t)) is not None
    }
