"""The options table: mkfs and mount options sysadmins weigh, as data (options.toml).

Each option says what it trades, which kinds of work it should affect, since when the
kernel (or mkfs) documents it and where. `configuration()` turns one into a profile
variant, the same way a suite's `[filesystems.NAME]` table does; nothing here branches
on a filesystem's name. Whether the running kernel and mkfs accept an option is found
by trying it (`fsarena list options --probe`), never by the version alone.
"""

from __future__ import annotations

import functools
import tomllib
from importlib import resources

from pydantic import BaseModel, ConfigDict, Field

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES, FilesystemProfile
from fsarena.filesystems.variants import derive

ANY_FS = "*"  # an option of the VFS: every filesystem has it


class Option(BaseModel):
    """One row of options.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fs: str
    name: str
    group: str
    trades: str
    kinds: tuple[str, ...]
    since: str
    source: str
    mount: tuple[str, ...] = ()
    mkfs: tuple[str, ...] = ()
    directory: str = ""  # a chattr attribute for the task's data directory ("+C")
    mkfs_since: str = ""

    @property
    def needs_mount_or_mkfs(self) -> bool:
        return bool(self.mount or self.mkfs)


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    option: list[Option] = Field(default_factory=list)


@functools.cache
def table() -> tuple[Option, ...]:
    """Every option of options.toml, checked: known filesystems, unique names per fs."""
    raw = tomllib.loads(resources.files("fsarena.filesystems").joinpath("options.toml").read_text())
    options = tuple(_Table.model_validate(raw).option)
    seen: set[tuple[str, str]] = set()
    for o in options:
        if o.fs != ANY_FS and o.fs not in PROFILES:
            raise ValueError(f"options.toml: unknown filesystem {o.fs!r} for {o.name!r}")
        if (o.fs, o.name) in seen:
            raise ValueError(f"options.toml: {o.name!r} twice for {o.fs}")
        seen.add((o.fs, o.name))
    return options


def options_for(fs: str) -> list[Option]:
    """The options that apply to one filesystem (its own, then the VFS's), table order."""
    if fs not in PROFILES:
        raise FsarenaError(f"unknown filesystem {fs!r}; known: {', '.join(sorted(PROFILES))}")
    own = [o for o in table() if o.fs == fs]
    return own + [o for o in table() if o.fs == ANY_FS]


USER_GROUP = "user"  # an option the user named that the table lacks


def user_option(fs: str, name: str) -> Option:
    """An option the table lacks, named with `tune --options`: tried as a mount option.

    Nothing is claimed for it: whether the kernel takes it is found by the probe.
    """
    return Option(
        fs=fs,
        name=name,
        mount=(name,),
        group=USER_GROUP,
        trades="named by the user, not in the options table: nothing claimed for it",
        kinds=(),
        since="",
        source="the user's --options",
    )


def variant_name(fs: str, option: Option) -> str:
    """What reports call the configuration: 'btrfs+compress=zstd:1', 'btrfs+chattr+C'."""
    return f"{fs}+{option.name.replace(' ', '')}"


def configuration(fs: str, option: Option) -> FilesystemProfile:
    """The filesystem's profile with the option: its mount options added, mkfs's too.

    A per-directory option (chattr) is set on each task's data directory before any
    data is written (FilesystemProfile.data_dir_attributes).
    """
    base = PROFILES[fs]
    return derive(
        variant_name(fs, option),
        base,
        mount_options=(*base.mount_options, *option.mount),
        mkfs_options=option.mkfs,
        data_dir_attributes=(option.directory,) if option.directory else (),
        notes=f"{base.name} with {option.name}: {option.trades}",
    )
