"""A replayed trace told: the replay error with the answer, the timing models, the call latencies.

The fact line under the answer says how faithful the replay was on the
capture's own filesystem type and device class (analysis/replay.py), and that
smaller differences between filesystems are within it; or that it was not
measured, and why. The section names each timing model with the question it
answers, what the trace could not replay, and per call type the latency
percentiles of the capture beside each filesystem's (medians over the runs).
"""

from __future__ import annotations

import statistics
from typing import Any

from fsarena.analysis.replay import (
    CallError,
    ReplayError,
    captured,
    replay_error,
    replay_tasks,
)
from fsarena.report.document import Block, Heading, Notes, Paragraph, Section, Table
from fsarena.session.file import Session
from fsarena.session.records import CapturedRecord

QUESTIONS = {
    "replay": "as fast as possible: how long the service's calls take when nothing but "
    "the filesystem and the calls' order holds them (capacity: the total time)",
    "replay_paced": "at the traced pace: each thread keeps its think time between calls, "
    "so the replay lasts what the service took where the filesystem keeps up (latency: "
    "each call's, and how far behind the traced pace it ended)",
}
SHOWN_CALLS = 8


def fact_lines(session: Session) -> list[str]:
    """One line per replay task: its replay error, or why it was not measured."""
    facts = captured(session)
    if facts is None:
        return []
    return [_fact(session, task, facts) for task in replay_tasks(session)]


def _fact(session: Session, task: str, facts: CapturedRecord) -> str:
    found = replay_error(session, task)
    where = f"{facts.fstype} ({facts.device_class})"
    if found is None:
        return (
            f"{task}: not measured: the trace was captured on {where}, and no "
            "filesystem of this run is of that type on that device class; differences "
            "between filesystems are not checked against the replay's fidelity"
        )
    return (
        f"{task}: {found.error_pct:.1f} % on {where}, the filesystem the "
        f"trace was captured on: {found.replay_fs_s:.3f} s inside file-system calls against "
        f"the capture's {found.captured_fs_s:.3f} s (median of {found.runs} "
        f"run{'s' * (found.runs != 1)}{_spread(found)}){_latency(found)}; a difference "
        "between filesystems "
        f"below {found.error_pct:.1f} % is within the replay's error, never a win"
    )


def _spread(found: ReplayError) -> str:
    """The runs' own spread, beside the capture's one figure: an error far beyond it is the
    replay's (or the capture's state's), one within it is chance."""
    low, high = found.replay_fs_range
    return f", {low:.3f}–{high:.3f} s" if found.runs > 1 else ""


def _latency(found: ReplayError) -> str:
    top: CallError | None = found.top_call
    if top is None:
        return ""
    p50 = CallError.off_pct(top.replay_p50_us, top.captured_p50_us)
    p99 = CallError.off_pct(top.replay_p99_us, top.captured_p99_us)
    return (
        f"; {top.call}, where the capture spent most time: p50 {p50:.0f} % off, p99 {p99:.0f} % off"
    )


def sections(session: Session) -> list[Block]:
    """The replay section: the models, the trace's limits, the latency tables."""
    facts = captured(session)
    tasks = replay_tasks(session)
    if facts is None or not tasks:
        return []
    blocks: list[Block] = [
        Notes(tuple(f"{t}: {QUESTIONS.get(t, '')}" for t in tasks), title="Timing models"),
        Paragraph(_limits(session, facts), label="The trace"),
    ]
    for task in tasks:
        headers, rows = _latency_table(session, task, facts)
        if rows:
            blocks.append(Table(headers, rows, title=f"{task}: call latency p50 / p99 (µs)"))
    heading = Heading("Replay", anchor="replay")
    return [Section(heading, tuple(blocks), anchor="replay")]


def _limits(session: Session, facts: CapturedRecord) -> str:
    record = session.datasets.get("trace")
    described = record.spec.description if record is not None else ""
    del facts  # the share is in the description; what it is made of, said once here
    return (
        f"{described}. Not replayable, and in that share: I/O through mapped files, io_uring "
        "submissions and in-kernel copies (sendfile, copy_file_range, splice)."
    )


def _latency_table(
    session: Session, task: str, facts: CapturedRecord
) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    filesystems = session.filesystems()
    per_fs = {fs: _medians(session, task, fs) for fs in filesystems}
    shown = [fs for fs in filesystems if per_fs[fs]]
    calls = sorted(facts.per_call, key=lambda c: -float(facts.per_call[c].get("total_s", 0.0)))[
        :SHOWN_CALLS
    ]
    headers = ("call", "calls", "captured", *shown)
    rows = []
    for call in calls:
        row = facts.per_call[call]
        cells = [call, f"{int(row.get('count', 0)):,}", _pair(row["p50_us"], row["p99_us"])]
        for fs in shown:
            mine = per_fs[fs].get(call)
            cells.append(_pair(*mine) if mine else "–")
        rows.append(tuple(cells))
    return headers, tuple(rows)


def _medians(session: Session, task: str, fs: str) -> dict[str, tuple[float, float]]:
    """Per call type: the median over the runs of each run's p50 and p99, in µs."""
    found: dict[str, list[Any]] = {}
    for run in session.ok_runs():
        if run.task != task or run.filesystem != fs:
            continue
        for call, row in ((run.details.get("replay") or {}).get("calls") or {}).items():
            if row.get("count"):
                found.setdefault(call, []).append((row["p50_ns"] / 1e3, row["p99_ns"] / 1e3))
    return {
        call: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
        for call, values in found.items()
    }


def _pair(p50: float, p99: float) -> str:
    return f"{p50:,.1f} / {p99:,.1f}"
