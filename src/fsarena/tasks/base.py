"""The Task interface: what every real-world task provides, and the context it runs in.

Lifecycle of one task, run by the runner: prepare (untimed), sync + drop
caches, the timed commands (+ TaskContext.durable() when the task writes: the
filesystem's sync, then one flush of the device) between region_starts and
region_ended (untimed reads of a server's counters), verify (untimed). A task
never times anything itself.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeVar

from fsarena.aging.workload import AgingPlan
from fsarena.datasets.manifest import DIGEST_ALGORITHM, Manifest
from fsarena.datasets.spec import DatasetSpec, WorkloadSpec
from fsarena.datasets.verify import verify_where
from fsarena.errors import FIX_MARK, FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.host import cgroups
from fsarena.host.executor import TaskExecutor
from fsarena.measure.collect import Command, Measurement

# The articles' copies wrote every byte again. Since coreutils 9.0, cp clones
# (reflinks) by default where the filesystem can (xfs, btrfs), which writes only
# metadata (measured: 0.1 MB written for a 15 MB copy within xfs); forcing a
# real copy makes every filesystem do the work the articles timed.
CP = ("cp", "--reflink=never")

SpecT = TypeVar("SpecT", bound=DatasetSpec)


class FsState(enum.Enum):
    """Where the filesystem under test is in its lifecycle."""

    BLANK = "blank"  # device attached, not yet formatted in this repetition
    UNMOUNTED = "unmounted"  # formatted, not mounted
    MOUNTED = "mounted"


@dataclass(frozen=True)
class SourceDataset:
    """A dataset as it lies on the source (the articles' "second disk")."""

    root: str  # directory holding exactly the manifest's files
    manifest: Manifest
    spec: DatasetSpec | None = None  # its parameters (sizes for dd and bonnie++)


@dataclass(frozen=True)
class Check:
    """One verification a task made after its timed region."""

    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class TaskContext:
    """Everything a task may use: the filesystem under test, the datasets, the machine."""

    profile: FilesystemProfile
    device: str
    mountpoint: str
    scratch: str  # a directory outside the test filesystem for tools' outputs
    datasets: Mapping[str, SourceDataset]
    executor: TaskExecutor
    artifacts_dir: str = ""  # where a task may keep files for inspection (beside the session)
    aging: AgingPlan | None = None  # the run's aging (--age): the aged-tree tasks need it
    # False: copies are checked by name, kind and size, not read and hashed. The runner
    # hashes them in the first measured round of each filesystem only (issue 14: under
    # load, hashing every copy of every round was most of fsarena's own time).
    hash_content: bool = True
    # How the sequence empties caches before a timed execution (fsarena.run.cold: the
    # filesystem's own, or the machine's); None: the executor's machine-wide drop.
    make_cold: Callable[[], None] | None = None
    # What `lsattr -d` read back of each data directory the current task made with
    # data_directory(), by path; the sequence records it with the task's run.
    data_dir_attributes: dict[str, str] = field(default_factory=dict)

    def data_directory(self, path: str) -> None:
        """Make a task's (empty) data directory, with the profile's per-directory attributes.

        A database's data directory is where `chattr +C` (no copy-on-write) belongs:
        set on the empty directory, every file made in it later inherits it, which
        setting it on an existing file with data does not do. What the kernel kept is
        read back (`lsattr -d`), never assumed: a filesystem that ignores the attribute
        fails the task with what it said.
        """
        self.executor.make_dir(path)
        if self.profile.data_dir_attributes:
            flags = set_attributes(self.executor, path, self.profile.data_dir_attributes)
            self.data_dir_attributes[path] = flags

    def cold(self) -> None:
        """Empty the caches before a timed execution (a task's between_samples uses it)."""
        (self.make_cold or self.executor.drop_caches)()

    def durable(self) -> list[Command]:
        """What ends a writing task's timed region: durable, the same for every filesystem.

        "Durable" here: the filesystem's sync (syncfs(2); sync(2) where the profile
        says syncfs misses the data) has written everything back, then one fsync of
        the block device under test (`sync DEVICE`: blkdev_issue_flush) has emptied the
        device's write cache. Without that flush, syncfs flushed or not depending on
        the filesystem (ext2's superblock write issues none; a jbd2 commit, an xfs log
        force or a btrfs superblock write do), so each paid a different price for the
        same promise. A filesystem kept in memory (tmpfs) has no device to flush.
        """
        commands = [Command(self.profile.sync_argv(self.mountpoint))]
        if self.profile.on_device:
            commands.append(Command(("sync", self.device)))
        return commands

    def sync(self) -> None:
        """Untimed: make everything written so far durable, as a timed region ends (durable)."""
        for command in self.durable():
            self.executor.call(command.argv)

    def path(self, *parts: str) -> str:
        """A path on the filesystem under test."""
        return "/".join((self.mountpoint.rstrip("/"), *parts))

    def dataset(self, name: str) -> SourceDataset:
        return self.datasets[name]

    def parameters(self, kind: type[SpecT], name: str = "") -> SpecT:
        """The parameters of the dataset `name` (by default the one named as `kind`'s kind),
        as planned (a suite's overrides, --scale); FsarenaError when a suite gave it another
        kind."""
        name = name or kind.kind
        spec = self.dataset(name).spec
        if not isinstance(spec, kind):
            raise FsarenaError(f'dataset "{name}" must be of kind "{kind.kind}"')
        return spec


def set_attributes(executor: TaskExecutor, path: str, attributes: Sequence[str]) -> str:
    """chattr each attribute ("+C") on path, then what `lsattr -d` reads back; FsarenaError
    when an attribute did not hold (a filesystem that does not keep it)."""
    for attribute in attributes:
        executor.call(("chattr", attribute, path))
    flags = executor.output(("lsattr", "-d", path)).split()[0]
    lost = [a for a in attributes if a.startswith("+") and not set(a[1:]) <= set(flags)]
    if lost:
        raise FsarenaError(f"chattr {' '.join(lost)} on {path} did not hold: lsattr reads {flags}")
    return flags


class Unsupported(Exception):
    """Raised by a task's prepare when this filesystem or machine cannot run it: a skip.

    The reason is recorded on the run (status "skipped"), the sequence goes on,
    and reports show the reason; it is never a failure nor a silent omission.
    """


class HostFault(Exception):
    """Raised by a task's prepare when this host lacks what it needs: tool, permission, server.

    Not the filesystem's doing, unlike Unsupported: the run is recorded skipped with
    the fault's code (missing-tool, permission, missing-server), the sequence goes on,
    the session is partial (`fsarena run` exits 1), and the report opens with what is
    missing and its fix.
    """

    def __init__(self, code: str, what: str, fix: str) -> None:
        super().__init__(f"{what}{FIX_MARK}{fix}")
        self.code = code


@dataclass(frozen=True)
class Tool:
    """A program a task runs: the Debian package that brings it, and how it tells its version.

    Declared once, on the task (Task.tools): the task checks for it (require_tools),
    the session records its version (run/preflight.py), and a test checks that
    scripts/apt-packages.txt installs its package.
    """

    name: str
    package: str  # the Debian package that provides it
    # What to run after the name to learn its version; None: it prints none (fs_mark).
    version_argv: tuple[str, ...] | None = ("--version",)
    version_marker: str = ""  # "": the first line printed; else the first line containing this


def require_tools(ctx: TaskContext, tools: Iterable[Tool]) -> None:
    """A host fault unless every tool is on PATH where the task runs (the host or a guest)."""
    listed = list(tools)
    script = " ; ".join(f"command -v {t.name} >/dev/null || echo {t.name}" for t in listed)
    missing = ctx.executor.output(("sh", "-c", script)).split()
    if missing:
        where = "in the guest" if ctx.profile.driver == "guest" else "on this machine"
        packages = sorted({t.package for t in listed if t.name in missing})
        raise HostFault(
            "missing-tool",
            f"{', '.join(missing)} not found on PATH {where}",
            f"install {', '.join(packages)} (./scripts/setup.sh installs every tool; "
            "`fsarena check` names the package)",
        )


def find_number(pattern: str, text: str, what: str) -> float:
    """The number a tool printed: pattern's first group, searched line by line (re.MULTILINE);
    FsarenaError naming `what` and quoting the output's end when it is not there."""
    match = re.search(pattern, text, re.MULTILINE)
    if not match:
        raise FsarenaError(f"{what} not found in the tool's output: {text[-300:]!r}")
    return float(match[1])


def cache_values(working_set_bytes: int, memory_bytes: int) -> dict[str, float]:
    """The working set beside the page cache the task may use; fits_page_cache 1 when it fits.

    The runner turns fits_page_cache into a warning in the report: such a run
    measures memory more than the filesystem (a too small --scale).
    """
    return {
        "working_set_bytes": float(working_set_bytes),
        "page_cache_limit_bytes": float(memory_bytes),
        "fits_page_cache": 1.0 if working_set_bytes <= memory_bytes else 0.0,
    }


class Task:
    """A real-world task. Subclasses state in their docstring what they model and how."""

    name: ClassVar[str]
    kind: ClassVar[str]  # the kind of work it belongs to, for tables and verdicts
    requires: ClassVar[frozenset[FsState]] = frozenset({FsState.MOUNTED})
    leaves: ClassVar[FsState | None] = None  # the state after success, if it changes it
    writes: ClassVar[bool] = False  # ctx.durable() ends the timed region (sync + device flush)
    timed: ClassVar[bool] = True  # False: a probe that reads values (capacity), no command
    # True: it makes a filesystem (mkfs), so it cannot run on an aged one restored from its
    # snapshot; aged sequences record it as skipped (see fsarena.aging).
    formats: ClassVar[bool] = False
    # True: it runs on a filesystem made for it. When an earlier task of the repetition
    # used the filesystem, the sequence unmounts it, makes it anew and mounts it, untimed
    # (run/sequence.py), so what it measures never depends on what ran before it. Not on
    # an aged filesystem (restored from its snapshot, never made): there it runs as the
    # tasks before it left it.
    fresh: ClassVar[bool] = False
    datasets: ClassVar[tuple[str, ...]] = ()  # names of the datasets it needs on the source
    # A family that runs its own tool: its parameters at scale 1, the dataset of that name
    # (one of `datasets`) that a suite's [datasets.NAME] table overrides and --scale
    # shrinks. The catalog (plan/catalog.py) collects these defaults and their kinds from
    # the registered tasks; the task reads them with ctx.parameters(ItsSpec).
    parameters: ClassVar[WorkloadSpec | None] = None
    # The programs it runs beyond the base tools every sequence uses (cp, rm, ls, find,
    # sync, mount: run/preflight.py BASE_TOOLS); their versions go into the session.
    tools: ClassVar[tuple[Tool, ...]] = ()
    # The direction of the logical bytes the task moves (payload_bytes), compared with the
    # device's raw ceiling of that direction; None: the task's figure is not a throughput.
    payload: ClassVar[Literal["write", "read"] | None] = None
    # The metrics its table shows, in order (recorded in the plan's task_info, so reports
    # never import tasks); None: the default timed or probe columns.
    columns: ClassVar[tuple[str, ...] | None] = None
    # Timed executions per repetition: sub-second tasks whose lifecycle allows it run
    # several times (hyperfine's approach), each timed and kept; the last is the real
    # one the sequence goes on from. between_samples() restores the state in between.
    samples: ClassVar[int] = 1
    # Its version in every result's comparison key (session/key.py): bump it whenever its
    # commands, their options or its parameters change, so that results of the old command
    # are never pooled with the new one's (fsarena share). tests/unit/test_task_versions.py
    # pins each task's commands as planned, and fails when they change while this does not.
    version: ClassVar[int] = 1

    @classmethod
    def key_version(cls) -> str:
        """The version its comparison key carries (a user's command: its own digest)."""
        return str(cls.version)

    def unsupported(self, ctx: TaskContext) -> str:
        """Why this filesystem cannot run the task (a skip with that reason), or "" if it can.

        Decided from the profile's capabilities, never its name.
        """
        return ""

    def prepare(self, ctx: TaskContext) -> None:
        """Untimed set-up before caches are dropped (e.g. make a target directory)."""

    def commands(self, ctx: TaskContext) -> list[Command]:
        """The real commands whose execution is timed."""
        return []

    def region_starts(self, ctx: TaskContext) -> None:
        """Untimed, just before each timed execution, after the cold step: read counters
        the commands cannot (a server's CPU, from its cgroup), or leave the state the
        cold step would undo (umount_dirty's dirty data)."""

    def region_ended(self, ctx: TaskContext) -> None:
        """Untimed, just after each timed execution, before anything else runs (verify)."""

    def between_samples(self, ctx: TaskContext) -> None:
        """Untimed: undo one timed execution so the next can run (samples > 1)."""

    def failure(self, ctx: TaskContext) -> str:
        """Why the timed commands failed, where the task knows more than their stderr says
        (read before cleanup); "" if it does not."""
        return ""

    def verify(self, ctx: TaskContext) -> list[Check]:
        """Untimed checks that the task did what it claims (copies intact, files gone)."""
        return []

    def payload_bytes(self, ctx: TaskContext) -> int:
        """Logical bytes the task reads or writes (the data, not the metadata)."""
        return 0

    def probe(self, ctx: TaskContext) -> dict[str, float]:
        """Values read by an untimed task (timed = False)."""
        return {}

    def extra(self, ctx: TaskContext, measurement: Measurement) -> dict[str, float]:
        """Metrics derived after a verified timed run (MB/s, a tool's own figures)."""
        return {}

    def cleanup(self, ctx: TaskContext) -> None:
        """Always run last, whatever happened (remove a cgroup, a helper file)."""

    def details(self) -> dict[str, Any]:
        """Raw detail data the last probe or timed execution produced, kept with its run."""
        return {}

    @classmethod
    def describe(cls) -> str:
        """The methodology, from the docstring's first paragraph."""
        doc = (cls.__doc__ or "").strip()
        return " ".join(doc.split("\n\n")[0].split())


def memory_cgroup_failure(read: Callable[[str], str], cgroup: str, program: str) -> str:
    """Why the task failed if the kernel's out-of-memory killer stopped a process in its
    memory cgroup, whose SIGKILL leaves no message of its own (exit code -9); else "".
    `read`: the executor's read_text."""
    counted = cgroups.oom_kills(cgroup, read) if cgroup else None
    if counted is None or counted[0] == 0:
        return ""
    kills, limit = counted
    within = "" if limit is None else f" of {limit >> 20:,} MiB"
    return (
        f"{program} was killed by the kernel's out-of-memory killer in its memory "
        f"cgroup{within} ({kills} kill(s))"
    )


def verify_copy(ctx: TaskContext, dataset: str, root: str) -> Check:
    """Compare a copy on the test filesystem against the dataset's manifest."""
    result = verify_where(ctx.executor, ctx.dataset(dataset).manifest, root, ctx.hash_content)
    detail = (
        f"{result.files_checked} files, {result.bytes_checked} bytes checked ({DIGEST_ALGORITHM})"
    )
    if not ctx.hash_content:
        detail = f"{result.files_checked} files checked by name and size (hashed in round 1)"
    if not result.ok:
        detail = "; ".join(result.problems[:5])
    return Check(f"copy of {dataset} intact", result.ok, detail)


def verify_absent(ctx: TaskContext, *paths: str) -> Check:
    """Check that deleted paths are gone."""
    left = [p for p in paths if ctx.executor.exists(p)]
    return Check("deleted", not left, "still present: " + ", ".join(left) if left else "")


def verify_tree(ctx: TaskContext, dataset: str, root: str, what: str) -> Check:
    """Compare an extracted or moved tree with the dataset's manifest."""
    check = verify_copy(ctx, dataset, root)
    return Check(f"{what} of {dataset} intact", check.ok, check.detail)


def cpu_per_unit(
    measurement: Measurement, units: float, scale: float, server_s: float = 0.0
) -> float | None:
    """CPU time (user + sys of the task's processes, and of its server) per unit of work.

    For tasks that run for a fixed time (pgbench -T, fio time_based, dbench -t), CPU
    over the run grows with the work done: a filesystem that does more in the time
    "costs" more. Per transaction, per I/O or per MB, it measures the cost of the work.
    server_s: the CPU of a server the task started, over the same region (its cgroup).
    """
    if units <= 0:
        return None
    return (measurement.user_s + measurement.sys_s + server_s) / units * scale


# Every task's time and CPU, as article D printed (real, user, sys), then the device's bytes.
REAL_USER_SYS = ("wall_s", "user_s", "sys_s", "cpu_pct", "device_read_bytes", "device_write_bytes")
# Article C printed MB/s: the payload's throughput first, then time and CPU.
RATE_FIRST = (
    "throughput_bytes_per_s",
    "wall_s",
    "user_s",
    "sys_s",
    "cpu_pct",
    "device_write_bytes",
)
