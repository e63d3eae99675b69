"""The power-loss test's stored results, as plain data, and their statistics, computed when read.

A `powerloss` run (task kind "safety") keeps:
- Run.values: per-filesystem figures for the normal tables (VALUE_METRICS);
- Run.details: a PowerlossDetails (model_dump), the raw outcome of every
  crash state of every workload, from which everything is recomputed.
This module imports nothing but pydantic and the standard library, so any
report (text, markdown, HTML, verdicts) can read it.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

UNSYNCED_OUTCOMES = ("intact", "old", "empty", "zeros", "partial", "missing", "unreadable")


class ViolationRecord(BaseModel):
    """A broken promise: fsync'ed data or a synced name lost, or a durable deletion undone."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    kind: Literal["lost", "resurrected"]
    detail: str = ""


class StateOutcome(BaseModel):
    """One simulated power cut: what was on the medium, and what mount, oracle and fsck found."""

    model_config = ConfigDict(extra="forbid")

    state: str  # e.g. "i12-subset-3of7": interval, kind, writes of the interval kept
    kind: Literal["flush", "prefix", "subset", "final"]
    interval: int  # flushes before the cut
    writes_durable: int  # writes before the interval's opening flush (all on the medium)
    writes_kept: int  # of the interval's writes, those on the medium
    writes_dropped: int  # of the interval's writes, those lost with the cache
    ops_returned: int  # workload operations that had returned before the cut
    mounted: bool
    mount_ms: float | None = None  # recovery mount, including fork and exec of mount
    mount_error: str = ""
    fsck_clean: bool
    fsck_exit: int
    fsck_ms: float
    fsck_detail: str = ""
    violations: list[ViolationRecord] = Field(default_factory=list)
    unsynced: dict[str, str] = Field(default_factory=dict)  # watched path -> UNSYNCED_OUTCOMES
    saved_image: str = ""  # where the state's image was kept for inspection

    @property
    def lost(self) -> list[str]:
        return [v.path for v in self.violations if v.kind == "lost"]


class LogFacts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    records: int
    writes: int
    write_bytes: int
    flushes: int
    marks: int
    discards: int


class WorkloadResult(BaseModel):
    """One workload on one filesystem: the recording, its self-check and every state tested."""

    model_config = ConfigDict(extra="forbid")

    filesystem: str
    workload: str
    control: bool = False  # the negative control (must lose data)
    status: Literal["ok", "invalid", "failed"] = "ok"
    error: str = ""
    seed: int
    states_cap: int
    image_bytes: int = 0
    log: LogFacts | None = None
    replay_identical: bool | None = None
    record_s: float = 0.0
    check_s: float = 0.0
    states_generated: int = 0
    states_unique: int = 0
    clean_mount_ms: list[float] = Field(default_factory=list)
    states: list[StateOutcome] = Field(default_factory=list)


class PowerlossDetails(BaseModel):
    """Run.details of a powerloss run: one filesystem, every workload."""

    model_config = ConfigDict(extra="forbid")

    filesystem: str
    seed: int
    states_cap: int
    workloads: list[WorkloadResult] = Field(default_factory=list)
    control: dict[str, float] = Field(default_factory=dict)  # the control's figures, for proof
    control_result: WorkloadResult | None = None  # in the run that ran the control (suites)

    def all_results(self) -> list[WorkloadResult]:
        return [*([self.control_result] if self.control_result else []), *self.workloads]


def parse_details(details: dict[str, Any]) -> PowerlossDetails | None:
    """The powerloss details of a run, or None when the run holds none."""
    if not details or "workloads" not in details:
        return None
    return PowerlossDetails.model_validate(details)


# ---------------------------------------------------------------- statistics


@dataclass(frozen=True)
class WorkloadStats:
    states: int
    mounted: int
    fsck_clean: int
    states_losing_data: int
    files_lost: tuple[str, ...]  # distinct paths lost in at least one state
    states_resurrecting: int
    mount_ms_median: float | None
    mount_ms_max: float | None
    clean_mount_ms_median: float | None
    fsck_ms_median: float | None
    unsynced: dict[str, Counter[str]] = field(default_factory=dict)  # path -> outcome counts

    @property
    def mounted_pct(self) -> float:
        return 100.0 * self.mounted / self.states if self.states else 0.0

    @property
    def fsck_clean_pct(self) -> float:
        return 100.0 * self.fsck_clean / self.states if self.states else 0.0


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(result: WorkloadResult) -> WorkloadStats:
    states = result.states
    mount_ms = [s.mount_ms for s in states if s.mounted and s.mount_ms is not None]
    unsynced: dict[str, Counter[str]] = {}
    for s in states:
        for path, outcome in s.unsynced.items():
            unsynced.setdefault(path, Counter())[outcome] += 1
    return WorkloadStats(
        states=len(states),
        mounted=sum(s.mounted for s in states),
        fsck_clean=sum(s.fsck_clean for s in states),
        states_losing_data=sum(bool(s.lost) for s in states),
        files_lost=tuple(sorted({p for s in states for p in s.lost})),
        states_resurrecting=sum(any(v.kind == "resurrected" for v in s.violations) for s in states),
        mount_ms_median=_median(mount_ms),
        mount_ms_max=max(mount_ms) if mount_ms else None,
        clean_mount_ms_median=_median(result.clean_mount_ms),
        fsck_ms_median=_median([s.fsck_ms for s in states]),
        unsynced=unsynced,
    )


# The per-filesystem figures a powerloss run stores in Run.values (registered in METRICS).
VALUE_METRICS = (
    "crash_states",
    "crash_mounted_pct",
    "crash_fsck_clean_pct",
    "crash_states_losing_data",
    "crash_files_lost",
    "crash_recovery_mount_ms",
    "crash_clean_mount_ms",
    "crash_fsck_ms",
)


def filesystem_values(results: list[WorkloadResult]) -> dict[str, float]:
    """Run.values of one filesystem over its valid workloads (medians over all their states)."""
    valid = [r for r in results if r.status == "ok"]
    states = [s for r in valid for s in r.states]
    if not states:
        return {}
    mount_ms = [s.mount_ms for s in states if s.mounted and s.mount_ms is not None]
    clean = [ms for r in valid for ms in r.clean_mount_ms]
    values = {
        "crash_states": float(len(states)),
        "crash_mounted_pct": 100.0 * sum(s.mounted for s in states) / len(states),
        "crash_fsck_clean_pct": 100.0 * sum(s.fsck_clean for s in states) / len(states),
        "crash_states_losing_data": float(sum(bool(s.lost) for s in states)),
        "crash_files_lost": float(sum(len({p for s in r.states for p in s.lost}) for r in valid)),
        "crash_fsck_ms": float(statistics.median(s.fsck_ms for s in states)),
    }
    if mount_ms:
        values["crash_recovery_mount_ms"] = float(statistics.median(mount_ms))
    if clean:
        values["crash_clean_mount_ms"] = float(statistics.median(clean))
    return values
