"""The task registry: every real-world task fsarena can run, one line each."""

from __future__ import annotations

from collections.abc import Mapping

from fsarena.errors import FsarenaError
from fsarena.tasks.aged_tree import AgedCat, AgedGrep, AgedLayout, AgedTar
from fsarena.tasks.backup import RsyncDelete, RsyncFull, RsyncIncremental
from fsarena.tasks.base import Check, FsState, SourceDataset, Task, TaskContext
from fsarena.tasks.bigiso import BigisoCopyBack, BigisoCopyThere
from fsarena.tasks.command import UserCommand, check_name, command_task
from fsarena.tasks.container import ContainerCopyUp, ContainerLoad, ContainerRemove
from fsarena.tasks.dbench import Dbench1, DbenchN
from fsarena.tasks.ddfile import DdDelete, DdRead, DdWriteSynced, DdWriteUnsynced
from fsarena.tasks.dpkg import DpkgUnpack, DpkgUnpackUnsafeIo
from fsarena.tasks.films import Film1Copy, Film1Delete, Film2Copy, Film2Delete
from fsarena.tasks.fio import FioRandRead, FioRandWrite
from fsarena.tasks.fsmark import FsmarkSynced
from fsarena.tasks.git import GitCheckout, GitClone, GitDelete, GitRepack, GitStatus
from fsarena.tasks.kerneltar import (
    KernelBz2Copy,
    KernelBz2Extract,
    KernelTarCopy,
    KernelTarDelete,
    KernelTarExtract,
    KernelTreeDelete,
)
from fsarena.tasks.largefile import IsoCopyIn, IsoCopyWithin, IsoDelete
from fsarena.tasks.lifecycle import (
    CapacityInitial,
    CapacityResidual,
    Mkfs,
    Mount,
    Umount,
    UmountDirty,
)
from fsarena.tasks.pg_replay import PgReplay, PgReplayPaced
from fsarena.tasks.pgbench import PgbenchInit, PgbenchOltp
from fsarena.tasks.portage import (
    PortageCompress,
    PortageCopy,
    PortageDecompress,
    PortageDelete,
    PortageMove,
    PortageSpace,
)
from fsarena.tasks.powerloss import Powerloss
from fsarena.tasks.replay import ReplayCapacity, ReplayPaced
from fsarena.tasks.smallfiles import (
    SmallfilesCompress,
    SmallfilesCreate,
    SmallfilesDecompress,
    SmallfilesDelete,
    SmallfilesMove,
)
from fsarena.tasks.sqlite import (
    SqliteCommitDelete1,
    SqliteCommitDeleteN,
    SqliteCommitWal1,
    SqliteCommitWalN,
)
from fsarena.tasks.synthetic import Bonnie
from fsarena.tasks.tree import (
    TreeCopyIn,
    TreeCopyWithin,
    TreeDelete,
    TreeFindPattern,
    TreeListRecursive,
)

TASKS: dict[str, type[Task]] = {
    t.name: t
    for t in (
        Mkfs,
        Mount,
        CapacityInitial,
        IsoCopyIn,
        IsoCopyWithin,
        IsoDelete,
        TreeCopyIn,
        TreeCopyWithin,
        TreeListRecursive,
        TreeFindPattern,
        TreeDelete,
        CapacityResidual,
        Umount,
        UmountDirty,
        # Article B (2001)
        DdWriteSynced,
        DdWriteUnsynced,
        DdRead,
        DdDelete,
        KernelTarCopy,
        KernelTarExtract,
        KernelTarDelete,
        KernelTreeDelete,
        # Article C (2009)
        Bonnie,
        BigisoCopyThere,
        BigisoCopyBack,
        KernelBz2Copy,
        KernelBz2Extract,
        # Article D (2008)
        PortageSpace,
        PortageCopy,
        PortageCompress,
        PortageDecompress,
        PortageMove,
        PortageDelete,
        SmallfilesCreate,
        SmallfilesCompress,
        SmallfilesDecompress,
        SmallfilesMove,
        SmallfilesDelete,
        Film1Copy,
        Film2Copy,
        Film1Delete,
        Film2Delete,
        Powerloss,
        # Today's server workloads (issue 15, suite server-2026)
        SqliteCommitDelete1,
        SqliteCommitDeleteN,
        SqliteCommitWal1,
        SqliteCommitWalN,
        PgbenchInit,
        PgbenchOltp,
        FsmarkSynced,
        Dbench1,
        DbenchN,
        FioRandWrite,
        FioRandRead,
        # Aged filesystems (--age): the layout and the reads that expose it
        AgedLayout,
        AgedGrep,
        AgedTar,
        AgedCat,
        # Today's workstation and operations workloads (issue 16)
        GitClone,
        GitCheckout,
        GitStatus,
        GitRepack,
        GitDelete,
        RsyncFull,
        RsyncIncremental,
        RsyncDelete,
        DpkgUnpack,
        DpkgUnpackUnsafeIo,
        ContainerLoad,
        ContainerCopyUp,
        ContainerRemove,
        # A captured service replayed (issue 37): fsarena run --replay TRACE
        ReplayCapacity,
        ReplayPaced,
        # PostgreSQL from its own statement log (issue 37): fsarena run --pg-replay LOG
        PgReplay,
        PgReplayPaced,
    )
}


def task_class(name: str, commands: Mapping[str, UserCommand] | None = None) -> type[Task]:
    """A built-in task, or a user's command task the plan defines under that name."""
    if commands and name in commands:
        return command_task(name, commands[name])
    try:
        return TASKS[name]
    except KeyError:
        known = ", ".join(TASKS)
        raise FsarenaError(f"unknown task {name!r}; known tasks: {known}") from None


def check_commands(tasks: list[str], commands: dict[str, UserCommand]) -> None:
    """Every task is built in or defined; no definition shadows a built-in or goes unused."""
    for name in commands:
        check_name(name)
        if name in TASKS:
            raise FsarenaError(f"tasks.{name}: a built-in task's name; give your command another")
        if name not in tasks:
            raise FsarenaError(f"commands.{name}: defined but not in the task list")
    unknown = [t for t in tasks if t not in TASKS and t not in commands]
    if unknown:
        raise FsarenaError(
            f"unknown task(s) {', '.join(unknown)}; known: {', '.join(TASKS)} "
            "(or define your own: [tasks.NAME] command = ...)"
        )


def get_task(name: str, commands: Mapping[str, UserCommand] | None = None) -> Task:
    return task_class(name, commands)()


__all__ = [
    "TASKS",
    "Check",
    "FsState",
    "SourceDataset",
    "Task",
    "TaskContext",
    "UserCommand",
    "check_commands",
    "get_task",
    "task_class",
]

# The face: what other packages may import from this one, by module ("*": the
# module itself; the package's own names are its __all__). tests/unit/test_layers.py
# holds every import across packages to it; a name another package needs is added
# here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "base": (
        "HostFault",
        "Task",
        "TaskContext",
        "Tool",
        "Unsupported",
        "set_attributes",
    ),
    "lifecycle": (
        "Mkfs",
        "Mount",
        "Umount",
    ),
}
