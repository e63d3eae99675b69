"""The task registry: each module's declared tasks, all of them, nothing else, in a stated order.

A family is its module alone (issue 38): the registry (fsarena.tasks) collects what
each module of the package declares in its TASKS. A task class left out of its
module's TASKS would be silently unknown, a base or helper declared there would
become a task, and an order that followed the imports would change what
`fsarena list tasks` prints: each is checked here.
"""

from __future__ import annotations

import inspect
import os
import random
import subprocess
import sys
from types import ModuleType

import pytest

from fsarena.kinds import KINDS
from fsarena.tasks import TASKS, Task, UserCommand, collect, task_modules
from fsarena.tasks.aged_tree import AgedLayout
from fsarena.tasks.command import CommandTask, command_task
from fsarena.tasks.pgbench import PostgresTask
from fsarena.tasks.treeblock import BlockCompress

# Task classes with a name of their own that are not built-in tasks: the template of the
# user's commands (`[tasks.NAME] command = ...`), which command_task subclasses per plan.
NOT_BUILT_IN = {CommandTask}


def _named_tasks(module: ModuleType) -> list[type[Task]]:
    """The Task classes the module defines that carry a name of their own."""
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and value.__module__ == module.__name__
        and issubclass(value, Task)
        and "name" in vars(value)
    ]


def _declaring(*declared: object) -> ModuleType:
    """A module of the package declaring these, last by name."""
    module = ModuleType("fsarena.tasks.zz_declaring")
    vars(module)["TASKS"] = declared
    return module


def test_every_named_task_class_of_the_modules_is_registered() -> None:
    registered = set(TASKS.values())
    for module in task_modules():
        missing = [t for t in _named_tasks(module) if t not in registered | NOT_BUILT_IN]
        names = ", ".join(t.__qualname__ for t in missing)
        assert not missing, f"add {names} to {module.__name__}.TASKS"


def test_only_declared_tasks_are_registered_each_under_its_name() -> None:
    declared = [t for m in task_modules() for t in getattr(m, "TASKS", ())]
    assert len(TASKS) == len(declared) and set(TASKS.values()) == set(declared)
    for name, task in TASKS.items():
        assert issubclass(task, Task) and "name" in vars(task) and task.name == name
        assert task in getattr(sys.modules[task.__module__], "TASKS", ()), "declared where made"
    for helper in (*NOT_BUILT_IN, PostgresTask, BlockCompress, Task):
        assert helper not in TASKS.values()
    assert "command" not in TASKS
    assert command_task("build", UserCommand(command="true")) not in TASKS.values()


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ((PostgresTask,), "is not a task with a name"),  # a base: no name of its own
        ((BlockCompress,), "is not a task with a name"),
        ((str,), "is not a task with a name"),
        ((AgedLayout,), "'aged_layout' is declared already"),  # aged_tree declares it
    ],
)
def test_collect_refuses_a_helper_or_a_task_twice(
    declared: tuple[object, ...], message: str
) -> None:
    with pytest.raises(AssertionError, match=message):
        collect([*task_modules(), _declaring(*declared)])


def test_the_order_is_stated_kinds_then_modules_then_each_modules_own() -> None:
    kinds = list(KINDS)
    modules = task_modules()
    position = {t: (m.__name__, i) for m in modules for i, t in enumerate(getattr(m, "TASKS", ()))}
    stated = sorted(TASKS.values(), key=lambda t: (kinds.index(t.kind), *position[t]))
    assert list(TASKS.values()) == stated
    shuffled = list(modules)
    random.Random(38).shuffle(shuffled)
    for order in (shuffled, modules[::-1]):
        assert list(collect(order)) == list(TASKS)


def test_the_order_does_not_follow_the_first_import_or_the_hash_seed() -> None:
    code = (
        "import fsarena.tasks.pg_replay, fsarena.tasks.aged_tree\n"
        "from fsarena.tasks import TASKS\n"
        "print(' '.join(TASKS))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "38"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout
    assert out.split() == list(TASKS)
