"""Run one plan on every host of an Ansible inventory through ansible-runner's Python API.

The shipped playbook (fleet/playbook.yml) ensures the same fsarena on each host,
runs the identical plan (same seed) as an async job and fetches the session.
Progress comes from runner events, one line per host and step. A host that fails
or is unreachable is reported with Ansible's reason while the others go on.
On Ctrl-C the playbook is cancelled and fleet/stop.yml signals each host's run
and runs `fsarena cleanup --workdir` there. The private data directory lives in
a temporary directory (never on the disk under test), with artifacts rotated
(ansible-runner #723/#724).
"""

from __future__ import annotations

import os
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError

HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parents[2]  # the controller's checkout (src layout): copied to hosts that need it
POLL_EVERY_S = 30.0  # a long job's "still running" line, per host
CANCEL_WAIT_S = 60.0  # at most this long for the cancelled playbook to end before stop.yml
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
    stop_s: float | None = None  # after Ctrl-C: seconds until every host was stopped and clean
    stop_failed: list[str] = field(default_factory=list)  # hosts whose stop or cleanup failed


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


def _reason(data: dict[str, Any]) -> str:
    res = data.get("res") or {}
    text = res.get("msg") or res.get("stderr") or res.get("stdout") or "no reason given"
    return " ".join(str(text).split())[:300]


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
        if kind == "runner_on_start":
            if state.first_task_s is None:
                state.first_task_s = elapsed
            state.step, state.step_started, state.said = task, elapsed, elapsed
            say(f"[{elapsed:7.1f}s] {host}: {task}: started")
        elif kind == "runner_on_ok":
            say(f"[{elapsed:7.1f}s] {host}: {task}: done")
        elif kind == "runner_on_skipped":
            say(f"[{elapsed:7.1f}s] {host}: {task}: skipped (not needed)")
        elif kind == "runner_on_async_poll" and elapsed - state.said >= POLL_EVERY_S:
            state.said = elapsed
            took = elapsed - state.step_started
            say(f"[{elapsed:7.1f}s] {host}: {state.step}: running for {took:.0f} s")
        elif kind == "runner_on_unreachable":
            state.unreachable, state.failed = True, _reason(data)
            say(f"[{elapsed:7.1f}s] {host}: UNREACHABLE: {state.failed}")
        elif kind in ("runner_on_failed", "runner_on_async_failed") and not data.get(
            "ignore_errors"
        ):
            state.failed = _reason(data)
            say(f"[{elapsed:7.1f}s] {host}: FAILED at {data.get('task')}: {state.failed}")
        return True

    return on_event


def _extravars(fleet: FleetRun, archive: Path, stamp: str) -> dict[str, Any]:
    import shlex

    return {
        "fsarena_version": f"fsarena, version {fleet.build}",
        "fsarena_archive": str(archive),
        "fsarena_args": shlex.join(fleet.run_args),
        "fsarena_fetch": str(fleet.fetch_dir.resolve()),
        "fsarena_timeout": fleet.timeout_s,
        "fsarena_stamp": stamp,
    }


def _start(fleet: FleetRun, playbook: str, private: Path, extravars: dict[str, Any],
           handler: Any, cancel: Callable[[], bool]) -> threading.Event:  # fmt: skip
    """Start the playbook in runner's thread; the event is set once the run has ended.

    Waited on as an event, never by joining the thread: in Python 3.11 a join cut short
    by Ctrl-C marks the thread as ended while it still runs (the bpo-45274 handling).
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
        envvars={"ANSIBLE_NOCOLOR": "1"},
    )
    return ended


def execute(fleet: FleetRun, say: Callable[[str], None]) -> None:
    """Run the playbook; on KeyboardInterrupt cancel it, stop every host's run, re-raise."""
    if not fleet.inventory.is_file():
        raise FsarenaError(f"no inventory at {fleet.inventory}; give an Ansible inventory file")
    # ansible-runner starts ansible-playbook by name: the one beside this Python.
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    fleet.fetch_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    cancelled = threading.Event()
    with tempfile.TemporaryDirectory(prefix="fsarena-fleet-") as tmp:
        private = Path(tmp)
        extravars = _extravars(fleet, _archive(private, fleet.build), stamp)
        ended = _start(fleet, "playbook.yml", private / "run", extravars,
                       _handler(fleet, say), cancelled.is_set)  # fmt: skip
        try:
            while not ended.wait(0.2):
                pass
        except KeyboardInterrupt:
            interrupted = time.monotonic()
            cancelled.set()
            ended.wait(CANCEL_WAIT_S)  # runner kills ansible-playbook at its next check
            _stop_everywhere(fleet, private / "stop", extravars, say, interrupted)
            raise
        finally:
            fleet.wall_s = time.monotonic() - fleet.started


def _stop_everywhere(fleet: FleetRun, private: Path, extravars: dict[str, Any],
                     say: Callable[[str], None], interrupted: float) -> None:  # fmt: skip
    """stop.yml on every host: its run interrupted, then `fsarena cleanup`; timed."""
    say("interrupted: stopping the run on every host and cleaning up")
    stopping = FleetRun(fleet.inventory, fleet.run_args, fleet.fetch_dir, fleet.build)
    stopping.started = fleet.started  # one clock for every progress line
    _start(stopping, "stop.yml", private, extravars, _handler(stopping, say),
           lambda: False).wait()  # fmt: skip
    fleet.stop_s = time.monotonic() - interrupted
    fleet.stop_failed = sorted(name for name, h in stopping.hosts.items() if h.failed)
    if fleet.stop_failed:
        say(f"stop or cleanup FAILED on {', '.join(fleet.stop_failed)} (see above); "
            f"{fleet.stop_s:.1f} s after the interrupt")  # fmt: skip
    else:
        say(f"every host stopped and cleaned up {fleet.stop_s:.1f} s after the interrupt")
