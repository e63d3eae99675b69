"""Stopping `fsarena fleet run` for real: signals, pid proof, --limit, a module's own stderr.

Loopback sshd hosts (test_fleet_hosts.py) and the small plan of test_fleet_run.py.
A stale pid file is tested with a real process the test starts itself (`sleep`):
it stands for whatever unrelated process got the pid, and must survive. Where a
test only needs the stop, it interrupts the fleet at its first task, before any
host's run starts, to stay quick.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import leftovers
from tests.integration.test_fleet_hosts import SSHD, loopback_hosts

pytestmark = pytest.mark.skipif(not SSHD.exists(), reason="openssh-server is not installed")

ARGS = ["--fs", "ext4,xfs", "--scale", "0.01", "-n", "2", "--seed", "7", "--allow-same-machine"]


def _fleet(top: Path, *more: str, ignore_sigint: bool = False) -> subprocess.Popen[str]:
    """The controller, with its own TMPDIR (checked empty after) and its own session."""
    (top / "ctl-tmp").mkdir(exist_ok=True)

    def ignore() -> None:  # what `fsarena fleet run ... &` in a script inherits
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, "-m", "fsarena", "fleet", "run", "-i", str(top / "inventory"), *ARGS,
         "--results-dir", str(top / "r"), *more],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(top / "ctl-tmp")},
        preexec_fn=ignore if ignore_sigint else None, start_new_session=True,
    )  # fmt: skip


def _read_until(proc: subprocess.Popen[str], done: Callable[[str], bool]) -> list[str]:
    assert proc.stderr is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if done("".join(lines)):
            return lines
    raise AssertionError("the fleet ended first:\n" + "".join(lines))


def _wait_for(paths: list[Path], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(p.exists() for p in paths):
        assert time.monotonic() < deadline, f"never appeared: {paths}"
        time.sleep(0.2)


def _processes(top: Path) -> list[str]:
    """Processes whose command line names the test's directory, sshd daemons aside."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        daemon = argv[0] == str(SSHD).encode() or argv[0].startswith(b"sshd: ")  # the hosts
        if str(top).encode() in b" ".join(argv) and not daemon:
            found.append(f"{entry.name}: {b' '.join(argv).decode(errors='replace')[:200]}")
    return found


def _files(top: Path, *names: str) -> list[str]:
    return sorted(str(p.relative_to(top)) for n in names if (top / n).exists()
                  for p in (top / n).rglob("*"))  # fmt: skip


def _logins(top: Path, host: str) -> int:
    return (top / host / "sshd.log").read_text().count("Accepted publickey")


@pytest.fixture
def unrelated() -> Iterator[subprocess.Popen[bytes]]:
    """A process fsarena did not start (a recycled pid's new owner): it must survive."""
    proc = subprocess.Popen(["sleep", "900"])
    yield proc
    proc.kill()
    proc.wait()


def test_sigterm_stops_every_host_within_limit_fetches_and_leaves_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with loopback_hosts(tmp_path, 3, work):
        proc = _fleet(tmp_path, "--limit", "h1:h2")
        err = _read_until(proc, lambda e: "h1: run the plan: started" in e
                          and "h2: run the plan: started" in e)  # fmt: skip
        # Both runs are under way (their records written), well before they end.
        _wait_for([work / h / "w-results" / "fleet.pid" for h in ("h1", "h2")])
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        _out, rest = proc.communicate(timeout=300)
        stderr = "".join(err) + rest
        assert proc.returncode == 128 + signal.SIGTERM, stderr
        assert "SIGTERM: stopping the run on every host" in rest
        assert "h1: stop the run (only the process recorded, proven by its start time): " \
               "done: run stopped (pid" in rest  # fmt: skip
        assert "interrupted (SIGTERM); every host's run stopped and cleaned up; 2 sessions as " \
               "far as they got (h1.json, h2.json)" in rest  # fmt: skip
        assert "Traceback" not in stderr
        # Checked at once: the exit means every host is stopped and clean.
        assert _processes(tmp_path) == []  # no fsarena run, no ansible-playbook, no watcher
        assert leftovers(work) == []
        assert _files(tmp_path, "ctl-tmp", "async", "remote-tmp") == []
        assert list(work.glob("*/w-results/fleet.pid")) == []
        assert list(work.glob("*/w-results/*.stop")) == []
        assert _logins(tmp_path, "h3") == 0  # outside --limit: never contacted
    fetched = sorted(tmp_path.glob("r/fleet-*/*.json"))
    assert [p.name for p in fetched] == ["h1.json", "h2.json"]
    assert all('"runs"' in p.read_text() for p in fetched)  # sessions, as far as they got


def test_a_stale_pid_file_never_leads_to_a_signal(
    tmp_path: Path, unrelated: subprocess.Popen[bytes]
) -> None:
    """fleet.pid as an earlier fleet run left it, holding the pid of a process not ours."""
    work = tmp_path / "work"
    stale = work / "h1" / "w-results" / "fleet.pid"
    stale.parent.mkdir(parents=True)
    stale.write_text(f"{unrelated.pid}\n")
    with loopback_hosts(tmp_path, 1, work, pipelining=True):
        proc = _fleet(tmp_path)
        _read_until(proc, lambda e: "h1: fsarena version on the host: started" in e)
        proc.send_signal(signal.SIGINT)  # before h1's run: only the stale file is there
        _out, rest = proc.communicate(timeout=300)
        time.sleep(0.5)
        assert unrelated.poll() is None, f"the unrelated process was killed:\n{rest}"
        assert proc.returncode == 128 + signal.SIGINT, rest
        assert "pid file removed, nothing signalled" in rest
        assert not stale.exists()
        assert _processes(tmp_path) == [] and leftovers(work) == []


