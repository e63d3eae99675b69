"""Servers and tracers fsarena starts: how to stop one from what the ledger recorded alone.

A PostgreSQL server started for a task is a ledger resource of kind
"postgres" whose identifier is its data directory. The undo below needs
nothing else, so `fsarena cleanup` in a fresh process stops a server that a
killed run left behind: it reads postmaster.pid (line 1 the postmaster's
PID, line 7 its System V shared memory key and id), asks for an immediate
shutdown (SIGQUIT: the postmaster stops its backends and removes its shared
memory), kills it if it does not go, and removes the shared memory segment
a killed postmaster leaves.

A tracer a capture starts (bpftrace, strace: fsarena.capture) is a ledger resource
of kind "tracer" whose identifier is a pid file in the work directory, recorded
before the tracer starts and written once it runs: its pid, its start time (field
22 of /proc/PID/stat, so a pid reused by another program is never signalled) and
its command name. Standard library only, like the ledger.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path


def _is_postmaster(pid: int) -> bool:
    """The PID is alive and still a postgres process (not a reused PID)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"postgres" in cmdline.split(b"\0", 1)[0]


def _wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while _is_postmaster(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _orphan_segment(key: str, shmid: str) -> bool:
    """The segment still has the server's key and id, and no process attached to it.

    Checked in /proc/sysvipc/shm (key shmid perms size cpid lpid nattch ...),
    so that an id since reused by another program is never removed.
    """
    with contextlib.suppress(OSError):
        for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]:
            f = line.split()
            if len(f) > 6 and f[0] == key and f[1] == shmid:
                return f[6] == "0"
    return False


def stop_postgres(data_dir: str, timeout_s: float = 15.0) -> str:
    """Stop the server of a data directory, whatever state it is in; what was done ("" nothing)."""
    try:
        lines = Path(data_dir, "postmaster.pid").read_text().splitlines()
        pid = int(lines[0])
    except (OSError, ValueError, IndexError):
        return ""
    done = ""
    if _is_postmaster(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGQUIT)  # immediate shutdown
        if not _wait_gone(pid, timeout_s):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _wait_gone(pid, timeout_s)
        done = f"stopped PostgreSQL server {pid} of {data_dir}"
    shm = lines[6].split() if len(lines) > 6 else []
    if len(shm) == 2 and _orphan_segment(shm[0], shm[1]):
        subprocess.run(["ipcrm", "-m", shm[1]], capture_output=True, check=False)
        done = done or f"removed shared memory {shm[1]} of a dead server in {data_dir}"
    with contextlib.suppress(OSError):
        Path(data_dir, "postmaster.pid").unlink()
    return done


def tracer_identity(pid: int) -> str:
    """What a tracer's pid file holds: "PID STARTTIME COMM" ("" if the process is gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    comm = text[text.index("(") + 1 : text.rindex(")")]
    start = text.rpartition(")")[2].split()[19]  # field 22, counted from field 3
    return f"{pid} {start} {comm}"


def _tracer_alive(identity: str) -> bool:
    pid = identity.split(" ", 1)[0]
    return pid.isdigit() and tracer_identity(int(pid)) == identity


def stop_tracer(pid_file: str, timeout_s: float = 10.0) -> str:
    """Stop the tracer a pid file names, if it is still that process; remove the file."""
    path = Path(pid_file)
    try:
        identity = path.read_text().strip()
    except OSError:
        return ""
    done = ""
    if identity and _tracer_alive(identity):
        pid = int(identity.split(" ", 1)[0])
        # SIGINT: bpftrace detaches its probes and exits (as on Ctrl-C); strace detaches too.
        for sig, wait_s in ((signal.SIGINT, timeout_s), (signal.SIGKILL, timeout_s)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
            deadline = time.monotonic() + wait_s
            while _tracer_alive(identity) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not _tracer_alive(identity):
                break
        done = f"stopped tracer {identity.split(' ')[2]} (process {pid})"
    path.unlink(missing_ok=True)
    return done
