"""The answer of a tune, and the stopping rule's reason, as every report shows them.

A tune's answer says, per filesystem swept, what to do (use a configuration shown faster
than the defaults, or keep the defaults, as good as anything within X %, X read from the
intervals), the trade of space for time, each configuration's time and space beside the
defaults', and which configurations were eliminated after which round. Every figure is
the decision's (analysis.decision) or compsize's, read back here from the real answer.
Every run records why it took no more rounds (Session.stop) and every format shows it.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fsarena.analysis.verdicts import Verdicts
from fsarena.host.executor import SpaceInfo
from fsarena.measure.collect import Command, Timed
from fsarena.plan.model import make_plan
from fsarena.report import html, markdown, text
from fsarena.report import json as json_report
from fsarena.report.comparison import build
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load
from fsarena.session.records import DropRecord, RaceRecord, StopRecord
from tests.decision_model import KIND_TASKS, timed_run
from tests.fakes import FakeExecutor
from tests.race_model import RaceScenario, empty_session

SPACE = "compsize_disk_added_bytes"
MIB = 1 << 20


def _session(
    times: tuple[tuple[float, ...], ...],
    sd: float,
    rounds: int,
    seed: int = 1,
    space_mb: Mapping[str, float] | None = None,
) -> Session:
    """A tune of one filesystem ("fs", its configurations fs-c1 ...): configuration i takes
    times[i][k] x the base on kind k, with log-normal noise SD, every configuration every
    round; space_mb: what each configuration's copies added on disk (compsize), per task."""
    s = RaceScenario(times, race=True)
    session = empty_session(s)
    rng = random.Random(seed)
    for rep in range(1, rounds + 1):
        session.order.append(list(s.names))
        for name, t in zip(s.names, times, strict=True):
            for k, kind in enumerate(s.kinds):
                for task in KIND_TASKS[kind]:
                    run = timed_run(name, task, rep, t[k] * rng.lognormvariate(0.0, sd))
                    if space_mb and task.endswith("copy_in") and run.measurement:
                        added = {SPACE: space_mb[name] * 1e6}
                        run.measurement = replace(run.measurement, extra=added)
                    session.runs.append(run)
    return session


def _verdicts(session: Session) -> Verdicts:
    verdicts = build(session).verdicts
    assert verdicts is not None and verdicts.decision is not None
    return verdicts


def _tune(session: Session) -> tuple[str, ...]:
    return _verdicts(session).answer.tune


def test_keep_the_defaults_as_good_as_anything_within_a_measured_x() -> None:
    session = _session(((1.0,), (1.0,), (1.0,), (1.0,)), 0.005, 6)
    verdicts = _verdicts(session)
    first = verdicts.answer.tune[0]
    found = re.search(
        r"^fs: keep the defaults \(fs\): as good as anything here on large files, within "
        r"([\d.]+) % \(n = 6\)$",
        first,
    )
    assert found, first
    # X is the farthest advantage over the defaults any configuration's interval allows:
    # the decision's own intervals (configuration's time / the defaults').
    work = verdicts.decision.workload  # type: ignore[union-attr]
    lows = []
    for c in ("fs-c1", "fs-c2", "fs-c3"):
        pair = work.ranking.pair(c, "fs")
        assert pair is not None
        lows.append(pair.low if pair.better == "fs" else 1 / pair.high)
    widest = max(1 / low - 1 for low in lows)
    assert float(found.group(1)) == pytest.approx(100 * widest, rel=0.05)  # two digits
    assert 0 < widest <= 0.05


def test_a_configuration_shown_faster_is_the_action_with_its_interval() -> None:
    session = _session(((1.0,), (1.0,), (0.8,), (1.1,)), 0.02, 6)
    tune = _tune(session)
    found = re.search(
        r"^fs: use fs-c2: ([\d.]+)× faster than the defaults on large files "
        r"\(([\d.]+)–([\d.]+)×, n = 6\)$",
        tune[0],
    )
    assert found, tune[0]
    ratio, low, high = (float(g) for g in found.groups())
    assert low <= ratio <= high
    assert low <= 1.25 <= high  # the truth: 1 / 0.8
    # Its own line says the same, and the slower one is said slower, with its interval.
    assert any(line.startswith(f"fs-c2: {ratio:.2f}× faster than the defaults") for line in tune)
    slower = next(line for line in tune if line.startswith("fs-c3: "))
    assert re.match(r"fs-c3: [\d.]+× slower than the defaults on large files \(", slower)


def test_nothing_shown_says_how_much_better_remains_possible() -> None:
    session = _session(((1.0,), (1.0,), (0.95,)), 0.3, 3)
    first = _tune(session)[0]
    assert first.startswith(
        "fs: keep the defaults (fs) for now: no configuration shown faster on large files"
    ), first
    found = re.search(r"up to ([\d.]+ %|[\d.]+×|100× or more) faster remains possible", first)
    assert found and first.endswith("remains possible (n = 3)"), first


