"""The team store on a real PostgreSQL server: the same answers as SQLite, idempotent.

The test starts its own server (Debian's postgresql 15) as user postgres in a
private directory, listening on a Unix socket only, and stops it after, even
when the test fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main

PG_BIN = Path("/usr/lib/postgresql/15/bin")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSIONS = [
    FIXTURES / f"{n}.json" for n in ("session-v1", "session-v2", "session-v3", "three-filesystems")
]


def _as_postgres(*argv: str) -> None:
    subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True, capture_output=True)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    if not (PG_BIN / "initdb").exists():
        pytest.skip("Debian's postgresql package is not installed (scripts/setup.sh)")
    top = Path(tempfile.mkdtemp(prefix="fsarena-i18-pg-"))
    data, sock = top / "data", top / "sock"
    sock.mkdir()
    shutil.chown(top, "postgres")
    shutil.chown(sock, "postgres")
    os.chmod(top, 0o700)
    try:
        _as_postgres(str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres")
        opts = f"-k {sock} -c listen_addresses='' -c fsync=off"
        log = top / "log"
        _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(log),
                     "-w", "start")  # fmt: skip
        try:
            yield f"postgresql://postgres@/postgres?host={sock}"
        finally:
            _as_postgres(str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _store(*args: str) -> str:
    out = CliRunner().invoke(main, ["store", *args])
    assert out.exit_code == 0, out.output
    return out.output


def test_sqlite_and_postgres_give_the_same_history(postgres_url: str, tmp_path: Path) -> None:
    sqlite = str(tmp_path / "fsarena.sqlite")
    paths = [str(p) for p in SESSIONS]
    for url in (sqlite, postgres_url):
        assert "4 of 4 sessions added" in _store("import", *paths, "--store", url)
        assert "0 of 4 sessions added" in _store("import", *paths, "--store", url)
    for task, fs, metric in (
        ("mkfs", "ext4", "wall_s"),
        ("mkfs", "xfs", "device_write_bytes"),
        ("mkfs", "ext4", "max_rss_kib"),
    ):
        args = ["history", "--task", task, "--fs", fs, "--metric", metric]
        lite = _store(*args, "--store", sqlite)
        pg = _store(*args, "--store", postgres_url)
        assert lite == pg
        assert lite.count("\n") >= 3
    listed = [_store("list", "--store", u).splitlines()[:-1] for u in (sqlite, postgres_url)]
    assert listed[0] == listed[1]


def test_postgres_export_has_every_row(postgres_url: str, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    _store("import", str(SESSIONS[2]), "--store", postgres_url)
    _store("export", "--parquet", str(tmp_path / "pq"), "--store", postgres_url)
    runs = pq.read_table(tmp_path / "pq" / "runs.parquet")
    assert runs.num_rows == 52


def test_unreachable_postgres_is_one_line(tmp_path: Path) -> None:
    url = f"postgresql://postgres@/postgres?host={tmp_path}"  # no server listens here
    out = CliRunner().invoke(main, ["store", "list", "--store", url])
    assert out.exit_code == 2
    assert "cannot connect to the store" in out.output and "\n" not in out.output.strip()


def test_postgres_keeps_one_row_per_session_its_latest_version(
    postgres_url: str, tmp_path: Path
) -> None:
    """The session identity (host, start time, plan) in PostgreSQL's SQL, as in SQLite's."""
    raw = json.loads(SESSIONS[2].read_text())
    running = tmp_path / "running.json"
    running.write_text(
        json.dumps({**raw, "status": "running", "finished_at": None, "runs": raw["runs"][:10]})
    )
    assert "added (10 runs)" in _store("import", str(running), "--store", postgres_url)
    assert "replacing" in _store("import", str(SESSIONS[2]), "--store", postgres_url)
    assert "a later version" in _store("import", str(running), "--store", postgres_url)
    listed = _store("list", "--store", postgres_url)
    assert listed.endswith(f"1 sessions in {postgres_url}\n") and "complete" in listed
