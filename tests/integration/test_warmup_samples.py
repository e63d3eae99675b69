"""A decisive run at a tiny scale, as root: the warm-up round and the repeated short tasks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fsarena.session.file import load
from fsarena.tasks.lifecycle import SHORT_SAMPLES
from tests.integration.conftest import fsarena, leftovers, new_workdir


def test_warmup_round_and_multi_sample_short_tasks(tmp_path: Path) -> None:
    work = new_workdir()
    out = work / "session.json"
    try:
        result = fsarena(
            "run", "--fs", "ext4,xfs", "--scale", "0.002", "--seed", "5",
            "--max-repetitions", "3", "--workdir", str(work / "w"), "--output", str(out),
            check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert "one warm-up round" in result.stderr, "the run says what it will do first"
        session = load(out)
        assert session.status == "complete"
        # The warm-up: a whole round, repetition 0, kept apart from the samples.
        assert {(r.filesystem, r.repetition) for r in session.warmup} == {
            ("ext4", 0), ("xfs", 0)
        }  # fmt: skip
        assert all(r.status == "ok" for r in session.warmup)
        assert {r.repetition for r in session.runs} == {1, 2, 3}
        # mkfs, mount and umount timed SHORT_SAMPLES times per repetition, every one kept.
        for run in session.runs:
            assert run.status == "ok", (run.filesystem, run.task, run.error)
            if run.task in ("mkfs", "mount", "umount"):
                assert len(run.repeats) == SHORT_SAMPLES - 1
                assert all(m.exit_code == 0 and m.wall_s > 0 for m in run.repeats)
        # The device's ceiling once in full, in the warm-up, in the one direction article
        # A's tasks are judged in (write); a later round gets a drift check only when it
        # starts a minute or more after the last measurement (rounds here take seconds).
        full = [c for c in session.ceilings if c.kind == "full"]
        assert [(c.repetition, c.direction) for c in full] == [(0, "write")] * 2
        assert all(c.repetition in (1, 2, 3) for c in session.ceilings if c.kind == "drift")
        rounds = session.timing.rounds
        assert [r.warmup for r in rounds] == [True, False, False, False]
        assert all(0 < r.timed_s < r.wall_s for r in rounds)
        assert (session.timing.total_s or 0) > sum(r.wall_s for r in rounds)
        assert not leftovers(work)
    finally:
        subprocess.run(["rm", "-rf", str(work)], check=False)
