"""Your command: a task a suite defines (`[tasks.build] command = "make -j2"`) or `--command`.

A user's command is measured, repeated and judged like every built-in task:
the optional `prepare` command runs untimed (e.g. copy the source in), then
caches are dropped, then `command` runs in the timed region through
`sh -c`, as hyperfine runs its commands, with syncfs of the test filesystem
inside the region when `writes` is true (the default: a job that writes is
not done until its data is on the device), then the optional `verify`
command runs untimed and must exit 0. Every command runs with its working
directory `cwd` on the test filesystem (its root by default, made if
missing), and sees FSARENA_MOUNT (the test filesystem), FSARENA_SCRATCH
(a directory outside it) and FSARENA_DATASET_<NAME> (the source copy of
each dataset it names in `datasets`). A command that fails (exit status not
0) is a failed run with its stderr's tail, never a crash.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fsarena.errors import FsarenaError
from fsarena.measure.core import Command
from fsarena.tasks.base import Check, Task, TaskContext

# The kind a user's command belongs to unless it says otherwise.
USER_KIND = "your_workload"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class UserCommand(BaseModel):
    """A suite's `[tasks.NAME]` table that defines a task by its shell commands."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str = Field(min_length=1)  # timed, through sh -c
    prepare: str = ""  # untimed, before caches are dropped
    verify: str = ""  # untimed, after; must exit 0
    cwd: str = ""  # relative to the test filesystem's root
    writes: bool = True  # syncfs of the test filesystem inside the timed region
    kind: str = USER_KIND  # the kind of work it belongs to, for tables and verdicts
    datasets: list[str] = Field(default_factory=list)  # offered as FSARENA_DATASET_<NAME>

    @field_validator("cwd")
    @classmethod
    def _inside(cls, value: str) -> str:
        parts = [p for p in value.split("/") if p not in ("", ".")]
        if value.startswith("/") or ".." in parts:
            raise ValueError(
                f"cwd {value!r} must be a path relative to the test filesystem, without '..'"
            )
        return "/".join(parts)


def check_name(name: str) -> None:
    """A user task's name: a word (letters, digits, '_', '-', '.'), for tables and files."""
    if not _NAME_RE.match(name):
        raise FsarenaError(
            f"task name {name!r}: use letters, digits, '_', '-' or '.', starting with a letter"
        )


class CommandTask(Task):
    """A user's own command, timed on the test filesystem (see the module docstring)."""

    name = "command"
    kind = USER_KIND
    spec: UserCommand = UserCommand(command="true")

    def _workdir(self, ctx: TaskContext) -> str:
        return ctx.path(self.spec.cwd) if self.spec.cwd else ctx.mountpoint

    def _shell(self, ctx: TaskContext, script: str) -> tuple[str, ...]:
        env = [f"FSARENA_MOUNT={ctx.mountpoint}", f"FSARENA_SCRATCH={ctx.scratch}"]
        env += [
            f"FSARENA_DATASET_{d.upper()}={ctx.dataset(d).root}"
            for d in self.spec.datasets
            if d in ctx.datasets
        ]
        return ("env", *env, "sh", "-c", script)

    def prepare(self, ctx: TaskContext) -> None:
        ctx.executor.make_dir(self._workdir(ctx))
        if self.spec.prepare:
            self._untimed(ctx, "prepare", self.spec.prepare)

    def _untimed(self, ctx: TaskContext, what: str, script: str) -> None:
        # The executor's helpers take no working directory: enter it in the shell.
        cd = f"cd {_quote(self._workdir(ctx))} && {script}"
        try:
            ctx.executor.call(self._shell(ctx, cd))
        except FsarenaError as exc:
            # The executor's message quotes the whole argv first; keep the tool's own words.
            said = str(exc).rsplit("failed: ", 1)[-1]
            raise FsarenaError(f"{what} command `{script}` failed: {_tail(said)}") from None

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(self._shell(ctx, self.spec.command), cwd=self._workdir(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        if not self.spec.verify:
            return []
        try:
            self._untimed(ctx, "verify", self.spec.verify)
        except FsarenaError as exc:
            return [Check("verify command", False, str(exc))]
        return [Check("verify command", True, self.spec.verify)]


def _quote(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def command_task(name: str, spec: UserCommand) -> type[Task]:
    """A Task class for one user command, with its name, kind and writes as class data."""
    check_name(name)
    doc = f"Your command `{spec.command}`" + (
        f" (prepared by `{spec.prepare}`)" if spec.prepare else ""
    )
    attrs: dict[str, Any] = {
        "name": name,
        "kind": spec.kind,
        "writes": spec.writes,
        "datasets": tuple(spec.datasets),
        "spec": spec,
        "__doc__": doc + ", timed on the test filesystem; syncfs included when it writes.",
    }
    return type(f"Command_{name}", (CommandTask,), attrs)
