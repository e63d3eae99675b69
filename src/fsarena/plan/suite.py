"""Suites: the TOML a comparison is written in, parsed and checked, with messages that name the key.

A suite is shipped in fsarena/plan/suites/ or is a user's file; every name and
number in it is checked here, so a typo fails in a second with a message naming
it and the fix, never after an hour of mkfs. The plan (plan.model) is built from one.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from fsarena.aging.profiles import resolve_age
from fsarena.errors import FsarenaError, not_text
from fsarena.filesystems.profiles import PROFILES, FilesystemProfile
from fsarena.filesystems.variants import derive, resolve, split_name
from fsarena.plan import catalog
from fsarena.plan.machines import MachineProfile
from fsarena.tasks import TASKS, UserCommand, check_commands, task_class


class Variant(BaseModel):
    """A suite's `[filesystems.NAME]` table: a built-in filesystem, or a variant of one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base: str | None = None  # the built-in profile it derives from
    mount_options: list[str] | None = None  # replace the base's (none: kernel defaults)
    mkfs_options: list[str] = Field(default_factory=list)  # added before the device
    # chattr attributes for each task's data directory ("+C"), set before data is written
    data_dir_attributes: list[str] = Field(default_factory=list)
    notes: str = ""


def profile_table(variants: dict[str, Variant]) -> dict[str, FilesystemProfile]:
    """The built-in profiles plus a suite's variants, each checked."""
    table = dict(PROFILES)
    for name, v in variants.items():
        where = f"filesystems.{name}"
        if "@" in name:  # NAME@DRIVER: a built-in filesystem through one driver
            if v != Variant():
                raise FsarenaError(f"{where}: '@' picks a driver; give a variant a plain name")
            split_name(name)  # a known filesystem and one of its drivers, or FsarenaError
            continue
        if v.base is None:
            if name not in PROFILES:
                raise FsarenaError(
                    f"{where}: not a built-in filesystem; set base = one of {', '.join(PROFILES)}"
                )
            if v != Variant():
                raise FsarenaError(f"{where}: a built-in name; give the variant its own name")
            continue
        if name in PROFILES:
            raise FsarenaError(f"{where}: a built-in name; give the variant its own name")
        if v.base not in PROFILES:
            raise FsarenaError(f"{where}.base: unknown filesystem {v.base!r}")
        table[name] = derive(
            name,
            PROFILES[v.base],
            v.mount_options,
            v.mkfs_options,
            v.notes,
            data_dir_attributes=v.data_dir_attributes,
        )
    return table


class Suite(BaseModel):
    """A named comparison: what an article did, as data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    article: str = ""
    description: str = ""
    # A list of names, or a table NAME -> Variant (`[filesystems.btrfs-zstd]`, base = ...).
    # None given: --fs, or the default suite's filesystems (make_plan).
    filesystems: dict[str, Variant] = Field(default_factory=dict)
    # A list of names, or a table NAME -> {} (a built-in) or a command (`[tasks.build]`).
    tasks: list[str] = Field(min_length=1)
    commands: dict[str, UserCommand] = Field(default_factory=dict)  # the user's own tasks
    datasets: dict[str, dict[str, Any]] = Field(default_factory=dict)
    repetitions: int = Field(default=3, ge=1, le=1000)
    scale: float = Field(default=1.0, gt=0, le=100)
    machines: dict[str, MachineProfile] = Field(default_factory=dict)  # for --machine NAME
    # Aging before the tasks (fsarena.aging): a built-in profile's name, a .toml file's
    # path, or a table with a profile's keys; --age overrides it.
    age: str | dict[str, Any] | None = None
    # The workload the suite stands for: how much each kind of work weighs in the
    # recommendation ([weights] databases = 1, ...); --weigh and --workload override it.
    weights: dict[str, float] = Field(default_factory=dict)

    @field_validator("age")
    @classmethod
    def _known_age(cls, value: str | dict[str, Any] | None) -> str | dict[str, Any] | None:
        if value is not None:
            resolve_age(value)
        return value

    @field_validator("machines")
    @classmethod
    def _named_machines(cls, value: dict[str, MachineProfile]) -> dict[str, MachineProfile]:
        return {name: m.model_copy(update={"name": name}) for name, m in value.items()}

    @property
    def filesystem_names(self) -> list[str]:
        return list(self.filesystems)

    @property
    def variants(self) -> dict[str, Variant]:
        return dict(self.filesystems)

    @field_validator("filesystems", mode="before")
    @classmethod
    def _names_as_table(cls, value: Any) -> Any:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return {name: {} for name in value}
        return value

    @model_validator(mode="before")
    @classmethod
    def _task_table(cls, data: Any) -> Any:
        """`[tasks.NAME]` tables: in order, empty for a built-in, a command for the user's own."""
        if not isinstance(data, dict) or not isinstance(data.get("tasks"), dict):
            return data
        if not isinstance(data.get("commands", {}), dict):
            return data  # the field's own validation names the wrong type
        table: dict[str, Any] = data["tasks"]
        commands = dict(data.get("commands", {}))
        for name, body in table.items():
            if body or name not in TASKS:
                commands[name] = body
        return {**data, "tasks": list(table), "commands": commands}

    @model_validator(mode="after")
    def _known_tasks(self) -> Suite:
        check_commands(self.tasks, self.commands)
        return self

    @model_validator(mode="after")
    def _consistent(self) -> Suite:
        table = profile_table(self.variants)
        if self.filesystems:
            resolve(self.filesystem_names, table)
        needed = {d for t in self.tasks for d in task_class(t, self.commands).datasets}
        needed |= set(resolve_age(self.age).datasets) if self.age is not None else set()
        for name in self.datasets:
            if name not in needed:
                raise FsarenaError(
                    f"datasets.{name}: no task of this suite uses it; "
                    f"its tasks use {', '.join(sorted(needed)) or 'no dataset'}"
                )
        catalog.scaled_specs(sorted(needed), self.datasets, 1.0)
        return self


