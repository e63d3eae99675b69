"""Control groups for tasks: a memory limit, a task's processes, a server's CPU.

bonnie++ wants a test file twice the machine's RAM so the page cache cannot
hold it. fsarena satisfies that honestly: bonnie++ runs in a memory cgroup
limited to half the file size, and is told that limit as its RAM (`-r`), so
its file really is twice the memory it may cache in.

Both hierarchies are supported: cgroup v2 (`memory.max`, in a unified
hierarchy whose root offers the memory controller) and cgroup v1 (a `memory`
hierarchy, `memory.limit_in_bytes`). Children are named `fsarena-PID-N`, so
fsarena never touches a cgroup it did not create, and are always removed.

A server fsarena starts (PostgreSQL) does most of a database task's work in its own
processes, outside the timed command: its CPU is read from a cgroup holding exactly
its processes (cpu_cgroup_for, cpu_usage). On cgroup v2 every cgroup counts its CPU
(`cpu.stat`, even without the cpu controller); on v1 the cpuacct hierarchy does.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fsarena.errors import FsarenaError

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "fsarena"
_counter = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """Where memory cgroups are made, and which interface files they have."""

    root: Path
    version: int

    @property
    def limit_file(self) -> str:
        return "memory.max" if self.version == 2 else "memory.limit_in_bytes"

    @property
    def peak_file(self) -> str:
        return "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"


def memory_hierarchy(base: Path = CGROUP_ROOT) -> Hierarchy:
    """The cgroup v2 hierarchy with a memory controller, else the v1 memory hierarchy."""
    for root in (base, base / "unified"):
        controllers = root / "cgroup.controllers"
        with contextlib.suppress(OSError):
            if "memory" in controllers.read_text().split():
                return Hierarchy(root, 2)
    if (base / "memory" / "memory.limit_in_bytes").exists():
        return Hierarchy(base / "memory", 1)
    raise FsarenaError(
        f"no memory cgroup controller under {base}: mount cgroup2 with the memory controller "
        "(or the v1 memory hierarchy); bonnie++ needs it to limit its page cache honestly"
    )


def create_memory_cgroup(
    limit_bytes: int,
    hierarchy: Hierarchy | None = None,
    before: Callable[[str], None] | None = None,
) -> str:
    """Make fsarena-PID-N with a memory limit; returns its directory.

    `before` is told the directory before it is made (the resource ledger's intent).
    """
    h = hierarchy or memory_hierarchy()
    if h.version == 2:
        # Children get the memory controller only if the parent enables it for them.
        with contextlib.suppress(OSError):
            (h.root / "cgroup.subtree_control").write_text("+memory")
    path = h.root / f"{PREFIX}-{os.getpid()}-{next(_counter)}"
    if before is not None:
        before(str(path))
    try:
        path.mkdir()
        (path / h.limit_file).write_text(f"{limit_bytes}\n")
    except OSError as exc:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise FsarenaError(f"cannot make memory cgroup {path}: {exc}; run as root") from exc
    return str(path)


def task_hierarchy(base: Path = CGROUP_ROOT) -> Path:
    """Where a cgroup that only holds a task's processes is made: v2's root, else v1's pids.

    Any hierarchy tracks processes; v1's pids (else memory) hierarchy is used so that no
    limit and no accounting of another controller comes with it.
    """
    v2 = v2_root(base)
    if v2 is not None and (v2[0] / "cgroup.procs").exists():
        return v2[0]
    for controller in ("pids", "memory"):
        root = base / controller
        if (root / "cgroup.procs").exists():
            return root
    raise FsarenaError(f"no cgroup hierarchy under {base} to hold a command's processes")


def create_task_cgroup(
    before: Callable[[str], None] | None = None, base: Path = CGROUP_ROOT
) -> str:
    """Make fsarena-PID-N, with no limit, to hold every process of a task; returns its directory.

    What a command leaves running (a background child, a daemon that left its session)
    stays in it, so remove_cgroup ends exactly those processes and nothing else.
    `before` is told the directory before it is made (the resource ledger's intent).
    """
    path = child_path(task_hierarchy(base))
    if before is not None:
        before(str(path))
    try:
        path.mkdir()
    except OSError as exc:
        raise FsarenaError(f"cannot make cgroup {path}: {exc}; run as root") from exc
    return str(path)


def peak_file(path: str) -> str:
    """The file holding the cgroup's peak memory use (bytes)."""
    v1 = Path(path, "memory.max_usage_in_bytes")
    return str(v1) if v1.exists() else str(Path(path, "memory.peak"))


def oom_kills(path: str, read: Callable[[str], str] | None = None) -> tuple[int, int | None] | None:
    """(out-of-memory kills, memory limit in bytes) of a memory cgroup, or None if unreadable.

    v1: memory.oom_control's `oom_kill N` (kernel 4.13+) and memory.limit_in_bytes;
    v2: memory.events' `oom_kill N` and memory.max (None where it is "max"). `read` reads
    a file (an executor's read_text, so a guest's cgroup is read inside the guest).
    """
    reader = read or (lambda p: Path(p).read_text())
    for events, limit in (
        ("memory.oom_control", "memory.limit_in_bytes"),
        ("memory.events", "memory.max"),
    ):
        try:
            counts = dict(_pairs(reader(str(Path(path, events)))))
            limit_text = reader(str(Path(path, limit))).strip()
        except (OSError, FsarenaError):
            continue
        if "oom_kill" in counts:
            return counts["oom_kill"], int(limit_text) if limit_text.isdigit() else None
    return None


def enter_argv(path: str, argv: tuple[str, ...]) -> tuple[str, ...]:
    """argv run inside the cgroup: a shell joins it, then execs argv (same process, same rusage)."""
    return ("sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', path, *argv)


def remove_cgroup(path: str, wait_s: float = 5.0) -> None:
    """Remove a cgroup fsarena made; kills what is left in it first (only its own processes)."""
    cg = Path(path)
    if not cg.name.startswith(f"{PREFIX}-") or not cg.exists():
        return
    deadline = time.monotonic() + wait_s
    while True:
        with contextlib.suppress(OSError):
            for pid in (cg / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
        try:
            cg.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if time.monotonic() > deadline:
                raise FsarenaError(f"cannot remove cgroup {cg}: {exc}") from exc
            time.sleep(0.05)


# ---------------------------------------------------------------- a server's CPU

V1_CPUACCT = "cpuacct.usage"


def cpu_hierarchy(base: Path = CGROUP_ROOT) -> tuple[Path, int] | None:
    """Where a cgroup that counts its processes' CPU is made, and its version; None: nowhere.

    v1's cpuacct hierarchy (mounted alone or co-mounted with cpu) when there is one: the
    unified hierarchy of a hybrid machine counts too, but v1 is what such a machine's
    administrator reads. Else the v2 root: every v2 cgroup but the root has cpu.stat.
    """
    candidates = [base / "cpuacct"]
    with contextlib.suppress(OSError):
        candidates += sorted(d for d in base.iterdir() if "cpuacct" in d.name.split(","))
    for root in candidates:
        if (root / V1_CPUACCT).exists():
            return root, 1
    v2 = v2_root(base)
    if v2 is not None and (v2[0] / "cgroup.procs").exists():
        return v2[0], 2
    return None


def counts_cpu(path: str) -> bool:
    """The cgroup has CPU counters of its own (v2's cpu.stat, v1's cpuacct.usage)."""
    return Path(path, "cpu.stat").exists() or Path(path, V1_CPUACCT).exists()


def create_cpu_cgroup(
    beside: str = "",
    before: Callable[[str], None] | None = None,
    base: Path = CGROUP_ROOT,
) -> str:
    """A cgroup counting the CPU of the processes that join it with `beside`; "" if none can.

    `beside` (a cgroup the processes join anyway, e.g. the server's memory cgroup) is
    returned itself when it counts CPU (cgroup v2): a process is in one cgroup of the
    unified hierarchy. Otherwise fsarena-PID-N is made in the cpuacct (v1) or unified
    hierarchy, with no limit; `before` is told its directory first (the ledger's intent).
    """
    if beside and counts_cpu(beside):
        return beside
    found = cpu_hierarchy(base)
    if found is None:
        return ""
    root, version = found
    if beside and version == 2 and Path(beside).is_relative_to(root):
        # A v2 cgroup without cpu.stat (kernel < 4.15): joining another v2 cgroup would
        # take the processes out of `beside` (and its memory limit).
        return ""
    path = child_path(root)
    if before is not None:
        before(str(path))
    try:
        path.mkdir()
    except OSError as exc:
        raise FsarenaError(f"cannot make cgroup {path}: {exc}; run as root") from exc
    return str(path)


@dataclass(frozen=True)
class CpuUsage:
    """CPU time a cgroup's processes used since it was made (exited processes included)."""

    user_s: float
    sys_s: float

    @property
    def total_s(self) -> float:
        return self.user_s + self.sys_s

    def since(self, earlier: CpuUsage) -> CpuUsage:
        return CpuUsage(self.user_s - earlier.user_s, self.sys_s - earlier.sys_s)


# cpuacct.stat counts in USER_HZ ticks; the kernel exports them at 100 per second
# whatever its own HZ (USER_HZ is 100 on every architecture Linux runs on today).
USER_HZ = 100


def cpu_usage(path: str, read: Callable[[str], str] | None = None) -> CpuUsage | None:
    """A cgroup's CPU counters, or None when it has none.

    v2: cpu.stat's user_usec and system_usec. v1: cpuacct.usage (nanoseconds, the
    scheduler's exact runtime) split into user and system in the proportion of
    cpuacct.stat (ticks, sampled). `read` reads a file (an executor's read_text, so a
    guest's cgroup is read inside the guest).
    """
    reader = read or (lambda p: Path(p).read_text())
    try:
        stat = dict(_pairs(reader(str(Path(path, "cpu.stat")))))
    except (OSError, FsarenaError):
        stat = {}
    if "user_usec" in stat and "system_usec" in stat:
        return CpuUsage(stat["user_usec"] / 1e6, stat["system_usec"] / 1e6)
    try:
        usage_ns = int(reader(str(Path(path, V1_CPUACCT))).strip())
        ticks = dict(_pairs(reader(str(Path(path, "cpuacct.stat")))))
    except (OSError, FsarenaError, ValueError):
        return None
    user, system = ticks.get("user", 0), ticks.get("system", 0)
    total_s = usage_ns / 1e9
    if user + system == 0:
        return CpuUsage(total_s, 0.0)
    return CpuUsage(total_s * user / (user + system), total_s * system / (user + system))


def _pairs(text: str) -> list[tuple[str, int]]:
    out = []
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            out.append((key, int(value)))
    return out


# ---------------------------------------------------------------- for machine profiles
# (machines/): several controllers, cgroup v1 hierarchies or the v2 unified one.

# A file each v1 hierarchy has when it carries the controller fsarena needs.
V1_MARKERS = {
    "memory": "memory.limit_in_bytes",
    "cpu": "cpu.cfs_quota_us",
    "blkio": "blkio.throttle.read_bps_device",
}


def v1_hierarchy(controller: str, base: Path = CGROUP_ROOT) -> Path | None:
    """The v1 hierarchy carrying a controller (mounted alone or co-mounted, e.g. cpu,cpuacct)."""
    marker = V1_MARKERS[controller]
    candidates = [base / controller]
    with contextlib.suppress(OSError):
        candidates += sorted(d for d in base.iterdir() if controller in d.name.split(","))
    for root in candidates:
        if (root / marker).exists():
            return root
    return None


def v2_root(base: Path = CGROUP_ROOT) -> tuple[Path, frozenset[str]] | None:
    """The unified (v2) hierarchy and the controllers its root offers; None without one."""
    for root in (base, base / "unified"):
        with contextlib.suppress(OSError):
            return root, frozenset((root / "cgroup.controllers").read_text().split())
    return None


def child_path(root: Path) -> Path:
    """A fresh name for a cgroup fsarena makes under root (fsarena-PID-N; not created)."""
    return root / f"{PREFIX}-{os.getpid()}-{next(_counter)}"


def enter_all_argv(paths: tuple[str, ...], argv: tuple[str, ...]) -> tuple[str, ...]:
    """argv run inside several cgroups (one per v1 hierarchy): a shell joins each, then execs.

    The shell becomes argv (exec: same process), so rusage and timing are argv's own.
    """
    script = (
        'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; '
        'shift; n=$((n - 1)); done; exec "$@"'
    )
    return ("sh", "-c", script, "fsarena-enter", str(len(paths)), *paths, *argv)
