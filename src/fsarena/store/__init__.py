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
