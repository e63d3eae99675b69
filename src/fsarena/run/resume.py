"""Resuming an interrupted session: its plan back, and proof that nothing it depends on changed.

A resumed session must be comparable with itself: every measurement in it
must come from the same plan, kernel, tool versions, filesystem profiles as
run and datasets. The first four are compared here before anything runs; the
datasets' digests are compared by the runner once it has generated them. The
runner then skips complete sequences and redoes unfinished ones from mkfs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fsarena.errors import FsarenaError
from fsarena.plan.model import Plan
from fsarena.session.file import Session, load
from fsarena.session.records import DatasetRecord
from fsarena.tasks import TASKS


def resumable(path: Path) -> Session:
    """A session that can be resumed: not complete, with a plan this fsarena can run."""
    session = load(path)
    if session.status == "complete":
        raise FsarenaError(f"{path} is complete; there is nothing to resume (`fsarena report`)")
    plan = session.plan
    planned = len(plan.filesystems) * len(plan.tasks)
    went_through = len(session.runs) >= planned * (plan.repetitions or 1)
    if session.status == "partial" or (session.status == "failed" and went_through):
        # It went through its whole plan: resuming would redo nothing.
        raise FsarenaError(
            f"{path} went through its whole plan ({session.status}); there is nothing to "
            f"resume: fix what `fsarena report {path}` names at its top, then start a new run"
        )
    plan_of(session, path)
    return session


def _known(name: str, plan: Plan) -> bool:
    """Whether a name is a profile here: built in, a variant of the plan, either NAME@DRIVER."""
    try:
        plan.profile(name)
    except FsarenaError:
        return False
    return True


def plan_of(session: Session, path: Path) -> Plan:
    """The plan a session was run with, checked against this fsarena's tasks and filesystems."""
    stored = session.plan.model_dump(mode="json")  # as stored: the keys this fsarena reads
    raw = {k: v for k, v in stored.items() if k in Plan.model_fields}
    try:
        plan = Plan.model_validate(raw)
    except ValidationError as exc:
        raise FsarenaError(
            f"{path}: its plan cannot be read by this fsarena: {exc.errors()[0]['msg']}"
        ) from None
    unknown = [t for t in plan.tasks if t not in TASKS and t not in plan.commands]
    unknown += [f for f in plan.filesystems if not _known(f, plan)]
    if unknown:
        raise FsarenaError(
            f"{path} names {', '.join(unknown)}, unknown to this fsarena; "
            "resume it with the fsarena that started it, or start a new run"
        )
    return plan


def _differences(label: str, old: Any, new: Any) -> list[str]:
    if old == new:
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
        return [f"{label} {k}: {old.get(k)!r} then, {new.get(k)!r} now" for k in keys]
    return [f"{label}: {old!r} then, {new!r} now"]


def mismatches(recorded: Session, fresh: Session) -> list[str]:
    """What differs between the session as recorded and the same plan set up today."""
    # Compared as stored (JSON: tuples become lists), never as in memory.
    old, new = recorded.model_dump(mode="json"), fresh.model_dump(mode="json")
    found = _differences("fsarena version", old["tool_version"], new["tool_version"])
    found += _differences("kernel", recorded.host.kernel, fresh.host.kernel)
    found += _differences("plan", old["plan"], new["plan"])
    found += _differences("tool", old["tool_versions"], new["tool_versions"])
    # The same device path may name another disk today: compare what identifies it.
    ident = ("path", "size_bytes", "model", "serial")
    found += _differences(
        "device",
        {k: v for k, v in old["target"].items() if k in ident},
        {k: v for k, v in new["target"].items() if k in ident},
    )
    profiles_old, profiles_new = old["profiles_as_run"], new["profiles_as_run"]
    for name in sorted(profiles_old.keys() | profiles_new.keys()):
        found += _differences(
            f"profile {name}", profiles_old.get(name, {}), profiles_new.get(name, {})
        )
    return found


def check_unchanged(recorded: Session, fresh: Session, path: Path) -> None:
    found = mismatches(recorded, fresh)
    if found:
        raise FsarenaError(
            f"{path} cannot be resumed: {'; '.join(found[:5])}"
            + (f" (and {len(found) - 5} more)" if len(found) > 5 else "")
            + "; its measurements would not be comparable: start a new run"
        )


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
