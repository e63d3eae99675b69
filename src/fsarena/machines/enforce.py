"""A machine profile in force for one run: its cgroups and settings, the executor that uses them.

`in_force` applies a profile's limits (memory and CPU cgroups, vm.dirty_*)
for the length of a run and undoes them on the way out: normal exit, an
exception, or the KeyboardInterrupt that interrupt.Stop raises for SIGINT,
SIGTERM and SIGHUP. Every change is in the ledger before it is made, so a
run killed with SIGKILL is undone by `fsarena cleanup`.

MachineExecutor is the real executor with the machine applied at the
measurement seam: every timed command joins the machine's cgroups (a shell
joins, then execs the command: same process, same rusage), and each loop
device attached for a test image is throttled from attach to detach. The
rule is removed before the device is detached, so the number is free of it
when the next user (another engineer's run) gets it. The dataset source's
image is not throttled: it stands for the articles' second disk.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fsarena.host import cgroups, sysctls
from fsarena.host.executor import RealExecutor
from fsarena.machines.backends import (
    Backend,
    Changes,
    Tracker,
    Undo,
    choose_backend,
    device_number,
    with_ratio_restore,
)
from fsarena.measure.collect import Command, Timed
from fsarena.plan.machines import Limits, MachineProfile, host_cpu_mhz, limits_for

VM = Path("/proc/sys/vm")
# (setting, the ratio it replaces): writing either one of a pair zeroes the other.
DIRTY = (("dirty_bytes", "dirty_ratio"), ("dirty_background_bytes", "dirty_background_ratio"))


@dataclass
class Machine:
    """A profile in force: the backend holding its limits, and the devices it throttles."""

    profile: MachineProfile
    limits: Limits
    backend: Backend
    changes: Changes
    host_cpu_mhz: float | None
    throttled: dict[str, tuple[str, list[tuple[str, str]]]] = field(default_factory=dict)

    def wrap(self, argv: tuple[str, ...]) -> tuple[str, ...]:
        """argv run inside the machine's cgroups."""
        paths = self.backend.join_paths()
        return cgroups.enter_all_argv(paths, argv) if paths else argv

    def throttle(self, device: str) -> None:
        """Hold a loop device fsarena attached to the profile's disk bandwidth."""
        if not self.profile.limits_disk or device in self.throttled:
            return
        number = device_number(device)
        before = len(self.changes.done)
        try:
            entries = self.backend.throttle(number, self.limits, self.changes)
        except BaseException:
            self.changes.revert(self.changes.done[before:])  # half a rule set is undone at once
            raise
        self.throttled[device] = (number, entries)

    def unthrottle(self, device: str) -> None:
        number, entries = self.throttled.pop(device, ("", []))
        if number:
            self.backend.unthrottle(number, entries, self.changes)

    def memory_group(self) -> Path | None:
        return self.backend.memory_group()

    def record(self) -> dict[str, Any]:
        """What the session stores: the profile as given and as applied here."""
        return {
            "profile": self.profile.model_dump(mode="json"),
            "backend": self.backend.name,
            "host_cpu_mhz": self.host_cpu_mhz,
            "limits": self.limits.to_dict(),
            "cgroups": list(self.backend.join_paths()),  # what the tasks joined
            "probes": [],
        }


def _set_dirty(limits: Limits, changes: Changes, vm: Path) -> None:
    for (name, ratio), value in zip(
        DIRTY, (limits.dirty_bytes, limits.dirty_background_bytes), strict=True
    ):
        if value is not None:
            setting = sysctls.change(str(vm / name), str(value))
            changes.set(with_ratio_restore(setting, str(vm / ratio)))


@contextlib.contextmanager
def in_force(
    profile: MachineProfile,
    tracker: Tracker,
    base: Path = cgroups.CGROUP_ROOT,
    vm: Path = VM,
    undo: Undo | None = None,
) -> Iterator[Machine]:
    """Apply a profile until the block exits; everything is undone, newest first."""
    mhz = host_cpu_mhz()
    limits = limits_for(profile, mhz, os.cpu_count() or 1)
    backend = choose_backend(limits, base)
    changes = Changes(tracker) if undo is None else Changes(tracker, undo)
    machine = Machine(profile, limits, backend, changes, mhz)
    try:
        backend.setup(limits, changes)
        _set_dirty(limits, changes, vm)
        yield machine
    finally:
        for device in list(machine.throttled):
            machine.unthrottle(device)
        # What cannot be undone stays in the ledger: the CLI names it and `fsarena cleanup`
        # retries it.
        changes.revert_all()


@dataclass(kw_only=True)
class MachineExecutor(RealExecutor):
    """The real executor, with timed commands in the machine's cgroups and test loops throttled."""

    machine: Machine
    throttle_under: str  # loop devices of images in this directory are throttled

    def attach_loop(self, image: str) -> str:
        device = super().attach_loop(image)
        if Path(image).resolve().parent == Path(self.throttle_under).resolve():
            try:
                self.machine.throttle(device)
            except BaseException:
                super().detach_loop(device)
                raise
        return device

    def detach_loop(self, device: str) -> None:
        try:
            self.machine.unthrottle(device)
        finally:
            super().detach_loop(device)

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        inside = [replace(c, argv=self.machine.wrap(c.argv)) for c in commands]
        return super().measure(inside, device, timeout_s)
