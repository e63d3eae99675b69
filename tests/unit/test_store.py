"""The SQLite results store, on the real session fixtures: import, idempotence, history."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.store.chart import render
from fsarena.store.db import open_store
from fsarena.store.ingest import content_digest, import_session
from fsarena.store.query import history
from fsarena.store.schema import MIGRATIONS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSIONS = [FIXTURES / f"{n}.json" for n in ("session-v1", "session-v2", "session-v3")]
MKFS_EXT4 = ("mkfs", "ext4", "ok")
# Every session fixture: the import of the whole directory below adds none of them again.
ALL = [
    *SESSIONS,
    FIXTURES / "session-v4.json",
    FIXTURES / "three-filesystems.json",
    FIXTURES / "full-v2.json",
]


def counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    tables = ("sessions", "hosts", "devices", "runs", "values")
    found = {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    conn.close()
    return found


def test_import_twice_adds_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with open_store(str(db)) as store:
        first = [import_session(store, p) for p in ALL]
    after_first = counts(db)
    with open_store(str(db)) as store:
        second = [import_session(store, p) for p in ALL]
    assert all(i.added for i in first) and not any(i.added for i in second)
    assert counts(db) == after_first
    assert after_first["sessions"] == len(ALL)
    runs = sum(len(json.loads(p.read_text())["runs"]) for p in ALL)
    assert after_first["runs"] == runs
    assert after_first["values"] > runs  # one row per repetition and metric


def test_a_copy_elsewhere_is_the_same_session(tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere.json"
    copy.write_text(json.dumps(json.loads(SESSIONS[2].read_text()), indent=4))
    assert content_digest(copy) == content_digest(SESSIONS[2])
    with open_store(str(tmp_path / "s.sqlite")) as store:
        assert import_session(store, SESSIONS[2]).added
        assert not import_session(store, copy).added


def test_old_max_rss_is_not_stored_as_a_value(tmp_path: Path) -> None:
    """Version 1 and 2 sessions recorded fsarena's own RSS: the store must not index it."""
    db = tmp_path / "s.sqlite"
    with open_store(str(db)) as store:
        for p in SESSIONS:
            import_session(store, p)
    conn = sqlite3.connect(db)
    rows = conn.execute(
        'SELECT s.schema_version, count(*) FROM "values" v JOIN sessions s '
        "USING (session_id) WHERE v.metric = 'max_rss_kib' GROUP BY s.schema_version"
    ).fetchall()
    runs = json.loads(SESSIONS[2].read_text())["runs"]
    measured = [r for r in runs if (r.get("measurement") or {}).get("max_rss_kib") is not None]
    assert measured and rows == [(3, len(measured))]


def test_history_is_per_session_in_time_order(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "s.sqlite")) as store:
        for p in ALL:
            import_session(store, p)
        points = history(store, "mkfs", "ext4", "wall_s")
    assert [p.created_at for p in points] == sorted(p.created_at for p in points)
    assert len(points) >= 2
    v3 = json.loads(SESSIONS[2].read_text())
    mkfs = [r for r in v3["runs"] if (r["task"], r["filesystem"], r["status"]) == MKFS_EXT4]
    walls = [r["measurement"]["wall_s"] for r in mkfs]
    mine = next(p for p in points if p.created_at == v3["created_at"])
    assert mine.summary.n == len(walls)
    assert mine.summary.mean == pytest.approx(sum(walls) / len(walls))
    text = render(points, "mkfs", "ext4", "wall_s", "text")
    assert "mkfs on ext4" in text and v3["host"]["kernel"] in text


def test_history_of_nothing_says_what_exists(tmp_path: Path) -> None:
    with open_store(str(tmp_path / "s.sqlite")) as store:
        import_session(store, SESSIONS[2])
        with pytest.raises(FsarenaError, match=r"known task/filesystem: .*mkfs/ext4"):
            history(store, "mkfs", "nilfs9", "wall_s")


