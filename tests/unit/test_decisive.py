"""The decisive default run: rounds until every verdict is decided, within the budget;
the warm-up round kept apart; short tasks timed several times per repetition."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from fsarena.analysis.adaptive import undecided
from fsarena.analysis.evidence import Index
from fsarena.measure.collect import Command, Timed
from fsarena.plan.model import make_plan
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load
from tests.fakes import FakeExecutor


class PerFilesystem(FakeExecutor):
    """Wall times per filesystem (the one the last mkfs made), with seeded relative noise."""

    def __init__(self, walls: Mapping[str, float], noise: float, seed: int = 1) -> None:
        super().__init__()
        self.walls, self.noise = walls, noise
        self.rng = random.Random(seed)
        self.current = ""
        self.now_s = 0.0
        self.stall_next = False

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        argv0 = commands[0].argv[0]
        if argv0.startswith("mkfs."):
            self.current = argv0.removeprefix("mkfs.")
        if "fio" not in commands[0].argv[:6]:  # fio, or the page-cache read's shell
            self.wall_s = self.walls[self.current] * (1 + self.rng.uniform(-1, 1) * self.noise)
            if self.stall_next:
                self.wall_s, self.stall_next = self.wall_s * 4, False
            self.now_s += self.wall_s
        return super().measure(commands, device, timeout_s)


def _run(tmp_path: Path, ex: PerFilesystem, reps: int = 3, **options: object) -> Session:
    plan = make_plan("article-a-2006", ["ext4", "xfs"], reps, 0.001, 7, str(tmp_path / "w"),
                     decisive=True, **options)  # fmt: skip
    path = tmp_path / "s.json"
    Runner(
        plan,
        ex,
        new_session(plan, {}, {}),
        path,
        "tmpfs",
        clock=lambda: ex.now_s,
        datasets=ex.datasets,
    ).run()
    return load(path)


def test_a_clear_difference_is_decided_early(tmp_path: Path) -> None:
    # 30 % apart, 2 % noise: the first looks' O'Brien-Fleming boundary on a paired t of
    # 2 degrees of freedom asks t > 60 at 3 rounds; at 4 this pair passes it.
    session = _run(tmp_path, PerFilesystem({"ext4": 1.3, "xfs": 1.0}, noise=0.02),
                   max_repetitions=8)  # fmt: skip
    assert len(session.order) == 4
    assert undecided(session) == []
    assert not [w for w in session.warnings if w.code == "undecided"]
    assert session.stop is not None and session.stop.code == "decided"


def test_an_undecided_tie_gets_rounds_up_to_the_maximum(tmp_path: Path) -> None:
    session = _run(tmp_path, PerFilesystem({"ext4": 1.0, "xfs": 1.0}, noise=0.3),
                   max_repetitions=6)  # fmt: skip
    assert len(session.order) == 6
    (left,) = undecided(session)
    assert set(left.tied) == {"ext4", "xfs"}
    # One banner: what is not settled, what they could not rule out, one command.
    (banner,) = [w.message for w in session.warnings if w.code == "undecided"]
    assert banner.startswith("not settled after 6 rounds: the best for this workload (")
    assert "`fsarena run --time-budget " in banner or "More rounds are not the fix" in banner


def test_the_budget_bounds_the_whole_run(tmp_path: Path) -> None:
    # 2 filesystems x 25 timed executions of about 1 s: a round is about 50 s. After
    # two rounds (~100 s) a third would pass 120 s: the budget cuts the plan's 3 short.
    ex = PerFilesystem({"ext4": 1.0, "xfs": 1.0}, noise=0.3)
    session = _run(tmp_path, ex, time_budget_s=120.0)
    assert len(session.order) == 2
    assert ex.now_s <= 120.0
    rounds = session.timing.rounds
    assert [r.repetition for r in rounds] == [1, 2]
    assert all(r.timed_s > 0 and r.wall_s >= r.timed_s for r in rounds)
    assert session.timing.total_s == pytest.approx(ex.now_s)


def test_warmup_round_is_kept_apart_and_never_a_sample(tmp_path: Path) -> None:
    ex = PerFilesystem({"ext4": 1.3, "xfs": 1.0}, noise=0.02)
    ex.stall_next = True  # the warm-up's first timed execution stalls (4x)
    session = _run(tmp_path, ex, warmup_rounds=1, max_repetitions=3)
    assert {r.repetition for r in session.warmup} == {0}
    assert len(session.warmup) == 2 * len(session.tasks())
    assert 0 not in {r.repetition for r in session.runs}
    assert [r.warmup for r in session.timing.rounds] == [True, False, False, False]
    # The warm-up's copies are not verified; every real round's are.
    assert not any(r.checks for r in session.warmup)
    assert any(r.checks for r in session.runs)
    index = Index(session)
    assert sorted(index.samples("ext4", "mkfs", "wall_s")) == [1, 2, 3]
    assert undecided(session) == []


def test_short_tasks_keep_every_sample_and_judge_on_their_median(tmp_path: Path) -> None:
    session = _run(tmp_path, PerFilesystem({"ext4": 1.3, "xfs": 1.0}, noise=0.02),
                   max_repetitions=3)  # fmt: skip
    by_task = {r.task: r for r in session.runs if r.repetition == 1 and r.filesystem == "xfs"}
    assert [len(by_task[t].repeats) for t in ("mkfs", "mount", "umount")] == [4, 4, 4]
    assert len(by_task["tree_find_pattern"].repeats) == 2
    assert by_task["iso_copy_in"].repeats == []
    run = by_task["mount"]
    walls = sorted(m.wall_s for m in [*run.repeats, run.measurement] if m is not None)
    assert run.value("wall_s") == walls[2]
    assert run.timed_s == pytest.approx(sum(walls))


def test_the_announcement_uses_measured_whole_rounds(tmp_path: Path) -> None:
    from fsarena.run.estimate import estimate

    ex = PerFilesystem({"ext4": 1.0, "xfs": 1.0}, noise=0.3)
    session = _run(tmp_path, ex, max_repetitions=3)
    per_round = sum(r.wall_s for r in session.timing.rounds) / 3
    plan = make_plan("article-a-2006", ["ext4", "xfs"], 3, 0.001, 7, str(tmp_path / "w"),
                     decisive=True, time_budget_s=2 * per_round, warmup_rounds=1)  # fmt: skip
    text = estimate(plan, tmp_path)
    assert text.startswith("about 3 min for 4 rounds of ")  # 4 rounds of about 50 s
    assert f"rounds of {per_round:.0f} s each" in text
    assert "PAST the" in text and "too few to decide" in text


def test_a_suite_file_that_states_its_repetitions_is_a_fixed_run(tmp_path: Path) -> None:
    """`repetitions = 1` in the user's own file means 1, as --repetitions 1 does."""
    from fsarena.cli.running import _sets_repetitions

    stated = tmp_path / "mine.toml"
    stated.write_text('name = "mine"\nrepetitions = 1\ntasks = ["mkfs", "mount", "umount"]\n')
    unstated = tmp_path / "theirs.toml"
    unstated.write_text('name = "theirs"\ntasks = ["mkfs", "mount", "umount"]\n')
    assert _sets_repetitions(str(stated))
    assert not _sets_repetitions(str(unstated))
    assert not _sets_repetitions("article-a-2006")  # a built-in's count is where it starts


def test_the_default_run_announces_its_scale_and_why(tmp_path: Path) -> None:
    from fsarena.cli.running import _announce

    plan = make_plan("article-a-2006", None, None, None, 7, str(tmp_path / "w"),
                     decisive=True, time_budget_s=600, warmup_rounds=1)  # fmt: skip
    assert plan.scale == 0.5  # the suite's default
    text = _announce(plan)
    assert "datasets at scale 0.5, so that rounds stay short enough" in text
    assert "--scale: larger datasets, fewer rounds" in text
