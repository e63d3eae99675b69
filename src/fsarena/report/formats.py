"""The report formats, in one table: name, file suffix, the module that renders it, what it
is, and which commands offer it. Every command's --format choices are read from here.

Light on purpose (no matplotlib, jinja2 or scipy): the CLI's --format choices
are read from here at start-up. A document format renders a document's blocks
(report/document.py): every command builds one (the report's contents.document,
compare's, the fleet report's, the store's history, the shared view's), so a
document format reaches every command through its module's
`render_document(blocks, title) -> str`. A data format exports a command's
numbers (the report's: one row per run and metric, or the summary as JSON) and
is no document: each command that has such an export names itself in the
format's `commands`, and the others do not offer it.
Every rendering module has `render(comparison) -> str` (the report's); one that
writes files beside its output (the HTML's charts) also has
`bundle(comparison, asset_dir)`.
"""

from __future__ import annotations

from dataclasses import dataclass

# The commands that render documents: `report` (and `run`, which writes the same report),
# `compare`, `fleet report` (and `fleet run`), `store history`, `share view`.
COMMANDS = frozenset({"report", "compare", "fleet", "history", "view"})


@dataclass(frozen=True)
class Format:
    name: str  # what --format takes
    suffix: str  # the file suffix of a report written in it
    module: str  # fsarena.report.MODULE renders it
    document: bool  # renders a document's blocks (else: a data export)
    bundles: bool = False  # writes files beside its output (bundle())
    # The commands that offer it: a document format, every command (each renders blocks);
    # a data format, those with an export of their own in it.
    commands: frozenset[str] = COMMANDS


FORMATS: tuple[Format, ...] = (
    Format("text", "txt", "text", document=True),
    Format("markdown", "md", "markdown", document=True),
    Format("html", "html", "html", document=True, bundles=True),
    Format("csv", "csv", "csv", document=False, commands=frozenset({"report", "fleet"})),
    Format("json", "json", "json", False, commands=frozenset({"report", "fleet", "view"})),
)
BY_NAME = {f.name: f for f in FORMATS}
NAMES = tuple(sorted(BY_NAME))  # every format
BY_SUFFIX = {f.suffix: f.name for f in FORMATS}


def names(command: str) -> tuple[str, ...]:
    """A command's --format choices: the formats that name it, sorted."""
    assert command in COMMANDS, command
    return tuple(sorted(f.name for f in FORMATS if command in f.commands))


def exports(command: str) -> tuple[str, ...]:
    """The data formats a command must export itself (the others it renders as documents)."""
    return tuple(n for n in names(command) if not BY_NAME[n].document)
