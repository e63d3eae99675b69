"""A session's identity by what it measured: the digest of its measured content.

Two session files are the same session when they hold the same measurements of the
same plan on the same host, started at the same moment: the same digest. A copy whose
runs were changed, or the same session at two stages (fetched mid-run, then
resumed), has the start time of the other but a digest of its own. Bookkeeping that
changes when a file is saved again without a new measurement (its status, when it
finished, its warnings, the time its reports took, why it stopped, the race's drops,
which are derived from the runs) is left out, so a session saved again is still itself.
"""

from __future__ import annotations

import hashlib
import json

from fsarena.session.file import Session

# What a session measured, and where, how and with what: the content its digest covers.
MEASURED = frozenset(
    {
        "created_at", "host", "tool_versions", "plan", "profiles_as_run", "datasets",
        "source", "target", "machine", "order", "runs", "warmup", "ceilings",
        "cold_caches", "aging",
    }
)  # fmt: skip


def session_digest(session: Session) -> str:
    """sha256 of the canonical JSON (sorted keys, no spaces) of the session's measured content."""
    content = session.model_dump(mode="json", include=set(MEASURED))
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def short(digest: str) -> str:
    """The first 12 hex digits: what messages show (48 bits: collisions are no concern)."""
    return digest[:12]
