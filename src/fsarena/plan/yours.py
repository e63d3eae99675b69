"""Your command and your data from the command line: --command, --prepare and --data as a suite.

`fsarena run --command 'make -j2' [--prepare 'cp -r ~/src/. .']` times the
command on each filesystem as hyperfine users expect: several --command
options make several tasks (`command`, or `command-1`, `command-2`, ...),
one --prepare runs untimed before each, and each runs on a filesystem made for
it (Task.fresh), never on what another task left. Without --suite, the commands are the
whole task list (mkfs and mount are reached untimed, as for any task);
with --suite they run after the suite's tasks, before its final umount.

`--replay TRACE` replays a trace `fsarena capture` wrote (tasks/replay.py): as
fast as possible (task `replay`) and at its traced pace (`replay_paced`), or the
one --replay-timing names. Without --suite they are the whole task list (with
the --command tasks after them); with --suite they run before its final umount.
Each replay runs on a filesystem made for it (Task.fresh), as the capture's
timing was judged on its own.

`--pg-replay LOG --pg-base BACKUP` replays a PostgreSQL statement log with pgreplay
on the restored base backup (tasks/pg_replay.py): tasks `pg_replay` and
`pg_replay_paced` (or the one --replay-timing names), placed as the trace's are,
after them when both are given.

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
from fsarena.plan import REPLAY_TIMINGS, catalog
from fsarena.plan.model import DEFAULT_SUITE
from fsarena.plan.suite import Suite, load_suite
from fsarena.tasks import TASKS, UserCommand

COMMAND_SUITE = "command"
REPLAY_SUITE = "replay"
DATA_DATASET = "tree"
DATA_CWD = "data"  # where --data is copied on the test filesystem, the commands' cwd
TRACE_DATASET = "trace"
PGLOG_DATASET = "pglog"


def replay_tasks(dataset: str, timing: str) -> list[str]:
    """The tasks that replay `dataset` in the timing models --replay-timing names, in the
    registry's order: each replay task declares its dataset and its `timing`."""
    timings = REPLAY_TIMINGS[timing]
    return [
        name for name, cls in TASKS.items()
        if dataset in cls.datasets and getattr(cls, "timing", None) in timings
    ]  # fmt: skip


def _replays(
    replay: str | None, pg: tuple[str, str] | None, timing: str
) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The replay tasks and their datasets: the trace's, then the statement log's."""
    tasks, datasets = [], {}
    if replay is not None:
        tasks += replay_tasks(TRACE_DATASET, timing)
        datasets.update(_trace_dataset(replay))
    if pg is not None:
        tasks += replay_tasks(PGLOG_DATASET, timing)
        log, base = (os.path.abspath(p) for p in pg)
        datasets[PGLOG_DATASET] = {"kind": "pglog", "log": log, "base": base}
    return tasks, datasets


def _pg(pg_replay: str | None, pg_base: str | None) -> tuple[str, str] | None:
    if pg_replay is not None and pg_base is None:
        raise FsarenaError(
            "--pg-replay needs the base backup its log starts from: give --pg-base DIR "
            "(pg_basebackup -D DIR -X stream, taken just before statement logging began)"
        )
    if pg_base is not None and pg_replay is None:
        raise FsarenaError("--pg-base is the backup a --pg-replay log is replayed on: give the log")
    return (pg_replay, pg_base) if pg_replay is not None and pg_base is not None else None


def user_suite(
    suite_name: str | None,
    commands: tuple[str, ...],
    prepare: str | None,
    data: str | None,
    replay: str | None = None,
    replay_timing: str = "both",
    pg_replay: str | None = None,
    pg_base: str | None = None,
) -> str | Suite:
    """The suite to plan: the named (or default) one, with the user's commands, data, trace."""
    if not commands and prepare:
        raise FsarenaError("--prepare prepares a --command: give the command too")
    pg = _pg(pg_replay, pg_base)
    replaying = replay is not None or pg is not None
    if not replaying and replay_timing != "both":
        raise FsarenaError(
            "--replay-timing chooses how --replay or --pg-replay replays: give the trace or log too"
        )
    if not commands and data is None and not replaying:
        return suite_name or DEFAULT_SUITE
    if (commands or replaying) and suite_name is None:
        suite = _command_suite(commands, prepare, data, _replays(replay, pg, replay_timing))
    else:
        suite = load_suite(suite_name or DEFAULT_SUITE)
        if commands:
            suite = _with_commands(suite, commands, prepare)
        if replaying:
            suite = _with_replay(suite, *_replays(replay, pg, replay_timing))
    if data is not None:
        suite = _with_data(suite, data)
    return suite


def _with_replay(suite: Suite, replayed: list[str], datasets: dict[str, Any]) -> Suite:
    """A suite's tasks with the replay tasks before its final umount."""
    tasks = list(suite.tasks)
    at = len(tasks) - 1 if tasks and tasks[-1] == "umount" else len(tasks)
    tasks[at:at] = [t for t in replayed if t not in tasks]
    return _rebuilt(suite, tasks=tasks, datasets={**suite.datasets, **datasets})


def _specs(commands: tuple[str, ...], prepare: str | None, copy: str = "") -> dict[str, Any]:
    if not commands:
        return {}
    names = [f"command-{i + 1}" for i in range(len(commands))] if len(commands) > 1 else ["command"]
    where = {"copy_in": copy, "cwd": DATA_CWD} if copy else {}
    return {
        n: UserCommand(command=c, prepare=prepare or "", fresh=True, **where)
        for n, c in zip(names, commands, strict=True)
    }


def _command_suite(
    commands: tuple[str, ...],
    prepare: str | None,
    data: str | None,
    replays: tuple[list[str], dict[str, Any]] = ([], {}),
) -> Suite:
    """Your trace's or log's replays, then your commands, each on a filesystem made for it."""
    default = load_suite(DEFAULT_SUITE)
    specs = _specs(commands, prepare, DATA_DATASET if data is not None else "")
    replayed, datasets = replays
    what = "your command, timed on each filesystem"
    if replayed:
        which = " and ".join(
            w for w, d in (("trace", TRACE_DATASET), ("statement log", PGLOG_DATASET))
            if d in datasets
        )  # fmt: skip
        what = f"your {which} replayed on each filesystem" + (", beside your command" * bool(specs))
    return Suite(
        name=REPLAY_SUITE if replayed else COMMAND_SUITE,
        description=what,
        filesystems=default.variants,
        tasks=[*replayed, *specs],
        commands=specs,
        datasets=datasets,
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
