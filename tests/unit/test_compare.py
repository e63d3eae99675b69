"""`fsarena compare`: the same filesystem across sessions, with ratios and significance."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.cli import main
from fsarena.errors import FsarenaError
from fsarena.report.crosscompare import compare, render_html, render_markdown, render_text
from fsarena.results import save
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
    assert faster.startswith("6.18 wins: 1.50× (1.") and faster.endswith("faster than 6.1")
    assert by_task[("tree_copy_in", "ext4")].sentence().startswith("tie between 6.1 and 6.18")
    # All groups keep their own rows.
    table = next(t for t in cross.merged.tables if t.task == "iso_copy_in")
    assert [r.filesystem for r in table.rows] == ["6.1/ext4", "6.1/xfs", "6.18/ext4"]


def test_renderings() -> None:
    cross = compare([OLD, NEW])
    text = render_text(cross)
    assert "SAME FILESYSTEM ACROSS SESSIONS" in text and "s2 wins: 1.50×" in text
    assert "s1/xfs" in text
    md = render_markdown(cross)
    assert md.startswith("# fsarena comparison of sessions") and "### iso_copy_in" in md
    html = render_html(cross)
    assert "<script" not in html and html.count("<svg") >= 3 and "s2 wins: 1.50×" in html


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
    assert "new wins: 1.50×" in result.output
    out = tmp_path / "c.html"
    result = CliRunner().invoke(
        main, ["compare", str(a), str(b), "--format", "html", "-o", str(out)]
    )
    assert result.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    result = CliRunner().invoke(main, ["compare", str(a)])
    assert result.exit_code == 2 and "two or more session files" in result.output
