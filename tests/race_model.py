"""A tune's configurations under simulated noise: the scenario and its empty session.

A tune's rounds eliminate as every decisive run's do (analysis.decision, analysis.race);
tests/unit/test_tune_answer.py words sessions built here, configuration by configuration.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from fsarena.analysis.kinds import PRACTICAL
from fsarena.session.file import Session
from tests.decision_model import DEFAULT_SCALE, KIND_TASKS, WORKLOAD, MemoPlan

DEFAULTS = "fs"


@dataclass(frozen=True)
class RaceScenario:
    """Configurations of one filesystem and their true times, relative to the best.

    times[i][k]: configuration i's time on kind k as a multiple (1.0: as fast as the
    best); configuration 0 is the defaults. to_ceiling: every round up to max_rounds (the
    most looks a race may take); else the decisive rule stops it as the runner would.
    """

    times: tuple[tuple[float, ...], ...]
    drift: bool = False
    spread: float = 1.0
    min_rounds: int = 3
    max_rounds: int = 10
    to_ceiling: bool = True
    race: bool = True
    label: str = ""

    @property
    def names(self) -> list[str]:
        return [DEFAULTS, *(f"{DEFAULTS}-c{i}" for i in range(1, len(self.times)))]

    @property
    def kinds(self) -> list[str]:
        return list(WORKLOAD)[: len(self.times[0])]

    @property
    def tasks(self) -> list[str]:
        return [t for k in self.kinds for t in KIND_TASKS[k]]

    def truth(self) -> dict[str, dict[str, float]]:
        """Per family (each kind, and the workload with several), each configuration's
        true time as a multiple of the family's best."""
        out = {}
        for k, kind in enumerate(self.kinds):
            values = {n: t[k] for n, t in zip(self.names, self.times, strict=True)}
            out[kind] = {n: v / min(values.values()) for n, v in values.items()}
        if len(self.kinds) > 1:
            geo = {
                n: math.exp(statistics.fmean(math.log(v) for v in t))
                for n, t in zip(self.names, self.times, strict=True)
            }
            out["workload"] = {n: v / min(geo.values()) for n, v in geo.items()}
        return out

    def protected(self) -> set[str]:
        """Configurations a drop would be an error for: within MARGIN of some family's best."""
        return {
            n for family in self.truth().values() for n, v in family.items() if v <= 1 + PRACTICAL
        }

    def best(self) -> str:
        """The truly best configuration for the workload (the only kind, or the mean)."""
        family = list(self.truth().values())[-1]
        return min(family, key=lambda n: (family[n], n))


def empty_session(s: RaceScenario) -> Session:
    plan = MemoPlan.model_validate(
        {
            "suite": "simulated",
            "filesystems": s.names,
            "tasks": s.tasks,
            "repetitions": s.min_rounds,
            "decisive": True,
            "max_repetitions": s.max_rounds,
            "scale": DEFAULT_SCALE,
            "seed": 1,
            "task_info": {
                t: {"kind": k, "timed": True, "writes": False}
                for k in s.kinds
                for t in KIND_TASKS[k]
            },
            "tune": {DEFAULTS: s.names},
            "race": s.race,
        }
    )
    return Session(
        tool_version="0.0.sim",
        created_at="2026-01-01T00:00:00+00:00",
        status="complete",
        host={"kernel": "6.0-sim", "cpu_model": "simulated", "cpus": 2},
        plan=plan,
        profiles_as_run={n: {"name": n, "fstype": "ext4", "driver": "kernel"} for n in s.names},
    )
