"""The answer that opens every report: analysis.answer's one Answer, or why there is none.

The answer itself (per kind of work who wins, by how much, how sure; the
facts; the recommendation with its weights) is computed once, in
analysis.answer, from the session's verdicts: every format and the JSON
summary show that one object. Here only the "no answer" lines are worded,
since they depend on the report's driver groups.
"""

from __future__ import annotations

from fsarena.analysis.answer import Answer, KindAnswer
from fsarena.analysis.phrases import names
from fsarena.analysis.scope import KERNEL, group_of, ranked_group
from fsarena.analysis.verdicts import caveats
from fsarena.report.comparison import Comparison

__all__ = ["Answer", "KindAnswer", "build"]


def _no_answer(comparison: Comparison) -> str:
    session = comparison.session
    if not any(r.status == "ok" for r in session.runs):
        return "No answer: nothing was measured in this session."
    ranked = [fs for fs in session.filesystems() if group_of(session, fs) == ranked_group(session)]
    others = [fs for fs in session.filesystems() if fs not in ranked]
    valid = [
        fs for fs in ranked if any(r.filesystem == fs and r.status == "ok" for r in session.runs)
    ]
    if len(valid) >= 2:
        return (
            "No answer: no kind of work has valid results on two or more filesystems "
            "(see the failed and invalid runs below)."
        )
    if not others:
        return f"No answer: only {names(valid)} was measured validly; a ranking needs two."
    group = {KERNEL: "host kernel", "fuse": "FUSE"}.get(ranked_group(session), "one guest kernel")
    return (
        f"No answer: only {names(ranked) or 'no filesystem'} ran through the {group}'s "
        f"drivers, and a ranking needs two. {names(others)} ran through guest kernels or "
        "FUSE: their results are shown below as ratios within their own group, never ranked "
        "against the host's."
    )


def build(comparison: Comparison) -> Answer:
    """The answer for a comparison; a 'no answer' line when the data cannot give one."""
    verdicts = comparison.verdicts
    if verdicts is None or not verdicts.kinds:
        return Answer(_no_answer(comparison), (), "", tuple(caveats(comparison.session)))
    return verdicts.answer
