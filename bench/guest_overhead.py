"""Benchmark: what a guest kernel costs: its boot, and its overhead per timed command.

Not a test. For each guest kernel available here (uml, qemu), boots it
--boots times with a small target disk and measures: the time from starting
the guest to its agent's first answer (boot), the time to stop it, the round
trip of one request to the agent, and the measured wall time of `true` (one
process start, what every task's command pays) in the guest and on the host.
Per-task slowdowns of real tasks are in any session's report ("Measured in this
run: ext4@uml in the guest took N× the time of ext4 on the host").

    sudo .venv/bin/python bench/guest_overhead.py [--boots 5] [--workdir /var/tmp]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from fsarena.guest.host import boot
from fsarena.guest.kernels import GUESTS
from fsarena.host.executor import GuestSpec, RealExecutor
from fsarena.measure.collect import Command

TRUE = [Command(("true",))]


def _summary(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    v = [x * scale for x in values]
    return (
        f"median {statistics.median(v):.3f} {unit} (min {min(v):.3f}, max {max(v):.3f}, n {len(v)})"
    )


def bench_guest(kernel: str, boots: int, base: Path, host: RealExecutor) -> None:
    image = base / f"{kernel}.img"
    host.create_image(str(image), 64 << 20)
    boot_s, stop_s, trip_s, true_s = [], [], [], []
    for i in range(boots):
        spec = GuestSpec(kernel, str(image), str(base / f"run-{kernel}-{i}"), str(base / "w"))
        started = time.monotonic()
        guest = boot(spec, host)
        boot_s.append(time.monotonic() - started)
        try:
            for _ in range(20):
                t = time.monotonic()
                guest.exists("/")
                trip_s.append(time.monotonic() - t)
                true_s.append(guest.measure(TRUE, None, 60).measurement.wall_s)
        finally:
            t = time.monotonic()
            guest.close()
            stop_s.append(time.monotonic() - t)
    print(f"{kernel}: boot to agent ready   {_summary(boot_s)}")
    print(f"{kernel}: stop                  {_summary(stop_s)}")
    print(f"{kernel}: request round trip    {_summary(trip_s, 'ms', 1e3)}")
    print(f"{kernel}: `true` measured       {_summary(true_s, 'ms', 1e3)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boots", type=int, default=5)
    parser.add_argument("--workdir", default="/var/tmp")
    args = parser.parse_args()
    host = RealExecutor()
    base = Path(tempfile.mkdtemp(prefix="fsarena-bench-guest-", dir=args.workdir))
    (base / "w").mkdir()
    try:
        native = [host.measure(TRUE, None, 60).measurement.wall_s for _ in range(100)]
        print(f"host: `true` measured       {_summary(native, 'ms', 1e3)}")
        for name, kernel in GUESTS.items():
            if why := kernel.missing():
                print(f"{name}: skipped ({why})")
                continue
            bench_guest(name, args.boots, base, host)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
