"""What a session measured, told first and once: nothing or only part, why, and what fixes it.

Every report starts with `banner(session)` (JSON: `record`),
before any table: a session that measured nothing must not read like a result,
and a reason shared by 26 runs is one reason. Counted from the runs themselves,
so sessions saved before "partial" existed (their status says "complete") are
told the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fsarena.errors import FIX_MARK
from fsarena.measure.room import room_needed_bytes
from fsarena.report.document import Banner
from fsarena.session.file import Run, Session

MIB = 1 << 20


@dataclass(frozen=True)
class Cause:
    """One distinct reason, and the runs that were not measured because of it."""

    task: str  # the task that failed (or could not start)
    status: str  # failed | skipped (the sequence never started)
    reason: str  # the first line of its error
    fault: str  # its code (faults.py), "" if none was recorded
    runs: int
    filesystems: tuple[str, ...]

    def text(self) -> str:
        where = ", ".join(self.filesystems)
        what = "failed" if self.status == "failed" else "did not run"
        return f"{self.task} {what} on {where} ({self.runs} runs not measured): {self.reason}"


@dataclass(frozen=True)
class Outcome:
    status: str  # complete | partial | failed | interrupted | running
    measured: int  # valid runs: what the tables and verdicts rest on
    planned: int
    causes: tuple[Cause, ...]
    stopped: tuple[str, ...]  # why the run ended early (its "stopped" warnings)
    fixes: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def headline(self) -> str:
        counted = f"{self.measured} of {self.planned} runs measured"
        if self.measured == 0:
            return (
                f"NOTHING WAS MEASURED ({counted}): no table, verdict or recommendation "
                "can be drawn from this session."
            )
        if self.status == "interrupted":
            return (
                f"INTERRUPTED ({counted}): tables and verdicts rest on those alone; "
                "continue it with `fsarena run --resume SESSION.json`."
            )
        if self.status == "running":
            return (
                f"NOT FINISHED ({counted}): the run was killed or is still going; "
                "tables and verdicts rest on those alone."
            )
        return f"ONLY PART WAS MEASURED ({counted}): tables and verdicts rest on those alone."

    def why(self) -> list[str]:
        return [*self.stopped, *(c.text() for c in self.causes)]


def status_of(session: Session) -> str:
    """The session's status, recounted for finished sessions saved before "partial" existed."""
    return session.settled() if session.status == "complete" else session.status


def outcome(session: Session) -> Outcome:
    planned = _planned(session)
    causes = _causes(session)
    status = status_of(session)
    # Why it ended early, if it did: a resumed session that went on has its old stop behind it.
    early = status in ("interrupted", "failed", "running")
    stopped = tuple(w.message for w in session.warnings if w.code == "stopped" and early)
    return Outcome(
        status,
        len(session.ok_runs()),
        max(planned, len(session.runs)),
        causes,
        stopped,
        tuple(_fixes(session, causes)),
    )


def banner(session: Session) -> Banner | None:
    """The block every report starts with; None when everything planned was measured."""
    told = outcome(session)
    return None if told.complete else Banner(told.headline(), tuple(told.why()), told.fixes)


def record(session: Session) -> dict[str, Any]:
    """The same, as data for the JSON summary."""
    told = outcome(session)
    return {
        "status": told.status,
        "measured_runs": told.measured,
        "planned_runs": told.planned,
        "headline": "" if told.complete else told.headline(),
        "stopped": list(told.stopped),
        "causes": [
            {
                "task": c.task,
                "reason": c.reason,
                "fault": c.fault,
                "runs": c.runs,
                "filesystems": list(c.filesystems),
            }
            for c in told.causes
        ],
        "fixes": list(told.fixes),
    }


def _planned(session: Session) -> int:
    plan = session.plan
    reps = max(len(session.order), plan.repetitions or 0)
    return len(plan.filesystems) * len(plan.tasks) * reps


