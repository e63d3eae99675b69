"""Descriptive statistics."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fsarena.stats import summarize


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


@given(st.lists(st.floats(min_value=1e-6, max_value=1e6), min_size=2, max_size=30))
def test_interval_contains_mean_and_bounds_hold(values: list[float]) -> None:
    s = summarize(values)
    assert s.min <= s.median <= s.max
    assert s.ci_low <= s.mean * (1 + 1e-9) and s.mean <= s.ci_high * (1 + 1e-9)
    assert s.stdev >= 0
