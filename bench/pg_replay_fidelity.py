"""PostgreSQL captured two ways (issue 37 item 4): its syscalls and its statement log, replayed.

As root, on a fresh ext4 on a loop device (bench/replay_fidelity.py's, direct I/O):

1. a source server (tests/integration/pgsource.py: ledgered, stopped by stop_postgres)
   with every statement logged and its data directory on that ext4; a schema, then a
   base backup (pg_basebackup -X stream);
2. `fsarena capture --pid` of the postmaster and each of its processes (the
   checkpointer, the WAL writer, ...), `--under` the data directory, while psql
   sessions of small transactions (BEGIN, UPDATE, INSERT, COMMIT) run one after
   another: the captured run's time is the sessions' wall time;
3. one session replays both on ext4 (loop, the capture's own filesystem type and
   device class), -n REPS: `replay` and `replay_paced` (the syscall trace),
   `pg_replay` and `pg_replay_paced` (pgreplay on the restored backup);
4. each replay's median time against the captured run's.

Usage: sudo PYTHONPATH=src:. .venv/bin/python bench/pg_replay_fidelity.py [--reps 3]
       [--sessions 2 --per-session 500] [--out DIR] [--workdir DIR]
Prints a Markdown table for bench/RESULTS.md; keeps the trace, log, backup and session in --out.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.integration.pgsource import SCHEMA, source_server, transactions

from replay_fidelity import capture_filesystem  # bench/, the script's own directory

FSARENA = [sys.executable, "-m", "fsarena"]
IMAGE = "1536M"
# What each replay's time is: fsarena's timed region (wall_s: the replay, then the
# filesystem's sync and one device flush), and pgreplay's own run time.
TIMED = (
    ("replay", "wall_s"),
    ("replay_paced", "wall_s"),
    ("pg_replay", "wall_s"),
    ("pg_replay", "pgreplay_run_s"),
    ("pg_replay_paced", "wall_s"),
    ("pg_replay_paced", "pgreplay_run_s"),
)


def _pids(postmaster: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True)
    return [postmaster, *map(int, out.stdout.split())]


def _start_capture(
    pids: list[int], under: Path, trace: Path, workdir: Path
) -> subprocess.Popen[str]:
    argv = [*FSARENA, "capture", "--force", "--workdir", str(workdir), "-o", str(trace),
            "--under", str(under), "--duration", "10m"]  # fmt: skip
    for pid in pids:
        argv += ["--pid", str(pid)]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:  # "fsarena: tracing ..." once the probes are attached
        print(line.rstrip(), file=sys.stderr)
        if "tracing" in line:
            return proc
    raise SystemExit(f"capture ended before it traced (exit {proc.wait()})")


def record(work: Path, out: Path, sessions: int, per_session: int) -> dict[str, object]:
    """The trace, the log, the backup; the captured run's time and statements."""
    trace, log, base = out / "pg.fstrace.gz", out / "statements.log", out / "base"
    with capture_filesystem(work) as data:
        data.parent.chmod(0o755)
        data.chmod(0o755)
        with source_server(data / "pg", log=log) as src:
            src.sql(SCHEMA)
            src.base_backup(base)
            postmaster = int((src.data / "postmaster.pid").read_text().split()[0])
            capture = _start_capture(_pids(postmaster), src.data, trace, work)
            start, sent = time.monotonic(), 0
            for s in range(sessions):
                script, n = transactions(per_session, s * per_session)
                src.sql(script)
                sent += n
            captured_s = time.monotonic() - start
            capture.send_signal(signal.SIGINT)
            rest = capture.communicate()[1]
            print(rest, file=sys.stderr)
    return {"trace": trace, "log": log, "base": base, "captured_s": captured_s, "sent": sent}


def replays(rec: dict[str, object], reps: int, work: Path, out: Path) -> Path:
    session = out / "session.json"
    argv = [*FSARENA, "run", "-q", "--force", "--replay", str(rec["trace"]), "--pg-replay",
            str(rec["log"]), "--pg-base", str(rec["base"]), "--fs", "ext4", "-n", str(reps),
            "--image-size", IMAGE, "--workdir", str(work / "w"), "--results-dir", str(out),
            "-o", str(session)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"the replays: exit {done.returncode}: {done.stderr[-2000:]}")
    return session


def table(rec: dict[str, object], session: Path) -> list[str]:
    from fsarena.analysis.replay import captured, replay_error
    from fsarena.session.file import load

    s = load(session)
    run_s = float(rec["captured_s"])  # type: ignore[arg-type]
    facts = captured(s)
    lines = [
        f"captured run: {rec['sent']:,} statements in {run_s:.2f} s (psql sessions' wall time); "
        f"syscall trace: {facts.calls if facts else '?':,} calls, "
        f"{facts.fs_call_s if facts else float('nan'):.3f} s inside file-system calls",
        "",
        "| replay | what is timed | median (s) | vs the captured run | n | "
        "replay error (fs calls) |",
        "|---|---|---|---|---|---|",
    ]
    for task, metric in TIMED:
        found = [r.value(metric) for r in s.ok_runs() if r.task == task]
        values = [v for v in found if v is not None]
        if not values:
            lines.append(f"| {task} | {metric} | failed | | 0 | |")
            continue
        median = statistics.median(values)
        err = replay_error(s, task) if not task.startswith("pg_") else None
        error = f"{err.error_pct:.1f} %" if err else "—"
        lines.append(f"| {task} | {metric} | {median:.2f} | {100 * (median / run_s - 1):+.1f} % "
                     f"| {len(values)} | {error} |")  # fmt: skip
    return lines


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--reps", type=int, default=3)
    args.add_argument("--sessions", type=int, default=2)
    args.add_argument("--per-session", type=int, default=500)
    args.add_argument("--out", default="/var/tmp/fsarena-pgreplay-bench/out")
    args.add_argument("--workdir", default="/var/tmp/fsarena-pgreplay-bench/work")
    a = args.parse_args()
    out, work = Path(a.out), Path(a.workdir)
    for d in (out, work):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        d.chmod(0o755)
    work.parent.chmod(0o755)
    rec = record(work, out, a.sessions, a.per_session)
    session = replays(rec, a.reps, work, out)
    print("\n".join(table(rec, session)))


if __name__ == "__main__":
    main()
