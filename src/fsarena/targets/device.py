"""Real block-device targets: a partition or disk the user named twice, guarded before every mkfs.

The device was checked and confirmed before the run (guard.check); before each
repetition the guard's refusals are checked again (a desktop may automount a
fresh filesystem) and old signatures are wiped, so every filesystem starts
from a device as blank as a new loop image. Nothing is undone at the end: the
device keeps the last filesystem made, and nothing else of the user's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from fsarena.host.executor import Executor
from fsarena.targets import guard


@dataclass
class DeviceTarget:
    """A guarded block device; same interface as LoopTarget."""

    device: str
    kept_paths: Sequence[str] = ()  # work directory and results: never on the device
    recheck: Callable[[str, Sequence[str]], None] = field(default=guard.recheck)

    kind = "block-device"

    def setup(self, executor: Executor) -> str:
        self.recheck(self.device, self.kept_paths)
        # mkfs -F/-f overwrite their own kind only; leftover signatures of another
        # filesystem could make blkid or mount see two (wipefs -a erases them all).
        executor.call(["wipefs", "--all", "--quiet", self.device])
        return self.device

    def teardown(self, executor: Executor) -> None:
        """Nothing to detach or delete: the device is the user's."""

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "path": self.device}
