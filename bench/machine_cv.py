"""Benchmark: run-to-run spread of the large-file tasks with and without a machine profile.

Not a test. Reads session files (one run under --machine, one without, same
plan otherwise) and prints, per task of one kind (large_files by default) and
filesystem, the coefficient of variation (sd / mean) of the wall time over the
repetitions, and per session the median CV. Made for the issue-7 closing note:

    sudo ./fsarena run --suite SUITE --fs ext3,xfs,btrfs --machine 2006-fileserver -o with.json
    sudo ./fsarena run --suite SUITE --fs ext3,xfs,btrfs -o without.json
    .venv/bin/python bench/machine_cv.py with.json without.json [--kind large_files]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

try:
    from fsarena.session.file import Session, load
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from fsarena.session.file import Session, load


def walls(session: Session, kind: str) -> dict[tuple[str, str], list[float]]:
    """Wall times of valid runs, per (task, filesystem), for the tasks of one kind."""
    found: dict[tuple[str, str], list[float]] = {}
    for run in session.ok_runs():
        if session.plan.info(run.task).kind == kind and run.measurement is not None:
            found.setdefault((run.task, run.filesystem), []).append(run.measurement.wall_s)
    return found


def cv_table(session: Session, kind: str) -> dict[tuple[str, str], tuple[int, float, float]]:
    """(n, mean s, CV) per (task, filesystem) with at least two runs."""
    return {
        key: (len(v), statistics.fmean(v), statistics.stdev(v) / statistics.fmean(v))
        for key, v in sorted(walls(session, kind).items())
        if len(v) >= 2 and statistics.fmean(v) > 0
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sessions", nargs="+", type=Path)
    parser.add_argument("--kind", default="large_files")
    args = parser.parse_args()
    for path in args.sessions:
        session = load(path)
        machine = session.machine.profile.name or "none (host as is)"
        table = cv_table(session, args.kind)
        print(f"{path.name}: machine {machine}, {len(session.order)} repetitions")
        for (task, fs), (n, mean, cv) in table.items():
            print(f"  {task:18} {fs:8} n={n}  mean {mean:9.3f} s  CV {100 * cv:6.1f} %")
        if table:
            median = statistics.median(cv for _, _, cv in table.values())
            print(f"  median CV {100 * median:.1f} %")


if __name__ == "__main__":
    main()
