"""The measurement collector against GNU time, on real processes (no root needed)."""

from __future__ import annotations

import base64
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from fsarena.interrupt import Stop
from fsarena.measure import launcher
from fsarena.measure.collect import Command, Measurement, measure_commands
from fsarena.measure.metrics import METRICS, metric_value
from fsarena.measure.native import find_native_tool

GNU_TIME = "/usr/bin/time"


@pytest.mark.skipif(not os.path.exists(GNU_TIME), reason="GNU time not installed")
def test_agrees_with_gnu_time(tmp_path: Path) -> None:
    """One execution, measured by both: fsarena runs GNU time, which runs the command.

    Separate executions would differ by the machine's noise (CPU time of the
    same command varies by 10-30 % here); nesting compares the methods alone.
    fsarena's figures then also hold GNU time's own process (about 1 ms of CPU
    and ~100 faults), which the sort-heavy pipeline dwarfs.
    """
    data = tmp_path / "data"
    data.write_bytes(base64.b64encode(os.urandom(12 << 20)))
    report = tmp_path / "time.txt"
    # A shell with a pipeline: rusage must include every waited-for descendant.
    argv = ("sh", "-c", f"sort -S 64M {data} | gzip -1 > /dev/null")
    m = measure_commands([Command((GNU_TIME, "-v", "-o", str(report), *argv))], None, 60)
    text = report.read_text()
    user = float(_field(text, r"User time \(seconds\): ([\d.]+)"))
    sys_ = float(_field(text, r"System time \(seconds\): ([\d.]+)"))
    minor = int(_field(text, r"Minor \(reclaiming a frame\) page faults: (\d+)"))
    major = int(_field(text, r"Major \(requiring I/O\) page faults: (\d+)"))
    ours = m.measurement
    assert ours.user_s + ours.sys_s == pytest.approx(user + sys_, rel=0.05, abs=0.02)
    assert ours.minor_faults == pytest.approx(minor, rel=0.05)
    assert ours.major_faults <= major + 5


