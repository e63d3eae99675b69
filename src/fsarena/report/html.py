"""The HTML report: one self-contained offline file, verdicts first, charts inlined as SVG.

Nothing is fetched when it is opened: no scripts, no web fonts, no external
stylesheets or images (a test opens it in chromium with the network blocked).
The same charts can also be written as PNG and SVG files beside it; the page
then links to them (links are not fetched).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jinja2
from markupsafe import Markup

from fsarena.measure.metrics import METRICS
from fsarena.report import (
    aging,
    articles,
    cells,
    charts,
    compression,
    contents,
    outcome,
    prose,
)
from fsarena.report.comparison import (
    Comparison,
    TaskTable,
    build,
    comparison_line,
    fmt,
    header_lines,
)
from fsarena.report.document import Figure
from fsarena.report.groups import explanations, unranked_sections
from fsarena.report.machine_section import machine_rows
from fsarena.report.scope import verdict_scope
from fsarena.report.sentence import task_sentence
from fsarena.report.units import glued
from fsarena.session.records import given


def _glue(value: object) -> object:
    """Every text printed into the page, with non-breaking spaces between numbers and units."""
    if isinstance(value, str) and not isinstance(value, Markup):  # Markup: charts, our HTML
        return glued(value)
    return value


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("fsarena.report", "templates"),
    autoescape=True,
    finalize=_glue,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
# The kind of a document block (Paragraph, Figure, ...): the macros render by kind.
_ENV.filters["block_type"] = lambda block: type(block).__name__


# Charts of the whole comparison, drawn under "CPU, device I/O and space".
OVERVIEW = ("cpu", "device", "space")


def render(comparison: Comparison) -> str:
    """The report with its charts inlined (no chart files)."""
    html, _ = bundle(comparison, None)
    return html


def bundle(comparison: Comparison, asset_dir: str | None) -> tuple[str, list[charts.Chart]]:
    """The report and its charts; with asset_dir, PNGs are drawn too and the page links them."""
    # Charts and task tables rank one driver group (scope.py); the others get their own section.
    full, comparison = comparison, _ranked(comparison)
    drawn = charts.build(comparison, png=asset_dir is not None)
    by_name = {c.name: charts.figure(c) for c in drawn}
    context = {
        "title": _title(comparison),
        # The answer as the document says it (contents.py); it knows the unranked groups.
        "answer": contents.answer_section(full),
        "header": header_lines(comparison.session),
        "outcome": None if (told := outcome.outcome(full.session)).complete else told,
        "method": prose.METHOD,
        "kinds": prose.verdicts(comparison),
        "recommendation": prose.recommendation(comparison),
        "heatmap": by_name.get("heatmap"),
        "tasks": [task_context(comparison, t, by_name) for t in comparison.tables],
        "driver_notes": explanations(full.session),
        "driver_groups": unranked_sections(full),
        "aged": aging.sections(full.session),
        "compression": [
            (figure, chart, compression.rows(figure))
            for figure, chart in compression.pictures(full.session)
        ],
        "compression_headers": compression.HEADERS,
        "compression_notes": [compression.PARETO_NOTE, compression.CEILING_NOTE],
        "aged_verdict": aging.verdict(full.session),
        "overview": [f for f in by_name.values() if f.name.split("-")[0] in OVERVIEW],
        "ceiling_headers": prose.CEILING_HEADERS,
        "ceilings": prose.ceiling_rows(comparison),
        "provenance": _provenance(comparison),
        "warnings": prose.warnings(comparison),
        "failures": [
            [f.filesystem, f.task, str(f.repetition), f.status, f.error]
            for f in comparison.failures
        ],
        "asset_dir": asset_dir,
        "articles_caveat": "; ".join(
            filter(None, (articles.CAVEAT, articles.left_out(full.session)))
        ),
        "articles_headers": articles.HEADERS,
        "articles": articles.table(full.session),  # it picks what compares (articles.py)
    }
    return template("report.html.j2").render(context), drawn


def _ranked(comparison: Comparison) -> Comparison:
    """The comparison of the ranked driver group only (itself when there is one group)."""
    scoped = verdict_scope(comparison.session)
    return comparison if scoped is comparison.session else build(scoped)


def template(name: str) -> jinja2.Template:
    return _ENV.get_template(name)


def _title(comparison: Comparison) -> str:
    fs = comparison.session.filesystems()
    return f"fsarena: {', '.join(fs)} — {comparison.session.plan.suite}"


# ---------------------------------------------------------------- per task


def _other_metrics(comparison: Comparison, table: TaskTable) -> list[str]:
    """Verdicts on the table's other metrics (CPU, faults, device bytes)."""
    lines = []
    for name in table.columns[1:]:
        result = comparison.verdicts.task(table.task, name) if comparison.verdicts else None
        if result is not None and len(result.ranking.order) >= 2:
            lines.append(f"{METRICS[name].label}: {task_sentence(result)}")
    return lines


