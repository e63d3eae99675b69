"""What is decided before a run touches the machine: checks, space, the device, the dry run.

The CLI calls these in order; each raises FsarenaError with what to do, so a
run that cannot succeed stops before its first mkfs, and `--dry-run` shows
the whole plan from the same facts without touching anything. The guards
around the run itself live here too: the work directory's lock (the signals
that stop a run cleanly are fsarena.interrupt's).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fsarena.errors import FsarenaError
from fsarena.filesystems.drivers import choose
from fsarena.guest.kernels import GUESTS
from fsarena.plan.model import Plan
from fsarena.run.estimate import estimate
from fsarena.run.preflight import CheckResult, existing_parent, preflight
from fsarena.run.runner import shuffled_orders
from fsarena.run.source import source_bytes
from fsarena.targets import guard
from fsarena.targets.source import choose_source, mem_available_bytes, source_size_bytes

if TYPE_CHECKING:
    from fsarena.host.cleanup import Claims, Foreign

GB = 1e9
MIB = 1 << 20


@dataclass(frozen=True)
class Launch:
    """A plan ready to run, with the facts the CLI shows and the session records."""

    plan: Plan
    source_kind: str
    unavailable: dict[str, str]  # filesystem -> why this host cannot run it
    need_bytes: int  # in the work directory, at most
    device: guard.Facts | None = None
    notes: list[str] = field(default_factory=list)


def unavailable_filesystems(plan: Plan) -> dict[str, str]:
    """Filesystems of the plan this host cannot run; they are recorded as skipped, with why."""
    # choose(): the driver the plan names, with every driver's reason when none can run it.
    table = plan.table()
    found = {n: s.reason for n in plan.filesystems if not (s := choose(n, table)).available}
    if plan.device is not None:  # a guest boots with an image file as its disk, never a device
        found |= {
            p.name: f"runs in a {p.guest} guest kernel, on an image file: not with --device"
            for p in plan.profiles()
            if p.guest and p.name not in found
        }
    if len(found) == len(plan.filesystems):
        reasons = "; ".join(f"{k}: {v}" for k, v in found.items())
        raise FsarenaError(
            f"no filesystem of the plan can run here ({reasons}); see `fsarena check`"
        )
    return found


def data_bytes(plan: Plan) -> int:
    return source_bytes(plan.dataset_specs())


def space_needed(plan: Plan, source_kind: str) -> int:
    """Work-directory bytes at most: the source image, plus the largest target image.

    Images are sparse and one exists at a time; the bound assumes they fill. With
    --age, each filesystem's aged snapshot is kept until the end (as big as its image).
    """
    source = source_size_bytes(data_bytes(plan)) if source_kind == "image" else 0
    images = 0 if plan.device else max(plan.image_size_for(p) for p in plan.profiles())
    snapshots = sum(plan.image_size_for(p) for p in plan.profiles()) if plan.age else 0
    return source + images + snapshots


def prepare(plan: Plan, kept_paths: Sequence[str], confirmation: str | None) -> Launch:
    """Check everything that can be checked without touching the machine."""
    if confirmation is not None and plan.device is None:
        raise FsarenaError("--destroy-data needs --device: name the device twice")
    unavailable = unavailable_filesystems(plan)
    source_kind = choose_source(plan.source, data_bytes(plan), mem_available_bytes())
    need = space_needed(plan, source_kind)
    notes = []
    facts = None
    if plan.device is not None:
        facts = guard.check(plan.device, confirmation, [plan.workdir, *kept_paths])
        biggest = max(plan.image_size_for(p) for p in plan.profiles())
        if facts.node.size_bytes < biggest:
            notes.append(
                f"{plan.device} ({facts.node.size_bytes // MIB} MiB) is smaller than the "
                f"{biggest // MIB} MiB this plan would give an image: tasks may fail with ENOSPC"
            )
    if plan.machine is not None:
        from fsarena.machines.run import planned

        planned(plan.machine)  # this host can enforce it, or one clear message now
        # Guests and FUSE daemons are out of reach of the limits (host loop devices and
        # host processes); their groups are never ranked against the host kernel's anyway.
        beyond = [p.name for p in plan.profiles() if p.driver != "kernel"]
        if beyond:
            notes.append(
                f"{', '.join(beyond)} run through a guest kernel or FUSE, which the machine "
                f"{plan.machine.name}'s limits do not reach: compare them only with each other"
            )
    return Launch(plan, source_kind, unavailable, need, facts, notes)


def require_ready(launch: Launch) -> None:
    """Preflight before a run: every failed requirement with its fix, in one message."""
    guests = dict.fromkeys(p.guest for p in launch.plan.profiles() if p.driver == "guest")
    results = preflight(launch.plan.workdir, launch.need_bytes, [], guests=guests)
    failed = [f"{r.name}: {r.detail} (fix: {r.fix})" for r in results if not r.ok]
    if failed:
        raise FsarenaError("not ready to run: " + "; ".join(failed))
    workdir = launch.plan.workdir
    if Path(workdir).is_dir():  # before the aging probe makes its image there
        from fsarena.host.cleanup import claims, has_record

        if not has_record(workdir):
            refuse_leftovers(claims(workdir))
            return
        with workdir_lock(workdir):
            refuse_leftovers(claims(workdir))


def refuse_leftovers(found: Claims) -> None:
    """A run never starts over an earlier run's resources, nor over mounts on its own paths.

    Their names are this run's names (images/ext4-r1.img, mnt/ext4): it would fail on
    them and its teardown would take them for its own.
    """
    from fsarena.host.cleanup import in_the_way

    if found:
        raise FsarenaError(
            f"an earlier run left {found.describe()}; nothing was started: remove it with "
            f"`fsarena cleanup --workdir {found.workdir}` (or use another --workdir)"
        )
    if blocking := in_the_way(found):
        raise FsarenaError(
            f"{blocking[0]}; it is where this run would work: nothing was started "
            "(or use another --workdir)"
        )
    if strays := unrecorded_images(found.workdir):
        raise FsarenaError(
            f"{strays[0]} is not fsarena's (no run's ledger recorded it) and lies where this "
            f"run makes its images; nothing was started: move it away, or use another --workdir"
        )


def unrecorded_images(workdir: str) -> list[str]:
    """Files in WORKDIR/images that no ledger records: a run makes its images there under
    fixed names (images/ext4-r1.img), never over a file it did not make."""
    from fsarena.host.ledger import Ledger

    folder = Path(workdir, "images")
    if not folder.is_dir():
        return []
    recorded = {e.ident for e in Ledger(workdir).entries()}
    return sorted(str(p) for p in folder.iterdir() if str(p) not in recorded)


def check_leftovers(workdir: str) -> CheckResult:
    """`fsarena check`: what killed runs left in the work directory (not a live run's).

    Only what the work directory's ledger proves is fsarena's is named for cleanup;
    other mounts found there are listed as not fsarena's (host/cleanup.py decides).
    """
    from fsarena.host.cleanup import claims, has_record

    name = "leftovers of killed runs"
    if not Path(workdir).is_dir():
        return CheckResult(name, True, "none")
    if not has_record(workdir):  # no run used it: take no lock, make no file
        return CheckResult(name, True, _foreign_note(claims(workdir).foreign) or "none")
    try:
        with workdir_lock(workdir):
            found = claims(workdir)
    except FsarenaError:
        return CheckResult(name, True, f"a run is using {workdir} now; it cleans up after itself")
    fix = f"fsarena cleanup --workdir {workdir}"
    detail = "; ".join(x for x in (found.describe(), _foreign_note(found.foreign)) if x)
    return CheckResult(name, not found, detail or "none", fix if found else "")


def _foreign_note(found: Sequence[Foreign]) -> str:
    """Mounts and loop devices in the work directory that are not fsarena's (its own aside)."""
    shown = [f for f in found if f.advice]  # the work directory's own filesystem needs nothing
    return "; ".join(f"not fsarena's, left alone: {f}" for f in shown)


def check_device(device: str, workdir: str) -> CheckResult:
    """`fsarena check --device`: whether a run may use it, and what it would destroy."""
    name = f"device {device}"
    try:
        facts = guard.inspect(device, [workdir])
    except FsarenaError as exc:
        return CheckResult(name, False, str(exc), "name a block device, e.g. /dev/sdX1")
    refused = guard.refusals(facts)
    if refused:
        return CheckResult(name, False, "; ".join(refused), "use another device (none overrides)")
    detail = f"usable with --destroy-data {device}; would destroy {facts.describe()}"
    return CheckResult(name, True, detail)


# ---------------------------------------------------------------- around the run


@contextlib.contextmanager
def workdir_lock(workdir: str) -> Iterator[None]:
    """One run per work directory: two would share mount points and images."""
    from fsarena.host.cleanup import LOCK_FILE

    try:
        Path(workdir).mkdir(parents=True, exist_ok=True)
        handle = open(Path(workdir, LOCK_FILE), "w")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise FsarenaError(
            f"cannot use the work directory {workdir}: {exc.strerror} ({exc.filename}); "
            "give a writable --workdir"
        ) from None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FsarenaError(
                f"another fsarena run is using {workdir}; wait for it or pass another --workdir"
            ) from None
        yield


# ---------------------------------------------------------------- the dry run


def describe(launch: Launch, results_dir: Path) -> list[str]:
    """The complete plan as lines of text; nothing is touched."""
    plan = launch.plan
    n_seq = len(plan.sequences()) * plan.repetitions
    lines = [
        f"plan: suite {plan.suite}, {len(plan.sequences())} filesystems x {len(plan.tasks)} tasks "
        f"x {plan.repetitions} repetitions = {n_seq} sequences, seed {plan.seed}",
        f"tasks, in order: {', '.join(plan.tasks)}",
    ]
    if launch.device is not None:
        lines.append(f"target: block device, ALL DATA DESTROYED: {launch.device.describe()}")
    else:
        lines.append(
            f"target: one loop image at a time, allocated before use, in {plan.workdir}/images, "
            "zeroed after use for the next filesystem, deleted at the end"
        )
    for profile in plan.profiles():
        device = plan.device or "/dev/loopN"
        if profile.name in launch.unavailable:
            lines.append(f"  {profile.name}: skipped: {launch.unavailable[profile.name]}")
            continue
        size = "" if plan.device else f" on a {plan.image_size_for(profile) // MIB} MiB image"
        if profile.guest:  # the image is the guest's first disk; every command runs inside it
            device = GUESTS[profile.guest].device(0)
            size += f", the {profile.guest} guest's disk (commands run in the guest)"
        lines.append(f"  {profile.name}{size}: {' '.join(profile.mkfs_argv(device))}")
        mount = profile.mount_argv(device, f"{plan.workdir}/mnt/{profile.name}")
        lines.append(f"    then {' '.join(mount)}")
    if plan.age is not None:
        lines.append(f"aging: {plan.age.describe()}")
        lines.append(
            f"  each filesystem is aged once (seed {plan.seed}), snapshotted, and restored for "
            f"every aged repetition, recorded as NAME+{plan.age.name}; tasks that make a "
            "filesystem (mkfs) are skipped on it"
        )
    orders = shuffled_orders(plan.sequences(), plan.repetitions, plan.seed)
    more = ", then more rounds while any task is less precise" if plan.target_ci_pct else ""
    lines.append("order: " + "; ".join(", ".join(o) for o in orders) + more)
    for name, spec in plan.dataset_specs().items():
        lines.append(f"dataset {name}: {spec.total_bytes / 1e6:,.0f} MB: {spec.description()}")
    lines.append(
        f"datasets live on a {launch.source_kind} source ({data_bytes(plan) / 1e6:,.0f} MB)"
    )
    free = _free_bytes(plan.workdir)
    short = "" if free >= launch.need_bytes else ": NOT ENOUGH, a run would refuse to start"
    lines.append(
        f"space: up to {launch.need_bytes / GB:.2f} GB in {plan.workdir} "
        f"({free / GB:.1f} GB free there{short})"
    )
    if plan.machine is not None:
        from fsarena.machines.run import plan_lines

        lines += plan_lines(plan.machine)
    lines.append(f"time: {estimate(plan, results_dir)}")
    lines += [f"note: {n}" for n in launch.notes]
    lines += [f"note: {line}" for line in leftover_lines(plan.workdir)]
    lines.append("dry run: nothing was created, formatted or mounted")
    return lines


def leftover_lines(workdir: str) -> list[str]:
    """What `run` and `--dry-run` say about earlier runs' resources and others' mounts."""
    from fsarena.host.cleanup import claims, has_record

    if not Path(workdir).is_dir():
        return []
    if not has_record(workdir):
        found = claims(workdir)
    else:
        try:
            with workdir_lock(workdir):
                found = claims(workdir)
        except FsarenaError:
            return [f"a run is using {workdir} now"]
    lines = [f"not fsarena's, left alone: {f}" for f in found.foreign if f.advice]
    if found:
        lines.insert(
            0,
            f"an earlier run left {found.describe()}; "
            f"remove it with `fsarena cleanup --workdir {workdir}`",
        )
    return lines


def _free_bytes(path: str) -> int:
    st = os.statvfs(existing_parent(path))
    return st.f_bavail * st.f_frsize
