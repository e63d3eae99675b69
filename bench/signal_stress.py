"""Stress of a stop signal: `fsarena run` stopped at many moments, each checked for leftovers.

Usage (root): python bench/signal_stress.py WORKROOT [-i 40] [--at random|helper|fork]
              [--signals INT,TERM] [RUN OPTIONS...]

WORKROOT must be a directory of your own (e.g. /var/tmp/fsarena-NAME-stress): each
iteration runs `fsarena run` (default: --fs ext4,xfs --scale 0.01 -n 1) in its own
work directory WORKROOT/wN, in its own session, and sends it one signal:

  random  after a random delay within the first 80 % of an unsignalled run (measured first)
  helper  after a random delay, the moment a mount, umount or losetup of the run shows
          (the signal lands while a helper runs: a mount or a cold-cache umount/mount)
  fork    after a random delay, the moment the run has a child that is still itself
          (forked, not yet exec'd: the signal lands inside subprocess.Popen)

Each stop must exit 128 + the signal (or 0, if the run ended before the signal) and
leave nothing: no mount under its work directory, no loop device backed by a file in
it, no process carrying its FSARENA_WORKDIR, nothing its ledger still names
(tests/integration/stops.py, as the fault matrix checks), at the exit and again 2 s later
(a helper orphaned by the interrupt finishes after the run's teardown). What one left
is undone here (only what lies in that work directory) and printed. The totals go last.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.integration.stops import leftovers, undo

HELPERS = {"mount", "umount", "losetup"}
DEFAULT_RUN = ["--fs", "ext4,xfs", "--scale", "0.01", "-n", "1", "--seed", "7"]


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def wait_moment(proc: subprocess.Popen[str], at: str, delay: float, limit: float) -> str:
    """Sleep delay, then (helper, fork) poll for the moment; what the moment was."""
    time.sleep(delay)
    if at == "random":
        return "random"
    own = comm(proc.pid)
    deadline = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        for child in children(proc.pid):
            name = comm(child)
            if (at == "helper" and name in HELPERS) or (at == "fork" and name == own):
                return f"{at}:{name}"
        time.sleep(0.0002)
    return "late"


def one(
    root: Path, i: int, run: list[str], at: str, signum: int, span: float
) -> tuple[int, str, list[str], list[str], str]:
    workdir = root / f"w{i}"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "fsarena", "run", *run, "--quiet", "--workdir", str(workdir),
         "--output", str(root / f"s{i}.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    moment = wait_moment(proc, at, random.uniform(0.3, 0.8 * span), span)
    if proc.poll() is None:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=600)
    at_exit = leftovers(workdir)
    time.sleep(2)
    later = leftovers(workdir)
    if later:
        undo(workdir)
    tail = " | ".join(err.strip().splitlines()[-2:])
    return proc.returncode, moment, at_exit, later, tail


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workroot", type=Path)
    parser.add_argument("-i", "--iterations", type=int, default=40)
    parser.add_argument("--at", choices=["random", "helper", "fork"], default="random")
    parser.add_argument("--signals", default="INT,TERM")
    parser.add_argument("--seed", type=int, default=None)
    args, run = parser.parse_known_args()
    run = run or DEFAULT_RUN
    root = args.workroot.resolve()
    root.mkdir(parents=True, exist_ok=True)
    rng_seed = args.seed if args.seed is not None else random.randrange(2**31)
    random.seed(rng_seed)
    signals = [signal.Signals[f"SIG{s}"] for s in args.signals.split(",")]
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "fsarena", "run", *run, "--quiet", "--workdir",
         str(root / "w-measure"), "--output", str(root / "s-measure.json")],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    span = time.monotonic() - started
    print(f"unsignalled run: {span:.1f} s; seed {rng_seed}; load {_load()}", flush=True)
    bad = ended = 0
    for i in range(args.iterations):
        signum = random.choice(signals)
        code, moment, at_exit, later, tail = one(root, i, run, args.at, signum, span)
        wrong = code not in (0, 128 + signum) or at_exit or later
        bad += bool(wrong)
        ended += code == 0
        print(f"{i:3d} {signum.name:7s} at {moment:14s} exit {code:3d} "
              f"left at exit: {at_exit or '-'}; 2 s later: {later or '-'}"
              + (f"  << {tail}" if wrong else ""), flush=True)  # fmt: skip
    print(f"{args.iterations} stops ({args.at}): {bad} wrong (exit code or leftovers), "
          f"{ended} ended before the signal; load {_load()}")  # fmt: skip
    sys.exit(1 if bad else 0)


def _load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


if __name__ == "__main__":
    main()