def task_context(
    comparison: Comparison, table: TaskTable, by_name: Mapping[str, Figure]
) -> dict[str, Any]:
    """What the template shows for one task: its table, verdicts and chart."""
    headers, rows = cells.headline_grid(table)
    other_headers, other_rows = cells.other_grid(table)
    return {
        "task": table.task,
        "kind": table.kind,
        "description": table.description,
        "headers": headers,
        "rows": rows,
        "other_headers": other_headers,
        "other_rows": other_rows,
        "verdict": comparison_line(comparison, table),
        "others": _other_metrics(comparison, table),
        "chart": by_name.get(f"task-{table.task}"),
    }


# ---------------------------------------------------------------- provenance


def _flat(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    rows = []
    for key in sorted(data):
        value = data[key]
        if isinstance(value, Mapping):
            rows.extend(_flat(value, f"{prefix}{key}."))
        elif isinstance(value, list | tuple):
            rows.append((f"{prefix}{key}", " ".join(str(v) for v in value)))
        else:
            rows.append((f"{prefix}{key}", "–" if value is None else str(value)))
    return rows


def _provenance(comparison: Comparison) -> list[dict[str, Any]]:
    """Tables of where, with what and how the numbers were measured."""
    s = comparison.session
    stored = s.plan.model_dump(mode="json")  # every key as stored, the unknown ones too
    plan = {k: v for k, v in stored.items() if k not in ("task_info", "filesystems", "tasks")}
    session = {
        "fsarena": s.tool_version,
        "schema version": s.schema_version,
        "status": outcome.status_of(s),
        "started": s.created_at,
        "finished": s.finished_at or "–",
        "filesystems": ", ".join(s.filesystems()),
        "tasks": ", ".join(s.tasks()),
        "order per repetition": "; ".join(" ".join(o) for o in s.order) or "–",
    }
    profiles = [
        [
            name,
            p.fstype,
            p.driver or "",
            " ".join(p.mkfs),
            ",".join(p.mount_options) or "defaults",
            fmt(float(p.image_size_bytes) / 1e6) + " MB",
            p.notes,
        ]
        for name, p in sorted(s.profiles_as_run.items())
    ]
    datasets = [
        [
            name,
            d.spec.description,
            str(given(d.files, "")),
            fmt(float(d.total_bytes) / 1e6) + " MB",
            d.manifest_digest[:16],
        ]
        for name, d in sorted(s.datasets.items())
    ]
    return [
        {"title": "Session", "headers": [], "rows": list(session.items())},
        {"title": "Host", "headers": [], "rows": _flat(s.host.model_dump(mode="json"))},
        *(
            [{"title": "Emulated machine", "headers": [], "rows": machine_rows(s)}]
            if s.machine
            else []
        ),
        {"title": "Plan", "headers": [], "rows": _flat(plan)},
        {"title": "Dataset source", "headers": [], "rows": _flat(s.source.model_dump(mode="json"))},
        {"title": "Tool versions", "headers": [], "rows": sorted(s.tool_versions.items())},
        {
            "title": "Filesystems as run",
            "headers": ["name", "type", "driver", "mkfs", "mount options", "image", "notes"],
            "rows": profiles,
        },
        {
            "title": "Datasets",
            "headers": ["name", "spec", "files", "size", "manifest digest"],
            "rows": datasets,
        },
    ]
