"""How limits reach the kernel: cgroup v1 or cgroup v2, one small class each.

cgroup v1 (this project's machines; measured here):
- memory: memory.limit_in_bytes on a child memory cgroup the tasks run in. It
  caps the page cache too: a 2 GiB cp peaked at 520 MiB under a 512 MiB limit.
- CPU: cpu.cfs_quota_us over a 10 ms cpu.cfs_period_us on a child cpu cgroup;
  wall time then tracked CPU time / quota within 2-5 %.
- disk: blkio.throttle.read_bps_device / write_bps_device on the ROOT blkio
  cgroup, for fsarena's test loop devices only. v1 attributes writeback and
  sync(2) to the root group, so in a child cgroup they escape the limit; on the
  root, every path held 55-60 MB/s for a 60 MB/s limit. The tasks join the root
  blkio group too (v1 throttling is flat: a rule binds only its own group).
  These rules are the only shared cgroup files v1 needs: each is a Setting
  (host/sysctls.py), restored to its previous value.

cgroup v2 (most users' machines): one child cgroup with memory.max, cpu.max
("QUOTA PERIOD") and io.max ("MAJ:MIN rbps=N wbps=N"). v2 charges writeback
to the cgroup that dirtied the pages, so the child's io.max holds for every
path. A controller the root does not yet pass to its children is enabled in
its cgroup.subtree_control as a Setting, and disabled again afterwards.

Every cgroup fsarena makes is named fsarena-PID-N (cgroups.child_path) and
recorded in the ledger before mkdir; every shared file it writes is recorded
with its previous value before the write (Changes, below).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from fsarena.errors import FsarenaError
from fsarena.host import cgroups, sysctls
from fsarena.plan.machines import Limits

Undo = Mapping[str, Callable[[str], str]]


class Tracker(Protocol):
    """The resource ledger (or an executor that writes to it)."""

    def track(self, kind: str, ident: str) -> None: ...

    def untrack(self, kind: str, ident: str) -> None: ...


def _ledger_undo() -> Undo:
    from fsarena.host.ledger import UNDO

    return UNDO


@dataclass
class Changes:
    """What a machine changed, each recorded in the ledger first; undone newest first."""

    tracker: Tracker
    undo: Undo = field(default_factory=_ledger_undo)  # the ledger's own undo functions
    done: list[tuple[str, str]] = field(default_factory=list)

    def set(self, setting: sysctls.Setting | None) -> list[tuple[str, str]]:
        """Write a shared file's new value (None: it already holds it); returns the entry."""
        if setting is None:
            return []
        entry = ("setting", setting.ident())
        self.tracker.track(*entry)
        self.done.append(entry)
        sysctls.apply(setting)
        return [entry]

    def make_cgroup(self, path: Path) -> None:
        entry = ("cgroup", str(path))
        self.tracker.track(*entry)
        self.done.append(entry)
        path.mkdir()

    def revert(self, entries: list[tuple[str, str]]) -> list[str]:
        """Undo some entries, newest first; those that fail stay in the ledger for cleanup."""
        failed = []
        for entry in reversed(entries):
            try:
                self.undo[entry[0]](entry[1])
            except OSError as exc:
                failed.append(f"{entry[0]} {entry[1]}: {exc}")
                continue
            self.tracker.untrack(*entry)
            if entry in self.done:
                self.done.remove(entry)
        return failed

    def revert_all(self) -> list[str]:
        return self.revert(list(self.done))


def device_number(device: str) -> str:
    """MAJ:MIN of a block device, as cgroup files key it."""
    rdev = os.stat(device).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def _write(path: Path, value: str) -> None:
    path.write_text(f"{value}\n")


@dataclass
class CgroupV1:
    """Child memory and cpu cgroups; throttle rules on the root blkio cgroup."""

    memory_root: Path | None
    cpu_root: Path | None
    blkio_root: Path | None
    groups: list[Path] = field(default_factory=list)
    name: str = "cgroup v1"

    def setup(self, limits: Limits, changes: Changes) -> None:
        if limits.memory_bytes is not None and self.memory_root is not None:
            group = self._child(self.memory_root, changes)
            _write(group / "memory.limit_in_bytes", str(limits.memory_bytes))
        quota = limits.cpu_quota_us
        if quota is not None and self.cpu_root is not None:
            group = self._child(self.cpu_root, changes)
            _write(group / "cpu.cfs_period_us", str(limits.cpu_period_us))
            _write(group / "cpu.cfs_quota_us", str(quota))

    def _child(self, root: Path, changes: Changes) -> Path:
        group = cgroups.child_path(root)
        changes.make_cgroup(group)
        self.groups.append(group)
        return group

    def join_paths(self) -> tuple[str, ...]:
        blkio = (str(self.blkio_root),) if self.blkio_root is not None else ()
        return (*(str(g) for g in self.groups), *blkio)

    def throttle(self, number: str, limits: Limits, changes: Changes) -> list[tuple[str, str]]:
        if self.blkio_root is None:
            return []
        entries = []
        for name, rate in (
            ("blkio.throttle.read_bps_device", limits.disk_read_bytes_per_s),
            ("blkio.throttle.write_bps_device", limits.disk_write_bytes_per_s),
        ):
            if rate is not None:
                path = str(self.blkio_root / name)
                entries += changes.set(sysctls.change(path, str(rate), number, "keyed"))
        return entries

    def unthrottle(self, number: str, entries: list[tuple[str, str]], changes: Changes) -> None:
        changes.revert(entries)  # the previous rule (normally none) is put back

    def memory_group(self) -> Path | None:
        return next((g for g in self.groups if g.parent == self.memory_root), None)


