"""The aging phase inside a run: the plan each filesystem is aged with, its snapshot, its record.

The first aged sequence of a filesystem ages it and snapshots the image
(FsSequence.age); every later aged repetition restores that snapshot. The
snapshots are removed when the run ends. A guest kernel's filesystem is aged
inside its guest (aging.runtime) and its image snapshotted the same way, on the
host, while the guest has it unmounted.
"""

from __future__ import annotations

from functools import partial

from fsarena.aging.device import device_class
from fsarena.aging.gitreplay import HOST_COPY
from fsarena.aging.workload import AgingPlan
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.run.events import Event
from fsarena.run.scope import RunScope
from fsarena.run.sequence import FsSequence
from fsarena.session.records import AgingRecord


def aging_plan(scope: RunScope, profile: FilesystemProfile) -> AgingPlan | None:
    age = scope.plan.age
    if age is None:
        return None
    return AgingPlan(age, scope.plan.image_size_for(profile), scope.plan.seed)


def snapshot_path(scope: RunScope, profile: FilesystemProfile) -> str:
    return scope.workdir("images", f"{profile.name}-aged-s{scope.plan.seed}.snapshot")


def remove_snapshots(scope: RunScope) -> None:
    """The aged images' snapshots, and git replay's host copy: nothing of aging outlives a run."""
    for profile in scope.plan.profiles() if scope.plan.age is not None else ():
        path = snapshot_path(scope, profile)
        scope.undo(f"remove the aged snapshot {path}", partial(scope.executor.remove_path, path))
    copy = scope.workdir("scratch", HOST_COPY)
    if scope.plan.age is not None and scope.plan.age.kind == "git-replay":
        what = f"remove git replay's host copy {copy}"
        scope.undo(what, partial(scope.executor.remove_path, copy))


def age(scope: RunScope, sequence: FsSequence, label: str, snapshot: str) -> AgingRecord:
    """Age the filesystem once, snapshot it, and keep its record in the session.

    Raises what aging raised (FsarenaError, OSError): the caller records the
    sequence as failed.
    """
    ctx = sequence.ctx
    scope.say(Event("setup", f"aging {ctx.profile.name} ({label})"))
    scope.executor.track("image", snapshot)  # `fsarena cleanup` removes it after a crash
    record = sequence.age(snapshot)
    record["device_class"] = device_class(ctx.device)  # what the effects are set beside
    aged = AgingRecord.model_validate(record)
    if earlier := scope.session.aging.get(ctx.profile.name):  # --device ages every time
        aged.aged_times = earlier.aged_times + 1
        aged.same_as_before = aged.manifest_digest == earlier.manifest_digest
    scope.session.aging[ctx.profile.name] = aged
    if record["stopped_by"] == "time":
        scope.session.warn(
            "aging",
            f"{ctx.profile.name}: churn stopped at its time cap after "
            f"{record['bytes_written'] / 1e9:.1f} GB, so its file set differs from the "
            "fresh copy's: raise time_cap_s or lower written_factor",
        )
    scope.save()
    rate = record["bytes_written"] / max(record["wall_s"], 1e-9) / 1e6
    scope.say(
        Event("setup", f"aged {ctx.profile.name}: {record['wall_s']:.0f} s, {rate:,.0f} MB/s")
    )
    return aged
