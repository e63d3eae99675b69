"""The HTML report: one self-contained offline file, verdicts first, charts inlined as SVG.

Nothing is fetched when it is opened: no scripts, no web fonts, no external
stylesheets or images (a test opens it in chromium with the network blocked).
The same charts can also be written as PNG and SVG files beside it; the page
then links to them (links are not fetched).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import jinja2

from fsarena.measure import METRICS
from fsarena.phrases import describe, metric_word
from fsarena.report import aged, articles, charts, outcome, prose
from fsarena.report.groups import explanations, unranked_sections
from fsarena.report.machine import machine_rows
from fsarena.report.scope import verdict_scope
from fsarena.report.table import (
    Comparison,
    Row,
    TaskTable,
    build,
    comparison_line,
    fmt,
    header_lines,
    pct_text,
    row_flags,
    shown,
)

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("fsarena.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def render(comparison: Comparison) -> str:
    """The report with its charts inlined (no chart files)."""
    html, _ = bundle(comparison, None)
    return html


def bundle(comparison: Comparison, asset_dir: str | None) -> tuple[str, list[charts.Chart]]:
    """The report and its charts; with asset_dir, PNGs are drawn too and the page links them."""
    # Charts and task tables rank one driver group (scope.py); the others get their own section.
    full, comparison = comparison, _ranked(comparison)
    drawn = charts.build(comparison, png=asset_dir is not None)
    by_name = {c.name: c for c in drawn}
    context = {
        "title": _title(comparison),
        "header": header_lines(comparison.session),
        "outcome": None if (told := outcome.outcome(full.session)).complete else told,
        "method": prose.METHOD,
        "kinds": prose.verdicts(comparison),
        "recommendation": prose.recommendation(comparison),
        "heatmap": by_name.get("heatmap"),
        "tasks": [task_context(comparison, t, by_name) for t in comparison.tables],
        "driver_notes": explanations(full.session),
        "driver_groups": unranked_sections(full),
        "aged": aged.sections(full.session),
        "aged_verdict": aged.verdict(full.session),
        "overview": [c for c in drawn if c.name.split("-")[0] in ("cpu", "device", "space")],
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
        "articles": [
            {
                "title": f"{r.task}: {r.label}",
                "note": f"{r.article}; {articles.agreement(r)}",
                "rows": [[fs, articles.cell(a), articles.cell(b)] for fs, a, b in r.cells],
            }
            for r in articles.comparisons(full.session)  # it picks what compares (articles.py)
        ],
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
    return f"fsarena: {', '.join(fs)} — {comparison.session.plan.get('suite', '')}"


# ---------------------------------------------------------------- per task


def _headers(table: TaskTable) -> list[str]:
    metric = METRICS[table.columns[0]]
    unit = f" ({metric.unit})" if metric.unit else ""
    first = [
        "filesystem",
        "n",
        f"{metric.label}{unit} mean",
        "median",
        "sd",
        "CV",
        "95 % CI",
        "min–max",
    ]
    rest = [
        f"{METRICS[c].label}{' (' + METRICS[c].unit + ')' if METRICS[c].unit else ''}"
        for c in table.columns[1:]
    ]
    return [*first, *rest, "flags"]


def _cells(row: Row, table: TaskTable) -> list[str]:
    metric = METRICS[table.columns[0]]
    s = row.stats.get(metric.name)
    n = str(row.n_ok)
    if row.n_failed or row.n_skipped:
        n += f" ({row.n_failed} failed, {row.n_skipped} skipped)"
    if s is None:
        head = ["–"] * 6
    else:
        ci = "–"
        if s.n >= 2 and math.isfinite(s.ci_high):
            ci = f"{fmt(shown(s.ci_low, metric))}–{fmt(shown(s.ci_high, metric))}"
        head = [
            fmt(shown(s.mean, metric)),
            fmt(shown(s.median, metric)),
            fmt(shown(s.stdev, metric), 2),
            f"{pct_text(100 * s.cv)} %",
            ci,
            f"{fmt(shown(s.min, metric))}–{fmt(shown(s.max, metric))}",
        ]
    rest = [
        fmt(shown(row.stats[c].mean, METRICS[c])) if c in row.stats else "–"
        for c in table.columns[1:]
    ]
    return [row.filesystem, n, *head, *rest, ", ".join(row_flags(row, table))]


def _other_metrics(comparison: Comparison, table: TaskTable) -> list[str]:
    """Verdicts on the table's other metrics (CPU, faults, device bytes)."""
    lines = []
    for name in table.columns[1:]:
        result = comparison.verdicts.task(table.task, name) if comparison.verdicts else None
        if result is not None and len(result.ranking.order) >= 2:
            metric = METRICS[name]
            lines.append(f"{metric.label}: {describe(result.ranking, metric_word(metric))}")
    return lines


def task_context(
    comparison: Comparison, table: TaskTable, by_name: Mapping[str, charts.Chart]
) -> dict[str, Any]:
    """What the template shows for one task: its table, verdicts and chart."""
    return {
        "task": table.task,
        "kind": table.kind,
        "description": table.description,
        "headers": _headers(table),
        "rows": [_cells(r, table) for r in table.rows],
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
            rows.append((f"{prefix}{key}", str(value)))
    return rows


def _provenance(comparison: Comparison) -> list[dict[str, Any]]:
    """Tables of where, with what and how the numbers were measured."""
    s = comparison.session
    plan = {k: v for k, v in s.plan.items() if k not in ("task_info", "filesystems", "tasks")}
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
            str(p.get("fstype", "")),
            str(p.get("driver", "")),
            " ".join(str(a) for a in p.get("mkfs", [])),
            ",".join(str(o) for o in p.get("mount_options", [])) or "defaults",
            fmt(float(p.get("image_size_bytes", 0)) / 1e6) + " MB",
            str(p.get("notes", "")),
        ]
        for name, p in sorted(s.profiles_as_run.items())
    ]
    datasets = [
        [
            name,
            str(d.get("spec", {}).get("description", "")),
            str(d.get("files", "")),
            fmt(float(d.get("total_bytes", 0)) / 1e6) + " MB",
            str(d.get("manifest_digest", ""))[:16],
        ]
        for name, d in sorted(s.datasets.items())
    ]
    return [
        {"title": "Session", "headers": [], "rows": list(session.items())},
        {"title": "Host", "headers": [], "rows": _flat(s.host)},
        *(
            [{"title": "Emulated machine", "headers": [], "rows": machine_rows(s)}]
            if s.machine
            else []
        ),
        {"title": "Plan", "headers": [], "rows": _flat(plan)},
        {"title": "Dataset source", "headers": [], "rows": _flat(s.source)},
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