def test_migrations_are_recorded_and_not_reapplied(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    with open_store(db) as store:
        assert store.version() == len(MIGRATIONS)
    with open_store(db) as store:  # a second open must not run CREATE TABLE again
        assert store.version() == len(MIGRATIONS)
        assert store.query("SELECT count(*) FROM schema_version") == [(len(MIGRATIONS),)]


def test_a_newer_store_is_refused(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    with open_store(db) as store:
        store.execute("INSERT INTO schema_version (version) VALUES (?)", (99,))
    with pytest.raises(FsarenaError, match="newer than this fsarena"):
        open_store(db)


def test_cli_import_list_history_export(tmp_path: Path) -> None:
    db = str(tmp_path / "s.sqlite")
    cli = CliRunner()
    out = cli.invoke(main, ["store", "import", *map(str, ALL), "--store", db])
    assert out.exit_code == 0, out.output
    assert f"{len(ALL)} of {len(ALL)} sessions added" in out.output
    again = cli.invoke(main, ["store", "import", str(FIXTURES), "--store", db])
    assert f"0 of {len(ALL)} sessions added" in again.output, again.output
    listed = cli.invoke(main, ["store", "list", "--store", db])
    assert listed.output.strip().endswith(f"{len(ALL)} sessions in {db}")
    html = tmp_path / "h.html"
    drawn = cli.invoke(
        main, ["store", "history", "--task", "mkfs", "--fs", "ext4", "--store", db,
               "--format", "html", "-o", str(html)],
    )  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    assert "<svg" in html.read_text() and "mkfs on ext4" in html.read_text()
    exported = cli.invoke(
        main, ["store", "export", "--parquet", str(tmp_path / "pq"), "--store", db]
    )
    assert exported.exit_code == 0, exported.output
    import pyarrow.parquet as pq

    values = pq.read_table(tmp_path / "pq" / "values.parquet")
    assert values.num_rows == counts(Path(db))["values"]
    assert set(values.column_names) == {"session_id", "run_index", "metric", "value"}


def test_bad_session_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    out = CliRunner().invoke(main, ["store", "import", str(bad), "--store", str(tmp_path / "s")])
    assert out.exit_code == 2
    assert "is not a readable session file" in out.output


def test_run_indexes_its_session_and_a_store_error_only_warns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fsarena.cli.store import import_into_default_store

    import_into_default_store(SESSIONS[2], str(tmp_path))
    assert counts(tmp_path / "fsarena.sqlite")["sessions"] == 1
    blocked = tmp_path / "file"
    blocked.write_text("a file where the results directory should be")
    import_into_default_store(SESSIONS[2], str(blocked))  # must not raise
    assert "warning: session not added to the store" in capsys.readouterr().err


def test_help_loads_no_store_library() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from click.testing import CliRunner; from fsarena.cli.commands import main; "
        "CliRunner().invoke(main, ['--help']); "
        "print(sorted(m for m in ('psycopg', 'pyarrow', 'ansible_runner', 'sqlite3') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- issue 36: concurrent imports


def test_an_import_racing_another_adds_the_session_once(tmp_path: Path) -> None:
    """Issue 36: 1 of 24 concurrent `store import`s of one session raised
    sqlite3.IntegrityError: the check (is it there?) and the insert were not one
    transaction. Here another import of the same session gets in exactly between the
    check of one import and its insert (it runs when the first opens its transaction):
    the first must find it there, not fail on the key."""
    from contextlib import contextmanager

    url = str(tmp_path / "s.sqlite")
    with open_store(url) as first, open_store(url) as other:
        opened = first.transaction

        @contextmanager
        def racing(*args: Any, **kwargs: Any) -> Any:
            import_session(other, SESSIONS[2])  # the other import, between check and insert
            with opened(*args, **kwargs):
                yield

        first.transaction = racing  # type: ignore[method-assign]
        done = import_session(first, SESSIONS[2])
    assert not done.added and done.state == "already in the store"
    assert counts(Path(url))["sessions"] == 1


def _import_at_once(url: str, path: str, barrier: Any, states: Any) -> None:
    from fsarena.store.db import open_store as opened

    barrier.wait()
    try:
        with opened(url) as store:
            states.put(import_session(store, Path(path)).state)
    except BaseException as exc:
        states.put(f"{type(exc).__name__}: {exc}")


def test_many_imports_at_once_of_one_session_into_a_new_store(tmp_path: Path) -> None:
    """24 processes import one session into one new store at the same moment: one adds it,
    23 find it there; none fails (creating the store and importing are each atomic)."""
    import multiprocessing

    url = str(tmp_path / "s.sqlite")
    context = multiprocessing.get_context("fork")
    barrier, states = context.Barrier(24), context.Queue()
    workers = [
        context.Process(target=_import_at_once, args=(url, str(SESSIONS[2]), barrier, states))
        for _ in range(24)
    ]
    for w in workers:
        w.start()
    found = sorted(states.get(timeout=120) for _ in workers)
    for w in workers:
        w.join(timeout=60)
    assert found.count("already in the store") == 23, found
    assert counts(Path(url))["sessions"] == 1
