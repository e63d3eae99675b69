"""What the run loop's parts get of the run: its plan, executor, session, and a few acts on them.

The source (source.py), one sequence (sequence.py) and the aging phase
(aging_phase.py) are handed a RunScope, not the Runner: they save and record through
it, undo through it and tell the user through it, and the Runner keeps what is
its own (rounds, their order, when to stop). hyperfine hands each benchmark
what it needs the same way (`Benchmark::new(number, cmd, options, executor)`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from fsarena import interrupt
from fsarena.datasets import making
from fsarena.datasets.making import Made
from fsarena.datasets.manifest import Manifest
from fsarena.datasets.spec import DatasetSpec
from fsarena.errors import FsarenaError
from fsarena.host.executor import Executor
from fsarena.host.ledger import WorkdirUnwritable, workdir_trouble
from fsarena.interrupt import whole
from fsarena.plan.model import Plan
from fsarena.run.events import Event, now
from fsarena.run.faults import explain, unexplained
from fsarena.run.owntime import OwnTime
from fsarena.session.file import Run, RunStatus, Session, save
from fsarena.session.journal import Journal


class SessionUnsaved(BaseException):
    """The session file could not be written (its directory full or read-only).

    A BaseException, as KeyboardInterrupt is: a run that cannot save what it measures
    must stop the way Ctrl-C stops it, through every teardown, and no task's error
    handler may take it for that task's own failure. The file keeps the last save.
    """

    def __init__(self, path: Path, error: OSError, kept_runs: int) -> None:
        super().__init__(f"{error.strerror or error} writing {path}")
        self.path = path
        self.error = error
        self.kept_runs = kept_runs  # runs in the file as last saved


@dataclass
class Saves:
    """How the session's saves went: runs saved so far, the first that failed, the journal."""

    saved_runs: int = 0
    unsaved: SessionUnsaved | None = None
    journal: Journal[Session] | None = None  # once saved (session/journal.py)


class DatasetMaker(Protocol):
    """Who makes the run's datasets: they make themselves on the host (SelfMade); tests give
    a fake that records and writes nothing (tests/fakes.py), as they fake the executor."""

    def resolve(self, spec: DatasetSpec, cache_dir: str) -> tuple[DatasetSpec, str]:
        """The spec to make (e.g. the real kernel tree, fetched) and where it comes from."""

    def materialize(
        self, spec: DatasetSpec, dest: str, cache_dir: str, made: Mapping[str, Made]
    ) -> Manifest:
        """Make the dataset under dest/spec.name and return its manifest."""


class SelfMade:
    """Datasets make themselves, here on the host (fsarena.datasets.making)."""

    def resolve(self, spec: DatasetSpec, cache_dir: str) -> tuple[DatasetSpec, str]:
        return making.resolve(spec, Path(cache_dir))

    def materialize(
        self, spec: DatasetSpec, dest: str, cache_dir: str, made: Mapping[str, Made]
    ) -> Manifest:
        return making.materialize(spec, Path(dest), Path(cache_dir), made)


@dataclass(frozen=True)
class RunScope:
    plan: Plan
    executor: Executor
    session: Session
    session_path: Path
    source_kind: str  # "tmpfs" | "image": where the datasets live (run/cold.py reads it)
    say: Callable[[Event], None]
    saves: Saves = field(default_factory=Saves)
    own: OwnTime = field(default_factory=OwnTime)  # fsarena's own time, phase by phase
    datasets: DatasetMaker = field(default_factory=SelfMade)

    def workdir(self, *parts: str) -> str:
        """A path under the plan's work directory."""
        return str(Path(self.plan.workdir, *parts))

    def save(self, whole: bool = False) -> None:
        """Save the session; a file that cannot be written stops the run (SessionUnsaved).

        The first save writes the file whole, the next ones append to its journal, and
        `whole` (the run's last save, however it ends) writes it whole again.
        """
        journal = self.saves.journal = self.saves.journal or Journal(self.session_path, save)
        try:
            # Whole: a stop signal that lands while pydantic serializes came out wrapped in
            # its PydanticSerializationError (a traceback, exit 1; CI at cd7fc51). Held
            # instead, and raised once the save is written.
            with self.own.phase("save"), interrupt.whole():
                (journal.compact if whole else journal.save)(self.session)
        except OSError as exc:
            self.saves.unsaved = self.saves.unsaved or SessionUnsaved(
                self.session_path, exc, self.saves.saved_runs
            )
            raise self.saves.unsaved from exc
        self.saves.saved_runs = len(self.session.runs)

    def runs(self, warmup: bool = False) -> list[Run]:
        """Where a round's runs are kept: the warm-up round's apart, never a sample."""
        return self.session.warmup if warmup else self.session.runs

    def record(self, run: Run, warmup: bool = False) -> None:
        """Keep one run, save the session at once, and tell the user.

        A run that failed while the work directory was full or read-only failed for
        that, whatever its tool said (a loop device's writes fail inside the image when
        the host's file cannot grow): it says so, and the run stops there (resumable),
        for every later sequence would fail the same way.
        """
        trouble = workdir_trouble(self.plan.workdir) if run.status == "failed" else ""
        if trouble:
            error = f"{trouble}: {unexplained(run.error, run.fault)}"
            run = run.model_copy(update={"fault": "workdir", "error": error})
        self.runs(warmup).append(run)
        self.save()
        self.say(Event("run", f"{run.filesystem} {run.task}: {run.status}", run))
        if trouble:
            raise WorkdirUnwritable(self.plan.workdir, trouble)

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

        What could not be undone stays in the ledger, for `fsarena cleanup`. A stop
        signal that comes meanwhile is raised once the step is done (interrupt.whole):
        an umount cut short left a filesystem mounted on an image the next step deleted.
        """
        with whole():
            try:
                action()
            except (FsarenaError, OSError) as exc:
                self.session.warn(
                    "teardown",
                    f"could not {what}: {exc}; run `fsarena cleanup --workdir {self.plan.workdir}`",
                )
