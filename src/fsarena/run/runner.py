"""The loop: for each repetition, each filesystem in shuffled order, the whole task sequence.

Order of operations (tested with a fake executor):
  source: mount source, generate datasets
  per repetition (round):
    the device's ceiling: a fresh image and loop device, fio write then read
    (see ceiling.py), detached and deleted
    per filesystem (order shuffled with the plan's seed):
    create image, attach loop device
    per task: bring the filesystem to the state the task needs (untimed),
              prepare, sync + drop caches, timed commands (+ syncfs if it
              writes), verify, save the session
    unmount if still mounted, detach, delete the image
  unmount and remove the source
A failed task ends its sequence (the rest are recorded as skipped, with the
reason), and the run goes on with the next filesystem. Faults are data: a
target that cannot be set up, a filesystem this host cannot run, a tool that
is missing or a full target is recorded on its runs with the reason
(faults.py), never raised.

Repetitions: the plan's number, then, with a target CI (adaptive), more whole
rounds while any timed task is less precise than the target, up to the
plan's maximum and within its time budget (see adaptive.py). Each round's
order is drawn from one seeded stream, so the first N orders are the same
whether or not the run was adaptive.

A sequence (one repetition of one filesystem) is the unit of resumption: a
resumed session skips the sequences it has complete and redoes an unfinished
one from mkfs, replacing its partial runs. Its orders come again from the
seed's stream, so they are the ones it was run in.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from fsarena import __version__
from fsarena.aging.phase import age_mounted, snapshot
from fsarena.aging.workload import AgingPlan
from fsarena.analysis.adaptive import imprecise, undecided, undecided_message, unstable_message
from fsarena.datasets.core import DatasetSpec, Manifest
from fsarena.datasets.gitrepo import GitRepoSpec, make_repo
from fsarena.datasets.linux_source import TarballSpec
from fsarena.datasets.realistic import histogram
from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.measure.core import Command, Measurement, metric_value
from fsarena.measure.executor import Executor
from fsarena.plan.core import Plan
from fsarena.run.faults import explain
from fsarena.session.records import (
    AgingRecord,
    DatasetRecord,
    DatasetSpecRecord,
    RoundTiming,
    SourceRecord,
)
from fsarena.session.store import CheckRecord, Run, RunStatus, Session, save
from fsarena.targets import (
    GuestSourceDisk,
    LoopTarget,
    Source,
    ceiling_target,
    make_target,
    sequence_executor,
)
from fsarena.targets.ceiling import TOLERANCE, ceiling_bytes, measure_ceiling
from fsarena.targets.source import source_size_bytes
from fsarena.tasks import FsState, SourceDataset, Task, TaskContext
from fsarena.tasks.base import Unsupported
from fsarena.tasks.lifecycle import Mkfs, Mount, Umount

MIN_ROUNDS = 2  # a decisive run's budget may stop it here: the fewest rounds with an interval
_OF_A_TREE = (TarballSpec, GitRepoSpec)  # datasets made from a tree dataset, after it


@dataclass(frozen=True)
class Event:
    """Progress, for whoever displays it (the CLI); the runner never prints."""

    kind: str  # "setup" | "round" | "sequence" | "run" | "done"
    message: str
    run: Run | None = None


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def order_stream(filesystems: list[str], seed: int) -> Iterator[list[str]]:
    """Filesystem order per repetition, shuffled so drift favours none; reproducible by seed."""
    rng = random.Random(seed)
    while True:
        order = list(filesystems)
        rng.shuffle(order)
        yield order


def shuffled_orders(filesystems: list[str], repetitions: int, seed: int) -> list[list[str]]:
    """The first `repetitions` orders of the seed's stream."""
    return list(itertools.islice(order_stream(filesystems, seed), repetitions))