@dataclass
class CgroupV2:
    """One child of the unified hierarchy with memory.max, cpu.max and io.max."""

    root: Path
    group: Path | None = None
    name: str = "cgroup v2"

    def setup(self, limits: Limits, changes: Changes) -> None:
        needed = _v2_controllers(limits)
        if not needed:
            return
        control = str(self.root / "cgroup.subtree_control")
        # Read all first: each controller missing then is enabled, and later disabled.
        missing = {c: sysctls.change(control, f"+{c}", c, "controller") for c in sorted(needed)}
        for controller, setting in missing.items():
            try:
                changes.set(setting)
            except OSError as exc:  # the parent does not pass it down (a delegated subtree)
                raise FsarenaError(
                    f"cannot enable the {controller} controller in {control}: {exc.strerror}; "
                    "enable it in the parent's cgroup.subtree_control, or use a machine "
                    "profile without that limit"
                ) from exc
        self.group = cgroups.child_path(self.root)
        changes.make_cgroup(self.group)
        if limits.memory_bytes is not None:
            _write(self.group / "memory.max", str(limits.memory_bytes))
        if limits.cpu_quota_us is not None:
            _write(self.group / "cpu.max", f"{limits.cpu_quota_us} {limits.cpu_period_us}")

    def join_paths(self) -> tuple[str, ...]:
        return (str(self.group),) if self.group is not None else ()

    def throttle(self, number: str, limits: Limits, changes: Changes) -> list[tuple[str, str]]:
        # A rule in fsarena's own cgroup: it goes with the cgroup, nothing shared to restore.
        if self.group is not None:
            rates = _io_max(limits.disk_read_bytes_per_s, limits.disk_write_bytes_per_s)
            _write(self.group / "io.max", f"{number} {rates}")
        return []

    def unthrottle(self, number: str, entries: list[tuple[str, str]], changes: Changes) -> None:
        if self.group is not None and self.group.exists():
            _write(self.group / "io.max", f"{number} rbps=max wbps=max")

    def memory_group(self) -> Path | None:
        return self.group


def _io_max(read: int | None, write: int | None) -> str:
    def rate(value: int | None) -> str:
        return "max" if value is None else str(value)

    return f"rbps={rate(read)} wbps={rate(write)}"


Backend = CgroupV1 | CgroupV2


def _v2_controllers(limits: Limits) -> set[str]:
    wanted = {
        "memory": limits.memory_bytes is not None,
        "cpu": limits.cpu_quota_us is not None,
        "io": limits.disk_read_bytes_per_s is not None or limits.disk_write_bytes_per_s is not None,
    }
    return {name for name, on in wanted.items() if on}


V1_CONTROLLER = {"memory": "memory", "cpu": "cpu", "io": "blkio"}


def choose_backend(limits: Limits, base: Path = cgroups.CGROUP_ROOT) -> Backend:
    """cgroup v2 where its root offers every controller needed, else the v1 hierarchies."""
    needed = _v2_controllers(limits)
    unified = cgroups.v2_root(base)
    if unified is not None and needed <= unified[1]:
        return CgroupV2(unified[0])
    found = {c: cgroups.v1_hierarchy(V1_CONTROLLER[c], base) for c in ("memory", "cpu", "io")}
    missing = sorted(c for c in needed if found[c] is None)
    if missing:
        offered = sorted(unified[1]) if unified is not None else []
        raise FsarenaError(
            f"this host cannot limit {', '.join(missing)}: the cgroup v2 root under {base} offers "
            f"{offered or 'no controllers'} and no cgroup v1 hierarchy has "
            f"{', '.join(V1_CONTROLLER[c] for c in missing)}; mount the controller "
            "or use a machine profile without that limit"
        )
    return CgroupV1(found["memory"], found["cpu"], found["io"] if "io" in needed else None)


def with_ratio_restore(setting: sysctls.Setting | None, ratio_path: str) -> sysctls.Setting | None:
    """vm.dirty_bytes over a ratio (it reads 0) is undone by writing the ratio back."""
    if setting is None or setting.previous != "0":
        return setting
    ratio = sysctls.read_value(ratio_path)
    if ratio is None:
        raise FileNotFoundError(ratio_path)
    return replace(setting, previous=ratio, restore_path=ratio_path)
