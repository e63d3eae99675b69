"""Tests for report.flags: "unstable" is flagged only where the noise left a comparison open."""

from __future__ import annotations

import re

from fsarena.report import build, prose
from fsarena.report.flags import unstable_banner
from tests.sessions import make_session


def _unstable(samples: dict[str, dict[str, list[float]]]) -> list[str]:
    comparison = build(make_session(samples))
    return [f"{f.task} {f.filesystem}" for f in comparison.flags if f.code == "unstable"]


def test_noise_that_left_the_comparison_open_is_flagged() -> None:
    noisy = {
        "ext4": {"iso_copy_in": [10.0, 12.5, 8.5, 11.0]},
        "xfs": {"iso_copy_in": [10.2, 10.4, 10.0, 10.3]},
    }
    assert _unstable(noisy) == ["iso_copy_in ext4"]


def test_noise_every_filesystem_shares_is_not_singled_out() -> None:
    # Both as noisy, the comparison open: the answer's "undecided" line says it once.
    shared = {
        "ext4": {"iso_copy_in": [10.0, 14.0, 7.0, 12.0]},
        "xfs": {"iso_copy_in": [9.0, 13.0, 7.5, 11.0]},
    }
    assert _unstable(shared) == []


def test_noise_under_a_clear_winner_is_not_flagged() -> None:
    # ext4's interval is ±30 %, yet xfs is faster beyond doubt: no verdict is open.
    decided = {
        "ext4": {"iso_copy_in": [10.0, 14.0, 7.0, 12.0, 9.0]},
        "xfs": {"iso_copy_in": [2.0, 2.02, 1.98, 2.01, 2.0]},
    }
    assert _unstable(decided) == []


def test_noise_below_what_matters_is_not_flagged() -> None:
    # mkfs of 2-5 ms: ±50 % is a few ms, below the 10 ms a person would choose on.
    tiny = {
        "ext4": {"mkfs": [0.002, 0.004, 0.005, 0.003]},
        "xfs": {"mkfs": [0.003, 0.002, 0.005, 0.004]},
    }
    assert _unstable(tiny) == []


def test_fixed_figures_are_never_flagged() -> None:
    exact = {
        "ext4": {"capacity_initial": [90.0, 95.0, 85.0]},
        "xfs": {"capacity_initial": [91.0] * 3},
    }
    assert _unstable(exact) == []


def test_one_banner_with_the_count_the_command_and_advice_per_result() -> None:
    noisy = {
        "ext4": {"iso_copy_in": [10.0, 12.5, 8.5, 11.0], "mkfs": [0.5, 0.62, 0.42, 0.55]},
        "xfs": {"iso_copy_in": [10.2, 10.4, 10.0, 10.3], "mkfs": [0.52, 0.53, 0.51, 0.52]},
    }
    comparison = build(make_session(noisy))
    banner = unstable_banner(comparison.tables, comparison.target_ci_pct, comparison.session)
    assert banner.startswith("2 result(s) too noisy")
    assert "Fix: the same command with `--repetitions " in banner
    (item,) = [i for i in prose.warnings(comparison) if i.title.startswith("unstable")]
    assert item.title == "unstable (2)" and item.text == banner
    mkfs = [d for d in item.details if d.startswith("mkfs")]
    assert mkfs and all("more rounds settle it" in d for d in mkfs)  # a sub-second task
    iso = [d for d in item.details if d.startswith("iso_copy_in")]
    assert iso and all("stop background I/O" in d for d in iso)


def test_the_banner_says_when_more_rounds_are_not_the_fix() -> None:
    wild = {
        "ext4": {"iso_copy_in": [10.0, 30.0, 3.0, 12.0]},
        "xfs": {"iso_copy_in": [10.0, 10.2, 9.9, 10.1]},
    }
    comparison = build(make_session(wild))
    banner = unstable_banner(comparison.tables, comparison.target_ci_pct, comparison.session)
    assert "More rounds are not the fix" in banner


def test_the_banners_rounds_are_the_largest_its_items_state() -> None:
    """One estimate for both (the review found a banner saying 'over 100' over items of
    13-38): at n = 2 the interval's t(1) quantile made the banner's figure explode."""
    noisy = {
        "ext4": {"iso_copy_in": [10.0, 12.5], "mkfs": [0.5, 0.65]},
        "xfs": {"iso_copy_in": [10.2, 10.4], "mkfs": [0.52, 0.53]},
    }
    comparison = build(make_session(noisy))
    banner = unstable_banner(comparison.tables, comparison.target_ci_pct, comparison.session)
    (item,) = [i for i in prose.warnings(comparison) if i.title.startswith("unstable")]
    stated = [int(m) for d in item.details for m in re.findall(r"about (\d+) repetitions", d)]
    assert stated, item.details
    assert f"`--repetitions {max(stated)}`" in banner
