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
    hodges_lehmann,
    rank,
    ratio_test,
    robust_ratio_test,
    robust_scale,
    winsorize,
)
from fsarena.analysis.verdicts import analyse
from fsarena.session.file import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAST = [1.00, 1.02, 0.99, 1.01, 1.00]
SLOW = [1.30, 1.32, 1.29, 1.31, 1.33]


def test_hodges_lehmann_is_the_median_of_pairwise_differences() -> None:
    assert hodges_lehmann([1.0, 2.0], [0.0]) == 1.5
    assert hodges_lehmann([5.0, 5.0, 100.0], [1.0, 1.0, 1.0]) == 4.0  # the stall is outvoted


def test_robust_scale_ignores_one_stall_and_the_medians_own_zero() -> None:
    clean = robust_scale([1.0, 1.1, 1.2], [2.0, 2.1, 2.2])
    stalled = robust_scale([1.0, 1.1, 9.0], [2.0, 2.1, 2.2])
    assert clean == pytest.approx(1.4826 * 0.1)
    assert stalled == pytest.approx(clean)


def test_winsorize_pulls_in_only_far_values() -> None:
    assert winsorize([1.0, 1.1, 1.2, 9.0], 0.1, 3.0) == [1.0, 1.1, 1.2, 1.15 + 0.3]
    assert winsorize([1.0, 1.1, 1.2], 0.1, 3.0) == [1.0, 1.1, 1.2]


def test_one_stall_does_not_hide_a_clear_difference() -> None:
    stalled = [*FAST[:-1], FAST[-1] * 4]
    plain = ratio_test(SLOW, stalled)
    robust = robust_ratio_test(SLOW, stalled)
    assert plain.low < 1, "plain Welch on logs loses the difference to one stall"
    assert robust.p_value < 0.01
    assert 1.2 < robust.low < robust.ratio < robust.high < 1.45
    ranking = rank({"a": stalled, "b": SLOW}, higher_is_better=False)
    assert ranking.winners == ("a",)
    assert ranking.estimates["a"] == statistics.median(stalled)


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
    assert statistics.median(widened_robust) < 0.6 * statistics.median(widened_plain)
