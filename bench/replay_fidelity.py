"""Replay fidelity (issue 37): three workloads captured, replayed beside the real command.

For each workload of bench/replay_workloads (fsync-heavy log writer, metadata-heavy
create/rename/unlink, sequential large files), as root:

1. the workload runs on a fresh ext4 on a loop device (fallocated image, direct I/O,
   the mkfs options fsarena uses; its host blocks written once and zeroed again, as
   fsarena's recycled images are, unless --fresh-host-blocks), captured with
   `fsarena capture --under DATA -- ...`;
2. one session replays the trace and runs the same command (`--command`) on ext4,
   xfs and btrfs, `-n REPS` fixed rounds, side by side;
3. from the session: per filesystem, each task's times; the ratios xfs/ext4 and
   btrfs/ext4 (geometric means, 95 % Welch interval on logs) of the command and of the
   replays; whether they agree (intervals overlap, points within 15 %); the replay
   error on ext4 (analysis/replay.py); the trace's size per minute.

Usage: sudo .venv/bin/python bench/replay_fidelity.py [--reps 5] [--workloads a,b]
       [--out DIR] [--workdir DIR] [--fresh-host-blocks] [--scale S]
Prints a Markdown table for bench/RESULTS.md; keeps the traces and sessions in --out.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
FSARENA = str(Path(sys.executable).parent / "fsarena")
PYTHON = "/usr/bin/python3"  # Debian's: no pyenv shim forking around the workload
WORKLOADS = {
    "fsync_log": "fsync-heavy: a log writer, write + fsync of 6,000 200-byte records",
    "metadata": "metadata-heavy: 4,000 files created, renamed, stat'ed, half unlinked",
    "seqfiles": "sequential large files: 2 x 192 MiB in 1 MiB writes, fsync, read back",
}
AGREE_PCT = 15.0
CAPTURE_SIZE = "1536M"  # the capture's filesystem, and each replay's image


def sh(*argv: str, check: bool = True) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout.strip()


@contextlib.contextmanager
def capture_filesystem(
    workdir: Path, size: str = CAPTURE_SIZE, image_dir: Path | None = None, written: bool = False
) -> Iterator[Path]:
    """A fresh ext4 on a loop device, as fsarena makes its own; removed afterwards.

    image_dir: where the image lies (default the work directory); on a tmpfs, the
    device is memory (no direct I/O there), and a flush reaches no disk. written: the
    image's host blocks written once before (see below), as a recycled image's are.
    The image, its loop device and the mount are recorded, before each is made, in
    fsarena's resource ledger of WORKDIR/capture-fs (as a run records its own), so a
    bench killed with -9 leaves nothing `fsarena cleanup --workdir WORKDIR/capture-fs`
    does not undo; SIGTERM and Ctrl-C undo them on the way out.
    """
    from fsarena.host.ledger import Ledger

    home = workdir / "capture-fs"
    image, mnt = (image_dir or home) / "capture.img", home / "mnt"
    mnt.mkdir(parents=True, exist_ok=True)
    ledger = Ledger(str(home))
    ledger.track("image", str(image))
    sh("fallocate", "-l", size, str(image))
    if written:
        # Host blocks written once, then unwritten again (zero-range keeps them): as an
        # image fsarena recycles lies. On this VM's disk, blocks never written before cost
        # the capture's fsyncs 30-40 % more than the replays' (2026-11-27, seqfiles).
        megabytes = int(size.rstrip("M"))
        sh("dd", "if=/dev/zero", f"of={image}", "bs=4M", "oflag=direct", "conv=notrunc",
           f"count={megabytes // 4}", "status=none")  # fmt: skip
        sh("fallocate", "--zero-range", "-l", size, str(image))
    direct = "--direct-io=off" if image_dir else "--direct-io=on"
    ledger.track("loop", str(image))
    device = sh("losetup", "--find", "--show", direct, str(image))
    try:
        sh("mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", device)
        ledger.track("mount", str(mnt), device)
        sh("mount", device, str(mnt))
        try:
            (mnt / "data").mkdir()
            yield mnt / "data"
        finally:
            sh("umount", str(mnt))
            ledger.untrack("mount", str(mnt))
    finally:
        sh("losetup", "-d", device)
        ledger.untrack("loop", str(image))
        image.unlink()
        ledger.untrack("image", str(image))


def _stop_on_sigterm() -> None:
    """SIGTERM unwinds as Ctrl-C does, through every `finally` above."""

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, stop)


# Each workload's size argument at --scale 1 (records, files, MiB per file).
SIZES = {"fsync_log": 6000, "metadata": 4000, "seqfiles": 192}


def command(workload: str, scale: float) -> str:
    """The workload's command line; scale: the fsync- and metadata-heavy ones' sizes times it."""
    script = HERE / "replay_workloads" / (workload + ".py")
    if scale == 1.0 or workload == "seqfiles":  # seqfiles fills most of the image already
        return f"{PYTHON} {script}"
    return f"{PYTHON} {script} {round(SIZES[workload] * scale)}"


def capture(workload: str, line: str, workdir: Path, out: Path, written: bool) -> Path:
    trace = out / f"{workload}.fstrace.gz"
    with capture_filesystem(workdir, written=written) as data:
        argv = [
            FSARENA,
            "capture",
            "-q",
            "--force",
            "--workdir",
            str(workdir),
            "-o",
            str(trace),
            "--under",
            str(data),
            "--",
            "env",
            "-C",
            str(data),
            *line.split(),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        print(done.stdout.strip(), file=sys.stderr)
        if done.returncode != 0:
            raise SystemExit(f"capture of {workload} failed: {done.stderr.strip()}")
    return trace


def session(workload: str, line: str, trace: Path, reps: int, workdir: Path, out: Path) -> Path:
    path = out / f"{workload}-session.json"
    # The images are the capture's size: ext4's journal (and every filesystem's layout)
    # grows with the filesystem, and the replay error compares like with like.
    argv = [FSARENA, "run", "-q", "--force", "--replay", str(trace), "--command",
            line, "--fs", "ext4,xfs,btrfs", "-n", str(reps), "--workdir",
            str(workdir), "--results-dir", str(out), "-o", str(path), "--image-size",
            CAPTURE_SIZE]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"session of {workload}: exit {done.returncode}: {done.stderr[-2000:]}")
    return path


def ratios(path: Path) -> dict[str, object]:
    """Per task, per filesystem: the ratio to ext4 with its interval; the replay error."""
    from fsarena.analysis.ranking import ratio_test
    from fsarena.analysis.replay import replay_error
    from fsarena.session.file import load

    s = load(path)
    out: dict[str, object] = {}
    for task in ("command", "replay", "replay_paced"):
        walls = {
            fs: [r.measurement.wall_s for r in s.ok_runs()
                 if r.task == task and r.filesystem == fs and r.measurement]
            for fs in ("ext4", "xfs", "btrfs")
        }  # fmt: skip
        row: dict[str, object] = {fs: statistics.median(v) for fs, v in walls.items() if v}
        for fs in ("xfs", "btrfs"):
            if walls[fs] and walls["ext4"]:
                t = ratio_test(walls[fs], walls["ext4"])
                row[f"{fs}/ext4"] = (t.ratio, t.low, t.high)
        row["n"] = min(len(v) for v in walls.values())
        out[task] = row
    for task in ("replay", "replay_paced"):
        found = replay_error(s, task)
        out[f"{task}_error_pct"] = None if found is None else found.error_pct
    return out


def agree(a: tuple[float, float, float], b: tuple[float, float, float]) -> tuple[bool, float]:
    """Intervals overlap, and the points' distance in % of the command's."""
    overlap = a[1] <= b[2] and b[1] <= a[2]
    return overlap, 100.0 * abs(b[0] / a[0] - 1.0)


def table(results: dict[str, dict[str, object]], traces: dict[str, Path]) -> list[str]:
    lines = [
        "| workload | pair | --command | replay (paced) | agree | replay (fast) | "
        "replay error on ext4 (paced / fast) | trace MB per minute |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for workload, r in results.items():
        header = json.loads(_header(traces[workload]))
        mb_min = traces[workload].stat().st_size / 1e6 / max(header["duration_s"], 1e-9) * 60
        for pair in ("xfs/ext4", "btrfs/ext4"):
            c = r["command"][pair]  # type: ignore[index]
            p = r["replay_paced"][pair]  # type: ignore[index]
            f = r["replay"][pair]  # type: ignore[index]
            ok, dist = agree(c, p)
            errors = f"{_pct(r['replay_paced_error_pct'])} / {_pct(r['replay_error_pct'])}"
            lines.append(
                f"| {workload} | {pair} | {_ratio(c)} | {_ratio(p)} | "
                f"{'yes' if ok and dist <= AGREE_PCT else 'NO'} ({dist:.1f} %) | {_ratio(f)} | "
                f"{errors} | {mb_min:.2f} |"
            )
    return lines


def _header(trace: Path) -> str:
    import gzip

    with gzip.open(trace, "rt") as f:
        return f.readline()


def _ratio(t: tuple[float, float, float]) -> str:
    return f"{t[0]:.3f} ({t[1]:.3f}–{t[2]:.3f})"


def _pct(v: object) -> str:
    return "not measured" if v is None else f"{float(v):.1f} %"  # type: ignore[arg-type]


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--reps", type=int, default=5)
    args.add_argument("--workloads", default=",".join(WORKLOADS))
    args.add_argument("--out", default="/var/tmp/fsarena-replay-bench/out")
    args.add_argument("--workdir", default="/var/tmp/fsarena-replay-bench/fidelity")
    args.add_argument(
        "--fresh-host-blocks", action="store_true",
        help="capture on an image whose host blocks were never written (before 2026-11-27)",
    )  # fmt: skip
    args.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="the fsync-heavy and metadata-heavy workloads' sizes times this",
    )
    a = args.parse_args()
    _stop_on_sigterm()
    out, workdir = Path(a.out), Path(a.workdir)
    out.mkdir(parents=True, exist_ok=True)
    results, traces = {}, {}
    for workload in a.workloads.split(","):
        started = time.monotonic()
        line = command(workload, a.scale)
        traces[workload] = capture(workload, line, workdir, out, not a.fresh_host_blocks)
        path = session(workload, line, traces[workload], a.reps, workdir, out)
        results[workload] = ratios(path)
        print(f"{workload}: {time.monotonic() - started:.0f} s: {results[workload]}",
              file=sys.stderr)  # fmt: skip
    print("\n".join(table(results, traces)))
    print(json.dumps(results, indent=1, default=str), file=sys.stderr)
    shutil.rmtree(workdir / "capture-fs", ignore_errors=True)


if __name__ == "__main__":
    main()
