"""Adaptive repetitions: more rounds only while a task is imprecise, within the limits."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from fsarena.cli.progress import RunProgress
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Command, Timed
from fsarena.plan.model import make_plan
from fsarena.report import render
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner, shuffled_orders
from fsarena.session.file import Session, load
from tests.fakes import FakeExecutor


class Jittery(FakeExecutor):
    """Wall times from a cycle, so the spread of every task is what the test chooses."""

    def __init__(self, walls: Sequence[float]) -> None:
        super().__init__()
        self._walls: Iterator[float] = itertools.cycle(walls)
        self.now_s = 0.0  # simulated time: the sum of the wall times measured so far

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        # The device's ceiling takes no simulated time (fio, or its page-cache read's shell).
        if "fio" not in commands[0].argv[:6]:
            self.wall_s = next(self._walls)
            self.now_s += self.wall_s
        return super().measure(commands, device, timeout_s)


def _run(tmp_path: Path, ex: FakeExecutor, reps: int = 3, **adaptive: object) -> Session:
    plan = make_plan("article-a-2006", ["ext4", "xfs"], reps, 0.001, 7, str(tmp_path / "w"),
                     **adaptive)  # fmt: skip
    path = tmp_path / "s.json"
    clock = (lambda: ex.now_s) if isinstance(ex, Jittery) else (lambda: 0.0)
    Runner(
        plan, ex, new_session(plan, {}, {}), path, "tmpfs", clock=clock, datasets=ex.datasets
    ).run()
    return load(path)


def test_precise_tasks_need_no_more_rounds(tmp_path: Path) -> None:
    session = _run(tmp_path, FakeExecutor(), target_ci_pct=3.0)
    assert len(session.order) == 3
    assert not [w for w in session.warnings if w.code == "unstable"]


def test_noisy_tasks_get_rounds_up_to_the_maximum_and_are_flagged(tmp_path: Path) -> None:
    session = _run(tmp_path, Jittery([1.0, 3.0, 0.5, 2.0, 4.0, 1.5]), target_ci_pct=3.0,
                   max_repetitions=5)  # fmt: skip
    assert len(session.order) == 5
    assert {r.repetition for r in session.runs} == {1, 2, 3, 4, 5}
    # The first three orders are the ones a fixed 3-repetition run would use.
    assert session.order[:3] == shuffled_orders(["ext4", "xfs"], 3, 7)
    (unstable,) = [w.message for w in session.warnings if w.code == "unstable"]
    assert "ext4 iso_copy_in (" in unstable and "n=5)" in unstable
    assert "--scale" in unstable, "the warning says what to do"
    assert "5 repetitions (adaptive: at least 3" in render(session, "text")


def test_rounds_stop_when_the_target_is_met(tmp_path: Path) -> None:
    # A round of 1.0 s, one of 1.1 s (50 timed executions each), then identical ones:
    # the interval narrows as n grows.
    walls = [1.0] * 50 + [1.1] * 50 + [1.05] * 10_000
    session = _run(tmp_path, Jittery(walls), reps=2, target_ci_pct=5.0, max_repetitions=50)
    assert 2 < len(session.order) < 50
    assert not [w for w in session.warnings if w.code == "unstable"]


def test_time_budget_stops_new_rounds(tmp_path: Path) -> None:
    # A round is 2 filesystems x 25 timed executions (11 tasks, mkfs, mount and umount
    # 5 times, find 3 times) alternating 1 s and 3 s: 100 s. After three rounds (300 s)
    # a fourth fits in 450 s; after four (400 s) a fifth does not.
    session = _run(tmp_path, Jittery([1.0, 3.0]), target_ci_pct=1.0, max_repetitions=10,
                   time_budget_s=450.0)  # fmt: skip
    assert len(session.order) == 4
    assert [w for w in session.warnings if w.code == "unstable"]


def test_adaptive_limits_need_a_target() -> None:
    with pytest.raises(FsarenaError, match="give --target-ci too"):
        make_plan("article-a-2006", ["ext4"], 3, 0.01, 1, "/tmp/w", max_repetitions=5)
    with pytest.raises(FsarenaError, match="below the 3 repetitions"):
        make_plan("article-a-2006", ["ext4"], 3, 0.01, 1, "/tmp/w", target_ci_pct=3.0,
                  max_repetitions=2)  # fmt: skip


def test_progress_lines_when_not_a_terminal(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    out = io.StringIO()
    with RunProgress(plan, out) as progress:
        ex = FakeExecutor()
        Runner(plan, ex, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs",
               progress, datasets=ex.datasets).run()  # fmt: skip
    lines = out.getvalue().splitlines()
    assert sum("ext4" in line and " ok " in line for line in lines) == len(plan.tasks)
    assert "\x1b" not in out.getvalue(), "no terminal control codes in a log"


def test_progress_bar_total_grows_with_adaptive_rounds(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 2, 0.001, 7, str(tmp_path / "w"),
                     target_ci_pct=1.0, max_repetitions=4)  # fmt: skip
    progress = RunProgress(plan, io.StringIO(), "bar")
    with progress:
        ex = Jittery([1.0, 2.0])
        Runner(plan, ex, new_session(plan, {}, {}), tmp_path / "s.json",
               "tmpfs", progress, datasets=ex.datasets).run()  # fmt: skip
        assert progress._bar is not None
        bar, task = progress._bar
        assert bar.tasks[task].total == bar.tasks[task].completed == 4 * len(plan.tasks)


def test_quiet_prints_nothing(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    out = io.StringIO()
    with RunProgress(plan, out, "quiet") as progress:
        ex = FakeExecutor()
        Runner(plan, ex, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs",
               progress, datasets=ex.datasets).run()  # fmt: skip
    assert out.getvalue() == ""
