"""Robust comparisons: Hodges-Lehmann ratios, winsorized Welch intervals, detectable differences,
and recorded sessions with injected stalls."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from fsarena.analysis.evidence import Index
from fsarena.analysis.ranking import (
    detectable,
    rank,
    ratio_test,
    robust_ratio_test,
)
from fsarena.analysis.verdicts import analyse
from fsarena.session.file import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAST = [1.00, 1.02, 0.99, 1.01, 1.00]
SLOW = [1.30, 1.32, 1.29, 1.31, 1.33]


def test_yuen_ratio_lies_inside_its_interval_and_trims_at_n5() -> None:
    from fsarena.analysis.ranking import trimmed

    t = trimmed([1.0, 2.0, 3.0, 4.0, 100.0])
    assert t.h == 3 and t.mean == 3.0  # floor(0.2 * 5) = 1 cut at each end
    r = robust_ratio_test(SLOW, FAST)
    assert r.method == "yuen-log" and r.low < r.ratio < r.high


def test_one_stall_does_not_hide_a_clear_difference() -> None:
    stalled = [*FAST[:-1], FAST[-1] * 4]
    plain = ratio_test(SLOW, stalled)
    robust = robust_ratio_test(SLOW, stalled)
    assert plain.low < 1, "plain Welch on logs loses the difference to one stall"
    assert robust.p_value < 0.01
    assert 1.2 < robust.low < robust.ratio < robust.high < 1.45
    ranking = rank({"a": stalled, "b": SLOW}, higher_is_better=False)
    assert ranking.winners == ("a",)
    assert ranking.estimates["a"] < statistics.fmean(stalled)  # the trimmed centre


def test_a_tie_states_the_difference_it_could_have_detected() -> None:
    ranking = rank({"a": FAST, "b": [v * 1.01 for v in reversed(FAST)]}, higher_is_better=False)
    assert ranking.all_tied
    (pair,) = ranking.pairs
    assert pair.detectable == pytest.approx(max(pair.high, 1 / pair.low) - 1)
    assert 0 < ranking.detectable_difference == pair.detectable < 0.05
    assert math.isnan(detectable(math.nan, 1.0))
    single = rank({"a": FAST, "b": SLOW}, higher_is_better=False)
    assert single.detectable_difference == 0.0


def _stalled_sessions(name: str):  # type: ignore[no-untyped-def]
    """The recorded session, then copies with one timed run 4x slower (a stall), each run."""
    session = load(FIXTURES / name)
    timed = [r for r in session.runs if r.status == "ok" and r.measurement is not None]
    for i, run in enumerate(timed):
        copy = session.model_copy(deep=True)
        target = [r for r in copy.runs if r.status == "ok" and r.measurement is not None][i]
        assert target.measurement is not None
        target.measurement = replace(target.measurement, wall_s=4 * target.measurement.wall_s)
        yield run, copy


def test_recorded_session_with_a_stall_never_flips_a_verdict() -> None:
    """No significant pair reverses; a stall in one run moves a verdict less than plain Welch."""
    base = load(FIXTURES / "three-filesystems.json")
    columns = {t: ["wall_s"] for t in base.tasks() if base.plan.task_info[t].timed}
    before = analyse(base, columns)
    widened_robust, widened_plain = [], []
    index = Index(base)
    for run, stalled in _stalled_sessions("three-filesystems.json"):
        after = analyse(stalled, columns)
        for key, result in after.tasks.items():
            for pair in result.ranking.pairs:
                old = before.tasks[key].ranking.pair(pair.better, pair.worse)
                assert old is not None
                if pair.significant and old.significant:
                    assert old.better == pair.better, f"{run.task}: a stall flipped {key}"
        # The stalled filesystem's intervals against the others, robust and plain.
        samples = {
            fs: list(index.samples(fs, run.task, "wall_s").values()) for fs in base.plan.filesystems
        }
        changed = {**samples, run.filesystem: list(Index(stalled).samples(
            run.filesystem, run.task, "wall_s").values())}  # fmt: skip
        for other in samples:
            if other != run.filesystem:
                r = robust_ratio_test(changed[run.filesystem], changed[other])
                p = ratio_test(changed[run.filesystem], changed[other])
                widened_robust.append(detectable(r.low, r.high))
                widened_plain.append(detectable(p.low, p.high))
    # At n = 3 Yuen's test trims nothing: a stall widens the interval as plain Welch's does
    # (a win can become a tie, never flip, as asserted above).
    assert widened_robust == pytest.approx(widened_plain)
