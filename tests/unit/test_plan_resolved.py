"""The plan resolves its profiles, task classes and scaled datasets once, and a copy anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.plan import catalog, model, suite
from fsarena.plan.model import make_plan


def test_the_plan_resolves_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = make_plan("article-a-2006", ["ext4", "xfs"], 2, 0.001, 7, str(tmp_path))
    calls = {"scaled_specs": 0, "profile_table": 0}
    real_specs, real_table = catalog.scaled_specs, suite.profile_table

    def specs(*args: object) -> object:
        calls["scaled_specs"] += 1
        return real_specs(*args)  # type: ignore[arg-type]

    def table(*args: object) -> object:
        calls["profile_table"] += 1
        return real_table(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog, "scaled_specs", specs)
    monkeypatch.setattr(model, "profile_table", table)
    for _ in range(3):
        sizes = [plan.image_size_for(p) for p in plan.profiles()]
        assert plan.profile("xfs").name == "xfs" and set(plan.dataset_specs()) == {"iso", "tree"}
        assert plan.task_class("mkfs") is plan.task_class("mkfs")
    assert calls == {"scaled_specs": 1, "profile_table": 1}
    assert sizes[0] > 0
    # What a caller does with what it gets does not change what the plan keeps.
    plan.dataset_specs().clear()
    assert set(plan.dataset_specs()) == {"iso", "tree"}


def test_a_copy_with_other_fields_resolves_them_anew(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4", "xfs"], 1, 0.001, 7, str(tmp_path))
    assert [p.name for p in plan.profiles()] == ["ext4", "xfs"]
    only = plan.model_copy(update={"filesystems": ["btrfs"]})
    assert [p.name for p in only.profiles()] == ["btrfs"]
    assert [p.name for p in plan.profiles()] == ["ext4", "xfs"]


def test_what_a_plan_has_resolved_does_not_change_its_equality(tmp_path: Path) -> None:
    # A resumed session's plan is compared with the one set up today (run/resume.py).
    used = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path))
    fresh = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path))
    used.dataset_specs()
    assert used == fresh
    assert used != used.model_copy(update={"seed": 8})
