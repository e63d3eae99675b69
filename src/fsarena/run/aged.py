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
from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.run.sequence import FsSequence, RunnerSteps
from fsarena.run.sessions import Event
from fsarena.session.records import AgingRecord


def aging_plan(runner: RunnerSteps, profile: FilesystemProfile) -> AgingPlan | None:
    age = runner.plan.age
    if age is None:
        return None
    return AgingPlan(age, runner.plan.image_size_for(profile), runner.plan.seed)


def snapshot_path(runner: RunnerSteps, profile: FilesystemProfile) -> str:
    return runner._workdir("images", f"{profile.name}-aged-s{runner.plan.seed}.snapshot")


def remove_snapshots(runner: RunnerSteps) -> None:
    """The aged images' snapshots, and git replay's host copy: nothing of aging outlives a run."""
    for profile in runner.plan.profiles() if runner.plan.age is not None else ():
        path = snapshot_path(runner, profile)
        runner.undo(f"remove the aged snapshot {path}", partial(runner.executor.remove_path, path))
    copy = runner._workdir("scratch", HOST_COPY)
    if runner.plan.age is not None and runner.plan.age.kind == "git-replay":
        what = f"remove git replay's host copy {copy}"
        runner.undo(what, partial(runner.executor.remove_path, copy))


def age(runner: RunnerSteps, sequence: FsSequence, label: str, snapshot: str) -> bool:
    """Age the filesystem once and snapshot it; False (runs recorded) if that failed."""
    ctx = sequence.ctx
    runner.on_event(Event("setup", f"aging {ctx.profile.name} ({label})"))
    runner.executor.track("image", snapshot)  # `fsarena cleanup` removes it after a crash
    try:
        record = sequence.age(snapshot)
    except (FsarenaError, OSError) as exc:
        runner._record_all(label, sequence.repetition, f"aging failed: {exc}", "failed")
        return False
    record["device_class"] = device_class(ctx.device)  # what the effects are set beside
    aged = AgingRecord.model_validate(record)
    if earlier := runner.session.aging.get(ctx.profile.name):  # --device ages every time
        aged.aged_times = earlier.aged_times + 1
        aged.same_as_before = aged.manifest_digest == earlier.manifest_digest
    runner.session.aging[ctx.profile.name] = aged
    if record["stopped_by"] == "time":
        runner.session.warn(
            "aging",
            f"{ctx.profile.name}: churn stopped at its time cap after "
            f"{record['bytes_written'] / 1e9:.1f} GB, so its file set differs from the "
            "fresh copy's: raise time_cap_s or lower written_factor",
        )
    runner._save()
    rate = record["bytes_written"] / max(record["wall_s"], 1e-9) / 1e6
    runner.on_event(
        Event("setup", f"aged {ctx.profile.name}: {record['wall_s']:.0f} s, {rate:,.0f} MB/s")
    )
    return True