def test_sigint_stops_the_fleet_even_when_ignored_at_start(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with loopback_hosts(tmp_path, 1, work, pipelining=True):
        proc = _fleet(tmp_path, ignore_sigint=True)
        _read_until(proc, lambda e: "h1: run the plan: started" in e)
        _wait_for([work / "h1" / "w-results" / "fleet.pid"])
        proc.send_signal(signal.SIGINT)
        _out, rest = proc.communicate(timeout=300)
        assert proc.returncode == 128 + signal.SIGINT, rest
        assert "interrupted (SIGINT); every host's run stopped and cleaned up" in rest
        assert _processes(tmp_path) == [] and leftovers(work) == []


def test_the_stop_contacts_no_host_outside_limit(tmp_path: Path) -> None:
    work = tmp_path / "work"
    with loopback_hosts(tmp_path, 2, work, pipelining=True):
        proc = _fleet(tmp_path, "--limit", "h1")
        _read_until(proc, lambda e: "h1: fsarena version on the host: started" in e)
        proc.send_signal(signal.SIGINT)
        _out, rest = proc.communicate(timeout=300)
        assert _logins(tmp_path, "h2") == 0, rest
        assert "h1: stop the run" in rest and "h2:" not in rest
        assert proc.returncode == 128 + signal.SIGINT, rest


def test_a_failing_module_is_reported_with_its_own_output(tmp_path: Path) -> None:
    """h1's interpreter is a pyenv shim that fails; h2's run exits 2 on a bad filesystem."""
    shim = tmp_path / "shims" / "python3"
    shim.parent.mkdir()
    shim.write_text("#!/bin/sh\necho 'pyenv: python3: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    shimmed = {"h1": f"ansible_python_interpreter={shim}"}
    with loopback_hosts(tmp_path, 2, tmp_path / "work", shimmed, pipelining=True):
        out = subprocess.run(
            [sys.executable, "-m", "fsarena", "fleet", "run", "-i", str(tmp_path / "inventory"),
             "--fs", "nosuchfs", "--scale", "0.01", "-n", "2", "--allow-same-machine",
             "--results-dir", str(tmp_path / "r")],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert out.returncode == 1, out.stderr
    h1 = [line for line in out.stderr.splitlines() if "h1: FAILED at" in line]
    h2 = [line for line in out.stderr.splitlines() if "h2: FAILED at" in line]
    assert len(h1) == 1 and "pyenv: python3: command not found" in h1[0], out.stderr
    assert len(h2) == 1 and "run the plan" in h2[0], out.stderr
    assert "fsarena: error: unknown filesystem 'nosuchfs'" in h2[0], out.stderr


def test_sighup_stops_the_fleet_as_sigterm_does(tmp_path: Path) -> None:
    """Issue 36's matrix: the controller's terminal closing (SIGHUP) mid-run stops every
    host's run and cleans up, exit 129, in one line."""
    work = tmp_path / "work"
    with loopback_hosts(tmp_path, 1, work, pipelining=True):
        proc = _fleet(tmp_path)
        _read_until(proc, lambda e: "h1: run the plan: started" in e)
        _wait_for([work / "h1" / "w-results" / "fleet.pid"])
        proc.send_signal(signal.SIGHUP)
        _out, rest = proc.communicate(timeout=300)
        assert proc.returncode == 128 + signal.SIGHUP, rest
        errors = [x for x in rest.splitlines() if x.startswith("fsarena: error:")]
        assert len(errors) == 1 and "interrupted (SIGHUP); every host's run stopped" in errors[0]
        assert "Traceback" not in rest
        assert _processes(tmp_path) == [] and leftovers(work) == []


def test_kill_9_of_the_controller_leaves_each_host_to_finish_clean(tmp_path: Path) -> None:
    """Issue 36's matrix, `kill -9` of `fsarena fleet run`: it can say nothing, and no
    stop reaches the hosts. Each host's run is its own fsarena run (async, recorded in
    fleet.pid): it goes on to its end and cleans up after itself, and the Ansible
    processes the controller started end with the play. Nothing is left on the hosts
    for `fsarena cleanup` then, and nothing runs."""
    work = tmp_path / "work"
    with loopback_hosts(tmp_path, 1, work, pipelining=True):
        proc = _fleet(tmp_path)
        _read_until(proc, lambda e: "h1: run the plan: started" in e)
        _wait_for([work / "h1" / "w-results" / "fleet.pid"])
        proc.kill()
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        deadline = time.monotonic() + 300
        while _processes(tmp_path) and time.monotonic() < deadline:
            time.sleep(1)
        assert _processes(tmp_path) == [] and leftovers(work) == []
        for state in work.rglob("state.json"):
            cleaned = subprocess.run(
                [sys.executable, "-m", "fsarena", "cleanup", "--workdir", str(state.parent)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert cleaned.returncode == 0 and "removed:" not in cleaned.stdout, cleaned.stdout