def test_the_space_a_configuration_saves_is_the_trade_on_the_first_line() -> None:
    """fs-c1 takes a fifth of the defaults' space and is 1.3x slower on large files: the
    first line no longer says only that nothing is faster; it says the trade."""
    times = ((1.0, 1.0), (1.3, 1.0), (1.0, 1.0))
    space = {"fs": 95.1, "fs-c1": 19.02, "fs-c2": 95.1}
    tune = _tune(_session(times, 0.01, 6, space_mb=space))
    first = tune[0]
    assert first.startswith("fs: keep the defaults (fs)"), first
    found = re.search(
        r"The trade: fs-c1: 80 % less space, ([\d.]+)× slower than the defaults on large "
        r"files \(([\d.]+)–([\d.]+)×, n = 6\)$",
        first,
    )
    assert found, first
    ratio, low, high = (float(g) for g in found.groups())
    assert low <= 1.3 <= high and low <= ratio <= high
    # Each configuration's line: its time and space beside the defaults'.
    assert "fs: the defaults; 190 MB on disk for the files the writing tasks added" in tune[2]
    line = next(line for line in tune if line.startswith("fs-c1: "))
    assert re.search(
        r"slower than the defaults for your workload \([\d.]+–[\d.]+×, n = 6\); "
        r"80 % less space \(38 MB against 190 MB, compsize\)$",
        line,
    ), line
    same = next(line for line in tune if line.startswith("fs-c2: "))
    assert same.endswith("the same space (190 MB against 190 MB, compsize)"), same
    # No configuration saves space: no trade is said.
    plain = _tune(_session(times, 0.01, 6, space_mb={k: 95.1 for k in space}))
    assert "The trade" not in plain[0]


def test_eliminated_configurations_are_named_with_the_round_and_why() -> None:
    session = _session(((1.0,), (1.0,), (2.0,)), 0.02, 6)
    behind = {"family": "workload", "leader": "fs-c1", "ratio": 2.04, "low": 1.7, "high": 2.4}
    drop = DropRecord(configuration="fs-c2", after_rounds=4, defaults="fs", behind=[behind],
                      level=0.0004, text="fs-c2 eliminated after 4 rounds")  # fmt: skip
    session.race = RaceRecord(drops=[drop])
    for rep in (5, 6):  # not measured after its elimination
        session.order[rep - 1].remove("fs-c2")
    session.runs = [r for r in session.runs if not (r.filesystem == "fs-c2" and r.repetition > 4)]
    tune = _tune(session)
    assert tune[1] == "eliminated (not measured after): fs-c2 after 4 rounds"
    line = next(line for line in tune if line.startswith("fs-c2: "))
    assert line.startswith(
        "fs-c2: eliminated after 4 rounds: 2.04× the time of fs-c1 on large files "
        "(1.70–2.40×, a one-sided 0.04 % claim), not measured after; "
    ), line
    assert re.search(r"[\d.]+× slower than the defaults on large files \([\d.]+–[\d.]+×, n = 4\)$",
                     line), line  # fmt: skip
    none = _tune(_session(((1.0,), (1.0,)), 0.02, 6))
    assert none[1].startswith("eliminated: none in 6 rounds"), none


def test_a_tune_shows_its_answer_and_stop_in_every_format() -> None:
    session = _session(((1.0,), (1.0,), (0.8,), (1.1,)), 0.02, 6)
    session.stop = StopRecord(code="budget", text="stopped after 6 rounds: the time budget")
    comparison = build(session)
    tune = comparison.verdicts.answer.tune  # type: ignore[union-attr]
    outputs = {
        "text": text.render(comparison, 200),
        "markdown": markdown.render(comparison),
        "html": html.render(comparison),
    }
    for name, out in outputs.items():
        flat = " ".join(out.split())
        for line in tune:
            assert line in flat, (name, line)
        assert "stopped after 6 rounds: the time budget" in flat, name
    summary = json.loads(json_report.render(comparison))
    assert summary["answer"]["tune"] == list(tune)
    assert summary["answer"]["stopped"].startswith("stopped after 6 rounds")
    import jsonschema

    schema = json.loads((Path(json_report.__file__).parent / json_report.SCHEMA_FILE).read_text())
    jsonschema.validate(summary, schema)


# ---------------------------------------------------------------- the real runner


