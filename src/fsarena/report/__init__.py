"""Reports: each format of formats.FORMATS renders the comparison built once from a session.

A format's module has `render(comparison) -> str`; a document format's also has
`render_document(blocks, title) -> str`, which every other command's document
goes through (render_document below). A format whose output can
have files beside it (the HTML report's charts as PNG and SVG) also has
`bundle(comparison, asset_dir) -> (text, charts)`, used by `write`, which puts
the charts in a directory next to the output file.

Importing this package is light (the CLI reads formats.FORMATS at start-up):
the renderers, and the statistics under them, load when a report is made.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsarena.interrupt import whole
from fsarena.report.formats import BY_NAME, FORMATS

if TYPE_CHECKING:  # loaded at run time by __getattr__, when first asked for
    from fsarena.report.charts import Chart
    from fsarena.report.comparison import Comparison, build
    from fsarena.report.document import Block
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


def render_document(fmt: str, blocks: Sequence[Block], title: str) -> str:
    """A command's document (compare's, the fleet report's, the store's history, the
    shared view's) in a document format: the format's module lays the blocks out."""
    if not BY_NAME[fmt].document:
        raise ValueError(f"{fmt} is a data format: no document renders in it")
    render_function: Callable[[Sequence[Block], str], str] = _module(fmt).render_document
    return render_function(blocks, title)


def asset_dir_for(path: Path) -> Path:
    """Where a report's chart files go: report.html -> report-charts/ beside it."""
    from fsarena.session.outputs import derived

    return derived(path, "-charts")


def write(
    session: Session,
    fmt: str,
    path: Path,
    comparison: Comparison | None = None,
    force: bool = False,
) -> list[Path]:
    """Write a report to a file (whole), with its chart files if the format has them.

    Where each goes follows session.outputs' rule: over nothing, an empty file, or a
    report fsarena wrote; force replaces the file the user named, never its charts.
    Both are checked before either is written.
    """
    from fsarena.report.comparison import build
    from fsarena.session.outputs import require_free, write_file, write_tree

    if not force:
        require_free(path, "report")
    assets = asset_dir_for(path) if BY_NAME[fmt].bundles else None
    if assets is not None:
        require_free(assets, "report's chart directory", "move it away, or give another name")
    comparison = build(session) if comparison is None else comparison
    if assets is None:
        write_file(path, exporter(fmt)(comparison), "report", force)
        return [path]
    bundle: Callable[[Comparison, str | None], tuple[str, Sequence[Chart]]]
    bundle = _module(fmt).bundle
    content, charts = bundle(comparison, assets.name)
    with whole():  # the page and its charts together: a stop waits for both
        write_tree(assets, _chart_files(charts), "report's chart directory")
        write_file(path, content, "report", force)
    return [path, assets]


def _chart_files(charts: Sequence[Chart]) -> dict[str, bytes]:
    files = {f"{chart.name}.svg": (chart.svg + "\n").encode() for chart in charts}
    files |= {f"{chart.name}.png": chart.png for chart in charts if chart.png is not None}
    return files


__all__ = [
    "EXPORTERS",
    "FORMATS",
    "Comparison",
    "asset_dir_for",
    "build",
    "exporter",
    "render",
    "render_comparison",
    "render_document",
    "write",
]

# The face: what other packages may import from this one, by module ("*": the
# module itself; the package's own names are its __all__). tests/unit/test_layers.py
# holds every import across packages to it; a name another package needs is added
# here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "charts": (
        "axis_label",
        "render",
    ),
    "compare": (
        "compare",
        "render",
    ),
    "compare.settings": ("*",),
    "document": (
        "Block",
        "Figure",
        "Forms",
        "Heading",
        "Notes",
        "Paragraph",
        "Section",
        "Table",
    ),
    "formats": (
        "BY_SUFFIX",
        "names",
    ),
    "junit": ("*",),
    "units": (
        "bytes_text",
        "value_text",
    ),
}
