"""The shared view as a document: the blocks of report/document.py, for every format to lay out.

What it says, in order: how many bundles, sessions and hosts stand behind it;
where your session falls (when one is given): each result's percentile among the
other hosts (a page also says each in words), and why the others could not be
placed; then one section per context
(the class of device, the kernel, the scale and the run's conditions, against
one baseline), each with its box plots and its table of percentiles; the
results whose keys are incomplete, never pooled; what was left out; and how
to read it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from fsarena.analysis.phrases import number
from fsarena.measure.metrics import METRICS
from fsarena.report.document import (
    Block,
    Figure,
    Forms,
    Heading,
    Notes,
    Paragraph,
    Section,
    Table,
)
from fsarena.session.key import missing
from fsarena.share.boxplot import BoxPlot, Row, ratio_text
from fsarena.share.view import MIN_HOSTS, Group, Placement, Ratio, View, stem


def ordinal(value: float) -> str:
    n = round(value)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def document(view: View) -> tuple[Block, ...]:
    pooled = [g for g in view.groups if g.complete]
    enough = sum(len(g.host_values()) >= MIN_HOSTS for g in pooled)
    lead = (
        f"{_plural(len(view.shared), 'bundle')}: {_plural(len(view.shared), 'session')} from "
        f"{_plural(view.hosts, 'host')}. {_plural(len(pooled), 'key')} compared with "
        f"{view.baseline} on the same host; {enough} with {MIN_HOSTS} hosts or more are shown "
        f"as percentiles, the others host by host. Ratios below 1× mean less of the metric "
        f"than {view.baseline} (for times: faster)."
    )
    blocks: list[Block] = [
        Heading(f"fsarena: shared results against {view.baseline}", level=1),
        Paragraph(lead, style="lead"),
    ]
    if view.yours:
        blocks.append(yours_section(view))
    for context, groups in _contexts(view, pooled):
        blocks.append(context_section(view, context, groups))
    incomplete = [g for g in view.groups if not g.complete]
    if incomplete:
        blocks.append(incomplete_section(incomplete))
    if view.left_out:
        blocks.append(Notes(tuple(view.left_out), title=f"Left out ({len(view.left_out)})"))
    blocks.append(Paragraph(METHOD, label="How to read it", style="method"))
    return tuple(blocks)


METHOD = (
    "Each session compares every filesystem with the baseline measured in that same "
    "session on the same machine, task by task, on the task's headline metric (the first "
    "column of its table): the ratio of their geometric means over the rounds. Raw times "
    "from different machines are never pooled. Two ratios are pooled only when their "
    "comparison keys are equal: the task and its version, the datasets' digests and the "
    "scale, the filesystem's and the baseline's mkfs and mount options verbatim, their "
    "tools' and the kernel's major.minor, the class of device, the run's conditions. "
    "Each host counts once however many sessions it sent (its value is the geometric mean "
    "of its sessions' ratios); a host is a pseudonym its sender's salt makes, so one "
    f"machine shared by two users counts twice. Under {MIN_HOSTS} hosts a key is shown host "
    "by host, never as percentiles; a percentile is given only when at least one host lies "
    "beyond it on either side (the 10th from 10 hosts, the 5th from 20). Your session is "
    "placed among the other hosts (your own host's sessions left out): the percentile is "
    "the share of them with a lower ratio, ties counted half."
)


def _contexts(view: View, groups: list[Group]) -> list[tuple[dict[str, Any], list[Group]]]:
    found: dict[tuple[str, ...], list[Group]] = defaultdict(list)
    for g in groups:
        found[g.context].append(g)
    order = {t: i for i, t in enumerate(view.tasks)}
    out = []
    for members in found.values():
        members.sort(key=lambda g: (order.get(g.task, len(order)), g.filesystem))
        out.append((members[0].fields, members))
    out.sort(key=lambda c: (-sum(len(g.host_values()) for g in c[1]), _title(c[0])))
    return out


def _title(fields: dict[str, Any]) -> str:
    return (
        f"{fields.get('device') or 'device not recorded'} · Linux {fields.get('kernel') or '?'} · "
        f"scale {fields.get('scale')}"
    )


def _conditions(fields: dict[str, Any], baseline: str) -> str:
    machine = fields.get("emulated_machine")
    base = fields.get("baseline") or {}
    return (
        f"Against {baseline} ({base.get('fstype')}, mkfs {' '.join(base.get('mkfs') or [])}, "
        f"mount options {','.join(base.get('mount_options') or []) or 'defaults'}); data copied "
        f"from {fields.get('source') or '?'}; {fields.get('cold_caches')}"
        + (f"; emulating the {machine} machine" if machine else "")
        + f"; key scheme {fields.get('scheme')}."
    )


def _label(g: Group | Ratio) -> str:
    return f"{g.task} · {g.filesystem}"


def _spread(g: Group, p: dict[int, float]) -> tuple[str, str, str]:
    """Median, middle half, 10th-90th: or the hosts' values when too few for percentiles."""
    if not p:
        values = ", ".join(ratio_text(v) for v in sorted(g.host_values().values()))
        return "—", f"too few hosts: {values}", "—"
    middle = f"{ratio_text(p[25])}–{ratio_text(p[75])}" if 25 in p else "—"
    outer = f"{ratio_text(p[10])}–{ratio_text(p[90])}" if 10 in p else "—"
    return ratio_text(p[50]), middle, outer


