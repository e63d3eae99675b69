"""Reports: exporters registered by name; each renders the comparison built once from a session.

An exporter is `render(comparison) -> str`. A format whose output can have
files beside it (the HTML report's charts as PNG and SVG) also registers a
bundle function in BUNDLES: `bundle(comparison, asset_dir) -> (text, charts)`,
used by `write`, which puts the charts in a directory next to the output file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from fsarena.report import csv, html, json, markdown, text
from fsarena.report.charts import Chart
from fsarena.report.comparison import Comparison, build
from fsarena.session.file import Session

EXPORTERS: dict[str, Callable[[Comparison], str]] = {
    "text": text.render,
    "markdown": markdown.render,
    "csv": csv.render,
    "json": json.render,
    "html": html.render,
}
BUNDLES: dict[str, Callable[[Comparison, str | None], tuple[str, Sequence[Chart]]]] = {
    "html": html.bundle,
}


def render(session: Session, fmt: str) -> str:
    return EXPORTERS[fmt](build(session))


def render_comparison(comparison: Comparison, fmt: str) -> str:
    """render() of a comparison already built (building it is most of a report's time)."""
    return EXPORTERS[fmt](comparison)


def asset_dir_for(path: Path) -> Path:
    """Where a report's chart files go: report.html -> report-charts/ beside it."""
    return path.with_name(f"{path.stem}-charts")


def write(
    session: Session, fmt: str, path: Path, comparison: Comparison | None = None
) -> list[Path]:
    """Write a report to a file (atomically), with its chart files if the format has them."""
    comparison = build(session) if comparison is None else comparison
    written = []
    if fmt in BUNDLES:
        assets = asset_dir_for(path)
        content, charts = BUNDLES[fmt](comparison, assets.name)
        _write_charts(charts, assets)
        written.append(assets)
    else:
        content = EXPORTERS[fmt](comparison)
    _write_atomic(path, content)
    return [path, *written]


def _write_charts(charts: Sequence[Chart], directory: Path) -> None:
    """Replace the chart directory whole: a failure leaves the old one, never a mix."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        for chart in charts:
            (tmp / f"{chart.name}.svg").write_text(chart.svg + "\n")
            if chart.png is not None:
                (tmp / f"{chart.name}.png").write_bytes(chart.png)
        tmp.chmod(0o755)
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_atomic(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(content)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = [
    "BUNDLES",
    "EXPORTERS",
    "Comparison",
    "asset_dir_for",
    "build",
    "render",
    "render_comparison",
    "write",
]
