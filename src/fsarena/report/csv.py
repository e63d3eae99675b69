"""CSV in long format: one row per run and metric, raw values, for your own statistics.

A metric the session stores but that cannot be trusted (results.UNAVAILABLE_BEFORE:
max RSS before schema 3) has a row with an empty value and a note saying why.
Every row also names its session (its start time, unique per session), suite,
scale, kernel and host, so the CSVs of many sessions can be concatenated
(`tail -n +2`) into one table and grouped by any of them.
"""

from __future__ import annotations

import csv
import io

from fsarena.measure.metrics import METRICS
from fsarena.report.comparison import PROBE_COLUMNS, Comparison, run_value
from fsarena.session.records import given

RAW_METRICS = (
    "wall_s",
    "user_s",
    "sys_s",
    "cpu_pct",
    "minor_faults",
    "major_faults",
    "max_rss_kib",
    "device_read_bytes",
    "device_write_bytes",
    "system_busy_s",
    "system_iowait_s",
    *PROBE_COLUMNS,
)
SESSION_FIELDS = ("session", "suite", "scale", "kernel", "host")
FIELDS = (
    *SESSION_FIELDS,
    *("filesystem", "task", "repetition", "status", "metric", "value", "unit", "error", "note"),
)
UNAVAILABLE_NOTE = "unavailable: recorded before schema 3, it was fsarena's own memory"


def _session_cells(comparison: Comparison) -> list[str]:
    s = comparison.session
    return [
        s.created_at,
        s.plan.suite,
        str(given(s.plan.scale, "")),
        s.host.kernel,
        s.host.hostname,
    ]


def render(comparison: Comparison) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(FIELDS)
    first = _session_cells(comparison)
    for run in comparison.session.runs:
        extra = set(run.values) | set(run.measurement.extra if run.measurement else {})
        names = [*RAW_METRICS, *sorted(extra - set(RAW_METRICS))]
        values = [
            (n, v)
            for n in names
            if (v := run_value(run, n)) is not None or (run.measurement and n in run.unavailable)
        ]
        if not values:
            writer.writerow(
                [
                    *first,
                    run.filesystem,
                    run.task,
                    run.repetition,
                    run.status,
                    "",
                    "",
                    "",
                    run.error,
                    "",
                ]
            )
        for name, value in values:
            unit = raw_unit(name)
            shown, note = ("", UNAVAILABLE_NOTE) if value is None else (repr(value), "")
            writer.writerow(
                [
                    *first,
                    run.filesystem,
                    run.task,
                    run.repetition,
                    run.status,
                    name,
                    shown,
                    unit,
                    run.error,
                    note,
                ]
            )
    return buf.getvalue()


def raw_unit(name: str) -> str:
    """The unit of the raw stored value (not the display unit)."""
    if name.endswith("_s"):
        return "s"
    if name.endswith("_bytes"):
        return "bytes"
    if name.endswith("_kib"):
        return "KiB"
    metric = METRICS.get(name)
    return metric.unit if metric and metric.scale == 1.0 else ""
