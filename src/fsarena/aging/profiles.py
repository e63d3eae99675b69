"""Aging profiles: the built-in ones (profiles.toml) and a user's TOML file, validated.

A profile says how full to make the filesystem, how many times the image's
size churn writes, and the size and tree distributions of its files. Every
profile names its source: the paper or tool its parameters come from.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fsarena.errors import FsarenaError, not_text


class AgeProfile(BaseModel):
    """How a filesystem is aged before its tasks run; every figure is a parameter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    source: str = Field(min_length=1)  # the paper or tool the parameters come from
    # "tree": fill and churn (fsarena.aging.workload); "git-replay": a repository's
    # history pulled commit by commit (fsarena.aging.gitreplay, Conway et al. FAST '17).
    kind: Literal["tree", "git-replay"] = "tree"
    # Git replay: the repository dataset, commits applied after its first, commits per pull.
    repository: str = "agingrepo"
    commits: int = Field(default=300, ge=1, le=10_000)
    pull_step: int = Field(default=1, ge=1)
    # Apparent data bytes the fill writes, as a share of the image's size.
    fullness: float = Field(default=0.8, gt=0, lt=1)
    # Churn: stop once written_factor x the image's size has been written (0: fill only),
    # or after time_cap_s seconds of churn, whichever comes first.
    written_factor: float = Field(default=0.0, ge=0, le=100)
    time_cap_s: float = Field(default=300.0, gt=0)
    delete_share: float = Field(default=0.1, gt=0, le=1)  # of the live files, per round
    fsync_share: float = Field(default=0.2, ge=0, le=1)  # of the new files (fs-drift: 20 %)
    # Sizes (Impressions' hybrid model) and tree (fsarena's Impressions-style generator).
    mean_file_bytes: int = Field(default=128 * 1024, gt=0)  # sets the number of files
    files_per_directory: int = Field(default=24, ge=2)
    max_file_bytes: int = Field(default=64 << 20, gt=0)
    body_median_bytes: float = Field(default=16384.0, gt=0)
    body_sigma: float = Field(default=2.0, gt=0)
    tail_fraction: float = Field(default=0.05, ge=0, le=1)
    tail_min_bytes: float = Field(default=1 << 20, gt=0)
    tail_alpha: float = Field(default=1.1, gt=0)
    max_depth: int = Field(default=5, ge=1)
    depth_mean: float = Field(default=3.0, ge=1)

    @property
    def datasets(self) -> tuple[str, ...]:
        """Datasets the aging reads: git replay's repository and the tree it is built from."""
        return ("kernel", self.repository) if self.kind == "git-replay" else ()

    def describe(self) -> str:
        if self.kind == "git-replay":
            step = f"{self.pull_step} commits" if self.pull_step > 1 else "one commit"
            return (
                f"{self.name}: {self.commits} commits of dataset {self.repository}'s history "
                f"pulled into a checkout, {step} per `git pull` (gc.auto 0; at most "
                f"{self.time_cap_s:.0f} s). Source: {self.source}"
            )
        churn = (
            f", then churn until {self.written_factor:g}x the image is written "
            f"(rounds deleting {self.delete_share:.0%} of the files and creating as many, "
            f"{self.fsync_share:.0%} fsync'ed; at most {self.time_cap_s:.0f} s)"
            if self.written_factor
            else ""
        )
        return (
            f"{self.name}: fill to {self.fullness:.0%} of the image{churn}. Source: {self.source}"
        )


def _validated(data: dict[str, Any], name: str, where: str) -> AgeProfile:
    try:
        return AgeProfile.model_validate({**data, "name": name})
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"])
        raise FsarenaError(
            f"{where}: {key}: {first['msg']}; see the keys of fsarena/aging/profiles.toml"
        ) from None


def builtin_profiles() -> dict[str, AgeProfile]:
    text = resources.files("fsarena.aging").joinpath("profiles.toml").read_text()
    return {
        name: _validated(table, name, f"built-in aging profile {name}")
        for name, table in tomllib.loads(text).items()
    }


def resolve_age(value: str | dict[str, Any] | AgeProfile) -> AgeProfile:
    """A built-in profile by name, a user's TOML file by path, or a suite's table."""
    if isinstance(value, AgeProfile):
        return value
    if isinstance(value, dict):
        return _validated(value, str(value.get("name", "custom")), "age")
    builtin = builtin_profiles()
    if value in builtin:
        return builtin[value]
    path = Path(value)
    if path.suffix != ".toml" and not path.exists():
        raise FsarenaError(
            f"unknown aging profile {value!r}; built-in: {', '.join(builtin)} "
            "(or give the path of a .toml profile file)"
        )
    try:
        data = tomllib.loads(path.read_text())
    except OSError as exc:
        raise FsarenaError(f"cannot read aging profile {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise FsarenaError(f"aging profile {path} is not TOML: {not_text(exc)}") from None
    except tomllib.TOMLDecodeError as exc:
        raise FsarenaError(f"aging profile {path} is not valid TOML: {exc}") from None
    return _validated(data, path.stem, str(path))
