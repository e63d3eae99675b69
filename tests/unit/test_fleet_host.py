"""The fleet host's run record and stop: a signal only to the process proven to be the run.

Real processes throughout (a `sleep` the test starts stands for an unrelated process
that got a recycled pid), no root needed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.fleet import host
from fsarena.fleet.host import PID_FILE, ProcessProof, RunRecord, StopOutcome, stop_recorded
from fsarena.fleet.run import StopRequests, _reason

STAMP = "20260101T000000"


@pytest.fixture
def unrelated() -> Iterator[subprocess.Popen[bytes]]:
    """A process fsarena did not start: it must survive every stop below."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


def _alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


def test_start_ticks_is_field_22_even_with_spaces_and_parens_in_the_name(tmp_path: Path) -> None:
    odd = tmp_path / "a) b ("
    odd.symlink_to("/bin/sleep")
    proc = subprocess.Popen([str(odd), "600"])
    try:
        fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        assert host.start_ticks(proc.pid) == int(fields[19])
        assert ProcessProof.of(proc.pid) is not None
    finally:
        proc.kill()
        proc.wait()
    assert host.start_ticks(proc.pid) is None


@pytest.mark.parametrize("kind", ["plain pid (as fsarena 68aab35 wrote it)", "recycled pid"])
def test_a_stale_pid_file_never_leads_to_a_signal(
    kind: str, tmp_path: Path, unrelated: subprocess.Popen[bytes]
) -> None:
    pid_file = tmp_path / PID_FILE
    if kind.startswith("plain"):
        pid_file.write_text(f"{unrelated.pid}\n")
    else:  # an earlier run's record: same pid, but that process started at another time
        proof = ProcessProof.of(unrelated.pid)
        assert proof is not None
        earlier = ProcessProof(proof.pid, proof.start_ticks - 1, proof.boot_id)
        RunRecord(STAMP, earlier).write(pid_file)
    outcome = stop_recorded(tmp_path, STAMP, wait_s=2)
    time.sleep(0.2)
    assert _alive(unrelated), outcome.said
    assert "not signalled" in outcome.said or "nothing signalled" in outcome.said
    assert not pid_file.exists()  # stale: removed
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # the stop marker went too


def test_a_live_run_of_another_fleet_run_is_left_alone(
    tmp_path: Path, unrelated: subprocess.Popen[bytes]
) -> None:
    proof = ProcessProof.of(unrelated.pid)
    assert proof is not None
    RunRecord("20251231T235959", proof).write(tmp_path / PID_FILE)
    outcome = stop_recorded(tmp_path, STAMP, wait_s=2)
    assert _alive(unrelated) and "left alone" in outcome.said
    assert (tmp_path / PID_FILE).exists()  # not stale: another fleet run's, still running


def test_no_pid_file_no_signal_and_nothing_left(tmp_path: Path) -> None:
    results = tmp_path / "w-results"  # the run never started here: not even its directory
    outcome = stop_recorded(results, STAMP, wait_s=2)
    assert "no run" in outcome.said and outcome.stopped
    assert not results.exists()


def _host_run(results: Path, *argv: str) -> subprocess.Popen[bytes]:
    """`fsarena fleet host-run` with `sleep` standing in for `fsarena run`."""
    code = (
        "import sys; from pathlib import Path; from fsarena.fleet.host import run_recorded; "
        f"sys.exit(run_recorded(Path({str(results)!r}), {STAMP!r}, {list(argv)!r}, ('sleep',)))"
    )
    return subprocess.Popen([sys.executable, "-c", code])


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 20
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(c) for c in text.split()]


