"""The comparison, built once from a session: per task, a row per filesystem with statistics.

Every exporter renders this structure; none recomputes anything. Only metrics
that mean something for a task are shown: timings for timed tasks, the probed
values (capacity) for probes. The first column is a task's headline metric:
it carries the spread, the flags (unstable, outliers) and the verdicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from fsarena.analysis.method import durability, loop_io
from fsarena.analysis.phrases import number
from fsarena.analysis.scope import group_words, other_groups, scope_of, scope_words, verdict_scope
from fsarena.analysis.stats import Summary, outliers, summarize
from fsarena.analysis.verdicts import Verdicts, analyse
from fsarena.measure.metrics import CEILING_TOLERANCE, METRICS, Metric, ceiling_catches
from fsarena.report.flags import Flag, flags_of, pct_text, settle, too_wide
from fsarena.report.machine_section import machine_lines
from fsarena.report.outcome import status_of
from fsarena.report.rows import Row as Row
from fsarena.report.rows import TaskTable as TaskTable
from fsarena.report.sentence import task_sentence
from fsarena.session.file import Run, Session
from fsarena.session.records import given

TIMED_COLUMNS = (
    "wall_s",
    "cpu_pct",
    "minor_faults",
    "major_faults",
    "max_rss_kib",  # the command's own (fsarena-timeit), as GNU time reports it
    "device_read_bytes",
    "device_write_bytes",
)
PROBE_COLUMNS = ("capacity_pct", "available_bytes")
# Tasks that move a payload also show its throughput and how it compares with the device.
PAYLOAD_COLUMNS = ("throughput_bytes_per_s", "ceiling_pct")
# A headline mean whose 95 % CI half-width exceeds this share of it is too wide,
# unless the plan set its own target (plan["target_ci_pct"]); see `matters` for when
# that is flagged.
DEFAULT_TARGET_CI_PCT = 10.0


def run_value(run: Run, metric: str) -> float | None:
    """A metric's raw value in one run: a probed value, or from the measurement."""
    return run.value(metric)


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
    verdicts: Verdicts | None = None
    flags: tuple[Flag, ...] = ()
    target_ci_pct: float = DEFAULT_TARGET_CI_PCT


def _row(
    filesystem: str,
    runs: list[Run],
    columns: tuple[str, ...],
    ceiling: float | None,
    target_rel: float,
) -> Row:
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
    head = [(r.repetition, v) for r in ok if (v := run_value(r, columns[0])) is not None]
    first = stats.get(columns[0])
    return Row(
        filesystem=filesystem,
        n_ok=len(ok),
        n_failed=sum(r.status == "failed" for r in runs),
        n_skipped=sum(r.status == "skipped" for r in runs),
        stats=stats,
        errors=errors,
        n_invalid=sum(r.status == "invalid" for r in runs),
        outliers=tuple(head[i][0] for i in outliers([v for _, v in head])),
        unstable=first is not None and too_wide(first, METRICS[columns[0]], target_rel),
        unavailable=frozenset(m for r in ok for m in r.unavailable),
    )


def target_ci_pct(session: Session) -> float:
    value = session.plan.target_ci_pct
    return float(value) if isinstance(value, int | float) and value > 0 else DEFAULT_TARGET_CI_PCT


