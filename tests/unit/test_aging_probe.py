"""The aging probe's clean-up when a step fails (the real probe: tests/integration)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.plan.model import make_plan
from fsarena.run.agingprobe import probe_rate
from tests.fakes import FakeExecutor


class _MountFails(FakeExecutor):
    def call(self, argv: Sequence[str]) -> None:
        if argv[0] == "mount":
            raise FsarenaError("`mount` failed: wrong fs type")
        super().call(argv)


def test_a_failed_probe_says_so_and_leaves_nothing(tmp_path: Path) -> None:
    plan = make_plan("quick", ["ext4"], 1, 0.02, 1, str(tmp_path / "w"), age="churn")
    host = _MountFails()
    with pytest.raises(FsarenaError, match="the aging probe on ext4 failed: `mount` failed"):
        probe_rate(plan, host)
    image, mnt = f"{tmp_path}/w/images/aging-probe.img", f"{tmp_path}/w/mnt/aging-probe"
    assert [c[:2] for c in host.calls] == [
        ("create_image", image), ("attach", image), ("call", "mkfs.ext4"), ("mkdir", mnt),
        ("remove", mnt), ("detach", "/dev/loop1"), ("remove", image),  # undone, newest first
    ]  # fmt: skip
    assert host.tracked == []  # the mount point was tracked, then forgotten
