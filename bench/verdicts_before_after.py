"""Benchmark: the default run's verdicts before and after a change, rounds alternated.

Not a test. Runs the default suite (article-a-2006) one round at a time, alternating
a "before" checkout (its own .venv, e.g. a worktree at the parent of the durability
change) and an "after" one (default: this checkout), so both see the same load; each
side's rounds are then joined into one session of N repetitions (round k is repetition
k) and both joined sessions are reported by this checkout's code, so only the
measurement differs, not the statistics. Prints each side's ANSWER and each round's
load average, and writes the joined sessions and reports beside them.

    git -C . worktree add /var/tmp/fsarena-fair2-before 68aab35
    (cd /var/tmp/fsarena-fair2-before && ./scripts/setup.sh --dev)
    sudo .venv/bin/python bench/verdicts_before_after.py \\
        --before /var/tmp/fsarena-fair2-before [--after CHECKOUT] \\
        --out /var/tmp/fsarena-fair2-verdicts \\
        [--scale 0.05 --rounds 3 --suite article-a-2006]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def one_round(side: str, checkout: Path, args: argparse.Namespace, k: int) -> Path:
    out: Path = args.out / f"{side}-{k}.json"
    argv = [str(checkout / ".venv/bin/fsarena"), "run", "--suite", args.suite,
            "--scale", str(args.scale), "--repetitions", "1", "--no-warmup",
            "--seed", str(k), "--workdir", str(args.out / f"work-{side}"),
            "--output", str(out), "--quiet"]  # fmt: skip
    before = Path("/proc/loadavg").read_text().split()[:3]
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, check=False)
    after = Path("/proc/loadavg").read_text().split()[:3]
    print(
        f"{side} round {k}: exit {proc.returncode}, {time.monotonic() - started:.0f} s, "
        f"load {' '.join(before)} -> {' '.join(after)}",
        flush=True,
    )
    if not out.exists():
        sys.exit(f"{side} round {k} left no session: {proc.stderr.strip()[-500:]}")
    return out


def joined(side: str, rounds: list[Path], out: Path) -> Path:
    """One session of len(rounds) repetitions: round k's runs become repetition k."""
    first = json.loads(rounds[0].read_text())
    runs = []
    for k, one in enumerate(rounds, 1):
        for run in json.loads(one.read_text())["runs"]:
            if not run.get("warmup"):
                runs.append({**run, "repetition": k})
    first["runs"] = runs
    # The rounds' filesystem orders: the report counts repetitions from them.
    first["order"] = [o for one in rounds for o in json.loads(one.read_text()).get("order", [])]
    first["plan"]["repetitions"] = len(rounds)
    path = out / f"{side}-joined.json"
    path.write_text(json.dumps(first, indent=1))
    return path


def report(session: Path, fmt: str) -> str:
    argv = [str(HERE / ".venv/bin/fsarena"), "report", str(session), "--format", fmt]
    return subprocess.run(argv, capture_output=True, text=True, check=False).stdout


def answer(text: str) -> list[str]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "ANSWER"), 0)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == ""), len(lines))
    return lines[start:end]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the before checkout")
    parser.add_argument("--after", type=Path, default=HERE, help="the after checkout")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--suite", default="article-a-2006")
    parser.add_argument("--scale", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    head = subprocess.run(["git", "-C", str(args.after), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    base = subprocess.run(["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()  # fmt: skip
    print(f"before {base} ({args.before}), after {head}; suite {args.suite}, "
          f"scale {args.scale}, {args.rounds} rounds each way, alternated", flush=True)  # fmt: skip
    sides = {"before": args.before, "after": args.after}
    done: dict[str, list[Path]] = {"before": [], "after": []}
    for k in range(1, args.rounds + 1):
        order = ["before", "after"] if k % 2 else ["after", "before"]
        for side in order:
            done[side].append(one_round(side, sides[side], args, k))
    for side in ("before", "after"):
        path = joined(side, done[side], args.out)
        text = report(path, "text")
        (args.out / f"{side}-report.txt").write_text(text)
        print(f"\n== {side} ({base if side == 'before' else head}): {path}")
        print("\n".join(answer(text)))


if __name__ == "__main__":
    main()
