"""Benchmark: what the fsarena-timeit launcher adds to a timed command, against the bare command.

Not a test. Times the same commands, interleaved, three ways from this process:
bare (subprocess straight from Python, as fsarena did before the launcher),
through fsarena-timeit (what fsarena does now), and the launcher's own report of
the command's wall time (what fsarena stores). Prints medians and the ratios
launcher / bare of the time seen from outside (the overhead fsarena pays per
command: one static fork + exec) and stored / bare (target <= 1.0: the stored
wall time excludes fsarena's own start-up of the command).

    .venv/bin/python bench/launcher_overhead.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time

from fsarena.measure.native import native_tool

COMMANDS = (("true",), ("find", "/usr/lib/python3", "-name", "*.py"))


def bare(argv: tuple[str, ...]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def launched(argv: tuple[str, ...]) -> tuple[float, float]:
    with tempfile.TemporaryFile() as report:
        fd = report.fileno()
        start = time.perf_counter()
        subprocess.run(
            [native_tool("timeit"), str(fd), *argv],
            stdout=subprocess.DEVNULL,
            check=True,
            pass_fds=(fd,),
        )
        outside = time.perf_counter() - start
        report.seek(0)
        return outside, float(json.loads(report.read())["wall_s"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    for argv in COMMANDS:
        b, o, s = [], [], []
        for _ in range(rounds):  # interleaved: the machine's drift hits all three alike
            b.append(bare(argv))
            outside, stored = launched(argv)
            o.append(outside)
            s.append(stored)
        mb, mo, ms = (statistics.median(x) for x in (b, o, s))
        print(
            f"{' '.join(argv)}: bare {1000 * mb:.2f} ms, through launcher {1000 * mo:.2f} ms "
            f"(x{mo / mb:.3f}, +{1000 * (mo - mb):.2f} ms), stored {1000 * ms:.2f} ms "
            f"(x{ms / mb:.3f})"
        )


if __name__ == "__main__":
    main()
