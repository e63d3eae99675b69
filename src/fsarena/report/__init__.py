"""Reports: exporters registered by name; each renders the comparison built once from a session."""

from __future__ import annotations

from collections.abc import Callable

from fsarena.report import csv, json, markdown, text
from fsarena.report.table import Comparison, build
from fsarena.results import Session

EXPORTERS: dict[str, Callable[[Comparison], str]] = {
    "text": text.render,
    "markdown": markdown.render,
    "csv": csv.render,
    "json": json.render,
}


def render(session: Session, fmt: str) -> str:
    return EXPORTERS[fmt](build(session))


__all__ = ["EXPORTERS", "Comparison", "build", "render"]
