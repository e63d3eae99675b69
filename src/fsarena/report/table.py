"""The comparison, built once from a session: per task, a row per filesystem with statistics.

Every exporter renders this structure; none recomputes anything. Only metrics
that mean something for a task are shown: timings for timed tasks, the probed
values (capacity) for probes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fsarena.measure import METRICS, Metric, metric_value
from fsarena.results import Run, Session
from fsarena.stats import Summary, summarize

TIMED_COLUMNS = (
    "wall_s",
    "cpu_pct",
    "minor_faults",
    "major_faults",
    "device_read_bytes",
    "device_write_bytes",
)
PROBE_COLUMNS = ("capacity_pct", "available_bytes")
# Tasks that move a payload also show its throughput and how it compares with the device.
PAYLOAD_COLUMNS = ("throughput_bytes_per_s", "ceiling_pct")


def run_value(run: Run, metric: str) -> float | None:
    """A metric's raw value in one run: a probed value, or from the measurement."""
    if metric in run.values:
        return float(run.values[metric])
    if run.measurement is None:
        return None
    return metric_value(run.measurement, metric)


@dataclass(frozen=True)
class Row:
    filesystem: str
    n_ok: int
    n_failed: int
    n_skipped: int
    stats: dict[str, Summary]
    errors: tuple[str, ...] = ()
    n_invalid: int = 0


@dataclass(frozen=True)
class TaskTable:
    task: str
    kind: str
    description: str
    timed: bool
    columns: tuple[str, ...]
    rows: tuple[Row, ...]

    def metric(self, name: str) -> Metric:
        return METRICS[name]


@dataclass(frozen=True)
class Failure:
    filesystem: str
    task: str
    repetition: int
    status: str
    error: str


@dataclass(frozen=True)
class Comparison:
    session: Session
    tables: tuple[TaskTable, ...]
    failures: tuple[Failure, ...] = field(default=())


def _row(filesystem: str, runs: list[Run], columns: tuple[str, ...], ceiling: float | None) -> Row:
    ok = [r for r in runs if r.status == "ok"]
    stats: dict[str, Summary] = {}
    for name in columns:
        values = [v for r in ok if (v := run_value(r, name)) is not None]
        if name == "ceiling_pct" and ceiling:
            rates = (run_value(r, "throughput_bytes_per_s") for r in ok)
            values = [100 * rate / ceiling for rate in rates if rate is not None]
        if values:
            stats[name] = summarize(values, METRICS[name].mean)
    errors = tuple(sorted({r.error for r in runs if r.status == "failed" and r.error}))
    return Row(
        filesystem=filesystem,
        n_ok=len(ok),
        n_failed=sum(r.status == "failed" for r in runs),
        n_skipped=sum(r.status == "skipped" for r in runs),
        stats=stats,
        errors=errors,
        n_invalid=sum(r.status == "invalid" for r in runs),
    )


def build(session: Session) -> Comparison:
    info = session.plan.get("task_info", {})
    tables = []
    for task in session.tasks():
        meta = info.get(task, {})
        timed = bool(meta.get("timed", True))
        columns = TIMED_COLUMNS if timed else PROBE_COLUMNS
        payload = meta.get("payload")
        if payload:
            columns = (*columns, *PAYLOAD_COLUMNS)
        ceiling = session.ceiling(str(payload)) if payload else None
        rows = tuple(
            _row(
                fs,
                [r for r in session.runs if r.task == task and r.filesystem == fs],
                columns,
                ceiling,
            )
            for fs in session.filesystems()
        )
        rows = tuple(r for r in rows if r.n_ok or r.n_failed or r.n_skipped or r.n_invalid)
        if rows:
            tables.append(
                TaskTable(
                    task=task,
                    kind=str(meta.get("kind", "")),
                    description=str(meta.get("description", "")),
                    timed=timed,
                    columns=columns,
                    rows=rows,
                )
            )
    failures = tuple(
        Failure(r.filesystem, r.task, r.repetition, r.status, r.error)
        for r in session.runs
        if r.status != "ok"
    )
    return Comparison(session=session, tables=tuple(tables), failures=failures)


