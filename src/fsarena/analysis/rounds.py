"""A round's measured wall time in a session, for the advice on how long more rounds take. Pure."""

from __future__ import annotations

from fsarena.session.file import Session


def round_seconds(session: Session) -> float | None:
    """A measured round's wall time in this session (the slowest of the last three), if recorded."""
    walls = [float(r.wall_s) for r in session.timing.rounds if not r.warmup]
    return max(walls[-3:]) if walls else None
