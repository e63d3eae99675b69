"""The run's progress display: part of the command line (it prints; nothing else here does).

On a terminal: a progress bar with the elapsed time and an ETA, each finished
run printed above it. Not on a terminal (CI logs, pipes): one plain line per
run, no bar. With --quiet: nothing. Adaptive runs grow the total as rounds are
added, so the ETA never promises the end too early.
"""

from __future__ import annotations

from types import TracebackType
from typing import Literal, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from fsarena.analysis.phrases import number
from fsarena.measure.metrics import METRICS
from fsarena.measure.tooltext import brief
from fsarena.plan.model import Plan
from fsarena.report.units import bytes_text, value_text
from fsarena.run.events import Event
from fsarena.session.file import Run

Mode = Literal["auto", "bar", "lines", "quiet"]


def _value(key: str, raw: float) -> str:
    """A probe's figure as the reports print it ('2.55 GB', '93.3 %'), never '2.55e+09'."""
    if key in METRICS:
        return value_text(METRICS[key], raw)
    return bytes_text(raw) if key.endswith("_bytes") else number(raw)


def describe_run(run: Run) -> str:
    """One line: the task, its status and its headline figures (or why it failed)."""
    detail = brief(run.error)  # a tool's usage text stays in the session, not on this line
    if run.status == "ok" and run.measurement is not None:
        m = run.measurement
        detail = (
            f"{m.wall_s:8.3f} s  cpu {m.cpu_pct:5.1f} %  wrote {m.device_write_bytes / 1e6:9.1f} MB"
        )
    elif run.status == "ok":
        detail = "  ".join(f"{k} {_value(k, v)}" for k, v in sorted(run.values.items()))
    return f"{run.filesystem:8} {run.task:20} {run.status:7} {detail}"


class RunProgress:
    """Receives the runner's events and shows them; a context manager around the run."""

    def __init__(self, plan: Plan, stream: TextIO, mode: Mode = "auto") -> None:
        self._console = Console(file=stream, highlight=False)
        if mode == "auto":
            mode = "bar" if self._console.is_terminal else "lines"
        self._mode = mode
        self._per_round = len(plan.tasks) * len(plan.sequences())
        self._rounds = plan.repetitions
        self._bar: tuple[Progress, TaskID] | None = None

    def __enter__(self) -> RunProgress:
        if self._mode == "bar":
            bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
            )
            bar.start()
            self._bar = (bar, bar.add_task("starting", total=self._per_round * self._rounds))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar[0].stop()

    def __call__(self, event: Event) -> None:
        if self._mode == "quiet":
            return
        if event.kind == "round":
            self._on_round(int(event.message.split()[-1]))
        if event.run is not None:
            self._print(f"   {describe_run(event.run)}")
            self._advance(event.message)
        elif event.kind != "round":
            self._print(f"== {event.message}")
            self._update(description=event.message)

    def _on_round(self, repetition: int) -> None:
        if repetition > self._rounds:
            self._rounds = repetition
            self._update(total=self._per_round * self._rounds)

    def _advance(self, message: str) -> None:
        self._update(advance=1, description=message)

    def _update(
        self, *, description: str | None = None, total: int | None = None, advance: int = 0
    ) -> None:
        if self._bar is not None:
            bar, task = self._bar
            bar.update(task, description=description, total=total, advance=advance)

    def _print(self, line: str) -> None:
        self._console.print(line, markup=False, soft_wrap=True)
