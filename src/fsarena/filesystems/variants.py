"""Variants of a profile (other options, another driver) and the profiles users' names mean.

The rows themselves are data in fsarena.filesystems.profiles; this module names no
filesystem: it derives a suite's option variant, a driver's variant ("vfat@fuse"),
and resolves what users type in --fs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import DRIVER_KINDS, PROFILES, FilesystemProfile


def derive(
    name: str,
    base: FilesystemProfile,
    mount_options: Iterable[str] | None = None,
    mkfs_options: Iterable[str] = (),
    notes: str = "",
    data_dir_attributes: Iterable[str] = (),
) -> FilesystemProfile:
    """A variant of a profile (a suite's `[filesystems.NAME]` table): other options, same type.

    mount_options replace the base's; mkfs_options are added before the device;
    data_dir_attributes are added to the base's (chattr on each task's data directory).
    """
    at = base.mkfs.index("{device}") if "{device}" in base.mkfs else len(base.mkfs)
    mkfs = (*base.mkfs[:at], *mkfs_options, *base.mkfs[at:])
    return replace(
        base,
        name=name,
        mkfs=mkfs,
        mount_options=base.mount_options if mount_options is None else tuple(mount_options),
        data_dir_attributes=(*base.data_dir_attributes, *data_dir_attributes),
        notes=notes or f"variant of {base.name}" + (f": {base.notes}" if base.notes else ""),
    )


@dataclass(frozen=True)
class Support:
    """Whether a profile can run here, and if not, why and what to do."""

    profile: FilesystemProfile
    available: bool
    reason: str = ""


def variant(base: FilesystemProfile, driver: str) -> FilesystemProfile:
    """The profile as run through one driver: its name, mount command and capabilities.

    The kernel variant keeps the bare name (vfat); the others are named
    NAME@DRIVER ("vfat@fuse", "jfs@uml"), which is also what users type to pick one.
    """
    if driver not in base.drivers:
        offered = ", ".join(f"{base.name}@{d}" for d in base.drivers) or "none"
        raise FsarenaError(
            f"{base.name} cannot run through the {driver!r} driver; its drivers: {offered}"
        )
    kind = DRIVER_KINDS[driver]
    name = base.name if driver == "kernel" else f"{base.name}@{driver}"
    changes: dict[str, object] = {"name": name, "driver": kind, "base": base.name}
    if kind == "guest":
        changes["guest"] = driver
        changes["overlay_upper_unsupported"] = "the container engine runs on the host, not a guest"
    if kind == "fuse":
        changes["overlay_upper_unsupported"] = "overlayfs cannot use a FUSE filesystem as upper"
    if kind == "fuse" and base.fuse is not None:
        fuse = base.fuse
        changes["mount_command"] = fuse.command
        changes["syncfs"] = base.syncfs and fuse.syncfs
        if fuse.unix_ownership is not None:
            changes["unix_ownership"] = fuse.unix_ownership
    return replace(base, **changes)  # type: ignore[arg-type]


def split_name(
    name: str, table: Mapping[str, FilesystemProfile] = PROFILES
) -> tuple[FilesystemProfile, str | None]:
    """The base profile and the driver a user named ("vfat@fuse"), None for the best one.

    table: the profiles names may refer to (the built-in ones, or a plan's with its variants).
    """
    base_name, _, driver = name.strip().partition("@")
    if base_name not in table:
        known = ", ".join(sorted(table))
        raise FsarenaError(f"unknown filesystem {base_name!r}; known filesystems: {known}")
    base = table[base_name]
    if not driver:
        return base, None
    if driver not in DRIVER_KINDS:
        raise FsarenaError(
            f"unknown driver {driver!r} in {name!r}; drivers: {', '.join(DRIVER_KINDS)}"
        )
    variant(base, driver)  # validates that this profile offers it
    return base, driver


def profile_for(name: str, table: Mapping[str, FilesystemProfile] = PROFILES) -> FilesystemProfile:
    """The profile of a concrete name: a bare name (its kernel variant), or "jfs@uml"."""
    base, driver = split_name(name, table)
    return variant(base, driver or "kernel") if base.drivers else base


def guest_kernels_of(profile: FilesystemProfile) -> list[str]:
    """The guest kernels a profile may run in: the one it names, or each of its guest drivers."""
    if profile.driver == "guest":
        return [profile.guest]
    return [d for d in profile.drivers if DRIVER_KINDS[d] == "guest"]


def resolve(
    names: Iterable[str], profiles: Mapping[str, FilesystemProfile] = PROFILES
) -> list[FilesystemProfile]:
    """Profiles for user-typed names, in the given order; unknown names are an error.

    A name without a driver stands for its kernel variant here; which driver
    actually runs it is chosen by fsarena.filesystems.drivers.choose, which probes the host.
    """
    chosen: list[FilesystemProfile] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        profile = profile_for(name, profiles)
        if profile not in chosen:
            chosen.append(profile)
    if not chosen:
        raise FsarenaError("no filesystem selected; name some with --fs, e.g. --fs ext4,xfs")
    return chosen