HEADERS = ("result", "metric", "hosts (sessions)", "median", "25th–75th", "10th–90th")


def context_section(view: View, fields: dict[str, Any], groups: list[Group]) -> Section:
    """One context's box plots and table: its keys, one row each, yours marked."""
    placed = {p.group.key: p for p in view.placements if p.group is not None}
    title, base = _title(fields), groups[0].baseline
    plot = BoxPlot(
        tuple(
            Row(
                _label(g),
                tuple(sorted(g.host_values().values())),
                g.percentiles(),
                placed[g.key].mine.value if g.key in placed else None,
            )
            for g in groups
        ),
        f"{stem(base)} = 1×",
        f"Ratios to {base}: {title}",
        f"{len(groups)} keys on {title}, each filesystem's ratio to {base} per host: "
        + "; ".join(_alt(g) for g in groups),
    )
    anchor = "ctx-" + groups[0].context[0][:10]
    return Section(
        Heading(title, level=2, tag=f"against {base}", anchor=anchor),
        (
            Paragraph(_conditions(fields, base), style="method", label="Key"),
            Figure(anchor, f"Each filesystem against {base}, one host a value", plot.alt, plot),
            _table(groups, placed),
        ),
        anchor=anchor,
    )


def _table(groups: list[Group], placed: dict[str, Placement]) -> Table:
    """The context's keys, a row each: percentiles (the 10th-90th where a key has 10 hosts),
    or each host's ratio where no key has 5; a column for yours where one of yours is here."""
    headers: tuple[str, ...]
    if not any(g.percentiles() for g in groups):
        headers = (*HEADERS[:3], "each host's ratio (too few for percentiles)")
        rows = tuple(
            (*_row(g)[:3], ", ".join(ratio_text(v) for v in sorted(g.host_values().values())))
            for g in groups
        )
    else:
        outer = any(10 in g.percentiles() for g in groups)
        headers = HEADERS if outer else HEADERS[:-1]
        rows = tuple(_row(g)[: len(headers)] for g in groups)
    if any(g.key in placed for g in groups):
        headers = (*headers, "yours")
        rows = tuple(
            (*r, _yours_cell(placed.get(g.key))) for r, g in zip(rows, groups, strict=True)
        )
    return Table(headers, rows)


def _row(g: Group) -> tuple[str, ...]:
    median, middle, outer = _spread(g, g.percentiles())
    hosts = f"{len(g.host_values())} ({g.sessions()})"
    return (_label(g), METRICS[g.metric].label, hosts, median, middle, outer)


def _alt(g: Group) -> str:
    p = g.percentiles()
    if p:
        return f"{_label(g)} median {ratio_text(p[50])} of {len(g.host_values())} hosts"
    return f"{_label(g)} {_plural(len(g.host_values()), 'host')}"


def _yours_cell(placed: Placement | None) -> str:
    if placed is None:
        return ""
    value = ratio_text(placed.mine.value)
    if placed.rank_pct is None:
        return f"{value} (too few other hosts)"
    return f"{value}, {ordinal(placed.rank_pct)} percentile"


# ---------------------------------------------------------------- yours


