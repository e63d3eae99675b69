"""The tracer process (bpftrace): started under the ledger, its output spooled, always stopped.

The tracer is a resource like a mount (host/ledger.py): its pid file is
recorded in the work directory's ledger before it starts, so `fsarena cleanup`
stops it after a kill -9 of fsarena (host/servers.py: stop_tracer checks the
pid's start time before it signals anything); a stop signal, an error or the
end of the capture stop it here (SIGINT: bpftrace detaches its probes). It runs
in a session of its own, so a Ctrl-C at the terminal reaches fsarena, which
stops it after reading what it printed, rather than the tracer alone.

Its output goes through a pipe to `gzip -1`, which writes the spool file in the
work directory: a busy service's records are about 100 bytes each before
compression, too many for memory or a disk over minutes. The
program needs tracefs for the syscall tracepoints' formats: it is mounted at
/sys/kernel/tracing when no tracefs is mounted, and unmounted afterwards only then.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from fsarena.capture import strace
from fsarena.capture.bpf import STRLEN, Filter, RawCall, Reader, program
from fsarena.errors import FsarenaError
from fsarena.host.ledger import Ledger
from fsarena.host.servers import stop_tracer, tracer_identity
from fsarena.interrupt import Held, deferred

TRACEFS = "/sys/kernel/tracing"
LEDGER_KIND = "tracer"
# Per-CPU ring buffer for the records (pages of 4 KiB): 16 MiB each, so a burst of
# calls is held while bpftrace prints; what still overflows is counted (lost events).
RB_PAGES = 4096


def tracefs_mounted() -> bool:
    for where in (TRACEFS, "/sys/kernel/debug/tracing"):
        if Path(where, "events", "syscalls").is_dir():
            return True
    return False


@contextlib.contextmanager
def tracefs() -> Iterator[None]:
    """tracefs mounted for the duration (at /sys/kernel/tracing, only if none was)."""
    if tracefs_mounted():
        yield
        return
    done = subprocess.run(["mount", "-t", "tracefs", "tracefs", TRACEFS], capture_output=True,
                          text=True, check=False)  # fmt: skip
    if done.returncode != 0 or not tracefs_mounted():
        raise FsarenaError(
            f"the syscall tracepoints need tracefs, and mounting it at {TRACEFS} failed "
            f"({done.stderr.strip() or 'no syscalls events'}): the kernel needs "
            "CONFIG_FTRACE_SYSCALLS; mount it yourself: mount -t tracefs tracefs " + TRACEFS
        )
    try:
        yield
    finally:
        subprocess.run(["umount", TRACEFS], capture_output=True, check=False)


def tool_version(argv: list[str], fix: str = "") -> str:
    """A tracer's version line; FsarenaError naming its package when it is missing."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise FsarenaError(
            f"{argv[0]} not found: apt-get install {argv[0]} (./scripts/setup.sh installs it)" + fix
        ) from None
    lines = out.stdout.strip().splitlines()
    return lines[0].strip() if lines else argv[0]


def _started(
    pid_file: Path, process: subprocess.Popen[bytes], held: Held, stop: Callable[[], None]
) -> None:
    """A tracer just started: its identity in its pid file (what `fsarena cleanup` checks
    before it signals it), then a stop signal that came meanwhile raised, the tracer
    stopped first."""
    try:
        pid_file.write_text(tracer_identity(process.pid) + "\n")
        held.check()
    except BaseException:
        stop()
        raise


def held(argv: list[str], quiet: bool = False) -> tuple[subprocess.Popen[bytes], int]:
    """A process started but held before its exec until the tracer is attached (so none of
    its calls is missed): it, and the pipe's end whose line releases it (closed unwritten,
    it execs all the same). In a session of its own; quiet: its output thrown away. Start
    it under interrupt.deferred(), so that a stop signal finds it recorded."""
    read, gate = os.pipe()
    out = subprocess.DEVNULL if quiet else None
    argv = ["sh", "-c", f'read _ <&{read}; exec "$@"', "sh", *argv]
    try:
        child = subprocess.Popen(argv, pass_fds=(read,), start_new_session=True, stdout=out,
                                 stderr=out)  # fmt: skip
    except BaseException:
        os.close(gate)
        raise
    finally:
        os.close(read)
    return child, gate


def release(gate: int) -> None:
    """Let a held process exec (see held)."""
    os.write(gate, b"go\n")
    os.close(gate)


def bpftrace_version() -> str:
    return tool_version(["bpftrace", "--version"], ", or capture a command with --tracer strace")


