"""JSON summary: the statistics of every task and filesystem, computed from the session.

Its form is a contract: summary.schema.json beside this module (JSON Schema
2020-12) describes it, and SCHEMA names its version. Version history:
- fsarena-summary-1: the first form; `cv` a fraction (0.05).
- fsarena-summary-2: `cv_pct` in percent (5.0), as every report prints it, replaces
  `cv`; `answer` (the recommendation and one line per kind of work) added.
- fsarena-summary-3: one answer (analysis.answer): `recommendation` is the answer's
  own (the same text as `answer.recommendation`, with the recommended filesystems,
  the weights, the status and the deciding interval); `answer` gains `weights`,
  `status`, `looks`, `alpha_per_family` and `method`; kinds carry their status
  ("win", "equal", "open", "untested", "fact"), weight, interval, n, the tasks left
  out and the filesystems not recommendable.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from fsarena.analysis.ranking import Ranking
from fsarena.report import outcome
from fsarena.report.answer import build as build_answer
from fsarena.report.comparison import Comparison
from fsarena.report.csv import raw_unit

SCHEMA = "fsarena-summary-3"
SCHEMA_FILE = "summary.schema.json"  # in this package


def _answer(comparison: Comparison) -> dict[str, Any]:
    a = build_answer(comparison)
    return {
        "recommendation": a.recommendation,
        "empty": a.empty,
        "kinds": [_finite(asdict(k)) for k in a.kinds],
        "ties": a.ties,
        "groups": [{"group": title, "recommendation": line} for title, line in a.groups],
        "caveats": list(a.caveats),
        "weights": dict(a.weights),
        "status": a.status,
        "looks": a.looks,
        "alpha_per_family": a.alpha_per_family,
        "method": a.method,
        "tune": list(a.tune),
        "stopped": a.stopped,
    }


def _recommendation(comparison: Comparison) -> dict[str, Any]:
    """The answer's recommendation, for scripts: the same text the reports print."""
    a = build_answer(comparison)
    return _finite(
        {
            "filesystems": list(a.recommended),
            "summary": a.recommendation,
            "weights": dict(a.weights),
            "status": a.status,
            "ratio": a.ratio,
            "low": a.low,
            "high": a.high,
        }
    )


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
        "recommendation": _recommendation(comparison) if v.kinds else None,
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
        "schema": SCHEMA,
        "answer": _answer(comparison),
        "metric_units": {
            name: raw_unit(name)
            for name in sorted({n for t in comparison.tables for r in t.rows for n in r.stats})
        },
        "tool_version": session.tool_version,
        "created_at": session.created_at,
        "status": outcome.status_of(session),
        "outcome": outcome.record(session),
        # The records as stored: every key they were given, the unknown ones too.
        "host": session.host.model_dump(mode="json"),
        "plan": session.plan.model_dump(mode="json"),
        "source": session.source.model_dump(mode="json"),
        **({"machine": session.machine.model_dump(mode="json")} if session.machine else {}),
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
                            name: _finite({**asdict(s), "cv_pct": 100 * s.cv})
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
