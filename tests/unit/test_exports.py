"""Exports a program can rely on: the JSON summary against its shipped schema, the CSV's
session columns, the Markdown's provenance."""

from __future__ import annotations

import csv
import io
import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from fsarena.report import build, render
from fsarena.report.json import SCHEMA, SCHEMA_FILE
from fsarena.session.file import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SESSIONS = ("session-v1", "session-v2", "three-filesystems")


def schema() -> dict[str, object]:
    text = resources.files("fsarena.report").joinpath(SCHEMA_FILE).read_text()
    loaded: dict[str, object] = json.loads(text)
    return loaded


def test_the_schema_is_valid_and_names_the_version_written() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    assert schema()["properties"]["schema"] == {"const": SCHEMA}  # type: ignore[index]


@pytest.mark.parametrize("name", SESSIONS)
def test_real_summaries_validate(name: str) -> None:
    jsonschema.validate(json.loads(render(load(FIXTURES / f"{name}.json"), "json")), schema())
    jsonschema.validate(json.loads((GOLDEN / f"{name}.json").read_text()), schema())


def test_the_schema_rejects_the_old_form() -> None:
    doc = json.loads(render(load(FIXTURES / "session-v1.json"), "json"))
    stats = doc["tasks"][3]["rows"][0]["metrics"]["wall_s"]
    stats["cv"] = stats.pop("cv_pct") / 100  # summary-1 wrote a fraction named cv
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema())


def test_cv_is_in_percent_as_every_report_prints_it() -> None:
    session = load(FIXTURES / "three-filesystems.json")
    doc = json.loads(render(session, "json"))
    table = next(t for t in build(session).tables if t.task == "iso_copy_in")
    wall = table.rows[1].stats["wall_s"]
    row = next(t for t in doc["tasks"] if t["task"] == "iso_copy_in")["rows"][1]
    assert row["metrics"]["wall_s"]["cv_pct"] == pytest.approx(100 * wall.cv)
    assert f"{100 * wall.cv:.1f}\u00a0%" in render(session, "html")  # kept on one line
    assert doc["metric_units"]["wall_s"] == "s"


def test_csvs_of_many_sessions_concatenate() -> None:
    texts = [
        render(load(FIXTURES / f"{n}.json"), "csv") for n in ("session-v1", "three-filesystems")
    ]
    header = texts[0].splitlines()[0]
    assert header.startswith("session,suite,scale,kernel,host,filesystem,task")
    joined = texts[0] + "".join(t.split("\n", 1)[1] for t in texts[1:])
    rows = list(csv.DictReader(io.StringIO(joined)))
    sessions = {(r["session"], r["kernel"], r["host"], r["scale"], r["suite"]) for r in rows}
    assert len(sessions) == 2
    assert {r["suite"] for r in rows} == {"article-a-2006"}


def test_markdown_carries_tool_versions_mkfs_argv_and_mount_options() -> None:
    session = load(FIXTURES / "session-v2.json")
    md = render(session, "markdown")
    assert "### Tool versions" in md and "| mkfs.ext4 | mke2fs 1.47.0 (5-Feb-2023) |" in md
    assert "`mkfs.ext4 -F -q -E lazy_itable_init=0,lazy_journal_init=0 {device}`" in md
    assert "| ntfs@fuse | fuse | `mkfs.ntfs --quick --force {device}` | defaults |" in md
