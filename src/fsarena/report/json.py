"""JSON summary: the statistics of every task and filesystem, computed from the session."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from fsarena.report import outcome
from fsarena.report.table import Comparison
from fsarena.stats import Ranking


def _ranking(ranking: Ranking) -> dict[str, Any]:
    return {
        "order": list(ranking.order),
        "winners": list(ranking.winners),
        "tie": ranking.all_tied,
        "pairs": [_finite(asdict(p)) for p in ranking.pairs],
    }


def _finite(d: dict[str, Any]) -> dict[str, Any]:
    """JSON has no nan or inf: unknown values become null."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in d.items()}


def _verdicts(comparison: Comparison) -> dict[str, Any]:
    v = comparison.verdicts
    if v is None:
        return {}
    return {
        "verdicts": [
            {
                "kind": k.kind,
                "title": k.title,
                "tasks": list(k.tasks),
                "summary": k.summary,
                "why": list(k.why),
                **_ranking(k.ranking),
            }
            for k in v.kinds
        ],
        # No kind of work compared: nothing to recommend from (outcome says why).
        "recommendation": asdict(v.recommendation) if v.kinds else None,
        "comparisons": [
            {
                "task": r.task,
                "metric": r.metric,
                "invalid": list(r.invalid),
                **_ranking(r.ranking),
            }
            for (task, metric), r in sorted(v.tasks.items())
        ],
        "ceilings": [{**asdict(c), "pct": c.pct} for c in v.ceilings],
    }


def render(comparison: Comparison) -> str:
    session = comparison.session
    doc = {
        "schema": "fsarena-summary-1",
        "tool_version": session.tool_version,
        "created_at": session.created_at,
        "status": outcome.status_of(session),
        "outcome": outcome.record(session),
        "host": session.host,
        "plan": session.plan,
        "source": session.source,
        **({"machine": session.machine} if session.machine else {}),
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
                        "outliers": list(r.outliers),
                        "unstable": r.unstable,
                        "metrics": {
                            name: _finite({**asdict(s), "cv": s.cv})
                            for name, s in sorted(r.stats.items())
                        },
                    }
                    for r in t.rows
                ],
            }
            for t in comparison.tables
        ],
        "failures": [asdict(f) for f in comparison.failures],
        "warnings": [w.model_dump() for w in session.warnings],
        "flags": [asdict(f) for f in comparison.flags],
        **_verdicts(comparison),
    }
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"
