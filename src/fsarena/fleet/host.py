"""What runs on each fleet host around `fsarena run`: the proof of which process it is, the stop.

A pid alone proves nothing: after the process ends, the kernel hands the number to
the next process that starts (a pid file left behind by a fleet run once made its
stop kill an unrelated process). So the host's wrapper records, with its pid, the
process's start time (field 22 of /proc/PID/stat, clock ticks since boot) and the
boot id: two processes never share all three. The stop opens a pidfd on the pid
first and only then compares the start time, so the process it signals through the
pidfd is the one it checked (a pid recycled after the check cannot be reached).
The pid file is removed at the end of every path the wrapper takes; one that stays
behind (the wrapper killed -9) fails the proof and is removed, never signalled.

The stop also leaves a marker (RESULTS/fleet-STAMP.stop) while it works: a wrapper
of that fleet run that starts after the stop looked (its async job still on its way
when the controller was interrupted) sees it and does not start the run.

Stdlib only: this is imported on the hosts, inside Ansible's async job.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType

from fsarena.errors import FsarenaError

PID_FILE = "fleet.pid"
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
WATCHER_WAIT_S = 15.0  # Ansible's async watcher checks its job every 5 s, then removes its files


@dataclass(frozen=True)
class ProcessProof:
    """One process, told apart from any other that ever had its pid on this host."""

    pid: int
    start_ticks: int  # field 22 of /proc/PID/stat
    boot_id: str

    @classmethod
    def of(cls, pid: int) -> ProcessProof | None:
        """The proof of the process that has this pid now; None if there is none."""
        ticks = start_ticks(pid)
        return None if ticks is None else cls(pid, ticks, BOOT_ID.read_text().strip())

    def holds(self) -> bool:
        """Whether the process with this pid now is the one recorded."""
        return ProcessProof.of(self.pid) == self


def start_ticks(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (the command name, field 2, may hold spaces and parens)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(stat.rsplit(b")", 1)[1].split()[19])


@dataclass(frozen=True)
class RunRecord:
    """What the wrapper writes to RESULTS/fleet.pid: itself, its fleet run, Ansible's job."""

    stamp: str  # the fleet run (the controller's start time, in every file name of it)
    wrapper: ProcessProof
    async_job: str = ""  # Ansible's async job id, for its cleanup after a stop ("" unknown)
    watcher: ProcessProof | None = None  # Ansible's async watcher, which outlives the job

    def write(self, path: Path) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(asdict(self)) + "\n")
        tmp.replace(path)

    @classmethod
    def read(cls, path: Path) -> RunRecord | str | None:
        """The record; None if there is no file; a reason string if it proves nothing."""
        try:
            data = json.loads(path.read_bytes())
            watcher = data.get("watcher")
            return cls(
                str(data["stamp"]),
                ProcessProof(**data["wrapper"]),
                str(data.get("async_job", "")),
                ProcessProof(**watcher) if watcher else None,
            )
        except FileNotFoundError:
            return None
        except (ValueError, TypeError, KeyError, AttributeError, OSError):
            text = path.read_bytes()[:40] if path.exists() else b""
            return f"it holds no start time ({text!r}: an older fsarena's or damaged)"


def stop_marker(results: Path, stamp: str) -> Path:
    return results / f"fleet-{stamp}.stop"


# ---------------------------------------------------------------- around the run


def _ancestors(pid: int) -> list[int]:
    found: list[int] = []
    while pid > 1 and len(found) < 32:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            break
        pid = int(stat.rsplit(b")", 1)[1].split()[1])
        found.append(pid)
    return found


def _async_job() -> tuple[str, ProcessProof | None]:
    """Ansible's async job id and its watcher process, when this runs inside an async task.

    async_wrapper (ansible-core) runs as `python async_wrapper.py JID_PREFIX ...`, names
    its result file JID_PREFIX.PID in $ANSIBLE_ASYNC_DIR, and forks a watcher that
    waits for the job and then removes the module's temporary directory.
    """
    jobs = Path(os.path.expanduser(os.environ.get("ANSIBLE_ASYNC_DIR", "~/.ansible_async")))
    chain = _ancestors(os.getpid())
    for i, pid in enumerate(chain):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 2 and argv[1].endswith(b"async_wrapper.py"):
            prefix = argv[2].decode(errors="replace")
            found = sorted(p.name for p in jobs.glob(f"{prefix}.*") if p.suffix != ".tmp")
            watcher = ProcessProof.of(chain[i + 1]) if i + 1 < len(chain) else None
            return (found[0] if found else ""), watcher
    return "", None


FSARENA = (sys.executable, "-m", "fsarena")