def _field(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    assert found, (pattern, text)
    return found.group(1)


def test_wall_and_exit_code() -> None:
    timed = measure_commands([Command(("sleep", "0.2")), Command(("true",))], None, 10)
    assert 0.2 <= timed.measurement.wall_s < 2
    assert timed.measurement.exit_code == 0 and timed.stderr == ""


def test_stops_at_first_failure_and_keeps_stderr() -> None:
    timed = measure_commands(
        [Command(("sh", "-c", "echo oops >&2; exit 3")), Command(("sleep", "5"))], None, 10
    )
    assert timed.measurement.exit_code == 3
    assert timed.stderr == "oops"
    assert timed.measurement.wall_s < 4


def test_timeout_kills_the_whole_group() -> None:
    timed = measure_commands([Command(("sh", "-c", "sleep 30 & sleep 30; wait"))], None, 0.5)
    assert timed.measurement.timed_out
    assert timed.measurement.wall_s < 5


def test_stdout_goes_to_file(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    measure_commands([Command(("echo", "hello"), stdout_path=str(out))], None, 10)
    assert out.read_text() == "hello\n"


def test_missing_command_is_a_clear_error() -> None:
    from fsarena.errors import FsarenaError

    with pytest.raises(FsarenaError, match="command not found: no-such-tool"):
        measure_commands([Command(("no-such-tool",))], None, 10)


def test_measurement_round_trip_and_metrics() -> None:
    m = Measurement(2.0, 0.5, 0.5, 10, 1, 100, 0, 4096, 1.5, 0.2, 0, extra={"capacity_pct": 90.0})
    assert Measurement.from_dict(m.to_dict()) == m
    assert m.cpu_pct == 50.0
    assert metric_value(m, "cpu_pct") == 50.0
    assert metric_value(m, "capacity_pct") == 90.0
    assert metric_value(m, "no_such") is None
    for metric in METRICS.values():
        assert metric.better in ("lower", "higher")


def test_device_counters_count_what_a_command_reads() -> None:
    # A file on /var/tmp, read with direct I/O: its 4 MiB must reach the disk under it.
    with tempfile.NamedTemporaryFile(dir="/var/tmp") as f:
        f.write(os.urandom(4 << 20))
        f.flush()
        os.fsync(f.fileno())
        st = os.stat(f.name)
        sysfs = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
        if not sysfs.exists() or shutil.which("dd") is None:
            pytest.skip("/var/tmp is not on a block device")
        dev = f"/dev/{sysfs.resolve().name}"
        dd = ("dd", f"if={f.name}", "of=/dev/null", "bs=1M", "iflag=direct")
        m = measure_commands([Command(dd)], dev, 60).measurement
    if m.exit_code != 0:
        pytest.skip("direct I/O is not supported on /var/tmp")
    assert m.device_read_bytes >= 4 << 20


def test_device_counters_count_what_a_command_writes() -> None:
    # 4 MiB written to /var/tmp with direct I/O and fsync'ed: all of it reaches the disk.
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        st = os.stat(d)
        sysfs = Path(f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}")
        if not sysfs.exists() or shutil.which("dd") is None:
            pytest.skip("/var/tmp is not on a block device")
        dev = f"/dev/{sysfs.resolve().name}"
        out = f"{d}/written"
        dd = ("dd", "if=/dev/zero", f"of={out}", "bs=1M", "count=4", "oflag=direct", "conv=fsync")
        m = measure_commands([Command(dd)], dev, 60).measurement
    if m.exit_code != 0:
        pytest.skip("direct I/O is not supported on /var/tmp")
    assert m.device_write_bytes >= 4 << 20


def test_max_rss_is_the_commands_not_fsarenas() -> None:
    if find_native_tool("timeit") is None:
        pytest.skip("fsarena-timeit is not built (scripts/setup.sh)")
    ballast = bytearray(64 << 20)  # this process's high-water mark: 64 MiB and more
    ballast[::4096] = b"x" * len(ballast[::4096])
    m = measure_commands([Command(("true",))], None, 10).measurement
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert m.max_rss_kib is not None
    assert 0 < m.max_rss_kib < 8 << 10 < own
    del ballast


def test_without_the_launcher_max_rss_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "find_native_tool", lambda name: None)
    m = measure_commands([Command(("true",)), Command(("true",))], None, 10).measurement
    assert m.exit_code == 0 and m.max_rss_kib is None and m.wall_s > 0


def test_the_launcher_reports_exit_code_and_signal() -> None:
    if find_native_tool("timeit") is None:
        pytest.skip("fsarena-timeit is not built (scripts/setup.sh)")
    assert measure_commands([Command(("sh", "-c", "exit 3"))], None, 10).measurement.exit_code == 3
    killed = measure_commands([Command(("sh", "-c", "kill -9 $$"))], None, 10).measurement
    assert killed.exit_code == -9


def test_a_stop_inside_popen_never_orphans_the_timed_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mask held the signal in the main thread only: another thread took it (CI: a timed
    mount orphaned so landed after the teardown), and the handler then ran inside Popen."""
    fork = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    pids: list[int] = []

    def forked(self: subprocess.Popen[bytes], *args: Any) -> None:
        fork(self, *args)
        pids.append(self.pid)
        assert waiter.ident is not None
        signal.pthread_kill(waiter.ident, signal.SIGINT)  # as the kernel picks: a thread open to it
        deadline = time.monotonic() + 2
        while not stop.signum and time.monotonic() < deadline:
            pass  # bytecodes: once the other thread took it, the handler runs here, in Popen

    other = threading.Event()
    waiter = threading.Thread(target=other.wait, args=(5,))
    waiter.start()  # its mask has the stop signals open
    monkeypatch.setattr(subprocess.Popen, "_execute_child", forked)
    marker = tmp_path / "ran-on"
    command = Command(("sh", "-c", f"sleep 0.5; touch {marker}"))
    stop = Stop()
    try:
        with stop.installed(), pytest.raises(KeyboardInterrupt):
            measure_commands([command], None, 10)
    finally:
        monkeypatch.undo()
        other.set()
        waiter.join()
    time.sleep(1.0)
    assert not marker.exists(), "the command ran on after the stop"
    with pytest.raises(ChildProcessError):  # the launcher was waited for
        os.waitpid(pids[0], os.WNOHANG)
