"""The results store: an index of session files in SQLite or PostgreSQL, and its export.

The session JSON stays the source of truth; the store only indexes sessions,
hosts, devices, runs and every raw value (one row per repetition and metric)
so a team can query many sessions at once. Nothing here is imported by
`fsarena --help` or by the measuring process (the CLI imports it lazily).
"""

from __future__ import annotations

from pathlib import Path

DEFAULT_STORE_NAME = "fsarena.sqlite"


def default_store(results_dir: str | Path) -> str:
    """The embedded store beside a results directory's session files."""
    return str(Path(results_dir, DEFAULT_STORE_NAME))


# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "": ("default_store",),
    "chart": ("render",),
    "db": ("open_store",),
    "export": ("export_parquet",),
    "ingest": (
        "Imported",
        "import_session",
    ),
    "query": (
        "baseline_path",
        "history",
        "list_sessions",
    ),
}
