"""Verdicts per kind of work, from constructed sessions: ties stay ties, wins carry ratios."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from fsarena.analysis.phrases import interval_text, ratio_text
from fsarena.analysis.ranking import Pair
from fsarena.analysis.verdicts import Verdicts, caveats
from fsarena.kinds import KINDS
from fsarena.measure.metrics import METRICS, Metric
from fsarena.report import build, render
from fsarena.session.file import Run
from fsarena.session.records import TaskInfo
from tests.sessions import make_session

CLEAR = {  # xfs about 1.32x faster than ext3 at large files, and much faster than ext4
    "ext3": {"iso_copy_in": [13.2, 13.0, 13.5, 13.3], "tree_copy_in": [20.0, 21.0, 20.5, 19.5]},
    "xfs": {"iso_copy_in": [10.0, 10.1, 9.9, 10.05], "tree_copy_in": [20.5, 20.0, 21.0, 19.8]},
    "ext4": {"iso_copy_in": [15.0, 15.2, 14.9, 15.1], "tree_copy_in": [20.2, 20.8, 19.9, 20.4]},
}


def _verdicts(samples: dict[str, dict[str, list[float]]], **kw: object) -> Verdicts:
    comparison = build(make_session(samples, **kw))  # type: ignore[arg-type]
    assert comparison.verdicts is not None
    return comparison.verdicts


def _kind(v: Verdicts, kind: str):  # type: ignore[no-untyped-def]
    return next(k for k in v.kinds if k.kind == kind)


def test_heavily_overlapping_samples_are_a_tie() -> None:
    v = _verdicts(CLEAR)
    trees = _kind(v, "file_trees")
    assert trees.ranking.all_tied
    assert trees.summary.startswith(
        "not resolved between ext3, ext4 and xfs: differences up to 18 % either way remain possible"
    )
    answer = next(a for a in v.answer.kinds if a.kind == "file_trees")
    assert answer.status != "win" and not answer.winners


def test_clearly_different_samples_name_the_winner_with_ratio_and_interval() -> None:
    v = _verdicts(CLEAR)
    large = _kind(v, "large_files")
    assert large.ranking.winners == ("xfs",)
    # The action first: which one, by how much over the next best, and what not to use.
    assert large.summary.startswith("xfs, 1.32× faster than ext3, the next best (1.")
    assert "not ext4 (1.50× slower)" in large.summary
    pair = large.ranking.pair("xfs", "ext3")
    assert pair is not None and pair.low > 1.2 and pair.high < 1.45
    # The per-task evidence is part of the why.
    assert any(w.startswith("iso_copy_in: xfs wins: 1.32×") for w in large.why)


def test_kinds_without_tasks_are_omitted_and_cpu_cost_is_added() -> None:
    v = _verdicts(CLEAR)
    assert [k.kind for k in v.kinds] == ["large_files", "file_trees", "cpu"]
    assert [k.kind for k in v.kinds] == [k for k in KINDS if k in {x.kind for x in v.kinds}]


def test_archives_say_they_are_cpu_bound() -> None:
    samples = {
        "ext4": {"portage_compress": [30.0, 30.5, 29.8]},
        "xfs": {"portage_compress": [30.2, 30.1, 30.4]},
    }
    archives = _kind(_verdicts(samples, cpu_share=0.95), "archives")
    assert any("busy 95 % of the wall time; this kind is CPU-bound" in w for w in archives.why)


def test_space_is_higher_is_better() -> None:
    samples = {
        "ext4": {"capacity_initial": [92.77, 92.77, 92.77]},
        "xfs": {"capacity_initial": [99.95, 99.95, 99.95]},
    }
    space = _kind(_verdicts(samples), "space")
    assert space.ranking.winners == ("xfs",)
    # Space on one image size is a fact, each figure in its unit, not a vote.
    assert "capacity_initial xfs 100.0 %, ext4 92.8 %" in space.summary


def test_recommendation_has_reasons_and_caveats() -> None:
    v = _verdicts(CLEAR, drivers={"ext3": "kernel", "xfs": "kernel", "ext4": "fuse"})
    rec = v.answer
    assert rec.recommended == ("xfs",)
    assert rec.recommendation.startswith("xfs: 1.15× better than ext3, the next best (1.")
    assert rec.recommendation.endswith(
        "— for this workload (weights: large files 1, file trees 1)."
    )
    caveats = " ".join(rec.caveats)
    assert "Fresh filesystems" in caveats and "test CPU" in caveats
    assert "driver groups (fuse: ext4; kernel: ext3, xfs)" in caveats


def test_the_caveats_name_the_tasks_run_on_a_filesystem_made_for_them() -> None:
    """Read back from the session's task_info (Task.fresh), never assumed."""
    from fsarena.session.records import AgeProfileRecord

    session = make_session(CLEAR)
    assert "made anew" not in " ".join(caveats(session))
    info = session.plan.info("tree_copy_in")
    session.plan.task_info["tree_copy_in"] = info.model_copy(update={"fresh": True})
    first = caveats(session)[0]
    assert "runs the tasks once (tree_copy_in: each on a filesystem made anew for it);" in first
    session.plan.age = AgeProfileRecord(name="churn")
    aged = caveats(session)[0]
    assert aged.startswith("Fresh and aged (churn profile)")
    assert "tree_copy_in: each on a fresh filesystem made anew for it, on an aged one" in aged


