"""PostgreSQL from its own log on real loop devices: a recorded log and backup, replayed.

A source server (tests/integration/pgsource.py, started and stopped through
fsarena's ledger and stop_postgres) logs every statement; a base backup is
taken while it runs, then a workload of small transactions is logged. `fsarena
run --pg-replay LOG --pg-base BACKUP` replays it on ext4 and on xfs, both
timing models: pgreplay's statistics must count exactly the statements the
workload sent (not those before the backup, nor pg_basebackup's sessions), and
no server, mount, loop device or ledger entry may be left.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.session.file import load
from tests.integration.conftest import FSARENA, REPO, fsarena, leftovers, new_workdir
from tests.integration.pgsource import record
from tests.integration.test_server_workloads import _no_server_left, _postgres_under

SESSIONS, PER_SESSION = 2, 150  # 1,200 statements: BEGIN, UPDATE, INSERT, COMMIT each


@pytest.fixture(scope="module")
def recorded() -> Iterator[tuple[Path, Path, int]]:
    """The log, the base backup and the statements sent, recorded once for the module."""
    root = new_workdir()
    root.chmod(0o755)
    try:
        yield record(root / "source", SESSIONS, PER_SESSION)
        assert not _postgres_under(root), "the source server should be stopped"
        assert not (root / "source" / "state.json").exists(), "the source's ledger is not empty"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("fs", ["ext4", "xfs"])
def test_the_log_is_replayed_and_every_statement_counted(
    workdir: Path, recorded: tuple[Path, Path, int], fs: str
) -> None:
    log, base, sent = recorded
    workdir.chmod(0o755)  # the server runs as postgres, which must reach the mount point
    out = workdir / "session.json"
    fsarena("run", "--pg-replay", str(log), "--pg-base", str(base), "--fs", fs, "-n", "1",
            "--scale", "0.05", "--workdir", str(workdir / "w"), "--output", str(out))  # fmt: skip
    session = load(out)
    runs = {r.task: r for r in session.runs if r.task.startswith("pg_replay")}
    assert set(runs) == {"pg_replay", "pg_replay_paced"}
    for task, run in runs.items():
        assert run.status == "ok", (task, run.error)
        assert run.measurement is not None
        extra = run.measurement.extra
        assert extra["pgreplay_statements"] == sent, (task, extra)
        assert extra["pgreplay_failed"] == 0
        assert 0 < extra["pgreplay_run_s"] <= run.measurement.wall_s
        assert extra["server_user_s"] + extra["server_sys_s"] > 0
    assert "pgreplay_lag_s" in runs["pg_replay_paced"].measurement.extra  # type: ignore[union-attr]
    assert not _postgres_under(workdir)
    assert not (workdir / "w" / "state.json").exists()
    assert not leftovers(workdir)


def test_a_log_without_its_backup_stops_before_anything_is_made(
    workdir: Path, recorded: tuple[Path, Path, int]
) -> None:
    log, _, _ = recorded
    result = fsarena("run", "--pg-replay", str(log), "--pg-base", str(workdir / "nothing"),
                     "--fs", "ext4", "-n", "1", "--workdir", str(workdir / "w"),
                     check=False)  # fmt: skip
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "pg_basebackup -D DIR -X stream" in lines[0], result.stderr
    assert not (workdir / "w").exists()


def _listening(workdir: Path) -> bool:
    return any(workdir.glob("w/mnt/*/pg/socket/.s.PGSQL.*"))


def test_kill_9_while_the_server_runs_then_cleanup_stops_it(
    workdir: Path, recorded: tuple[Path, Path, int]
) -> None:
    log, base, _ = recorded
    workdir.chmod(0o755)
    proc = subprocess.Popen(
        [*FSARENA, "run", "--pg-replay", str(log), "--pg-base", str(base), "--fs", "ext4",
         "-n", "1", "--replay-timing", "paced", "--workdir", str(workdir / "w"),
         "--output", str(workdir / "session.json")],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    # Up and accepting connections (its socket made): killed mid-start is pg_ctl's race.
    while not _listening(workdir) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.kill()
    proc.wait(timeout=30)
    assert _postgres_under(workdir), "a killed run leaves its restored server running"
    state = json.loads((workdir / "w" / "state.json").read_text())
    assert "postgres" in {r["kind"] for r in state["resources"]}
    fsarena("cleanup", "--workdir", str(workdir / "w"))
    _no_server_left(workdir)
