"""Today's server workloads on real loop devices: every task verified, servers always stopped.

The PostgreSQL tests stop a real `fsarena run` in the middle of pgbench
(Ctrl-C, then kill -9 + `fsarena cleanup`) and look for the server's
processes, its shared memory and the ledger afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fsarena.measure.metrics import metric_value
from fsarena.session.file import load
from tests.integration.conftest import FSARENA, REPO, fsarena, leftovers
from tests.integration.watch import saved_runs

# A short PostgreSQL sequence whose pgbench runs long enough to be interrupted.
PG_SUITE = """
name = "pg-interrupt"
filesystems = ["ext4"]
tasks = ["mkfs", "mount", "pgbench_init", "pgbench_oltp", "umount"]
[datasets.pgbench]
scale_factor = 1
duration_s = 300
"""


def _searchable(workdir: Path) -> None:
    """The server runs as user postgres, which must reach the mount point (mktemp made 0700)."""
    workdir.chmod(0o755)


def _postgres_under(workdir: Path) -> list[int]:
    """PIDs of PostgreSQL processes whose data directory is under the work directory."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if "postgres" in cmdline and (str(workdir) in cmdline or cwd.startswith(str(workdir))):
            found.append(int(proc.name))
    return found


def _runs(path: Path) -> list[dict[str, object]]:
    return saved_runs(path)


def _start_pg_run(workdir: Path) -> tuple[subprocess.Popen[str], Path]:
    """A run stopped inside pgbench_oltp's timed region: the server is up, pgbench running."""
    _searchable(workdir)
    suite = workdir / "pg.toml"
    suite.write_text(PG_SUITE)
    out = workdir / "session.json"
    proc = subprocess.Popen(
        [*FSARENA, "run", "--suite", str(suite), "-n", "1", "--scale", "1",
         "--workdir", str(workdir / "w"), "--output", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and proc.poll() is None:
        if len(_runs(out)) >= 3 and _pgbench_running(workdir):
            break
        time.sleep(0.2)
    assert proc.poll() is None, proc.communicate()[1]
    assert _runs(out)[2]["status"] == "ok", _runs(out)[2]
    assert _postgres_under(workdir), "the server should be running under the work directory"
    return proc, out


def _pgbench_running(workdir: Path) -> bool:
    out = subprocess.run(["pgrep", "-f", f"pgbench -h {workdir}"], capture_output=True, text=True)
    return bool(out.stdout.strip())


def _no_server_left(workdir: Path) -> None:
    deadline = time.monotonic() + 10
    while _postgres_under(workdir) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _postgres_under(workdir)
    assert not (workdir / "w" / "state.json").exists()
    assert not leftovers(workdir)


def test_every_server_task_runs_verified_and_a_tiny_scale_is_flagged(workdir: Path) -> None:
    _searchable(workdir)
    out = workdir / "session.json"
    # Started here, so its pid names its cgroups (fsarena-PID-N): other runs' are not ours.
    run = subprocess.Popen(
        [*FSARENA, "run", "--suite", "server-2026", "--fs", "ext4", "--scale", "0.01", "-n", "1",
         "--workdir", str(workdir / "w"), "--output", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    said, errors = run.communicate(timeout=800)
    assert run.returncode == 0, said + errors
    session = load(out)
    assert [r.status for r in session.runs] == ["ok"] * len(session.runs), [
        (r.task, r.error) for r in session.runs if r.status != "ok"
    ]
    assert {r.task for r in session.runs} >= {"pgbench_oltp", "fio_randread", "dbench_n"}
    oltp = next(r for r in session.runs if r.task == "pgbench_oltp")
    assert oltp.measurement is not None
    assert oltp.measurement.extra["pgbench_latency_p99_ms"] > 0
    # The server's CPU over the region, from its cgroup, in the CPU cost and per
    # transaction (its peer check against /proc: test_server_cpu.py); its cgroups are gone.
    for task in ("pgbench_init", "pgbench_oltp"):
        m = next(r for r in session.runs if r.task == task).measurement
        assert m is not None and (metric_value(m, "server_cpu_s") or 0) > 0, task
    m = oltp.measurement
    per_tx = (m.user_s + m.sys_s + (metric_value(m, "server_cpu_s") or 0)) * 1e3
    assert m.extra["cpu_ms_per_transaction"] == pytest.approx(
        per_tx / m.extra["pgbench_transactions"]
    )
    assert not list(Path("/sys/fs/cgroup").glob(f"*/fsarena-{run.pid}-*")), "a cgroup was left"
    # At scale 0.01 the database (scale factor 1) fits in the server's memory: said so.
    report = fsarena("report", str(out)).stdout
    assert "fits_page_cache: pgbench_oltp" in report
    assert "[databases]" in report and "[random_io]" in report
    assert not _postgres_under(workdir)


def test_ctrl_c_during_pgbench_stops_the_server(workdir: Path) -> None:
    proc, out = _start_pg_run(workdir)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert load(out).status == "interrupted"
    _no_server_left(workdir)


def test_kill_9_then_cleanup_stops_the_server(workdir: Path) -> None:
    proc, _ = _start_pg_run(workdir)
    proc.kill()
    proc.communicate(timeout=30)
    assert _postgres_under(workdir), "a killed run leaves its server running"
    state = json.loads((workdir / "w" / "state.json").read_text())
    assert "postgres" in {r["kind"] for r in state["resources"]}
    result = fsarena("cleanup", "--workdir", str(workdir / "w"))
    assert "PostgreSQL" in result.stdout + result.stderr or "killed process" in result.stdout
    _no_server_left(workdir)
