"""A task's version (its comparison key's) changes whenever the code that makes its work does.

Each task declares `version` (Task.version), which goes into every result's
comparison key (session/key.py): results are pooled across machines only when it
is equal (fsarena share view). A declared number can be forgotten, so this test
derives a digest of everything that makes the task's commands and figures: every
method and attribute of its own classes (up to Task) but those that only check,
tell, clean up or skip (verify, failure, cleanup, details, unsupported), the
functions and classes of fsarena.tasks they call (followed through), the
constants they read, TaskContext (its durable() ends every writing region), and
the class data inherited from Task that shapes a run (writes, samples, datasets, tools,
...), and the C source of the native helpers it runs (native/NAME.c of each
`native_tool("NAME")`). The digests are pinned in tests/golden/task-versions.json beside
each version. When the code behind a task changes and its version does not, the test
fails: bump the task's `version` if its commands, their options, its parameters or its
figures changed (a result of the new code must not be pooled with the old), or keep it
if they did not (a refactor); then pin again with FSARENA_UPDATE_GOLDEN=1.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest

from fsarena.measure.native import native_tool
from fsarena.tasks import TASKS, Task, TaskContext
from fsarena.tasks.command import UserCommand, command_task

PINNED = Path(__file__).parent.parent / "golden" / "task-versions.json"
NATIVE = Path(__file__).resolve().parents[2] / "native"
# Methods that cannot change what is run or measured: how the result is checked, told,
# cleaned up, or skipped (a skip measures nothing), and the version itself.
IGNORED = frozenset(
    {"verify", "failure", "cleanup", "details", "unsupported", "describe", "key_version",
     "version", "name"}
)  # fmt: skip
CLASS_DATA = (
    "kind", "requires", "leaves", "writes", "timed", "formats", "datasets", "payload",
    "columns", "samples",
)  # fmt: skip
FOLLOWED = ("fsarena.tasks.",)  # whose functions and classes are read through


def _code(obj: Any) -> str:
    """The object's source as an AST dump without docstrings (comments and layout ignored)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def _stable(value: Any) -> str:
    """repr, with sets and dictionaries in sorted order (a set's order follows the hash seed)."""
    if isinstance(value, set | frozenset):
        return "{" + ", ".join(sorted(_stable(v) for v in value)) + "}"
    if isinstance(value, tuple | list):
        return "(" + ", ".join(_stable(v) for v in value) + ")"
    if isinstance(value, dict):
        return (
            "{" + ", ".join(sorted(f"{_stable(k)}: {_stable(v)}" for k, v in value.items())) + "}"
        )
    return repr(value)


def _referenced(function: types.FunctionType, into: dict[str, str]) -> None:
    """Constants, functions and classes of fsarena.tasks the function reads, followed through."""
    for name in function.__code__.co_names:
        value = function.__globals__.get(name)
        if value is None or isinstance(value, types.ModuleType):
            continue
        module = getattr(value, "__module__", "") or ""
        key = f"{module}.{name}"
        if key in into:
            continue
        if value is native_tool:  # the native helpers it runs: their C source is its code
            for const in function.__code__.co_consts:
                source = NATIVE / f"{const}.c" if isinstance(const, str) and const else None
                if source is not None and source.is_file():
                    into[f"native/{source.name}"] = source.read_text()
            continue
        if isinstance(value, str | int | float | tuple | frozenset | bytes):
            into[key] = _stable(value)
        elif isinstance(value, types.FunctionType) and module.startswith(FOLLOWED):
            into[key] = _code(value)
            _referenced(value, into)
        elif inspect.isclass(value) and module.startswith(FOLLOWED) and value is not Task:
            into[key] = _code(value)
            for member in vars(value).values():
                if isinstance(member, types.FunctionType):
                    _referenced(member, into)


def _members(task: type[Task]) -> dict[str, str]:
    """Every method and class attribute of the task's own classes (up to Task), followed."""
    found: dict[str, str] = {}
    for klass in task.__mro__[: task.__mro__.index(Task)]:
        for name, member in vars(klass).items():
            key = f"{klass.__qualname__}.{name}"
            if name in IGNORED or (name.startswith("__") and name != "__init__"):
                continue
            if isinstance(member, staticmethod | classmethod):
                member = member.__func__
            if isinstance(member, property) and member.fget is not None:
                member = member.fget
            if isinstance(member, types.FunctionType):
                found[key] = _code(member)
                _referenced(member, found)
            else:
                found[key] = _stable(member)
    return found


