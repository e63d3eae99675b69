"""Write src/fsarena/analysis/boundaries.json: the error rate's constant for common designs.

Each constant is analysis.calibration.calibrate(design) (a seeded simulation of the
procedure; the same figure every time on the same numpy), for 2 to 8 filesystems and 1
to 6 weighed kinds: decisive runs looking from 3 rounds to 10 (the default run) or to
fewer (where a budget cut one short: analysis.decision.design_of), and fixed runs of 2
to 10 rounds. Designs outside the table are
calibrated on first use and kept in /var/cache/fsarena/boundaries.json.
tests/unit/test_calibration.py re-derives a few entries.

    .venv/bin/python scripts/calibrate.py [--jobs 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from fsarena.analysis.calibration import SHIPPED, VERSION, calibrate
from fsarena.analysis.selection import Design


def designs() -> list[Design]:
    found = []
    for filesystems in range(2, 9):
        for kinds in range(1, 7):
            # The default run's looks, and every look its budget may cut it at (design_of).
            found += [Design(filesystems, kinds, 3, last, True) for last in range(3, 11)]
            found += [Design(filesystems, kinds, n, n, False) for n in range(2, 11)]
    return found


def one(design: Design) -> tuple[str, float, float]:
    started = time.monotonic()
    return f"v{VERSION}: {design.key()}", calibrate(design), time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=SHIPPED)
    args = parser.parse_args()
    table: dict[str, float] = {}
    if args.out.exists():  # keep what is there: only the designs it lacks are calibrated
        table = {k: float(v) for k, v in json.loads(args.out.read_text()).items()}
    todo = [d for d in designs() if f"v{VERSION}: {d.key()}" not in table]
    with ProcessPoolExecutor(args.jobs) as pool:
        for i, (key, constant, took) in enumerate(pool.map(one, todo), 1):
            table[key] = constant
            print(f"{i}/{len(todo)} {key}: C = {constant} ({took:.0f} s)", file=sys.stderr)
    args.out.write_text(json.dumps(dict(sorted(table.items())), indent=1) + "\n")


if __name__ == "__main__":
    main()