def test_no_recommendation_when_everything_ties() -> None:
    samples = {fs: {"iso_copy_in": CLEAR["xfs"]["tree_copy_in"]} for fs in ("ext4", "xfs")}
    samples["ext4"] = {"iso_copy_in": CLEAR["ext3"]["tree_copy_in"]}
    rec = _verdicts(samples).answer
    assert rec.recommended == () and rec.recommendation.startswith("none")


def test_an_invalid_run_never_wins_and_is_shown() -> None:
    """dd_read without dropping caches: the runner marked xfs's runs invalid (faster than
    the device); they are never samples, the verdict says so, the report lists them."""
    samples = {"ext4": {"dd_read": [2.0, 2.1, 2.05]}, "xfs": {"dd_read": [0.05, 0.051, 0.049]}}
    session = make_session(samples, ceilings={"read": 200e6})
    for run in session.runs:
        if run.filesystem == "xfs":
            run.status = "invalid"
            run.error = "invalid: 2,000 MB/s is 10.0x the device's raw read ceiling of 200 MB/s"
    comparison = build(session)
    v = comparison.verdicts
    assert v is not None
    result = v.task("dd_read", "wall_s")
    assert result is not None and result.invalid == ("xfs",) and result.ranking.order == ("ext4",)
    assert not [k for k in v.kinds if k.kind == "large_files"]  # one valid filesystem left
    by_fs = {c.filesystem: c for c in v.ceilings}
    assert by_fs["xfs"].n_invalid == 3 and by_fs["xfs"].throughput_bytes_per_s == 0
    # 100 MB in about 2.05 s: about 49 MB/s, a quarter of the 200 MB/s ceiling.
    assert 24 < by_fs["ext4"].pct < 25 and by_fs["ext4"].n_invalid == 0
    text = render(session, "text")
    assert "DEVICE CEILING" in text and "3 invalid (above the ceiling)" in text
    flat = " ".join(text.split())  # lines wrap at the terminal's width
    assert "invalid (3)" in flat and "10.0x the device's raw read ceiling" in flat
    assert "FAILED, INVALID OR SKIPPED RUNS" in text


