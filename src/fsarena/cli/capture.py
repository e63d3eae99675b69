"""`fsarena capture`: record a service's file-system calls into a trace to replay (run --replay)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import click

from fsarena.cli.args import force_option, refuse_existing
from fsarena.cli.base import fail
from fsarena.errors import FsarenaError
from fsarena.plan import DEFAULT_WORKDIR

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$")
_UNITS = {None: 1.0, "s": 1.0, "ms": 1e-3, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """Seconds from '90', '90s', '10m', '1.5h'."""
    match = _DURATION.match(text)
    if not match or float(match[1]) <= 0:
        raise FsarenaError(f"--duration {text!r}: write it like 30s, 10m or 1h")
    return float(match[1]) * _UNITS[match[2]]


@click.command(context_settings={"ignore_unknown_options": False})
@click.option("--pid", "pids", type=int, multiple=True, help="A running process to trace, and "
              "the children it starts; repeatable.")  # fmt: skip
@click.option("--cgroup", default=None, help="Trace every process of this cgroup (its directory "
              "under /sys/fs/cgroup).")  # fmt: skip
@click.option("--duration", default=None, help="How long to trace (30s, 10m, 1h); default: "
              "until the command given after -- ends, else 60s.")  # fmt: skip
@click.option("--output", "-o", required=True, help="The trace file to write (.fstrace.gz).")
@force_option
@click.option("--under", multiple=True, metavar="DIR", help="Only calls on paths under DIR (the "
              "service's data); repeatable. Default: every path but the system's files and "
              "pseudo and memory filesystems.")  # fmt: skip
@click.option("--anonymise/--no-anonymise", default=True, show_default=True,
              help="Replace every name by a keyed hash (structure, depth and extensions kept; "
              "the key is never stored), so the trace can leave the machine.")  # fmt: skip
@click.option(
    "--tracer",
    type=click.Choice(["bpftrace", "strace"]),
    default="bpftrace",
    show_default=True,
    help="bpftrace, in the kernel; strace, the fallback for a "
    "command where bpftrace cannot run (far slower: its cost is measured and said).",
)
@click.option("--workdir", default=DEFAULT_WORKDIR, show_default=True,
              help="Where the tracer's spool goes while it runs.")  # fmt: skip
@click.option("--quiet", "-q", is_flag=True, help="Only the summary.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def capture(
    pids: tuple[int, ...],
    cgroup: str | None,
    duration: str | None,
    output: str,
    force: bool,
    under: tuple[str, ...],
    anonymise: bool,
    tracer: str,
    workdir: str,
    quiet: bool,
    command: tuple[str, ...],
) -> None:
    """Record a service's file-system calls, to replay them on each filesystem.

    \b
    fsarena capture --pid 1234 --duration 10m -o db.fstrace.gz
    fsarena capture --cgroup /sys/fs/cgroup/system.slice/postgresql.service -o pg.fstrace.gz
    fsarena capture -o build.fstrace.gz -- make -j2

    In the kernel, with bpftrace on the syscall tracepoints (root). Then
    `fsarena run --replay TRACE --fs ext4,xfs,btrfs`. Exit codes: 0 the capture
    ran as asked; 1 every traced process ended before the duration (the trace
    holds what they did); 2 bad input; 128+N stopped by signal N (the trace holds
    what was recorded until then).
    """
    from fsarena.capture.record import Request
    from fsarena.capture.record import capture as run_capture
    from fsarena.interrupt import Stop
    from fsarena.run.launch import workdir_lock

    given = sum(bool(x) for x in (pids, cgroup, command))
    if given != 1:
        raise FsarenaError(
            "name what to trace: --pid PID, --cgroup PATH, or a command after -- "
            "(exactly one of them)"
        )
    if tracer == "strace" and not command:
        raise FsarenaError("--tracer strace traces a command: give it after --")
    if os.geteuid() != 0 and tracer == "bpftrace":
        raise FsarenaError("fsarena capture needs root (bpftrace loads kernel probes): use sudo")
    path = Path(output)
    refuse_existing(path, "trace", force)
    if not path.parent.is_dir():
        raise FsarenaError(f"-o {output}: directory {path.parent} does not exist")
    seconds = parse_duration(duration) if duration else (None if command else 60.0)
    request = Request(
        output=path.absolute(), workdir=os.path.abspath(workdir), pids=pids,
        cgroup=os.path.abspath(cgroup) if cgroup else "", command=command, duration_s=seconds,
        under=under, anonymise=anonymise, tracer=tracer,
    )  # fmt: skip
    say = (lambda _line: None) if quiet else (lambda line: click.echo(f"fsarena: {line}", err=True))
    stop = Stop()
    with stop.installed():
        try:
            with workdir_lock(request.workdir):
                outcome = run_capture(request, say)
        except KeyboardInterrupt:
            fail(f"interrupted by {stop.name} before anything was recorded; no tracer left "
                 "running, no trace written", stop.exit_code)  # fmt: skip
    for line in outcome.lines:
        click.echo(line)
    if outcome.interrupted:
        sys.exit(stop.exit_code)
    sys.exit(1 if outcome.early else 0)
