"""The answer of a tune, and the stopping rule's reason, as every report shows them.

A tune's answer names, per weighed kind and for the workload, the best configuration
against the filesystem's defaults with the answer's interval, or says the defaults are
as good as anything within X %, X read from the intervals (never set). Every run
records why it took no more rounds (Session.stop) and every format shows it.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsarena.analysis.tuned import advantage
from fsarena.plan.model import make_plan
from fsarena.report import html, markdown, text
from fsarena.report import json as json_report
from fsarena.report.comparison import build
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load
from fsarena.session.records import StopRecord
from tests.decision_model import timed_run
from tests.fakes import FakeExecutor
from tests.race_model import RaceScenario, empty_session


def _session(times: tuple[float, ...], sd: float, rounds: int, seed: int = 1) -> Session:
    """A tune of one kind (large files): configuration i takes times[i] x the base, with
    log-normal noise SD, every configuration every round (no race)."""
    s = RaceScenario(tuple((t,) for t in times), race=False)
    session = empty_session(s)
    rng = random.Random(seed)
    for rep in range(1, rounds + 1):
        session.order.append(list(s.names))
        for name, t in zip(s.names, times, strict=True):
            for task in s.tasks:
                wall = t * rng.lognormvariate(0.0, sd)
                session.runs.append(timed_run(name, task, rep, wall))
    return session


def _tune(session: Session) -> tuple[str, ...]:
    return build(session).verdicts.answer.tune  # type: ignore[union-attr]


def test_the_defaults_are_as_good_as_anything_within_a_measured_x() -> None:
    session = _session((1.0, 1.0, 1.0, 1.0), 0.005, 6)
    verdicts = build(session).verdicts
    assert verdicts is not None
    line = verdicts.answer.tune[0]
    found = re.search(r"the defaults \(fs\) are as good as anything here, within ([\d.]+) %", line)
    assert found, line
    # X is the farthest advantage over the defaults any configuration's interval allows.
    ranking = verdicts.kinds[0].ranking
    widest = max(
        advantage(p, c)
        for c in ("fs-c1", "fs-c2", "fs-c3")
        if (p := ranking.pair(c, "fs")) is not None
    )
    assert float(found.group(1)) == pytest.approx(100 * widest, rel=0.05)  # two digits
    assert 0 < widest <= 0.05
    assert "n = 6" in line


def test_the_best_configuration_is_named_with_its_margin_and_interval() -> None:
    session = _session((1.0, 1.0, 0.8, 1.1), 0.02, 6)
    line = _tune(session)[0]
    found = re.search(
        r"large files: fs-c2, ([\d.]+)× faster than the defaults \(fs\) \(([\d.]+)–([\d.]+)×", line
    )
    assert found, line
    ratio, low, high = (float(g) for g in found.groups())
    assert low <= ratio <= high
    assert low <= 1.25 <= high  # the truth: 1 / 0.8


def test_nothing_shown_better_says_how_much_better_remains_possible() -> None:
    session = _session((1.0, 1.0, 0.95), 0.3, 3)
    line = _tune(session)[0]
    assert "no configuration shown better than the defaults (fs)" in line, line
    found = re.search(r"up to ([\d.]+) % better remains possible|up to 100× or more", line)
    assert found, line


def test_a_tune_shows_its_answer_drops_and_stop_in_every_format(tmp_path: Path) -> None:
    session = _session((1.0, 1.0, 0.8, 1.1), 0.02, 6)
    session.stop = StopRecord(code="budget", text="stopped after 6 rounds: the time budget")
    comparison = build(session)
    first = comparison.verdicts.answer.tune[0]  # type: ignore[union-attr]
    outputs = {
        "text": text.render(comparison, 200),
        "markdown": markdown.render(comparison),
        "html": html.render(comparison),
    }
    for name, out in outputs.items():
        flat = " ".join(out.split())
        assert first in flat, name
        assert "stopped after 6 rounds: the time budget" in flat, name
    summary = json.loads(json_report.render(comparison))
    assert summary["answer"]["tune"][0] == first
    assert summary["answer"]["stopped"].startswith("stopped after 6 rounds")
    import jsonschema

    schema = json.loads((Path(json_report.__file__).parent / json_report.SCHEMA_FILE).read_text())
    jsonschema.validate(summary, schema)


# ---------------------------------------------------------------- the stopping rule's reason


def _run(
    tmp_path: Path, repetitions: int = 3, clock: Callable[[], float] | None = None, **plan: Any
) -> Session:
    made = make_plan("article-a-2006", ["ext4", "xfs"], repetitions, 0.001, 3,
                     str(tmp_path / "w"), **plan)  # fmt: skip
    path = tmp_path / "s.json"
    runner = Runner(made, FakeExecutor(), new_session(made, {}, {}), path, "tmpfs")
    if clock is not None:
        runner.clock = clock
    runner.run()
    return load(path)


def test_a_fixed_run_says_it_ran_its_rounds(tmp_path: Path) -> None:
    session = _run(tmp_path, repetitions=3)
    assert session.stop is not None and session.stop.code == "fixed"
    assert session.stop.text == (
        "stopped after 3 rounds: the plan's 3 rounds, fixed (--repetitions or --quick)"
    )
    assert "Rounds: stopped after 3 rounds" in text.render(build(session), 200)


def test_a_decisive_run_says_why_it_stopped_with_the_budget_left(tmp_path: Path) -> None:
    """Equal times every round: nothing to decide until the ceiling; the budget left said."""
    session = _run(tmp_path, decisive=True, max_repetitions=4, time_budget_s=3600.0)
    assert session.stop is not None
    assert session.stop.code in ("decided", "max_rounds")
    assert session.stop.rounds == len(session.order)
    assert "min of the budget left)" in session.stop.text
    assert session.stop.budget_left_s is not None and session.stop.budget_left_s > 0


def test_a_budget_stop_gives_its_figures(tmp_path: Path) -> None:
    """A clock that moves 30 s per reading: the 4-minute budget stops the run past two
    rounds, and the reason gives the time used and the next round's forecast."""
    ticks = itertools.count(0.0, 30.0)
    session = _run(
        tmp_path, clock=lambda: next(ticks), decisive=True, max_repetitions=10,
        time_budget_s=240.0, warmup_rounds=0,
    )  # fmt: skip
    assert session.stop is not None and session.stop.code == "budget", session.stop
    assert re.search(
        r"stopped after \d+ rounds: the time budget: [\d.]+ of 4.0 min used, and the next "
        r"round \(forecast [\d.]+ min: the slowest of the last three plus their spread\) "
        r"would end past it",
        session.stop.text,
    ), session.stop.text
    assert not math.isnan(float(session.stop.budget_left_s or 0))