def _causes(session: Session) -> tuple[Cause, ...]:
    """Distinct reasons, each with the runs of the sequences it stopped."""
    sequences: dict[tuple[str, int], list[Run]] = {}
    for run in session.runs:
        sequences.setdefault((run.filesystem, run.repetition), []).append(run)
    counted: dict[tuple[str, str, str], tuple[str, int, list[str]]] = {}
    for (fs, _), runs in sequences.items():
        lost = [r for r in runs if r.status in ("failed", "skipped") and not r.not_applicable]
        if not lost:
            continue
        first = next((r for r in lost if r.status == "failed"), lost[0])
        reason = (first.error.strip().splitlines() or ["no reason recorded"])[0]
        key = (first.task, first.status, reason)
        fault, n, where = counted.get(key, (first.fault, 0, []))
        counted[key] = (fault, n + len(lost), [*where, fs])
    return tuple(
        Cause(task, status, reason, fault, n, tuple(dict.fromkeys(where)))
        for (task, status, reason), (fault, n, where) in counted.items()
    )


def _fixes(session: Session, causes: tuple[Cause, ...]) -> list[str]:
    """One instruction per kind of cause: the option to change, or the command that says how."""
    # Suite variants with a base of their own (a built-in's name maps to an empty table).
    declared = session.plan.variants
    variants = {name for name, v in declared.items() if isinstance(v, dict) and v.get("base")}
    fixes: list[str] = []
    own: dict[str, list[str]] = {}  # a suite variant's mkfs or mount failed: its options
    check: list[str] = []
    for cause in causes:
        if FIX_MARK in cause.reason:  # a host fault (tasks.base.HostFault): its own fix, first
            fixes.insert(0, cause.reason.split(FIX_MARK, 1)[1])
            continue
        if cause.fault == "workdir":  # the host's work directory, not the target, was full
            fixes.append(
                f"make room in the work directory {session.plan.workdir or '(--workdir)'}: "
                "its filesystem was full (or read-only), not the test filesystem"
            )
            continue
        if cause.fault in ("enospc", "timeout"):
            fixes.append(_bigger(session, cause.fault))
            continue
        others = []
        for fs in cause.filesystems:  # a suite variant's own options come first
            if fs.split("@")[0] in variants and cause.task in ("mkfs", "mount"):
                own.setdefault(cause.task, []).append(f"[filesystems.{fs.split('@')[0]}]")
            else:
                others.append(fs)
        if not others:
            continue
        if cause.fault in OWN_FAULTS:  # nothing `fsarena check` looks at would change it
            fixes.append(OWN_FAULTS[cause.fault].format(task=cause.task))
        else:
            check.extend(others)
    for task, tables in own.items():
        fixes.append(f"correct {task}_options of {', '.join(dict.fromkeys(tables))} in the suite")
    if check:
        names = ",".join(dict.fromkeys(check))
        fixes.append(f"`fsarena check --fs {names}` says what is missing and how to add it")
    if session.status == "interrupted" or (session.status == "failed" and _stopped(session)):
        fixes.append("continue with `fsarena run --resume SESSION.json` once the cause is fixed")
    return list(dict.fromkeys(fixes))


# Faults of the task's own doing (run/faults.py codes): what to do instead of `fsarena check`.
OWN_FAULTS = {
    "exit": "{task}'s command failed on its own (its message is above): run it by hand "
    "on a filesystem of that type to see why",
    "verify": "{task} ran but its result was wrong (the check that failed is above)",
    "umount": "a process kept the filesystem busy at unmount (a task's background "
    "process?); `fuser -vm MOUNTPOINT` names it while a run is going",
}


def _stopped(session: Session) -> bool:
    return any(w.code == "stopped" for w in session.warnings)


def _bigger(session: Session, fault: str) -> str:
    """Run again with room or time enough: twice what this session had."""
    if fault == "timeout":
        timeout = float(session.plan.task_timeout_s or 3600)
        return f"run again with --task-timeout {2 * timeout:g} (or a smaller --scale)"
    sizes = [p.image_size_bytes for p in session.profiles_as_run.values()]
    had = max(sizes, default=0)
    data = [(d.total_bytes, d.files or 1) for d in session.datasets.values()]
    need = room_needed_bytes(data) if data else 0
    if not had:
        return "run again with a bigger --image-size (or a smaller --scale)"
    if need > had:  # what the datasets need, as the plan sizes images (measure/room.py)
        return (
            f"run again with --image-size {-(-need // MIB)}M, the room its datasets need "
            f"({had // MIB}M was too small), or a smaller --scale"
        )
    return (
        f"run again with a bigger --image-size than {had // MIB}M, which held the datasets' "
        f"{need // MIB}M: the task wrote more than its data (twice, {2 * had // MIB}M, is a "
        "guess), or a smaller --scale"
    )