@dataclass
class Runner:
    plan: Plan
    executor: Executor
    session: Session
    session_path: Path
    source_kind: str  # "tmpfs" | "image", chosen by the caller
    on_event: Callable[[Event], None] = lambda event: None
    clock: Callable[[], float] = time.monotonic
    unavailable: Mapping[str, str] = field(default_factory=dict)  # filesystem -> why not here
    _guest_source: GuestSourceDisk | None = None
    _started: float = 0.0

    def run(self) -> Session:
        done = finished_sequences(self.session, self.plan.tasks)
        self.session.order = []  # regenerated from the seed: a resumed session gets its own
        self.session.status = "running"
        self._save()
        started = self._started = self.clock()
        try:
            with ExitStack() as stack:
                stack.callback(self._remove_snapshots)
                datasets = self._prepare_source(stack)
                self.session.timing.setup_s = self.clock() - started
                if self.plan.warmup_rounds and not self.session.warmup:
                    self._round(0, list(self.plan.filesystems), datasets, set(), warmup=True)
                for repetition, order in self._rounds():
                    self._round(repetition, order, datasets, done)
            self._warn_unstable()
            self.session.status = self.session.settled()
        except KeyboardInterrupt as exc:
            self.session.status = "interrupted"
            self._stopped(f"interrupted by {exc.args[0] if exc.args else 'SIGINT'}")
            raise
        except BaseException as exc:
            self.session.status = "failed"
            self._stopped(f"stopped by an error: {exc or type(exc).__name__}")
            raise
        finally:
            self.session.finished_at = now()
            self.session.timing.total_s = self.clock() - started
            self._save()
        self.on_event(Event("done", f"session saved to {self.session_path}"))
        return self.session

    def _save(self) -> None:
        save(self.session, self.session_path)

    def _stopped(self, why: str) -> None:
        """Record why the run ended early, so a session with no runs still says why."""
        runs = len(self.session.runs)
        self.session.warn("stopped", f"{why}, after {runs} of {self._planned()} runs")

    def _planned(self) -> int:
        reps = max(self.plan.repetitions, len(self.session.order))
        return len(self.plan.sequences()) * len(self.plan.tasks) * reps

    def _round(
        self,
        repetition: int,
        order: list[str],
        datasets: dict[str, SourceDataset],
        done: set[tuple[str, int]],
        warmup: bool = False,
    ) -> None:
        """One round: the ceiling (or its drift check), then each filesystem's sequence."""
        todo = [name for name in order if (name, repetition) not in done]
        if not todo:
            return
        started = self.clock()
        runs_before = len(self._runs(warmup))
        self._measure_ceiling(repetition)
        for name in todo:
            self._run_sequence(name, repetition, datasets, warmup)
        timed = sum(r.timed_s for r in self._runs(warmup)[runs_before:])
        self.session.timing.rounds.append(
            RoundTiming(
                repetition=repetition, warmup=warmup, wall_s=self.clock() - started, timed_s=timed
            )
        )
        self._save()

    def _runs(self, warmup: bool) -> list[Run]:
        """Where a round's runs are kept: the warm-up round's apart, never a sample."""
        return self.session.warmup if warmup else self.session.runs

    def _rounds(self) -> Iterator[tuple[int, list[str]]]:
        """(repetition, filesystem order): the plan's repetitions, then adaptive ones.

        A decisive run's budget bounds the whole run: past MIN_ROUNDS (the fewest
        with an interval) it cuts even the plan's repetitions short.
        """
        orders = order_stream(self.plan.sequences(), self.plan.seed)
        for repetition in itertools.count(1):
            done = repetition - 1
            if repetition > self.plan.repetitions and not self._want_more(done):
                return
            if self.plan.decisive and done >= MIN_ROUNDS and not self._fits():
                return
            order = next(orders)
            self.session.order.append(order)
            self._save()
            self.on_event(Event("round", f"repetition {repetition}"))
            yield repetition, order

    def _fits(self) -> bool:
        """Whether another round ends within the time budget (none: always)."""
        if self.plan.time_budget_s is None:
            return True
        # A round costs about what the slowest of the last rounds cost; the budget
        # counts from the start of the run (set-up and warm-up included: what one waits).
        rounds = [r.wall_s for r in self.session.timing.rounds]
        per_round = max(rounds[-3:], default=0.0)
        return self.clock() - self._started + per_round <= self.plan.time_budget_s

    def _want_more(self, done: int) -> bool:
        """Another round, if adaptive and some verdict or task is still open within the limits."""
        plan = self.plan
        adaptive = plan.target_ci_pct is not None or plan.decisive
        if not adaptive or done >= plan.max_repetitions_or_default or not self._fits():
            return False
        if plan.decisive and undecided(self.session):
            return True
        return plan.target_ci_pct is not None and bool(
            imprecise(self.session, plan.target_ci_pct / 100)
        )

    def _measure_ceiling(self, repetition: int) -> None:
        """fio's raw write and read once per session; later rounds, one short write (drift)."""
        drift = any(c.kind == "full" for c in self.session.ceilings)
        size = max(self.plan.image_size_for(p) for p in self.plan.profiles())
        target = ceiling_target(self.plan, repetition, size)
        largest = max(
            (n for spec in self.plan.dataset_specs().values() for _, n in spec.plan().files),
            default=0,
        )
        self.executor.make_dir(self._workdir("scratch"))
        try:
            samples = measure_ceiling(
                self.executor,
                target,
                ceiling_bytes(largest, size),
                self._workdir("scratch", "fio.json"),
                self.plan.task_timeout_s,
                repetition,
                drift,
            )
        except FsarenaError as exc:
            # Faults are data: without a ceiling, runs are only not checked against it.
            self.session.warn(
                "ceiling", f"could not measure the device's ceiling: {exc}; no run is checked"
            )
            return
        self.session.ceilings.extend(samples)
        self._save()
        for c in samples:
            self.on_event(
                Event("setup", f"device ceiling, {c.direction}: {c.bytes_per_s / 1e6:,.0f} MB/s")
            )

    def _warn_unstable(self) -> None:
        """Name the kinds left undecided, or the tasks above the target CI, and the fix."""
        if self.plan.decisive and (open_kinds := undecided(self.session)):
            rounds = [r.wall_s for r in self.session.timing.rounds]
            per_round = max(rounds[-3:], default=0.0)
            message = undecided_message(open_kinds, len(self.session.order), per_round)
            self.session.warn("undecided", message)
        if self.plan.target_ci_pct is None:
            return
        target = self.plan.target_ci_pct / 100
        items = imprecise(self.session, target)
        if items:
            self.session.warn("unstable", unstable_message(items, target))

    def _workdir(self, *parts: str) -> str:
        return str(Path(self.plan.workdir, *parts))

    def undo(self, what: str, action: Callable[[], None]) -> None:
        """Run one teardown step; a failure becomes a warning, and the other steps still run.

        What could not be undone stays in the ledger, for `fsarena cleanup`.
        """
        try:
            action()
        except (FsarenaError, OSError) as exc:
            self.session.warn(
                "teardown",
                f"could not {what}: {exc}; run `fsarena cleanup --workdir {self.plan.workdir}`",
            )

    def _resolved_specs(self) -> tuple[dict[str, DatasetSpec], dict[str, str]]:
        """The plan's datasets as they will be made (e.g. the real kernel tree), and origins."""
        specs, origins = {}, {}
        for name, planned in self.plan.dataset_specs().items():
            specs[name], origins[name] = self.executor.resolve_dataset(
                planned, self._workdir("cache")
            )
        for name, spec in specs.items():  # a tarball is as big as the tree it archives
            if isinstance(spec, TarballSpec | GitRepoSpec):
                specs[name] = replace(spec, source_bytes=specs[spec.of].total_bytes)
            if isinstance(spec, GitRepoSpec):
                origins[name] = f"git history built from dataset {spec.of} ({origins[spec.of]})"
        return specs, origins

    def _prepare_source(self, stack: ExitStack) -> dict[str, SourceDataset]:
        specs, origins = self._resolved_specs()
        data_bytes = source_bytes(specs)
        files = sum(len(s.plan().files) for s in specs.values() if s.on_source)
        size = source_size_bytes(data_bytes, files)
        source = Source(
            self.source_kind, self._workdir("source"), size, self._workdir("source.img")
        )
        stack.callback(
            self.undo, "remove the dataset source", lambda: source.teardown(self.executor)
        )
        self.on_event(
            Event("setup", f"source: {source.kind}, {data_bytes / 1e6:.0f} MB of datasets")
        )
        source.setup(self.executor)
        self.session.source = SourceRecord.model_validate(source.describe())
        self._guest_source = self._prepare_guest_source(stack, source)
        found: dict[str, SourceDataset] = {}
        # Trees first: tarballs archive them, git repositories commit them.
        for name, spec in sorted(specs.items(), key=lambda kv: isinstance(kv[1], _OF_A_TREE)):
            origin = origins[name]
            self.on_event(
                Event("setup", f"dataset {name}: {origin} ({spec.total_bytes / 1e6:.0f} MB)")
            )
            manifest = self._materialize(spec, source.mountpoint, found)
            found[name] = SourceDataset(f"{source.mountpoint}/{spec.name}", manifest, spec)
            _check_same_dataset(self.session.datasets.get(name), name, manifest.digest())
            self.session.datasets[name] = DatasetRecord(
                spec=DatasetSpecRecord.model_validate(spec.to_dict()),
                spec_hash=spec.spec_hash(),
                manifest_digest=manifest.digest(),
                files=len(manifest.files),
                directories=len(manifest.directories),
                total_bytes=manifest.total_bytes,
                origin=origin,
                size_histogram=histogram([f.size_bytes for f in manifest.files]),
            )
        self._save()
        if self._guest_source is not None:
            self.on_event(Event("setup", "datasets disk for guests"))
            self._guest_source.setup(self.executor)
        return found

    def _materialize(
        self, spec: DatasetSpec, dest: str, found: dict[str, SourceDataset]
    ) -> Manifest:
        """Write the dataset on the source, or only compute what a task will make itself."""
        if isinstance(spec, TarballSpec):
            tree = found[spec.of]
            return self.executor.make_tarball(
                spec, dest, tree.manifest, dest, self._workdir("cache")
            )
        if isinstance(spec, GitRepoSpec):
            tree = found[spec.of]
            cache = Path(self._workdir("cache"))
            return make_repo(spec, Path(tree.root), tree.manifest, Path(dest), cache)
        if not spec.on_source:
            return spec.expected_manifest()
        return self.executor.generate_dataset(spec, dest, self._workdir("cache"))

    def _prepare_guest_source(self, stack: ExitStack, source: Source) -> GuestSourceDisk | None:
        """Guests read the datasets from a disk image of their own; none if no guest runs."""
        if not any(p.guest for p in self.plan.profiles()):
            return None
        disk = GuestSourceDisk(
            self._workdir("guest-source.img"), source.mountpoint, source.size_bytes
        )
        stack.callback(disk.teardown, self.executor)
        return disk

    def _run_sequence(
        self,
        label: str,
        repetition: int,
        datasets: dict[str, SourceDataset],
        warmup: bool = False,
    ) -> None:
        profile = self.plan.profile(label)
        aged = label != profile.name
        what = "warm-up" if warmup else f"repetition {repetition}"
        self.on_event(Event("sequence", f"{what}: {label}"))
        # An unfinished earlier attempt (a resumed session) is redone whole.
        key = (label, repetition)
        kept = [r for r in self._runs(warmup) if (r.filesystem, r.repetition) != key]
        self._runs(warmup)[:] = kept
        if profile.name in self.unavailable:
            self._record_all(
                label,
                repetition,
                f"filesystem unavailable: {self.unavailable[profile.name]}",
                "skipped",
            )
            return
        if aged and profile.driver == "guest":
            why = "aging inside a guest kernel is not implemented yet; aged only on the host"
            self._record_all(label, repetition, why, "skipped")
            return
        snapshot = self._snapshot_path(profile) if aged else None
        restore = snapshot if snapshot and os.path.exists(snapshot) else None
        target = make_target(self.plan, profile, repetition, self._guest_source, restore, label)
        mountpoint = self._workdir("mnt", label)
        with ExitStack() as stack:
            stack.callback(self.undo, "release the target", lambda: target.teardown(self.executor))
            try:
                device = target.setup(self.executor)
            except FsarenaError as exc:
                self._record_all(label, repetition, f"target setup failed: {exc}", "failed")
                return
            # A guest driver's sequence runs inside the guest, through its executor.
            executor = sequence_executor(target, self.executor)
            ctx = TaskContext(
                profile=profile,
                device=device,
                mountpoint=mountpoint,
                scratch=self._workdir("scratch"),
                datasets=datasets,
                executor=executor,
                artifacts_dir=str(self.session_path.with_suffix("")) + "-files",
                aging=self._aging_plan(profile),
            )
            executor.make_dir(ctx.scratch)
            image = target.image if isinstance(target, LoopTarget) else ""
            sequence = _Sequence(
                self, ctx, repetition, warmup=warmup, label=label, aged=aged, image=image
            )
            self.executor.track("mount", mountpoint)
            stack.callback(self.undo, f"unmount {mountpoint}", sequence.unmount)
            if restore is not None:
                sequence.state = FsState.UNMOUNTED  # the aged filesystem, as snapshotted
            elif snapshot is not None and not self._age(sequence, label, snapshot):
                return
            sequence.run_all()

    def _aging_plan(self, profile: FilesystemProfile) -> AgingPlan | None:
        age = self.plan.age
        if age is None:
            return None
        return AgingPlan(age, self.plan.image_size_for(profile), self.plan.seed)

    def _snapshot_path(self, profile: FilesystemProfile) -> str:
        return self._workdir("images", f"{profile.name}-aged-s{self.plan.seed}.snapshot")

    def _remove_snapshots(self) -> None:
        for profile in self.plan.profiles() if self.plan.age is not None else ():
            path = self._snapshot_path(profile)
            self.undo(f"remove the aged snapshot {path}", partial(self.executor.remove_path, path))

    def _age(self, sequence: _Sequence, label: str, snapshot: str) -> bool:
        """Age the filesystem once and snapshot it; False (runs recorded) if that failed."""
        ctx = sequence.ctx
        self.on_event(Event("setup", f"aging {ctx.profile.name} ({label})"))
        self.executor.track("image", snapshot)  # `fsarena cleanup` removes it after a crash
        try:
            record = sequence.age(snapshot)
        except (FsarenaError, OSError) as exc:
            self._record_all(label, sequence.repetition, f"aging failed: {exc}", "failed")
            return False
        self.session.aging[ctx.profile.name] = AgingRecord.model_validate(record)
        if record["stopped_by"] == "time":
            self.session.warn(
                "aging",
                f"{ctx.profile.name}: churn stopped at its time cap after "
                f"{record['bytes_written'] / 1e9:.1f} GB, so its file set differs from the "
                "fresh copy's: raise time_cap_s or lower written_factor",
            )
        self._save()
        rate = record["bytes_written"] / max(record["wall_s"], 1e-9) / 1e6
        self.on_event(
            Event("setup", f"aged {ctx.profile.name}: {record['wall_s']:.0f} s, {rate:,.0f} MB/s")
        )
        return True

    def _record_all(self, label: str, repetition: int, why: str, status: RunStatus) -> None:
        """A sequence that could not start: its first task carries the reason, the rest follow."""
        code, reason = explain(why)
        # The reason once, on the first task; the others point at it, as the runs
        # after a failed task do ("not run: mkfs failed earlier").
        pointer = f"not run: {why.split(':')[0]} (see {self.plan.tasks[0]})"
        for i, name in enumerate(self.plan.tasks):
            error = reason if i == 0 else pointer
            self.record(
                Run(
                    filesystem=label,
                    task=name,
                    repetition=repetition,
                    started_at=now(),
                    status=status if i == 0 else "skipped",
                    error=error,
                    fault=code,
                )
            )

    def record(self, run: Run, warmup: bool = False) -> None:
        self._runs(warmup).append(run)
        self._save()
        self.on_event(Event("run", f"{run.filesystem} {run.task}: {run.status}", run))


