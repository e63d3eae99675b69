"""Where filesystems are made and where datasets come from: one module per kind of target.

Every target has the same small interface (setup -> device path, teardown,
describe); `make_target` is the one place that chooses between them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.host.executor import Executor, TaskExecutor
from fsarena.plan.model import Plan
from fsarena.targets.device import DeviceTarget
from fsarena.targets.guest import GuestSourceDisk, GuestTarget
from fsarena.targets.loop import LoopTarget
from fsarena.targets.source import Source, choose_source


class Target(Protocol):
    def setup(self, executor: Executor) -> str:
        """Make the device ready and return its path."""

    def teardown(self, executor: Executor) -> None:
        """Undo setup; callable more than once."""

    def describe(self) -> dict[str, object]: ...


def make_target(
    plan: Plan,
    profile: FilesystemProfile,
    repetition: int,
    guest_source: GuestSourceDisk | None = None,
    restore_from: str | None = None,
    label: str = "",
    recycle: bool = False,
) -> Target:
    """The target of one repetition of one filesystem: the plan's device, else a fresh image;
    for a guest driver, an image that a guest kernel boots with (see guest.py); an aged
    filesystem's image is restored from its snapshot (restore_from). recycle: a loop
    image is retired for the next target, not deleted (LoopTarget.recycle)."""
    image = str(Path(plan.workdir, "images", f"{label or profile.name}-r{repetition}.img"))
    if profile.guest:
        size = plan.image_size_for(profile)
        return GuestTarget(
            profile, image, size, plan.workdir, guest_source, plan.device, restore_from=restore_from
        )
    if plan.device is not None:
        return DeviceTarget(plan.device, (plan.workdir,))
    return LoopTarget(
        image, plan.image_size_for(profile), restore_from=restore_from, recycle=recycle
    )


def sequence_executor(target: Target, host: Executor) -> TaskExecutor:
    """What a sequence's tasks run through: the guest's executor for a guest target."""
    if isinstance(target, GuestTarget) and target.guest is not None:
        return target.guest
    return host


def ceiling_target(plan: Plan, repetition: int, size_bytes: int, recycle: bool = False) -> Target:
    """Where the device's raw ceiling is measured: the same kind of target the filesystems get."""
    if plan.device is not None:
        return DeviceTarget(plan.device, (plan.workdir,))
    image = str(Path(plan.workdir, "images", f"ceiling-r{repetition}.img"))
    return LoopTarget(image, size_bytes, recycle=recycle)


__all__ = [
    "DeviceTarget",
    "GuestSourceDisk",
    "GuestTarget",
    "LoopTarget",
    "Source",
    "Target",
    "ceiling_target",
    "choose_source",
    "make_target",
    "sequence_executor",
]

# The face: what other packages may import from this one, by module ("*": the
# module itself; the package's own names are its __all__). tests/unit/test_layers.py
# holds every import across packages to it; a name another package needs is added
# here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "ceiling": (
        "DIRECTIONS",
        "DRIFT_EVERY_S",
        "Direction",
        "ceiling_bytes",
        "measure_ceiling",
    ),
    "device_class": ("for_target",),
    "guard": ("*",),
    "loop": ("LoopTarget",),
    "source": (
        "choose_source",
        "mem_available_bytes",
        "source_size_bytes",
    ),
}
