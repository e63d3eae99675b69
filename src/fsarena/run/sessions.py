"""A run's session record: its creation from the plan, the events a run reports, resumption.

What the runner records before anything is measured (the plan, the profiles
as run, the aged twins' group) and what a resume reads back (which
sequences are complete, whether a dataset is still the one measured).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from fsarena import __version__
from fsarena.datasets.spec import DatasetSpec
from fsarena.errors import FsarenaError
from fsarena.plan.model import Plan
from fsarena.session.file import Run, Session
from fsarena.session.records import DatasetRecord


@dataclass(frozen=True)
class Event:
    """Progress, for whoever displays it (the CLI); the runner never prints."""

    kind: str  # "setup" | "round" | "sequence" | "run" | "done"
    message: str
    run: Run | None = None


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def finished_sequences(session: Session, tasks: list[str]) -> set[tuple[str, int]]:
    """(filesystem, repetition) whose every task has a run: the unit a resume skips."""
    seen: dict[tuple[str, int], set[str]] = {}
    for run in session.runs:
        seen.setdefault((run.filesystem, run.repetition), set()).add(run.task)
    return {key for key, done in seen.items() if done >= set(tasks)}


def check_same_dataset(recorded: DatasetRecord | None, name: str, digest: str) -> None:
    """A resumed session must measure the very data it measured before."""
    if recorded is not None and recorded.manifest_digest != digest:
        raise FsarenaError(
            f"dataset {name} differs from the one this session was measured with "
            f"(manifest digest {digest[:12]}, recorded {recorded.manifest_digest:.12}); "
            "the session cannot be resumed: start a new run"
        )


def source_bytes(specs: dict[str, DatasetSpec]) -> int:
    """Bytes the datasets take on the source (tasks make the others on the test filesystem)."""
    return sum(s.total_bytes for s in specs.values() if s.on_source)


def new_session(plan: Plan, host: dict[str, object], tool_versions: dict[str, str]) -> Session:
    """A session carrying the plan and its provenance, before anything is measured."""
    classes = {name: plan.task_class(name) for name in plan.tasks}
    return Session(
        tool_version=__version__,
        created_at=now(),
        host=dict(host),
        tool_versions=tool_versions,
        plan={
            **plan.summary(),
            "task_info": {
                name: {
                    "kind": task.kind,
                    "timed": task.timed,
                    "writes": task.writes,
                    "payload": task.payload,
                    "description": task.describe(),
                    "datasets": list(task.datasets),
                    **({"columns": list(c)} if (c := task.columns) else {}),
                }
                for name, task in classes.items()
            },
        },
        profiles_as_run={
            **{
                p.name: {**p.to_dict(), "image_size_bytes": plan.image_size_for(p)}
                for p in plan.profiles()
            },
            **aged_profiles(plan),
        },
    )


def aged_profiles(plan: Plan) -> dict[str, dict[str, Any]]:
    """profiles_as_run of the aged filesystems: their own group, their fresh twin named."""
    if plan.age is None:
        return {}
    return {
        plan.aged_name(p.name): {
            **p.to_dict(),
            "image_size_bytes": plan.image_size_for(p),
            "aged": plan.age.name,
            "fresh": p.name,
            "group": f"aged:{p.group}",
        }
        for p in plan.profiles()
    }
