"""Run one plan on every host of an Ansible inventory through ansible-runner's Python API.

The shipped playbook (fleet/playbook.yml) ensures the same fsarena on each host,
runs the identical plan (same seed) as an async job and fetches the session.
Progress comes from runner events, one line per host and step. A host that fails
or is unreachable is reported with Ansible's reason and the module's own stderr
while the others go on.

SIGINT, SIGTERM and SIGHUP are one request to stop (StopRequests; SIGINT is given
a handler even when it was inherited as ignored, as a background job of a script
has it): the playbook is cancelled (ansible-runner kills ansible-playbook's process
group, the one it started), then fleet/stop.yml, on the same hosts (`--limit`),
stops each host's run, but only the process fsarena recorded with its start time
(fleet/host.py), fetches the session as far as it got, removes Ansible's async files
and runs `fsarena cleanup --workdir`. The private data directory, and Ansible's
local temporary files with it, live in a temporary directory (never on the disk
under test) removed on every path, with artifacts rotated (ansible-runner #723/#724).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from fsarena.errors import FsarenaError

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[2]  # the controller's checkout (src layout): copied to hosts that need it
POLL_EVERY_S = 30.0  # a long job's "still running" line, per host
CANCEL_WAIT_S = 60.0  # at most this long for the cancelled playbook to end before stop.yml
CANCEL_CHECK_S = 0.5  # how often ansible-runner looks at the cancel request (its default: 5 s)
RUN_TASK = "run the plan"  # playbook.yml's task that starts the host's run (an async job)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
EXCLUDED = {".venv", ".git", "results", "__pycache__", ".mypy_cache", ".ruff_cache"}


@dataclass
class HostState:
    """What the controller knows of one host: its steps, first-task time, outcome."""

    name: str
    first_task_s: float | None = None
    step: str = "waiting"
    failed: str = ""  # Ansible's reason, "" while fine
    step_started: float = 0.0
    said: float = -1e9  # when the last "running" line was printed
    unreachable: bool = False
    async_job: str = ""  # the run's Ansible job id while Ansible has not cleaned it up


@dataclass
class FleetRun:
    """Inputs of one fleet run; everything else comes from the user's inventory."""

    inventory: Path
    run_args: list[str]
    fetch_dir: Path
    build: str  # the controller's build identity (fsarena.build_identity)
    limit: str | None = None
    forks: int = 5
    become: bool = False
    timeout_s: int = 6 * 3600
    hosts: dict[str, HostState] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    wall_s: float = 0.0
    stop_s: float | None = None  # after a stop signal: seconds until every host was stopped
    stop_failed: list[str] = field(default_factory=list)  # hosts whose stop or cleanup failed
    stopped_by: int = 0  # the signal that stopped the fleet run (0: it was not stopped)


class StopRequests:
    """SIGINT, SIGTERM and SIGHUP, noted for the controller to act on; later ones ignored.

    The handler only records the signal: the controller polls it between waits, so a
    signal never lands inside ansible-runner's thread start or a lock the main thread
    holds. Installed explicitly for all three, so a controller started with SIGINT
    ignored (`fsarena fleet run ... &` in a script) still stops on SIGINT.
    """

    def __init__(self) -> None:
        self.signum = 0

    def note(self, signum: int, frame: FrameType | None) -> None:
        self.signum = self.signum or signum

    @contextlib.contextmanager
    def installed(self) -> Iterator[StopRequests]:
        previous = {s: signal.signal(s, self.note) for s in STOP_SIGNALS}
        try:
            yield self
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)


def _archive(into: Path, build: str) -> Path:
    """The controller's checkout as a .tar.gz, for hosts whose fsarena build differs.

    It carries no git history, so its build identity goes in as src/fsarena/BUILD.
    """
    from fsarena import BUILD_FILE

    path = into / "fsarena-checkout.tar.gz"
    baked = into / BUILD_FILE
    baked.write_text(build + "\n")

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return None if set(Path(info.name).parts) & EXCLUDED else info

    with tarfile.open(path, "w:gz") as tar:
        for child in sorted(CHECKOUT.iterdir()):
            if child.name not in EXCLUDED:
                tar.add(child, arcname=child.name, filter=keep)
        tar.add(baked, arcname=f"src/fsarena/{BUILD_FILE}")
    return path


# ssh's own line when a session ends, in a module's output over a pty: not the module's.
SSH_CLOSED = re.compile(r"^(Shared connection|Connection) to \S+ closed\.$")


