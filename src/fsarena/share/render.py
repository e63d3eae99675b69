"""The shared view in each format report/formats.py lists for "view": the document laid out
by that format's renderer (text, Markdown, HTML), or the view's numbers as JSON.

The JSON is the view for scripts, versioned by VIEW_FORMAT: per key its digest
and fields, each host's ratio (by pseudonym), the percentiles those hosts
support, and your results placed; never a raw time.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fsarena.report import render_document
from fsarena.share.document import document
from fsarena.share.view import Group, Placement, View

VIEW_FORMAT = "fsarena-share-view-1"


def _group(g: Group) -> dict[str, Any]:
    return {
        "key": g.key,
        "complete": g.complete,
        "task": g.task,
        "filesystem": g.filesystem,
        "baseline": g.baseline,
        "metric": g.metric,
        "hosts": len(g.host_values()),
        "sessions": g.sessions(),
        "host_ratios": g.host_values(),
        "percentiles": {str(p): v for p, v in g.percentiles().items()},
        "fields": g.fields,
    }


def _placement(p: Placement) -> dict[str, Any]:
    m = p.mine
    return {
        "task": m.task,
        "filesystem": m.filesystem,
        "baseline": m.baseline,
        "metric": m.metric,
        "ratio": m.value,
        "key": m.key,
        "pooled": p.group is not None,
        "percentile": p.rank_pct,
        "other_hosts": len(p.others),
        "other_sessions": p.sessions,
        "nearest": {"key": p.nearest.key, "differs": list(p.differs)} if p.nearest else None,
    }


def render_json(view: View) -> str:
    data = {
        "format": VIEW_FORMAT,
        "baseline": view.baseline,
        "bundles": len(view.shared),
        "hosts": view.hosts,
        "left_out": view.left_out,
        "keys": [_group(g) for g in view.groups],
        "yours": {"from": view.yours, "results": [_placement(p) for p in view.placements]}
        if view.yours
        else None,
    }
    return json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"


# The view's data exports, one per data format that names "view" (report/formats.py).
EXPORTS: dict[str, Callable[[View], str]] = {"json": render_json}


def render(view: View, fmt: str) -> str:
    """The view in a format: a document format lays out its document (report/formats.py)."""
    if fmt in EXPORTS:
        return EXPORTS[fmt](view)
    title = f"fsarena: shared results against {view.baseline}"
    return render_document(fmt, document(view), title)