def build(session: Session) -> Comparison:
    target_pct = target_ci_pct(session)
    tables = []
    for task in session.tasks():
        meta = session.plan.info(task)
        timed = meta.timed
        # plan task_info "columns" (vocabulary.md): the metrics a task's table shows, in order.
        given = tuple(c for c in meta.columns if c in METRICS)
        columns = given or (TIMED_COLUMNS if timed else PROBE_COLUMNS)
        payload = meta.payload
        if payload:
            columns = (*columns, *(c for c in PAYLOAD_COLUMNS if c not in columns))
        ceiling = session.ceiling(str(payload)) if payload else None
        rows = tuple(
            _row(
                fs,
                [r for r in session.runs if r.task == task and r.filesystem == fs],
                columns,
                ceiling,
                target_pct / 100,
            )
            for fs in session.filesystems()
        )
        rows = tuple(r for r in rows if r.n_ok or r.n_failed or r.n_skipped or r.n_invalid)
        # A task no filesystem measured has only dashes to show: the outcome at the top
        # of the report and the failures list say why, once.
        if any(r.n_ok or r.n_invalid for r in rows):
            tables.append(
                TaskTable(
                    task=task,
                    kind=meta.kind,
                    description=meta.description,
                    timed=timed,
                    columns=columns,
                    rows=rows,
                )
            )
    failures = tuple(
        # The runner's invalid runs say "invalid: ..." themselves; reports print the status.
        Failure(r.filesystem, r.task, r.repetition, r.status, r.error.removeprefix(f"{r.status}: "))
        for r in session.runs
        if r.status != "ok"
    )
    # Verdicts rank one driver group only (see scope.py): never guests against the host;
    # each other group of two or more gets its own answer, ranked among themselves.
    judged = {t.task: t.columns for t in tables}
    verdicts = analyse(verdict_scope(session), judged)
    own = [
        (f"Among {group_words(session, g)}", found.answer.recommendation)
        for g in other_groups(session)
        if (found := analyse(scope_of(session, g), judged)).kinds
    ]
    if own:
        verdicts = replace(verdicts, answer=replace(verdicts.answer, groups=tuple(own)))
    tables = settle(tables, verdicts)
    return Comparison(
        session=session,
        tables=tuple(tables),
        failures=failures,
        verdicts=verdicts,
        flags=tuple(flags_of(tuple(tables), session, target_pct)),
        target_ci_pct=target_pct,
    )


def fmt(value: float, digits: int = 3) -> str:
    """A number for people: three significant digits, no exponent (phrases.number)."""
    return number(value, digits)


def shown(summary_value: float, metric: Metric) -> float:
    return summary_value * metric.scale


def row_flags(row: Row, table: TaskTable) -> list[str]:
    """Short labels of a row's flags: 'unstable ±23 %', 'outlier r2'."""
    labels = []
    s = row.stats.get(table.columns[0])
    if row.unstable and s is not None:
        rel = s.ci_half_width_rel
        labels.append(f"unstable ±{pct_text(100 * rel)} %" if math.isfinite(rel) else "unstable")
    labels.extend(f"outlier r{rep}" for rep in row.outliers)
    return labels


def comparison_line(comparison: Comparison, table: TaskTable) -> str:
    """The headline metric's verdict for one task: winners with ratios, or a tie."""
    if comparison.verdicts is None:
        return ""
    result = comparison.verdicts.task(table.task, table.columns[0])
    if result is None:
        return ""
    text = task_sentence(result)
    if result.invalid:
        text += f" (invalid runs of {', '.join(result.invalid)} left out: faster than the device)"
    scope = scope_words(comparison.session)  # other driver groups are never ranked with these
    return f"among {scope}: {text}" if scope else text


def _target(session: Session) -> str:
    """Where the filesystems were made: loop images, or the block device a session names."""
    t = session.target
    if not t:
        # What a loop image still adds (docs/methodology.md): said where it is read.
        return (
            f"{loop_io(session)} in {session.host.workdir or '?'}; each flush of a loop "
            "device is an fsync of its image on the host, so for fsync-bound work "
            "(databases, mail spools) give a disk with --device"
        )
    return f"block device {t.path} (model {t.model or '-'}, {t.size_bytes} bytes)"


def header_lines(session: Session) -> list[str]:
    """Provenance shown above the tables."""
    host = session.host
    plan = session.plan
    mem = host.mem_total_bytes / 2**30
    machine = (
        f"kernel {host.kernel or '?'}, {host.cpu_model or '?'} x{host.cpus or '?'}, "
        f"{mem:.1f} GiB RAM"
    )
    if plan.crashtest is not None:  # `fsarena powerloss`: no datasets, no timed tasks
        return [
            f"power-loss test, seed {given(plan.seed)}, status {session.status}",
            machine,
            "writes and flushes recorded through flogfs (loop direct I/O); crash states "
            f"rebuilt on a private tmpfs; fsarena {session.tool_version}, "
            f"started {session.created_at}",
        ]
    # Where a dataset did not come from fsarena's own generators (or why not), say so.
    origins = [
        f"dataset {name}: {d.origin}"
        for name, d in sorted(session.datasets.items())
        if d.origin is not None and d.origin != "generated"
    ]
    return [
        f"suite {plan.suite or '?'}, {_repetitions(session)}, "
        f"scale {given(plan.scale)}, seed {given(plan.seed)}, "
        f"status {status_of(session)}",
        machine,
        *machine_lines(session),
        f"target: {_target(session)}; datasets on {session.source.kind or '?'}",
        *_ceiling_lines(session),
        f"{session.cold_caches or 'caches dropped before every task'}; "
        f"{durability(session)}; "
        f"fsarena {session.tool_version}, started {session.created_at}",
        *origins,
        *_engine_lines(session),
    ]


