"""One sequence: the suite's tasks, in order, on one filesystem in one repetition.

Per task: bring the filesystem to the state the task needs (untimed),
prepare, cold caches (cold.py; not before an untimed probe), the timed
commands (+ syncfs if it writes), verify, record. A failed task ends its
sequence (the rest are recorded as skipped, with the reason); a task the
filesystem cannot run is skipped and the sequence goes on. The runner
(runner.py) makes the target and the context and hands them, with the run's
scope (scope.py), to a sequence.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from fsarena.aging.phase import age_mounted
from fsarena.aging.snapshot import snapshot
from fsarena.analysis.method import BUFFERED_LOOP
from fsarena.errors import FsarenaError
from fsarena.interrupt import checkpoint
from fsarena.measure.collect import Measurement
from fsarena.run.cold import make_cold, per_filesystem
from fsarena.run.events import now
from fsarena.run.faults import explain
from fsarena.run.scope import RunScope
from fsarena.run.space import (
    accounts_space,
    device_values,
    judged_rate,
    space_added,
    space_values,
)
from fsarena.session.file import CheckRecord, Run, RunStatus
from fsarena.tasks import FsState, Task, TaskContext
from fsarena.tasks.base import HostFault, Unsupported
from fsarena.tasks.lifecycle import Mkfs, Mount, Umount

# How long teardown waits for a busy mount to be released by processes it killed.
UMOUNT_PATIENCE_S = 10.0


@dataclass(frozen=True)
class Outcome:
    """What one task produced; ok when nothing failed."""

    error: str = ""
    measurement: Measurement | None = None
    values: dict[str, float] = field(default_factory=dict)
    checks: list[CheckRecord] = field(default_factory=list)
    invalid: str = ""  # why the figure cannot be right, though the task did its job
    details: dict[str, Any] = field(default_factory=dict)
    skipped: str = ""  # why this filesystem cannot run the task (Unsupported)
    host_fault: str = ""  # what this host lacks for the task, and its fix (HostFault)
    host_code: str = ""  # missing-tool | permission | missing-server
    repeats: list[Measurement] = field(default_factory=list)  # earlier timed executions

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def status(self) -> RunStatus:
        if self.skipped or self.host_fault:
            return "skipped"
        if self.error:
            return "failed"
        return "invalid" if self.invalid else "ok"


@dataclass
class FsSequence:
    """One repetition of the task list on one fresh filesystem."""

    scope: RunScope
    ctx: TaskContext
    repetition: int
    state: FsState = FsState.BLANK
    warmup: bool = False
    label: str = ""  # what its runs are recorded as ("ext4+churn" when aged)
    aged: bool = False
    image: str = ""  # the loop image file, if the target is one (aging snapshots it)
    # compsize's figures after the last writing task (run/space.py); none yet: empty
    _space_before: dict[str, float] = field(default_factory=dict)
    used: bool = False  # a task ran on the mounted filesystem since it was made

    def __post_init__(self) -> None:
        # Tasks that drop caches between their samples do it the sequence's way.
        self.ctx = replace(self.ctx, make_cold=self.cold)

    def cold(self) -> None:
        """Empty the caches a timed execution could hit: its filesystem's, or the machine's."""
        per_fs = per_filesystem(self.ctx, self.scope.source_kind)
        with self.scope.own.phase("cold"):
            make_cold(self.scope.executor, self.ctx, self.state is FsState.MOUNTED, per_fs)

    def run_all(self) -> None:
        stopped_by = ""
        for name in self.scope.plan.tasks:
            checkpoint()
            task = self.scope.plan.task_class(name)()
            if self.aged and task.formats:
                why = "not applicable: an aged filesystem is restored from its snapshot, never made"
                self._record(task, "skipped", Outcome(skipped=why), now())
                continue
            if stopped_by:
                skipped = Outcome(error=f"not run: {stopped_by} failed earlier")
                self._record(task, "skipped", skipped, now())
                continue
            if why := task.unsupported(self.ctx):  # the rest of the sequence still runs
                self._record(task, "skipped", Outcome(skipped=f"not supported here: {why}"), now())
                continue
            if not self._execute(task):
                stopped_by = name

    def _record(self, task: Task, status: RunStatus, outcome: Outcome, started: str) -> None:
        code, error = explain(outcome.error) if status == "failed" else ("", outcome.error)
        if outcome.skipped:
            code = "unsupported"  # not a failure: this filesystem cannot run the task
        if outcome.host_fault:
            code = outcome.host_code  # the host's fault: the session is partial
        self.scope.record(
            Run(
                filesystem=self.label or self.ctx.profile.name,
                task=task.name,
                repetition=self.repetition,
                started_at=started,
                status=status,
                error=error or outcome.invalid or outcome.skipped or outcome.host_fault,
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
        self.ctx.data_dir_attributes.clear()
        own = self.scope.own
        try:
            with own.phase("reach"):
                self._made_for(task)
                self._reach(task.requires)
            with own.phase("prepare"):
                task.prepare(self.ctx)
            if task.timed:  # a probe (capacity) reads values, not times: nothing to make cold
                self.cold()
            outcome = self._measure(task)
        except Unsupported as exc:
            outcome = Outcome(skipped=f"not supported here: {exc}")
        except HostFault as exc:  # the sequence goes on; the session will be partial
            outcome = Outcome(host_fault=f"host fault: {exc}", host_code=exc.code)
        except FsarenaError as exc:
            outcome = Outcome(error=str(exc))
        except OSError as exc:
            # fsarena's own untimed work on the target (mkdir, verify, listing count).
            where = f" ({exc.filename})" if exc.filename else ""
            outcome = Outcome(error=f"{exc.strerror or exc}{where}")
        finally:
            try:
                with own.phase("cleanup"):
                    task.cleanup(self.ctx)
            except FsarenaError as exc:
                outcome = Outcome(error=f"cleanup failed: {exc}")
        if self.ctx.data_dir_attributes:  # what lsattr read back of its data directories
            attributes = {"data_dir_attributes": dict(self.ctx.data_dir_attributes)}
            outcome = replace(outcome, details={**outcome.details, **attributes})
        ok = outcome.ok
        if ok and task.leaves is not None:
            self.state = task.leaves
        if FsState.MOUNTED in task.requires:
            self.used = True
        self._warn_page_cache(task, outcome)  # saved with the run, below
        self._record(task, outcome.status, outcome, started)
        return ok

    def _warn_page_cache(self, task: Task, outcome: Outcome) -> None:
        """Say when a task's working set fits in the page cache it may use (see cache_values)."""
        extra = outcome.measurement.extra if outcome.measurement else {}
        if extra.get("fits_page_cache") != 1.0:
            return
        self.scope.session.warn(
            "fits_page_cache",
            f"{task.name}: its working set ({extra['working_set_bytes'] / 1e6:,.0f} MB) fits in "
            f"the {extra['page_cache_limit_bytes'] / 1e6:,.0f} MB of page cache it may use at "
            f"scale {self.scope.plan.scale:g}, so it measures memory more than the "
            "filesystem: use a larger --scale for a disk-bound figure",
        )

    def _measure(self, task: Task) -> Outcome:
        if not task.timed:
            with self.scope.own.phase("probe"):
                return Outcome(values=task.probe(self.ctx), details=task.details())
        commands = task.commands(self.ctx)
        if task.writes:
            # Time to durable: the filesystem's sync and one flush of the device
            # (TaskContext.durable), inside the timed region.
            commands.extend(self.ctx.durable())
        timeout = self.scope.plan.task_timeout_s
        repeats: list[Measurement] = []
        own = self.scope.own
        while True:
            with own.phase("prepare"):
                task.region_starts(self.ctx)
            with own.phase("launch"):
                timed = self.ctx.executor.measure(commands, self.ctx.device, timeout)
            own.move("launch", "timed", timed.measurement.wall_s)
            with own.phase("prepare"):
                task.region_ended(self.ctx)
            m = timed.measurement
            if m.timed_out:
                return Outcome(error=f"timed out after {timeout:.0f} s", measurement=m)
            if m.exit_code != 0:
                why = task.failure(self.ctx) or timed.stderr or "no message"
                return Outcome(
                    error=f"exit code {m.exit_code}: {why}",
                    measurement=m,
                    repeats=repeats,
                )
            if len(repeats) + 1 >= task.samples:
                break
            # A sub-second task: undo it untimed and time it again (Task.samples); the
            # task's between_samples drops caches where its figure needs them cold.
            repeats.append(m)
            with own.phase("samples"):
                task.between_samples(self.ctx)
        if m.loop_direct_io == 0:  # read before the run: the kernel refused direct I/O
            self.scope.session.warn("buffered_loop", BUFFERED_LOOP)
        with own.phase("after"):
            if task.payload is not None:
                m = replace(m, extra={**m.extra, "payload_bytes": task.payload_bytes(self.ctx)})
        # The warm-up is never a sample: its copies go unverified (every real round's are).
        with own.phase("verify"):
            verified = [] if self.warmup else task.verify(self.ctx)
        checks = [CheckRecord(name=c.name, ok=c.ok, detail=c.detail) for c in verified]
        failed = [f"verification failed: {c.name}: {c.detail}" for c in checks if not c.ok]
        if not failed:
            with own.phase("after"):
                extra = {**task.extra(self.ctx, m), **self._space(task, m)}
            m = replace(m, extra={**m.extra, **extra})
        return Outcome(
            error="; ".join(failed),
            measurement=m,
            checks=checks,
            invalid=self._above_ceiling(task, m),
            repeats=repeats,
            details=task.details(),  # a timed task's raw detail (a replay's per-call latencies)
        )

    def _space(self, task: Task, m: Measurement) -> dict[str, float]:
        """A writing task on a compressing configuration (or its uncompressed peers of this
        run): logical bytes against the device's, and compsize's figures (run/space.py)."""
        peers = self.scope.plan.profiles()
        if not task.writes or not accounts_space(self.ctx.profile, peers):
            return {}
        logical = task.payload_bytes(self.ctx) if task.payload == "write" else 0
        values, missing = space_values(self.ctx)
        if missing:
            self.scope.session.warn("space_tool", missing)
        if values and not self.aged:
            # What this task added: compsize counts the whole filesystem, which was empty
            # after mkfs and changed since only by this sequence's writing tasks.
            values |= space_added(values, self._space_before)
            self._space_before = values
        return {**device_values(m, logical), **values}

    def _above_ceiling(self, task: Task, m: Measurement) -> str:
        """Why the task's throughput cannot be real, or "" when it can."""
        if not self.ctx.profile.on_device or task.payload is None:
            return ""  # tmpfs: memory, not the device, sets its pace; or nothing moved
        ceiling = self.scope.session.ceiling(task.payload)
        rate = judged_rate(self.ctx.profile, task.payload, m)
        tolerance = self.scope.session.ceiling_tolerance(task.payload)
        if ceiling is None or rate is None or rate <= ceiling * tolerance:
            return ""
        judged = " of device bytes (it compresses)" if self.ctx.profile.compresses else ""
        return (
            f"invalid: {rate / 1e6:,.0f} MB/s{judged} is {rate / ceiling:.1f}x the device's raw "
            f"{task.payload} ceiling of {ceiling / 1e6:,.0f} MB/s measured by fio, so the data "
            "cannot all have reached the device (cache contamination?); kept but not used"
        )

    def _made_for(self, task: Task) -> None:
        """A task that runs on a filesystem made for it (Task.fresh), after another used this
        one: unmount it and start again from a blank device (mkfs, mount: _reach), untimed.
        An aged filesystem is restored, never made: its tasks run on what came before."""
        if not task.fresh or not self.used or self.aged:
            return
        self._reach(frozenset({FsState.UNMOUNTED}))
        self.state = FsState.BLANK
        self.used = False
        self._space_before = {}  # compsize's figures describe the filesystem just replaced

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
        """mkfs, mount, age, umount, snapshot: the aged filesystem every repetition restores.

        A block device (--device) is not copied (a whole device could be terabytes):
        it is aged again, the same seeded way, for every aged repetition.
        """
        assert self.ctx.aging is not None
        self._reach(frozenset({FsState.MOUNTED}))
        record = age_mounted(self.ctx, self.ctx.aging)
        self._reach(frozenset({FsState.UNMOUNTED}))
        if not self.image:  # --device: no image to copy; every aged repetition ages again
            return {**record, "snapshot_method": "none (--device: aged every repetition)"}
        return {**record, **snapshot(self.scope.executor, self.image, snapshot_path)}

    def unmount(self) -> None:
        """Teardown: unmount whatever this sequence left mounted."""
        if self.state is FsState.MOUNTED or self.ctx.executor.is_mounted(self.ctx.mountpoint):
            self._umount_once_released()
            self.state = FsState.UNMOUNTED
        self.scope.executor.untrack("mount", self.ctx.mountpoint)

    def _umount_once_released(self) -> None:
        """umount, waiting a moment while the mount is busy.

        After Ctrl-C or SIGTERM, a command fsarena killed (a cp, the copy verifier's
        threads) can still hold files on the filesystem until its last read returns: a
        teardown that gave up at once left the mount and its loop device behind.
        """
        deadline = time.monotonic() + UMOUNT_PATIENCE_S
        while True:
            try:
                self.ctx.executor.call(("umount", self.ctx.mountpoint))
                return
            except FsarenaError as exc:
                if not self.ctx.executor.is_mounted(self.ctx.mountpoint):
                    return  # not mounted: a cold-cache remount the interrupt cut short
                if "busy" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)
