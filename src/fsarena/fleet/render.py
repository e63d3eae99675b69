"""The fleet report in every format: hosts x filesystems, ratios to the baseline per host.

Each format is one small function over the same cells (merge.FleetReport), in
the registry FORMATS. A ratio below 1 means less of the metric than the
baseline on that host (for times: faster); `*` marks a significant difference
(Welch's t-test on log samples, p < 0.05, not adjusted for the many cells).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from collections.abc import Callable

from fsarena.analysis.stats import TOO_WIDE
from fsarena.fleet.merge import FleetReport, agreement
from fsarena.measure.metrics import METRICS


def _interval(low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return ""
    if low <= 0 or high / low > TOO_WIDE:
        return f" [interval over {TOO_WIDE:.0f}x wide: too few runs]"
    return f" [{low:.3f}, {high:.3f}]"


def _ratio(report: FleetReport, task: str, fs: str, label: str) -> str:
    cell = report.cells.get((task, fs, label))
    if cell is None:
        return "not measured"
    t = cell.test
    return f"{t.ratio:.3f}{_interval(t.low, t.high)}{' *' if cell.significant else ''}"


def _rows(report: FleetReport, task: str) -> list[list[str]]:
    rows = []
    for host in report.hosts:
        if not host.complete:
            rows.append([host.label, *[f"{host.session.status}: not averaged in"] * len(
                report.filesystems)])  # fmt: skip
            continue
        rows.append(
            [host.label, *(_ratio(report, task, f, host.label) for f in report.filesystems)]
        )
    geo = [
        f"{report.across[(task, f)].geomean:.3f}" if (task, f) in report.across else "-"
        for f in report.filesystems
    ]
    rows.append(["geometric mean", *geo])
    return rows


def _intro(report: FleetReport) -> list[str]:
    metric = METRICS[report.metric]
    return [
        f"Fleet of {len(report.hosts)} hosts ({len(report.included)} complete): {metric.label} "
        f"of each filesystem as a ratio to {report.baseline} measured on the same host, "
        "with its 95 % interval; * significant (p < 0.05). Raw figures are never pooled "
        "across hosts.",
        *(f"warning: {w}" for w in report.warnings),
    ]


def _facts(report: FleetReport) -> list[list[str]]:
    facts = [h.facts() for h in report.hosts]
    keys = list(facts[0])
    return [[k, *(f[k] for f in facts)] for k in keys]


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def text(report: FleetReport) -> str:
    out = _intro(report)
    for task in report.tasks:
        out += ["", f"{task} ({report.metric} / {report.baseline})"]
        out += _table([["host", *report.filesystems], *_rows(report, task)])
        out += [f"  {agreement(report, task, f)}" for f in report.filesystems
                if (task, f) in report.across]  # fmt: skip
    out += ["", "Host facts"]
    out += _table([["", *(h.label for h in report.hosts)], *_facts(report)])
    return "\n".join(out) + "\n"


def _md_table(rows: list[list[str]]) -> list[str]:
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    return [
        "| " + " | ".join(esc[0]) + " |",
        "|" + "---|" * len(esc[0]),
        *("| " + " | ".join(r) + " |" for r in esc[1:]),
    ]


def markdown(report: FleetReport) -> str:
    intro = _intro(report)
    out = ["# fsarena fleet report", "", intro[0], "", *(f"- {w}" for w in intro[1:])]
    for task in report.tasks:
        out += ["", f"## {task}", ""]
        out += _md_table([["host", *report.filesystems], *_rows(report, task)])
        out += ["", *(f"- {agreement(report, task, f)}" for f in report.filesystems
                      if (task, f) in report.across)]  # fmt: skip
    out += ["", "## Host facts", ""]
    out += _md_table([["", *(h.label for h in report.hosts)], *_facts(report)])
    return "\n".join(out) + "\n"


def _records(report: FleetReport) -> list[dict[str, object]]:
    found: list[dict[str, object]] = []
    for (task, fs, label), cell in report.cells.items():
        t = cell.test
        found.append({
            "task": task, "filesystem": fs, "baseline": report.baseline, "host": label,
            "metric": report.metric, "ratio": t.ratio, "low": t.low, "high": t.high,
            "p_value": t.p_value, "significant": cell.significant,
        })  # fmt: skip
    return found


def csv_(report: FleetReport) -> str:
    buf = io.StringIO()
    records = _records(report)
    fields = ["task", "filesystem", "baseline", "host", "metric", "ratio", "low", "high",
              "p_value", "significant"]  # fmt: skip
    writer = csv.DictWriter(buf, fields, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


def _finite(value: object) -> object:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def json_(report: FleetReport) -> str:
    data = {
        "baseline": report.baseline,
        "metric": report.metric,
        "warnings": report.warnings,
        "hosts": [
            {"label": h.label, "path": str(h.path), "complete": h.complete, "facts": h.facts()}
            for h in report.hosts
        ],
        "cells": [{k: _finite(v) for k, v in r.items()} for r in _records(report)],
        "across": [
            {
                "task": t,
                "filesystem": f,
                "geomean": _finite(a.geomean),
                "hosts": a.hosts,
                "better": a.better,
                "worse": a.worse,
                "significant_better": a.significant_better,
                "significant_worse": a.significant_worse,
                "summary": agreement(report, t, f),
            }
            for (t, f), a in report.across.items()
        ],
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def _html_table(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join(
        ('<tr class="geo">' if r[0] == "geometric mean" else "<tr>")
        + "".join(f"<td>{html.escape(c)}</td>" for c in r)
        + "</tr>"
        for r in rows[1:]
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _summary(report: FleetReport) -> list[list[str]]:
    """The answer first: per task and filesystem, the geometric mean and the agreement."""
    rows = [["task", "filesystem", f"geometric mean (/ {report.baseline})", "hosts agree"]]
    for (task, fs), a in report.across.items():
        rows.append([task, fs, f"{a.geomean:.3f}", agreement(report, task, fs)])
    return rows


_CSS = (
    "body{font-family:sans-serif;max-width:72em;margin:1em auto;padding:0 1em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:3px 10px;text-align:left;"
    "border-bottom:1px solid #ddd}td+td{font-family:monospace}"
    "tr.geo td{font-weight:bold;border-top:2px solid #888}"
    ".warn{background:#fff4d6;border-left:4px solid #e0a000;padding:4px 8px}"
    ".agree{color:#333;margin-top:0}"
)


def html_(report: FleetReport) -> str:
    intro = _intro(report)
    parts = [f"<p>{html.escape(intro[0])}</p>"]
    parts += [f'<p class="warn">{html.escape(w)}</p>' for w in intro[1:]]
    if report.across:
        parts += ["<h2>Across hosts</h2>", _html_table(_summary(report))]
    for task in report.tasks:
        parts.append(f"<h2>{html.escape(task)}</h2>")
        parts.append(_html_table([["host", *report.filesystems], *_rows(report, task)]))
        parts += [f'<p class="agree">{html.escape(agreement(report, task, f))}</p>'
                  for f in report.filesystems if (task, f) in report.across]  # fmt: skip
    parts.append("<h2>Host facts</h2>")
    parts.append(_html_table([["", *(h.label for h in report.hosts)], *_facts(report)]))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>fsarena fleet report</title><style>{_CSS}</style></head>\n"
        "<body><h1>fsarena fleet report</h1>\n" + "\n".join(parts) + "\n</body></html>\n"
    )


FORMATS: dict[str, Callable[[FleetReport], str]] = {
    "text": text,
    "markdown": markdown,
    "csv": csv_,
    "json": json_,
    "html": html_,
}
