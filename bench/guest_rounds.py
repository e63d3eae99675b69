"""Benchmark: a round of the same small suite in each guest kernel that boots here, side by side.

Not a test. For each guest kernel given (default: every one that boots here), runs
`fsarena run --fs jfs@GUEST` (jfs and the guest's reference, ext4@GUEST) and, for the
host, `--fs ext4,xfs` (two filesystems, as a guest round has): fixed rounds, article A
at a small scale, the sessions alternated guest by guest (A B C A B C ...) so that the
machine's drift falls on all alike. Prints, per driver, each session's time per round
(the session's own timing.rounds wall_s, warm-up excluded) and their median, and each
guest's median against the host's. Which guest `--fs jfs` picks is the first that
boots of the profile's order (filesystems/profiles.py: kvm, uml, qemu); this is the
figure that order rests on.

    sudo .venv/bin/python bench/guest_rounds.py [--pairs 3] [--rounds 2] [--scale 0.01]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from fsarena.filesystems.drivers import guest_unavailable
from fsarena.guest.kernels import GUESTS

HOST = "ext4,xfs"


def one_session(fs: str, rounds: int, scale: float, workdir: str, out: Path) -> list[float]:
    """The wall time of each measured round of one fixed session."""
    argv = [sys.executable, "-m", "fsarena", "run", "--fs", fs, "-n", str(rounds)]
    argv += ["--scale", str(scale), "--workdir", workdir, "--output", str(out), "--quiet"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    timing = json.loads(out.read_text())["timing"]["rounds"]
    return [r["wall_s"] for r in timing if not r["warmup"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--scale", type=float, default=0.01)
    parser.add_argument("--workdir", default="/var/tmp/fsarena-bench-guests")
    parser.add_argument("--guests", default=None, help="comma-separated (default: all that boot)")
    args = parser.parse_args()
    near = str(Path(args.workdir).parent)
    guests = args.guests.split(",") if args.guests else list(GUESTS)
    booting = [g for g in guests if not guest_unavailable(g, near)]
    for g in sorted(set(guests) - set(booting)):
        print(f"{g}: not measured: {guest_unavailable(g, near)}")
    drivers = {"host": HOST, **{g: f"jfs@{g}" for g in booting}}
    per_round: dict[str, list[float]] = {d: [] for d in drivers}
    with tempfile.TemporaryDirectory(prefix="guest-rounds.") as tmp:
        for pair in range(args.pairs):
            for name, fs in drivers.items():
                out = Path(tmp, f"{name}-{pair}.json")
                walls = one_session(fs, args.rounds, args.scale, args.workdir, out)
                per_round[name] += walls
                print(f"pair {pair + 1} {name:5} --fs {fs:10} rounds (s): "
                      + ", ".join(f"{w:.1f}" for w in walls), flush=True)  # fmt: skip
    host = statistics.median(per_round["host"])
    print(f"\nrounds of article A at scale {args.scale}, two filesystems a round:")
    for name, walls in per_round.items():
        label = "host kernel" if name == "host" else GUESTS[name].label
        median = statistics.median(walls)
        ratio = "" if name == "host" else f", {median / host:.1f}x the host's"
        print(f"  {name:5} ({label}): median {median:.1f} s a round "
              f"(min {min(walls):.1f}, max {max(walls):.1f}, n {len(walls)}){ratio}")  # fmt: skip


if __name__ == "__main__":
    main()