def test_counts_with_zeros_are_compared_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A power-loss test counts files lost: 0 has no ratio, the values themselves are compared."""
    monkeypatch.setitem(METRICS, "files_lost", Metric("files_lost", "files lost", "", "lower"))
    session = make_session(
        {
            "ext4": {"capacity_initial": [0.0, 0.0, 0.0]},
            "xfs": {"capacity_initial": [3.0, 4.0, 3.0]},
        }
    )
    for run in session.runs:
        run.values = {"files_lost": run.values["capacity_pct"]}
    info = session.plan.task_info["capacity_initial"]
    info.kind, info.columns = "safety", ["files_lost"]
    v = build(session).verdicts
    assert v is not None
    safety = _kind(v, "safety")
    assert safety.ranking.winners == ("ext4",)
    assert (
        safety.summary == "ext4 wins: lower files lost than xfs (0 against 3.33)"
    )  # trimmed means


def test_a_task_without_any_value_is_left_out_with_a_note() -> None:
    """bonnie++ prints "+++++" for tests too fast to time: no value anywhere, no crash."""
    from fsarena.measure.collect import Measurement
    from fsarena.report import build
    from fsarena.session.file import Run, Session

    runs = [
        Run(filesystem=fs, task="bonnie", repetition=r, started_at="", status="ok",
            measurement=Measurement(1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        for fs in ("ext4", "xfs") for r in (1, 2)
    ]  # fmt: skip
    plan = {
        "tasks": ["bonnie"],
        "filesystems": ["ext4", "xfs"],
        "task_info": {"bonnie": {"kind": "synthetic", "columns": ["bonnie_seq_write_mb_s"]}},
    }
    comparison = build(Session(tool_version="t", created_at="now", plan=plan, runs=runs))
    assert [t.task for t in comparison.tables] == ["bonnie"]


def test_one_repetition_is_no_verdict_rather_than_a_tie() -> None:
    v = _verdicts({"ext4": {"iso_copy_in": [10.0]}, "xfs": {"iso_copy_in": [30.0]}})
    summary = _kind(v, "large_files").summary
    assert summary.startswith("no verdict: one repetition each (run -n 3 or more)")
    assert "tie" not in summary


def test_an_aged_run_does_not_claim_its_filesystems_were_all_fresh() -> None:
    from fsarena.session.file import load
    from fsarena.session.records import AgeProfileRecord

    session = load(Path(__file__).resolve().parents[1] / "fixtures" / "three-filesystems.json")
    assert caveats(session)[0].startswith("Fresh filesystems: each repetition formats anew")
    session.plan.age = AgeProfileRecord(name="churn")
    first = caveats(session)[0]
    assert first.startswith("Fresh and aged (churn profile) filesystems: the verdicts rank")
    assert "aged, fragmented or nearly full filesystems behave differently" not in first


def test_winners_tied_for_best_state_the_difference_they_rule_out() -> None:
    """'ext3 and xfs tied for best' alone is no verdict: it says how close they are."""
    samples = {  # ext3 and xfs within a few %, ext4 clearly behind
        "ext3": {"iso_copy_in": [10.1, 10.0, 10.3, 9.9]},
        "xfs": {"iso_copy_in": [10.0, 10.2, 9.8, 10.1]},
        "ext4": {"iso_copy_in": [15.0, 15.2, 14.9, 15.1]},
    }
    comparison = build(make_session(samples))
    large = _kind(comparison.verdicts, "large_files")  # type: ignore[arg-type]
    assert set(large.ranking.winners) == {"ext3", "xfs"}
    bound = large.ranking.detectable_difference
    assert 0 < bound < 0.1
    said = f"(not told apart yet: up to {100 * bound:.1f} % either way, n = 4)"
    assert large.summary.startswith(f"ext3 or xfs {said}; not ext4 (1.50× slower than xfs)")
    text = " ".join(render(comparison.session, "text").split())
    # The action first: either of the two, how close they may be, and what not to use.
    assert "Recommendation: ext3 or xfs (" in text
    assert "not ext4 (1.5" in text and "— for this workload (weights: large files 1)" in text


def test_an_interval_keeps_its_decimals_as_the_ratio_does() -> None:
    """Seen in a default run's answer: '95 % CI 1.2–1.48×'; the tables say 1.20–1.48."""
    pair = Pair("xfs", "btrfs", 1.34, 1.2, 1.48, 0.001, 0.002, True)
    assert interval_text(pair) == "1.20–1.48"
    assert ratio_text(pair) == f"1.34× ({interval_text(pair)})"
    narrow = Pair("xfs", "btrfs", 1.05, 1.045, 1.055, 0.001, 0.002, True)
    assert interval_text(narrow) == "1.045–1.055"


def test_lifecycle_is_a_fact_not_a_vote_and_the_line_names_its_weights() -> None:
    """Seen in a default run: 'xfs … behind on filesystem lifecycle': mkfs milliseconds
    voted against the workload. Now mkfs is a fact line, and the weights are stated."""
    samples = {  # xfs wins both copies; on mkfs ext4 is best, ext3 next, xfs far behind
        "ext3": {"iso_copy_in": [13.2, 13.0, 13.5, 13.3], "tree_copy_in": [26, 27, 26.5, 25.5],
                 "mkfs": [1.5, 1.52, 1.49, 1.51]},
        "xfs": {"iso_copy_in": [10.0, 10.1, 9.9, 10.05], "tree_copy_in": [20.5, 20, 21, 19.8],
                "mkfs": [3.0, 3.05, 2.98, 3.02]},
        "ext4": {"iso_copy_in": [15.0, 15.2, 14.9, 15.1], "tree_copy_in": [30, 31, 29.5, 30.5],
                 "mkfs": [1.0, 1.01, 0.99, 1.02]},
    }  # fmt: skip
    text = " ".join(render(make_session(samples), "text").split())
    line = text[text.index("Recommendation: ") :].split(" - ")[0]
    assert line.startswith("Recommendation: xfs: 1.31× better than ext3, the next best (")
    assert "— for this workload (weights: large files 1, file trees 1)." in line
    assert "lifecycle" not in line
    assert "filesystem lifecycle (mkfs, mount, umount): mkfs per repetition: ext4 1" in text


