"""What the run loop's parts get of the run: its plan, executor, session, and a few acts on them.

The source (source.py), one sequence (sequence.py) and the aging phase
(aging_phase.py) are handed a RunScope, not the Runner: they save and record through
it, undo through it and tell the user through it, and the Runner keeps what is
its own (rounds, their order, when to stop). hyperfine hands each benchmark
what it needs the same way (`Benchmark::new(number, cmd, options, executor)`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.measure.executor import Executor
from fsarena.plan.model import Plan
from fsarena.run.faults import explain
from fsarena.run.sessions import Event, now
from fsarena.session.file import Run, RunStatus, Session, save


@dataclass(frozen=True)
class RunScope:
    plan: Plan
    executor: Executor
    session: Session
    session_path: Path
    source_kind: str  # "tmpfs" | "image": where the datasets live (run/cold.py reads it)
    say: Callable[[Event], None]

    def workdir(self, *parts: str) -> str:
        """A path under the plan's work directory."""
        return str(Path(self.plan.workdir, *parts))

    def save(self) -> None:
        save(self.session, self.session_path)

    def runs(self, warmup: bool = False) -> list[Run]:
        """Where a round's runs are kept: the warm-up round's apart, never a sample."""
        return self.session.warmup if warmup else self.session.runs

    def record(self, run: Run, warmup: bool = False) -> None:
        """Keep one run, save the session at once, and tell the user."""
        self.runs(warmup).append(run)
        self.save()
        self.say(Event("run", f"{run.filesystem} {run.task}: {run.status}", run))

    def record_all(self, label: str, repetition: int, why: str, status: RunStatus) -> None:
        """A sequence that could not start: its first task carries the reason, the rest follow."""
        code, reason = explain(why)
        # The reason once, on the first task; the others point at it, as the runs
        # after a failed task do ("not run: mkfs failed earlier").
        pointer = f"not run: {why.split(':')[0]} (see {self.plan.tasks[0]})"
        for i, name in enumerate(self.plan.tasks):
            error = reason if i == 0 else pointer
            self.record(
                Run(
                    filesystem=label,
                    task=name,
                    repetition=repetition,
                    started_at=now(),
                    status=status if i == 0 else "skipped",
                    error=error,
                    fault=code,
                )
            )

    def undo(self, what: str, action: Callable[[], None]) -> None:
        """Run one teardown step; a failure becomes a warning, and the other steps still run.

        What could not be undone stays in the ledger, for `fsarena cleanup`.
        """
        try:
            action()
        except (FsarenaError, OSError) as exc:
            self.session.warn(
                "teardown",
                f"could not {what}: {exc}; run `fsarena cleanup --workdir {self.plan.workdir}`",
            )
