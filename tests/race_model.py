"""The race of a tune under simulated noise: configurations, the truth, and what was dropped.

This drives fsarena's real race and stopping code; nothing here re-implements a test,
a level or a rule. Its entry points into fsarena:
- `fsarena.analysis.race.decide` and `record`: what the runner asks after each round
  (`Runner._race`), and `race.only_defaults_left`, `race.contenders`: when the runner
  stops and what its stopping rule reads;
- `fsarena.analysis.adaptive.undecided`: the decisive stopping rule, on the contenders;
- `fsarena.run.runner.order_stream`: each round's shuffled order, the dropped left out.
Sessions are built as the runner records them (tests/decision_model.py: one Run per
configuration, task and round), with the noise fitted there from the recorded sessions
in tests/fixtures: per-task spread, a per-sequence effect, the first round's excess,
stalls of 4.5x (heavy tails) and, in the drift scenarios, 3 % per round.
tests/unit/test_race_error_rate.py checks on a few seeds that the real Runner with a
fake executor drops the same configurations after the same rounds as this loop fed
the same values.

The error the race promises to hold (analysis.race): a configuration that is in fact
the best, or within MARGIN of the best, of some family (a weighed kind, or the
workload) is dropped in at most 5 % of races. `Race.false_drop` counts those races.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from fsarena.analysis import race
from fsarena.analysis.adaptive import headline_columns, undecided
from fsarena.analysis.ranking import rank
from fsarena.analysis.scope import verdict_scope
from fsarena.analysis.verdicts import analyse
from fsarena.run.runner import order_stream
from fsarena.session.file import Run, Session
from tests.decision_model import (
    BORROWED,
    DEFAULT_SCALE,
    DRIFT_REFERENCE,
    KIND_TASKS,
    WORKLOAD,
    MemoPlan,
    Noise,
    scaled,
    timed_run,
)

DEFAULTS = "fs"


@dataclass(frozen=True)
class RaceScenario:
    """Configurations of one filesystem and their true times, relative to the best.

    times[i][k]: configuration i's time on kind k as a multiple (1.0: as fast as the
    best); configuration 0 is the defaults. to_ceiling: every round up to max_rounds (the
    most looks a race may take); else the decisive rule stops it as the runner would.
    """

    times: tuple[tuple[float, ...], ...]
    drift: bool = False
    spread: float = 1.0
    min_rounds: int = 3
    max_rounds: int = 10
    to_ceiling: bool = True
    race: bool = True
    label: str = ""

    @property
    def names(self) -> list[str]:
        return [DEFAULTS, *(f"{DEFAULTS}-c{i}" for i in range(1, len(self.times)))]

    @property
    def kinds(self) -> list[str]:
        return list(WORKLOAD)[: len(self.times[0])]

    @property
    def tasks(self) -> list[str]:
        return [t for k in self.kinds for t in KIND_TASKS[k]]

    def truth(self) -> dict[str, dict[str, float]]:
        """Per family (each kind, and the workload with several), each configuration's
        true time as a multiple of the family's best."""
        out = {}
        for k, kind in enumerate(self.kinds):
            values = {n: t[k] for n, t in zip(self.names, self.times, strict=True)}
            out[kind] = {n: v / min(values.values()) for n, v in values.items()}
        if len(self.kinds) > 1:
            geo = {
                n: math.exp(statistics.fmean(math.log(v) for v in t))
                for n, t in zip(self.names, self.times, strict=True)
            }
            out["workload"] = {n: v / min(geo.values()) for n, v in geo.items()}
        return out

    def protected(self) -> set[str]:
        """Configurations a drop would be an error for: within MARGIN of some family's best."""
        return {
            n for family in self.truth().values() for n, v in family.items() if v <= 1 + race.MARGIN
        }

    def best(self) -> str:
        """The truly best configuration for the workload (the only kind, or the mean)."""
        family = list(self.truth().values())[-1]
        return min(family, key=lambda n: (family[n], n))


def empty_session(s: RaceScenario) -> Session:
    plan = MemoPlan.model_validate(
        {
            "suite": "simulated",
            "filesystems": s.names,
            "tasks": s.tasks,
            "repetitions": s.min_rounds,
            "decisive": True,
            "max_repetitions": s.max_rounds,
            "scale": DEFAULT_SCALE,
            "seed": 1,
            "task_info": {
                t: {"kind": k, "timed": True, "writes": False}
                for k in s.kinds
                for t in KIND_TASKS[k]
            },
            "tune": {DEFAULTS: s.names},
            "race": s.race,
        }
    )
    return Session(
        tool_version="0.0.sim",
        created_at="2026-01-01T00:00:00+00:00",
        status="complete",
        host={"kernel": "6.0-sim", "cpu_model": "simulated", "cpus": 2},
        plan=plan,
        profiles_as_run={n: {"name": n, "fstype": "ext4", "driver": "kernel"} for n in s.names},
    )


class RaceDraws:
    """One trial's noise: wall times per (round, configuration, task), seeded."""

    def __init__(self, s: RaceScenario, noise: Noise, seed: int) -> None:
        self.s = s
        self.noise = scaled(noise, s.spread)
        if s.drift:
            self.noise = self.noise.with_drift(DRIFT_REFERENCE)
        self.rng = random.Random(seed)
        self.orders = order_stream(s.names, seed)

    def round(
        self, repetition: int, gone: set[str]
    ) -> tuple[list[str], dict[tuple[str, str], float]]:
        s, noise, rng = self.s, self.noise, self.rng
        order = [n for n in next(self.orders) if n not in gone]
        times = dict(zip(s.names, s.times, strict=True))
        walls = {}
        for position, name in enumerate(order):
            shared = rng.gauss(0.0, noise.sequence_sd)
            if repetition == 1 and position == 0:
                shared += noise.first_round
            if s.drift:
                shared += noise.drift * (repetition - 1 + position / len(order))
            for k, kind in enumerate(s.kinds):
                for task in KIND_TASKS[kind]:
                    log = math.log(noise.base_s[BORROWED.get(task, task)]) + shared
                    log += rng.gauss(0.0, noise.spread(task)) + math.log(times[name][k])
                    if rng.random() < noise.stall_p:
                        log += math.log(noise.stall_factor)
                    walls[(name, task)] = math.exp(log)
        return order, walls


