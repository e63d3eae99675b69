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
each dataset it names in `datasets`). With `copy_in = "NAME"`, the dataset NAME
(the user's directory, with `--data`) is copied into `cwd` before `prepare`,
untimed, afresh every repetition, and the copy is verified against the
dataset's manifest (a check of the run), so the command works in its own
copy on the test filesystem. With `fresh = true` it runs on a filesystem made
for it (Task.fresh: unmounted, made anew and mounted, untimed, when an earlier
task of the repetition used it); `--command` sets it for each of its commands,
which are independent, as hyperfine's are. A command that fails (exit status not 0) is a
failed run with its stderr's tail, never a crash.

Every command of the task (prepare, command, verify) runs in a cgroup of its
own (cgroup v2, or v1's pids hierarchy), made in prepare and removed when the
task ends, whatever happened: a background child, or a daemon that left its
session, is ended with it, before the filesystem is unmounted, and only those
processes. Joining the cgroup is a shell's `echo $$` and `exec` before the
command, inside the timed region as with bonnie++'s memory cgroup: on the
development machine 1.3 ms at the 10th percentile, 3.2 ms at the median (60
runs of `true` each way, load 19), which a sub-second command's figure carries.
Where no cgroup can be made (a guest kernel without them), the command's own
session is all there is.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from fsarena.errors import FsarenaError
from fsarena.host import cgroups
from fsarena.measure.collect import Command
from fsarena.tasks.base import CP, Check, Task, TaskContext, verify_copy

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
    copy_in: str = ""  # a dataset copied into cwd (untimed, verified) before prepare
    fresh: bool = False  # run on a filesystem made for it, not on what earlier tasks left

    @model_validator(mode="before")
    @classmethod
    def _copy_is_used(cls, data: Any) -> Any:
        """The copied dataset is one the command uses (named in datasets, added if not)."""
        if isinstance(data, dict) and data.get("copy_in"):
            used = list(data.get("datasets") or [])
            if data["copy_in"] not in used:
                data = {**data, "datasets": [*used, data["copy_in"]]}
        return data

    @model_validator(mode="after")
    def _copy_needs_cwd(self) -> UserCommand:
        if self.copy_in and not self.cwd:
            raise ValueError(
                f"copy_in = {self.copy_in!r} replaces cwd with a fresh copy: "
                'set cwd to a directory of its own (cwd = "src")'
            )
        return self

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
    _copied: Check | None = None
    _cgroup: str = ""  # holds every process of the task's commands (see the module doc)

    @classmethod
    def key_version(cls) -> str:
        """The digest of everything that shapes the work (its commands, cwd, writes, datasets):
        a changed command is never pooled with the old one (fsarena share)."""
        # `fresh` only when set: the digests of commands written before it stay as they were.
        text = cls.spec.model_dump_json(exclude=None if cls.spec.fresh else {"fresh"})
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]

    def _workdir(self, ctx: TaskContext) -> str:
        return ctx.path(self.spec.cwd) if self.spec.cwd else ctx.mountpoint

    def _shell(self, ctx: TaskContext, script: str) -> tuple[str, ...]:
        env = [f"FSARENA_MOUNT={ctx.mountpoint}", f"FSARENA_SCRATCH={ctx.scratch}"]
        env += [
            f"FSARENA_DATASET_{d.upper()}={ctx.dataset(d).root}"
            for d in self.spec.datasets
            if d in ctx.datasets
        ]
        argv = ("env", *env, "sh", "-c", script)
        return cgroups.enter_argv(self._cgroup, argv) if self._cgroup else argv

    def prepare(self, ctx: TaskContext) -> None:
        try:
            self._cgroup = ctx.executor.create_task_cgroup()
        except FsarenaError:
            self._cgroup = ""  # no cgroups here: the command's own session is all there is
        if self.spec.copy_in:
            self._copy_in(ctx)
        ctx.executor.make_dir(self._workdir(ctx))
        if self.spec.prepare:
            self._untimed(ctx, "prepare", self.spec.prepare)

    def _copy_in(self, ctx: TaskContext) -> None:
        """A fresh copy of the dataset as cwd, verified before the command changes it."""
        where = self._workdir(ctx)
        ctx.executor.remove_path(where)
        ctx.executor.make_dir(where.rsplit("/", 1)[0])
        ctx.executor.call((*CP, "-r", ctx.dataset(self.spec.copy_in).root, where))
        ctx.sync()
        self._copied = verify_copy(ctx, self.spec.copy_in, where)
        if not self._copied.ok:
            raise FsarenaError(f"the copy of {self.spec.copy_in} in {where}: {self._copied.detail}")

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

    def cleanup(self, ctx: TaskContext) -> None:
        """End whatever the commands left running (in the task's cgroup only), then remove it."""
        if self._cgroup:
            ctx.executor.remove_cgroup(self._cgroup)
            self._cgroup = ""

    def verify(self, ctx: TaskContext) -> list[Check]:
        copied = [self._copied] if self._copied is not None else []
        if not self.spec.verify:
            return copied
        try:
            self._untimed(ctx, "verify", self.spec.verify)
        except FsarenaError as exc:
            return [*copied, Check("verify command", False, str(exc))]
        return [*copied, Check("verify command", True, self.spec.verify)]


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
        "fresh": spec.fresh,
        "spec": spec,
        "__doc__": doc + ", timed on the test filesystem; syncfs included when it writes.",
    }
    return type(f"Command_{name}", (CommandTask,), attrs)