def _tail(text: str, lines: int = 3, chars: int = 400) -> str:
    """The last lines of a stream, on one line: where a traceback or a shell says the cause."""
    kept = [" ".join(line.split()) for line in str(text).splitlines()]
    kept = [line for line in kept if line and not SSH_CLOSED.match(line)][-lines:]
    return " | ".join(kept)[-chars:]


def _reason(data: dict[str, Any]) -> str:
    """Ansible's message and what the module itself printed on stderr (and stdout).

    A module that fails before it can answer ("MODULE FAILURE", e.g. an interpreter that
    is a pyenv shim) carries the real cause in module_stdout/module_stderr (over ssh
    with a pty, its stderr arrives in module_stdout); a command that exits non-zero
    carries it in stderr. `msg` alone says only "MODULE FAILURE" or "non-zero return code".
    """
    res = data.get("res") or {}
    parts = [_tail(res.get(key) or "") for key in ("msg", "module_stdout", "module_stderr")]
    parts.append(_tail(res.get("stderr") or ""))
    if not any(parts[1:]):  # host-stop's stdout is JSON: its line, not the JSON
        parts.append(_stop_said(res) or _tail(res.get("stdout") or ""))
    if res.get("rc") not in (None, 0):
        parts.append(f"exit code {res['rc']}")
    said = "; ".join(dict.fromkeys(p for p in parts if p))  # each once, in order
    return said or "no reason given"


def _handler(fleet: FleetRun, say: Callable[[str], None]) -> Callable[[dict[str, Any]], bool]:
    """Turns runner events into host states and one progress line per change."""

    def on_event(event: dict[str, Any]) -> bool:
        data = event.get("event_data") or {}
        host = data.get("host")
        kind = str(event.get("event", ""))
        if not host:
            return True
        state = fleet.hosts.setdefault(host, HostState(host))
        elapsed = time.monotonic() - fleet.started
        task = str(data.get("task", ""))
        res = data.get("res") or {}
        if kind == "runner_on_start":
            if state.first_task_s is None:
                state.first_task_s = elapsed
            state.step, state.step_started, state.said = task, elapsed, elapsed
            say(f"[{elapsed:7.1f}s] {host}: {task}: started")
        elif kind == "runner_on_ok":
            said = _stop_said(res)
            say(f"[{elapsed:7.1f}s] {host}: {task}: done" + (f": {said}" if said else ""))
        elif kind == "runner_on_skipped":
            say(f"[{elapsed:7.1f}s] {host}: {task}: skipped (not needed)")
        elif kind == "runner_on_async_poll":
            state.async_job = str(res.get("ansible_job_id") or state.async_job)
            if elapsed - state.said >= POLL_EVERY_S:
                state.said = elapsed
                took = elapsed - state.step_started
                say(f"[{elapsed:7.1f}s] {host}: {state.step}: running for {took:.0f} s")
        elif kind == "runner_on_unreachable":
            state.unreachable, state.failed = True, _reason(data)
            say(f"[{elapsed:7.1f}s] {host}: UNREACHABLE: {state.failed}")
        elif kind in ("runner_on_failed", "runner_on_async_failed") and not data.get(
            "ignore_errors"
        ):
            reason = _reason(data)
            if reason != state.failed:  # an async task's failure comes as both events
                state.failed = reason
                say(f"[{elapsed:7.1f}s] {host}: FAILED at {task}: {reason}")
        if kind in ("runner_on_ok", "runner_on_failed") and task == RUN_TASK:
            state.async_job = ""  # the job ended and Ansible removed its file
        return True

    return on_event


def _stop_said(res: dict[str, Any]) -> str:
    """The line `fsarena fleet host-stop` printed (JSON on stdout), if this was that task."""
    try:
        said = json.loads(str(res.get("stdout") or "")).get("said", "")
    except (ValueError, AttributeError):
        return ""
    return str(said)


def _extravars(fleet: FleetRun, archive: Path, stamp: str) -> dict[str, Any]:
    return {
        "fsarena_version": f"fsarena, version {fleet.build}",
        "fsarena_archive": str(archive),
        "fsarena_args": shlex.join(fleet.run_args),
        "fsarena_fetch": str(fleet.fetch_dir.resolve()),
        "fsarena_timeout": fleet.timeout_s,
        "fsarena_stamp": stamp,
    }


def _tied_playbook(private: Path) -> Path:
    """A directory whose `ansible-playbook` dies with the controller (fleet.launcher)."""
    real = Path(sys.executable).parent / "ansible-playbook"
    bin_dir = private / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "ansible-playbook"
    shim.write_text(
        f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m fsarena.fleet.launcher "
        f'{shlex.quote(str(real))} "$@"\n'
    )
    shim.chmod(0o755)
    return bin_dir


