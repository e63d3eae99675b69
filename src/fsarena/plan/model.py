"""The plan: which filesystems, tasks, datasets and repetitions a run does, all validated.

A plan comes from a suite (plan.suite: TOML shipped in fsarena/plan/suites/, or a
user's file) with command-line overrides. Every option is checked here, so a bad
value fails in a second with a message naming its flag, never after an hour of mkfs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Mapping
from functools import partial
from typing import Any, Literal, Self, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from fsarena import stopping
from fsarena.aging.profiles import AgeProfile, resolve_age
from fsarena.datasets.gitrepo import replay_line
from fsarena.datasets.spec import DatasetSpec
from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.filesystems.variants import profile_for, resolve
from fsarena.measure.room import room_needed_bytes
from fsarena.plan import DEFAULT_SUITE as DEFAULT_SUITE  # re-exported: defined light
from fsarena.plan import DEFAULT_WORKDIR as DEFAULT_WORKDIR
from fsarena.plan import catalog
from fsarena.plan.machines import MachineProfile, resolve_machine
from fsarena.plan.suite import Suite, Variant, load_suite, profile_table
from fsarena.tasks import Task, UserCommand, check_commands, task_class
from fsarena.tasks.aged_tree import TASKS as AGED

AGED_MARK = "+"  # "ext4+churn": ext4 aged with the churn profile
MIB = 1 << 20
T = TypeVar("T")


class Plan(BaseModel):
    """Everything a run will do; stored in the session as run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    suite: str
    filesystems: list[str]
    tasks: list[str]
    repetitions: int = Field(ge=1, le=1000)
    scale: float = Field(gt=0, le=100)
    seed: int
    workdir: str
    source: Literal["auto", "tmpfs", "image"] = "auto"
    task_timeout_s: float = Field(default=3600.0, gt=0)
    image_size_bytes: int | None = Field(default=None, gt=0)
    device: str | None = None  # a real block device instead of loop images (guarded)
    # Adaptive repetitions: keep adding rounds until every timed task's 95 % CI
    # half-width is within target_ci_pct % of its mean, up to max_repetitions
    # rounds and within time_budget_s seconds.
    target_ci_pct: float | None = Field(default=None, gt=0, le=100)
    max_repetitions: int | None = Field(default=None, ge=1, le=1000)
    time_budget_s: float | None = Field(default=None, gt=0)
    # Decisive (the default run): keep adding rounds until every kind of work's verdict
    # is decided (adaptive.undecided), up to max_repetitions and within time_budget_s.
    decisive: bool = False
    # Whole rounds run first, kept in the session apart, never a sample (hyperfine's
    # warm-up): the first round here pays cold host caches and first-use stalls.
    warmup_rounds: int = Field(default=0, ge=0, le=1)
    machine: MachineProfile | None = None  # an emulated machine's limits (machines/)
    # Aging (--age): each filesystem also runs aged, as "NAME+PROFILE" (see fsarena.aging).
    age: AgeProfile | None = None

    commands: dict[str, UserCommand] = Field(default_factory=dict)  # the user's own tasks
    # How much each kind of work weighs in the recommendation (--weigh, --workload, the
    # suite's [weights]); empty: every workload kind 1, facts 0 (analysis.answer).
    weights: dict[str, float] = Field(default_factory=dict)
    # fsarena tune: each filesystem's defaults -> its configurations, defaults first
    # (plan.tuning); race: drop the configurations clearly behind after each round.
    tune: dict[str, list[str]] = Field(default_factory=dict)
    race: bool = False

    # What the plan resolves to (profiles, task classes, scaled dataset specs), made once:
    # a run asks for them hundreds of times, and the plan is frozen. model_copy drops it.
    _resolved: dict[Hashable, Any] = PrivateAttr(default_factory=dict)

    def _once(self, key: Hashable, make: Callable[[], T]) -> T:
        memo = (self.__pydantic_private__ or {}).get("_resolved")
        if memo is None:  # still being validated: nothing to keep it in yet
            return make()
        if key not in memo:
            memo[key] = make()
        return cast(T, memo[key])

    def __eq__(self, other: object) -> bool:
        # What the plan is: its fields. The memo is a cache, whatever it holds so far.
        if not isinstance(other, Plan):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]  # lists and dicts inside: never hashable

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        copy._resolved = {}  # the copy's fields may differ: resolve them anew
        return copy

    @model_validator(mode="after")
    def _known_tasks(self) -> Plan:
        check_commands(self.tasks, self.commands)
        return self

    def task_class(self, name: str) -> type[Task]:
        """The task of this name: built in, or one of the plan's own commands."""
        return self._once(("task", name), lambda: task_class(name, self.commands))

    @model_validator(mode="after")
    def _machine_on_loops(self) -> Plan:
        if self.machine is not None and self.machine.limits_disk and self.device is not None:
            raise ValueError(
                f"machine {self.machine.name} limits disk bandwidth, which fsarena applies only "
                "to its own loop devices: drop --device, or use a machine without disk limits"
            )
        return self

    @model_validator(mode="after")
    def _adaptive_limits(self) -> Plan:
        if (
            self.target_ci_pct is None
            and not self.decisive
            and (self.max_repetitions is not None or self.time_budget_s is not None)
        ):
            raise ValueError(
                "--max-repetitions and --time-budget limit adaptive repetitions: "
                "give --target-ci too"
            )
        if self.max_repetitions is not None and self.max_repetitions < self.repetitions:
            raise ValueError(
                f"--max-repetitions {self.max_repetitions} is below the "
                f"{self.repetitions} repetitions always run; raise it or lower --repetitions"
            )
        return self

    @property
    def stopping(self) -> stopping.Stopping:
        """The stopping rule as one typed value (fsarena.stopping): Fixed, TargetCI or Decisive."""
        return stopping.of_plan(
            self.repetitions,
            self.decisive,
            self.target_ci_pct,
            self.max_repetitions,
            self.time_budget_s,
            self.warmup_rounds,
        )

    # The suite's filesystem variants and dataset overrides, so the plan alone says it all.
    variants: dict[str, Variant] = Field(default_factory=dict)
    datasets: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def table(self) -> dict[str, FilesystemProfile]:
        """The profiles its names may refer to: the built-in ones and the suite's variants."""
        return dict(self._once("table", lambda: profile_table(self.variants)))

    def profile(self, name: str) -> FilesystemProfile:
        """A filesystem of the plan, through the driver its name says ("jfs@uml");
        an aged one ("ext4+churn") is its filesystem's profile."""
        fresh = self.fresh_name(name)
        return self._once(("profile", fresh), partial(self._profile, fresh))

    def aged_name(self, filesystem: str) -> str:
        """What an aged filesystem's runs are recorded as: "ext4+churn"."""
        assert self.age is not None
        return f"{filesystem}{AGED_MARK}{self.age.name}"

    def fresh_name(self, name: str) -> str:
        return name.partition(AGED_MARK)[0] if self.age is not None else name

    def sequences(self) -> list[str]:
        """Every filesystem, then (with --age) every filesystem aged."""
        aged = [self.aged_name(f) for f in self.filesystems] if self.age is not None else []
        return [*self.filesystems, *aged]

    def warmup_sequences(self) -> list[str]:
        """The warm-up round's sequences: every filesystem's, or a sweep's defaults only.

        A sweep's configurations are its filesystems with an option: the warm-up is for the
        host (cold caches, the tools' first use), which one sequence of each filesystem
        warms for all of its configurations."""
        if self.tune:
            return [f for f in self.filesystems if f in self.tune] or list(self.filesystems)
        return list(self.filesystems)

    def planned_sequences(self) -> int:
        """The sequences of the warm-up and the plan's rounds, before any more rounds."""
        warm = len(self.warmup_sequences()) * self.warmup_rounds
        return warm + len(self.sequences()) * self.repetitions

    def profiles(self) -> list[FilesystemProfile]:
        return [
            self._once(("profile", name), partial(self._profile, name)) for name in self.filesystems
        ]

    def _profile(self, name: str) -> FilesystemProfile:
        return profile_for(name, self.table())

    def dataset_specs(self) -> dict[str, DatasetSpec]:
        """The datasets the tasks need, with the suite's overrides, scaled."""
        return dict(self._once("datasets", self._scaled_specs))

    def _scaled_specs(self) -> dict[str, DatasetSpec]:
        names = sorted({d for t in self.tasks for d in self.task_class(t).datasets})
        names = sorted({*names, *(self.age.datasets if self.age is not None else ())})
        return catalog.scaled_specs(names, self.datasets, self.scale)

    def image_size_for(self, profile: FilesystemProfile) -> int:
        """An image big enough for what the tasks keep at once, with margin.

        Two copies of the largest dataset (copy within), or one of each dataset
        with per-file block slack, whichever is more; +30 % for metadata.
        """
        if self.image_size_bytes is not None:
            # Never below what mkfs accepts: a smaller image could only fail mkfs.
            return max(self.image_size_bytes, profile.min_size_bytes)
        need = max(self.needed_bytes(), profile.min_size_bytes)
        if self.age is not None:
            # Aged or fresh, the same image: the aged tree takes `fullness` of it and the
            # tasks get the free space they would have on an empty image of their own.
            need = int(need / (1 - self.age.fullness))
        return (need + MIB - 1) // MIB * MIB

    def needed_bytes(self) -> int:
        """Room the datasets need on the test filesystem (see image_size_for)."""
        return self._once("needed", self._needed_bytes)

    def _needed_bytes(self) -> int:
        return room_needed_bytes(
            (s.total_bytes, n if isinstance(n := getattr(s, "files", 1), int) else 1)
            for s in self.dataset_specs().values()
        )

    @model_validator(mode="after")
    def _your_data_fits(self) -> Plan:
        """The user's directory against a given --image-size, before anything runs."""
        if self.image_size_bytes is None:
            return self
        yours = [s for s in self.dataset_specs().values() if s.kind == "directory"]
        small = [p for p in self.profiles() if self.image_size_for(p) < self.needed_bytes()]
        if yours and small:
            d = yours[0]
            raise FsarenaError(
                f"dataset {d.name} ({d.description()}, {d.total_bytes / 1e6:,.0f} MB) does not "
                f"fit a {self.image_size_for(small[0]) >> 20} MiB image of {small[0].name}: "
                f"the tasks need about {self.needed_bytes() >> 20} MiB; raise --image-size, or "
                "lower --scale or the dataset's max_bytes"
            )
        return self

    def summary(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def make_plan(
    suite_name: str | Suite,
    filesystems: list[str] | None,
    repetitions: int | None,
    scale: float | None,
    seed: int | None,
    workdir: str,
    **extra: Any,
) -> Plan:
    """Build and validate a plan from a suite and command-line overrides."""
    suite = load_suite(suite_name) if isinstance(suite_name, str) else suite_name
    table = profile_table(suite.variants)
    names = suite.filesystem_names or load_suite(DEFAULT_SUITE).filesystem_names
    chosen = resolve(filesystems if filesystems is not None else names, table)
    if isinstance(extra.get("machine"), str):
        extra["machine"] = resolve_machine(extra["machine"], suite.machines)
    age_repo = extra.pop("age_repo", None)
    age = extra.pop("age", None) or suite.age or ("git-replay" if age_repo else None)
    extra["weights"] = extra.pop("weights", None) or dict(suite.weights)
    extra["age"] = resolve_age(age) if age is not None else None
    datasets = dict(suite.datasets)
    if age_repo:
        datasets.update(real_history(age_repo, extra["age"], datasets))
    try:
        return Plan(
            suite=suite.name,
            filesystems=[p.name for p in chosen],
            tasks=with_aged_tasks(list(suite.tasks)) if age is not None else list(suite.tasks),
            commands=dict(suite.commands),
            variants={p.name: suite.variants[p.name] for p in chosen if p.name in suite.variants},
            datasets=datasets,
            repetitions=repetitions if repetitions is not None else suite.repetitions,
            scale=scale if scale is not None else suite.scale,
            seed=seed if seed is not None else fresh_seed(),
            workdir=workdir,
            **extra,
        )
    except ValidationError as exc:
        raise FsarenaError(_option_message(exc)) from None


def real_history(
    path: str, age: AgeProfile, datasets: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """--age-repo: the repository datasets of git replay and the git tasks, from a user's repo."""
    if age.kind != "git-replay":
        raise FsarenaError(
            f"--age-repo replays a git history, but aging profile {age.name} is a {age.kind} "
            'profile: use --age git-replay (or a .toml profile with kind = "git-replay")'
        )
    replay_line(path, age.commits)  # a path, a repository, a history long enough: now, not mid-run
    repo = os.path.abspath(path)
    return {
        age.repository: {**datasets.get(age.repository, {}), "repo": repo, "commits": age.commits},
        "gitrepo": {**datasets.get("gitrepo", {}), "repo": repo, "commits": age.commits},
    }


# The command-line flag that sets each field of a plan, for messages that name what was typed.
FLAGS = {
    "repetitions": "--repetitions",
    "scale": "--scale",
    "seed": "--seed",
    "workdir": "--workdir",
    "source": "--source",
    "task_timeout_s": "--task-timeout",
    "image_size_bytes": "--image-size",
    "device": "--device",
    "target_ci_pct": "--target-ci",
    "max_repetitions": "--max-repetitions",
    "time_budget_s": "--time-budget",
    "machine": "--machine",
}


def _option_message(exc: ValidationError) -> str:
    """Every problem with the options, each named by its flag and the value typed."""
    problems = []
    for error in exc.errors():
        msg = str(error["msg"]).removeprefix("Value error, ")
        field = str(error["loc"][0]) if error["loc"] else ""
        if field in FLAGS:
            given = error["input"]
            typed = f"{given:g}" if isinstance(given, float) else given
            msg = msg.replace("Input should be", "must be")
            msg = f"{FLAGS[field]} {typed}: {msg[:1].lower()}{msg[1:]}"
        problems.append(msg)
    return "; ".join(problems)


AGED_TASKS = tuple(task.name for task in AGED)  # what --age adds, in its module's order


def with_aged_tasks(tasks: list[str]) -> list[str]:
    """The suite's tasks and the aged-tree tasks, before a final umount (which must stay last)."""
    added = [t for t in AGED_TASKS if t not in tasks]
    if tasks and tasks[-1] == "umount":
        return [*tasks[:-1], *added, "umount"]
    return [*tasks, *added]


def fresh_seed() -> int:
    import secrets

    return secrets.randbelow(2**31)
