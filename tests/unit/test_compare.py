"""`fsarena compare`: the same filesystem across sessions, with ratios and significance."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.report.compare import compare, render
from fsarena.session.file import save
from tests.sessions import make_session

# The same ext4 on two kernels: iso_copy_in clearly faster on the second, trees unchanged.
OLD = make_session(
    {
        "ext4": {"iso_copy_in": [15.0, 15.2, 14.9], "tree_copy_in": [20.0, 21.0, 20.5]},
        "xfs": {"iso_copy_in": [10.0, 10.2, 9.9]},
    }
)
NEW = make_session({"ext4": {"iso_copy_in": [10.0, 10.1, 9.9], "tree_copy_in": [20.5, 20.0, 21.0]}})


def test_same_filesystem_is_compared_across_sessions() -> None:
    cross = compare([OLD, NEW], ["6.1", "6.18"])
    by_task = {(c.task, c.filesystem): c for c in cross.changes}
    assert set(by_task) == {("iso_copy_in", "ext4"), ("tree_copy_in", "ext4")}
    faster = by_task[("iso_copy_in", "ext4")].sentence()
    assert faster.startswith("6.18 1.5× faster than 6.1 (95 % CI 1.")
    assert by_task[("tree_copy_in", "ext4")].sentence().startswith("no change that matters")
    # All groups keep their own rows.
    table = next(t for t in cross.merged.tables if t.task == "iso_copy_in")
    assert [r.filesystem for r in table.rows] == ["6.1/ext4", "6.1/xfs", "6.18/ext4"]


def test_renderings() -> None:
    cross = compare([OLD, NEW])
    text = render(cross, "text")
    assert "SAME FILESYSTEM ACROSS SESSIONS" in text and "s2 1.5× faster than s1" in text
    assert "s1/xfs" in text
    md = render(cross, "markdown")
    assert md.startswith("# fsarena comparison of sessions") and "### iso_copy_in" in md
    html = render(cross, "html")
    assert "<script" not in html and html.count("<svg") >= 3 and "s2 1.5× faster than s1" in html


def test_bad_arguments_are_one_clear_message() -> None:
    with pytest.raises(FsarenaError, match="two or more"):
        compare([OLD])
    with pytest.raises(FsarenaError, match="one distinct --label per session"):
        compare([OLD, NEW], ["a"])
    with pytest.raises(FsarenaError, match="cannot contain '/'"):
        compare([OLD, NEW], ["a/b", "c"])


def test_cli_compare(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    save(OLD, a)
    save(NEW, b)
    result = CliRunner().invoke(
        main, ["compare", str(a), str(b), "--label", "old", "--label", "new"]
    )
    assert result.exit_code == 0, result.output
    assert "new 1.5× faster than old" in result.output
    out = tmp_path / "c.html"
    result = CliRunner().invoke(
        main, ["compare", str(a), str(b), "--format", "html", "-o", str(out)]
    )
    assert result.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    result = CliRunner().invoke(main, ["compare", str(a)])
    assert result.exit_code == 2 and "two or more session files" in result.output


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_a_session_compared_with_itself_keeps_its_own_verdicts() -> None:
    """Holm's correction over every LABEL/filesystem pair used to turn a clear win into a tie."""
    from fsarena.report import build
    from fsarena.report.comparison import comparison_line
    from fsarena.session.file import load

    session = load(FIXTURES / "three-filesystems.json")
    own = build(session)
    table = next(t for t in own.tables if t.task == "tree_copy_in")
    verdict = comparison_line(own, table)
    assert "faster than btrfs" in verdict  # a clear win over btrfs
    text = " ".join(render(compare([session, session]), "text").split())
    assert f"s1, s2: {verdict}" in text
    assert "tie between s1/" not in text  # nothing ranks one session's groups among all
    assert "are the same session" in text
    assert "No change that matters in 39 task × filesystem pairs" in text


def test_what_differs_is_said_and_a_different_scale_is_a_warning() -> None:
    small = OLD.model_copy(deep=True)
    small.plan.scale = 0.01
    small.host.kernel = "6.1.0"
    small.tool_versions["mkfs.ext4"] = "mke2fs 1.46.2"
    cross = compare([OLD, small], ["a", "b"])
    assert any(d.startswith("scale: a ") and d.endswith("b 0.01") for d in cross.differences)
    assert any(d.startswith("kernel: ") for d in cross.differences)
    assert any("mkfs.ext4" in d for d in cross.differences)
    assert any(w.startswith("Different dataset scales") for w in cross.warnings)
    assert not any("kernel" in w for w in cross.warnings)  # a kernel change is what one compares
    assert not any(d.startswith("cold caches") for d in cross.differences)


def test_sessions_that_emptied_caches_differently_are_told_apart() -> None:
    remounted = OLD.model_copy(deep=True)
    from fsarena.run.cold import FILESYSTEM

    remounted.cold_caches = FILESYSTEM  # what a run records
    cross = compare([OLD, remounted], ["a", "b"])
    assert (
        "cold caches: a machine-wide (drop_caches), b per filesystem (remount)" in cross.differences
    )
    assert any(w.startswith("Different ways of emptying caches") for w in cross.warnings)
    text = render(cross, "text")
    assert text.index("WHAT DIFFERS") < text.index("SAME FILESYSTEM ACROSS SESSIONS")


def test_an_empty_session_is_refused() -> None:
    empty = OLD.model_copy(update={"runs": []})
    with pytest.raises(FsarenaError, match=r"session b .*no runs: nothing to compare"):
        compare([OLD, empty], ["a", "b"])
    failed = OLD.model_copy(deep=True)
    for run in failed.runs:
        run.status = "failed"
    with pytest.raises(FsarenaError, match="none successful: nothing to compare"):
        compare([failed, NEW])
