"""Verdicts and warnings as items of prose, shared by the text, Markdown
and HTML exporters (each only lays them out)."""

from __future__ import annotations

from dataclasses import dataclass

from fsarena.analysis.kinds import PRACTICAL
from fsarena.analysis.phrases import number
from fsarena.analysis.ranking import ALPHA
from fsarena.report.comparison import Comparison
from fsarena.report.flags import FLAG_ADVICE, unstable_banner


@dataclass(frozen=True)
class Item:
    title: str
    text: str
    details: tuple[str, ...] = ()


METHOD = (
    "Each weighed kind's verdict is the answer's own (its method line says how: rounds "
    "compared within themselves, each filesystem against the best, at one boundary "
    "calibrated for the whole run). Below it, how the kind's value was built and each "
    "task's own evidence: Yuen's trimmed t-test on log values (Yuen 1974: 20 % trimmed "
    "means, winsorized variances, Welch's degrees of freedom), p < "
    f"{ALPHA} after Bonferroni's correction over the task's pairs. That evidence describes "
    "one task; it is not a verdict of the answer, and where it seems to disagree, the "
    "answer's is the one the run was decided on. Every value is shown as measured; the "
    "warm-up round, if any, is never a sample; a value the answer set aside as a stall is "
    "named in its kind. A result is flagged unstable only when it "
    "matters: its 95 % interval is wider than the target and than the metric's practical "
    "threshold (10 ms of time, for instance), and its task's comparison stayed open "
    f"(several tied for best, a difference above {100 * PRACTICAL:.0f} % not ruled out), "
    "and it is at least twice as wide as the other filesystems' on that task; noise that "
    "changed no verdict, or that all share (said once as undecided), is not flagged."
)


def verdicts(comparison: Comparison) -> list[Item]:
    """One item per kind of work with a verdict: its summary and why."""
    if comparison.verdicts is None:
        return []
    return [Item(k.title, k.summary, k.why) for k in comparison.verdicts.kinds]


def warnings(comparison: Comparison) -> list[Item]:
    """The session's warnings, then the flags computed on reading it, grouped with advice."""
    # The runner's "unstable" warning and the flags computed here say the same thing
    # (against the same target): show the flags, one per task, not both.
    computed = {f.code for f in comparison.flags}
    items = [Item(w.code, w.message) for w in comparison.session.warnings if w.code not in computed]
    for code, advice in FLAG_ADVICE.items():
        found = tuple(f.message for f in comparison.flags if f.code == code)
        if found:
            text = (
                unstable_banner(comparison.tables, comparison.target_ci_pct, comparison.session)
                if code == "unstable"
                else advice
            )
            items.append(Item(f"{code} ({len(found)})", text, found))
    return items


def ceiling_rows(comparison: Comparison) -> list[list[str]]:
    """Throughput of payload tasks beside the device's best ceiling, as table cells."""
    if comparison.verdicts is None:
        return []
    return [
        [
            c.task,
            c.filesystem,
            number(c.throughput_bytes_per_s / 1e6),
            f"{number(c.ceiling_bytes_per_s / 1e6)} ({c.direction})",
            f"{number(c.pct, 2)} %",
            f"{c.n_invalid} invalid (above the ceiling)" if c.n_invalid else "",
        ]
        for c in comparison.verdicts.ceilings
    ]


CEILING_HEADERS = ["task", "filesystem", "MB/s", "ceiling MB/s", "% of ceiling", "runs"]
