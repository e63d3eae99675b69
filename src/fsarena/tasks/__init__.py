"""The task registry: every real-world task fsarena can run, one line each."""

from __future__ import annotations

from fsarena.errors import FsarenaError
from fsarena.tasks.base import Check, FsState, SourceDataset, Task, TaskContext
from fsarena.tasks.largefile import IsoCopyIn, IsoCopyWithin, IsoDelete
from fsarena.tasks.lifecycle import CapacityInitial, CapacityResidual, Mkfs, Mount, Umount
from fsarena.tasks.powerloss import Powerloss
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
        Powerloss,
    )
}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]()
    except KeyError:
        known = ", ".join(TASKS)
        raise FsarenaError(f"unknown task {name!r}; known tasks: {known}") from None


__all__ = ["TASKS", "Check", "FsState", "SourceDataset", "Task", "TaskContext", "get_task"]
