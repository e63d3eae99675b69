"""`fsarena store`: import sessions into the results store, list them, a task's history, export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from fsarena.cli.args import format_option, output_options, refuse_existing
from fsarena.cli.base import DEFAULT_RESULTS, on_stop

_STORE_HELP = "The store: an SQLite file, or postgresql://... for a team."


def _store_option(f: Any) -> Any:
    default = str(Path(DEFAULT_RESULTS, "fsarena.sqlite"))
    return click.option("--store", "url", default=default, show_default=True, help=_STORE_HELP)(f)


@click.group()
def store() -> None:
    """Every session in one results store (SQLite or PostgreSQL), queryable across runs."""


@store.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@_store_option
def store_import(paths: tuple[Path, ...], url: str) -> None:
    """Import session files (or directories of them); a session already there adds nothing."""
    from fsarena.session.file import load, session_files
    from fsarena.store.db import open_store
    from fsarena.store.ingest import Imported, import_session

    files = [f for p in paths for f in (session_files(p) if p.is_dir() else [p])]
    for p in paths:  # a dangling link (or a FIFO) named *.json in a directory is no session
        for skipped in sorted(set(p.glob("*.json")) - set(files)) if p.is_dir() else []:
            click.echo(f"fsarena: skipped {skipped}: not a regular file", err=True)
    for f in files:  # every file read first: a bad one is refused before the store is touched
        load(f)
    done: list[Imported] = []
    on_stop(lambda: f"{sum(d.added for d in done)} of {len(files)} sessions added to {url}, "
            "each whole (one transaction each); the others not")  # fmt: skip
    with open_store(url) as db:
        for f in files:
            done.append(import_session(db, f))
    for d in done:
        click.echo(f"{d.session_id}  {d.path}: {d.state}")
    click.echo(f"{sum(d.added for d in done)} of {len(done)} sessions added to {url}")


@store.command("list")
@_store_option
def store_list(url: str) -> None:
    """The sessions the store holds, oldest first."""
    from fsarena.store.db import open_store
    from fsarena.store.query import list_sessions

    with open_store(url, create=False) as db:
        click.echo(list_sessions(db), nl=False)


@store.command("history")
@click.option("--task", required=True, help="A task, e.g. untar.")
@click.option("--fs", "filesystem", required=True, help="A filesystem, e.g. ext4.")
@click.option("--metric", default="wall_s", show_default=True, help="A raw metric.")
@format_option("history")
@output_options()
@_store_option
def store_history(
    task: str, filesystem: str, metric: str, fmt: str, output: Path | None, force: bool, url: str
) -> None:
    """One task on one filesystem across sessions: kernels, hosts, time."""
    from fsarena.cli.reports import write_text
    from fsarena.store.chart import render
    from fsarena.store.db import open_store
    from fsarena.store.query import history

    refuse_existing(output, "history file", force)
    on_stop(lambda: "no file half-written: each is written whole, or not at all")
    with open_store(url, create=False) as db:
        points = history(db, task, filesystem, metric)
    text = render(points, task, filesystem, metric, fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    write_text(output, text, "history file", force)
    click.echo(f"written: {output}", err=True)


@store.command("export")
@click.option("--parquet", "directory", required=True, type=click.Path(path_type=Path))
@_store_option
def store_export(directory: Path, url: str) -> None:
    """Write every table to DIR/TABLE.parquet (for DuckDB, pandas)."""
    from fsarena.store.db import open_store
    from fsarena.store.export import export_parquet

    on_stop(lambda: f"the tables written so far are in {directory}, each whole; the others not")
    with open_store(url, create=False) as db:
        for path in export_parquet(db, directory):
            click.echo(f"written: {path}")


def import_into_default_store(path: Path, results_dir: str) -> None:
    """After a run: index its session in the default store; a failure only warns."""
    why = add_to_default_store(path, results_dir)
    if why:
        click.echo(f"fsarena: warning: session not added to the store: {why}", err=True)


def add_to_default_store(path: Path, results_dir: str) -> str | None:
    """Index a saved session in the default store: None, or why it was not added."""
    try:
        from fsarena.store import default_store
        from fsarena.store.db import open_store
        from fsarena.store.ingest import import_session

        with open_store(default_store(results_dir)) as db:
            import_session(db, path)
    except Exception as exc:  # the session file is saved; the store is only an index of it
        return str(exc) or type(exc).__name__
    return None