def _start(fleet: FleetRun, playbook: str, private: Path, extravars: dict[str, Any],
           handler: Any, cancel: Callable[[], bool]) -> threading.Event:  # fmt: skip
    """Start the playbook in runner's thread; the event is set once the run has ended.

    Waited on as an event, never by joining the thread: in Python 3.11 a join cut short
    by Ctrl-C marks the thread as ended while it still runs (the bpo-45274 handling).
    Ansible's local temporary files go into the private directory, removed with it.
    """
    import ansible_runner

    ended = threading.Event()
    private.mkdir(exist_ok=True)
    ansible_runner.run_async(
        private_data_dir=str(private),
        playbook=str(HERE / playbook),
        inventory=str(fleet.inventory.resolve()),
        limit=fleet.limit,
        forks=fleet.forks,
        extravars=extravars,
        cmdline="--become" if fleet.become else None,
        event_handler=handler,
        cancel_callback=cancel,
        finished_callback=lambda _runner: ended.set(),
        quiet=True,
        rotate_artifacts=1,
        envvars={"ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCAL_TEMP": str(private / "ansible-tmp")},
        settings={"pexpect_timeout": CANCEL_CHECK_S},
    )
    return ended


def execute(fleet: FleetRun, say: Callable[[str], None], stop: StopRequests) -> None:
    """Run the playbook; on a stop request cancel it and stop every host's run.

    fleet.stopped_by then names the signal; the caller exits as an interrupted run does.
    """
    if not fleet.inventory.is_file():
        raise FsarenaError(f"no inventory at {fleet.inventory}; give an Ansible inventory file")
    fleet.fetch_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    cancelled = threading.Event()
    with tempfile.TemporaryDirectory(prefix="fsarena-fleet-") as tmp:
        private = Path(tmp)
        # ansible-runner starts ansible-playbook by name: the one beside this Python,
        # through a launcher that ends it when this process dies.
        bin_dir = _tied_playbook(private)
        os.environ["PATH"] = f"{bin_dir}:{os.environ.get('PATH', '')}"
        extravars = _extravars(fleet, _archive(private, fleet.build), stamp)
        try:
            if stop.signum:  # nothing was started on any host yet
                fleet.stopped_by = stop.signum
                return
            ended = _start(fleet, "playbook.yml", private / "run", extravars,
                           _handler(fleet, say), cancelled.is_set)  # fmt: skip
            while not ended.wait(0.2) and not stop.signum:
                pass
            if ended.is_set():  # it ended on its own, before any stop request was seen
                return
            interrupted = time.monotonic()
            fleet.stopped_by = stop.signum
            cancelled.set()
            if not ended.wait(CANCEL_WAIT_S):  # runner kills ansible-playbook's process group
                say(f"the cancelled playbook has not ended after {CANCEL_WAIT_S:.0f} s")
            _stop_everywhere(fleet, private / "stop", extravars, say, interrupted)
        finally:
            fleet.wall_s = time.monotonic() - fleet.started


def _stop_everywhere(fleet: FleetRun, private: Path, extravars: dict[str, Any],
                     say: Callable[[str], None], interrupted: float) -> None:  # fmt: skip
    """stop.yml on the run's hosts (same --limit): each run stopped, fetched, cleaned; timed."""
    signame = signal.Signals(fleet.stopped_by).name
    say(f"{signame}: stopping the run on every host and cleaning up (further signals are "
        "ignored until that is done)")  # fmt: skip
    stopping = FleetRun(fleet.inventory, fleet.run_args, fleet.fetch_dir, fleet.build,
                        fleet.limit, fleet.forks, fleet.become)  # fmt: skip
    stopping.started = fleet.started  # one clock for every progress line
    jobs = {name: h.async_job for name, h in fleet.hosts.items() if h.async_job}
    _start(stopping, "stop.yml", private, {**extravars, "fsarena_jobs": jobs},
           _handler(stopping, say), lambda: False).wait()  # fmt: skip
    fleet.stop_s = time.monotonic() - interrupted
    fleet.stop_failed = sorted(name for name, h in stopping.hosts.items() if h.failed)
    if fleet.stop_failed:
        say(f"stop or cleanup FAILED on {', '.join(fleet.stop_failed)} (see above); "
            f"{fleet.stop_s:.1f} s after the interrupt")  # fmt: skip
    else:
        say(f"every host stopped and cleaned up {fleet.stop_s:.1f} s after the interrupt")
