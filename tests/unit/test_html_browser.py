"""The HTML report opened in a real browser (Debian's chromium, via Playwright), offline.

Playwright cannot download its own browsers here; it drives the chromium that
`scripts/setup.sh --dev` installs from Debian. Every request but the report's
own file is aborted and recorded: the page must need nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fsarena.report import write
from fsarena.session.file import Session, load

if TYPE_CHECKING:
    from playwright.sync_api import Browser, FloatRect, Locator, Page, Playwright

CHROMIUM = Path("/usr/bin/chromium")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="chromium not installed: run scripts/setup.sh --dev"
)


def _launch(p: Playwright) -> Browser:
    """Debian's Chromium, headless, as every test here opens it."""
    args = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-crash-reporter",
            "--disable-breakpad"]  # fmt: skip
    return p.chromium.launch(executable_path=str(CHROMIUM), args=args)


def test_report_draws_every_chart_offline(tmp_path: Path) -> None:
    from playwright.sync_api import Route, sync_playwright

    session = load(FIXTURES / "three-filesystems.json")
    assert len(session.filesystems()) >= 3
    report = tmp_path / "report.html"
    write(session, "html", report)
    url = report.as_uri()
    requested: list[str] = []
    blocked: list[str] = []

    def route(r: Route) -> None:
        if r.request.url == url:
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with sync_playwright() as p:
        browser = _launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("request", lambda r: requested.append(r.url))
            page.route("**/*", route)
            page.goto(url, wait_until="load")
            figures = page.locator("figure.chart")
            expected = len(session.tasks()) + 5  # heat map, one per task, cpu, device x2, space
            assert figures.count() == expected
            for i in range(figures.count()):
                svg = figures.nth(i).locator("svg").first
                svg.scroll_into_view_if_needed()
                assert svg.is_visible()
                box = svg.bounding_box()
                assert box is not None and box["width"] > 200 and box["height"] > 80
                # Drawn: bars, cells or lines are there as SVG shapes.
                assert svg.locator("path").count() > 5
            assert page.locator("h2").first.inner_text() == "Answer"
            # Nothing runs off the page sideways: wide tables scroll within themselves.
            page_width = page.evaluate("document.documentElement.scrollWidth")
            assert page_width <= page.viewport_size["width"]  # type: ignore[index]
            assert page.locator("p.summary").count() >= 3
            page.screenshot(path=str(tmp_path / "report.png"), full_page=False)
        finally:
            browser.close()
    assert blocked == []
    assert requested == [url]


# A phone, a laptop, a desktop: widths and the height of their first screen.
VIEWPORTS = ((390, 844), (1280, 800), (1920, 1080))
CLIPPED_TABLES = """() => [...document.querySelectorAll('table')]
    .filter(t => t.scrollWidth > t.clientWidth + 1
              || t.getBoundingClientRect().right > window.innerWidth + 1)
    .map(t => t.outerHTML.slice(0, 120))"""


# The recorded sessions with an answer to draw: filesystems against the reference (session-v2:
# its User-Mode Linux group of six, ext4 alone on the host).
DRAWN = {"three-filesystems.json": 2, "session-v1.json": 1, "session-v2.json": 5}


@pytest.mark.parametrize(
    "fixture", ["three-filesystems.json", "session-v1.json", "session-v2.json"]
)
def test_the_answer_is_on_the_first_screen_and_nothing_is_clipped(
    tmp_path: Path, fixture: str
) -> None:
    """The recommendation and the answer drawn (answer_svg) are on the first screen of a
    phone, a laptop and a desktop, the figure beside the recommendation or right under it."""
    from playwright.sync_api import sync_playwright

    report = tmp_path / "report.html"
    write(load(FIXTURES / fixture), "html", report)
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            for width, height in VIEWPORTS:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(report.as_uri(), wait_until="load")
                box = page.locator("p.recommendation").bounding_box()
                assert box is not None, "no recommendation line"
                assert box["y"] + box["height"] <= height, f"below the first screen at {width}"
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                assert page.evaluate(CLIPPED_TABLES) == [], f"a table is clipped at {width}"
                figure = page.locator("figure.answer-figure")
                if fixture not in DRAWN:
                    assert figure.count() == 0
                else:
                    _drawn_beside(page, figure, box, width, height, DRAWN[fixture])
                page.close()
        finally:
            browser.close()


def _drawn_beside(
    page: Page, figure: Locator, rec: FloatRect, width: int, height: int, others: int
) -> None:
    """The figure whole within the first screen, beside or right under the recommendation,
    drawn (a mark per filesystem and kind) and its words no smaller than 9 px."""
    assert figure.count() == 1, f"no answer drawn at {width}"
    box = figure.bounding_box()
    assert box is not None, f"no figure at {width}"
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, f"figure cut sideways at {width}"
    # Its first panel (the recommendation's own family) whole in the first screen; all of
    # it where it has at most three filesystems against the reference.
    circles = page.evaluate(
        "[...document.querySelectorAll('svg.answer-figure circle')]"
        ".map(c => c.getBoundingClientRect().bottom)"
    )
    end = max(circles[:others]) if others > 3 else box["y"] + box["height"]
    assert box["y"] >= 0 and end <= height, (
        f"the figure's first panel ends at {end:.0f} px, below the first screen "
        f"({height} px) at {width} px wide"
    )
    rec_right, rec_bottom = rec["x"] + rec["width"], rec["y"] + rec["height"]
    under = 0 <= box["y"] - rec_bottom <= 40 and box["x"] < rec_right
    beside = 0 <= box["x"] - rec_right <= 60 and abs(box["y"] - rec["y"]) <= 40
    assert under or beside, f"the figure is neither beside nor under the recommendation at {width}"
    if width >= 1280:  # room enough: beside it, not pushed under
        assert beside, f"the figure is not beside the recommendation at {width}"
    svg = figure.locator("svg")
    assert svg.get_attribute("role") == "img" and svg.locator("desc").count() == 1
    panels = page.evaluate("document.querySelectorAll('svg.answer-figure line.reference').length")
    assert svg.locator("circle").count() == panels * others
    sizes = page.evaluate(
        "[...document.querySelectorAll('svg.answer-figure text')]"
        ".map(t => t.getBoundingClientRect().height)"
    )
    assert min(sizes) >= 9, f"text {min(sizes):.1f} px high at {width}: too small to read"


