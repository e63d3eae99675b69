"""What the store answers: the sessions it holds, and one task's history on one filesystem.

Statistics are computed here from the raw values, as everywhere in fsarena
(stats.summarize with the metric's own mean), never stored. Rows come back in
a total order (time, then session id) so SQLite and PostgreSQL print the same.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from fsarena.analysis.stats import Summary, summarize
from fsarena.errors import FsarenaError
from fsarena.measure.metrics import METRICS, Metric
from fsarena.session.file import Session
from fsarena.store.db import Store

_LIST = """
SELECT s.session_id, s.created_at, h.hostname, h.kernel, s.suite, s.status,
       s.filesystems, (SELECT count(*) FROM runs r WHERE r.session_id = s.session_id)
FROM sessions s JOIN hosts h ON h.host_id = s.host_id
ORDER BY s.created_at, s.session_id
"""

_HISTORY = """
SELECT s.session_id, s.created_at, h.hostname, h.kernel, h.cpu_model, h.machine_id,
       s.tool_version, v.value
FROM "values" v
JOIN runs r ON r.session_id = v.session_id AND r.run_index = v.run_index
JOIN sessions s ON s.session_id = r.session_id
JOIN hosts h ON h.host_id = s.host_id
WHERE r.task = ? AND r.filesystem = ? AND v.metric = ? AND r.status = 'ok'
ORDER BY s.created_at, s.session_id, r.repetition, r.run_index
"""


def list_sessions(store: Store) -> str:
    rows = store.query(_LIST)
    if not rows:
        return f"the store {store.url} holds no session; add some with `fsarena store import`\n"
    head = f"{'session':16}  {'created':25}  {'host':12}  {'kernel':22}  {'suite':14}  "
    lines = [head + f"{'status':10}  {'runs':>5}  filesystems"]
    for sid, created, host, kernel, suite, status, fss, runs in rows:
        lines.append(
            f"{sid:16}  {created:25}  {host:12}  {kernel:22}  {suite:14}  {status:10}  "
            f"{runs:>5}  {fss}"
        )
    lines.append(f"{len(rows)} sessions in {store.url}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Point:
    """One session's result for the task on the filesystem."""

    session_id: str
    created_at: str
    hostname: str
    kernel: str
    cpu_model: str
    tool_version: str
    summary: Summary


def history(store: Store, task: str, filesystem: str, metric: str) -> list[Point]:
    """The task on the filesystem in every session of the store, oldest first."""
    if metric not in METRICS:
        raise FsarenaError(f"unknown metric {metric!r}; known: {', '.join(sorted(METRICS))}")
    rows = store.query(_HISTORY, (task, filesystem, metric))
    if not rows:
        raise FsarenaError(_nothing(store, task, filesystem, metric))
    groups: dict[tuple[str, ...], list[float]] = defaultdict(list)
    for sid, created, host, kernel, cpu, _mid, version, value in rows:
        groups[(sid, created, host, kernel, cpu, version)].append(float(value))
    mean = METRICS[metric].mean
    return [
        Point(sid, created, host, kernel, cpu, version, summarize(values, mean))
        for (sid, created, host, kernel, cpu, version), values in groups.items()
    ]


def _nothing(store: Store, task: str, filesystem: str, metric: str) -> str:
    pairs = store.query("SELECT DISTINCT task, filesystem FROM runs ORDER BY task, filesystem")
    if (task, filesystem) in pairs:
        return (
            f"no successful run of {task} on {filesystem} has a value of {metric} in "
            f"{store.url}; choose another --metric"
        )
    known = ", ".join(f"{t}/{f}" for t, f in pairs[:20]) or "none: import sessions first"
    return f"no run of {task} on {filesystem} in {store.url}; known task/filesystem: {known}"


def _fmt(value: float, metric: Metric) -> str:
    return f"{value * metric.scale:.4g}"


def history_table(
    points: list[Point], task: str, filesystem: str, metric_name: str
) -> tuple[str, list[str], list[list[str]]]:
    """One task's history on one filesystem: what it shows, its headers and one row per
    session (store/chart.py lays them out as a document)."""
    metric = METRICS[metric_name]
    unit = f" ({metric.unit})" if metric.unit else ""
    better = "lower" if metric.better == "lower" else "higher"
    intro = (
        f"{task} on {filesystem}: {metric.label}{unit}, {better} is better; "
        f"mean and 95 % interval of each session's successful repetitions"
    )
    headers = ["created", "host", "kernel", "session", "n", "mean", "95 % interval"]
    rows = []
    for p in points:
        s = p.summary
        interval = (
            f"{_fmt(s.ci_low, metric)} .. {_fmt(s.ci_high, metric)}" if s.n > 1 else "(n = 1)"
        )
        rows.append([p.created_at, p.hostname, p.kernel, p.session_id, str(s.n),
                     _fmt(s.mean, metric), interval])  # fmt: skip
    return intro, headers, rows


# The baseline of a regression gate: the same plan on the same host, finished, before NEW.
_BASELINE = """
SELECT s.source_path, s.scale
FROM sessions s JOIN hosts h ON h.host_id = s.host_id
WHERE h.machine_id = ? AND h.hostname = ? AND s.suite = ? AND s.filesystems = ?
  AND s.status = 'complete' AND s.created_at < ?
ORDER BY s.created_at DESC, s.session_id DESC
"""


def _same_scale(scale: float | None, row: Sequence[object]) -> bool:
    found = row[1]
    if scale is None or found is None:
        return scale is None and found is None
    return isinstance(found, int | float) and math.isclose(float(found), scale)


def baseline_path(store: Store, new: Session) -> str:
    """The newest complete session of NEW's plan on NEW's host that started before it.

    The same plan means the same suite, filesystems and scale; the kernel, the tool
    versions and the mount options may differ: that is what a gate compares.
    """
    rows = store.query(
        _BASELINE,
        (
            new.host.machine_id,
            new.host.hostname,
            new.plan.suite,
            ",".join(new.filesystems()),
            new.created_at,
        ),
    )
    rows = [r for r in rows if _same_scale(new.plan.scale, r)]
    if not rows:
        raise FsarenaError(
            f"the store {store.url} holds no complete session of suite {new.plan.suite} on "
            f"{', '.join(new.filesystems())} from host {new.host.hostname} before "
            f"{new.created_at}: import a baseline with `fsarena store import`, or name it"
        )
    return str(rows[0][0])
