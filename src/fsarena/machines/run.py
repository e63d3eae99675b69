"""The executor a run gets: the plain one, or one with the plan's machine in force and proven."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from fsarena.guest.host import boot
from fsarena.host.executor import RealExecutor
from fsarena.host.ledger import Ledger
from fsarena.machines.backends import choose_backend
from fsarena.machines.enforce import MachineExecutor, in_force
from fsarena.machines.probe import run_probe
from fsarena.plan.machines import Limits, MachineProfile, host_cpu_mhz, limits_for
from fsarena.plan.model import Plan
from fsarena.session.file import Session
from fsarena.session.records import MachineProbe, MachineRecord

MIB = 1 << 20


def images_dir(plan: Plan) -> str:
    """Where targets put every test image and the ceiling's (targets/__init__.py)."""
    return str(Path(plan.workdir, "images"))


def planned(profile: MachineProfile) -> tuple[Limits, str]:
    """The limits a profile becomes here and the backend that would hold them; nothing is set.

    Raises FsarenaError when this host cannot enforce the profile, before anything runs.
    """
    limits = limits_for(profile, host_cpu_mhz(), os.cpu_count() or 1)
    return limits, choose_backend(limits).name


def plan_lines(profile: MachineProfile) -> list[str]:
    """The dry run's account of a machine: the profile, its limits here, each figure's source."""
    limits, backend = planned(profile)
    lines = [
        f"machine {profile.name}: {profile.summary()}",
        f"  here: {describe_limits(limits, backend)}",
    ]
    lines += [f"  {note}" for note in limits.notes]
    lines += [f"  {name}: {source}" for name, source in profile.sources.items()]
    return lines


def describe_limits(lim: Limits, backend: str) -> str:
    parts = [backend]
    if lim.memory_bytes is not None:
        parts.append(f"memory {lim.memory_bytes // MIB} MiB")
    if lim.cpu_cores is not None:
        quota = f"{lim.cpu_quota_us} us per {lim.cpu_period_us} us"
        parts.append(f"CPU {lim.cpu_cores:.3f} of a core ({quota})")
    for name, rate in (("read", lim.disk_read_bytes_per_s), ("write", lim.disk_write_bytes_per_s)):
        if rate is not None:
            parts.append(f"disk {name} {rate / MIB:g} MiB/s")
    return ", ".join(parts)


@contextlib.contextmanager
def executor_for(
    plan: Plan, ledger: Ledger, session: Session, say: Callable[[str], None]
) -> Iterator[RealExecutor]:
    """The run's executor; with a machine, its limits hold until the block exits. What it
    deletes in the background (the spare image) is waited for when the block exits."""
    if plan.machine is None:
        plain = RealExecutor(
            ledger, call_timeout_s=plan.task_timeout_s, boot=boot, background_removal=True
        )
        try:
            yield plain
        finally:
            plain.settle()
        return
    with in_force(plan.machine, ledger) as machine:
        executor = MachineExecutor(
            ledger,
            call_timeout_s=plan.task_timeout_s,
            machine=machine,
            throttle_under=images_dir(plan),
            boot=boot,
            background_removal=True,
        )
        limits = describe_limits(machine.limits, machine.backend.name)
        say(f"machine {plan.machine.name}: {limits}; probing it")
        probe = run_probe(executor, plan, machine)
        record = MachineRecord.model_validate(machine.record())
        # A resumed session keeps the probes of its earlier parts.
        record.probes = [*session.machine.probes, MachineProbe.model_validate(probe)]
        session.machine = record
        for miss in probe["misses"]:
            session.warn("machine", miss)
            say(f"warning: {miss}")
        try:
            yield executor
        finally:
            executor.settle()  # before the machine's limits (and their ledger entries) go
