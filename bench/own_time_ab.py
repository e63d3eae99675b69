"""Benchmark: fsarena's own share of a run's wall time, two checkouts alternated, medians.

Not a test (root). On a shared machine the share moves with the load more than
with the code, so one run each way says little: this runs the same comparison
(the default one, or whatever options follow `--`) with checkout A, then B, then
A..., --pairs times, each with its own work and results directories, and prints
each run's share outside the timed tasks and own time per measured round (read
from its session, as bench/own_time.py reads it), with the load before and after
it, then the medians. Each checkout runs with this interpreter and its own
`src` first on PYTHONPATH (the native helpers of this venv: build them from the
same native/ sources).

    sudo .venv/bin/python bench/own_time_ab.py --a /var/tmp/before --b . --pairs 3 \\
        --workdir /var/tmp/fsarena-ab -- --fs ext4,xfs -n 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from fsarena.session.file import latest, load


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def one_run(
    checkout: Path, workdir: Path, results: Path, extra: list[str]
) -> dict[str, float | str]:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    argv = [sys.executable, "-m", "fsarena", "run", "--workdir", str(workdir),
            "--results-dir", str(results), "--quiet", *extra]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, check=False)
    elapsed = time.monotonic() - started
    session = load(latest(results))
    timing = session.timing
    # What the share is of: the exit code, the session's status, and any run not "ok"
    # (an invalid run still exits 0: its figure is flagged, not missing).
    others = sorted({r.status for r in session.runs} - {"ok"})
    verdict = f"exit {done.returncode}, {session.status}"
    verdict += f", runs {'/'.join(others)} too" if others else ", every run ok"
    total = float(timing.total_s or 0)
    timed = sum(float(r.timed_s) for r in timing.rounds)
    measured = [r for r in timing.rounds if not r.warmup]
    own = [float(r.wall_s) - float(r.timed_s) for r in measured]
    return {
        "share": 1 - timed / total if total else float("nan"),
        "own_per_round": sum(own) / len(own) if own else float("nan"),
        "rounds": len(timing.rounds),
        "total": total,
        "command": elapsed,
        "verdict": verdict,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", type=Path, required=True, help="checkout A (e.g. before)")
    parser.add_argument("--b", type=Path, required=True, help="checkout B (e.g. after)")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/var/tmp/fsarena-ab"))
    args, rest = parser.parse_known_args()
    extra = rest[1:] if rest[:1] == ["--"] else rest
    shown = " ".join(extra) or "(the default run)"
    print(f"fsarena run {shown}; A = {args.a.resolve()}, B = {args.b.resolve()}", flush=True)
    found: dict[str, list[dict[str, float | str]]] = {"A": [], "B": []}
    for pair in range(1, args.pairs + 1):
        for name, checkout in (("A", args.a), ("B", args.b)):
            base = args.workdir / f"{name}{pair}"
            shutil.rmtree(base, ignore_errors=True)
            before = loadavg()
            r = one_run(checkout.resolve(), base / "w", base / "r", extra)
            found[name].append(r)
            print(
                f"{name} pair {pair}: outside timed tasks {r['share']:.1%}, own time "
                f"{r['own_per_round']:.1f} s per measured round, {r['rounds']:.0f} rounds, "
                f"run {r['total']:.0f} s (command {r['command']:.0f} s; {r['verdict']}); "
                f"load {before} -> {loadavg()}",
                flush=True,
            )
            shutil.rmtree(base / "w", ignore_errors=True)
    for name in ("A", "B"):
        shares = [float(r["share"]) for r in found[name]]
        own = [float(r["own_per_round"]) for r in found[name]]
        print(
            f"{name}: median outside timed tasks {statistics.median(shares):.1%} "
            f"({', '.join(f'{s:.1%}' for s in shares)}); median own time per round "
            f"{statistics.median(own):.1f} s"
        )


if __name__ == "__main__":
    main()
