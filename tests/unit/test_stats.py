"""Statistics: descriptive, outliers, precision, pairwise tests and rankings."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from fsarena.analysis.ranking import rank, ratio_test
from fsarena.analysis.stats import (
    outliers,
    summarize,
)


def test_known_values() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0])
    assert s.n == 4 and s.mean == 2.5 and s.median == 2.5
    assert s.stdev == pytest.approx(1.2909944)
    # t(0.975, 3) = 3.182446; sem = 1.2909944 / 2
    assert s.ci_high - s.mean == pytest.approx(3.182446 * 1.2909944 / 2, rel=1e-6)
    assert s.cv == pytest.approx(1.2909944 / 2.5)


def test_single_sample_has_no_interval() -> None:
    s = summarize([5.0])
    assert s.stdev == 0 and s.ci_low == s.ci_high == 5.0
    assert math.isinf(s.ci_half_width_rel)


def test_harmonic_mean_for_rates() -> None:
    # 100 MB at 100 MB/s and 100 MB at 50 MB/s: 200 MB in 3 s = 66.7 MB/s.
    assert summarize([100.0, 50.0], "harmonic").mean == pytest.approx(200 / 3)


def test_empty_is_an_error() -> None:
    with pytest.raises(ValueError):
        summarize([])


@settings(deadline=None)  # a stall of the shared machine is no failure of the statistics
@given(st.lists(st.floats(min_value=1e-6, max_value=1e6), min_size=2, max_size=30))
def test_interval_contains_mean_and_bounds_hold(values: list[float]) -> None:
    s = summarize(values)
    assert s.min <= s.median <= s.max
    assert s.ci_low <= s.mean * (1 + 1e-9) and s.mean <= s.ci_high * (1 + 1e-9)
    assert s.stdev >= 0


# ---------------------------------------------------------------- outliers


def test_outliers_are_flagged_by_median_and_mad() -> None:
    # Article B's ReiserFS tar copy: 17 s, 17 s, 18 s, then 63 s.
    assert outliers([16.94, 17.1, 17.8, 63.48]) == (3,)
    assert outliers([10.0, 10.5, 9.8, 10.2, 10.1]) == ()


def test_outliers_need_three_samples_and_handle_zero_mad() -> None:
    assert outliers([1.0, 100.0]) == ()
    assert outliers([5.0, 5.0, 5.0]) == ()
    # More than half equal: MAD is 0, the mean absolute deviation stands in (it is
    # inflated by the outlier itself, so a lone one stands out only among many runs).
    assert outliers([5.0] * 14 + [50.0]) == (14,)
    assert outliers([5.0] * 6 + [50.0]) == ()


# ---------------------------------------------------------------- precision


# ---------------------------------------------------------------- comparing groups


def test_mann_whitney_cannot_name_a_winner_at_n_3() -> None:
    """Why Welch: the exact rank test's smallest p at 3 vs 3 is 0.1, even for disjoint samples."""
    assert sps.mannwhitneyu([1, 2, 3], [10, 11, 12]).pvalue == pytest.approx(0.1)
    assert ratio_test([10.0, 11.0, 12.0], [1.0, 2.0, 3.0]).p_value < 0.05


def test_ratio_test_on_logs_agrees_with_its_interval() -> None:
    a, b = [13.2, 13.0, 13.5, 13.1], [10.0, 10.1, 9.9, 10.2]
    t = ratio_test(a, b)
    assert t.method == "welch-log"

    def gm(xs: list[float]) -> float:
        return math.exp(statistics.fmean(math.log(x) for x in xs))

    assert t.ratio == pytest.approx(gm(a) / gm(b))
    assert t.low < t.ratio < t.high and t.low > 1 and t.p_value < 0.001
    # Same test as scipy's on log values.
    ref = sps.ttest_ind([math.log(x) for x in a], [math.log(x) for x in b], equal_var=False)
    assert t.p_value == pytest.approx(ref.pvalue)