def test_the_stop_signals_the_recorded_run_and_it_ends_clean(tmp_path: Path) -> None:
    wrapper = _host_run(tmp_path, "600")
    _wait_for(tmp_path / PID_FILE)
    record = RunRecord.read(tmp_path / PID_FILE)
    assert isinstance(record, RunRecord) and record.wrapper.pid == wrapper.pid
    time.sleep(0.3)
    [child] = _children(wrapper.pid)  # the `sleep` standing in for the run
    outcome = stop_recorded(tmp_path, STAMP, wait_s=10)
    assert outcome.said == f"run stopped (pid {wrapper.pid}, SIGINT)"
    assert wrapper.wait(timeout=5) == 128 + signal.SIGINT  # the run's own exit, passed on
    assert not Path(f"/proc/{child}").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # pid file and marker gone


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_host_run_passes_a_stop_signal_on_and_removes_its_pid_file(
    signum: int, tmp_path: Path
) -> None:
    wrapper = _host_run(tmp_path, "600")
    _wait_for(tmp_path / PID_FILE)
    time.sleep(0.3)
    wrapper.send_signal(signum)
    assert wrapper.wait(timeout=10) == 128 + signum
    assert not (tmp_path / PID_FILE).exists()


@pytest.mark.parametrize(("argv", "code"), [(["0"], 0), (["--bogus"], 1)])
def test_host_run_removes_its_pid_file_when_the_run_ends(
    argv: list[str], code: int, tmp_path: Path
) -> None:
    wrapper = _host_run(tmp_path, *argv)
    assert wrapper.wait(timeout=20) == code
    assert not (tmp_path / PID_FILE).exists()


def test_a_run_that_starts_after_the_stop_looked_does_not_start(tmp_path: Path) -> None:
    host.stop_marker(tmp_path, STAMP).touch()  # the stop is under way
    wrapper = _host_run(tmp_path, "600")
    assert wrapper.wait(timeout=20) == 128 + signal.SIGINT
    assert not (tmp_path / PID_FILE).exists()


def test_a_second_run_in_a_live_runs_results_directory_is_refused(tmp_path: Path) -> None:
    first = _host_run(tmp_path, "600")
    _wait_for(tmp_path / PID_FILE)
    try:
        with pytest.raises(FsarenaError, match="is still running in"):
            host.run_recorded(tmp_path, "20260101T000001", ["600"], ("sleep",))
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=10)


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_stop_requests_take_each_stop_signal_even_sigint_ignored_at_start(first: int) -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as `cmd &` in a script has it
    try:
        with StopRequests().installed() as stop:
            os.kill(os.getpid(), first)
            os.kill(os.getpid(), signal.SIGINT)  # later ones do not replace the first
            time.sleep(0.05)
            assert stop.signum == first
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # put back
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_module_failure_shows_the_modules_own_output() -> None:
    pyenv = {  # what Ansible reported for an interpreter that was a pyenv shim
        "msg": "MODULE FAILURE\nSee stdout/stderr for the exact error",
        "module_stdout": "pyenv: python3: command not found\r\n\r\nThe `python3' command "
        "exists in these Python versions:\r\n  3.11.4\r\n",
        "module_stderr": "Connection to 127.0.0.11 closed.\r\n",
        "rc": 127,
    }
    said = _reason({"res": pyenv})
    assert "MODULE FAILURE" in said and "pyenv: python3: command not found" in said
    assert "closed" not in said and "exit code 127" in said
    error = "fsarena: error: unknown filesystem 'nosuchfs'; known: ext4, xfs\n"
    command = {"msg": "non-zero return code", "rc": 2, "stdout": "", "stderr": error}
    assert _reason({"res": command}) == (
        "non-zero return code; fsarena: error: unknown filesystem 'nosuchfs'; "
        "known: ext4, xfs; exit code 2"
    )
    assert _reason({"res": {}}) == "no reason given"
    still = StopOutcome("the run (pid 7) still runs 120 s after SIGINT: left to finish", "", False)
    assert _reason(
        {"res": {"msg": "non-zero return code", "rc": 1, "stdout": still.to_json()}}
    ) == (
        "non-zero return code; the run (pid 7) still runs 120 s after SIGINT: left to finish; "
        "exit code 1"
    )


def test_a_record_reads_back_as_written(tmp_path: Path) -> None:
    proof = ProcessProof.of(os.getpid())
    assert proof is not None and proof.holds()
    record = RunRecord(STAMP, proof, "j123.456", proof)
    record.write(tmp_path / PID_FILE)
    assert RunRecord.read(tmp_path / PID_FILE) == record
    assert json.loads((tmp_path / PID_FILE).read_text())["wrapper"]["pid"] == os.getpid()
