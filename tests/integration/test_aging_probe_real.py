"""The aging rate probed at launch, on a real loop device: a few seconds, nothing left behind."""

from __future__ import annotations

from pathlib import Path

from fsarena.aging.workload import AgingPlan
from fsarena.host.ledger import Ledger
from fsarena.plan.model import make_plan
from fsarena.run.agingprobe import PROBE_S, probe_at_launch
from fsarena.run.launch import workdir_lock
from tests.integration.conftest import leftovers


def test_the_probe_measures_the_profiles_churn_and_leaves_nothing(workdir: Path) -> None:
    plan = make_plan("quick", ["ext4", "xfs"], 3, 0.02, 1, str(workdir / "w"), age="churn")
    said: list[str] = []
    probed = probe_at_launch(plan, said.append, workdir_lock)
    assert probed is not None and said == [
        "probing the aging rate (3 s of the churn profile's work)"
    ]
    assert probed.filesystem == "ext4" and probed.fsync_share == 0.2  # the first filesystem
    assert probed.bytes_written > 0 and probed.rate > 0
    # Writes until PROBE_S, or until the fill is all written (a quiet machine writes the
    # 0.02-scale fill in under 3 s), then syncfs.
    assert plan.age is not None
    fill = AgingPlan(plan.age, plan.image_size_for(plan.profiles()[0]), plan.seed).fill()
    assert probed.work_s >= PROBE_S or probed.bytes_written == sum(f.size for f in fill)
    assert probed.work_s < probed.total_s
    assert leftovers(workdir) == [] and Ledger(str(workdir / "w")).entries() == []
    assert list((workdir / "w" / "images").iterdir()) == []
    assert list((workdir / "w" / "mnt").iterdir()) == []


def test_a_git_replay_or_a_plain_run_is_not_probed(workdir: Path) -> None:
    for age in ("git-replay", None):
        plan = make_plan("quick", ["ext4"], 1, 0.02, 1, str(workdir / "w"), age=age)
        assert probe_at_launch(plan, print, workdir_lock) is None
    assert not (workdir / "w").exists()
