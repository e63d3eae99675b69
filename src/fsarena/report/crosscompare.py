"""`fsarena compare`: the same tasks across sessions (machines, kernels, mount options).

Sessions are merged into one whose groups are "LABEL/filesystem", so every
table, chart and test of a single session applies unchanged. On top of that,
each filesystem present in two or more sessions gets its own comparison per
task: the same filesystem, measured in different conditions, with ratios and
significance (Holm within each task and filesystem).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.measure import METRICS
from fsarena.phrases import describe, metric_word
from fsarena.report import charts, markdown, prose, text
from fsarena.report.table import Comparison, build, header_lines
from fsarena.results import Run, Session
from fsarena.stats import Ranking, rank


@dataclass(frozen=True)
class Change:
    """One filesystem on one task across sessions: ranked by session label."""

    task: str
    filesystem: str
    metric: str
    ranking: Ranking

    def sentence(self) -> str:
        return describe(self.ranking, metric_word(METRICS[self.metric]))


@dataclass(frozen=True)
class CrossComparison:
    labels: tuple[str, ...]
    sessions: tuple[Session, ...]
    merged: Comparison  # groups named LABEL/filesystem
    changes: tuple[Change, ...]


def group(label: str, filesystem: str) -> str:
    return f"{label}/{filesystem}"


def merge(labelled: Sequence[tuple[str, Session]]) -> Session:
    """One session holding every session's runs, filesystems renamed LABEL/NAME."""
    first = labelled[0][1]
    runs: list[Run] = []
    profiles: dict[str, dict[str, Any]] = {}
    info: dict[str, Any] = {}
    filesystems: list[str] = []
    tasks: list[str] = []
    for label, s in labelled:
        runs.extend(r.model_copy(update={"filesystem": group(label, r.filesystem)}) for r in s.runs)
        profiles.update({group(label, k): v for k, v in s.profiles_as_run.items()})
        filesystems.extend(group(label, fs) for fs in s.filesystems())
        tasks.extend(t for t in s.tasks() if t not in tasks)
        info.update({t: v for t, v in s.plan.get("task_info", {}).items() if t not in info})
    plan = {**first.plan, "filesystems": filesystems, "tasks": tasks, "task_info": info}
    statuses = {s.status for _, s in labelled}
    return first.model_copy(
        update={
            "runs": runs,
            "plan": plan,
            "profiles_as_run": profiles,
            # Each session's device ceiling belongs to its own machine: a merged
            # "best ceiling" would be meaningless, so % of ceiling is not shown here.
            "ceilings": [],
            "order": [],
            "warnings": [w for _, s in labelled for w in s.warnings],
            "status": statuses.pop() if len(statuses) == 1 else "complete",
        }
    )


def _changes(labelled: Sequence[tuple[str, Session]], merged: Comparison) -> tuple[Change, ...]:
    found = []
    for table in merged.tables:
        metric = table.columns[0]
        shared: dict[str, dict[str, list[float]]] = {}
        for label, s in labelled:
            for fs in s.filesystems():
                values = [
                    v
                    for r in s.runs
                    if r.status == "ok" and r.task == table.task and r.filesystem == fs
                    if (v := r.value(metric)) is not None
                ]
                if values:
                    shared.setdefault(fs, {})[label] = values
        for fs, samples in shared.items():
            if len(samples) >= 2:
                ranking = rank(samples, METRICS[metric].better == "higher")
                found.append(Change(table.task, fs, metric, ranking))
    return tuple(found)


def compare(sessions: Sequence[Session], labels: Sequence[str] | None = None) -> CrossComparison:
    if len(sessions) < 2:
        raise FsarenaError("compare needs two or more session files")
    names = list(labels) if labels else [f"s{i}" for i in range(1, len(sessions) + 1)]
    if len(names) != len(sessions) or len(set(names)) != len(names):
        raise FsarenaError(
            f"give one distinct --label per session ({len(sessions)} sessions, {len(names)} labels)"
        )
    bad = [n for n in names if "/" in n]
    if bad:
        raise FsarenaError(f"a label cannot contain '/': {', '.join(bad)}")
    labelled = list(zip(names, sessions, strict=True))
    merged = build(merge(labelled))
    return CrossComparison(tuple(names), tuple(sessions), merged, _changes(labelled, merged))


# ---------------------------------------------------------------- rendering


def legend(cross: CrossComparison) -> list[tuple[str, list[str]]]:
    """Per label, what that session is: the provenance lines of its header."""
    return [(label, header_lines(s)) for label, s in zip(cross.labels, cross.sessions, strict=True)]


def _change_lines(cross: CrossComparison) -> list[prose.Item]:
    by_task: dict[str, list[str]] = {}
    for c in cross.changes:
        by_task.setdefault(c.task, []).append(f"{c.filesystem}: {c.sentence()}")
    return [prose.Item(task, "", tuple(lines)) for task, lines in by_task.items()]


def render_text(cross: CrossComparison) -> str:
    out = ["fsarena comparison of sessions", ""]
    for label, lines in legend(cross):
        out.append(f"{label}:")
        out.extend(f"  {line}" for line in lines)
    out.extend(["", "SAME FILESYSTEM ACROSS SESSIONS", f"  {prose.METHOD}", ""])
    for item in _change_lines(cross):
        out.append(f"{item.title}")
        out.extend(f"  - {d}" for d in item.details)
    out.extend(["", "ALL GROUPS (LABEL/FILESYSTEM)", "", *text.body(cross.merged)])
    return "\n".join(out).rstrip() + "\n"


def render_markdown(cross: CrossComparison) -> str:
    out = ["# fsarena comparison of sessions", ""]
    for label, lines in legend(cross):
        out.append(f"- **{label}**: " + "; ".join(lines))
    out.extend(["", "## Same filesystem across sessions", "", prose.METHOD, ""])
    for item in _change_lines(cross):
        out.append(f"- **{item.title}**")
        out.extend(f"  - {d}" for d in item.details)
    out.extend(["", "## All groups (label/filesystem)", "", *markdown.body(cross.merged, "###")])
    return "\n".join(out).rstrip() + "\n"


def render_html(cross: CrossComparison) -> str:
    from fsarena.report import html

    drawn = charts.build(cross.merged)
    context: dict[str, Any] = {
        "legend": legend(cross),
        "method": prose.METHOD,
        "changes": _change_lines(cross),
        "heatmap": next((c for c in drawn if c.name == "heatmap"), None),
        "tasks": [
            html.task_context(cross.merged, t, {c.name: c for c in drawn})
            for t in cross.merged.tables
        ],
        "warnings": prose.warnings(cross.merged),
        "asset_dir": None,
    }
    return html.template("compare.html.j2").render(context)


RENDERERS = {"text": render_text, "markdown": render_markdown, "html": render_html}
