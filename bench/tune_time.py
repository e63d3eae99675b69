"""Benchmark: a tune's time against its stated estimate and one run of the defaults alone.

Not a test (root). The documented example, `fsarena tune --fs btrfs --suite server-2026
--scale 0.1`, must state its estimate before it runs, end within 2x of it and within 3x
the time of one run of the defaults (`fsarena run` with the same options), side by side
on the same machine. Each pair runs, in one fresh results directory, the run of the
defaults first, then the tune, which reads that run's session for its estimate (as a
user's second command would). It prints each command's wall time (the whole command, as
the user waits for it: the option probe, set-up and the reports included), the estimate
the tune stated (its `fsarena: time:` line), the tune's rounds, why it stopped, what it
eliminated and when, and its answer's first lines, with the load before and after.

    sudo .venv/bin/python bench/tune_time.py --pairs 1 --workdir /var/tmp/fsarena-tune-bench \\
        -- --fs btrfs --suite server-2026 --scale 0.1
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from fsarena.report.comparison import build
from fsarena.session.file import Session, latest, load

ESTIMATE = re.compile(r"^fsarena: time: (about (\d+) (s|min)\b.*)$", re.MULTILINE)


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def command(what: str, workdir: Path, results: Path, extra: list[str], log: Path) -> float:
    """One `fsarena WHAT ...`, its output kept in LOG: the wall seconds it took."""
    argv = [sys.executable, "-m", "fsarena", what, "--workdir", str(workdir),
            "--results-dir", str(results), *extra]  # fmt: skip
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, check=False)
    elapsed = time.monotonic() - started
    print(f"  {what}: exit {done.returncode}, {elapsed:.0f} s (log: {log})", flush=True)
    return elapsed


def stated(log: Path) -> tuple[str, float | None]:
    """The estimate the command stated before it ran, and its seconds (None: none)."""
    found = ESTIMATE.search(log.read_text())
    if found is None:
        return "no estimate stated", None
    value, unit = float(found.group(2)), found.group(3)
    return found.group(1), value * (60 if unit == "min" else 1)


def described(session: Session) -> dict[str, str]:
    drops = session.race.drops if session.race else []
    gone = ", ".join(f"{d.configuration} after {d.after_rounds}" for d in drops) or "none"
    verdicts = build(session).verdicts
    tune = verdicts.answer.tune if verdicts is not None else ()
    return {
        "rounds": str(len(session.order)),
        "configurations": str(len(session.plan.filesystems)),
        "stop": session.stop.text if session.stop else "?",
        "eliminated": gone,
        "answer": "\n    ".join(tune[:2]),
        "status": session.status,
    }


def one_pair(pair: int, base: Path, extra: list[str]) -> dict[str, str | float | None]:
    results = base / f"results-{pair}"
    workdir = base / f"work-{pair}"
    shutil.rmtree(results, ignore_errors=True)
    results.mkdir(parents=True)
    before = loadavg()
    run_s = command("run", workdir, results, extra, results / "run.log")
    tune_log = results / "tune.log"
    tune_s = command("tune", workdir, results, extra, tune_log)
    words, estimate_s = stated(tune_log)
    return {
        "run_s": run_s,
        "tune_s": tune_s,
        "estimate": words,
        "estimate_s": estimate_s,
        "load": f"{before} -> {loadavg()}",
        **described(load(latest(results))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=Path("/var/tmp/fsarena-tune-bench"))
    args, rest = parser.parse_known_args()
    extra = rest[1:] if rest[:1] == ["--"] else rest
    print(f"fsarena run {' '.join(extra)}, then fsarena tune {' '.join(extra)}", flush=True)
    rows = []
    for pair in range(1, args.pairs + 1):
        print(f"pair {pair} (load {loadavg()})", flush=True)
        rows.append(one_pair(pair, args.workdir, extra))
    print("\n| pair | one run of the defaults | tune | stated estimate | tune / estimate "
          "| tune / run | rounds | eliminated | load |")  # fmt: skip
    print("|---|---:|---:|---|---:|---:|---:|---|---|")
    for i, r in enumerate(rows, start=1):
        run_s, tune_s, est = float(r["run_s"] or 0), float(r["tune_s"] or 0), r["estimate_s"]
        over = f"{tune_s / float(est):.2f}" if est else "-"
        times = f"{run_s / 60:.1f} min | {tune_s / 60:.1f} min"
        print(f"| {i} | {times} | {r['estimate']} | {over} | {tune_s / run_s:.2f} "
              f"| {r['rounds']} | {r['eliminated']} | {r['load']} |")  # fmt: skip
    for i, r in enumerate(rows, start=1):
        print(f"\npair {i}: {r['configurations']} configurations, {r['status']}; {r['stop']}")
        print(f"    {r['answer']}")


if __name__ == "__main__":
    main()