def run_recorded(
    results: Path, stamp: str, argv: list[str], program: tuple[str, ...] = FSARENA
) -> int:
    """`fsarena ARGV` as a child, recorded in RESULTS/fleet.pid with its proof; its exit code.

    SIGINT, SIGTERM and SIGHUP are passed on to the run (through a pidfd, so never to a
    process that took its pid after it ended); the pid file goes at the end of every path.
    """
    results.mkdir(parents=True, exist_ok=True)
    pid_file = results / PID_FILE
    earlier = RunRecord.read(pid_file)
    if isinstance(earlier, RunRecord) and earlier.wrapper.holds():
        raise FsarenaError(
            f"fleet run {earlier.stamp} (pid {earlier.wrapper.pid}) is still running in "
            f"{results}: wait for it or give this host another fsarena_workdir"
        )
    try:  # the signals passed on go through a pidfd: refuse before anything starts
        os.close(os.pidfd_open(os.getpid()))
    except OSError as exc:
        raise FsarenaError(f"this host cannot run a fleet run: pidfd_open: {exc.strerror} "
                           "(it needs Linux 5.3 or later)") from None  # fmt: skip
    me = ProcessProof.of(os.getpid())
    assert me is not None  # this process exists
    record = RunRecord(stamp, me, *_async_job())
    caught: list[int] = []
    child_fd: list[int] = []

    def forward(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)
        if child_fd:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(child_fd[0], signum)

    previous = {s: signal.signal(s, forward) for s in STOP_SIGNALS}
    record.write(pid_file)
    try:
        if stop_marker(results, stamp).exists() or caught:
            print("fsarena: stopped before the run started", file=sys.stderr)
            return 128 + (caught[0] if caught else signal.SIGINT)
        child = subprocess.Popen([*program, *argv])
        child_fd.append(os.pidfd_open(child.pid))  # unreaped child: the pid is still its own
        for signum in caught:  # arrived between Popen and the pidfd
            signal.pidfd_send_signal(child_fd[0], signum)
        code = child.wait()
        return 128 - code if code < 0 else code
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if child_fd:
            os.close(child_fd[0])
        if RunRecord.read(pid_file) == record:
            pid_file.unlink()


# ---------------------------------------------------------------- the stop


@dataclass
class StopOutcome:
    """What the stop did on one host, in one line, and what Ansible must still clean."""

    said: str
    async_job: str = ""
    stopped: bool = True  # False: a run is still going (the stop failed)

    def to_json(self) -> str:
        return json.dumps(asdict(self))


def _wait_exit(pidfd: int, timeout_s: float) -> bool:
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)  # readable once the process has ended
    return bool(poller.poll(int(timeout_s * 1000)))


def signal_proven(proof: ProcessProof, signum: int, wait_s: float) -> bool | None:
    """Signal the process only if it is the one proven; None if it is not (or gone).

    True when it ended within wait_s, False when it still runs.
    """
    try:
        pidfd = os.pidfd_open(proof.pid)
    except ProcessLookupError:
        return None
    except OSError as exc:  # ENOSYS: Linux before 5.3; without a pidfd the check can race
        raise FsarenaError(
            f"cannot signal pid {proof.pid} safely here ({exc.strerror}: pidfd_open needs "
            f"Linux 5.3): check it is fsarena's run, then `kill -INT {proof.pid}` by hand"
        ) from None
    try:
        if not proof.holds():  # checked after the pidfd was opened: see the module's docstring
            return None
        try:
            signal.pidfd_send_signal(pidfd, signum)
        except ProcessLookupError:
            return None
        return _wait_exit(pidfd, wait_s)
    finally:
        os.close(pidfd)


def _wait_proven(proof: ProcessProof | None, timeout_s: float) -> None:
    """Wait (never signal) for a recorded process to end, if it is still the one recorded."""
    if proof is None:
        return
    with contextlib.suppress(ProcessLookupError):
        pidfd = os.pidfd_open(proof.pid)
        try:
            if proof.holds():
                _wait_exit(pidfd, timeout_s)
        finally:
            os.close(pidfd)


def stop_recorded(results: Path, stamp: str, wait_s: float) -> StopOutcome:
    """Stop this fleet run's run on this host, if there is one and it is provably ours."""
    made = not results.exists()
    results.mkdir(parents=True, exist_ok=True)
    marker = stop_marker(results, stamp)
    marker.touch()
    pid_file = results / PID_FILE
    try:
        record = RunRecord.read(pid_file)
        if record is None:
            return StopOutcome("no run of this fleet run here (no pid file)")
        if isinstance(record, str):
            pid_file.unlink(missing_ok=True)
            return StopOutcome(f"pid file removed, nothing signalled: {record}")
        if record.stamp != stamp:
            if record.wrapper.holds():
                return StopOutcome(
                    f"left alone: pid {record.wrapper.pid} is fleet run "
                    f"{record.stamp}'s, not this one ({stamp})"
                )
            pid_file.unlink(missing_ok=True)
            return StopOutcome(
                f"stale pid file of fleet run {record.stamp} removed; pid "
                f"{record.wrapper.pid} not signalled (not that process)"
            )
        ended = signal_proven(record.wrapper, signal.SIGINT, wait_s)
        if ended is None:
            pid_file.unlink(missing_ok=True)
            return StopOutcome(
                f"the run had already ended; pid {record.wrapper.pid} not "
                "signalled (not that process any more)",
                record.async_job,
            )
        if not ended:
            return StopOutcome(
                f"the run (pid {record.wrapper.pid}) still runs {wait_s:.0f} s "
                "after SIGINT: left to finish its teardown",
                stopped=False,
            )
        _wait_proven(record.watcher, WATCHER_WAIT_S)
        return StopOutcome(f"run stopped (pid {record.wrapper.pid}, SIGINT)", record.async_job)
    finally:
        marker.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):
                results.rmdir()
