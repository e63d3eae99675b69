"""The HTML report opened in a real browser (Debian's chromium, via Playwright), offline.

Playwright cannot download its own browsers here; it drives the chromium that
`scripts/setup.sh --dev` installs from Debian. Every request but the report's
own file is aborted and recorded: the page must need nothing else.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.report import write
from fsarena.session.file import load

CHROMIUM = Path("/usr/bin/chromium")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="chromium not installed: run scripts/setup.sh --dev"
)


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
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--no-sandbox",
                "--headless",
                "--disable-gpu",
                "--disable-crash-reporter",
                "--disable-breakpad",
            ],
        )
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


@pytest.mark.parametrize(
    "fixture", ["three-filesystems.json", "session-v1.json", "session-v2.json"]
)
def test_the_answer_is_on_the_first_screen_and_nothing_is_clipped(
    tmp_path: Path, fixture: str
) -> None:
    from playwright.sync_api import sync_playwright

    report = tmp_path / "report.html"
    write(load(FIXTURES / fixture), "html", report)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--headless", "--disable-gpu"]
        )
        try:
            for width, height in VIEWPORTS:
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(report.as_uri(), wait_until="load")
                box = page.locator("p.recommendation").bounding_box()
                assert box is not None, "no recommendation line"
                assert box["y"] + box["height"] <= height, f"below the first screen at {width}"
                assert page.evaluate("document.documentElement.scrollWidth") <= width
                assert page.evaluate(CLIPPED_TABLES) == [], f"a table is clipped at {width}"
                page.close()
        finally:
            browser.close()