def code_digest(task: type[Task]) -> str:
    """The digest of the code and data that make the task's work (see the module docstring)."""
    data = {name: _stable(getattr(task, name)) for name in CLASS_DATA}
    data["tools"] = repr([(t.name, t.package) for t in task.tools])
    parts = {"class": data, "context": _code(TaskContext), **_members(task)}
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def current() -> dict[str, dict[str, object]]:
    return {
        name: {"version": task.version, "code": code_digest(task)}
        for name, task in sorted(TASKS.items())
    }


def test_every_task_version_is_bumped_when_the_code_behind_its_work_changes() -> None:
    found = current()
    if os.environ.get("FSARENA_UPDATE_GOLDEN"):
        PINNED.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(PINNED.read_text())
    stale = [
        f"{name} (version {now['version']})"
        for name, now in found.items()
        if name in pinned
        and now["code"] != pinned[name]["code"]
        and now["version"] == pinned[name]["version"]
    ]
    assert not stale, (
        "the code that makes these tasks' commands or figures changed, their version did "
        f"not: {', '.join(stale)}. If the commands, options, parameters or figures changed, "
        "bump the task's `version` (its results must not be pooled with the old ones); "
        "then pin again: FSARENA_UPDATE_GOLDEN=1 pytest tests/unit/test_task_versions.py"
    )
    assert found == pinned, (
        "tasks added, removed or bumped since tests/golden/task-versions.json was pinned: "
        "FSARENA_UPDATE_GOLDEN=1 pytest tests/unit/test_task_versions.py"
    )


def test_the_digest_changes_when_a_command_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tripwire can fire: a task whose command gains an option gets another digest."""
    task = TASKS["tree_copy_in"]
    before = code_digest(task)
    source = textwrap.dedent(inspect.getsource(task.commands)).replace('"-r"', '"-a"')
    assert '"-a"' in source
    namespace: dict[str, Any] = {}
    exec(compile(source, "changed", "exec"), task.commands.__globals__, namespace)
    monkeypatch.setattr(inspect, "getsource", _source_of({task.commands: source}))
    monkeypatch.setattr(task, "commands", namespace["commands"])
    assert code_digest(task) != before


def test_the_digest_changes_when_a_helper_or_constant_it_reads_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Followed through: CP (cp --reflink=never) is read by the copies, not declared on them."""
    import fsarena.tasks.tree as tree

    task = TASKS["tree_copy_in"]
    before = code_digest(task)
    monkeypatch.setattr(tree, "CP", ("cp",))
    assert code_digest(task) != before


def test_the_digest_changes_when_the_native_helper_it_runs_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """native/replay.c times the replay's calls: a change there changes replay's figures."""
    import shutil

    import tests.unit.test_task_versions as me

    for source in NATIVE.glob("*.c"):
        shutil.copy(source, tmp_path / source.name)
    monkeypatch.setattr(me, "NATIVE", tmp_path)
    task, other = TASKS["replay"], TASKS["tree_copy_in"]
    before, other_before = code_digest(task), code_digest(other)
    with (tmp_path / "replay.c").open("a") as f:
        f.write("/* changed */\n")
    assert code_digest(task) != before
    assert code_digest(other) == other_before  # it runs no native helper


def _source_of(replaced: dict[Any, str]) -> Any:
    real = inspect.getsource

    def getsource(obj: Any) -> str:
        for original, text in replaced.items():
            if obj is original or (
                getattr(obj, "__code__", None) is not None
                and (obj.__code__.co_filename == "changed")
            ):
                return text
        return real(obj)

    return getsource


def test_a_users_command_is_versioned_by_its_own_digest() -> None:
    make = command_task("build", UserCommand(command="make -j2"))
    same = command_task("compile", UserCommand(command="make -j2"))
    other = command_task("build", UserCommand(command="make -j4"))
    assert make.key_version() == same.key_version() != other.key_version()
    assert make.key_version().startswith("sha256:")
    # `fresh` changes what is measured, so the key: when set. Unset, the digest is the one
    # sessions recorded before the field existed (this command's, pinned then).
    alone = command_task("build", UserCommand(command="make -j2", fresh=True))
    assert alone.key_version() != make.key_version()
    assert make.key_version() == "sha256:9fca1adc6b4ebe6e"
