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
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fsarena import __version__
from fsarena.adaptive import imprecise, unstable_message
from fsarena.ceiling import TOLERANCE, ceiling_bytes, measure_ceiling
from fsarena.datasets import DatasetSpec, Manifest
from fsarena.errors import FsarenaError
from fsarena.executor import Executor
from fsarena.faults import explain
from fsarena.filesystems import FilesystemProfile
from fsarena.gitrepo import GitRepoSpec, make_repo
from fsarena.kernel import TarballSpec
from fsarena.measure import Command, Measurement, metric_value
from fsarena.plan import Plan
from fsarena.realistic import histogram
from fsarena.results import CheckRecord, Run, RunStatus, Session, save
from fsarena.targets import (
    GuestSourceDisk,
    Source,
    ceiling_target,
    make_target,
    sequence_executor,
)
from fsarena.targets.source import source_size_bytes
from fsarena.tasks import FsState, SourceDataset, Task, TaskContext
from fsarena.tasks.lifecycle import Mkfs, Mount, Umount

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

    def run(self) -> Session:
        done = finished_sequences(self.session, self.plan.tasks)
        self.session.order = []  # regenerated from the seed: a resumed session gets its own
        self.session.status = "running"
        self._save()
        try:
            with ExitStack() as stack:
                datasets = self._prepare_source(stack)
                for repetition, order in self._rounds():
                    if any((name, repetition) not in done for name in order):
                        self._measure_ceiling(repetition)
                    for name in order:
                        if (name, repetition) not in done:
                            self._run_sequence(self.plan.profile(name), repetition, datasets)
            self._warn_unstable()
            self.session.status = "complete"
        except KeyboardInterrupt:
            self.session.status = "interrupted"
            raise
        except BaseException:
            self.session.status = "failed"
            raise
        finally:
            self.session.finished_at = now()
            self._save()
        self.on_event(Event("done", f"session saved to {self.session_path}"))
        return self.session

    def _save(self) -> None:
        save(self.session, self.session_path)

    def _rounds(self) -> Iterator[tuple[int, list[str]]]:
        """(repetition, filesystem order): the plan's repetitions, then adaptive ones."""
        started = self.clock()
        orders = order_stream(self.plan.filesystems, self.plan.seed)
        for repetition in itertools.count(1):
            if repetition > self.plan.repetitions and not self._want_more(repetition - 1, started):
                return
            order = next(orders)
            self.session.order.append(order)
            self._save()
            self.on_event(Event("round", f"repetition {repetition}"))
            yield repetition, order

    def _want_more(self, done: int, started: float) -> bool:
        """Another round, if adaptive and some task is still imprecise within the limits."""
        plan = self.plan
        if plan.target_ci_pct is None or done >= plan.max_repetitions_or_default:
            return False
        if plan.time_budget_s is not None:
            elapsed = self.clock() - started
            # A round costs about what the average round so far cost.
            if elapsed + elapsed / done > plan.time_budget_s:
                return False
        return bool(imprecise(self.session, plan.target_ci_pct / 100))

    def _measure_ceiling(self, repetition: int) -> None:
        """fio's raw sequential write and read on the loop setup the filesystems get."""
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
        """Name the tasks that stayed above the target CI, with what to do about it."""
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
        self.session.source = source.describe()
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
            self.session.datasets[name] = {
                "spec": spec.to_dict(),
                "spec_hash": spec.spec_hash(),
                "manifest_digest": manifest.digest(),
                "files": len(manifest.files),
                "directories": len(manifest.directories),
                "total_bytes": manifest.total_bytes,
                "origin": origin,
                "size_histogram": histogram([f.size_bytes for f in manifest.files]),
            }
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
        self, profile: FilesystemProfile, repetition: int, datasets: dict[str, SourceDataset]
    ) -> None:
        self.on_event(Event("sequence", f"repetition {repetition}: {profile.name}"))
        # An unfinished earlier attempt (a resumed session) is redone whole.
        key = (profile.name, repetition)
        self.session.runs = [r for r in self.session.runs if (r.filesystem, r.repetition) != key]
        if profile.name in self.unavailable:
            self._record_all(
                profile,
                repetition,
                f"filesystem unavailable: {self.unavailable[profile.name]}",
                "skipped",
            )
            return
        target = make_target(self.plan, profile, repetition, self._guest_source)
        mountpoint = self._workdir("mnt", profile.name)
        with ExitStack() as stack:
            stack.callback(self.undo, "release the target", lambda: target.teardown(self.executor))
            try:
                device = target.setup(self.executor)
            except FsarenaError as exc:
                self._record_all(profile, repetition, f"target setup failed: {exc}", "failed")
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
            )
            executor.make_dir(ctx.scratch)
            sequence = _Sequence(self, ctx, repetition)
            self.executor.track("mount", mountpoint)
            stack.callback(self.undo, f"unmount {mountpoint}", sequence.unmount)
            sequence.run_all()

    def _record_all(
        self, profile: FilesystemProfile, repetition: int, why: str, status: RunStatus
    ) -> None:
        """A sequence that could not start: its first task carries the reason, the rest follow."""
        for i, name in enumerate(self.plan.tasks):
            error = why if i == 0 else f"not run: {why}"
            code, error = explain(error)
            self.record(
                Run(
                    filesystem=profile.name,
                    task=name,
                    repetition=repetition,
                    started_at=now(),
                    status=status if i == 0 else "skipped",
                    error=error,
                    fault=code,
                )
            )

    def record(self, run: Run) -> None:
        self.session.runs.append(run)
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

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def status(self) -> RunStatus:
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

    def run_all(self) -> None:
        stopped_by = ""
        for name in self.runner.plan.tasks:
            task = self.runner.plan.task_class(name)()
            if stopped_by:
                skipped = _Outcome(error=f"not run: {stopped_by} failed earlier")
                self._record(task, "skipped", skipped, now())
                continue
            if why := task.unsupported(self.ctx):  # the rest of the sequence still runs
                self._record(task, "skipped", _Outcome(error=f"not supported: {why}"), now())
                continue
            if not self._execute(task):
                stopped_by = name

    def _record(self, task: Task, status: RunStatus, outcome: _Outcome, started: str) -> None:
        code, error = explain(outcome.error) if status == "failed" else ("", outcome.error)
        self.runner.record(
            Run(
                filesystem=self.ctx.profile.name,
                task=task.name,
                repetition=self.repetition,
                started_at=started,
                status=status,
                error=error or outcome.invalid,
                fault=code,
                measurement=outcome.measurement,
                values=outcome.values,
                checks=outcome.checks,
                details=outcome.details,
            )
        )

    def _execute(self, task: Task) -> bool:
        started = now()
        try:
            self._reach(task.requires)
            task.prepare(self.ctx)
            self.ctx.executor.drop_caches()
            outcome = self._measure(task)
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
        self._record(task, outcome.status, outcome, started)
        return ok

    def _measure(self, task: Task) -> _Outcome:
        if not task.timed:
            return _Outcome(values=task.probe(self.ctx), details=task.details())
        commands = task.commands(self.ctx)
        if task.writes:
            # syncfs(2) of the test filesystem, inside the timed region (or sync(2)
            # where the driver ignores syncfs: the profile says which).
            commands.append(Command(self.ctx.profile.sync_argv(self.ctx.mountpoint)))
        timeout = self.runner.plan.task_timeout_s
        timed = self.ctx.executor.measure(commands, self.ctx.device, timeout)
        m = timed.measurement
        if m.timed_out:
            return _Outcome(error=f"timed out after {timeout:.0f} s", measurement=m)
        if m.exit_code != 0:
            return _Outcome(
                error=f"exit code {m.exit_code}: {timed.stderr or 'no message'}", measurement=m
            )
        if task.payload is not None:
            m = replace(m, extra={**m.extra, "payload_bytes": task.payload_bytes(self.ctx)})
        checks = [CheckRecord(name=c.name, ok=c.ok, detail=c.detail) for c in task.verify(self.ctx)]
        failed = [f"verification failed: {c.name}: {c.detail}" for c in checks if not c.ok]
        if not failed:
            m = replace(m, extra={**m.extra, **task.extra(self.ctx, m)})
        return _Outcome(
            error="; ".join(failed),
            measurement=m,
            checks=checks,
            invalid=self._above_ceiling(task, m),
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


def _check_same_dataset(recorded: dict[str, object] | None, name: str, digest: str) -> None:
    """A resumed session must measure the very data it measured before."""
    if recorded is not None and recorded.get("manifest_digest") != digest:
        raise FsarenaError(
            f"dataset {name} differs from the one this session was measured with "
            f"(manifest digest {digest[:12]}, recorded {recorded.get('manifest_digest')!s:.12}); "
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
            p.name: {**p.to_dict(), "image_size_bytes": plan.image_size_for(p)}
            for p in plan.profiles()
        },
    )
