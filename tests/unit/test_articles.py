"""Today's results beside the articles' published figures, and the rank agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fsarena.measure.collect import Measurement
from fsarena.report import articles, render
from fsarena.session.file import Run, Session, load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "reference" / "articles.json"


def _m(wall: float, **extra: float) -> Measurement:
    return Measurement(wall, 0.1, 0.2, 1, 0, 1, 0, 0, 0.3, 0.0, 0, extra=extra)


def _session(runs: list[Run], tasks: list[str], filesystems: list[str]) -> Session:
    return Session(
        tool_version="t",
        created_at="now",
        plan={"suite": "x", "tasks": tasks, "filesystems": filesystems},
        runs=runs,
    )


def test_spearman() -> None:
    assert articles.spearman([(1, 10), (2, 20), (3, 30)]) == pytest.approx(1.0)
    assert articles.spearman([(1, 30), (2, 20), (3, 10)]) == pytest.approx(-1.0)
    assert articles.spearman([(1, 10), (2, 20)]) is None  # fewer than three in common
    assert articles.spearman([(1, 5), (2, 5), (3, 5)]) is None  # undefined: no ranking


def test_packaged_copy_matches_the_shared_reference() -> None:
    if not SHARED.exists():
        pytest.skip("shared/ is not beside this checkout")
    packaged = Path(articles.__file__).with_name("reference") / "articles.json"
    assert json.loads(packaged.read_text()) == json.loads(SHARED.read_text())


def test_every_mapped_task_exists_and_every_metric_is_registered() -> None:
    from fsarena.measure.metrics import METRICS
    from fsarena.tasks import TASKS

    figures, mapping = articles._reference()
    for spec in mapping["figures"]:
        assert spec["metric"] in METRICS or spec["metric"] == articles.GAP_METRIC
        assert spec["task"] in TASKS or spec["metric"] == articles.GAP_METRIC
        assert articles._published(figures, spec, mapping["filesystems"]), spec


def test_article_d_times_beside_todays_with_rank_agreement() -> None:
    # Article D, portage_copy real s: ext2 149.7, ext3 189.1, ext4dev 141.5, xfs 554.5, btrfs 166.5
    walls = {"ext2": 2.0, "ext3": 3.0, "ext4": 1.0, "xfs": 9.0, "btrfs": 2.5}
    runs = [
        Run(filesystem=fs, task="portage_copy", repetition=1, started_at="", status="ok",
            measurement=_m(w))
        for fs, w in walls.items()
    ]  # fmt: skip
    session = _session(runs, ["portage_copy"], list(walls))
    (row,) = [r for r in articles.comparisons(session) if r.task == "portage_copy"]
    cells = {fs: (a, b) for fs, a, b in row.cells}
    assert cells["ext4"] == (141.533, 1.0)  # ext4dev is ext4
    assert cells["xfs"] == (554.478, 9.0)
    assert cells["jfs"] == (203.146, None)
    assert row.common == 5 and row.spearman == pytest.approx(1.0)
    text = " ".join(render(session, "text").split())
    assert "AGAINST THE ARTICLES" in text and "other hardware and kernels" in text
    assert "rank agreement: +1.00 over 5" in text  # one table: Spearman's rho over 5 in common
    assert "## Against the articles" in render(session, "markdown")


def test_theory_vs_practice_gap() -> None:
    runs = []
    for fs, bonnie, iso in (("ext2", 100.0, 90.0), ("ext4", 120.0, 100.0), ("xfs", 110.0, 70.0)):
        runs.append(Run(filesystem=fs, task="bonnie", repetition=1, started_at="", status="ok",
                        measurement=_m(5.0, bonnie_seq_write_mb_s=bonnie)))  # fmt: skip
        for task in ("bigiso_copy_there", "bigiso_copy_back"):
            runs.append(Run(filesystem=fs, task=task, repetition=1, started_at="", status="ok",
                            measurement=_m(1.0, payload_bytes=iso * 1e6)))  # fmt: skip
    tasks = ["bonnie", "bigiso_copy_there", "bigiso_copy_back"]
    session = _session(runs, tasks, ["ext2", "ext4", "xfs"])
    (gap,) = [r for r in articles.comparisons(session) if r.metric == articles.GAP_METRIC]
    today = {fs: now for fs, _, now in gap.cells}
    assert today["ext2"] == pytest.approx(10.0) and today["xfs"] == pytest.approx(40.0)
    assert gap.common == 3 and gap.spearman is not None


def test_article_a_session_shows_its_figures() -> None:
    session = load(FIXTURES / "session-v1.json")
    rows = articles.comparisons(session)
    assert {r.task for r in rows} >= {"mkfs", "iso_copy_in", "tree_find_pattern"}
    assert all(r.spearman is None for r in rows)  # only xfs is in common with the fixture