class Configured(FakeExecutor):
    """Wall times per configuration (the one last mounted: its mountpoint is named after
    it), log-normal and seeded; compsize's figures per configuration, growing with each
    writing task (what a task added is the difference)."""

    def __init__(self, walls: Mapping[str, float], sd: float, seed: int,
                 disk_mb: Mapping[str, float] | None = None) -> None:  # fmt: skip
        super().__init__()
        self.walls, self.sd, self.disk_mb = walls, sd, disk_mb or {}
        self.rng = random.Random(seed)
        self.current = ""
        self.written: dict[str, int] = {}

    def call_effects(self, argv: Sequence[str]) -> None:
        super().call_effects(argv)
        if argv[0] == "mount":
            self.current = Path(argv[-1]).name
            self.written[self.current] = 0

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        if "fio" not in commands[0].argv[:6] and self.current in self.walls:
            self.wall_s = self.walls[self.current] * self.rng.lognormvariate(0.0, self.sd)
        return super().measure(commands, device, timeout_s)

    def output(self, argv: Sequence[str]) -> str:
        if argv[-1] == "command -v compsize || true":
            return "/usr/bin/compsize\n"
        if "compsize" in argv:
            self.written[self.current] = self.written.get(self.current, 0) + 1
            mb = self.disk_mb.get(self.current, 100.0) * self.written[self.current]
            full = 100.0 * self.written[self.current]
            return (f"Type Perc Disk Usage Uncompressed Referenced\n"
                    f"TOTAL {round(100 * mb / full)}% {int(mb * 1e6)} {int(full * 1e6)} "
                    f"{int(full * 1e6)}\n")  # fmt: skip
        return super().output(argv)


def _tune_run(
    tmp_path: Path, options: list[str], walls: Mapping[str, float], seed: int = 3,
    disk_mb: Mapping[str, float] | None = None, **plan: Any,
) -> Session:  # fmt: skip
    """`fsarena tune --fs btrfs --options ...` through the real planning, Runner and answer,
    with a fake executor whose times (and compsize figures) are per configuration."""
    from fsarena.plan.tuning import sweep

    suite = tmp_path / "one.toml"
    suite.write_text('name = "one"\ntasks = ["mkfs", "mount", "iso_copy_in", "umount"]\n'
                     '[weights]\nlarge_files = 1\n')  # fmt: skip
    swept = sweep(str(suite), ["btrfs"], options)
    groups = {"btrfs": swept.filesystems}
    made = make_plan(swept.suite, swept.filesystems, 3, 0.001, seed, str(tmp_path / "w"),
                     decisive=True, tune=groups, race=True, warmup_rounds=1,
                     time_budget_s=36000.0, **plan)  # fmt: skip
    path = tmp_path / "s.json"
    executor = Configured(walls, 0.02, seed, disk_mb)
    Runner(
        made, executor, new_session(made, {}, {}), path, "tmpfs", datasets=executor.datasets
    ).run()
    return load(path)


def test_a_tune_eliminates_a_configuration_clearly_behind_and_never_the_defaults(
    tmp_path: Path,
) -> None:
    """The defaults twice as slow as two configurations, and a third configuration three
    times as slow as them: the slow configuration is eliminated and not measured after;
    the defaults, shown behind as well, are kept to the end (what every margin is
    measured against), and the warm-up ran the defaults alone."""
    walls = {"btrfs": 2.0, "btrfs-noatime": 1.0, "btrfs-lazytime": 1.0,
             "btrfs-compress-zlib": 3.0}  # fmt: skip
    session = _tune_run(tmp_path, ["noatime", "lazytime", "compress=zlib"], walls,
                        max_repetitions=8)  # fmt: skip
    assert {r.filesystem for r in session.warmup} == {"btrfs"}
    assert session.race is not None
    drops = {d.configuration: d.after_rounds for d in session.race.drops}
    assert "btrfs-compress-zlib" in drops and "btrfs" not in drops
    after = drops["btrfs-compress-zlib"]
    assert 3 <= after < len(session.order)
    for rep, order in enumerate(session.order, start=1):
        assert ("btrfs-compress-zlib" in order) == (rep <= after)
        assert "btrfs" in order
    tune = _verdicts(session).answer.tune
    assert tune[0].startswith("btrfs: use btrfs-"), tune[0]
    assert f"btrfs-compress-zlib after {after} rounds" in tune[1]
    line = next(line for line in tune if line.startswith("btrfs-compress-zlib: "))
    assert line.startswith(f"btrfs-compress-zlib: eliminated after {after} rounds: ")
    assert "btrfs: eliminated" not in " ".join(tune)


