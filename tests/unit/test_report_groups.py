"""Reports group filesystems by driver and show guest results only as ratios to the reference."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fsarena.plan.model import make_plan
from fsarena.report import build, render
from fsarena.report.groups import split
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load
from tests.fakes import FakeExecutor

# Wall time of every timed run, per filesystem and repetition.
WALL_S = {
    ("ext4", 1): 1.0, ("ext4", 2): 1.0,
    ("ext4@uml", 1): 8.0, ("ext4@uml", 2): 10.0,
    ("jfs@uml", 1): 4.0, ("jfs@uml", 2): 15.0,
    ("ntfs@fuse", 1): 3.0, ("ntfs@fuse", 2): 3.0,
}  # fmt: skip


def _session(tmp_path: Path) -> Session:
    fs = ["ext4", "jfs@uml", "ext4@uml", "ntfs@fuse"]
    plan = make_plan("article-a-2006", fs, 2, 0.001, 7, str(tmp_path / "work"))
    session = new_session(plan, {}, {})
    ex = FakeExecutor()
    Runner(plan, ex, session, tmp_path / "s.json", "tmpfs", datasets=ex.datasets).run()
    session = load(tmp_path / "s.json")
    for run in session.runs:
        if run.measurement is not None:
            wall = WALL_S[(run.filesystem, run.repetition)]
            run.measurement = dataclasses.replace(run.measurement, wall_s=wall)
    return session


def test_groups_in_order_with_the_reference_first(tmp_path: Path) -> None:
    session = _session(tmp_path)
    table = next(t for t in build(session).tables if t.task == "iso_copy_in")
    parts = split(session, table)
    assert [p.key for p in parts] == ["kernel", "fuse", "guest:uml"]
    assert [row[0] for row in parts[2].cells] == ["ext4@uml", "jfs@uml"]
    assert [row[0] for row in parts[0].cells] == ["ext4"]


def test_guest_times_are_per_repetition_ratios_to_the_reference(tmp_path: Path) -> None:
    session = _session(tmp_path)
    table = next(t for t in build(session).tables if t.task == "iso_copy_in")
    guest = split(session, table)[2]
    assert guest.headers[2] == "time × ext4@uml (mean ± sd)"
    jfs = dict(zip(guest.headers, guest.cells[1], strict=True))
    # 4/8 and 15/10: mean 1, range 0.5–1.5.
    assert jfs["time × ext4@uml (mean ± sd)"].startswith("1 ± ")
    assert jfs["min–max"] == "0.5–1.5"
    # The emulator's cost, measured in this very run: ext4@uml 9 s vs ext4 1 s.
    assert "ext4@uml in the guest took 9× the time of ext4 on the host" in guest.explanation


def test_the_report_says_what_each_group_means(tmp_path: Path) -> None:
    text = render(_session(tmp_path), "text")
    assert "never ranked against the host's absolute numbers" in " ".join(text.split())
    assert "ntfs-3g" in text and "[FUSE drivers (user space, on this host)]" in text
    # The guest named in words, as the run recorded it (profiles_as_run's guest_label).
    title = "Guest kernel uml (User-Mode Linux): ratios to ext4@uml in the same guest"
    assert f"[{title}]" in text
    assert "ran inside a uml guest kernel (User-Mode Linux)" in " ".join(text.split())
    # Probes (capacity) are shown as measured, with no ratio.
    assert "[Guest kernel uml (User-Mode Linux)]" in text
    md = render(_session(tmp_path), "markdown")
    assert f"**{title}.**" in md


def test_verdicts_rank_only_the_host_kernel_group(tmp_path: Path) -> None:
    fs = ["ext2", "ext4", "jfs@uml", "ext4@uml"]
    plan = make_plan("article-a-2006", fs, 2, 0.001, 7, str(tmp_path / "work"))
    session = new_session(plan, {}, {})
    ex = FakeExecutor()
    Runner(plan, ex, session, tmp_path / "s.json", "tmpfs", datasets=ex.datasets).run()
    verdicts = build(load(tmp_path / "s.json")).verdicts
    assert verdicts is not None and verdicts.tasks
    for result in verdicts.tasks.values():
        assert set(result.ranking.order) <= {"ext2", "ext4"}
    for kind in verdicts.kinds:
        assert set(kind.ranking.order) <= {"ext2", "ext4"}
    text = render(load(tmp_path / "s.json"), "text")
    assert "The verdicts do not include them." in " ".join(text.split())


def test_each_verdict_line_says_which_group_it_ranks(tmp_path: Path) -> None:
    # ext4 alone on the host: the uml group, of two, is the one ranked.
    text = " ".join(render(_session(tmp_path), "text").split())
    assert "verdict: among uml guest kernel drivers: " in text


def test_against_the_articles_only_host_times_but_every_drivers_space(tmp_path: Path) -> None:
    from fsarena.report import articles

    rows = {r.task: r for r in articles.comparisons(_session(tmp_path))}
    today = {
        task: {fs for fs, _, now in row.cells if now is not None} for task, row in rows.items()
    }
    # Times: the host kernel's ext4 only; neither the guest's emulated times nor ntfs-3g's.
    assert today["iso_copy_in"] == {"ext4"}
    # Space depends on the format alone: jfs@uml's capacity stands beside the article's jfs.
    assert today["capacity_initial"] == {"ext4", "jfs", "ntfs"}
    text = " ".join(render(_session(tmp_path), "text").split())
    assert "Times of host kernel drivers only: guest and FUSE times are not comparable" in text


def test_a_guest_group_gets_its_own_answer() -> None:
    """ext4 alone on the host, six filesystems in User-Mode Linux and two in qemu: the uml
    group is ranked among itself (43fa896 said "No answer: only ext4 ran through the host
    kernel's drivers"), and the qemu group gets its own line."""
    session = load(Path(__file__).parents[1] / "fixtures" / "full-v2.json")
    answer = build(session).verdicts.answer  # type: ignore[union-attr]
    assert not answer.recommendation.startswith("No answer")
    judged = answer.judged[next(iter(answer.judged))].ranking.order
    assert set(judged) == {"jfs@uml", "reiserfs@uml", "vfat@uml", "f2fs@uml", "nilfs2@uml",
                           "ext4@uml"}  # fmt: skip
    assert [title for title, _ in answer.groups] == ["Among the qemu guest kernel's filesystems"]
    text = render(session, "text")
    assert "Among the qemu guest kernel's filesystems:" in " ".join(text.split())
