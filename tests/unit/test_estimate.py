"""The time announced before a run: its arithmetic, and that it counts what it used to leave out.

The acceptance run of issue 17 was announced at 13 min of timed tasks plus 5 min
of aging and took 33 min: fsarena's own untimed work (fresh trees, restores,
verification) was left out, and the aging rate was the mean of an unloaded run.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fsarena.measure.collect import Measurement
from fsarena.plan.model import make_plan
from fsarena.run.agingprobe import ProbedRate
from fsarena.run.estimate import (
    AgingCost,
    aging_cost,
    aging_seconds,
    estimate,
    slower_rate,
    untimed_factor,
)
from fsarena.session.file import Run, Session, save
from fsarena.session.records import AgeProfileRecord

MB = 1e6


def _run(fs: str, task: str, rep: int, wall: float) -> Run:
    m = Measurement(
        wall_s=wall, user_s=0.1, sys_s=0.1, minor_faults=0, major_faults=0, max_rss_kib=1,
        device_read_bytes=0, device_write_bytes=0, system_busy_s=0.0, system_iowait_s=0.0,
        exit_code=0,
    )  # fmt: skip
    return Run(filesystem=fs, task=task, repetition=rep, started_at="t", status="ok", measurement=m)


def _earlier(scale: float = 0.02) -> Session:
    """An aged run of 2 rounds on ext4: 300 s and 150 s of wall for 100 s timed each."""
    aging = {
        "wall_s": 100.0, "snapshot_s": 10.0, "image_size_bytes": 1e9,
        "bytes_written_per_s": 20 * MB, "profile": {"kind": "tree"},
    }  # fmt: skip
    return Session(
        tool_version="t",
        created_at="t",
        status="complete",  # a running session is never read for an estimate
        plan={"filesystems": ["xfs"], "scale": scale, "age": {"name": "churn"}},
        runs=[_run(fs, "aged_grep", rep, 50.0) for fs in ("ext4", "ext4+churn") for rep in (1, 2)],
        aging={"ext4": aging, "xfs": {**aging, "bytes_written_per_s": 40 * MB}},
        timing={"rounds": [
            {"repetition": 1, "warmup": False, "wall_s": 300.0, "timed_s": 100.0},
            {"repetition": 2, "warmup": False, "wall_s": 150.0, "timed_s": 100.0},
        ]},
    )  # fmt: skip


def test_the_untimed_work_is_the_round_walls_without_aging_and_copies_over_timed() -> None:
    # 450 s of rounds, 2 x (100 s aging + 2 x 10 s copies) taken out, over 200 s timed.
    assert untimed_factor(_earlier()) == pytest.approx((450 - 2 * 120) / 200)
    assert untimed_factor(Session(tool_version="t", created_at="t")) is None


def test_aging_is_bytes_over_the_slowest_rate_capped_and_a_copy_per_repetition() -> None:
    plan = make_plan("quick", ["ext4"], 3, 0.02, 1, "/tmp/w", age="churn")
    image = plan.image_size_for(plan.profile("ext4"))
    cost = AgingCost(rate=20 * MB, copy_s=10.0, image_bytes=image / 2, wall_s=0, source="s")
    aging, copies = aging_seconds(plan, cost)
    churn = min(3.0 * image / (20 * MB), 300.0)  # churn's time cap
    assert aging == pytest.approx(0.5 * image / (20 * MB) + churn)
    assert copies == pytest.approx(10.0 * 2 * 3)  # twice the image copied, 3 repetitions


def test_on_a_device_every_repetition_ages_again_and_nothing_is_copied() -> None:
    plan = make_plan("quick", ["ext4"], 3, 0.02, 1, "/tmp/w", age="churn", device="/dev/x")
    loop = plan.model_copy(update={"device": None})
    cost = AgingCost(rate=20 * MB, copy_s=10.0, image_bytes=1e9, wall_s=0, source="s")
    assert aging_seconds(plan, cost) == pytest.approx((3 * aging_seconds(loop, cost)[0], 0.0))


def test_the_announcement_adds_untimed_work_aging_and_copies(tmp_path: Path) -> None:
    save(_earlier(), tmp_path / "earlier.json")
    plan = make_plan("quick", ["ext4"], 2, 0.02, 1, "/tmp/w", age="churn")
    plan = plan.model_copy(update={"tasks": ["aged_grep"]})
    text = estimate(plan, tmp_path)
    assert "x 1.05 for fsarena's own untimed work" in text
    assert "20 MB/s, the slowest filesystem's rate in earlier.json" in text
    assert "of image snapshots and restores" in text
    aging, copies = aging_seconds(plan, AgingCost(20 * MB, 10.0, 1e9, 100.0, "earlier.json"))
    total = 50.0 * 4 * 1.05 + aging + copies  # 2 sequences x 2 rounds of a 50 s task
    shown = f"{total:.0f} s" if total < 120 else f"{total / 60:.0f} min"
    assert text.startswith(f"about {shown}: ")


def test_a_git_replay_checkout_follows_the_scale_not_the_image() -> None:
    from fsarena.run.estimate import _tree_ratio

    earlier = _earlier(scale=0.05)
    earlier.aging["ext4"].live_bytes = 70 * MB  # the checkout, far below half the image
    plan = make_plan("quick", ["ext4"], 2, 0.1, 1, "/tmp/w", age="git-replay")
    assert _tree_ratio(plan, earlier) == pytest.approx(2.0)


# The aging rate probed at launch (run/agingprobe.py): the slower of it and the earlier
# session's slowest rate sets the aging time, and the announcement says which it was.
def _probed(rate: float) -> ProbedRate:
    return ProbedRate("ext4", int(rate * 3.0), 3.0, 4.5, 0.2)


def test_a_probe_slower_than_the_earlier_session_sets_the_aging_rate(tmp_path: Path) -> None:
    save(_earlier(), tmp_path / "earlier.json")
    plan = make_plan("quick", ["ext4"], 2, 0.02, 1, "/tmp/w", age="churn")
    plan = plan.model_copy(update={"tasks": ["aged_grep"]})
    text = estimate(plan, tmp_path, _probed(10 * MB))
    assert (
        f"aging at {_probe_text(10)}, slower than 20 MB/s, the slowest filesystem's rate "
        "in earlier.json"
    ) in text
    aging, copies = aging_seconds(plan, AgingCost(10 * MB, 10.0, 1e9, 100.0, "earlier.json"))
    total = 50.0 * 4 * 1.05 + aging + copies
    assert text.startswith(f"about {total / 60:.0f} min: ")


def test_a_probe_faster_than_the_earlier_session_is_only_the_cross_check(tmp_path: Path) -> None:
    save(_earlier(), tmp_path / "earlier.json")
    plan = make_plan("quick", ["ext4"], 2, 0.02, 1, "/tmp/w", age="churn")
    plan = plan.model_copy(update={"tasks": ["aged_grep"]})
    text = estimate(plan, tmp_path, _probed(80 * MB))
    assert "aging at 20 MB/s, the slowest filesystem's rate in earlier.json, slower than " in text
    assert text == estimate(plan, tmp_path).replace(
        "earlier.json;", f"earlier.json, slower than {_probe_text(80)};", 1
    )


def _probe_text(mb_s: int) -> str:
    return (
        f"{mb_s} MB/s probed now (3.0 s of the profile's writes, 20 % fsync'ed, on a scratch "
        "ext4 image; the probe took 4.5 s)"
    )


def test_without_an_earlier_aged_session_the_probe_alone_is_used() -> None:
    cost, how = slower_rate(None, _probed(10 * MB), "tree")
    assert cost is not None and cost.rate == pytest.approx(10 * MB) and cost.copy_s == 0
    assert how == f"{_probe_text(10)}; no earlier aged session to cross-check"
    assert slower_rate(None, None, "tree") == (None, "")


def test_git_replay_is_not_probed() -> None:
    earlier = AgingCost(20 * MB, 10.0, 1e9, 100.0, "s.json")
    assert slower_rate(earlier, _probed(1 * MB), "git-replay") == (
        earlier, "its mean wall time per filesystem in s.json"
    )  # fmt: skip


def test_whole_rounds_add_the_aging_a_slower_probe_adds(tmp_path: Path) -> None:
    plan = make_plan("quick", ["ext4"], 2, 0.02, 1, "/tmp/w", age="churn")
    plan = plan.model_copy(update={"tasks": ["aged_grep"]})
    earlier = _earlier()
    earlier.plan = earlier.plan.model_copy(update={"filesystems": ["ext4"]})  # the same plan
    save(earlier, tmp_path / "earlier.json")
    cost = AgingCost(20 * MB, 10.0, 1e9, 100.0, "earlier.json")
    slow = aging_seconds(plan, replace(cost, rate=10 * MB))[0] - aging_seconds(plan, cost)[0]
    text = estimate(plan, tmp_path, _probed(10 * MB))
    assert "(measured whole rounds, verification and set-up included)" in text
    extra = f"{slow:.0f} s" if slow < 120 else f"{slow / 60:.0f} min"
    how = f"{_probe_text(10)}, slower than 20 MB/s, the slowest filesystem's rate in earlier.json"
    assert text.endswith(f", + {extra} of aging, at {how}")
    faster = estimate(plan, tmp_path, _probed(40 * MB))
    assert (
        ", + " not in faster and f"; aging {_probe_text(40)}: not slower than its aging" in faster
    )


def test_with_no_earlier_session_the_probe_still_gives_the_aging(tmp_path: Path) -> None:
    plan = make_plan("quick", ["ext4"], 2, 0.02, 1, "/tmp/w", age="churn")
    aging = aging_seconds(plan, AgingCost(10 * MB, 0.0, 1.0, 0.0, "the probe"))[0]
    shown = f"{aging:.0f} s" if aging < 120 else f"{aging / 60:.0f} min"
    assert estimate(plan, tmp_path, _probed(10 * MB)) == (
        f"no estimate yet: no earlier session in {tmp_path} ran these tasks; their aging alone "
        f"about {shown}, at {_probe_text(10)}; no earlier aged session to cross-check"
    )
    assert (
        estimate(plan, tmp_path)
        == f"no estimate yet: no earlier session in {tmp_path} ran these tasks"
    )


def test_the_earlier_rate_slows_as_much_as_the_probe_of_the_same_filesystem() -> None:
    # That session probed ext4 at 120 MB/s; now 60 MB/s: its aging rates count twice as slow.
    earlier = AgingCost(80 * MB, 10.0, 1e9, 100.0, "s.json", probe=("ext4", 120 * MB))
    cost, how = slower_rate(earlier, _probed(60 * MB), "tree")
    assert cost is not None and cost.rate == pytest.approx(40 * MB)
    assert how == (
        "40 MB/s, the slowest filesystem's rate in s.json (80 MB/s) 2.0x slower, as its probe "
        f"of ext4 (120 MB/s) is now, slower than {_probe_text(60)}"
    )
    # A faster probe now, or one of another filesystem, changes nothing.
    for probe in (("ext4", 90 * MB), ("xfs", 120 * MB)):
        same, _ = slower_rate(replace(earlier, probe=probe), _probed(100 * MB), "tree")
        assert same is not None and same.rate == pytest.approx(80 * MB)


def test_a_git_replay_is_estimated_per_pull_at_this_scale_and_once_more_on_the_host(
    tmp_path: Path,
) -> None:
    earlier = _earlier(scale=0.05)
    replay = AgeProfileRecord(name="git-replay", kind="git-replay")
    earlier.plan = earlier.plan.model_copy(update={"age": replay})
    for record in earlier.aging.values():  # 101 pulls in 20.2 s: 0.2 s per pull
        record.profile = replay
        record.wall_s, record.rounds = 20.2, 101
    save(earlier, tmp_path / "earlier.json")
    plan = make_plan("quick", ["ext4", "xfs"], 2, 0.3, 1, "/tmp/w", age="git-replay")
    cost = aging_cost([tmp_path / "earlier.json"], plan)
    assert cost is not None and cost.pull_s == pytest.approx(0.2) and cost.scale == 0.05
    # 300 commits, 3 per pull: 101 pulls; 6x the tree; 2 filesystems and the host's copy.
    assert aging_seconds(plan, cost)[0] == pytest.approx(0.2 * 101 * 6 * 3)
    real = plan.model_copy(update={"datasets": {"agingrepo": {"repo": "/r", "commits": 300}}})
    assert aging_seconds(real, cost)[0] == pytest.approx(0.2 * 101 * 3)  # not scaled


def test_a_never_measured_git_replay_says_so_instead_of_a_time(tmp_path: Path) -> None:
    plan = make_plan("quick", ["ext4"], 2, 0.3, 1, "/tmp/w", age="git-replay")
    text = estimate(plan, tmp_path)
    assert "nor its aging: 101 git pulls per filesystem" in text and "about" not in text
