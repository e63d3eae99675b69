"""Reports rendered from a fixture session match golden files; old session versions load.

Regenerate the golden files after an intended change with
FSARENA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/unit/test_report.py
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.measure.collect import Measurement
from fsarena.report import EXPORTERS, build, render
from fsarena.report.comparison import fmt
from fsarena.report.formats import FORMATS
from fsarena.session.file import SCHEMA_VERSION, Session, load, save

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SUFFIX = {f.name: f.suffix for f in FORMATS}
# matplotlib's charts; the drawn answer (answer_svg, written by hand) stays in the golden whole.
SVG = re.compile(r"<svg\b(?![^>]*answer-figure).*?</svg>", re.S)


def normalised(fmt_name: str, text: str) -> str:
    """Charts are compared elsewhere (drawn, deterministic); their path data depend on the
    matplotlib version, so the golden HTML keeps only a placeholder per chart."""
    return SVG.sub("<svg>(chart)</svg>", text) if fmt_name == "html" else text


GOLDEN_FIXTURES = ("session-v1", "session-v2", "full-v2", "three-filesystems")
TEXT_WIDTH = 80  # what the text report uses when standard output is not a terminal


@pytest.fixture
def session() -> Session:
    return load(FIXTURES / "session-v1.json")


@pytest.mark.parametrize("fixture", GOLDEN_FIXTURES)
@pytest.mark.parametrize("fmt_name", sorted(SUFFIX))
def test_golden(fixture: str, fmt_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    out = normalised(fmt_name, render(load(FIXTURES / f"{fixture}.json"), fmt_name))
    path = GOLDEN / f"{fixture}.{SUFFIX[fmt_name]}"
    if os.environ.get("FSARENA_UPDATE_GOLDEN"):
        path.write_text(out)
    assert out == path.read_text()


@pytest.mark.parametrize("fixture", GOLDEN_FIXTURES)
@pytest.mark.parametrize("fmt_name", ["text", "markdown", "html"])
def test_golden_reports_read_as_numbers_for_people(fixture: str, fmt_name: str) -> None:
    """No exponent, no Python None, and text no wider than the terminal."""
    page = (GOLDEN / f"{fixture}.{SUFFIX[fmt_name]}").read_text()
    assert not re.search(r"\de[+-]\d", page), "a number in exponent notation"
    assert not re.search(r"\bNone\b", page)
    assert "nan" not in re.findall(r"\b\w+\b", page)
    if fmt_name == "text":
        wide = [line for line in page.splitlines() if len(line) > TEXT_WIDTH]
        assert wide == []


def test_text_follows_the_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    session = load(FIXTURES / "three-filesystems.json")
    for width in (60, 132):
        monkeypatch.setenv("COLUMNS", str(width))
        lines = render(session, "text").splitlines()
        assert max(len(line) for line in lines) <= width
        assert max(len(line) for line in lines) > width - 15  # and uses it


def test_every_exporter_is_deterministic(session: Session) -> None:
    for name in EXPORTERS:
        assert render(session, name) == render(session, name)


_RENDER_ALL = """
import json, sys
from fsarena.report import EXPORTERS, render
from fsarena.session.file import load
from pathlib import Path
print(json.dumps({n: render(load(Path(sys.argv[1])), n) for n in sorted(EXPORTERS)}))
"""


def test_every_exporter_gives_the_same_bytes_in_another_process() -> None:
    """Set and dict order may follow string hashes, which differ per process: two processes
    with different hash seeds must still write the same reports, charts included."""
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        env.pop("COLUMNS", None)
        argv = [sys.executable, "-c", _RENDER_ALL, str(FIXTURES / "full-v2.json")]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        outputs.append(json.loads(done.stdout))
    assert sorted(outputs[0]) == sorted(EXPORTERS)
    for name in EXPORTERS:
        assert outputs[0][name] == outputs[1][name], name


def test_every_stored_version_loads() -> None:
    versions = sorted(FIXTURES.glob("session-v*.json"))
    assert len(versions) == SCHEMA_VERSION, "keep one fixture per schema version"
    for path in versions:
        session = load(path)
        assert session.runs
        for name in EXPORTERS:  # every version still renders in every format
            assert render(session, name)


def test_table_has_a_row_per_filesystem_and_task(session: Session) -> None:
    comparison = build(session)
    assert [t.task for t in comparison.tables] == session.tasks()
    for table in comparison.tables:
        assert {r.filesystem for r in table.rows} == {"ext4", "xfs"}
        for row in table.rows:
            assert row.n_ok == 2
    capacity = next(t for t in comparison.tables if t.task == "capacity_initial")
    assert not capacity.timed and "capacity_pct" in capacity.rows[0].stats


def test_csv_long_format(session: Session) -> None:
    rows = list(csv.DictReader(io.StringIO(render(session, "csv"))))
    walls = [r for r in rows if r["metric"] == "wall_s"]
    timed_runs = [r for r in session.runs if r.measurement is not None]
    assert len(walls) == len(timed_runs)
    first = timed_runs[0]
    mine = next(r for r in walls if (r["filesystem"], r["task"]) == (first.filesystem, first.task))
    assert float(mine["value"]) == first.measurement.wall_s  # type: ignore[union-attr]


def test_failures_are_shown(session: Session) -> None:
    broken = session.model_copy(deep=True)
    broken.runs[3].status = "failed"
    broken.runs[3].error = "verification failed: copy of iso intact: checksum differs"
    text = render(broken, "text")
    assert "FAILED, INVALID OR SKIPPED RUNS" in text and "checksum differs" in text
    assert "(1 failed)" in text


def test_save_is_atomic_and_round_trips(session: Session, tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    save(session, path)
    assert load(path) == session
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_newer_or_damaged_sessions_are_refused(session: Session, tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "session-v1.json").read_text())
    data["schema_version"] = SCHEMA_VERSION + 1
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data))
    with pytest.raises(FsarenaError, match="upgrade fsarena"):
        load(newer)
    damaged = tmp_path / "damaged.json"
    damaged.write_text('{"schema_version": 1, "runs": 3}')
    with pytest.raises(FsarenaError, match="damaged"):
        load(damaged)
    with pytest.raises(FsarenaError, match="no session file"):
        load(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (0.0222, "0.0222"),
        (9.0, "9"),
        (14.7051, "14.7"),
        (2097152.0, "2,097,152"),
        (0.000000123, "0.000000123"),
        (3811.2, "3,811"),
        (0.00043, "0.00043"),
    ],
)
def test_number_format(value: float, text: str) -> None:
    assert fmt(value) == text


def test_the_runners_unstable_warning_is_not_repeated_beside_the_flags() -> None:
    from fsarena.report import build, prose
    from tests.sessions import make_session

    noisy = {"ext4": {"iso_copy_in": [1.0, 3.0, 9.0]}, "xfs": {"iso_copy_in": [2.0, 2.1, 2.0]}}
    session = make_session(noisy)
    session.warn("unstable", "the 95 % confidence interval stayed above the target")
    session.warn("teardown", "could not remove the source")
    codes = [item.title for item in prose.warnings(build(session))]
    assert "teardown" in codes
    assert "unstable" not in codes and any(c.startswith("unstable (") for c in codes)


@pytest.mark.parametrize("version", [1, 2])
def test_max_rss_of_an_older_session_is_unavailable_in_every_format(version: int) -> None:
    """Before schema 3 the stored max RSS was fsarena's own: kept, but never shown."""
    old = load(FIXTURES / f"session-v{version}.json")
    timed = [r for r in old.runs if r.measurement is not None]
    assert timed[0].measurement is not None and timed[0].measurement.max_rss_kib  # kept
    assert all(r.value("max_rss_kib") is None for r in timed)
    assert any(w.code == "max_rss_kib_unavailable" for w in old.warnings)
    for name in EXPORTERS:
        out = " ".join(render(old, name).split())  # reports wrap to the page's width
        assert "max RSS is unavailable in sessions of schema version 1 and 2" in out or (
            name == "csv" and "unavailable: recorded before schema 3" in out
        )
    text = render(old, "text")
    after = text.split("max RSS (MiB)")[1].splitlines()[2:]
    rows = after[: after.index("")]  # the first table's rows under the header
    assert rows and all(line.split()[2] == "–" for line in rows), rows


