"""fsarena's own time per phase (run/owntime.py): the stopwatch, and a round's record of it.

The runner is driven by a fake executor on a simulated clock: every untimed helper
costs HELPER_S, every timed region its wall time plus LAUNCH_S of starting and
collecting it, fio and a session save nothing. Each round's phases must then be
exactly what its calls cost, and add up to its wall time outside the timed tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from fsarena.measure.collect import Command, Timed
from fsarena.plan.model import make_plan
from fsarena.run.new_session import new_session
from fsarena.run.owntime import PHASES, OwnTime
from fsarena.run.runner import Runner
from fsarena.session.file import load
from fsarena.targets.ceiling import DRIFT_EVERY_S
from tests.fakes import FakeExecutor

HELPER_S = 0.01  # an untimed mount, umount, mkdir-free helper (executor.call)
LAUNCH_S = 0.002  # around each timed region, outside the command's own time
FIO_S = 0.5  # each fio run of the device's ceiling


class Clocked(FakeExecutor):
    """The fake executor on a simulated clock: what each call costs is set above."""

    def __init__(self) -> None:
        super().__init__()
        self.now_s = 0.0

    def call(self, argv: Sequence[str]) -> None:
        self.now_s += HELPER_S
        super().call(argv)

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        fio = "fio" in commands[0].argv[:6]
        self.now_s += FIO_S if fio else self.wall_s + LAUNCH_S
        return super().measure(commands, device, timeout_s)


def test_nested_phases_are_charged_once() -> None:
    now = [0.0]
    own = OwnTime(lambda: now[0])
    with own.phase("verify"):
        now[0] += 1.0
        with own.phase("cold"):
            now[0] += 0.25
        now[0] += 0.5
    own.move("verify", "timed", 0.5)
    assert own.take() == {"verify": 1.0, "cold": 0.25, "timed": 0.5}
    assert own.take() == {}  # taken: the next round starts from nothing


@pytest.mark.parametrize("wall_s", [1.0, 3.0])
def test_each_round_records_its_own_time_per_phase(tmp_path: Path, wall_s: float) -> None:
    # Rounds of 27 s (timed tasks of 1 s) share round 1's ceiling; rounds of 77 s (3 s)
    # start more than DRIFT_EVERY_S after it, and each gets its drift check.
    plan = make_plan("article-a-2006", ["ext4"], 2, 0.001, 7, str(tmp_path / "w"))
    ex = Clocked()
    ex.wall_s = wall_s
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
    session = load(path)
    rounds = session.timing.rounds
    drift = wall_s * 25 > DRIFT_EVERY_S
    assert [c.repetition for c in session.ceilings if c.kind == "drift"] == [2] * drift
    assert [r.repetition for r in rounds] == [1, 2]
    for r in rounds:
        own = r.own_s
        assert set(own) <= set(PHASES)
        # The cold cycle of a mounted filesystem is an umount and a mount, before each of
        # the 11 timed tasks that find it mounted (tree_find_pattern's 3 samples included).
        assert own["cold"] == pytest.approx(11 * 2 * HELPER_S)
        # mount's and umount's samples, 5 each, undone untimed 4 times each.
        assert own["samples"] == pytest.approx(8 * HELPER_S)
        timed_regions = 5 + 5 + 7 + 3 + 5  # mkfs, mount, 7 writing tasks, find, umount
        assert own["launch"] == pytest.approx(timed_regions * LAUNCH_S)
        # Round 1: fio writes twice (article A judges no read) and reads the page cache.
        fio_runs = 3 if r.repetition == 1 else int(drift)
        assert own["ceiling"] == pytest.approx(fio_runs * FIO_S)
        # Everything outside the timed tasks is in a phase: nothing left over.
        assert sum(own.values()) == pytest.approx(float(r.wall_s) - float(r.timed_s))
