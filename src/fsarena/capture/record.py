"""`fsarena capture`'s work: trace a service for a while, then write its trace.

The steps, in order: the target's processes as /proc shows them (working
directory, open descriptors, I/O counters); the tracer started under the
ledger and waited for (its probes attached); a command given with `--` released
only then, so none of its calls is missed; the wait (the duration, the
command's end, every traced process gone, or a stop signal); the tracer
stopped; then the records resolved, the initial tree inferred, the data's
compressibility sampled, the figures computed and the trace written. A stop
signal (Ctrl-C, SIGTERM) ends the wait and keeps what was recorded; a command
fsarena started is stopped with its whole session when the capture ends before
it does. Nothing outlives the capture: the tracer and the spool are ledger
resources (`fsarena cleanup` after a kill -9).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from fsarena.capture import cost, facts, summary, trace
from fsarena.capture.anonymise import Anonymiser, anonymised
from fsarena.capture.bpf import TASK_EVENTS, Filter, RawCall
from fsarena.capture.cost import Cost, ProbeCost, calibrate
from fsarena.capture.resolve import Resolver, Scope
from fsarena.capture.tracer import (
    StraceTracer,
    Tracer,
    bpftrace_version,
    held,
    release,
    strace_version,
    tracefs,
)
from fsarena.capture.tree import initial_tree, tree_bytes
from fsarena.errors import FsarenaError
from fsarena.host.ledger import Ledger, exited
from fsarena.interrupt import deferred

POLL_S = 0.1
LOOP_WAIT_S = 60.0  # the tracer-cost loop: about 0.1 s traced (and the interpreter's start)
STOP_WAIT_S = 5.0


@dataclass(frozen=True)
class Request:
    """What to capture, for how long, and where the trace goes."""

    output: Path
    workdir: str
    pids: tuple[int, ...] = ()
    cgroup: str = ""
    command: tuple[str, ...] = ()
    duration_s: float | None = None  # None: until the command exits (a command only)
    under: tuple[str, ...] = ()  # the service's data; default: all but the system's files
    anonymise: bool = True
    tracer: str = "bpftrace"  # or "strace", the stated fallback for a command


@dataclass
class Outcome:
    """What a capture did: the trace, its header, how it ended, and the lines to print."""

    path: Path
    size_bytes: int
    header: dict[str, Any]
    interrupted: str = ""  # the signal's name, when one ended it
    early: bool = False  # every traced process ended before the duration asked
    lines: list[str] = field(default_factory=list)


@dataclass
class Window:
    """What the wait saw: when the trace begins and ends, and why it ended."""

    start_ns: int = 0
    end_ns: int = 0
    ended: str = "duration"
    attach_s: float = 0.0
    exit_code: int | None = None  # the command's
    io_before: dict[int, dict[str, int]] = field(default_factory=dict)
    io_after: dict[int, dict[str, int]] = field(default_factory=dict)
    # The tracer's clock: bpftrace's records are CLOCK_MONOTONIC, strace's the epoch.
    clock: Callable[[], int] = time.monotonic_ns
    cost: Cost | None = None  # strace's cost per call here, measured before it started
    # bpftrace's: its time per call that its probes do not measure (capture/cost.py), or
    # why it was not measured
    probe_cost: ProbeCost | None = None
    probe_cost_missing: str = ""
    stopped_calls: int = 0  # strace: every call it stopped the command at


def _processes(request: Request) -> tuple[Filter, tuple[int, ...]]:
    """The tracer's filter and the processes to snapshot, from --pid or --cgroup."""
    if request.cgroup:
        mounts = facts.mounts()
        found = facts.mount_of(request.cgroup, mounts)
        procs = Path(request.cgroup, "cgroup.procs")
        try:
            pids = tuple(int(p) for p in procs.read_text().split())
        except (OSError, ValueError):
            raise FsarenaError(f"--cgroup {request.cgroup}: no cgroup there (no {procs})") from None
        if found is not None and found.fstype == "cgroup2":
            return Filter(cgroup_v2=request.cgroup), pids
        return Filter(pids=pids), pids  # cgroup v1: its processes now, and their children
    missing = [p for p in request.pids if exited(p)]
    if missing:
        raise FsarenaError(f"--pid {missing[0]}: no such process; give a running service's pid")
    return Filter(pids=request.pids), request.pids


