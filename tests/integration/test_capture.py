"""`fsarena capture` for real (bpftrace on this kernel's tracepoints), and the trace replayed.

One workload captured on a fresh ext4 on a loop device (threads, a child process,
a file that was there before, mmap'd writes), then replayed with `fsarena run
--replay` on ext4; and the capture's ends: Ctrl-C and SIGTERM keep what was
recorded, a kill -9 of fsarena leaves its tracer for `fsarena cleanup`, a traced
process that exits early ends the capture and says so, a damaged trace is refused
in one line. Nothing may be left running: every process fsarena started carries
its work directory's marker, and none may be found after.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fsarena.host.cleanup import marked_processes
from tests.integration.conftest import FSARENA, REPO, fsarena, new_workdir

WORKLOAD = r"""
import mmap, os, sys, threading
os.chdir(sys.argv[1])
with open("old.dat", "rb") as f:  # there before the capture began
    f.read()
def writer(n):
    for i in range(20):
        with open(f"t{n}-{i}", "wb") as f:
            f.write(b"t" * 3000)
            os.fsync(f.fileno())
threads = [threading.Thread(target=writer, args=(n,)) for n in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
os.mkdir("sub")
os.rename("t0-0", "sub/moved")
os.unlink("t1-0")
os.listdir(".")
pid = os.fork()
if pid == 0:
    with open("child.log", "ab") as f:
        f.write(b"child\n")
    os._exit(0)
os.waitpid(pid, 0)
fd = os.open("mapped.dat", os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 1 << 20)
with mmap.mmap(fd, 1 << 20) as m:  # writes the trace cannot see
    m[:] = b"m" * (1 << 20)
    m.flush()
os.close(fd)
"""


def _sh(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


@contextlib.contextmanager
def loop_ext4(workdir: Path) -> Iterator[Path]:
    """A fresh ext4 on a loop device, as fsarena makes its own (the capture's filesystem)."""
    image, mnt = workdir / "cap.img", workdir / "cap-mnt"
    mnt.mkdir()
    _sh("fallocate", "-l", "300M", str(image))
    device = _sh("losetup", "--find", "--show", "--direct-io=on", str(image))
    try:
        _sh("mkfs.ext4", "-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0", device)
        _sh("mount", device, str(mnt))
        try:
            yield mnt
        finally:
            _sh("umount", str(mnt))
    finally:
        _sh("losetup", "-d", device)
        image.unlink()


def _header(trace: Path) -> dict[str, Any]:
    with gzip.open(trace, "rt") as f:
        return dict(json.loads(f.readline()))


def _records(trace: Path) -> list[Any]:
    with gzip.open(trace, "rt") as f:
        return [json.loads(line) for line in f][1:-1]


@pytest.fixture(scope="module")
def captured() -> Iterator[tuple[Path, Path, subprocess.CompletedProcess[str]]]:
    workdir = new_workdir()
    try:
        script = workdir / "workload.py"
        script.write_text(WORKLOAD)
        trace = workdir / "w.fstrace.gz"
        with loop_ext4(workdir) as mnt:
            data = mnt / "data"
            data.mkdir()
            (data / "old.dat").write_bytes(b"o" * 12345)
            done = fsarena("capture", "--workdir", str(workdir), "-o", str(trace), "--under",
                           str(data), "--", "/usr/bin/python3", str(script), str(data))  # fmt: skip
        assert not marked_processes(str(workdir)), "the capture left processes running"
        yield workdir, trace, done
    finally:
        subprocess.run(["rm", "-rf", str(workdir)], check=False)


def test_a_command_is_captured_with_its_threads_child_and_tree(
    captured: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    _, trace, _done = captured
    header = _header(trace)
    own = header["own_filesystem"]
    assert (own["fstype"], own["device_class"]) == ("ext4", "loop")
    assert header["anonymised"] is True and header["ended"] == "command ended"
    assert header["threads"] >= 3 and header["processes"] == 2  # not the tracer-cost loop's
    cost = header["tracer_cost"]  # measured on this kernel, just before the command ran
    assert cost["iterations"] == 9999 and cost["calls_per_iteration"] == 2.0
    assert 0 < cost["bare_iteration_ns"] < cost["traced_iteration_ns"]
    assert 0 <= cost["per_call_ns"] < cost["traced_iteration_ns"]
    assert f"{cost['per_call_ns'] / 1e3:.2f} µs" in _done.stdout + _done.stderr
    records = _records(trace)
    tree = [r for r in records if r[0] in ("d", "f", "l")]
    events = [r for r in records if isinstance(r[0], int)]
    files = [r for r in tree if r[0] == "f"]
    # Only old.dat was there (FMODE_CREATED read on this kernel); the rest the calls made.
    assert [r[2] for r in files] == [12345]
    names = {r[4] for r in events}
    assert {"open", "write", "fsync", "rename", "unlink", "mkdir", "getdents"} <= names
    assert len({r[3] for r in events if r[4] == "fsync"}) == 2  # both threads' fsyncs
    assert "data" not in json.dumps(records)  # anonymised
    assert header["captured"]["per_call"]["fsync"]["count"] == 40


def test_mmapped_writes_are_said_not_dropped(
    captured: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    _, trace, done = captured
    unreplayable = _header(trace)["unreplayable"]
    assert unreplayable["mmap_shared_writable_bytes"] == 1 << 20
    assert unreplayable["share_pct"] > 50
    assert "% of the bytes this service moved are not in the trace" in done.stdout
    assert "mapped writable and shared (mmap)" in done.stdout


def test_the_trace_replays_on_the_captures_filesystem_with_its_error(
    captured: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    workdir, trace, _ = captured
    session = workdir / "s.json"
    fsarena("run", "-q", "--replay", str(trace), "--replay-timing", "fast", "--fs", "ext4",
            "-n", "1", "--workdir", str(workdir / "run"), "--results-dir", str(workdir),
            "-o", str(session))  # fmt: skip
    runs = json.loads(session.read_text())["runs"]
    (run,) = [r for r in runs if r["task"] == "replay"]
    assert run["status"] == "ok", run["error"]
    extra = run["measurement"]["extra"]
    assert extra["replay_diverged"] == 0
    assert extra["replay_calls"] > 100
    assert "replay_error_pct" in extra  # ext4 on a loop device, as captured
    assert set(run["details"]["replay"]["calls"]) >= {"open", "write", "fsync", "rename"}
    report = fsarena("report", str(session)).stdout
    assert "Replay error: replay:" in report


def test_a_damaged_trace_is_refused_in_one_line_exit_2(
    captured: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    workdir, trace, _ = captured
    cut = workdir / "cut.fstrace.gz"
    cut.write_bytes(trace.read_bytes()[:-40])
    done = fsarena("run", "--replay", str(cut), "--fs", "ext4", "-n", "1", "--workdir",
                   str(workdir / "run2"), "--results-dir", str(workdir), check=False)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cut short" in done.stderr
    assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- how a capture ends


def _start_capture(workdir: Path, *args: str) -> subprocess.Popen[str]:
    """fsarena capture in the background, its messages in workdir/capture.err."""
    argv = [*FSARENA, "capture", "--workdir", str(workdir), "-o", str(workdir / "t.fstrace.gz"),
            "--under", str(workdir / "data"), *args]  # fmt: skip
    (workdir / "data").mkdir(exist_ok=True)
    err = open(workdir / "capture.err", "w")  # noqa: SIM115  # the child holds it
    return subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=err, text=True)


def _wait_tracing(capture: subprocess.Popen[str], workdir: Path, timeout_s: float = 240) -> None:
    """Until the capture says it traces (bpftrace attached: it compiles its program first)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        said = (workdir / "capture.err").read_text()
        if "fsarena: tracing" in said:
            return
        assert capture.poll() is None, said
        time.sleep(0.2)
    raise AssertionError(f"no tracing within {timeout_s} s")


LOOP_WRITER = [
    "/usr/bin/python3", "-c",
    "import os, time\nos.chdir(os.environ['D'])\n"
    "while True:\n    open('f', 'ab').write(b'x'); time.sleep(0.01)",
]  # fmt: skip


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_keeps_what_was_recorded_and_leaves_nothing(
    workdir: Path, sig: signal.Signals
) -> None:
    capture = _start_capture(workdir, "--", "env", f"D={workdir / 'data'}", *LOOP_WRITER)
    _wait_tracing(capture, workdir)
    time.sleep(1)
    capture.send_signal(sig)
    out, _ = capture.communicate(timeout=120)
    err = (workdir / "capture.err").read_text()
    assert capture.returncode == 128 + sig, err
    assert f"stopped by {sig.name}" in out
    assert _header(workdir / "t.fstrace.gz")["ended"] == f"interrupted by {sig.name}"
    assert any(r[4] == "write" for r in _records(workdir / "t.fstrace.gz") if isinstance(r[0], int))
    assert not marked_processes(str(workdir)), "a tracer or the command outlived the capture"
    assert not (workdir / "state.json").exists(), "the ledger still lists something"


def test_after_a_kill_9_cleanup_stops_the_tracer(workdir: Path) -> None:
    capture = _start_capture(workdir, "--", "env", f"D={workdir / 'data'}", *LOOP_WRITER)
    _wait_tracing(capture, workdir)
    capture.kill()
    capture.wait()
    left = marked_processes(str(workdir))
    tracer = [p for p in left if Path(f"/proc/{p}/comm").read_text().strip() == "bpftrace"]
    assert tracer, "kill -9 of fsarena leaves its tracer (else: no test)"
    state = json.loads((workdir / "state.json").read_text())
    assert {r["kind"] for r in state["resources"]} == {"tracer", "tree"}
    done = fsarena("cleanup", "--workdir", str(workdir))
    assert "removed:" in done.stdout
    assert not marked_processes(str(workdir))
    assert not (workdir / "state.json").exists()


def test_a_pid_that_exits_early_keeps_what_was_recorded_and_says_so(workdir: Path) -> None:
    data = workdir / "data"
    data.mkdir()
    go = workdir / "go"
    script = (
        "import os, time\n"
        f"while not os.path.exists({str(go)!r}):\n    time.sleep(0.05)\n"
        f"for i in range(50):\n    open({str(data)!r} + f'/f{{i}}', 'wb').write(b'x')\n"
    )
    target = subprocess.Popen(["/usr/bin/python3", "-c", script])
    try:
        capture = _start_capture(workdir, "--pid", str(target.pid), "--duration", "10m")
        _wait_tracing(capture, workdir)
        go.touch()
        out, _ = capture.communicate(timeout=120)
        assert capture.returncode == 1, (workdir / "capture.err").read_text()
        assert "every traced process ended after" in out and "of the 600 s asked" in out
        header = _header(workdir / "t.fstrace.gz")
        assert header["ended"] == "exited"
        assert header["captured"]["per_call"]["open"]["count"] == 50
        assert not marked_processes(str(workdir))
    finally:
        target.kill()
        target.wait()


def test_capture_refuses_bad_input_in_one_line(workdir: Path) -> None:
    cases = [
        (["-o", str(workdir / "t.gz")], "name what to trace"),
        (["-o", str(workdir / "t.gz"), "--pid", "1", "--", "true"], "exactly one"),
        (["-o", str(workdir / "t.gz"), "--pid", "999999999"], "no such process"),
        (["-o", str(workdir / "t.gz"), "--duration", "soon", "--", "true"], "30s, 10m"),
        (["-o", "/nonexistent/t.gz", "--", "true"], "does not exist"),
    ]
    for args, said in cases:
        done = fsarena("capture", "--workdir", str(workdir), *args, check=False)
        assert done.returncode == 2, (args, done.stderr)
        assert said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert sys.executable  # the same interpreter runs fsarena