def test_a_timed_out_or_unverified_filesystem_is_not_recommendable_and_said_so() -> None:
    """xfs is fastest on the copies, but one of its tree copies timed out: the task leaves
    the kind (named, with why) and xfs is not recommendable for large/tree work."""
    from fsarena.session.file import Run

    session = make_session(CLEAR)
    session.runs.append(
        Run(
            filesystem="xfs", task="tree_copy_in", repetition=5,
            started_at="2026-01-01T00:00:00+00:00", status="failed", fault="timeout",
            error="timeout: the task ran past --task-timeout",
        )
    )  # fmt: skip
    text = " ".join(render(session, "text").split())
    assert "not recommendable here: xfs: tree_copy_in timed out" in text
    assert "Recommendation: xfs " not in text
    assert "not recommendable: xfs: tree_copy_in timed out" in text


def test_a_task_one_filesystem_lacks_is_named_with_the_reason_in_the_answer() -> None:
    """On main a filesystem whose only run of a kind failed vanished from that kind."""
    from fsarena.session.file import Run

    session = make_session(CLEAR)
    session.runs = [
        r if (r.filesystem, r.task) != ("ext4", "tree_copy_in") else
        Run(filesystem="ext4", task="tree_copy_in", repetition=r.repetition,
            started_at=r.started_at, status="failed", fault="enospc",
            error="enospc: No space left on device")
        for r in session.runs
    ]  # fmt: skip
    text = " ".join(render(session, "text").split())
    assert "left out: ext4 (no valid run: tree_copy_in (failed: enospc))" in text
    assert "not recommendable here: ext4: tree_copy_in ran out of space" in text


def test_a_space_fact_in_bytes_is_told_in_mib_not_percent() -> None:
    """The fact line gave article D's df figure (bytes) a "%" sign: "portage_space
    ext4 4541440.0 %" (seen in a quick-suite tune). Each figure takes its metric's unit."""
    session = make_session({fs: {"capacity_initial": [85.3, 85.3]} for fs in ("ext4", "xfs")})
    session.plan.tasks.append("portage_space")
    session.plan.task_info["portage_space"] = TaskInfo(
        kind="space", timed=False, columns=["df_used_difference_bytes", "du_bytes"]
    )
    for fs, used in (("ext4", 44 << 20), ("xfs", 40 << 20)):
        for rep in (1, 2):
            session.runs.append(
                Run(filesystem=fs, task="portage_space", repetition=rep,
                    started_at="2026-01-01T00:00:00+00:00", status="ok",
                    values={"df_used_difference_bytes": float(used), "du_bytes": float(used)})
            )  # fmt: skip
    comparison = build(session)
    assert comparison.verdicts is not None
    space = next(a for a in comparison.verdicts.answer.kinds if a.kind == "space")
    assert "portage_space xfs 40.0 MiB, ext4 44.0 MiB" in space.text
    assert "85.3 %" in space.text and "44.0 %" not in space.text


def test_h1_no_difference_that_matters_is_never_said_beside_a_far_slower_filesystem() -> None:
    """review-verdicts-4, H1: ext4 1.00, xfs 1.02, btrfs 1.50, six quiet rounds. 43fa896
    said "no difference that matters between btrfs, ext4 and xfs" and "the filesystems
    are within 3.5 % of each other". Now btrfs is named, as what not to use."""
    rng = random.Random(5)

    def times(level: float) -> list[float]:
        return [level * math.exp(rng.gauss(0, 0.003)) for _ in range(6)]

    session = make_session({fs: {"iso_copy_in": times(t)} for fs, t in
                            {"ext4": 1.0, "xfs": 1.02, "btrfs": 1.5}.items()})  # fmt: skip
    session.plan.weights = {"large_files": 1.0}
    comparison = build(session)
    answer = comparison.verdicts.answer  # type: ignore[union-attr]
    words = " ".join([answer.recommendation, *(k.text for k in answer.kinds)])
    assert "no difference that matters between btrfs" not in words
    assert "within 3.5 % of each other" not in words
    assert "not btrfs (1.4" in answer.recommendation or "not btrfs (1.5" in answer.recommendation
    assert "btrfs" not in answer.recommended


def test_h4_against_it_comes_only_from_the_kinds_own_metric() -> None:
    """review-verdicts-4, H4: session-v1's file trees read "xfs 2.65× faster than ext4 ...;
    against it: ext4 ahead on tree_copy_in, tree_copy_within and tree_delete" at 43fa896,
    all three from bytes read or CPU %, none from time. On time, at the decision's level,
    ext4 is ahead on none of them."""
    from fsarena.session.file import load

    fixture = Path(__file__).parents[1] / "fixtures" / "session-v1.json"
    answer = build(load(fixture)).verdicts.answer  # type: ignore[union-attr]
    trees = next(k for k in answer.kinds if k.kind == "file_trees")
    assert trees.status == "win" and trees.winners == ("xfs",)
    assert "against it" not in trees.text