def test_ratio_test_special_cases() -> None:
    exact = ratio_test([90.0, 90.0, 90.0], [80.0, 80.0, 80.0])
    assert exact.method == "exact" and exact.p_value == 0 and exact.ratio == pytest.approx(1.125)
    same = ratio_test([5.0, 5.0], [5.0, 5.0])
    assert same.p_value == 1
    assert math.isnan(ratio_test([1.0], [2.0, 3.0]).p_value)
    zeros = ratio_test([0.0, 1.0, 2.0], [5.0, 6.0, 7.0])
    assert zeros.method == "welch" and math.isnan(zeros.low) and zeros.ratio == pytest.approx(1 / 6)


def test_rank_overlapping_samples_are_a_tie() -> None:
    r = rank({"ext4": [10.0, 12.0, 11.0], "xfs": [11.5, 10.5, 12.5]}, higher_is_better=False)
    assert r.all_tied and set(r.winners) == {"ext4", "xfs"}
    assert not r.pairs[0].significant


def test_rank_clear_difference_names_the_winner_with_its_ratio() -> None:
    r = rank(
        {"ext3": [13.2, 13.0, 13.5], "xfs": [10.0, 10.1, 9.9], "jfs": [10.05, 9.95, 10.1]},
        higher_is_better=False,
    )
    assert r.order[-1] == "ext3" and set(r.winners) == {"xfs", "jfs"}
    pair = r.pair("xfs", "ext3")
    assert pair is not None and pair.better == "xfs" and pair.significant
    assert 1.2 < pair.low < pair.ratio < pair.high < 1.45
    assert pair.p_adjusted == pytest.approx(3 * pair.p_value)  # Bonferroni over three pairs


def test_rank_higher_is_better() -> None:
    r = rank({"a": [50.0, 51.0, 49.0], "b": [100.0, 101.0, 99.0]}, higher_is_better=True)
    assert r.winners == ("b",)
    pair = r.pairs[0]
    assert pair.better == "b" and pair.ratio == pytest.approx(2.0, rel=0.01)


def test_interval_of_a_positive_quantity_never_goes_below_zero() -> None:
    s = summarize([0.1, 0.1, 3.0])  # t interval of the mean: about -3.2 .. 5.3
    assert s.ci_low == 0.0 and s.ci_high > s.mean
    # The relative half-width (what adaptive repetitions test) is that of the uncut interval.
    assert s.ci_half_width_rel > 1.0
    assert summarize([-1.0, 1.0, 0.5]).ci_low < 0  # signed quantities keep their interval


def test_an_unbounded_interval_reads_unbounded() -> None:
    from fsarena.analysis.stats import instability

    s = summarize([100.0, 1.0, 900.0], "harmonic")  # the interval of 1/x reaches zero
    assert math.isinf(s.ci_half_width_rel)
    assert "unbounded" in instability("x", s, 0.1) and "inf" not in instability("x", s, 0.1)


def test_the_boundary_spends_little_early_and_most_at_the_last_look() -> None:
    """O'Brien-Fleming's shape: a claim at n of N looks needs z > C sqrt(N / n); one look
    (a fixed run) is a plain one-sided test at 1 - Phi(C)."""
    from scipy import stats as sps

    from fsarena.analysis.selection import Boundary

    sequential = Boundary(3.0, 10, True)
    levels = [float(sequential.alpha(n)) for n in range(3, 11)]
    assert levels == sorted(levels) and levels[0] < levels[-1] / 50
    assert levels[-1] == pytest.approx(float(sps.norm.sf(3.0)))
    assert float(Boundary(3.0, 3, False).alpha(3)) == pytest.approx(float(sps.norm.sf(3.0)))


def test_an_interval_too_wide_for_a_float_is_infinite_not_an_error() -> None:
    """A real default run under load crashed at n = 2 with df near 1 and a strict level."""
    from fsarena.analysis.ranking import detectable, robust_ratio_test

    test = robust_ratio_test([1.0, 40.0], [1.1, 1.2], confidence=1 - 1e-6)
    assert test.high == float("inf") and 0 <= test.low < test.ratio
    assert detectable(test.low, test.high) == float("inf")
