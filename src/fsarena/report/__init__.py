"""Reports: each format of formats.FORMATS renders the comparison built once from a session.

A format's module has `render(comparison) -> str`. A format whose output can
have files beside it (the HTML report's charts as PNG and SVG) also has
`bundle(comparison, asset_dir) -> (text, charts)`, used by `write`, which puts
the charts in a directory next to the output file.

Importing this package is light (the CLI reads formats.FORMATS at start-up):
the renderers, and the statistics under them, load when a report is made.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsarena.report.formats import BY_NAME, FORMATS

if TYPE_CHECKING:  # loaded at run time by __getattr__, when first asked for
    from fsarena.report.charts import Chart
    from fsarena.report.comparison import Comparison, build
    from fsarena.session.file import Session

    EXPORTERS: dict[str, Callable[[Comparison], str]]


def exporter(fmt: str) -> Callable[[Comparison], str]:
    """The render function of a format (its module is imported now)."""
    render_function: Callable[[Comparison], str] = _module(fmt).render
    return render_function


def _module(fmt: str) -> Any:
    return importlib.import_module(f"fsarena.report.{BY_NAME[fmt].module}")


def __getattr__(name: str) -> Any:
    """EXPORTERS, build and Comparison, loaded when first asked for (they are heavy)."""
    if name == "EXPORTERS":
        return {f.name: exporter(f.name) for f in FORMATS}
    if name in ("build", "Comparison"):
        return getattr(importlib.import_module("fsarena.report.comparison"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render(session: Session, fmt: str) -> str:
    from fsarena.report.comparison import build

    return exporter(fmt)(build(session))


def render_comparison(comparison: Comparison, fmt: str) -> str:
    """render() of a comparison already built (building it is most of a report's time)."""
    return exporter(fmt)(comparison)


def asset_dir_for(path: Path) -> Path:
    """Where a report's chart files go: report.html -> report-charts/ beside it."""
    return path.with_name(f"{path.stem}-charts")


def write(
    session: Session, fmt: str, path: Path, comparison: Comparison | None = None
) -> list[Path]:
    """Write a report to a file (atomically), with its chart files if the format has them."""
    from fsarena.report.comparison import build

    comparison = build(session) if comparison is None else comparison
    written = []
    if BY_NAME[fmt].bundles:
        assets = asset_dir_for(path)
        bundle: Callable[[Comparison, str | None], tuple[str, Sequence[Chart]]]
        bundle = _module(fmt).bundle
        content, charts = bundle(comparison, assets.name)
        _write_charts(charts, assets)
        written.append(assets)
    else:
        content = exporter(fmt)(comparison)
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
    "EXPORTERS",
    "FORMATS",
    "Comparison",
    "asset_dir_for",
    "build",
    "exporter",
    "render",
    "render_comparison",
    "write",
]
