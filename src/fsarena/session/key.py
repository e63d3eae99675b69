"""The comparison key of a result: what must be equal for two results to have measured the same.

A result is one task on one filesystem variant in one session. Its key holds
everything that changes what the figure means, and nothing that only says
where or by whom it was measured:

- the task: its id, its version (Task.key_version(): declared on the task and
  pinned by a test against its commands, or the digest of a user's command),
  the digests of the datasets it uses (the spec's parameters and the content's
  manifest) and the session's scale, and the major.minor of the tools it runs;
- the filesystem variant: its type, its driver (kernel, FUSE, which guest), its
  mkfs argv and mount options verbatim, the per-directory attributes, the loop
  image's size (a device of the user's: "whole device"), the aging profile if
  aged, the major.minor of its mkfs;
- where it ran: the kernel's major.minor (a guest's own for a guest driver),
  the class of device read from sysfs (NVMe SSD, SATA HDD, virtual disk, zram,
  a loop image on one of these, a guest's disk over one), and the conditions
  of the run (where the data was copied from, how caches were emptied, an
  emulated machine).

The key is composed here from the session on reading, the same way for every
schema version: a version-4 session records what only the run can know
(Session.comparison); an older one lacks the device class, the task versions
and their tools, which its key lists as missing. A key with a missing field is
incomplete and is pooled with no other key (fsarena share view).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from fsarena.session.file import Session
from fsarena.session.records import ProfileRecord

# The key's scheme: bumped when the fields or their derivation change, so keys composed by
# another scheme never compare equal by accident.
KEY_SCHEME = "fsarena-key-1"
MACHINE_DROP = "sync + drop_caches of the whole machine before every timed task"
# A version number: digits and a dot and digits, not inside a word ("mke2fs 1.47.0" is 1.47,
# "btrfs-progs v6.2" 6.2); else a lone number ("dbench version 4").
_DOTTED = re.compile(r"(?:^|[^A-Za-z0-9.])v?(\d+)\.(\d+)")
_WHOLE = re.compile(r"(?:^|[^A-Za-z0-9.])v?(\d+)(?![\d.])")


def series(version: str | None) -> str | None:
    """The major.minor of a version line ("mke2fs 1.47.0 (5-Feb-2023)" -> "1.47"); a line
    without a number as it is ("not reported"); None when not recorded."""
    if not version:
        return None
    if found := _DOTTED.search(version):
        return f"{found.group(1)}.{found.group(2)}"
    if found := _WHOLE.search(version):
        return found.group(1)
    return version


def digest(fields: dict[str, Any]) -> str:
    """sha256 of the fields as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class KeyParts:
    """A session's key fields, factored: the part every result shares, each task's, each
    filesystem's. A result's key is the three merged (fields)."""

    common: dict[str, Any]
    tasks: dict[str, dict[str, Any]]
    filesystems: dict[str, dict[str, Any]]

    def fields(self, task: str, filesystem: str) -> dict[str, Any]:
        return {**self.common, **self.tasks[task], **self.filesystems[filesystem]}

    def to_dict(self) -> dict[str, Any]:
        return {"common": self.common, "tasks": self.tasks, "filesystems": self.filesystems}


def missing(fields: dict[str, Any]) -> list[str]:
    """The fields the session could not tell (None anywhere in them), sorted."""

    def empty(value: Any) -> bool:
        if isinstance(value, dict):
            return any(empty(v) for v in value.values())
        return value is None

    return sorted(name for name, value in fields.items() if empty(value))


def parts(session: Session) -> KeyParts:
    """Every key field of a session, factored (see the module docstring)."""
    common = {
        "scheme": KEY_SCHEME,
        "scale": session.plan.scale,
        "source": session.source.kind or None,
        # How caches were emptied, its first clause (the rest explains it); absent in older
        # sessions: sync + drop_caches of the whole machine (Session.cold_caches).
        "cold_caches": (session.cold_caches or MACHINE_DROP).split(":")[0],
        "emulated_machine": (session.machine.profile.name or "") if session.machine else "",
    }
    return KeyParts(
        common,
        {task: _task(session, task) for task in session.tasks()},
        {fs: _filesystem(session, fs) for fs in session.filesystems()},
    )


def _task(session: Session, task: str) -> dict[str, Any]:
    recorded = session.comparison.tasks.get(task)
    info = session.plan.info(task)
    # Sessions before the plan listed a task's datasets: which it used is not known.
    datasets: dict[str, Any] | None = {
        name: (
            {"spec": d.spec_hash or None, "content": d.manifest_digest or None}
            if (d := session.datasets.get(name))
            else None
        )
        for name in info.datasets
    }
    if "datasets" not in info.model_fields_set:
        datasets = None
    tools = (
        {name: series(session.tool_versions.get(name)) for name in recorded.tools}
        if recorded
        else None
    )
    return {
        "task": task,
        "task_version": recorded.version if recorded and recorded.version else None,
        "datasets": datasets,
        "task_tools": tools,
    }


def _filesystem(session: Session, fs: str) -> dict[str, Any]:
    p = session.profile(fs)
    mkfs = p.mkfs[0] if p.mkfs else ""
    return {
        "fstype": p.fstype or None,
        "driver": _group(p),
        "mkfs": list(p.mkfs),
        "mount_options": list(p.mount_options),
        "data_dir_attributes": list(p.data_dir_attributes),
        "image_size_bytes": _size(session, p),
        "aged": p.aged or "",
        "mkfs_version": {mkfs: series(session.tool_versions.get(mkfs))} if mkfs else {},
        "kernel": _kernel(session, fs, p),
        "device": _device(session, p),
    }


def _size(session: Session, p: ProfileRecord) -> int | str | None:
    """The loop image's size, which the plan decides (the same on every host running it); on a
    device of the user's (--device), "whole device": every disk has its own size, and keying
    on it would pool no two real disks."""
    if session.target:
        return "whole device"
    return p.image_size_bytes or None


def _group(p: ProfileRecord) -> str:
    """kernel, fuse, guest:NAME (absent: the host kernel, sessions before schema 2)."""
    driver = p.driver or "kernel"
    return f"guest:{p.guest}" if driver == "guest" else driver


def _kernel(session: Session, fs: str, p: ProfileRecord) -> str | None:
    if (p.driver or "kernel") != "guest":
        return series(session.host.kernel)
    kernels = session.comparison.kernels
    return series(kernels.get(fs) or kernels.get(p.fresh or "") or None)


def _device(session: Session, p: ProfileRecord) -> str | None:
    label = session.comparison.device.label
    if not label:
        return None
    return f"{p.guest} guest's disk on {label}" if (p.driver or "kernel") == "guest" else label


def keys(session: Session) -> dict[tuple[str, str], str]:
    """The key digest of every (task, filesystem) of the session."""
    found = parts(session)
    return {
        (task, fs): digest(found.fields(task, fs))
        for task in found.tasks
        for fs in found.filesystems
    }