@dataclass(frozen=True)
class RaceRun:
    rounds: int
    dropped: Mapping[str, int]  # configuration -> after how many rounds
    sequences: int  # configuration-rounds measured
    seconds: float  # their simulated wall time
    leader: str  # the best by the estimate for the workload, among those not dropped
    stop: str


Draw = Callable[[int, set[str]], tuple[list[str], list[Run]]]


def race_loop(
    session: Session, draw: Draw, min_rounds: int, max_rounds: int, to_ceiling: bool
) -> Session:
    """The runner's loop on SESSION: a round, then the race, then the stopping rule, as
    Runner._rounds does (the budget counted in rounds)."""
    done = 0
    while True:
        if done:
            drops = race.decide(session)
            if drops:
                race.record(session, drops)
            if race.only_defaults_left(session):
                session.warn("sim_stop", "all_dropped")
                break
        if done >= max_rounds:
            break
        if done >= min_rounds and not to_ceiling and not undecided(race.contenders(session)):
            break
        done += 1
        order, runs = draw(done, race.dropped(session))
        session.order.append(order)
        session.runs.extend(runs)
    return session


def leader(session: Session) -> str:
    """The best configuration by the estimate for the workload, among those not dropped."""
    view = race.contenders(session)
    verdicts = analyse(verdict_scope(view), headline_columns(view))
    family = race.families(view, verdicts.kinds)[-1]
    return rank(family.samples, higher_is_better=False).order[0]


def run_race(s: RaceScenario, noise: Noise, seed: int) -> RaceRun:
    draws = RaceDraws(s, noise, seed)
    seconds = 0.0

    def draw(repetition: int, gone: set[str]) -> tuple[list[str], list[Run]]:
        nonlocal seconds
        order, walls = draws.round(repetition, gone)
        seconds += sum(walls.values())
        runs = [timed_run(n, t, repetition, walls[(n, t)]) for n in order for t in s.tasks]
        return order, runs

    session = race_loop(empty_session(s), draw, s.min_rounds, s.max_rounds, s.to_ceiling)
    dropped = {d.configuration: d.after_rounds for d in session.race.drops} if session.race else {}
    return RaceRun(
        rounds=len(session.order),
        dropped=dropped,
        sequences=sum(len(o) for o in session.order),
        seconds=seconds,
        leader=leader(session),
        stop="all_dropped" if session.warnings else "",
    )


@dataclass(frozen=True)
class Race:
    scenario: RaceScenario
    runs: tuple[RaceRun, ...]

    def false_drop(self) -> tuple[int, int]:
        """(races that dropped a configuration within MARGIN of some family's best, races)."""
        protected = self.scenario.protected()
        return sum(bool(protected & set(r.dropped)) for r in self.runs), len(self.runs)

    def drops(self) -> float:
        """The mean number of configurations dropped per race."""
        return statistics.fmean(len(r.dropped) for r in self.runs)


def simulate_race(s: RaceScenario, noise: Noise, trials: int, seed: int = 0) -> Race:
    return Race(s, tuple(run_race(s, noise, seed * 1_000_003 + i) for i in range(trials)))


def scenarios() -> dict[str, RaceScenario]:
    """The scenarios the error rate is proven on: 8 configurations each."""
    eight_equal = tuple((1.0,) for _ in range(8))
    near = ((1.0,), (1.0,), (1.03,), (1.05,), (1.10,), (1.20,), (1.30,), (1.5,))
    two_kinds = (
        (1.0, 1.0),
        (0.97, 1.08),  # best on the first kind, behind on the second
        (1.10, 0.95),  # best on the second kind
        (1.03, 1.03),
        (1.25, 1.0),
        (1.0, 1.25),
        (1.3, 1.3),
        (1.5, 1.5),
    )
    return {
        "null": RaceScenario(eight_equal, label="8 configurations, no real difference"),
        "null_drift": RaceScenario(
            eight_equal, drift=True, label="8 configurations, no difference, drift 3 %/round"
        ),
        "near": RaceScenario(near, label="8 configurations: 0, 0, 3, 5, 10, 20, 30, 50 % slower"),
        "near_drift": RaceScenario(near, drift=True, label="the same, drift 3 %/round"),
        "two_kinds": RaceScenario(
            two_kinds, label="8 configurations, 2 kinds, each kind's best differs"
        ),
    }


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def replayed(recorded: Session, min_rounds: int, max_rounds: int) -> Session:
    """The loop fed a real run's own runs, round by round, the orders drawn again from the
    plan's seed with the dropped left out (as Runner._rounds draws them)."""
    start = recorded.model_copy(update={"runs": [], "order": [], "race": None, "stop": None})
    start.warnings = []
    orders = order_stream(recorded.plan.filesystems, recorded.plan.seed or 0)

    def draw(repetition: int, gone: set[str]) -> tuple[list[str], list[Run]]:
        order = [n for n in next(orders) if n not in gone]
        runs = [r for r in recorded.runs if r.repetition == repetition and r.filesystem in order]
        return order, runs

    return race_loop(start, draw, min_rounds, max_rounds, to_ceiling=False)
