"""Capture overhead (issue 37): an fsync-heavy workload's call rate with and without capture.

The workload (bench/replay_workloads/fsync_log.py: write + fsync per 200-byte record,
rotating its log) runs on a fresh ext4 on a loop device, as fsarena makes its own,
and times its own loop: file-system calls per second. Two protocols, side by side
in one run on this machine:

- separate (what a user sees): runs alternate, bare (no tracer at all) and under
  `fsarena capture -- ...` (bpftrace), PAIRS times, in ABBA order (even pairs bare
  first, odd pairs captured first, so neither side always follows the previous
  capture's trace writing); each capture pays bpftrace's
  start (compiling and attaching its program) before the workload is released, so
  that is not in the workload's time, but it puts 20 s or more between a pair's runs.
- interleaved (the probes' cost, with the machine's drift taken out): one capture
  traces a runner process (`--pid`); the runner and an untraced twin run the workload
  alternately, INTERLEAVED times each, seconds apart. The twin's calls still meet the
  attached probes' filter (one map lookup per call), so this compares the traced
  process's full cost with the filter's alone: it is the overhead of being traced.

Each protocol's figure: the median of the traced runs over the median of the bare
ones, the median of the pairs' ratios, and their geometric mean with its 95 %
interval (Student's t on the logs): the overhead is at most 1 - the interval's low end.

--memory puts the loop device's image on a tmpfs (/dev/shm): every fsync still
commits ext4's journal, but no flush reaches a disk, so a call costs microseconds
and the probes' cost per call is as large a share of it as it can be (the worst
case; on a disk an fsync costs milliseconds).

Usage: sudo .venv/bin/python bench/capture_overhead.py [--pairs 5] [--interleaved 20]
       [--records 6000] [--memory]
"""

from __future__ import annotations

import argparse
import math
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fsarena.analysis.stats import t_interval  # noqa: E402
from replay_fidelity import FSARENA, PYTHON, capture_filesystem  # noqa: E402

WORKLOAD = str(HERE / "replay_workloads" / "fsync_log.py")
# A runner: runs the workload in the directory each line on stdin names, prints its rate.
RUNNER = (
    "import os, subprocess, sys\n"
    "for line in sys.stdin:\n"
    "    records, where = line.split()\n"
    f"    out = subprocess.run([{PYTHON!r}, {WORKLOAD!r}, records, '--rate'], cwd=where,\n"
    "                         capture_output=True, text=True, check=True).stdout\n"
    "    print(out.strip(), flush=True)\n"
)


def rate(output: str) -> float:
    line = next(ln for ln in output.splitlines() if ln.startswith("calls_per_s "))
    return float(line.split()[1])


def fresh(where: Path) -> Path:
    if where.exists():
        for f in where.iterdir():
            f.unlink()
    where.mkdir(exist_ok=True)
    subprocess.run(["sync", "-f", str(where)], check=True)
    return where


def bare(where: Path, records: int) -> float:
    done = subprocess.run([PYTHON, WORKLOAD, str(records), "--rate"], cwd=where,
                          capture_output=True, text=True, check=True)  # fmt: skip
    return rate(done.stdout)