def sentence(p: Placement) -> str:
    """'your xfs/ext4 time ratio on tree_copy_in (0.91×) is at the 80th percentile of 41
    sessions from 17 hosts with the same key on NVMe SSD: 80 % of them measured less'."""
    m = p.mine
    metric = METRICS[m.metric]
    what = (
        f"your {m.filesystem}/{m.baseline} {metric.label} ratio on {m.task} ({ratio_text(m.value)})"
    )
    where = f"with the same key on {m.fields.get('device')}, Linux {m.fields.get('kernel')}"
    if p.group is None:
        if p.nearest is None:
            return f"{what}: no other bundle has this comparison; not placed"
        differs = ", ".join(_difference(k, m.fields, p.nearest.fields) for k in p.differs[:3])
        return (
            f"{what}: no bundle has its key, so it is not pooled; the nearest "
            f"({_plural(len(p.nearest.host_values()), 'host')}) differs in {differs}"
        )
    hosts = _plural(len(p.others), "other host")
    if p.rank_pct is None:
        values = ", ".join(ratio_text(v) for v in sorted(p.others.values())) or "none"
        return f"{what}: {hosts} {where}, too few for a percentile (theirs: {values})"
    lower = "faster" if metric.unit == "s" and metric.better == "lower" else "less"
    return (
        f"{what} is at the {ordinal(p.rank_pct)} percentile of {_plural(p.sessions, 'session')} "
        f"from {hosts} {where}: {number(p.rank_pct)} % of those hosts measured a lower ratio "
        f"(lower: {m.filesystem} {lower} relative to {m.baseline})"
    )


def _at(fields: dict[str, Any], path: str) -> Any:
    value: Any = fields
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _difference(name: str, mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    def shown(value: Any) -> str:
        if value is None:
            return "not recorded"
        if isinstance(value, list):
            return " ".join(map(str, value)) or "none"
        if isinstance(value, dict):
            return ", ".join(f"{k} {shown(v)}" for k, v in value.items()) or "none"
        return str(value)

    return f"{name} (yours: {shown(_at(mine, name))}; theirs: {shown(_at(theirs, name))})"


def yours_section(view: View) -> Section:
    """Your ratios placed, a row each; a page also says each in words (a terminal reads the
    table: twenty-six sentences of the same shape would bury it)."""
    placed = [p for p in view.placements if p.rank_pct is not None]
    others = [p for p in view.placements if p.rank_pct is None]
    example = f" For example, {sentence(placed[0])}." if placed else ""
    lead = (
        f"{view.yours}: {len(placed)} of your {len(view.placements)} ratios placed among the "
        "other hosts with the same key (the percentile: the share of those hosts with a lower "
        "ratio)" + (f"; {len(others)} not placed (below)." if others else ".") + example
    )
    rows = tuple(
        (
            _label(p.mine),
            f"{ratio_text(p.mine.value)}, {ordinal(p.rank_pct or 0)} percentile",
            f"{len(p.others)} ({p.sessions} sessions), median {_median(p)}",
        )
        for p in placed
    )
    table = Table(YOURS, rows)
    words = Notes(tuple(sentence(p) for p in placed), title="Each in words", style="fold")
    blocks: list[Block] = [Paragraph(lead, style="lead")]
    if placed:
        blocks.append(Forms(short=(table,), full=(table, words)))
    if others:
        blocks.append(
            Notes(tuple(sentence(p) for p in others), title=f"Not placed ({len(others)})")
        )
    return Section(
        Heading("Where your session falls", anchor="yours"), tuple(blocks), anchor="yours"
    )


YOURS = ("result", "yours", "others with its key")


def _median(p: Placement) -> str:
    return ratio_text(statistics.median(p.others.values())) if p.others else "—"


def incomplete_section(groups: list[Group]) -> Section:
    rows = tuple(
        (g.task, g.filesystem, ratio_text(g.ratios[0].value), ", ".join(missing(g.fields)))
        for g in groups
    )
    return Section(
        Heading("Not pooled: keys not complete", anchor="incomplete"),
        (
            Paragraph(
                f"{_plural(len(groups), 'result')} from sessions that did not record their whole "
                "comparison key (before schema 4): what was not recorded might differ, so each "
                "is shown alone, never pooled.",
            ),
            Table(("task", "filesystem", "ratio", "not recorded"), rows),
        ),
        anchor="incomplete",
    )