def fmt(value: float, digits: int = 4) -> str:
    """A number to `digits` significant digits (all integer digits kept), no exponent."""
    if value != value:
        return "nan"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value))) + 1
    decimals = max(0, digits - magnitude)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def shown(summary_value: float, metric: Metric) -> float:
    return summary_value * metric.scale


def _cell_texts(row: Row, table: TaskTable) -> list[str]:
    cells = [row.filesystem, str(row.n_ok)]
    for i, name in enumerate(table.columns):
        metric = METRICS[name]
        s = row.stats.get(name)
        if s is None:
            cells.extend(["-", "-"] if i == 0 and table.timed else ["-"])
            continue
        if i == 0 and table.timed:
            # The headline metric carries its spread: mean ± stdev, and min–max.
            cells.append(f"{fmt(shown(s.mean, metric))} ± {fmt(shown(s.stdev, metric), 2)}")
            cells.append(f"{fmt(shown(s.min, metric))}–{fmt(shown(s.max, metric))}")
        else:
            cells.append(fmt(shown(s.mean, metric)))
    not_ok = [
        f"{count} {label}"
        for count, label in (
            (row.n_failed, "failed"),
            (row.n_invalid, "invalid"),
            (row.n_skipped, "skipped"),
        )
        if count
    ]
    if not_ok:
        cells[1] += f" ({', '.join(not_ok)})"
    return cells


def grid(table: TaskTable) -> tuple[list[str], list[list[str]]]:
    """Headers and cell texts of a task's table, shared by the text and Markdown exporters."""
    headers = ["filesystem", "n"]
    for i, name in enumerate(table.columns):
        metric = METRICS[name]
        unit = f" {metric.unit}" if metric.unit else ""
        if i == 0 and table.timed:
            headers.extend([f"{metric.label}{unit} (mean ± sd)", "min–max"])
        else:
            headers.append(f"{metric.label}{unit}")
    return headers, [_cell_texts(row, table) for row in table.rows]


def header_lines(session: Session) -> list[str]:
    """Provenance shown above the tables."""
    host = session.host
    plan = session.plan
    mem = int(host.get("mem_total_bytes", 0)) / 2**30
    return [
        f"suite {plan.get('suite', '?')}, {_repetitions(session)}, "
        f"scale {plan.get('scale', '?')}, seed {plan.get('seed', '?')}, status {session.status}",
        f"kernel {host.get('kernel', '?')}, {host.get('cpu_model', '?')} x{host.get('cpus', '?')}, "
        f"{mem:.1f} GiB RAM",
        f"target: loop images (direct I/O) in {host.get('workdir', '?')}; "
        f"datasets on {session.source.get('kind', '?')}",
        *_ceiling_lines(session),
        f"caches dropped before every task; writes timed through syncfs; "
        f"fsarena {session.tool_version}, started {session.created_at}",
    ]


def _repetitions(session: Session) -> str:
    """How many repetitions ran, and the adaptive target if there was one."""
    planned = session.plan.get("repetitions", "?")
    target = session.plan.get("target_ci_pct")
    if target is None:
        return f"{planned} repetitions"
    return (
        f"{len(session.order)} repetitions (adaptive: at least {planned}, "
        f"until the 95 % CI of every task was within ±{target:g} %)"
    )


def _ceiling_lines(session: Session) -> list[str]:
    """The device's raw throughput by fio, as measured in this session."""
    parts = []
    for direction in ("write", "read"):
        rates = [c.bytes_per_s for c in session.ceilings if c.direction == direction]
        if rates:
            parts.append(
                f"{direction} best {fmt(max(rates) / 1e6)} MB/s "
                f"(range {fmt(min(rates) / 1e6)}–{fmt(max(rates) / 1e6)}, n={len(rates)})"
            )
    if not parts:
        return []
    return ["device ceiling (fio, sequential, direct I/O): " + "; ".join(parts)]