@dataclass(frozen=True)
class _Outcome:
    """What one task produced; ok when nothing failed."""

    error: str = ""
    measurement: Measurement | None = None
    values: dict[str, float] = field(default_factory=dict)
    checks: list[CheckRecord] = field(default_factory=list)
    invalid: str = ""  # why the figure cannot be right, though the task did its job
    details: dict[str, Any] = field(default_factory=dict)
    skipped: str = ""  # why this filesystem or machine cannot run the task (Unsupported)
    repeats: list[Measurement] = field(default_factory=list)  # earlier timed executions

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def status(self) -> RunStatus:
        if self.skipped:
            return "skipped"
        if self.error:
            return "failed"
        return "invalid" if self.invalid else "ok"


@dataclass
class _Sequence:
    """One repetition of the task list on one fresh filesystem."""

    runner: Runner
    ctx: TaskContext
    repetition: int
    state: FsState = FsState.BLANK
    warmup: bool = False
    label: str = ""  # what its runs are recorded as ("ext4+churn" when aged)
    aged: bool = False
    image: str = ""  # the loop image file, if the target is one (aging snapshots it)

    def run_all(self) -> None:
        stopped_by = ""
        for name in self.runner.plan.tasks:
            task = self.runner.plan.task_class(name)()
            if self.aged and task.formats:
                why = "not applicable: an aged filesystem is restored from its snapshot, never made"
                self._record(task, "skipped", _Outcome(skipped=why), now())
                continue
            if stopped_by:
                skipped = _Outcome(error=f"not run: {stopped_by} failed earlier")
                self._record(task, "skipped", skipped, now())
                continue
            if why := task.unsupported(self.ctx):  # the rest of the sequence still runs
                self._record(task, "skipped", _Outcome(skipped=f"not supported here: {why}"), now())
                continue
            if not self._execute(task):
                stopped_by = name

    def _record(self, task: Task, status: RunStatus, outcome: _Outcome, started: str) -> None:
        code, error = explain(outcome.error) if status == "failed" else ("", outcome.error)
        if outcome.skipped:
            code = "unsupported"  # not a failure: this filesystem cannot run the task
        self.runner.record(
            Run(
                filesystem=self.label or self.ctx.profile.name,
                task=task.name,
                repetition=self.repetition,
                started_at=started,
                status=status,
                error=error or outcome.invalid or outcome.skipped,
                fault=code,
                measurement=outcome.measurement,
                values=outcome.values,
                checks=outcome.checks,
                details=outcome.details,
                repeats=outcome.repeats,
            ),
            self.warmup,
        )

    def _execute(self, task: Task) -> bool:
        started = now()
        try:
            self._reach(task.requires)
            task.prepare(self.ctx)
            self.ctx.executor.drop_caches()
            outcome = self._measure(task)
        except Unsupported as exc:
            outcome = _Outcome(skipped=f"not supported here: {exc}")
        except FsarenaError as exc:
            outcome = _Outcome(error=str(exc))
        except OSError as exc:
            # fsarena's own untimed work on the target (mkdir, verify, listing count).
            where = f" ({exc.filename})" if exc.filename else ""
            outcome = _Outcome(error=f"{exc.strerror or exc}{where}")
        finally:
            try:
                task.cleanup(self.ctx)
            except FsarenaError as exc:
                outcome = _Outcome(error=f"cleanup failed: {exc}")
        ok = outcome.ok
        if ok and task.leaves is not None:
            self.state = task.leaves
        self._warn_page_cache(task, outcome)  # saved with the run, below
        self._record(task, outcome.status, outcome, started)
        return ok

    def _warn_page_cache(self, task: Task, outcome: _Outcome) -> None:
        """Say when a task's working set fits in the page cache it may use (see cache_values)."""
        extra = outcome.measurement.extra if outcome.measurement else {}
        if extra.get("fits_page_cache") != 1.0:
            return
        self.runner.session.warn(
            "fits_page_cache",
            f"{task.name}: its working set ({extra['working_set_bytes'] / 1e6:,.0f} MB) fits in "
            f"the {extra['page_cache_limit_bytes'] / 1e6:,.0f} MB of page cache it may use at "
            f"scale {self.runner.plan.scale:g}, so it measures memory more than the "
            "filesystem: use a larger --scale for a disk-bound figure",
        )

    def _measure(self, task: Task) -> _Outcome:
        if not task.timed:
            return _Outcome(values=task.probe(self.ctx), details=task.details())
        commands = task.commands(self.ctx)
        if task.writes:
            # syncfs(2) of the test filesystem, inside the timed region (or sync(2)
            # where the driver ignores syncfs: the profile says which).
            commands.append(Command(self.ctx.profile.sync_argv(self.ctx.mountpoint)))
        timeout = self.runner.plan.task_timeout_s
        repeats: list[Measurement] = []
        while True:
            timed = self.ctx.executor.measure(commands, self.ctx.device, timeout)
            m = timed.measurement
            if m.timed_out:
                return _Outcome(error=f"timed out after {timeout:.0f} s", measurement=m)
            if m.exit_code != 0:
                return _Outcome(
                    error=f"exit code {m.exit_code}: {timed.stderr or 'no message'}",
                    measurement=m,
                    repeats=repeats,
                )
            if len(repeats) + 1 >= task.samples:
                break
            # A sub-second task: undo it untimed and time it again (Task.samples); the
            # task's between_samples drops caches where its figure needs them cold.
            repeats.append(m)
            task.between_samples(self.ctx)
        if task.payload is not None:
            m = replace(m, extra={**m.extra, "payload_bytes": task.payload_bytes(self.ctx)})
        # The warm-up is never a sample: its copies go unverified (every real round's are).
        verified = [] if self.warmup else task.verify(self.ctx)
        checks = [CheckRecord(name=c.name, ok=c.ok, detail=c.detail) for c in verified]
        failed = [f"verification failed: {c.name}: {c.detail}" for c in checks if not c.ok]
        if not failed:
            m = replace(m, extra={**m.extra, **task.extra(self.ctx, m)})
        return _Outcome(
            error="; ".join(failed),
            measurement=m,
            checks=checks,
            invalid=self._above_ceiling(task, m),
            repeats=repeats,
        )

    def _above_ceiling(self, task: Task, m: Measurement) -> str:
        """Why the task's throughput cannot be real, or "" when it can."""
        if not self.ctx.profile.on_device:
            return ""  # tmpfs: memory, not the device, sets its pace
        ceiling = self.runner.session.ceiling(task.payload) if task.payload else None
        rate = metric_value(m, "throughput_bytes_per_s")
        if ceiling is None or rate is None or rate <= ceiling * TOLERANCE:
            return ""
        return (
            f"invalid: {rate / 1e6:,.0f} MB/s is {rate / ceiling:.1f}x the device's raw "
            f"{task.payload} ceiling of {ceiling / 1e6:,.0f} MB/s measured by fio, so the data "
            "cannot all have reached the device (cache contamination?); kept but not used"
        )

    def _reach(self, wanted: frozenset[FsState]) -> None:
        """Bring the filesystem to a state the task accepts, untimed."""
        steps: dict[FsState, Task] = {
            FsState.BLANK: Mkfs(),
            FsState.UNMOUNTED: Mount(),
            FsState.MOUNTED: Umount(),
        }
        for _ in range(3):
            if self.state in wanted:
                return
            step = steps[self.state]
            step.prepare(self.ctx)
            for cmd in step.commands(self.ctx):
                self.ctx.executor.call(cmd.argv)
            assert step.leaves is not None
            self.state = step.leaves
        if self.state not in wanted:
            raise FsarenaError(f"cannot bring the filesystem to {sorted(s.value for s in wanted)}")

    def age(self, snapshot_path: str) -> dict[str, Any]:
        """mkfs, mount, age, umount, snapshot: the aged filesystem every repetition restores."""
        assert self.ctx.aging is not None
        self._reach(frozenset({FsState.MOUNTED}))
        record = age_mounted(self.ctx, self.ctx.aging)
        self._reach(frozenset({FsState.UNMOUNTED}))
        if not self.image:
            raise FsarenaError("aging needs a loop image to snapshot")
        return {**record, **snapshot(self.image, snapshot_path)}

    def unmount(self) -> None:
        """Teardown: unmount whatever this sequence left mounted."""
        if self.state is FsState.MOUNTED or self.ctx.executor.is_mounted(self.ctx.mountpoint):
            self.ctx.executor.call(("umount", self.ctx.mountpoint))
            self.state = FsState.UNMOUNTED
        self.runner.executor.untrack("mount", self.ctx.mountpoint)


def finished_sequences(session: Session, tasks: list[str]) -> set[tuple[str, int]]:
    """(filesystem, repetition) whose every task has a run: the unit a resume skips."""
    seen: dict[tuple[str, int], set[str]] = {}
    for run in session.runs:
        seen.setdefault((run.filesystem, run.repetition), set()).add(run.task)
    return {key for key, done in seen.items() if done >= set(tasks)}


def _check_same_dataset(recorded: DatasetRecord | None, name: str, digest: str) -> None:
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