def _engine_lines(session: Session) -> list[str]:
    """Which container engine ran (podman, or umoci where podman could not), as its runs said."""
    ran = sorted({c.detail for r in session.runs for c in r.checks if c.name == "container engine"})
    return [f"container images: {detail}" for detail in ran]


def _repetitions(session: Session) -> str:
    """How many repetitions ran, and the adaptive target if there was one."""
    planned = given(session.plan.repetitions)
    target = session.plan.target_ci_pct
    ran = len(session.order)
    if session.plan.stopping.eliminates and ran and ran != planned:
        # A decisive run starts from the suite's count: more rounds to decide, or fewer
        # when its time budget ran out first.
        return f"{ran} repetitions (decisive: from {planned}, within its time budget)"
    if target is None:
        return f"{planned} repetitions"
    return (
        f"{len(session.order)} repetitions (adaptive: at least {planned}, "
        f"until the 95 % CI of every task was within ±{target:g} %)"
    )


def _derived_tolerance(session: Session) -> str:
    """The contamination tolerance of each direction measured, as this session derived it
    from its page cache's speed (targets/ceiling.py)."""
    cache = max(c.bytes_per_s for c in session.ceilings if c.kind == "cache")
    ratios = {d: r for d in ("write", "read") if (r := session.page_cache_ratio(d)) is not None}
    said = f"the page cache read the device at {fmt(cache / 1e6)} MB/s, " + " and ".join(
        f"{r:.1f}x its direct-I/O {d} ceiling" for d, r in ratios.items()
    )
    caught = [d for d, r in ratios.items() if ceiling_catches(r)]
    missed = [d for d in ratios if d not in caught]
    parts = []
    if caught:
        parts.append(
            " and ".join(
                f"{d} figures above {session.ceiling_tolerance(d):.2g}x their ceiling"
                for d in caught
            )
            + f" (the geometric middle of the two speeds, at least {CEILING_TOLERANCE:g}x) "
            "are flagged as served from the page cache"
        )
    if missed:
        what = " or ".join(missed)
        parts.append(
            f"on this machine a {what} figure served from the page cache cannot be told from "
            f"one that reached the device, so the ceiling flags only {what} figures above "
            f"{CEILING_TOLERANCE:g}x it (fio's own spread) and cached ones go unflagged"
        )
    return f"{said}: " + "; ".join(parts)


def _ceiling_lines(session: Session) -> list[str]:
    """The device's raw throughput by fio, as measured in this session."""
    parts = []
    for direction in ("write", "read"):
        rates = [
            c.bytes_per_s
            for c in session.ceilings
            if c.direction == direction and c.kind != "cache"
        ]
        if rates:
            parts.append(
                f"{direction} best {fmt(max(rates) / 1e6)} MB/s "
                f"(range {fmt(min(rates) / 1e6)}–{fmt(max(rates) / 1e6)}, n={len(rates)})"
            )
        elif parts:  # measured in the directions the plan's tasks are judged in only
            parts.append(f"{direction} not measured (no task here is judged on it)")
    if not parts:
        return []
    if any(c.kind == "cache" for c in session.ceilings):
        return ["device ceiling (fio, sequential, direct I/O): " + "; ".join(parts),
                _derived_tolerance(session)]  # fmt: skip
    tolerance = f"{CEILING_TOLERANCE:g}"
    return [
        "device ceiling (fio, sequential, direct I/O): " + "; ".join(parts),
        # The tolerance's limits, as docs/methodology.md states them (targets/ceiling.py).
        f"figures above {tolerance}x this ceiling are flagged as served from the page cache; "
        "that margin was set on one VM whose page cache is far faster than its disk: where "
        f"the page cache is less than {tolerance}x the device's speed (NVMe), cached figures "
        "go unflagged",
    ]
