"""Benchmark: fsarena's own share of a run's wall time, read from the session itself.

Not a test. Runs a comparison (the default one, or whatever options follow
`--`), then reads the session's timing record (schema 3): the whole run's wall
time, the set-up (sources, datasets), and per round its wall time and the wall
time of its timed executions. Prints where the time went and the share outside
timed tasks (target <= 20 % with the dataset cached), then each round's own time
per phase (cold caches, verification, the ceiling...: run/owntime.py), where
the session recorded it. With --session, reads an
existing session instead of running one.

    sudo .venv/bin/python bench/own_time.py --workdir /var/tmp/fsarena-bench/w \\
        --results-dir /var/tmp/fsarena-bench/r [-- --scale 0.25 --repetitions 3]
    .venv/bin/python bench/own_time.py --session SESSION.json
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from fsarena.run.owntime import PHASES
from fsarena.session.file import Session, latest, load

TARGET_SHARE = 0.20


def share_lines(session: Session) -> list[str]:
    """The timing record in words: set-up, each round, the share outside timed tasks."""
    timing = session.timing
    if not timing.rounds or timing.total_s is None:
        return ["no timing record in this session (schema < 3, or the run did not finish)"]
    total, rounds = float(timing.total_s), timing.rounds
    timed = sum(float(r.timed_s) for r in rounds)
    lines = [f"set-up (source, datasets): {float(timing.setup_s or 0):8.1f} s"]
    for r in rounds:
        what = "warm-up" if r.warmup else f"round {r.repetition}"
        outside = 1 - float(r.timed_s) / float(r.wall_s) if r.wall_s else 0.0
        lines.append(
            f"{what:>9}: {float(r.wall_s):8.1f} s, timed {float(r.timed_s):7.1f} s, "
            f"outside {outside:.0%}"
        )
    share = 1 - timed / total if total else 0.0
    verdict = "meets" if share <= TARGET_SHARE else "misses"
    lines.append(
        f"whole run: {total:.1f} s, timed {timed:.1f} s; outside timed tasks {share:.1%} "
        f"({verdict} the {TARGET_SHARE:.0%} target)"
    )
    measured = [r for r in rounds if not r.warmup]
    if measured:
        own = sum(float(r.wall_s) - float(r.timed_s) for r in measured) / len(measured)
        lines.append(f"fsarena's own time per measured round: {own:.1f} s")
    return lines + phase_lines(session)


def phase_lines(session: Session) -> list[str]:
    """Each round's own time per phase (run/owntime.py), largest in total first."""
    rounds = [r for r in session.timing.rounds if r.own_s]
    if not rounds:
        return ["no own time per phase in this session (recorded since fsarena 0.1.0's own_s)"]
    names = [r.repetition if not r.warmup else "w" for r in rounds]
    rows: dict[str, list[float]] = {}
    for i, r in enumerate(rounds):
        other = float(r.wall_s) - float(r.timed_s) - sum(float(v) for v in r.own_s.values())
        for phase, seconds in [*r.own_s.items(), ("other", other)]:
            rows.setdefault(phase, [0.0] * len(rounds))[i] = float(seconds)
    head = "".join(f"{'round ' + str(n):>10}" for n in names)
    lines = [f"own time per phase, s: {'phase':<10}{head}{'total':>10}  what"]
    for phase, values in sorted(rows.items(), key=lambda kv: -sum(kv[1])):
        cells = "".join(f"{v:10.2f}" for v in values)
        what = PHASES.get(phase, "the runner's bookkeeping, in no phase")
        lines.append(f"{'':23}{phase:<10}{cells}{sum(values):10.2f}  {what}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--session", type=Path, default=None, help="read this session only")
    parser.add_argument("--workdir", default="/var/tmp/fsarena-bench/w")
    parser.add_argument("--results-dir", type=Path, default=Path("/var/tmp/fsarena-bench/r"))
    args, extra = parser.parse_known_args()
    path = args.session
    if path is None:
        argv = [sys.executable, "-m", "fsarena", "run", "--workdir", args.workdir,
                "--results-dir", str(args.results_dir), "--quiet",
                *[a for a in extra if a != "--"]]  # fmt: skip
        print("$ " + " ".join(argv[2:]), flush=True)
        subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)
        path = latest(args.results_dir)
    print(f"session: {path}")
    for line in share_lines(load(path)):
        print(line)


if __name__ == "__main__":
    main()
