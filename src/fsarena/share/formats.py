"""The shared view's formats, in one table: light, for the CLI's --format choices at start-up.

Rows are report.formats.Format records, as the report's are: a document format
lays out the view's blocks (share/document.py) with the report's renderer of
that name (report/text.py, report/markdown.py, report/html.py); the data format
is the view's own JSON (share/render.py). One table per command for now; they
are to become one (issue 38).
"""

from __future__ import annotations

from fsarena.report.formats import Format

FORMATS: tuple[Format, ...] = (
    Format("text", "txt", "text", document=True),
    Format("markdown", "md", "markdown", document=True),
    Format("html", "html", "html", document=True),
    Format("json", "json", "json", document=False),
)
BY_NAME = {f.name: f for f in FORMATS}
NAMES = tuple(f.name for f in FORMATS)
BY_SUFFIX = {f.suffix: f.name for f in FORMATS}
