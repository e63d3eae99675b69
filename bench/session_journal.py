"""Benchmark: one run's save at round 1, 10, 50, 100 and 200, whole file beside journal.

Not a test. The runner saves after every run. Before the journal it wrote the whole
session each time (`fsarena.session.file.save`), so a save cost more with every round;
now a run's save appends one line to the session's journal
(`fsarena.session.journal.Journal.save`). For each round R this builds a session of
R rounds of --per-round runs (copies of the full-v2 fixture's runs), then alternates,
--repeats times, a whole save of it and a journal save of one more run (the journal
compacted first, as the runner's first save does). Prints each one's median, their
ratio, and checks that the file and its journal load back to the very session.

    .venv/bin/python bench/session_journal.py [--per-round 26] [--repeats 15] [--dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from fsarena.session.file import Run, Session, load, save
from fsarena.session.journal import Journal, journal_of

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "full-v2.json"
ROUNDS = (1, 10, 50, 100, 200)


def sized(base: Session, model: list[Run], runs: int) -> Session:
    session = base.model_copy(deep=True)
    session.runs = [model[i % len(model)].model_copy(deep=True) for i in range(runs)]
    return session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-round", type=int, default=26, help="runs a round (default run: 26)")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--dir", default="/var/tmp", help="where the files are written")
    args = parser.parse_args()
    base = load(FIXTURE)
    model = list(base.runs)
    work = Path(tempfile.mkdtemp(prefix="fsarena-journal-", dir=args.dir))
    print(f"one run's save, {args.per_round} runs a round, median of {args.repeats}")
    heads = ("round", 6), ("runs", 6), ("file MB", 8), ("whole ms", 9), ("journal ms", 11)
    print(" ".join(f"{h:>{w}}" for h, w in heads), f"{'ratio':>6}")
    try:
        for rounds in ROUNDS:
            session = sized(base, model, rounds * args.per_round)
            whole: list[float] = []
            line: list[float] = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                save(session, work / "whole.json")
                whole.append(time.perf_counter() - start)
                journal = Journal(work / "journal.json", save)
                journal.compact(session)  # the runner's first save
                session.runs.append(model[0].model_copy(deep=True))
                start = time.perf_counter()
                journal.save(session)
                line.append(time.perf_counter() - start)
                same = load(work / "journal.json") == session
                session.runs.pop()
                session.journaled = 0
                if not same:
                    raise SystemExit("the file and its journal do not load back to the session")
            size = (work / "whole.json").stat().st_size / 1e6
            w, j = statistics.median(whole), statistics.median(line)
            print(
                f"{rounds:>6} {len(session.runs):>6} {size:>8.2f} {w * 1e3:>9.1f} "
                f"{j * 1e3:>11.2f} {j / w:>6.3f}"
            )
    finally:
        for f in (work / "whole.json", work / "journal.json", journal_of(work / "journal.json")):
            f.unlink(missing_ok=True)
        work.rmdir()


if __name__ == "__main__":
    main()