class Tracer:
    """One bpftrace process running a program, its output compressed to `spool` by gzip.

    bpftrace's output is fully buffered (-B full: a write per buffer, not per record)
    and goes straight to a `gzip -1` process: no Python in the path of a record, so the
    tracer's cost per call is bpftrace's formatting and the kernel's.
    """

    def __init__(self, ledger: Ledger, folder: Path, target: Filter) -> None:
        self.ledger = ledger
        self.folder = folder
        self.program_path = folder / "capture.bt"
        self.ready_file = folder / "ready"
        self.spool = folder / "raw.gz"
        self.errors = folder / "tracer.err"
        self.pid_file = folder / "tracer.pid"
        self.drained_file = folder / "drained"
        # bpftrace runs in the folder, and a string literal of its is at most 64 bytes.
        drain = (os.getpid(), self.drained_file.name)
        self.program_path.write_text(program(target, self.ready_file.name, drain))
        self.process: subprocess.Popen[bytes] | None = None
        self.gzip: subprocess.Popen[bytes] | None = None
        self.lost = 0  # "Lost N events" among the records (records() counts them)

    def start(self) -> None:
        self.ledger.track(LEDGER_KIND, str(self.pid_file))  # the intent, before it exists
        env = {
            **os.environ,
            "BPFTRACE_STRLEN": str(STRLEN),
            "BPFTRACE_PERF_RB_PAGES": str(RB_PAGES),
            "BPFTRACE_MAP_KEYS_MAX": "65536",
        }
        argv = ["bpftrace", "--unsafe", "-B", "full", str(self.program_path)]
        with open(self.spool, "wb") as out, open(self.errors, "wb") as err, deferred() as held:
            self.gzip = subprocess.Popen(["gzip", "-1", "-c"], stdin=subprocess.PIPE, stdout=out,
                                         stderr=err, start_new_session=True)  # fmt: skip
            assert self.gzip.stdin is not None
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=self.gzip.stdin, stderr=err, env=env,
                start_new_session=True, cwd=self.folder,
            )  # fmt: skip
            self.gzip.stdin.close()  # bpftrace holds the pipe now: its end is gzip's end
        _started(self.pid_file, self.process, held, self.stop)

    def wait_ready(self, timeout_s: float = 300.0) -> float:
        """Seconds until the probes were attached; FsarenaError with bpftrace's words if not."""
        started = time.monotonic()
        while not self.ready_file.exists():
            assert self.process is not None
            if self.process.poll() is not None:
                raise FsarenaError(f"bpftrace did not start: {self.stderr_tail()}")
            if time.monotonic() - started > timeout_s:
                raise FsarenaError(
                    f"bpftrace attached no probe within {timeout_s:.0f} s: {self.stderr_tail()}"
                )
            time.sleep(0.05)
        return time.monotonic() - started

    def stderr_tail(self, lines: int = 3) -> str:
        try:
            text = self.errors.read_text(errors="replace")
        except OSError:
            return "(no message)"
        kept = [ln for ln in text.splitlines() if ln.strip() and "RLIMIT_MEMLOCK" not in ln]
        return " | ".join(kept[-lines:]) or "(no message)"

    def lost_events(self) -> int:
        """Records the kernel could not hand to bpftrace (its ring buffers were full): it
        says "Lost N events" among its output (read by records()) or on stderr."""
        lost = self.lost
        with contextlib.suppress(OSError):
            lost += lost_in(self.errors.read_text(errors="replace").splitlines())
        return lost

    def drain(self, timeout_s: float = 10.0) -> None:
        """Until bpftrace has read what the traced calls left in its ring buffers (or for
        timeout_s): a getppid(2) of fsarena's own, after them, and its mark (see program)."""
        if self.process is None or self.process.poll() is not None:
            return
        os.getppid()
        deadline = time.monotonic() + timeout_s
        while not self.drained_file.exists() and time.monotonic() < deadline:
            if self.process.poll() is not None:
                return
            time.sleep(0.02)
        time.sleep(0.2)  # other CPUs' buffers, read in the same pass or the next

    def stop(self) -> None:
        """Stop it (SIGINT, then SIGKILL), let gzip finish, forget it in the ledger."""
        for proc in (self.process, self.gzip):  # bpftrace first: gzip ends at its last byte
            if proc is None:
                continue
            if proc is self.process and proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        stop_tracer(str(self.pid_file))  # nothing left to do unless the wait above failed
        self.ledger.untrack(LEDGER_KIND, str(self.pid_file))

    def lines(self) -> Iterator[str]:
        """What it printed, line by line (after stop)."""
        with gzip.open(self.spool, "rt", encoding="utf-8", errors="surrogateescape") as f:
            yield from f

    def records(self) -> list[RawCall]:
        """Its records, paths joined, in start order (after stop)."""
        reader = Reader()
        raw = [r for line in self.lines() if (r := reader.feed(line)) is not None]
        raw.sort(key=lambda r: r.start_ns)
        self.lost = lost_in(reader.other)
        return raw


def lost_in(lines: list[str]) -> int:
    """The records bpftrace says it lost: its "Lost N events" lines."""
    lost = 0
    for line in lines:
        words = line.split()
        if len(words) >= 3 and words[0] == "Lost" and words[1].isdigit():
            lost += int(words[1])
    return lost


class StraceTracer:
    """The fallback: `strace -f` running the command itself (capture/strace.py).

    The strace process is the tracer resource (its pid file in the ledger); the command
    is its child, in its session, stopped with it.
    """

    name = "strace"

    def __init__(self, ledger: Ledger, folder: Path, command: tuple[str, ...]) -> None:
        self.ledger = ledger
        self.output = folder / "strace.out"
        self.pid_file = folder / "tracer.pid"
        self.command = command
        self.process: subprocess.Popen[bytes] | None = None
        self.parser = strace.Parser()

    def start(self) -> subprocess.Popen[bytes]:
        self.ledger.track(LEDGER_KIND, str(self.pid_file))
        with deferred() as held:
            self.process = subprocess.Popen(strace.argv(self.output, self.command),
                                            start_new_session=True)  # fmt: skip
        _started(self.pid_file, self.process, held, self.stop)
        return self.process

    def stop(self) -> None:
        """strace and the command: their session ended (SIGTERM, then SIGKILL)."""
        if self.process is not None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, sig)
                try:
                    self.process.wait(timeout=15)
                    break
                except subprocess.TimeoutExpired:
                    continue
        stop_tracer(str(self.pid_file))
        self.ledger.untrack(LEDGER_KIND, str(self.pid_file))

    def lost_events(self) -> int:
        return 0  # strace stops the command at each call: it loses none

    def records(self) -> list[RawCall]:
        with open(self.output, encoding="utf-8", errors="surrogateescape") as f:
            raw = [r for line in f for r in self.parser.feed(line)]
        raw.sort(key=lambda r: r.start_ns)
        return raw


def strace_version() -> str:
    return tool_version(["strace", "-V"])
