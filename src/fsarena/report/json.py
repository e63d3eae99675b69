"""JSON summary: the statistics of every task and filesystem, computed from the session."""

from __future__ import annotations

import json
from dataclasses import asdict

from fsarena.report.table import Comparison


def render(comparison: Comparison) -> str:
    session = comparison.session
    doc = {
        "schema": "fsarena-summary-1",
        "tool_version": session.tool_version,
        "created_at": session.created_at,
        "status": session.status,
        "host": session.host,
        "plan": session.plan,
        "source": session.source,
        "tasks": [
            {
                "task": t.task,
                "kind": t.kind,
                "timed": t.timed,
                "rows": [
                    {
                        "filesystem": r.filesystem,
                        "n_ok": r.n_ok,
                        "n_failed": r.n_failed,
                        "n_skipped": r.n_skipped,
                        "errors": list(r.errors),
                        "metrics": {
                            name: {**asdict(s), "cv": s.cv} for name, s in sorted(r.stats.items())
                        },
                    }
                    for r in t.rows
                ],
            }
            for t in comparison.tables
        ],
        "failures": [asdict(f) for f in comparison.failures],
        "warnings": [w.model_dump() for w in session.warnings],
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"
