"""`fsarena compare`: sessions side by side.

`settings` says what differs between the sessions and when that makes the
comparison doubtful; `sessions` merges them, states each one's own answer and
the changes of a filesystem across them, and renders that.
"""

from fsarena.report.compare.sessions import (
    CrossComparison,
    compare,
    render,
)

__all__ = [
    "CrossComparison",
    "compare",
    "render",
]
