"""The time budget's decision to start another round: a forecast with a margin, and the reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.analysis.adaptive import next_round_fits, round_forecast
from fsarena.plan.model import make_plan
from fsarena.run.estimate import report_reserve
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import load, save
from tests.unit.test_adaptive import Jittery


def test_the_forecast_is_the_slowest_recent_round_plus_their_spread() -> None:
    assert round_forecast([]) == 0.0
    assert round_forecast([58.0]) == 58.0  # one round: no spread seen yet
    assert round_forecast([55.0, 61.0, 58.0]) == pytest.approx(61.0 + 6.0)
    assert round_forecast([200.0, 55.0, 61.0, 58.0]) == pytest.approx(67.0)  # the last three


def test_a_round_that_could_end_past_the_budget_is_not_started() -> None:
    # The defect (issue 14): 539 s in, rounds of 55-61 s; the slowest alone forecast 600 s,
    # so a round started, and one within the spread seen (61.9 s) ended at 600.9 s.
    walls = [55.0, 61.0, 58.0]
    assert 539.0 + max(walls) <= 600.0  # what the old rule allowed
    assert not next_round_fits(539.0, walls, 600.0)
    assert next_round_fits(533.0, walls, 600.0)  # 533 + 67 = 600: ends at the budget
    assert next_round_fits(10_000.0, walls, None)  # no budget: always


def test_the_reports_after_the_last_round_count_against_the_budget() -> None:
    walls = [50.0, 50.0, 50.0]
    assert next_round_fits(500.0, walls, 600.0, reserve_s=13.0)
    assert not next_round_fits(500.0, walls, 600.0, reserve_s=51.0)


def test_the_runner_keeps_the_reserve_out_of_its_rounds(tmp_path: Path) -> None:
    # Rounds of 100 s (2 filesystems x 25 timed executions of 1 s and 3 s): in 450 s,
    # four rounds fit with nothing after them, three when the reports need 60 s.
    def rounds(reserve_s: float) -> int:
        plan = make_plan("article-a-2006", ["ext4", "xfs"], 3, 0.001, 7, str(tmp_path / "w"),
                         target_ci_pct=1.0, max_repetitions=10, time_budget_s=450.0)  # fmt: skip
        ex = Jittery([1.0, 3.0])
        path = tmp_path / f"s{reserve_s:.0f}.json"
        session = new_session(plan, {}, {})
        Runner(
            plan,
            ex,
            session,
            path,
            "tmpfs",
            clock=lambda: ex.now_s,
            reserve_s=reserve_s,
            datasets=ex.datasets,
        ).run()
        assert ex.now_s + reserve_s <= 450.0
        return len(load(path).order)

    assert rounds(0.0) == 4
    assert rounds(60.0) == 3


def test_the_reserve_is_the_newest_recorded_report_time(tmp_path: Path) -> None:
    assert report_reserve(tmp_path) == 0.0  # nothing recorded yet
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    session = new_session(plan, {}, {})
    session.status = "complete"  # a running session's figures are not read
    save(session, tmp_path / "a.json")  # an older session without the figure
    assert report_reserve(tmp_path) == 0.0
    session.timing.report_s = 12.5
    save(session, tmp_path / "b.json")
    assert report_reserve(tmp_path) == 12.5


def test_a_first_run_estimate_is_the_bytes_written_at_the_measured_ceiling(tmp_path: Path) -> None:
    from fsarena.run.firstrun import first_run_estimate, written_per_sequence

    plan = make_plan("article-a-2006", ["ext4", "xfs"], 3, 0.5, 7, str(tmp_path / "w"),
                     decisive=True, time_budget_s=600, warmup_rounds=1)  # fmt: skip
    specs = plan.dataset_specs()
    # iso_copy_in and _within write the ISO, tree_copy_in and _within the tree; the
    # listing, find, deletes and the lifecycle write no dataset.
    written = 2 * specs["iso"].total_bytes + 2 * specs["tree"].total_bytes
    assert written_per_sequence(plan) == written
    text = first_run_estimate(plan, 1e9)
    per_round = written * 2 / 1e9  # 2 filesystems at 1 GB/s
    # With a budget, the budget leads: the lower bound from the writes alone is far below it.
    assert text.startswith("rough first-run estimate: up to the 10 min budget")
    assert f"a lower bound: at least {per_round * 4:.0f} s for 4 rounds, " in text
    assert f"rounds, {per_round:.0f} s each" in text
    assert "1,000 MB/s measured just now by fio" in text


def test_a_first_run_prints_its_rough_estimate_once_the_ceiling_is_known(tmp_path: Path) -> None:
    from tests.fakes import FakeExecutor

    plan = make_plan("article-a-2006", ["ext4"], 2, 0.001, 7, str(tmp_path / "w"))
    events: list[str] = []
    ex = FakeExecutor()
    Runner(plan, ex, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs",
           lambda e: events.append(e.message), first_estimate=True,
           datasets=ex.datasets).run()  # fmt: skip
    told = [e for e in events if e.startswith("time: rough first-run estimate")]
    assert len(told) == 1  # once, after the first round's ceiling; later rounds say nothing
    ceilings = [i for i, e in enumerate(events) if e.startswith("device ceiling")]
    # Right after the 2 fio passes (article A judges writes only) and the page cache's read.
    assert len(ceilings) == 2
    assert events[ceilings[1] + 1].startswith("page cache read of the device: ")
    assert events.index(told[0]) == ceilings[1] + 2
    # Then, after the first whole round, the time at its measured pace (once).
    paced = [e for e in events if e.startswith("time: the first round took")]
    assert len(paced) == 1 and "the 1 planned round ends about" in paced[0]


def test_the_paced_estimate_is_the_first_rounds_wall_times_the_rounds_left(
    tmp_path: Path,
) -> None:
    from fsarena.run.firstrun import paced_estimate

    plan = make_plan("article-a-2006", ["ext4"], 3, 0.5, 7, str(tmp_path / "w"),
                     decisive=True, time_budget_s=600, warmup_rounds=1)  # fmt: skip
    # 75 s in, after a warm-up of 70 s: 3 measured rounds at 70 s end at 285 s = 5 min.
    text = paced_estimate(plan, 75.0, 70.0, 3)
    assert text.startswith("the first round took 70 s: at that pace the 3 planned rounds end")
    assert "end about 5 min after the start" in text and "within the 10 min budget" in text
    assert "more rounds only while undecided (up to 10)" in text
    assert "end about 10 min" in paced_estimate(plan, 75.0, 200.0, 3)  # the budget caps it


def test_a_run_whose_first_round_was_its_last_says_no_planned_round_is_left(
    tmp_path: Path,
) -> None:
    """Seen at -n 1: 'at that pace the 0 planned round(s) end about 13 s after the start'."""
    from fsarena.run.firstrun import paced_estimate

    plan = make_plan("article-a-2006", ["ext4"], 1, 0.5, 7, str(tmp_path / "w"))
    told = paced_estimate(plan, 13.0, 13.0, 0)
    assert told == "the first round took 13 s; no planned round is left"
