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
    "A win needs a significant difference: Yuen's trimmed t-test on log values (Yuen 1974: "
    "20 % trimmed means, winsorized variances, Welch's degrees of freedom), p < "
    f"{ALPHA} after Bonferroni's correction over each family of comparisons. At n = 3 and 4 "
    "nothing is trimmed, so one stall widens the interval (a win can become a tie, never the "
    "reverse); from n = 5 the most extreme value at each end is trimmed for the test. Every "
    "value is shown as measured. Ratios are the same estimator's (the ratio of trimmed "
    "geometric means) with an interval of matching confidence, widened like the tests; the "
    "answer's own tests and intervals are also adjusted over the kinds weighed and the looks "
    "of the stopping rule (see the answer's method line). Otherwise the filesystems are "
    "tied, and a tie states the largest difference its interval leaves possible. The "
    "warm-up round, if any, is never a sample. A result is flagged unstable only when it "
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
