"""The HTML report: self-contained, charts drawn and written beside it, deterministic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.report import asset_dir_for, build, render, write
from fsarena.report.charts import build as build_charts
from fsarena.session.file import Session, load, save
from tests.sessions import make_session

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def session() -> Session:
    return load(FIXTURES / "three-filesystems.json")


@pytest.fixture(scope="module")
def page(session: Session) -> str:
    return render(session, "html")


def test_nothing_in_the_page_is_fetched(page: str) -> None:
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "@import" not in page and "@font-face" not in page and "<image" not in page
    # url() only for references inside the page (SVG clip paths).
    assert set(re.findall(r"url\((.)", page)) <= {"#"}


def test_the_answer_comes_first_then_every_section(page: str) -> None:
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    assert headings[:2] == ["Answer", "Verdicts in detail"]
    for wanted in ("Heat map", "Tasks", "CPU, device I/O and space", "Environment and provenance"):
        assert wanted in headings
    answer = page[page.index('<section id="answer">') : page.index("</section>")]
    assert "<strong>Recommendation:</strong>" in answer and "for this workload (weights:" in answer


def test_every_chart_is_inline_svg_with_its_direction(session: Session, page: str) -> None:
    names = re.findall(r'data-chart="([^"]+)"', page)
    tasks = session.tasks()
    assert names[0] == "heatmap"
    assert [n for n in names if n.startswith("task-")] == [f"task-{t}" for t in tasks]
    assert {"cpu", "device-written", "device-read", "space-capacity_pct"} <= set(names)
    drawn_answer = page.count('<svg xmlns="http://www.w3.org/2000/svg" class="answer-figure"')
    assert drawn_answer == 1  # the answer drawn (answer_svg) is the one SVG that is no chart
    assert page.count("<svg") == len(names) + drawn_answer
    assert "lower is better" in page and "higher is better" in page


def test_provenance_shows_what_was_run(session: Session, page: str) -> None:
    assert session.host.kernel in page
    assert "mkfs.xfs -f -q {device}" in page  # mkfs argv as run
    assert "mke2fs" in page  # tool versions
    assert "lazy_itable_init=0,lazy_journal_init=0" in page
    assert "incompressible files in" in page  # dataset spec


SMALL = {  # a quick session: two filesystems, one stable, one with an outlier in run 4
    "ext4": {"iso_copy_in": [10.0, 10.1, 9.9, 10.0, 10.05], "capacity_initial": [90.0] * 5},
    "xfs": {"iso_copy_in": [8.0, 8.1, 7.9, 30.0, 8.0], "capacity_initial": [95.0] * 5},
}


def test_unstable_and_outlier_flags_and_failures_are_shown() -> None:
    broken = make_session(SMALL)
    broken.runs[1].status = "failed"
    broken.runs[1].error = "verification failed: copy of iso intact: checksum differs"
    page = render(broken, "html")
    assert "Failed, invalid or skipped runs" in page and "checksum differs" in page
    assert "outlier r4" in page and "robust standard deviations" in page
    # xfs's stall is an outlier, but it is clearly faster: no verdict open, no "unstable"
    assert "unstable ±" not in page
    noisy = make_session(NOISY_TIE)
    page = render(noisy, "html")
    assert "unstable ±" in page and "--repetitions" in page


NOISY_TIE = {  # two filesystems too noisy to tell apart: the noise matters
    "ext4": {"iso_copy_in": [10.0, 12.5, 8.5, 11.0], "capacity_initial": [90.0] * 4},
    "xfs": {"iso_copy_in": [10.2, 10.4, 10.0, 10.3], "capacity_initial": [95.0] * 4},
}


def test_values_are_escaped() -> None:
    s = make_session({"<b>x</b>": {"iso_copy_in": [1.0, 1.1]}, "y": {"iso_copy_in": [2.0, 2.1]}})
    page = render(s, "html")
    assert "<b>x</b>" not in page.split("<svg")[0] and "&lt;b&gt;x&lt;/b&gt;" in page


def test_charts_are_deterministic() -> None:
    first = build_charts(build(make_session(SMALL)), png=True)
    second = build_charts(build(make_session(SMALL)), png=True)
    assert [c.svg for c in first] == [c.svg for c in second]
    assert [c.png for c in first] == [c.png for c in second]


def test_write_puts_png_and_svg_files_beside_the_report(tmp_path: Path) -> None:
    session = make_session(SMALL)
    out = tmp_path / "report.html"
    written = write(session, "html", out)
    charts = asset_dir_for(out)
    assert written == [out, charts] and charts.name == "report-charts"
    pngs = sorted(p.stem for p in charts.glob("*.png"))
    svgs = sorted(p.stem for p in charts.glob("*.svg"))
    assert pngs == svgs and "heatmap" in pngs and len(pngs) == len(session.tasks()) + 5
    assert (charts / "heatmap.png").read_bytes().startswith(b"\x89PNG")
    assert (charts / "heatmap.svg").read_text().startswith("<svg")
    page = out.read_text()
    assert 'href="report-charts/heatmap.png"' in page
    # Written again: fsarena's own report and charts are replaced whole, no temporary files;
    # the record of what it wrote is the ledger of outputs beside them (session.outputs).
    before = sorted(p.name for p in charts.iterdir())
    write(session, "html", out)
    assert sorted(p.name for p in charts.iterdir()) == before
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".fsarena-outputs", "report-charts", "report.html"]
    # A file fsarena did not write, put among the charts: the directory is no longer
    # fsarena's to delete, and the report is refused whole, nothing replaced.
    (charts / "mine.png").write_bytes(b"the user's")
    before_bytes = out.read_bytes()
    with pytest.raises(FsarenaError, match="report-charts exists and is not"):
        write(session, "html", out)
    assert (charts / "mine.png").read_bytes() == b"the user's" and out.read_bytes() == before_bytes


def test_cli_report_html(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    path = tmp_path / "s.json"
    save(make_session(SMALL), path)
    result = CliRunner().invoke(main, ["report", str(path), "--format", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.exists() and (tmp_path / "r-charts" / "heatmap.png").exists()
    assert f"written: {out}" in result.output


def test_device_ceiling_is_shown_beside_payload_tasks() -> None:
    # A made-up ceiling for the rendering test: 2 GB/s writes.
    session = make_session(SMALL, ceilings={"write": 2e9})
    page = re.sub(r' data-label="[^"]*"', "", render(session, "html"))
    assert "<h2>Device ceiling</h2>" in page  # the document's section, as text and Markdown
    # 100 MB per run in about 10 s: 10 MB/s, 0.5 % of 2 GB/s.
    assert "<td>ext4</td><td>9.99</td><td>2,000 (write)</td><td>0.5\u00a0%</td>" in page
    assert "of device ceiling (%)" in page  # the table's column


def test_a_number_and_its_unit_never_break_across_lines(page: str) -> None:
    # "95 %" broken as "95" / "% CI" on a phone reads as another figure.
    assert "95\u00a0%\u00a0CI" in page
    text = re.sub(r"<svg.*?</svg>|<style.*?</style>|<[^>]+>", "", page, flags=re.S)
    assert not re.findall(r"\d (?:%|MB/s|ms\b|s\b)", text)