def test_weighing_space_decides_on_space_beside_time(tmp_path: Path) -> None:
    """--weigh space=1 through the real answer: the space kind's values are capacity
    figures, the same every round (exact): equal capacity is "no difference that
    matters", and the workload of time and space reads "better", not "faster"."""
    suite = tmp_path / "space.toml"
    suite.write_text('name = "space"\ntasks = ["mkfs", "mount", "capacity_initial", '
                     '"iso_copy_in", "umount"]\n')  # fmt: skip
    from fsarena.plan.tuning import sweep

    swept = sweep(str(suite), ["btrfs"], ["noatime"])
    made = make_plan(swept.suite, swept.filesystems, 3, 0.001, 5, str(tmp_path / "w"),
                     decisive=True, tune={"btrfs": swept.filesystems}, race=True,
                     max_repetitions=4, time_budget_s=36000.0,
                     weights={"space": 1.0, "large_files": 1.0})  # fmt: skip
    path = tmp_path / "s.json"
    walls = {"btrfs": 1.0, "btrfs-noatime": 1.0}
    ex = Configured(walls, 0.02, 5)
    Runner(made, ex, new_session(made, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    verdicts = build(load(path)).verdicts
    assert verdicts is not None and verdicts.decision is not None
    assert set(verdicts.decision.kinds) == {"space", "large_files"}
    space = next(k for k in verdicts.answer.kinds if k.kind == "space")
    assert space.weight == 1.0 and space.status == "equal", space
    assert space.text.startswith("no difference that matters between btrfs and btrfs-noatime")
    assert "weights: large files 1, space efficiency 1" in verdicts.answer.recommendation
    tune = verdicts.answer.tune
    line = next(line for line in tune if line.startswith("btrfs-noatime: "))
    assert "the defaults for your workload" in line and "faster" not in line, line


class Spaced(Configured):
    """Capacity per filesystem (the one mounted at MOUNTPOINT): the same every round."""

    def __init__(self, free_mib: Mapping[str, int], seed: int) -> None:
        super().__init__({}, 0.02, seed)
        self.free_mib = free_mib

    def space(self, mountpoint: str) -> SpaceInfo:
        free = self.free_mib[Path(mountpoint).name] * MIB
        return SpaceInfo(1000 * MIB, free, free)


def test_weighing_space_works_in_a_run_too(tmp_path: Path) -> None:
    """`fsarena run --weigh space=1,large_files=1`: xfs leaves 95 % of its device
    available, ext4 90 %, every round: the space kind names xfs by exactly that ratio,
    and the workload weighs it beside the (equal) times."""
    suite = tmp_path / "space.toml"
    suite.write_text('name = "space"\ntasks = ["mkfs", "mount", "capacity_initial", '
                     '"iso_copy_in", "umount"]\n')  # fmt: skip
    made = make_plan(str(suite), ["ext4", "xfs"], 3, 0.001, 5, str(tmp_path / "w"),
                     decisive=True, max_repetitions=4, time_budget_s=36000.0,
                     weights={"space": 1.0, "large_files": 1.0})  # fmt: skip
    path = tmp_path / "s.json"
    executor = Spaced({"ext4": 900, "xfs": 950}, 5)
    Runner(
        made, executor, new_session(made, {}, {}), path, "tmpfs", datasets=executor.datasets
    ).run()
    answer = _verdicts(load(path)).answer
    space = next(k for k in answer.kinds if k.kind == "space")
    assert space.weight == 1.0 and space.status == "win" and space.winners == ("xfs",)
    assert space.ratio == pytest.approx(95 / 90) and space.low == space.high == space.ratio
    assert "(weights: large files 1, space efficiency 1)" in answer.recommendation


def test_compsize_figures_recorded_by_the_runner_make_the_trade(tmp_path: Path) -> None:
    """The space in the answer is what the runner recorded from compsize for each writing
    task (run/space.py): a configuration taking a fifth of the defaults' space is said to
    save 80 %, beside its time."""
    walls = {"btrfs": 1.0, "btrfs-compress-zstd-1": 1.3}
    disk = {"btrfs": 100.0, "btrfs-compress-zstd-1": 20.0}
    session = _tune_run(tmp_path, ["compress=zstd:1"], walls, disk_mb=disk, max_repetitions=4)
    values = {r.value(SPACE) for r in session.runs if r.task == "iso_copy_in"}
    assert values == {100e6, 20e6}
    tune = _verdicts(session).answer.tune
    assert "The trade: btrfs-compress-zstd-1: 80 % less space, " in tune[0], tune[0]
    line = next(line for line in tune if line.startswith("btrfs-compress-zstd-1: "))
    assert line.endswith("80 % less space (20 MB against 100 MB, compsize)"), line


# ---------------------------------------------------------------- the stopping rule's reason


def _run(
    tmp_path: Path, repetitions: int = 3, clock: Callable[[], float] | None = None, **plan: Any
) -> Session:
    made = make_plan("article-a-2006", ["ext4", "xfs"], repetitions, 0.001, 3,
                     str(tmp_path / "w"), **plan)  # fmt: skip
    path = tmp_path / "s.json"
    ex = FakeExecutor()
    runner = Runner(made, ex, new_session(made, {}, {}), path, "tmpfs", datasets=ex.datasets)
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