def test_max_rss_of_a_current_session_is_shown_per_task() -> None:
    current = load(FIXTURES / f"session-v{SCHEMA_VERSION}.json")
    assert not any(w.code == "max_rss_kib_unavailable" for w in current.warnings)
    rss = {r.task: r.value("max_rss_kib") for r in current.runs if r.measurement is not None}
    assert all(v is not None and v < 16 << 10 for v in rss.values())  # commands, not fsarena
    assert len(set(rss.values())) > 1
    rows = [r for r in csv.DictReader(io.StringIO(render(current, "csv")))]
    assert all(r["value"] for r in rows if r["metric"] == "max_rss_kib")


def test_a_measurement_without_max_rss_renders_as_not_measured() -> None:
    current = load(FIXTURES / f"session-v{SCHEMA_VERSION}.json")
    for run in current.runs:
        if run.measurement is not None:
            run.measurement = Measurement.from_dict(
                {**run.measurement.to_dict(), "max_rss_kib": None}
            )
        run.repeats = [  # a sub-second task's earlier samples (schema 3 on)
            Measurement.from_dict({**m.to_dict(), "max_rss_kib": None}) for m in run.repeats
        ]
    for name in EXPORTERS:
        assert render(current, name)
    assert all(r.value("max_rss_kib") is None for r in current.runs)


def test_a_wide_tie_never_reads_no_difference_that_matters() -> None:
    """three-filesystems (a golden) is a wide tie: intervals allow 3-12x. On main it read
    'No difference that matters ... none above 55 %'; it must say 'not resolved'."""
    text = " ".join(render(load(FIXTURES / "three-filesystems.json"), "text").split())
    assert "no difference that matters" not in text.lower()
    assert "large files: not resolved between btrfs, ext4 and xfs: differences up to" in text


