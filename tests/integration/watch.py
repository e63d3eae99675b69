"""Watching a run's session file from outside while the run goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.session.file import read_json


def saved_runs(path: Path) -> list[dict[str, Any]]:
    """The runs a running session has saved so far: its file's and its journal's.

    Mid-run, the runs are appended to the journal beside the file (session/journal.py);
    the file alone holds them again only when the run ends.
    """
    try:
        return list(read_json(path).get("runs", []))
    except (FsarenaError, OSError):  # not written yet, or claimed and still empty
        return []
