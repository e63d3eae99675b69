"""The fleet report: hosts x filesystems, ratios to the baseline per host.

`document(report)` says it as the report's blocks (report/document.py), which
every document format of report/formats.py lays out as it lays out the other
commands' documents; CSV and JSON are data exports of the same cells
(merge.FleetReport), in EXPORTS. A ratio below 1 means less of the metric than
the baseline on that host (for times: faster); `*` marks a significant difference
(Welch's t-test on log samples, p < 0.05, not adjusted for the many cells).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable

from fsarena.analysis.stats import TOO_WIDE
from fsarena.fleet.merge import FleetReport, agreement
from fsarena.measure.metrics import METRICS
from fsarena.report import render_document
from fsarena.report.document import Block, Forms, Heading, Notes, Paragraph, Section, Table


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


def _intro(report: FleetReport) -> str:
    metric = METRICS[report.metric]
    return (
        f"Fleet of {len(report.hosts)} hosts ({len(report.included)} complete): {metric.label} "
        f"of each filesystem as a ratio to {report.baseline} measured on the same host, "
        "with its 95 % interval; * significant (p < 0.05). Raw figures are never pooled "
        "across hosts."
    )


def _facts(report: FleetReport) -> list[list[str]]:
    facts = [h.facts() for h in report.hosts]
    keys = list(facts[0])
    return [[k, *(f[k] for f in facts)] for k in keys]


def _table(rows: list[list[str]], style: str = "") -> Table:
    return Table(tuple(rows[0]), tuple(tuple(r) for r in rows[1:]), style=style)


def _summary(report: FleetReport) -> list[list[str]]:
    """The answer first: per task and filesystem, the geometric mean and the agreement."""
    rows = [["task", "filesystem", f"geometric mean (/ {report.baseline})", "hosts agree"]]
    for (task, fs), a in report.across.items():
        rows.append([task, fs, f"{a.geomean:.3f}", agreement(report, task, fs)])
    return rows


def _task(report: FleetReport, task: str) -> Section:
    """One task: each host's ratios, their geometric mean, and how far the hosts agree."""
    agree = [agreement(report, task, f) for f in report.filesystems if (task, f) in report.across]
    table = _table([["host", *report.filesystems], *_rows(report, task)], "labels")
    heading = Heading(f"{task} ({report.metric} / {report.baseline})", level=3)
    return Section(heading, (table, *((Notes(tuple(agree)),) if agree else ())))


def document(report: FleetReport) -> tuple[Block, ...]:
    """The fleet report as blocks: what it compares, the warnings, the answer across hosts
    (on a page, which has room for it first), each task, the hosts' facts."""
    blocks: list[Block] = [Heading("fsarena fleet report", level=1), Paragraph(_intro(report))]
    if report.warnings:
        blocks.append(Notes(tuple(f"warning: {w}" for w in report.warnings)))
    if report.across:  # the tasks' own tables say it again, read top to bottom
        across = Section(Heading("Across hosts", level=3), (_table(_summary(report), "text"),))
        blocks.append(Forms(short=(), full=(across,)))
    blocks += [_task(report, task) for task in report.tasks]
    facts = _table([["", *(h.label for h in report.hosts)], *_facts(report)], "labels")
    blocks.append(Section(Heading("Host facts", level=3), (facts,)))
    return tuple(blocks)


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


# The fleet's data exports, one per data format that names "fleet" (report/formats.py).
EXPORTS: dict[str, Callable[[FleetReport], str]] = {"csv": csv_, "json": json_}


def render(report: FleetReport, fmt: str) -> str:
    """The fleet report in a format of report/formats.py that names "fleet"."""
    if fmt in EXPORTS:
        return EXPORTS[fmt](report)
    return render_document(fmt, document(report), "fsarena fleet report")
