"""The task registry: every real-world task fsarena can run, as its module declares it.

A module of this package declares the tasks it holds in a module-level `TASKS`
tuple, beside their classes; the registry imports every module and takes what each
declares, so a new family is its module alone. Only declared classes are tasks: the
bases and helpers beside them (`pgbench.PostgresTask`, `treeblock.BlockCompress`, the
user's `command.CommandTask`) never are, whatever they inherit or name.

The registry's order (`fsarena list tasks`, the errors naming the known tasks, the
catalog's parameters) is stated, never the import order: the kinds' report order
(`fsarena.kinds.KINDS`), then the modules by name, then each module's own order.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from types import ModuleType

from fsarena.errors import FsarenaError
from fsarena.kinds import KINDS
from fsarena.tasks.base import Check, FsState, SourceDataset, Task, TaskContext
from fsarena.tasks.command import UserCommand, check_name, command_task


def task_modules() -> list[ModuleType]:
    """Every module of this package, by name (each imported now)."""
    names = sorted(m.name for m in pkgutil.iter_modules(__path__))
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def collect(modules: Iterable[ModuleType]) -> dict[str, type[Task]]:
    """The tasks the modules declare (their TASKS), by name, in the order stated above."""
    declared: dict[str, type[Task]] = {}
    for module in sorted(modules, key=lambda m: m.__name__):
        for task in getattr(module, "TASKS", ()):
            where = f"{module.__name__}.TASKS"
            if not (isinstance(task, type) and issubclass(task, Task) and "name" in vars(task)):
                raise AssertionError(f"{where}: {task!r} is not a task with a name")
            if task.kind not in KINDS:
                raise AssertionError(f"{where}: {task.name}'s kind {task.kind!r} is not in KINDS")
            if task.name in declared:
                first = declared[task.name]
                raise AssertionError(
                    f"{where}: {task.name!r} is declared already ({first.__module__})"
                )
            declared[task.name] = task
    order = list(KINDS)  # sorted() is stable: within a kind, the modules' order stays
    return {t.name: t for t in sorted(declared.values(), key=lambda t: order.index(t.kind))}


TASKS: dict[str, type[Task]] = collect(task_modules())


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
    "aged_tree": ("TASKS",),
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
