"""The holes review-verdicts-4 found in the words and the stopping, through whole sessions.

Each trial builds a session round by round the way the runner records it, asks the real
stopping rule after every round (analysis.adaptive.undecided), applies the real
eliminations where the code has them (SessionProgress.eliminations and analysis.race),
and reads the real answer (report.comparison.build). The harness asks nothing of the
decision code but those public calls, so the same test measures 43fa896's code, where:
- H2: 5 filesystems x 1 kind, one truly 40 % faster: named alone in 10 % of runs (the loop
  stopped at the first laggard);
- H3: 2 filesystems x 3 kinds, one truly 40 % faster on every kind, stalls: in 13 % of
  runs every kind named it and the recommendation said "none yet".
The noise is the recorded sessions', at half their spread (decision_model.QUIET: the
review's kinds of log sd 0.1), stalls and sequence shifts included.
"""

from __future__ import annotations

import math
import random

import pytest

from fsarena.analysis import race
from fsarena.analysis.adaptive import SessionProgress, undecided
from fsarena.report.comparison import build
from fsarena.run.runner import order_stream
from fsarena.session.file import Session
from tests.decision_model import (
    BORROWED,
    KIND_TASKS,
    QUIET,
    Scenario,
    empty_session,
    fit_noise,
    scaled,
    timed_run,
)


def _trial(scenario: Scenario, every_kind: bool, seed: int) -> Session:
    noise = scaled(fit_noise(), QUIET)  # the review's kinds spread about 0.1 in log
    rng = random.Random(seed)
    session = empty_session(scenario)
    orders = order_stream(scenario.names, seed)
    faster = set(scenario.kind_names if every_kind else scenario.kind_names[:1])
    done = 0
    while True:
        if done >= scenario.min_rounds and hasattr(SessionProgress, "eliminations"):
            progress = SessionProgress(session)
            found = progress.eliminations()
            decision = progress.verdicts().decision
            if found and decision is not None:
                level = float(decision.boundary.alpha(done))
                race.record(session, race.drops(session.plan, found, done, level))
        if done >= scenario.max_rounds or (done >= scenario.min_rounds and not undecided(session)):
            return session
        done += 1
        gone = session.race.dropped() if session.race else set()
        order = [fs for fs in next(orders) if fs not in gone]
        session.order.append(order)
        for fs in order:
            shared = rng.gauss(0.0, noise.sequence_sd)
            for kind in scenario.kind_names:
                for task in KIND_TASKS[kind]:
                    log = math.log(noise.base_s[BORROWED.get(task, task)]) + shared
                    log += rng.gauss(0.0, noise.spread(task))
                    if rng.random() < noise.stall_p:
                        log += math.log(noise.stall_factor)
                    if fs == scenario.names[0] and kind in faster:
                        log -= math.log1p(scenario.effect)
                    session.runs.append(timed_run(fs, task, done, math.exp(log)))


def _answer(session: Session):  # type: ignore[no-untyped-def]
    return build(session).verdicts.answer  # type: ignore[union-attr]


def test_h2_the_best_is_named_alone_not_stopped_at_the_first_laggard() -> None:
    scenario = Scenario(5, 1, effect=0.4)
    alone = sum(_answer(_trial(scenario, True, 100 + i)).recommended == ("fs0",) for i in range(20))
    assert alone >= 16, f"named alone in {alone} of 20 runs"  # 43fa896: about 2 in 20


@pytest.mark.parametrize(
    ("rounds", "least"),
    # The default run's looks (3 to 10), where 43fa896 stopped once every kind was decided
    # and then said "none yet" overall; and ten rounds every time, where a run does not
    # stop when the workload is decided, so that every kind often is too.
    [((3, 10), 0), ((10, 10), 10)],
)
def test_h3_the_recommendation_agrees_with_unanimous_kinds(
    rounds: tuple[int, int], least: int
) -> None:
    scenario = Scenario(2, 3, effect=0.4, min_rounds=rounds[0], max_rounds=rounds[1])
    disagree = unanimous = 0
    for i in range(20):
        answer = _answer(_trial(scenario, True, 200 + i))
        kinds = [k for k in answer.kinds if k.kind in scenario.kind_names]
        if kinds and all(k.status == "win" and k.winners == ("fs0",) for k in kinds):
            unanimous += 1
            disagree += answer.recommended != ("fs0",)
    assert unanimous >= least
    assert disagree == 0, f"{disagree} of {unanimous} unanimous runs not recommended"
