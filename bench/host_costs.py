"""Benchmark: the loop-image layer's host costs, before and after issue 26, side by side.

Not a test. Runs the default suite's copies (ISO and tree, in and within) on each
filesystem, alternating two methods round by round so both see the same load:

- before (main 68aab35): sparse images, mkfs's discards punching holes in them,
  writes timed to syncfs only;
- after (this branch): preallocated images, discard off on the loop device, writes
  timed to durable (syncfs, then one flush of the device).

Prints per filesystem and task the mean wall time and its CV for each method, and
the device flushes per run read from the device's counters; with the load average
before and after.

    sudo .venv/bin/python bench/host_costs.py --workdir /var/tmp/fsarena-fair-bench \\
        --results-dir bench-results [--scale 0.1 --rounds 3 --fs ext2,ext4,xfs,btrfs]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.host.executor import RealExecutor
from fsarena.measure.collect import Command
from fsarena.plan.model import make_plan
from fsarena.plan.suite import Suite
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session
from fsarena.tasks import TaskContext

TASKS = ["iso_copy_in", "iso_copy_within", "tree_copy_in", "tree_copy_within"]


class BeforeExecutor(RealExecutor):
    """main's loop images: sparse, with discard left on (mkfs punches holes in them)."""

    def create_image(self, path: str, size_bytes: int) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.track("image", path)
        with open(path, "xb") as f:
            f.truncate(size_bytes)

    def attach_loop(self, image: str) -> str:
        out = self.output(("losetup", "--find", "--show", "--direct-io=on", image))
        self.track("loop", str(Path(image).resolve()))
        return out.strip()


@contextlib.contextmanager
def syncfs_only() -> Iterator[None]:
    """main's timed region: the filesystem's sync, no device flush."""
    durable = TaskContext.durable

    def before(self: TaskContext) -> list[Command]:
        return [Command(self.profile.sync_argv(self.mountpoint))]

    TaskContext.durable = before  # type: ignore[method-assign]
    try:
        yield
    finally:
        TaskContext.durable = durable  # type: ignore[method-assign]


def one_round(method: str, args: argparse.Namespace, n: int) -> Session:
    suite = Suite.model_validate(
        {
            "name": "host-costs",
            "filesystems": args.fs.split(","),
            "tasks": ["mkfs", "mount", *args.tasks, "umount"],
        }
    )
    plan = make_plan(suite, None, 1, args.scale, 1, args.workdir)
    session = new_session(plan, {}, {})
    out = args.results_dir / f"host-costs-{method}-{n}.json"
    executor = BeforeExecutor() if method == "before" else RealExecutor()
    with syncfs_only() if method == "before" else contextlib.nullcontext():
        Runner(plan, executor, session, out, "tmpfs").run()
    return session


def cv(xs: list[float]) -> float:
    return statistics.stdev(xs) / statistics.mean(xs) if len(xs) > 1 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", default="/var/tmp/fsarena-fair-bench")
    parser.add_argument("--results-dir", type=Path, default=Path("bench-results"))
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fs", default="ext2,ext4,xfs,btrfs")
    parser.add_argument("--tasks", default=",".join(TASKS), help="the writing tasks to time")
    args = parser.parse_args()
    args.tasks = args.tasks.split(",")
    args.results_dir.mkdir(parents=True, exist_ok=True)
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}")
    walls: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    flushes: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for n in range(1, args.rounds + 1):
        for method in ("before", "after") if n % 2 else ("after", "before"):
            try:
                session = one_round(method, args, n)
            except FsarenaError as exc:
                raise SystemExit(f"host_costs: {exc}") from None
            for r in session.runs:
                if r.task in args.tasks and r.status == "ok" and r.measurement is not None:
                    key = (r.filesystem, r.task, method)
                    walls[key].append(r.measurement.wall_s)
                    if r.measurement.device_flushes is not None:
                        flushes[key].append(r.measurement.device_flushes)
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}")
    print(f"scale {args.scale:g}, {args.rounds} rounds each way, alternated")
    head = "before: mean s  CV   flushes | after: mean s  CV   flushes"
    print(f"{'filesystem':10} {'task':20} {head}")
    for fs in args.fs.split(","):
        for task in args.tasks:
            cells = []
            for method in ("before", "after"):
                w, f = walls[(fs, task, method)], flushes[(fs, task, method)]
                if not w:
                    cells.append(f"{'-':>8} {'-':>5} {'-':>7}")
                    continue
                fl = f"{statistics.median_low(f)}" if f else "-"
                cells.append(f"{statistics.mean(w):8.3f} {cv(w):5.1%} {fl:>7}")
            print(f"{fs:10} {task:20} {cells[0]}       | {cells[1]}")


if __name__ == "__main__":
    main()
