"""Guest targets: the target image as a guest kernel's first disk, the datasets as its second.

Inside a guest the target is not a loop device but the guest's own disk
(/dev/ubda in User-Mode Linux); the sequence's executor is the guest's, so the
tasks run there unchanged. The datasets reach the guest on a read-only disk
image built once per run from the source directory (`mkfs.ext4 -d`, no mount
needed), mounted inside the guest where the host has the source, so every path
a task uses is the same inside and out. An aged filesystem's image is restored
from its snapshot before the guest boots with it (aging snapshots it on the host
while the guest has it unmounted).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES, SOURCE_FILESYSTEM, FilesystemProfile
from fsarena.host.executor import Executor, Guest, GuestSpec


@dataclass
class GuestSourceDisk:
    """The datasets as a read-only disk image for guests (the articles' second disk)."""

    image: str
    source_dir: str  # where the host has the datasets; the guest mounts the disk there
    size_bytes: int
    made: bool = False

    @property
    def fstype(self) -> str:
        return PROFILES[SOURCE_FILESYSTEM].fstype

    def setup(self, executor: Executor) -> None:
        argv = list(PROFILES[SOURCE_FILESYSTEM].mkfs_argv(self.image))
        argv[-1:-1] = ["-d", self.source_dir]  # populate from the directory, before the device
        executor.create_image(self.image, self.size_bytes)
        self.made = True
        executor.call(argv)

    def teardown(self, executor: Executor) -> None:
        if self.made:
            executor.remove_path(self.image)
            self.made = False


@dataclass
class GuestTarget:
    """A sparse image that a guest kernel boots with as its first disk."""

    profile: FilesystemProfile
    image: str
    size_bytes: int
    workdir: str
    source: GuestSourceDisk | None
    device: str | None = None  # the plan's real device: not for guests (images only)
    guest: Guest | None = None
    restore_from: str | None = None  # an aged filesystem's snapshot, copied in place of mkfs
    created: bool = False  # the image exists because this target made it

    kind = "guest-disk"

    def setup(self, executor: Executor) -> str:
        """Create the image and boot the guest; the guest's device node of the image.

        The sequence then runs through the guest (targets.sequence_executor).
        """
        if self.device is not None:
            raise FsarenaError(
                f"{self.profile.name} runs in a guest kernel, on an image file, not on "
                f"{self.device}: run it in a session without --device"
            )
        if self.restore_from is None:
            executor.create_image(self.image, self.size_bytes)  # refuses an existing file
        else:  # the aged image, copied before the guest boots with it
            executor.make_dir(str(Path(self.image).parent))
            if executor.exists(self.image):
                raise FsarenaError(f"{self.image} exists and this run did not make it")
            executor.track("image", self.image)  # `fsarena cleanup` removes it after a crash
            executor.copy_image(self.restore_from, self.image)
        self.created = True
        self.guest = executor.start_guest(self.spec())
        return self.guest.target_device

    def spec(self) -> GuestSpec:
        source = self.source
        return GuestSpec(
            kernel=self.profile.guest,
            target_image=self.image,
            run_dir=str(Path(self.workdir, "guests", Path(self.image).stem)),
            workdir=self.workdir,
            # The datasets' disk needs its filesystem's modules too, first.
            modules=tuple(
                dict.fromkeys((*PROFILES[SOURCE_FILESYSTEM].modules, *self.profile.modules))
            ),
            source_image=source.image if source else "",
            source_mountpoint=source.source_dir if source else "",
            source_fstype=source.fstype if source else "",
        )

    def teardown(self, executor: Executor) -> None:
        """Stop the guest (killing it if it must), delete the image; callable more than once."""
        if self.guest is not None:
            self.guest.close()
            self.guest = None
        if self.created:  # never an earlier run's image
            executor.remove_path(self.image)
            self.created = False

    def describe(self) -> dict[str, object]:
        return {"kind": self.kind, "size_bytes": self.size_bytes, "guest": self.profile.guest}