@pytest.mark.parametrize("fixture", sorted(p.stem for p in FIXTURES.glob("*.json")))
def test_no_report_calls_an_interval_wider_than_the_threshold_no_difference(fixture: str) -> None:
    """'No difference that matters' only when every pair's interval lies within the kind's
    practical threshold (relative and absolute): checked on every recorded session."""
    from fsarena.analysis.answer import EQUAL, kind_threshold
    from fsarena.analysis.evidence import Index
    from fsarena.analysis.scope import verdict_scope

    session = load(FIXTURES / f"{fixture}.json")
    comparison = build(session)
    if comparison.verdicts is None:
        return
    kinds = {k.kind: k for k in comparison.verdicts.kinds}
    index = Index(verdict_scope(session))
    for answer in comparison.verdicts.answer.kinds:
        said = "no difference that matters" in answer.text
        assert said == (answer.status == EQUAL), answer.text
        if said:
            verdict = kinds[answer.kind]
            limit = kind_threshold(index, verdict)
            for pair in verdict.ranking.pairs:
                if not pair.significant:
                    assert max(pair.high, 1 / pair.low) - 1 <= limit + 1e-9, answer.text


def test_a_decisive_run_cut_by_its_budget_says_how_many_repetitions_ran() -> None:
    from fsarena.report.comparison import header_lines

    session = load(FIXTURES / "three-filesystems.json")
    session.plan.decisive = True
    session.plan.repetitions = 5  # it started from 5; the budget let 3 run
    assert header_lines(session)[0].startswith(
        "suite article-a-2006, 3 repetitions (decisive: from 5, within its time budget)"
    )


def test_a_server_suite_has_no_against_the_articles_section() -> None:
    from fsarena.report import articles

    session = load(FIXTURES / "three-filesystems.json")
    assert articles.comparisons(session)  # article A's suite: the section is there
    session.plan.suite = "server-2026"
    assert articles.comparisons(session) == []
    assert "AGAINST THE ARTICLES" not in render(session, "text")


def test_weights_decide_and_the_line_names_them() -> None:
    """--weigh file_trees=1: the recommendation rests on that kind alone and says so; the
    JSON recommendation is the human line word for word."""
    import json

    from fsarena.cli.args import reweighed

    session = reweighed(load(FIXTURES / "session-v1.json"), "file_trees=1", None)
    text = " ".join(render(session, "text").split())
    assert "Recommendation: xfs: 2.65× faster than ext4, the next best (2.25–3.12×, n = 2)" in text
    assert "— for this workload (weights: file trees 1)." in text
    assert "large files: not weighed" in text  # shown, not a vote
    doc = json.loads(render(session, "json"))
    assert doc["recommendation"]["summary"] == doc["answer"]["recommendation"]
    assert doc["recommendation"]["weights"] == {"file_trees": 1.0}


def test_the_answer_is_calibrated_for_the_stopping_rules_looks() -> None:
    from fsarena.analysis.decision import design_of
    from fsarena.stopping import Decisive, of_plan

    session = load(FIXTURES / "three-filesystems.json")
    fixed = design_of(session.plan, 3, 3, len(session.order))
    assert (fixed.sequential, fixed.last) == (False, 3)  # a fixed run: one look, at its rounds
    session.plan.decisive = True
    rule = of_plan(3, True, None, None, None, 1)
    assert isinstance(rule, Decisive)
    decisive = design_of(session.plan, 3, 3, len(session.order))
    assert (decisive.first, decisive.last, decisive.sequential) == (*rule.schedule()[:2], True)
    assert (decisive.first, decisive.last) == (3, 10)


# Every command's --format choices, from the one table (report/formats.py): the command's
# click path, and its name in the table's `commands`.
_FORMAT_COMMANDS = [
    (("report",), "report"),
    (("run",), "report"),
    (("compare",), "compare"),
    (("fleet", "report"), "fleet"),
    (("fleet", "run"), "fleet"),
    (("store", "history"), "history"),
    (("share", "view"), "view"),
]


@pytest.mark.parametrize(("path", "command"), _FORMAT_COMMANDS)
def test_every_commands_formats_come_from_the_one_table(
    path: tuple[str, ...], command: str
) -> None:
    import click

    from fsarena.cli.commands import main
    from fsarena.report import formats

    found: click.Command = main
    for name in path:
        assert isinstance(found, click.Group)
        found = found.commands[name]
    option = next(p for p in found.params if p.name == "fmt")
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == formats.names(command)
    # every document format reaches every command; a data format, those that export it
    assert {f.name for f in FORMATS if f.document} <= set(formats.names(command))


def test_each_data_export_is_where_the_table_says() -> None:
    from fsarena.fleet.render import EXPORTS as fleet
    from fsarena.report import formats
    from fsarena.share.render import EXPORTS as view

    assert set(fleet) == set(formats.exports("fleet"))
    assert set(view) == set(formats.exports("view"))
    assert formats.exports("compare") == formats.exports("history") == ()
    assert set(formats.exports("report")) == {f.name for f in FORMATS if not f.document}
