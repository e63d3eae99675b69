"""The loop: for each repetition, each filesystem in shuffled order, the whole task sequence.

Order of operations (tested with a fake executor):
  source: mount source, generate datasets
  per repetition (round):
    the device's ceiling: a fresh image and loop device, fio write then read
    (see ceiling.py), detached and deleted
    per filesystem (order shuffled with the plan's seed):
    create image, attach loop device
    per task: bring the filesystem to the state the task needs (untimed),
              prepare, cold caches (cold.py), timed commands (+ syncfs if it
              writes), verify, save the session
    unmount if still mounted, detach, delete the image
  unmount and remove the source
The source's datasets are made in source.py, one sequence's tasks run in
sequence.py, the aging phase is wired in aging_phase.py, the session is made in
new_session.py; each is handed the run's scope (scope.py), never the Runner.
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

import itertools
import math
import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from fsarena.aging.runtime import guest_unsupported
from fsarena.analysis import race
from fsarena.analysis.adaptive import SessionProgress, next_round_fits, round_forecast
from fsarena.errors import FsarenaError
from fsarena.host.executor import Executor
from fsarena.host.ledger import WorkdirUnwritable, unwritable
from fsarena.interrupt import checkpoint
from fsarena.plan.model import Plan
from fsarena.run import cold
from fsarena.run.aging_phase import age, aging_plan, remove_snapshots, snapshot_path
from fsarena.run.events import Event, now
from fsarena.run.firstrun import first_run_estimate, paced_estimate
from fsarena.run.owntime import OwnTime
from fsarena.run.resume import finished_sequences
from fsarena.run.scope import DatasetMaker, RunScope, SelfMade, SessionUnsaved
from fsarena.run.sequence import FsSequence
from fsarena.run.source import PreparedSource, prepare_source
from fsarena.session.file import Session
from fsarena.session.outputs import derived
from fsarena.session.records import RoundTiming, StopRecord
from fsarena.stopping import rounds_words
from fsarena.targets import (
    GuestTarget,
    LoopTarget,
    Target,
    ceiling_target,
    make_target,
    sequence_executor,
)
from fsarena.targets.ceiling import (
    DIRECTIONS,
    DRIFT_EVERY_S,
    Direction,
    ceiling_bytes,
    measure_ceiling,
)
from fsarena.tasks import FsState, TaskContext


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


def judged_directions(plan: Plan) -> tuple[Direction, ...]:
    """The directions the plan's tasks are checked against the device's ceiling in (their
    payloads); both where none is, the ceiling then being the report's context only."""
    payloads = {plan.task_class(name).payload for name in plan.tasks}
    return tuple(d for d in DIRECTIONS if d in payloads) or DIRECTIONS


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
    # Seconds the caller needs after the last round (writing the reports, as measured by an
    # earlier session), kept out of the budget so that the whole command ends within it.
    reserve_s: float = 0.0
    # No earlier session gave an estimate: a rough one once the ceiling is measured (True),
    # then one at the first round's pace (False once the rough one is told; None: neither).
    first_estimate: bool | None = None
    datasets: DatasetMaker = field(default_factory=SelfMade)  # tests give a fake one
    _started: float = 0.0
    _ceiling_at: float = -math.inf  # when the device's ceiling was last measured (clock)
    scope: RunScope = field(init=False)  # what the source, a sequence and aging get of the run

    def __post_init__(self) -> None:
        self.scope = RunScope(
            self.plan, self.executor, self.session, self.session_path, self.source_kind,
            self.on_event, own=OwnTime(self.clock), datasets=self.datasets,
        )  # fmt: skip

    def run(self) -> Session:
        done = finished_sequences(self.session, self.plan.tasks)
        self.session.order = []  # regenerated from the seed: a resumed session gets its own
        self.session.status = "running"
        self.session.cold_caches = cold.FILESYSTEM if self.source_kind == "tmpfs" else cold.MACHINE
        self._save()
        started = self._started = self.clock()
        try:
            with ExitStack() as stack:
                # The targets' images are retired, not deleted (LoopTarget.recycle): the
                # one kept last is deleted at the end.
                stack.callback(
                    self.scope.undo, "remove the spare image", self.executor.remove_spare_image
                )
                stack.callback(remove_snapshots, self.scope)
                source = prepare_source(self.scope, stack)
                self.session.timing.setup_s = self.clock() - started
                # A resumed session warms up again: its host caches are as cold as a new
                # run's, and its first round would otherwise count cold samples.
                if self.plan.warmup_rounds:
                    self._round(0, self.plan.warmup_sequences(), source, set(), warmup=True)
                for repetition, order in self._rounds():
                    self._round(repetition, order, source, done)
                checkpoint()  # a signal whose exception was lost ends the run as one raised
            self._warn_unstable()
            self.session.status = self.session.settled()
        except KeyboardInterrupt as exc:
            self.session.status = "interrupted"
            self._stopped(f"interrupted by {exc.args[0] if exc.args else 'SIGINT'}")
            raise
        except SessionUnsaved as exc:  # resumable from its last save, as after Ctrl-C
            self.session.status = "interrupted"
            self._stopped(f"the session could not be saved: {exc}")
            raise
        except WorkdirUnwritable as exc:  # resumable too, once there is room
            self._stopped_by_workdir(exc)
            raise
        except BaseException as exc:
            if isinstance(exc, OSError) and (full := unwritable(exc, self.plan.workdir)):
                self._stopped_by_workdir(full)  # fsarena's own write there (a cache, fio's)
                raise full from exc
            self.session.status = "failed"
            self._stopped(f"stopped by an error: {exc or type(exc).__name__}")
            raise
        finally:
            self.session.finished_at = now()
            self.session.timing.total_s = self.clock() - started
            self._save_last()
        self.on_event(Event("done", f"session saved to {self.session_path}"))
        return self.session

    def _save(self) -> None:
        self.scope.save()

    def _save_last(self) -> None:
        """The final save, whole; once a save has failed, a second failure adds nothing to tell."""
        failed_before = self.scope.saves.unsaved is not None
        try:
            self.scope.save(whole=True)
        except SessionUnsaved:
            if not failed_before:
                raise

    def _stopped(self, why: str) -> None:
        """Record why the run ended early, so a session with no runs still says why."""
        runs = len(self.session.runs)
        self.session.warn("stopped", f"{why}, after {runs} of {self._planned()} runs")
        self.session.stop = StopRecord(
            code=self.session.status, text=f"{why}, after {runs} of {self._planned()} runs",
            rounds=len(self.session.order),
        )  # fmt: skip

    def _stopped_by_workdir(self, exc: WorkdirUnwritable) -> None:
        self.session.status = "interrupted"
        self._stopped(f"the work directory could not be written: {exc}")

    def _planned(self) -> int:
        reps = max(self.plan.repetitions, len(self.session.order))
        return len(self.plan.sequences()) * len(self.plan.tasks) * reps

    def _round(
        self,
        repetition: int,
        order: list[str],
        source: PreparedSource,
        done: set[tuple[str, int]],
        warmup: bool = False,
    ) -> None:
        """One round: the ceiling (or its drift check), then each filesystem's sequence."""
        todo = [name for name in order if (name, repetition) not in done]
        if not todo:
            return
        started = self.clock()
        own = self.scope.own
        own.take()  # what was spent before this round is not its own
        runs_before = len(self.scope.runs(warmup))
        with own.phase("ceiling"):
            self._measure_ceiling(repetition)
        for name in todo:
            checkpoint()
            self._run_sequence(name, repetition, source, warmup)
        timed = sum(r.timed_s for r in self.scope.runs(warmup)[runs_before:])
        wall = self.clock() - started
        spent = own.take()
        spent.pop("timed", None)  # the timed regions: timed_s, from the runs themselves
        phases = {phase: round(s, 3) for phase, s in sorted(spent.items())}
        self.session.timing.rounds.append(
            RoundTiming(
                repetition=repetition, warmup=warmup, wall_s=wall, timed_s=timed, own_s=phases
            )
        )
        self._save()
        if self.first_estimate is not None and len(self.session.timing.rounds) == 1:
            left = self.plan.repetitions - (0 if warmup else 1)
            # A sweep warms up on its defaults alone: a measured round has more sequences.
            paced = paced_estimate(self.plan, self.clock() - self._started, wall, left, len(todo))
            self.on_event(Event("setup", f"time: {paced}"))

    def _rounds(self) -> Iterator[tuple[int, list[str]]]:
        """(repetition, filesystem order): the plan's repetitions, then adaptive ones.

        A decisive run's budget bounds the whole run: past stopping.MIN_ROUNDS (the fewest
        with an interval) it cuts even the plan's repetitions short.
        """
        orders = order_stream(self.plan.sequences(), self.plan.seed)
        for repetition in itertools.count(1):
            done = repetition - 1
            progress = SessionProgress(self.session)  # one look per round, read twice
            if done >= self.plan.repetitions and race.eliminating(self.session.plan):
                self._eliminate(progress, done)
                progress = SessionProgress(self.session)
            if repetition > self.plan.repetitions and not self._want_more(done, progress):
                self._stop(done, *self.plan.stopping.reason(done, self._fits(), progress))
                return
            if self.plan.stopping.budget_stops(done, self._fits()):
                self._stop(done, "budget", "the time budget")
                return
            gone = race.dropped(self.session)
            order = [name for name in next(orders) if name not in gone]
            self.session.order.append(order)
            self._save()
            self.on_event(Event("round", f"repetition {repetition}"))
            yield repetition, order

    def _fits(self) -> bool:
        """Whether another round ends within the time budget (none: always)."""
        # The budget counts from the start of the run (set-up and warm-up included: what
        # one waits), and the reports written after the last round count too.
        walls = [float(r.wall_s) for r in self.session.timing.rounds]
        elapsed = self.clock() - self._started
        return next_round_fits(elapsed, walls, self.plan.time_budget_s, self.reserve_s)

    def _want_more(self, done: int, progress: SessionProgress) -> bool:
        """Another round, if the stopping rule wants one (fsarena.stopping) within its limits."""
        return self.plan.stopping.wants_another_round(done, self._fits(), progress)

    def _eliminate(self, progress: SessionProgress, done: int) -> None:
        """After a round of a decisive run: the filesystems shown behind the best leave the
        running (analysis.decision, analysis.race), saved before the next round."""
        found = progress.eliminations()
        decision = progress.verdicts().decision
        if not found or decision is None:
            return
        level = float(decision.boundary.alpha(done))
        records = race.drops(self.session.plan, found, done, level)
        if records:
            race.record(self.session, records)
            self._save()
            for drop in records:
                self.on_event(Event("setup", f"elimination: {drop.text}"))

    def _stop(self, done: int, code: str, text: str) -> None:
        """Record why the run took no more rounds, with the budget's figures when it has one."""
        left = None
        if self.plan.time_budget_s:
            elapsed = self.clock() - self._started
            left = self.plan.time_budget_s - elapsed
            if code == "budget":
                walls = [float(r.wall_s) for r in self.session.timing.rounds]
                text += (
                    f": {elapsed / 60:.1f} of {self.plan.time_budget_s / 60:.1f} min used, "
                    f"and the next round (forecast {round_forecast(walls) / 60:.1f} min: the "
                    "slowest of the last three plus their spread"
                    + (f", then {self.reserve_s:.0f} s for the reports" if self.reserve_s else "")
                    + ") would end past it"
                )
            else:
                text += f" ({max(0.0, left) / 60:.1f} min of the budget left)"
        self.session.stop = StopRecord(
            code=code,
            text=f"stopped after {rounds_words(done)}: {text}",
            rounds=done,
            budget_left_s=left,
        )
        self.on_event(Event("setup", self.session.stop.text))

    def _measure_ceiling(self, repetition: int) -> None:
        """fio's raw ceiling once per session, in the directions the plan's tasks are judged
        in; a round a minute or more after the last measurement, one short pass (drift)."""
        drift = any(c.kind == "full" for c in self.session.ceilings)
        if drift and self.clock() - self._ceiling_at < DRIFT_EVERY_S:
            return  # measured moments ago: this round shares that figure
        size = max(self.plan.image_size_for(p) for p in self.plan.profiles())
        target = ceiling_target(self.plan, repetition, size, recycle=True)
        largest = max(
            (n for spec in self.plan.dataset_specs().values() for _, n in spec.plan().files),
            default=0,
        )
        self.executor.make_dir(self.scope.workdir("scratch"))
        try:
            samples = measure_ceiling(
                self.executor,
                target,
                ceiling_bytes(largest, size),
                self.scope.workdir("scratch", "fio.json"),
                self.plan.task_timeout_s,
                repetition,
                drift,
                cache=True,
                directions=judged_directions(self.plan),
            )
        except FsarenaError as exc:
            # Faults are data: without a ceiling, runs are only not checked against it.
            self.session.warn(
                "ceiling", f"could not measure the device's ceiling: {exc}; no run is checked"
            )
            return
        finally:
            self._ceiling_at = self.clock()
        self.session.ceilings.extend(samples)
        self._save()
        for c in samples:
            what = "page cache read of the device" if c.kind == "cache" else "device ceiling, "
            what += "" if c.kind == "cache" else c.direction
            self.on_event(Event("setup", f"{what}: {c.bytes_per_s / 1e6:,.0f} MB/s"))
        if self.first_estimate and (write := self.session.ceiling("write")):
            self.first_estimate = False
            self.on_event(Event("setup", f"time: {first_run_estimate(self.plan, write)}"))

    def _warn_unstable(self) -> None:
        """The stopping rule's closing warning: the kinds left open, or the imprecise tasks."""
        found = self.plan.stopping.warning(SessionProgress(self.session))
        if found is not None:
            self.session.warn(*found)

    def _run_sequence(
        self,
        label: str,
        repetition: int,
        source: PreparedSource,
        warmup: bool = False,
    ) -> None:
        scope = self.scope
        profile = self.plan.profile(label)
        aged = label != profile.name
        what = "warm-up" if warmup else f"repetition {repetition}"
        self.on_event(Event("sequence", f"{what}: {label}"))
        # An unfinished earlier attempt (a resumed session) is redone whole.
        key = (label, repetition)
        kept = [r for r in scope.runs(warmup) if (r.filesystem, r.repetition) != key]
        scope.runs(warmup)[:] = kept
        if profile.name in self.unavailable:
            scope.record_all(
                label,
                repetition,
                f"filesystem unavailable: {self.unavailable[profile.name]}",
                "skipped",
            )
            return
        age_profile = self.plan.age
        if aged and age_profile and profile.guest and (why := guest_unsupported(age_profile)):
            scope.record_all(label, repetition, why, "skipped")
            return
        snapshot = snapshot_path(scope, profile) if aged else None
        restore = snapshot if snapshot and self.executor.exists(snapshot) else None
        target = make_target(
            self.plan, profile, repetition, source.guest_disk, restore, label, recycle=True
        )
        mountpoint = scope.workdir("mnt", label)
        with ExitStack() as stack:
            stack.callback(scope.undo, "release the target", lambda: self._teardown(target))
            try:
                with scope.own.phase("target"):
                    device = target.setup(self.executor)
            except FsarenaError as exc:
                scope.record_all(label, repetition, f"target setup failed: {exc}", "failed")
                return
            # A guest driver's sequence runs inside the guest, through its executor.
            executor = sequence_executor(target, self.executor)
            ctx = TaskContext(
                profile=profile,
                device=device,
                mountpoint=mountpoint,
                scratch=scope.workdir("scratch"),
                datasets=source.datasets,
                executor=executor,
                artifacts_dir=str(derived(self.session_path, "-files")),
                aging=aging_plan(scope, profile),
                hash_content=repetition == 1,  # copies hashed once per filesystem (issue 14)
            )
            executor.make_dir(ctx.scratch)
            # The image aging snapshots: a loop image, or a guest's disk (unmounted in the guest).
            image = target.image if isinstance(target, LoopTarget | GuestTarget) else ""
            sequence = FsSequence(
                scope, ctx, repetition, warmup=warmup, label=label, aged=aged, image=image
            )
            self.executor.track("mount", mountpoint, device)  # the proof it is ours
            stack.callback(scope.undo, f"unmount {mountpoint}", lambda: self._unmount(sequence))
            if restore is not None:
                sequence.state = FsState.UNMOUNTED  # the aged filesystem, as snapshotted
            elif snapshot is not None:
                try:
                    age(scope, sequence, label, snapshot)
                except (FsarenaError, OSError) as exc:
                    scope.record_all(label, repetition, f"aging failed: {exc}", "failed")
                    return
            sequence.run_all()

    def _teardown(self, target: Target) -> None:
        with self.scope.own.phase("target"):
            target.teardown(self.executor)

    def _unmount(self, sequence: FsSequence) -> None:
        with self.scope.own.phase("target"):
            sequence.unmount()