# What to write for a required key that is missing.
EXAMPLES = {
    "name": 'name = "mine"',
    "tasks": 'tasks = ["mkfs", "mount", "umount"] (`fsarena list tasks` names them all)',
}


def _validation_message(source: str, exc: ValidationError) -> str:
    """Every problem of a suite file in one line, each naming its key and the fix."""
    problems = [_problem(error) for error in exc.errors()]
    if len(problems) == 1:
        return f"{source}: {problems[0]}"
    numbered = "; ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))
    return f"{source} has {len(problems)} problems: {numbered}"


def _problem(error: Any) -> str:
    loc = error["loc"]
    where = ".".join(str(p) for p in loc)
    msg = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "missing":
        msg = f"missing; add {EXAMPLES.get(where, where + ' = ...')}"
    elif error["type"] == "extra_forbidden":
        # A key inside [filesystems.NAME] is a Variant's, inside [machines.NAME] a
        # machine profile's; any other, the suite's own.
        in_variant = loc[0] == "filesystems" and len(loc) == 3
        in_machine = loc[0] == "machines" and len(loc) == 3
        in_command = loc[0] == "commands" and len(loc) == 3
        model: type[BaseModel] = Suite
        if in_variant or in_machine or in_command:
            model = Variant if in_variant else MachineProfile if in_machine else UserCommand
        msg = "unknown key (misspelled?)" + _did_you_mean(str(loc[-1]), list(model.model_fields))
    elif "input" in error and not isinstance(error["input"], dict | list):
        msg = f"{msg.replace('Input should be', 'must be')} (it is {error['input']!r})"
    return f"{where}: {msg}" if where else msg


def _did_you_mean(key: str, fields: list[str]) -> str:
    close = difflib.get_close_matches(key, fields, n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(fields)}"


SIZE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes from '300M', '2G', '1.5GiB' or '4096' (binary units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not match or float(match[1]) <= 0:
        raise FsarenaError(f"size {text!r} is not a size: write it like 300M, 2G or 1.5GiB")
    return int(float(match[1]) * SIZE_UNITS[match[2]])


def parse_suite(text: str, source: str) -> Suite:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FsarenaError(f"{source} is not valid TOML: {exc}") from None
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        raise FsarenaError(_validation_message(source, exc)) from None
    except FsarenaError as exc:
        raise FsarenaError(f"{source}: {exc}") from None


def builtin_suites() -> dict[str, Suite]:
    folder = resources.files("fsarena.plan.suites")
    found = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".toml"):
            suite = parse_suite(entry.read_text(), f"built-in suite {entry.name}")
            found[suite.name] = suite
    return dict(sorted(found.items()))


def load_suite(name_or_path: str) -> Suite:
    """A built-in suite by name, or a user's suite file by path."""
    suites = builtin_suites()
    if name_or_path in suites:
        return suites[name_or_path]
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        try:
            text = path.read_text()
        except OSError as exc:
            raise FsarenaError(f"cannot read suite file {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise FsarenaError(f"suite file {path} is not TOML: {not_text(exc)}") from None
        return parse_suite(text, str(path))
    raise FsarenaError(
        f"unknown suite {name_or_path!r}; built-in suites: {', '.join(suites)} "
        "(or give the path of a .toml suite file)"
    )
