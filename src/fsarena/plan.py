"""The plan: which filesystems, tasks, datasets and repetitions, validated before anything runs.

A plan comes from a suite (TOML shipped in fsarena/suites/, or a user's file)
with command-line overrides. Every name and number is checked here, so a typo
fails in a second with a message naming it, never after an hour of mkfs.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from fsarena import datasets
from fsarena.errors import FsarenaError
from fsarena.filesystems import PROFILES, FilesystemProfile, resolve
from fsarena.tasks import TASKS

DEFAULT_WORKDIR = "/var/tmp/fsarena"
DEFAULT_SUITE = "article-a-2006"
DEFAULT_MAX_REPETITIONS = 10
MIB = 1 << 20

# Datasets the tasks may ask for, by name, at scale 1 (the articles' sizes).
DATASETS: dict[str, datasets.DatasetSpec] = {
    "iso": datasets.ARTICLE_A_ISO,
    "tree": datasets.ARTICLE_A_TREE,
}


class Suite(BaseModel):
    """A named comparison: what an article did, as data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    article: str = ""
    description: str = ""
    filesystems: list[str]
    tasks: list[str] = Field(min_length=1)
    repetitions: int = Field(default=3, ge=1, le=1000)
    scale: float = Field(default=1.0, gt=0, le=100)

    @field_validator("tasks")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        unknown = [t for t in value if t not in TASKS]
        if unknown:
            raise ValueError(f"unknown task(s) {', '.join(unknown)}; known: {', '.join(TASKS)}")
        return value

    @field_validator("filesystems")
    @classmethod
    def _known_filesystems(cls, value: list[str]) -> list[str]:
        resolve(value)
        return value


def _validation_message(source: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown key (misspelled?)" + _did_you_mean(str(first["loc"][-1]))
    return f"{source}: {where}: {msg}" if where else f"{source}: {msg}"


def _did_you_mean(key: str) -> str:
    close = difflib.get_close_matches(key, list(Suite.model_fields), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(Suite.model_fields)}"


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
    folder = resources.files("fsarena.suites")
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
        return parse_suite(text, str(path))
    raise FsarenaError(
        f"unknown suite {name_or_path!r}; built-in suites: {', '.join(suites)} "
        "(or give the path of a .toml suite file)"
    )


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

    @model_validator(mode="after")
    def _adaptive_limits(self) -> Plan:
        if self.target_ci_pct is None and (
            self.max_repetitions is not None or self.time_budget_s is not None
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
    def max_repetitions_or_default(self) -> int:
        """The adaptive ceiling: as given, else 10 rounds or the fixed number if higher."""
        if self.max_repetitions is not None:
            return self.max_repetitions
        return max(self.repetitions, DEFAULT_MAX_REPETITIONS)

    def profiles(self) -> list[FilesystemProfile]:
        return [PROFILES[name] for name in self.filesystems]

    def dataset_specs(self) -> dict[str, datasets.DatasetSpec]:
        """The datasets the tasks need, scaled."""
        names = sorted({d for t in self.tasks for d in TASKS[t].datasets})
        return {name: DATASETS[name].scaled(self.scale) for name in names}

    def image_size_for(self, profile: FilesystemProfile) -> int:
        """A sparse image big enough for two copies of the largest dataset, with margin."""
        if self.image_size_bytes is not None:
            # Never below what mkfs accepts: a smaller image could only fail mkfs.
            return max(self.image_size_bytes, profile.min_size_bytes)
        largest = max((s.total_bytes for s in self.dataset_specs().values()), default=0)
        # Two copies at once (copy within), +30 % for metadata and allocation slack.
        need = int(2 * largest * 1.3) + 256 * MIB
        size = max(need, profile.min_size_bytes)
        return (size + MIB - 1) // MIB * MIB

    def summary(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def make_plan(
    suite_name: str,
    filesystems: list[str] | None,
    repetitions: int | None,
    scale: float | None,
    seed: int | None,
    workdir: str,
    **extra: Any,
) -> Plan:
    """Build and validate a plan from a suite and command-line overrides."""
    suite = load_suite(suite_name)
    chosen = resolve(filesystems if filesystems is not None else suite.filesystems)
    try:
        return Plan(
            suite=suite.name,
            filesystems=[p.name for p in chosen],
            tasks=list(suite.tasks),
            repetitions=repetitions if repetitions is not None else suite.repetitions,
            scale=scale if scale is not None else suite.scale,
            seed=seed if seed is not None else _fresh_seed(),
            workdir=workdir,
            **extra,
        )
    except ValidationError as exc:
        raise FsarenaError(_validation_message("options", exc)) from None


def _fresh_seed() -> int:
    import secrets

    return secrets.randbelow(2**31)
