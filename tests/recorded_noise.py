"""Sessions of pure noise drawn from a recorded session, for the regression gate's proof.

The recorded sessions are real runs of article A's suite on this machine
(tests/fixtures: session-v1, session-v3 and three-filesystems, 2-3 repetitions each).
The levels come from one of them (session-v3 by default, the largest scale: tasks of
0.04-1.7 s); each (filesystem, task)'s log residuals around its level are pooled over
all of them (each session's residuals scaled by sqrt(k / (k - 1)) so that a tiny
sample's spread is not biased low): 7 residuals for ext4 and xfs. A simulated
session draws each sample as level × exp(residual + jitter), the residual resampled
from that pair's pool and the jitter normal with a quarter of the pool's spread (a
smoothed bootstrap: real timings are continuous, a pool of 7 would give ties), plus,
with probability STALL_P, one stall: the sample multiplied by STALL_X. This
machine's timings are heavy-tailed (the architecture note: one 4.5× stall in ten
runs): STALL_P = 0.05, STALL_X = 3.
Two sessions drawn this way differ by noise only; an injected change multiplies one
(filesystem, task)'s samples in one of them.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from collections import defaultdict
from pathlib import Path

from fsarena.session.file import Run, Session, load

FIXTURES = Path(__file__).parent / "fixtures"
RECORDED = FIXTURES / "session-v3.json"
POOLED = ("session-v1.json", "session-v3.json", "three-filesystems.json")
STALL_P = 0.05
STALL_X = 3.0
SMOOTH = 0.25


@functools.cache
def recorded() -> Session:
    return load(RECORDED)


@functools.cache
def pooled_residuals() -> dict[tuple[str, str, str], list[float]]:
    """(fs, task, metric) -> the log residuals of every recorded session, pooled."""
    out: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for name in POOLED:
        for key, (_, residuals) in _levels(load(FIXTURES / name)).items():
            out[key].extend(residuals)
    return dict(out)


def _levels(session: Session) -> dict[tuple[str, str, str], tuple[float, list[float]]]:
    """(fs, task, metric) -> (log level, log residuals) of every ok positive sample."""
    samples: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for run in session.runs:
        if run.status != "ok":
            continue
        info = session.plan.task_info.get(run.task)
        metric = (info.columns[:1] if info else []) or ["wall_s"]
        value = run.value(metric[0])
        if value is not None and value > 0:
            samples[(run.filesystem, run.task, metric[0])].append(math.log(value))
    out = {}
    for key, logs in samples.items():
        if len(logs) >= 2:
            mean = statistics.fmean(logs)
            k = len(logs)
            out[key] = (mean, [(x - mean) * math.sqrt(k / (k - 1)) for x in logs])
    return out


@functools.cache
def _model() -> tuple[
    dict[tuple[str, str, str], tuple[float, list[float]]], dict[tuple[str, str], Run]
]:
    """The recorded session's levels with their pooled residuals, and a run to copy per pair."""
    session = recorded()
    pool = pooled_residuals()
    levels = {key: (mean, pool.get(key, own)) for key, (mean, own) in _levels(session).items()}
    template = {
        (r.filesystem, r.task): r for r in session.runs if r.status == "ok" and r.repetition == 1
    }
    return levels, template


def draw(
    n: int,
    rng: random.Random,
    inject: dict[tuple[str, str], float] | None = None,
) -> Session:
    """The recorded session redrawn with n repetitions; inject[(fs, task)] multiplies."""
    levels, template = _model()
    runs = []
    for (fs, task, metric), (mean, residuals) in levels.items():
        base = template.get((fs, task))
        if base is None:
            continue
        factor = (inject or {}).get((fs, task), 1.0)
        jitter = SMOOTH * statistics.pstdev(residuals)
        for rep in range(1, n + 1):
            value = math.exp(mean + rng.choice(residuals) + rng.gauss(0, jitter)) * factor
            if rng.random() < STALL_P:
                value *= STALL_X
            runs.append(_with_value(base, metric, value, rep))
    return recorded().model_copy(update={"runs": runs, "status": "complete"})


def _with_value(run: Run, metric: str, value: float, rep: int) -> Run:
    """The run as repetition REP, its headline metric replaced by VALUE (read first)."""
    values = {**run.values, metric: value}
    return run.model_copy(update={"repetition": rep, "values": values, "repeats": []})
