"""The seam's vocabulary: the protocols every effect on the machine goes through, and their records.

TaskExecutor is what a sequence's tasks do (on the host, or in a guest
kernel); Host is the host's plumbing (images, loop devices, guests); Executor
is both, the host's. host/executor.py has the real one; tests/fakes.py the
recording fakes, type-checked against these protocols. Datasets are not the
seam's: they make themselves (fsarena.datasets.making), and a copy is verified
where it is, here or as a guest's job (Runtime). Standard library only: a
guest's agent imports it.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from fsarena.measure.collect import Command, Timed


@dataclass(frozen=True)
class SpaceInfo:
    """statvfs of a mounted filesystem, in bytes."""

    total_bytes: int
    available_bytes: int
    free_bytes: int


@dataclass(frozen=True)
class ImageCopy:
    """How an image file was copied (reflink or sparse copy), and the space the copy takes."""

    method: str  # "reflink" | "sparse copy"
    allocated_bytes: int


@dataclass(frozen=True)
class GuestSpec:
    """What a guest is booted with: its kernel, disks, and the paths it must mirror.

    The seam's vocabulary: the runner asks for a guest with it, fsarena.guest boots one.
    """

    kernel: str  # a key of GUESTS
    target_image: str
    run_dir: str  # host directory for the guest's own files, removed when it stops
    workdir: str  # mirrored inside the guest as a writable tmpfs
    modules: tuple[str, ...] = ()
    source_image: str = ""  # the datasets' disk, attached read-only
    source_mountpoint: str = ""
    source_fstype: str = ""
    python: str = field(default_factory=lambda: sys.executable)


class TaskExecutor(Protocol):
    """What a sequence's tasks may do to the machine they run on: the host, or a guest kernel.

    The narrow seam: every step of a sequence (prepare, measure, check, clean up)
    goes through it, and a guest's executor implements exactly this.
    """

    def call(self, argv: Sequence[str]) -> None:
        """Run an untimed helper command; raise FsarenaError if it fails."""

    def output(self, argv: Sequence[str]) -> str:
        """Run an untimed helper command and return its stdout; FsarenaError if it fails."""

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        """Run commands as one timed region."""

    def drop_caches(self) -> None:
        """Write back dirty data, then drop the page, dentry and inode caches."""

    def space(self, mountpoint: str) -> SpaceInfo: ...

    def device_size(self, device: str) -> int: ...

    def make_dir(self, path: str) -> None: ...

    def remove_path(self, path: str) -> None: ...

    def exists(self, path: str) -> bool: ...

    def count_lines(self, path: str) -> int: ...

    def read_text(self, path: str) -> str: ...

    def write_file(self, path: str, data: bytes) -> None: ...

    def is_mounted(self, mountpoint: str) -> bool: ...

    def create_memory_cgroup(self, limit_bytes: int) -> str: ...

    def create_cpu_cgroup(self, beside: str) -> str:
        """A cgroup counting the CPU of processes that also join `beside` ("" if none can):
        `beside` itself where it counts CPU (cgroup v2), else one made (v1 cpuacct)."""

    def create_task_cgroup(self) -> str:
        """A cgroup with no limit that holds a task's processes (removing it ends them all)."""

    def remove_cgroup(self, path: str) -> None:
        """Remove a cgroup fsarena made, ending every process still in it first."""

    # A task records what outlives a crash (a database server's data) in the ledger;
    # inside a guest there is nothing to record: what it creates ends with it.
    def track(self, kind: str, ident: str, source: str = "") -> None:
        """Record a resource in the ledger before creating it (a mount with its source device)."""

    def untrack(self, kind: str, ident: str) -> None:
        """Forget a resource once it is undone."""


class Host(Protocol):
    """The host's plumbing: images, loop devices, guests (targets and set-up)."""

    def create_image(self, path: str, size_bytes: int) -> None:
        """An image file of size_bytes, allocated on the host, reading as zeros (refuses
        an existing path); the spare image a sequence retired, renamed, if it has the size."""

    def retire_image(self, path: str) -> None:
        """An image create_image made, no longer needed: reset to a new image's state and
        kept as the spare the next create_image takes; else deleted."""

    def remove_spare_image(self) -> None:
        """Delete the spare image, if one is kept: the run's end."""

    def copy_image(self, source: str, dest: str) -> ImageCopy:
        """Copy an image file: a reflink where the host filesystem can, else a sparse copy."""

    def attach_loop(self, image: str) -> str: ...

    def detach_loop(self, device: str) -> None: ...

    def flush_device(self, device: str) -> bool:
        """Write back and drop a block device's own cache; False if something still holds it."""

    def start_guest(self, spec: GuestSpec) -> Guest:
        """Boot a guest kernel; its executor runs a sequence's tasks inside it until closed."""


@runtime_checkable
class Runtime(Protocol):
    """An executor that runs fsarena's jobs itself, elsewhere: a guest's, through its agent.

    A job is a function of a module's JOBS table (aging a filesystem, verifying a
    copy), run where the filesystem is mounted; it takes the executor and JSON
    arguments and returns JSON (they travel on the guest's serial line). An
    executor that is no Runtime (the host's) has the job run here, in this process.
    """

    def job(self, module: str, name: str, args: dict[str, Any], timeout_s: float) -> Any: ...


class Executor(TaskExecutor, Host, Protocol):
    """The host's executor: both seams (targets and set-up need plumbing and commands)."""


class Guest(TaskExecutor, Protocol):
    """A running guest kernel, and the task executor that forwards into it."""

    target_device: str  # the guest's device node of the target image

    def close(self) -> None:
        """Shut the guest down (or kill it); callable more than once."""
