"""Signals, kill -9 and resume on real runs: nothing of fsarena's is left, nothing measured lost."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from fsarena.host.ledger import STATE_FILE
from fsarena.session.file import load
from fsarena.session.journal import journal_of
from tests.integration.conftest import FSARENA, REPO, fsarena, leftovers, measured
from tests.integration.watch import saved_runs

TASKS = 13


def _runs_saved(path: Path) -> int:
    return len(saved_runs(path))


def _start(workdir: Path, out: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*FSARENA, "run", "--workdir", str(workdir / "w"), "--output", str(out), *args],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for_runs(proc: subprocess.Popen[str], out: Path, n: int) -> None:
    deadline = time.monotonic() + 600  # datasets, the ceiling and a warm-up come first
    while _runs_saved(out) < n and time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it could be stopped"
        time.sleep(0.02)
    if _runs_saved(out) < n:
        proc.send_signal(signal.SIGINT)  # it cleans up after itself
        proc.communicate(timeout=120)
        raise AssertionError(f"{n} runs were not saved within 600 s")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _stop_a_child(pid: int) -> int:
    """Stop a child process of the run (a task's command or a helper) as soon as there is one."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
        for child in map(int, out.stdout.split()):
            if _state(child) in ("gone", "Z"):
                continue  # exited already, not yet reaped
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGSTOP)
            time.sleep(0.05)
            if _state(child) == "T":
                return child
        time.sleep(0.002)
    raise AssertionError("the run started no child process that could be stopped")


def _gone(pid: int) -> bool:
    """Dead: no process, or a zombie its new parent has not reaped yet."""
    return _state(pid) in ("gone", "Z")


def _nothing_of_fsarena_left(workdir: Path) -> None:
    assert not leftovers(workdir)
    assert not list(workdir.rglob("*.img")), "images deleted"
    with open("/proc/mounts") as f:
        assert not [line for line in f if line.startswith("fsarena-source ")
                    and str(workdir) in line], "tmpfs unmounted"  # fmt: skip
    assert not (workdir / "w" / STATE_FILE).exists(), "the ledger is empty"


def test_sigterm_stops_cleanly_keeping_measurements(workdir: Path) -> None:
    out = workdir / "session.json"
    proc = _start(workdir, out, "--fs", "ext4", "--scale", "0.05", "-n", "3")
    _wait_for_runs(proc, out, 4)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted by SIGTERM" in stderr and "nothing left mounted or attached" in stderr
    assert f"--resume {out}" in stderr
    session = load(out)
    assert session.status == "interrupted" and len(session.runs) >= 4
    _nothing_of_fsarena_left(workdir)


def _kill_9_then_cleanup(workdir: Path, proc: subprocess.Popen[str], child: int) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert leftovers(workdir), "kill -9 left mounts and loop devices (else this test tests nothing)"
    warned = fsarena("run", "--workdir", str(workdir / "w"), "--fs", "ext4", "--scale", "0.01",
                     "-n", "1", "--output", str(workdir / "s2.json"), "--task-timeout", "0.001",
                     check=False)  # fmt: skip
    assert "an earlier run left" in warned.stderr and "fsarena cleanup --workdir" in warned.stderr
    dry = fsarena("run", "--dry-run", "--workdir", str(workdir / "w"), "--fs", "ext4")
    assert "note: an earlier run left " in dry.stdout and "fsarena cleanup" in dry.stdout
    result = fsarena("cleanup", "--workdir", str(workdir / "w"))
    assert "unmounted" in result.stdout and "detached" in result.stdout
    assert "deleted" in result.stdout and "0 could not be removed" in result.stdout
    assert f"killed process {child}" in result.stdout
    assert _gone(child)


def test_kill_9_then_cleanup_removes_everything(workdir: Path) -> None:
    out = workdir / "session.json"
    # An image source: a loop device and an ext4 mount besides the target's.
    proc = _start(workdir, out, "--fs", "ext4", "--scale", "0.05", "-n", "3", "--source", "image")
    _wait_for_runs(proc, out, 4)  # mounted, in the middle of the copies
    child = _stop_a_child(proc.pid)  # a task that outlives fsarena and holds the mount busy
    try:
        _kill_9_then_cleanup(workdir, proc, child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)  # never leave a stopped process behind
    _nothing_of_fsarena_left(workdir)
    # Nothing measured is lost to the kill: the runs saved since the start are in the
    # journal beside the file (the file alone has fewer), and loading merges them.
    in_file = len(json.loads(out.read_text())["runs"])
    assert journal_of(out).exists() and in_file < len(load(out).runs) and len(load(out).runs) >= 4
    again = fsarena("cleanup", "--workdir", str(workdir / "w"))
    assert "nothing to clean" in again.stdout


def test_sigint_then_resume_completes_without_redoing(workdir: Path) -> None:
    out = workdir / "session.json"
    args = ("--fs", "ext4,xfs", "--scale", "0.01", "-n", "2", "--seed", "5")
    proc = _start(workdir, out, *args)
    _wait_for_runs(proc, out, TASKS + 5)  # one sequence done, the second half-way
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGINT, stderr
    before = load(out)  # valid: it loads
    assert before.status == "interrupted"
    firsts = {r.key: r for r in before.runs if (r.filesystem, r.repetition) ==
              (before.order[0][0], 1)}  # fmt: skip
    assert len(firsts) == TASKS and all(measured(r) for r in firsts.values())
    _nothing_of_fsarena_left(workdir)

    refused = fsarena("run", "--resume", str(out), "--fs", "ext4", check=False)
    assert refused.returncode == 2 and "drop --fs" in refused.stderr
    resumed = fsarena("run", "--resume", str(out))
    assert f"resuming {out}" in resumed.stderr
    after = load(out)
    assert after.status == "complete" and after.order[: len(before.order)] == before.order
    assert len(after.runs) == 4 * TASKS == len({r.key for r in after.runs})
    for key, run in firsts.items():
        assert next(r for r in after.runs if r.key == key) == run, "kept, not redone"
    assert all(measured(r) for r in after.runs)
    assert any(w.code == "resumed" for w in after.warnings)
    _nothing_of_fsarena_left(workdir)
    done = fsarena("run", "--resume", str(out), check=False)
    assert done.returncode == 2 and "nothing to resume" in done.stderr
