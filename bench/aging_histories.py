"""Histories side by side: pulls, files per pull, layout score and cold grep, from sessions.

`python bench/aging_histories.py LABEL=SESSION.json ...` prints one markdown row per
history and filesystem, every figure read back from the sessions (fsarena runs with
`--age git-replay`, e.g. the old synthetic history, the shaped one and a real one with
`--age-repo`): the pulls made, the files each later pull touched (median / mean / max),
the static layout score fresh and aged (aged_layout), and aged/fresh of the cold
`grep -r` (aged_grep) with its 95 % interval (Welch's t on log times, as the report).
"""

from __future__ import annotations

import math
import statistics
import sys
from pathlib import Path

from fsarena.analysis.ranking import ratio_test
from fsarena.report.aging import pairs
from fsarena.report.comparison import run_value
from fsarena.session.file import Session, load


def _values(session: Session, task: str, filesystem: str, metric: str) -> list[float]:
    return [
        v
        for r in session.runs
        if r.task == task and r.filesystem == filesystem and r.status == "ok"
        and (v := run_value(r, metric)) is not None
    ]  # fmt: skip


def rows(label: str, session: Session) -> list[str]:
    found = []
    for fresh, aged in pairs(session):
        a = session.aging.get(fresh)
        touched = list(a.files_touched or []) if a else []
        later = touched[1:]
        per_pull = (
            f"{statistics.median(later):g} / {statistics.fmean(later):.1f} / {max(later)}"
            if later
            else "-"
        )
        layout = [_values(session, "aged_layout", n, "layout_score") for n in (fresh, aged)]
        scores = [f"{statistics.fmean(s):.3f}" if s else "-" for s in layout]
        a_walls = _values(session, "aged_grep", fresh, "wall_s")
        b_walls = _values(session, "aged_grep", aged, "wall_s")
        grep = "-"
        if a_walls and b_walls:
            test = ratio_test(b_walls, a_walls)
            grep = (
                f"{test.ratio:.2f}"
                if math.isnan(test.low)
                else f"{test.ratio:.2f} ({test.low:.2f}–{test.high:.2f})"
            )
        wall = f"{float(a.wall_s):.0f} s" if a else "-"
        found.append(
            f"| {label} | {fresh} | {len(touched)} | {touched[0] if touched else '-'} | "
            f"{per_pull} | {scores[0]} → {scores[1]} | {grep} | {wall} |"
        )
    return found


def main(args: list[str]) -> None:
    print(
        "| history | fs | pulls | first pull (files) | files per later pull (median / mean / "
        "max) | layout score fresh → aged | cold grep aged/fresh (95 %) | aging wall |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for arg in args:
        label, _, path = arg.partition("=")
        for row in rows(label, load(Path(path))):
            print(row)


if __name__ == "__main__":
    main(sys.argv[1:])