def captured(where: Path, records: int, workdir: Path) -> float:
    trace = workdir / "overhead.fstrace.gz"
    argv = [FSARENA, "capture", "-q", "--force", "--workdir", str(workdir), "-o", str(trace),
            "--under", str(where), "--", "env", "-C", str(where), PYTHON, WORKLOAD,
            str(records), "--rate"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    trace.unlink()
    return rate(done.stdout)


def separate(data: Path, pairs: int, records: int, workdir: Path) -> tuple[list[float], ...]:
    without, with_ = [], []
    for pair in range(pairs):
        # ABBA: a pair's order alternates, so whatever the first run of a pair pays
        # (the previous trace's write, the tracer's compile just before) is on both sides.
        if pair % 2 == 0:
            without.append(bare(fresh(data / "run"), records))
            with_.append(captured(fresh(data / "run"), records, workdir))
        else:
            with_.append(captured(fresh(data / "run"), records, workdir))
            without.append(bare(fresh(data / "run"), records))
        print(f"separate {pair + 1}: bare {without[-1]:,.0f}, captured {with_[-1]:,.0f} calls/s",
              file=sys.stderr)  # fmt: skip
    return without, with_


def _ask(runner: subprocess.Popen[str], records: int, where: Path) -> float:
    assert runner.stdin is not None and runner.stdout is not None
    runner.stdin.write(f"{records} {where}\n")
    runner.stdin.flush()
    return rate(runner.stdout.readline())


def interleaved(data: Path, rounds: int, records: int, workdir: Path) -> tuple[list[float], ...]:
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    traced = subprocess.Popen([PYTHON, "-c", RUNNER], **pipes)  # type: ignore[call-overload]
    twin = subprocess.Popen([PYTHON, "-c", RUNNER], **pipes)  # type: ignore[call-overload]
    err = open(workdir / "interleaved.err", "w")  # noqa: SIM115
    argv = [FSARENA, "capture", "--force", "--workdir", str(workdir), "-o",
            str(workdir / "interleaved.fstrace.gz"), "--under", str(data), "--pid",
            str(traced.pid), "--duration", "1h"]  # fmt: skip
    capture = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err)
    try:
        while "fsarena: tracing" not in (workdir / "interleaved.err").read_text():
            assert capture.poll() is None, (workdir / "interleaved.err").read_text()
            time.sleep(0.2)
        without, with_ = [], []
        for i in range(rounds):
            without.append(_ask(twin, records, fresh(data / "twin")))
            with_.append(_ask(traced, records, fresh(data / "traced")))
            print(f"interleaved {i + 1}: untraced {without[-1]:,.0f}, traced {with_[-1]:,.0f}",
                  file=sys.stderr)  # fmt: skip
        return without, with_
    finally:
        capture.send_signal(signal.SIGINT)
        capture.wait()
        for runner in (traced, twin):
            runner.kill()
            runner.wait()
        (workdir / "interleaved.fstrace.gz").unlink(missing_ok=True)


def interval(pairs: list[float]) -> tuple[float, float, float]:
    """The pairs' geometric mean ratio and its 95 % interval (Student's t on the logs)."""
    logs = [math.log(r) for r in pairs]
    low, high = t_interval(logs, 0.95)
    return math.exp(statistics.fmean(logs)), math.exp(low), math.exp(high)


def summary(name: str, without: list[float], with_: list[float]) -> str:
    ratio = statistics.median(with_) / statistics.median(without)
    pairs = [w / b for w, b in zip(with_, without, strict=True)]
    mean, low, high = interval(pairs)
    return (
        f"{name}: bare median {statistics.median(without):,.0f} calls/s, traced median "
        f"{statistics.median(with_):,.0f} calls/s: ratio {ratio:.3f} (overhead "
        f"{100 * (1 - ratio):.1f} %); median of {len(pairs)} pairs' ratios "
        f"{statistics.median(pairs):.3f} (from {min(pairs):.3f} to {max(pairs):.3f}); "
        f"geometric mean of the pairs' ratios {mean:.3f}, 95 % interval {low:.3f}-{high:.3f} "
        f"(overhead {100 * (1 - mean):.1f} %, at most {100 * (1 - low):.1f} %)"
    )


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--pairs", type=int, default=5)
    args.add_argument("--interleaved", type=int, default=20)
    args.add_argument("--records", type=int, default=6000)
    args.add_argument("--workdir", default="/var/tmp/fsarena-replay-bench/overhead")
    args.add_argument("--memory", action="store_true", help="the image on /dev/shm")
    a = args.parse_args()
    workdir = Path(a.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    image_dir = Path("/dev/shm") if a.memory else None
    lines = [f"{time.strftime('%Y-%m-%d %H:%M')}, {a.records} records per run"]
    with capture_filesystem(workdir, "512M", image_dir) as data:
        if a.interleaved:
            lines.append(summary("interleaved", *interleaved(data, a.interleaved, a.records,
                                                             workdir)))  # fmt: skip
        if a.pairs:
            lines.append(summary("separate", *separate(data, a.pairs, a.records, workdir)))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