class _Run:
    """The capture's processes: the tracer, and the command when fsarena starts it."""

    def __init__(self, request: Request, ledger: Ledger, folder: Path) -> None:
        self.request = request
        self.ledger = ledger
        self.folder = folder
        self.child: subprocess.Popen[bytes] | None = None
        self.gate = -1
        self.tracer: Tracer | StraceTracer | None = None
        self.window = Window()
        self.loop: subprocess.Popen[bytes] | None = None  # capture/cost.py's, traced first
        self.loop_gate = -1
        self.bare_ns = 0.0

    def start_loop(self, target: Filter) -> Filter:
        """The tracer-cost loop: timed bare now, then held until the tracer is attached, to
        run traced before the service's calls are (the filter, with its process added)."""
        try:
            self.bare_ns = cost.bare_iteration_ns(self.folder)
        except (OSError, ValueError, subprocess.CalledProcessError) as exc:
            self.window.probe_cost_missing = f"its loop did not run bare ({exc})"
            return target
        with deferred() as signalled:
            self.loop, self.loop_gate = held(cost.loop_argv(self.folder), quiet=True)
        signalled.check()
        return replace(target, also=(*target.also, self.loop.pid))

    def _run_loop(self) -> None:
        """Release the loop and wait for it (a stop signal meanwhile ends the capture)."""
        assert self.loop is not None
        release(self.loop_gate)
        self.loop_gate = -1
        try:
            self.loop.wait(timeout=LOOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self._stop_loop()

    def start_command(self) -> int:
        """The command, started but held before its exec until the tracer is attached;
        under strace, strace starts it (and is the process to wait for)."""
        if self.request.tracer == "strace":
            self.window.clock = time.time_ns
            self.window.cost = calibrate(self.folder)
            self.tracer = StraceTracer(self.ledger, self.folder, self.request.command)
            self.window.start_ns = self.window.clock()
            self.child = self.tracer.start()
            return self.child.pid
        with deferred() as signalled:
            self.child, self.gate = held(list(self.request.command))
        signalled.check()
        return self.child.pid

    def start_tracer(self, target: Filter) -> None:
        if self.request.tracer == "strace":
            return  # strace started with the command
        tracer = self.tracer = Tracer(self.ledger, self.folder, target)
        tracer.start()
        self.window.attach_s = tracer.wait_ready()
        if self.loop is not None:
            self._run_loop()
        self.window.start_ns = self.window.clock()
        if self.gate >= 0:
            release(self.gate)
            self.gate = -1

    def wait(self, pids: tuple[int, ...]) -> None:
        limit = self.request.duration_s
        deadline = None if limit is None else time.monotonic() + limit
        while deadline is None or time.monotonic() < deadline:
            if self.child is not None and self._command_done():
                self.window.ended = "command ended"
                return
            if self.child is None and all(exited(p) for p in pids):
                self.window.ended = "exited"
                return
            time.sleep(POLL_S)

    def _command_done(self) -> bool:
        """The command exited (kept unreaped a moment, so its I/O counters can be read)."""
        assert self.child is not None
        try:
            info = os.waitid(os.P_PID, self.child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def stop(self) -> None:
        """End everything the capture started: the command's session, then the tracer."""
        if self.window.end_ns == 0:
            self.window.end_ns = self.window.clock()
        if self.loop is not None:
            self._stop_loop()
        if self.child is not None:
            self._stop_command()
        if isinstance(self.tracer, Tracer):
            self.tracer.drain()
        if self.tracer is not None:
            self.tracer.stop()

    def _stop_loop(self) -> None:
        assert self.loop is not None
        if self.loop_gate >= 0:
            os.close(self.loop_gate)  # never released: its loop runs untraced and ends
            self.loop_gate = -1
        if self.loop.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.loop.pid, signal.SIGKILL)
            self.loop.wait()

    def _stop_command(self) -> None:
        assert self.child is not None
        if self.gate >= 0:
            os.close(self.gate)  # never released: sh's read sees end of file and execs
            self.gate = -1
        if self.child.poll() is None and self.request.tracer != "strace":
            with contextlib.suppress(OSError):
                done = os.waitid(os.P_PID, self.child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                if done is not None:
                    self.window.io_after[self.child.pid] = facts.proc_io(self.child.pid) or {}
        for sig in (signal.SIGTERM, signal.SIGKILL):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.child.pid, sig)
            try:
                self.child.wait(timeout=STOP_WAIT_S)
                break
            except subprocess.TimeoutExpired:
                continue
        self.window.exit_code = self.child.returncode


def capture(request: Request, say: Callable[[str], None]) -> Outcome:
    """Trace as the request says, then write the trace; the outcome to report."""
    if request.tracer == "strace" and not request.command:
        raise FsarenaError("--tracer strace traces a command: give it after --")
    version = strace_version() if request.tracer == "strace" else bpftrace_version()
    ledger = Ledger(request.workdir)
    ledger.mark_children()
    folder = Path(request.workdir, f"capture-{os.getpid()}")
    ledger.track("tree", str(folder))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with contextlib.nullcontext() if request.tracer == "strace" else tracefs():
            run = _Run(request, ledger, folder)
            resolver, interrupted = _traced(run, say)
        assert run.tracer is not None
        say("writing the trace")
        built = _build(request, run, resolver, version)
        size = trace.write(built, request.output)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        ledger.untrack("tree", str(folder))
    outcome = Outcome(request.output, size, built.header, interrupted)
    outcome.early = run.window.ended == "exited"
    outcome.lines = _lines(outcome, run.window, request)
    return outcome


def _traced(run: _Run, say: Callable[[str], None]) -> tuple[Resolver, str]:
    """The tracing itself; the resolver fed with what was recorded, and the signal if any."""
    request = run.request
    interrupted = ""
    try:
        pids: tuple[int, ...]
        if request.command:
            pid = run.start_command()
            target, pids = Filter(pids=(pid,)), (pid,)
        else:
            target, pids = _processes(request)
        resolver = _snapshot(run, pids if request.tracer != "strace" else ())
        if request.tracer != "strace":
            target = run.start_loop(target)
            say("attaching bpftrace's probes (compiling its program takes a while)")
        run.start_tracer(target)
        say(f"tracing {_what(request, pids)}" + _until(request))
        try:
            run.wait(pids)
        except KeyboardInterrupt as stop:
            interrupted = str(stop) or "SIGINT"
            run.window.ended = f"interrupted by {interrupted}"
        run.window.end_ns = run.window.clock()
        if request.tracer != "strace":  # strace's own counters are not the command's
            run.window.io_after |= {p: io for p in pids if (io := facts.proc_io(p)) is not None}
    finally:
        run.stop()
    assert run.tracer is not None
    resolver.start_ns = run.window.start_ns
    records = run.tracer.records()
    if run.loop is not None:
        records = _less_probe_cost(run, records)
    if isinstance(run.tracer, StraceTracer):  # its command, as it started: fsarena's cwd
        resolver.process(run.tracer.parser.first, os.getcwd(), [])
        run.window.stopped_calls = run.tracer.parser.calls
    for record in records:
        resolver.feed(record)
    resolver.counts.lost = run.tracer.lost_events()
    return resolver, interrupted


def _less_probe_cost(run: _Run, records: list[RawCall]) -> list[RawCall]:
    """The service's records, each call's overhead grown by the tracer's unmeasured time
    per call, measured on the loop's records (which are not the service's)."""
    assert run.loop is not None
    loop, service = cost.without_loop(records, run.loop.pid)
    found = run.window.probe_cost = cost.probe_cost(loop, run.bare_ns)
    if found is None:
        run.window.probe_cost_missing = "its loop was not traced whole"
    if found is None or found.per_call_ns <= 0:
        return service
    extra = round(found.per_call_ns)
    return [r if r.name in TASK_EVENTS else replace(r, overhead_ns=r.overhead_ns + extra)
            for r in service]  # fmt: skip


def _what(request: Request, pids: tuple[int, ...]) -> str:
    if request.command:
        return f"`{' '.join(request.command)}` (process {pids[0]}) and its children"
    if request.cgroup:
        return f"cgroup {request.cgroup}"
    return f"process {', '.join(map(str, pids))} and its children"


def _until(request: Request) -> str:
    if request.duration_s is None:
        return " until it ends (Ctrl-C ends the capture and keeps what was recorded)"
    return f" for {request.duration_s:g} s (Ctrl-C ends it sooner and keeps what was recorded)"


def _snapshot(run: _Run, pids: tuple[int, ...]) -> Resolver:
    resolver = Resolver(_scope(run.request, pids[0] if pids else None), 0)
    for pid in pids:
        resolver.process(pid, facts.cwd_of(pid), facts.descriptors(pid))
        run.window.io_before[pid] = facts.proc_io(pid) or {}
    return resolver


def _scope(request: Request, pid: int | None) -> Scope:
    under = tuple(os.path.normpath(os.path.abspath(u)) for u in request.under)
    pseudo = tuple(
        m.target
        for m in facts.mounts(pid)
        if m.fstype in facts.PSEUDO_FSTYPES and not any(_inside(m.target, u) for u in under)
    )
    system = () if under else facts.SYSTEM_DIRS
    return Scope(under=under, excluded=(*system, *pseudo))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# ---------------------------------------------------------------- the trace


def _build(request: Request, run: _Run, resolver: Resolver, version: str) -> trace.Trace:
    pids = tuple(run.window.io_before)
    root = next((f"/proc/{p}/root" for p in pids if not exited(p)), "")
    look = partial(facts.look, root=root)
    tree = initial_tree(resolver.evidence, look)
    touched = [p for p, ev in resolver.evidence.items() if ev.read_end or ev.written]
    captured = summary.captured(resolver.events)
    moved = captured["bytes_read"] + captured["bytes_written"]
    anonymiser = Anonymiser.fresh() if request.anonymise else Anonymiser(None)
    header = {
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "tracer": version,
        "target": _target_record(request, pids, anonymiser),
        "duration_s": round((run.window.end_ns - run.window.start_ns) / 1e9, 3),
        "asked_s": request.duration_s,
        "ended": run.window.ended,
        "command_exit_code": run.window.exit_code,
        "anonymised": anonymiser.active,
        "scope": {
            "under": [anonymiser.path(u) for u in resolver.scope.under],
            "excluded": list(resolver.scope.excluded) if not anonymiser.active else [],
        },
        **_filesystems(resolver, pids[0] if pids else None),
        "compressibility": facts.compressibility(touched, root).record(),
        "tree_bytes": tree_bytes(tree),
        "captured": captured,
        "unreplayable": summary.unreplayable(dict(resolver.counts.unreplayable), moved),
        "left_out": _left_out(resolver),
        "proc_io": _io_delta(run.window),
        "processes": len({pid for pid in resolver.threads.values()}),
        "threads": len(resolver.threads),
        "tracer_cost": None if run.window.probe_cost is None else run.window.probe_cost.record(),
    }
    built = trace.Trace(header, tree, resolver.preopened, resolver.events)
    return anonymised(built, anonymiser)


def _target_record(request: Request, pids: tuple[int, ...], an: Anonymiser) -> dict[str, Any]:
    if request.command:
        shown = list(request.command) if not an.active else [os.path.basename(request.command[0])]
        return {"kind": "command", "command": shown}
    if request.cgroup:
        return {"kind": "cgroup", "cgroup": an.path(request.cgroup), "pids": list(pids)}
    return {"kind": "pid", "pids": list(pids)}


def _filesystems(resolver: Resolver, pid: int | None) -> dict[str, Any]:
    """Each filesystem the calls were on (fstype, device class, calls); the most used one."""
    table = facts.mounts(pid)
    paths = [o.path for o in resolver.opens] + list(resolver.evidence)
    counted: Counter[tuple[str, str]] = Counter()
    for path in paths:
        if resolver.scope.holds(path) and (m := facts.mount_of(path, table)) is not None:
            counted[(m.fstype, facts.device_class(m.device))] += 1
    found = [
        {"fstype": fs, "device_class": dc, "paths": n} for (fs, dc), n in counted.most_common()
    ]
    return {"filesystems": found, "own_filesystem": found[0] if found else {}}


def _left_out(resolver: Resolver) -> dict[str, Any]:
    counts = resolver.counts
    return {
        "out_of_scope_calls": sum(counts.out_of_scope.values()),
        "out_of_scope_by_call": dict(sorted(counts.out_of_scope.items())),
        "out_of_scope_bytes": counts.out_of_scope_bytes,
        "unknown_descriptor_calls": counts.unknown_fd,
        "truncated_paths": counts.truncated_paths,
        "lost_records": counts.lost,
    }


def _io_delta(window: Window) -> dict[str, Any]:
    """/proc/PID/io of the traced processes over the capture (those seen at both ends)."""
    both = [p for p in window.io_before if window.io_after.get(p)]
    delta = {
        key: sum(window.io_after[p].get(key, 0) - window.io_before[p].get(key, 0) for p in both)
        for key in facts.IO_FIELDS
    }
    return {**delta, "processes": len(both)}


# ---------------------------------------------------------------- what to say


def _lines(outcome: Outcome, window: Window, request: Request) -> list[str]:
    h = outcome.header
    c = h["captured"]
    minutes = max(h["duration_s"], 1e-9) / 60
    mb = outcome.size_bytes / 1e6
    lines = [
        f"{c['calls']:,} file-system calls in {h['duration_s']:.1f} s ({h['processes']} "
        f"processes, {h['threads']} threads), {c['fs_call_s']:.3f} s inside them; trace "
        f"{outcome.path} ({mb:.2f} MB, {mb / minutes:.2f} MB per minute), "
        + ("names anonymised" if h["anonymised"] else "names kept")
    ]
    lines.append(_unreplayable_line(h))
    left = h["left_out"]
    if left["out_of_scope_calls"]:
        where = (
            f"not under {', '.join(request.under)}"
            if request.under
            else ("the system's files, pseudo and memory filesystems")
        )
        lines.append(
            f"left out: {left['out_of_scope_calls']:,} calls on files outside the service's data "
            f"({where}; --under DIR names the data)"
        )
    if left["lost_records"]:
        lines.append(
            f"lost: {left['lost_records']:,} records the kernel could not hand to bpftrace "
            "(its buffers were full): the trace misses those calls"
        )
    if left["truncated_paths"]:
        lines.append(f"{left['truncated_paths']:,} paths longer than bpftrace's 200 bytes were cut")
    if outcome.early and request.duration_s:
        lines.append(
            f"every traced process ended after {h['duration_s']:.1f} s of the "
            f"{request.duration_s:g} s asked: the trace holds what they did until then"
        )
    if outcome.interrupted:
        lines.append(
            f"stopped by {outcome.interrupted}: the trace holds what was recorded until then"
        )
    if window.cost is not None:
        lines.append(_strace_cost(window.cost, window.stopped_calls, h["duration_s"]))
    if window.probe_cost is not None:
        lines.append(_probe_cost(window.probe_cost))
    elif window.probe_cost_missing:
        lines.append(
            f"bpftrace's cost per call beyond what its probes time was not measured "
            f"({window.probe_cost_missing}): a paced replay keeps it in the think time"
        )
    return lines


def _strace_cost(cost: Cost, calls: int, duration_s: float) -> str:
    """What strace cost, from its calibration on this machine just before it started."""
    added = cost.per_call_us * calls / 1e6
    return (
        f"strace, the fallback tracer, stopped the command at each of its {calls:,} traced "
        f"calls: about {cost.per_call_us:,.0f} µs each here (measured just before: dd's "
        f"{cost.calls:,} calls took {cost.bare_s:.2f} s bare and {cost.traced_s:.2f} s under "
        f"strace), so about {added:.2f} s of the command's {duration_s:.2f} s were strace's; "
        "the durations it records are its own timestamps around each stop, longer than the "
        "calls (bpftrace's are the kernel's)"
    )


def _probe_cost(found: ProbeCost) -> str:
    """What bpftrace cost per call beyond its probes' measured time, taken out of the pace."""
    return (
        f"bpftrace's cost per call beyond what its probes time: {found.per_call_ns / 1e3:.2f} µs "
        f"(measured just before on {cost.METHOD}: {found.bare_iteration_ns / 1e3:.2f} µs and "
        f"{found.traced_iteration_ns / 1e3:.2f} µs per iteration, "
        f"{found.probes_iteration_ns / 1e3:.2f} µs of it the probes'); a paced replay leaves it "
        "out of the service's think time"
    )


def _unreplayable_line(h: dict[str, Any]) -> str:
    u = h["unreplayable"]
    io = h["proc_io"]
    parts = [f"{u['share_pct']:.1f} % of the bytes this service moved are not in the trace"]
    kinds = [
        (f"{u.get(k, 0) / 1e6:,.1f} MB {what}")
        for k, what in (
            ("mmap_shared_writable_bytes", "mapped writable and shared (mmap)"),
            ("mmap_other_bytes", "mapped otherwise"),
            ("sendfile_bytes", "by sendfile"),
            ("copy_file_range_bytes", "by copy_file_range"),
            ("splice_bytes", "by splice"),
        )
        if u.get(k)
    ]
    if u.get("io_uring_submissions"):
        kinds.append(f"{u['io_uring_submissions']:,} io_uring submissions (their bytes unseen)")
    if kinds:
        parts.append("(" + "; ".join(kinds) + ")")
    if io.get("processes"):
        parts[-1] += ";"
        parts.append(
            f"the kernel counted {io['write_bytes'] / 1e6:,.1f} MB written to storage and "
            f"{io['read_bytes'] / 1e6:,.1f} MB read from it (read_bytes/write_bytes of "
            f"/proc/PID/io), the trace holds {h['captured']['bytes_written'] / 1e6:,.1f} MB "
            f"written and {h['captured']['bytes_read'] / 1e6:,.1f} MB read"
        )
    return " ".join(parts)
