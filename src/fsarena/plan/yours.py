"""Your command and your data from the command line: --command, --prepare and --data as a suite.

`fsarena run --command 'make -j2' [--prepare 'cp -r ~/src/. .']` times the
command on each filesystem as hyperfine users expect: several --command
options make several tasks (`command`, or `command-1`, `command-2`, ...),
one --prepare runs untimed before each. Without --suite, the commands are the
whole task list (mkfs and mount are reached untimed, as for any task);
with --suite they run after the suite's tasks, before its final umount.

`--replay TRACE` replays a trace `fsarena capture` wrote (tasks/replay.py): as
fast as possible (task `replay`) and at its traced pace (`replay_paced`), or the
one --replay-timing names. Without --suite they are the whole task list (with
the --command tasks after them, so that the replay meets the fresh filesystem
the capture's timing was judged on); with --suite they run before its final umount.

`--data PATH` replaces every generated tree the suite's tasks copy (the
articles' trees: tree, portage, kernel; their tarballs follow) by the
directory PATH, read-only (fsarena.datasets.userdir). With --command and no --suite,
the directory is copied onto each test filesystem as `data/` (untimed, verified,
afresh each repetition) and the commands run there, with $FSARENA_DATASET_TREE
naming the read-only original.
"""

from __future__ import annotations

import os
from typing import Any

from fsarena.datasets.realistic import TextTreeSpec
from fsarena.datasets.tree import TreeSpec
from fsarena.errors import FsarenaError
from fsarena.plan import catalog
from fsarena.plan.model import DEFAULT_SUITE
from fsarena.plan.suite import Suite, load_suite
from fsarena.tasks import UserCommand

COMMAND_SUITE = "command"
REPLAY_SUITE = "replay"
DATA_DATASET = "tree"
DATA_CWD = "data"  # where --data is copied on the test filesystem, the commands' cwd
TRACE_DATASET = "trace"
# --replay-timing: the replay tasks it runs.
REPLAY_TASKS = {"fast": ["replay"], "paced": ["replay_paced"], "both": ["replay", "replay_paced"]}


def user_suite(
    suite_name: str | None,
    commands: tuple[str, ...],
    prepare: str | None,
    data: str | None,
    replay: str | None = None,
    replay_timing: str = "both",
) -> str | Suite:
    """The suite to plan: the named (or default) one, with the user's commands, data, trace."""
    if not commands and prepare:
        raise FsarenaError("--prepare prepares a --command: give the command too")
    if replay is None and replay_timing != "both":
        raise FsarenaError("--replay-timing chooses how --replay replays: give the trace too")
    if not commands and data is None and replay is None:
        return suite_name or DEFAULT_SUITE
    if (commands or replay is not None) and suite_name is None:
        suite = _command_suite(commands, prepare, data, replay, replay_timing)
    else:
        suite = load_suite(suite_name or DEFAULT_SUITE)
        if commands:
            suite = _with_commands(suite, commands, prepare)
        if replay is not None:
            suite = _with_replay(suite, replay, replay_timing)
    if data is not None:
        suite = _with_data(suite, data)
    return suite


def _with_replay(suite: Suite, trace: str, timing: str) -> Suite:
    """A suite's tasks with the replay tasks before its final umount."""
    tasks = list(suite.tasks)
    at = len(tasks) - 1 if tasks and tasks[-1] == "umount" else len(tasks)
    tasks[at:at] = [t for t in REPLAY_TASKS[timing] if t not in tasks]
    datasets = {**suite.datasets, **_trace_dataset(trace)}
    return _rebuilt(suite, tasks=tasks, datasets=datasets)


def _specs(commands: tuple[str, ...], prepare: str | None, copy: str = "") -> dict[str, Any]:
    if not commands:
        return {}
    names = [f"command-{i + 1}" for i in range(len(commands))] if len(commands) > 1 else ["command"]
    where = {"copy_in": copy, "cwd": DATA_CWD} if copy else {}
    return {
        n: UserCommand(command=c, prepare=prepare or "", **where)
        for n, c in zip(names, commands, strict=True)
    }


def _command_suite(
    commands: tuple[str, ...],
    prepare: str | None,
    data: str | None,
    replay: str | None = None,
    timing: str = "both",
) -> Suite:
    """Your commands, and your trace's replay first (a fresh filesystem after mkfs)."""
    default = load_suite(DEFAULT_SUITE)
    specs = _specs(commands, prepare, DATA_DATASET if data is not None else "")
    replayed = REPLAY_TASKS[timing] if replay is not None else []
    what = "your command, timed on each filesystem"
    if replay is not None:
        what = "your trace replayed on each filesystem" + (", beside your command" * bool(specs))
    return Suite(
        name=REPLAY_SUITE if replay is not None else COMMAND_SUITE,
        description=what,
        filesystems=default.variants,
        tasks=[*replayed, *specs],
        commands=specs,
        datasets=_trace_dataset(replay) if replay is not None else {},
        repetitions=default.repetitions,
    )


def _trace_dataset(trace: str) -> dict[str, dict[str, Any]]:
    return {TRACE_DATASET: {"kind": "trace", "path": os.path.abspath(trace)}}


def _with_commands(suite: Suite, commands: tuple[str, ...], prepare: str | None) -> Suite:
    specs = _specs(commands, prepare)
    tasks = list(suite.tasks)
    at = len(tasks) - 1 if tasks and tasks[-1] == "umount" else len(tasks)
    tasks[at:at] = list(specs)
    return _rebuilt(suite, tasks=tasks, commands={**suite.commands, **specs})


def _with_data(suite: Suite, path: str) -> Suite:
    """Every generated tree of the suite's tasks replaced by the directory."""
    used = {d for t in suite.tasks for d in _task_datasets(suite, t)}
    trees = [n for n in sorted(used) if _is_tree(n, suite)]
    if not trees:
        raise FsarenaError(
            f"--data: no task of suite {suite.name} copies a tree; use a suite with tree "
            "tasks (article-a-2006, workstation-2026) or --command"
        )
    datasets = dict(suite.datasets)
    for name in trees:
        datasets[name] = {"kind": "directory", "path": path}
    return _rebuilt(suite, datasets=datasets)


def _task_datasets(suite: Suite, task: str) -> tuple[str, ...]:
    from fsarena.tasks import task_class

    return task_class(task, suite.commands).datasets


def _is_tree(name: str, suite: Suite) -> bool:
    spec = catalog.customized(name, suite.datasets.get(name, {}))
    return isinstance(spec, TreeSpec | TextTreeSpec) or spec.kind == "directory"


def _rebuilt(suite: Suite, **changes: Any) -> Suite:
    """The suite with changes, validated again (a Suite is frozen and checked whole)."""
    data = suite.model_dump()
    data.update(changes)
    data["commands"] = {
        k: v if isinstance(v, dict) else v.model_dump() for k, v in data["commands"].items()
    }
    return Suite.model_validate(data)
