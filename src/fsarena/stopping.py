"""The stopping rule: when a run stops adding rounds, as one typed value.

Three rules, each of which announces itself, decides whether another round is
wanted and words its closing warning:
- Fixed: exactly the plan's repetitions (--repetitions N, --quick, a suite file
  that states them).
- TargetCI: more rounds while a task's 95 % interval of its mean time is wider
  than ±PCT % (--target-ci), up to a ceiling and within an optional budget.
- Decisive (the default run): after each round from the plan's own, the
  filesystems shown behind the best are eliminated, and more rounds run while the
  best for the workload is not known, up to a ceiling and within a time budget.
  The answer's error rate is calibrated for exactly these looks (schedule(),
  analysis.decision), so stopping early names no more false winners than a
  fixed run.
The plan stores the rule as its fields (decisive, target_ci_pct, max_repetitions,
time_budget_s: the session's record keeps that form); Plan.stopping gives the
typed value, and `from_flags` is the only place that turns the command line's
flags into those fields. What the rule reads of the measurements comes through
Progress, which the runner provides (the plan does not analyse).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from fsarena.errors import FsarenaError

DEFAULT_BUDGET_S = 600.0  # the default run's time budget: what a user waits for an answer
DEFAULT_MAX_REPETITIONS = 10
MIN_ROUNDS = 2  # a decisive run's budget may stop it here: the fewest rounds with an interval


class Progress(Protocol):
    """What a stopping rule reads of the session so far (the runner's analysis)."""

    def open_kinds(self) -> list[Any]:
        """The weighed kinds the answer has not settled."""
        ...

    def imprecise(self, target_rel: float) -> list[Any]:
        """The (filesystem, task) pairs whose interval is wider than ±target_rel."""
        ...

    def undecided_warning(self, items: list[Any]) -> str: ...

    def unstable_warning(self, items: list[Any], target_rel: float) -> str: ...


@dataclass(frozen=True)
class Fixed:
    repetitions: int
    warmup: bool = False

    adaptive = False  # its rounds do not depend on what was measured
    eliminates = False

    @property
    def ceiling(self) -> int:
        """The most rounds it may run."""
        return self.repetitions

    def schedule(self) -> tuple[int, int, bool]:
        """(first look, last look, sequential): one look, at the plan's rounds."""
        return self.repetitions, self.repetitions, False

    def announce(self, scale: float) -> str:
        del scale
        fixed = "fixed (--repetitions or --quick)"
        return f"{_warm(self.warmup)}{rounds_words(self.repetitions)}, {fixed}"

    def wants_another_round(self, done: int, fits: bool, progress: Progress) -> bool:
        del done, fits, progress
        return False

    def budget_stops(self, done: int, fits: bool) -> bool:
        del done, fits
        return False

    def warning(self, progress: Progress) -> tuple[str, str] | None:
        del progress
        return None

    def reason(self, done: int, fits: bool, progress: Progress) -> tuple[str, str]:
        """Why no round followed the DONE-th: (code, words)."""
        del fits, progress
        return "fixed", f"the plan's {rounds_words(done)}, fixed (--repetitions or --quick)"


@dataclass(frozen=True)
class TargetCI:
    repetitions: int
    pct: float
    max_repetitions: int
    time_budget_s: float | None = None
    warmup: bool = False

    adaptive = True
    eliminates = False

    @property
    def ceiling(self) -> int:
        return self.max_repetitions

    def schedule(self) -> tuple[int, int, bool]:
        """One look, at the rounds the run ends at: it stops on precision, not on who leads."""
        return self.repetitions, self.max_repetitions, False

    def announce(self, scale: float) -> str:
        del scale
        limit = f", within {self.time_budget_s / 60:.0f} min" if self.time_budget_s else ""
        return (
            f"{_warm(self.warmup)}{self.repetitions} rounds, then more (up to "
            f"{self.max_repetitions}{limit}) while a task's 95 % CI is wider than "
            f"±{self.pct:g} %"
        )

    def wants_another_round(self, done: int, fits: bool, progress: Progress) -> bool:
        if done >= self.max_repetitions or not fits:
            return False
        return bool(progress.imprecise(self.pct / 100))

    def budget_stops(self, done: int, fits: bool) -> bool:
        del done, fits
        return False

    def warning(self, progress: Progress) -> tuple[str, str] | None:
        items = progress.imprecise(self.pct / 100)
        return ("unstable", progress.unstable_warning(items, self.pct / 100)) if items else None

    def reason(self, done: int, fits: bool, progress: Progress) -> tuple[str, str]:
        """Why no round followed the DONE-th: (code, words)."""
        left = len(progress.imprecise(self.pct / 100))
        still = f"; {left} task(s) still wider than ±{self.pct:g} %" if left else ""
        if not left:
            return "precise", f"every timed task's 95 % CI within ±{self.pct:g} %"
        if done >= self.max_repetitions:
            return "max_rounds", f"the ceiling of {self.max_repetitions} rounds{still}"
        if not fits:
            return "budget", f"the time budget{still}"
        return "precise", f"every timed task's 95 % CI within ±{self.pct:g} %"


@dataclass(frozen=True)
class Decisive:
    repetitions: int
    max_repetitions: int
    time_budget_s: float
    warmup: bool = True

    adaptive = True
    eliminates = True  # a filesystem shown behind the best is not measured again

    @property
    def ceiling(self) -> int:
        return self.max_repetitions

    def schedule(self) -> tuple[int, int, bool]:
        """Looks after every round from the plan's rounds to the ceiling: after each, a
        filesystem shown behind is eliminated, and the run stops once the best is known
        (analysis.selection; the error rate is calibrated for exactly these looks)."""
        return self.repetitions, self.max_repetitions, True

    def announce(self, scale: float) -> str:
        return (
            f"{_warm(self.warmup)}{self.repetitions} rounds, then more (up to "
            f"{self.max_repetitions}) until the best for your workload is known (one "
            "filesystem, or those left shown within 5 % of each other); after each round "
            f"from the {_nth(self.repetitions)}, a filesystem shown behind the best is "
            "eliminated (not measured again); 5 % chance of any false winner over the "
            f"whole run; no new round once the {self.time_budget_s / 60:.0f} min budget "
            "would be passed "
            "(--time-budget SECONDS; --repetitions N or --quick for a fixed run); datasets "
            f"at scale {scale:g}, so that rounds stay short enough for several to fit the "
            "budget (--scale: larger datasets, fewer rounds)"
        )

    def wants_another_round(self, done: int, fits: bool, progress: Progress) -> bool:
        if done >= self.max_repetitions or not fits:
            return False
        return bool(progress.open_kinds())

    def budget_stops(self, done: int, fits: bool) -> bool:
        """Past MIN_ROUNDS the budget cuts even the plan's own repetitions short."""
        return done >= MIN_ROUNDS and not fits

    def warning(self, progress: Progress) -> tuple[str, str] | None:
        items = progress.open_kinds()
        return ("undecided", progress.undecided_warning(items)) if items else None

    def reason(self, done: int, fits: bool, progress: Progress) -> tuple[str, str]:
        """Why no round followed the DONE-th: (code, words)."""
        left = len(progress.open_kinds())
        if not left:
            return "decided", "decided: the best for the workload is known"
        still = "; the best for the workload not known yet"
        if done >= self.max_repetitions:
            return "max_rounds", f"the ceiling of {self.max_repetitions} rounds{still}"
        del fits  # the only other reason the rule stops: the next round would pass the budget
        return "budget", f"the time budget{still}"


Stopping = Fixed | TargetCI | Decisive


def _nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def rounds_words(n: int) -> str:
    """ "1 round", "3 rounds"."""
    return f"{n} round{'' if n == 1 else 's'}"


def _warm(warmup: bool) -> str:
    return "one warm-up round (kept apart, not a sample), then " if warmup else ""


def of_plan(
    repetitions: int,
    decisive: bool,
    target_ci_pct: float | None,
    max_repetitions: int | None,
    time_budget_s: float | None,
    warmup_rounds: int,
) -> Stopping:
    """The typed rule of a plan's fields (Plan.stopping)."""
    ceiling = max_repetitions or max(repetitions, DEFAULT_MAX_REPETITIONS)
    warm = bool(warmup_rounds)
    if decisive:
        return Decisive(repetitions, ceiling, time_budget_s or DEFAULT_BUDGET_S, warm)
    if target_ci_pct is not None:
        return TargetCI(repetitions, target_ci_pct, ceiling, time_budget_s, warm)
    return Fixed(repetitions, warm)


def from_flags(
    quick: bool,
    repetitions: int | None,
    target_ci: float | None,
    max_repetitions: int | None,
    time_budget: float | None,
    warmup: bool | None,
    suite_fixed: bool = False,
) -> dict[str, Any]:
    """The plan's fields for the command line's flags: decisive within a budget by default;
    --quick, --repetitions (or a suite file's own repetitions) fixed; --target-ci adaptive."""
    fixed = quick or repetitions is not None or suite_fixed
    if quick and (target_ci or time_budget or max_repetitions):
        raise FsarenaError("--quick runs the suite's repetitions once: drop the adaptive options")
    decisive = not fixed and target_ci is None
    budget = time_budget
    if decisive and budget is None:
        budget = DEFAULT_BUDGET_S
    return {
        "target_ci_pct": target_ci,
        "max_repetitions": max_repetitions,
        "time_budget_s": budget,
        "decisive": decisive,
        # A fixed run (--repetitions, --quick) does exactly what it says unless asked.
        "warmup_rounds": int(warmup if warmup is not None else not fixed),
    }
