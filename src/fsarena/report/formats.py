"""The report formats, in one table: name, file suffix, the module that renders it, and what it is.

Light on purpose (no matplotlib, jinja2 or scipy): the CLI's --format choices
are read from here at start-up. A document format renders the report's
blocks (contents.document); a data format exports the comparison's numbers
(one row per run and metric, or the summary as JSON) and is no document.
Every rendering module has `render(comparison) -> str`; one that writes files
beside its output (the HTML's charts) also has `bundle(comparison, asset_dir)`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    name: str  # what --format takes
    suffix: str  # the file suffix of a report written in it
    module: str  # fsarena.report.MODULE renders it
    document: bool  # renders the report's blocks (else: a data export)
    bundles: bool = False  # writes files beside its output (bundle())


FORMATS: tuple[Format, ...] = (
    Format("text", "txt", "text", document=True),
    Format("markdown", "md", "markdown", document=True),
    Format("html", "html", "html", document=True, bundles=True),
    Format("csv", "csv", "csv", document=False),
    Format("json", "json", "json", document=False),
)
BY_NAME = {f.name: f for f in FORMATS}
NAMES = tuple(sorted(BY_NAME))  # --format's choices
