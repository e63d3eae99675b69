"""What a run reports as it goes (Event), and the timestamps it records (now)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from fsarena.session.file import Run


@dataclass(frozen=True)
class Event:
    """Progress, for whoever displays it (the CLI); the runner never prints."""

    kind: str  # "setup" | "round" | "sequence" | "run" | "done"
    message: str
    run: Run | None = None


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