# Every SVG text that leaves its drawing or is under 9 px high: "words (drawing): why".
TEXT_OUTSIDE = """() => [...document.querySelectorAll('svg')].flatMap(svg => {
    const frame = svg.getBoundingClientRect();
    const where = (svg.closest('figure') || svg).id || svg.getAttribute('class') || 'svg';
    return [...svg.querySelectorAll('text')].filter(t => t.textContent.trim()).flatMap(t => {
        const r = t.getBoundingClientRect();
        const out = r.left < frame.left - 1 || r.right > frame.right + 1
                 || r.top < frame.top - 1 || r.bottom > frame.bottom + 1;
        const m = t.getCTM();  // turned text (a bar's label) is as high as its box is wide
        const high = Math.abs(m.b) > Math.abs(m.a) ? r.width : r.height;
        const why = (out ? 'outside its drawing ' : '')
                  + (high < 9 ? high.toFixed(1) + ' px' : '');
        return why ? [t.textContent.trim().slice(0, 40) + ' (' + where + '): ' + why] : [];
    });
})"""


def _long_verdict() -> Session:
    """three-filesystems with a long-named variant: the longest verdicts and labels drawn."""
    session = load(FIXTURES / "three-filesystems.json")
    long = "btrfs-compress-zstd-15-noatime-nodiscard"
    rename = {"btrfs": long}
    plan = session.plan.model_copy(
        update={"filesystems": [rename.get(f, f) for f in session.plan.filesystems]}
    )
    runs = [r.model_copy(update={"filesystem": rename.get(r.filesystem, r.filesystem)})
            for r in session.runs]  # fmt: skip
    profiles = {rename.get(k, k): v for k, v in session.profiles_as_run.items()}
    order = [[rename.get(f, f) for f in o] for o in session.order]
    return session.model_copy(
        update={"plan": plan, "runs": runs, "profiles_as_run": profiles, "order": order}
    )


@pytest.mark.parametrize("fixture", ["three-filesystems.json", "session-v1.json", "long"])
def test_no_drawn_word_leaves_its_drawing_or_is_under_9_px_on_a_phone(
    tmp_path: Path, fixture: str
) -> None:
    """Every text of every SVG on the page (the answer drawn, every chart) lies inside its
    drawing and is at least 9 px high at 390 px wide, and at 1280."""
    from playwright.sync_api import sync_playwright

    report = tmp_path / "report.html"
    write(_long_verdict() if fixture == "long" else load(FIXTURES / fixture), "html", report)
    with sync_playwright() as p:
        browser = _launch(p)
        try:
            for width, height in ((390, 844), (1280, 800)):
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(report.as_uri(), wait_until="load")
                bad = page.evaluate(TEXT_OUTSIDE)
                assert bad == [], f"at {width} px: {bad[:8]} ({len(bad)} in all)"
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                page.close()
        finally:
            browser.close()


def _other_pages(tmp_path: Path) -> list[Path]:
    """The fleet report's page and the store history's: the report's page (html.page) too."""
    from fsarena.fleet.merge import build, load_hosts
    from fsarena.fleet.render import render
    from fsarena.store.chart import render as history_page
    from fsarena.store.db import open_store
    from fsarena.store.ingest import import_session
    from fsarena.store.query import history
    from tests.unit.test_fleet_report import host_file

    paths = [host_file(tmp_path, "a", 0.5), host_file(tmp_path, "b", 2.0)]
    paths.append(host_file(tmp_path, "c", 9.0, status="interrupted"))
    hosts, warnings = load_hosts(paths)
    fleet = tmp_path / "fleet.html"
    fleet.write_text(render(build(hosts, None, "wall_s", warnings), "html"))
    with open_store(str(tmp_path / "s.sqlite")) as db:
        for session in sorted(FIXTURES.glob("session-v*.json")):
            import_session(db, session)
        points = history(db, "mkfs", "ext4", "wall_s")
    drawn = tmp_path / "history.html"
    drawn.write_text(history_page(points, "mkfs", "ext4", "wall_s", "html"))
    return [fleet, drawn]


def test_the_fleet_and_history_pages_fit_a_phone_offline(tmp_path: Path) -> None:
    """Laid out by the report's page: nothing fetched, nothing runs off the page sideways
    (wide tables and charts scroll within themselves), no table clipped, at 390 and 1280."""
    from playwright.sync_api import Route, sync_playwright

    blocked: list[str] = []

    def route(r: Route) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    with sync_playwright() as p:
        browser = _launch(p)
        try:
            for path in _other_pages(tmp_path):
                for width, height in ((390, 844), (1280, 800)):
                    page = browser.new_page(viewport={"width": width, "height": height})
                    page.route("**/*", route)
                    page.goto(path.as_uri(), wait_until="load")
                    assert page.locator("h1").count() == 1
                    assert page.evaluate("document.documentElement.scrollWidth") <= width
                    assert page.evaluate(CLIPPED_TABLES) == [], f"{path.name} at {width}"
                    page.close()
        finally:
            browser.close()
    assert blocked == []
