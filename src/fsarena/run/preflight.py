"""Host facts, tool versions and preflight checks (what `fsarena check` shows)."""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from fsarena import build_identity
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.filesystems.variants import Support, split_name
from fsarena.tasks.base import Task, Tool

# What every sequence runs, whatever its tasks: copies, listings, deletions, mounts, loop
# devices. A task's own tools are declared on it (Task.tools) and read from there.
BASE_TOOLS = (
    *(Tool(name, "coreutils") for name in ("cp", "rm", "ls", "sync")),
    Tool("find", "findutils"),
    *(Tool(name, "mount") for name in ("mount", "umount", "losetup")),
)
# How a mkfs tool tells its version where --version is not it (the rest: --version).
MKFS_VERSION_ARGV: dict[str, tuple[str, ...]] = {
    "mkfs.ext2": ("-V",),
    "mkfs.ext3": ("-V",),
    "mkfs.ext4": ("-V",),
    "mkfs.xfs": ("-V",),
}


def _output(argv: list[str], both: bool) -> str | None:
    """What the command prints: stdout, else stderr (both: all of it); None if it cannot run."""
    try:
        out = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout + out.stderr if both else (out.stdout or out.stderr)


def tool_version(tool: Tool) -> str:
    """The first line a tool prints about its version, asked the way the tool declares."""
    if shutil.which(tool.name) is None:
        return "not found"
    if tool.version_argv is None:
        return "not reported"
    # A marked version line may be anywhere (bonnie++'s usage text ends with it).
    text = _output([tool.name, *tool.version_argv], both=bool(tool.version_marker))
    if text is None:
        return "not found"
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    if tool.version_marker:
        lines = [x for x in lines if tool.version_marker in x]
    return lines[0] if lines else "unknown"


def tools_of(profiles: Iterable[FilesystemProfile], tasks: Iterable[type[Task]]) -> list[Tool]:
    """The base tools, the tasks' own (Task.tools), each filesystem's mkfs, and the space tool
    of a compressing one, once each."""
    found = {tool.name: tool for tool in BASE_TOOLS}
    for task in tasks:
        found.update((t.name, t) for t in task.tools if t.name not in found)
    for p in sorted(profiles, key=lambda p: p.mkfs_tool):
        argv = MKFS_VERSION_ARGV.get(p.mkfs_tool, ("--version",))
        found.setdefault(p.mkfs_tool, Tool(p.mkfs_tool, ", ".join(p.packages), argv))
        if p.compresses and p.space_usage:  # run/space.py: compsize after writing tasks
            tool = p.space_usage[0]  # compsize prints no version
            found.setdefault(tool, Tool(tool, p.space_usage_package, None))
    return list(found.values())


def tool_versions(
    profiles: Iterable[FilesystemProfile], tasks: Iterable[type[Task]] = ()
) -> dict[str, str]:
    """The version of every tool a run of these tasks on these filesystems uses."""
    return {tool.name: tool_version(tool) for tool in tools_of(profiles, tasks)}


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_bytes() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


def _backing_device(path: str) -> dict[str, str]:
    """The filesystem and device holding the work directory (where loop images live)."""
    out = subprocess.run(
        ["findmnt", "-n", "-o", "SOURCE,FSTYPE,TARGET", "-T", path],
        capture_output=True,
        text=True,
        check=False,
    )
    parts = out.stdout.split()
    if len(parts) < 3:
        return {}
    found = {"device": parts[0], "fstype": parts[1], "mountpoint": parts[2]}
    return {**found, **_queue_facts(parts[0])}


def _queue_facts(device: str) -> dict[str, str]:
    """The I/O scheduler and model of a block device (a partition: of its disk), if known.

    Facts that explain why two hosts disagree (fleet report); absent when not a block device.
    """
    node = Path("/sys/class/block", Path(device).name)
    if not node.exists():
        return {}
    node = node.resolve()
    if (node / "partition").exists():
        node = node.parent
    facts = {}
    try:
        words = (node / "queue" / "scheduler").read_text().split()
        facts["scheduler"] = next((w[1:-1] for w in words if w.startswith("[")), " ".join(words))
    except OSError:
        pass
    # virtio disks have no model (their vendor file holds a PCI id, not a name)
    with contextlib.suppress(OSError):
        facts["model"] = (node / "device" / "model").read_text().strip()
    return facts


def _machine_id() -> str:
    """/etc/machine-id: tells cloned hosts apart in a fleet ("" when the host has none)."""
    try:
        return Path("/etc/machine-id").read_text().strip()
    except OSError:
        return ""


def host_facts(workdir: str) -> dict[str, object]:
    uname = os.uname()
    return {
        "hostname": uname.nodename,
        "machine_id": _machine_id(),
        "kernel": uname.release,
        "kernel_build": uname.version,
        "machine": uname.machine,
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count() or 0,
        "mem_total_bytes": _mem_total_bytes(),
        "python": platform.python_version(),
        "workdir": workdir,
        "workdir_backing": _backing_device(existing_parent(workdir)),
        # Which fsarena measured (commit, or digest of its files): a fleet merges one only.
        "fsarena_build": build_identity(),
    }


def existing_parent(path: str) -> str:
    p = Path(path).absolute()
    while not p.exists():
        p = p.parent
    return str(p)


@dataclass(frozen=True)
class CheckResult:
    """One preflight finding; `fix` says what to run when it failed."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    info: bool = False  # nothing to fix: shown for information (e.g. a filesystem never merged)
    more: tuple[str, ...] = ()  # further lines of detail (a filesystem's other drivers)


def _check_root() -> CheckResult:
    ok = os.geteuid() == 0
    return CheckResult(
        "running as root",
        ok,
        "yes" if ok else f"uid {os.geteuid()}",
        "" if ok else "run fsarena as root (sudo ./fsarena ...): mkfs, mount and losetup need it",
    )


def _check_loop() -> CheckResult:
    ok = Path("/dev/loop-control").exists()
    return CheckResult(
        "loop devices",
        ok,
        "/dev/loop-control present" if ok else "/dev/loop-control missing",
        "" if ok else "modprobe loop (or use a kernel with CONFIG_BLK_DEV_LOOP)",
    )


def _check_drop_caches() -> CheckResult:
    ok = os.access("/proc/sys/vm/drop_caches", os.W_OK)
    return CheckResult(
        "can drop caches",
        ok,
        "/proc/sys/vm/drop_caches writable" if ok else "not writable",
        "" if ok else "run as root on the host (not in an unprivileged container)",
    )


def _check_tools() -> CheckResult:
    missing = [t for t in (*(t.name for t in BASE_TOOLS), "findmnt") if shutil.which(t) is None]
    return CheckResult(
        "base tools",
        not missing,
        "all found" if not missing else "missing: " + ", ".join(missing),
        "" if not missing else "apt-get install coreutils findutils util-linux mount",
    )


def _check_util_linux() -> CheckResult:
    """The tools whose JSON output the device guard and cleanup read."""
    missing = [t for t in ("lsblk", "findmnt", "losetup", "wipefs", "blkid") if not shutil.which(t)]
    return CheckResult(
        "util-linux tools (device guard, cleanup)",
        not missing,
        "all found" if not missing else "missing: " + ", ".join(missing),
        "" if not missing else "apt-get install util-linux mount",
    )


def _check_workdir(workdir: str, need_bytes: int) -> CheckResult:
    parent = existing_parent(workdir)
    st = os.statvfs(parent)
    if st.f_flag & os.ST_RDONLY:  # as the results directory is checked (check_results_dir)
        return CheckResult(
            "work directory",
            False,
            f"{workdir} is not writable (read-only filesystem at {parent})",
            "give a writable --workdir",
        )
    free = st.f_bavail * st.f_frsize
    ok = free >= need_bytes
    detail = f"{workdir}: {free / 1e9:.1f} GB free, about {need_bytes / 1e9:.1f} GB needed"
    return CheckResult(
        "work directory space",
        ok,
        detail,
        "" if ok else "free space there, choose another --workdir, or use a smaller --scale",
    )


# Reference sizes (not measured in the run): the most per run among fsarena's own
# sessions in tests/fixtures (session-v3.json: 45,176 B for 52 runs), the store's
# growth per run (full-v2.json imported into an empty SQLite store: 294,912 B for 280
# runs) and the largest HTML report with its charts (three-filesystems.json: 412,462 B
# and 893,724 B). A save writes the new file beside the old before replacing it.
SESSION_BYTES_PER_RUN = 900
STORE_BYTES_PER_RUN = 1_100
REPORT_BYTES = 1_310_000


def results_bytes(runs: int) -> int:
    """Room a session of this many runs needs in its directory: two copies, store, reports."""
    return runs * (2 * SESSION_BYTES_PER_RUN + STORE_BYTES_PER_RUN) + REPORT_BYTES


def check_results_dir(directory: str, runs: int, probe: bool) -> CheckResult:
    """Whether the session and its reports can be saved there, as the work directory is checked.

    probe: make the directory and write a file in it (a real run); without, only ask
    the kernel (`--dry-run` touches nothing). Each failure names its fix.
    """
    name = "results directory"
    where = Path(directory).absolute()
    found = Path(existing_parent(str(where)))
    if not found.is_dir():
        what = "is a file" if found == where else f"cannot be made: {found} is a file"
        return CheckResult(name, False, f"{where} {what}", "give a directory as --results-dir")
    if not os.access(found, os.W_OK | os.X_OK):
        why = "read-only filesystem" if _read_only(found) else "no write permission"
        which = f"{where} is" if found == where else f"{where}: {found} is"
        return CheckResult(name, False, f"{which} not writable ({why})", _OTHER_RESULTS_DIR)
    if probe:
        try:
            _try_writing(where)
        except OSError as exc:
            return CheckResult(
                name, False, f"{where}: cannot write there: {exc.strerror}", _OTHER_RESULTS_DIR
            )
    st = os.statvfs(found)
    free, need = st.f_bavail * st.f_frsize, results_bytes(runs)
    detail = (
        f"{where}: {_size(free)} free, about {_size(need)} needed for up to {runs} "
        f"run{'s' if runs != 1 else ''}, the reports and the store (reference sizes)"
    )
    fix = "" if free >= need else "free space there, or give another --results-dir or --output"
    return CheckResult(name, free >= need, detail, fix)


_OTHER_RESULTS_DIR = "give a writable --results-dir (or --output)"


def _try_writing(where: Path) -> None:
    """Make the directory and a file in it, then undo what was made: a run refused after
    this check (a full work directory) leaves no empty results directory behind; the
    session's first save makes it again."""
    made = [d for d in (where, *where.parents) if not d.exists()]
    try:
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=where):
            pass
    finally:
        for directory in made:  # deepest first
            with contextlib.suppress(OSError):
                directory.rmdir()


def _size(n: int) -> str:
    return f"{n / 1e9:.1f} GB" if n >= 1e9 else f"{n / 1e6:.1f} MB"


def _read_only(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


CHECKS: tuple[Callable[[], CheckResult], ...] = (
    _check_root,
    _check_loop,
    _check_drop_caches,
    _check_tools,
    _check_util_linux,
)


def preflight(
    workdir: str,
    need_bytes: int,
    profiles: Iterable[FilesystemProfile],
    boot: bool = False,
    again: Iterable[str] = (),
    guests: Iterable[str] | None = None,
) -> list[CheckResult]:
    """Every requirement, each with what fixes it.

    boot: boot each guest kernel not yet known to boot here (guest.boots keeps the
    answer); again: the guests to boot even so (`check --fs NAME` retests its guests);
    guests: the guest kernels to check (None: every one; a run's: those it uses).
    """
    results = [check() for check in CHECKS]
    results.append(_check_workdir(workdir, need_bytes))
    told: dict[str, str] = {}  # a guest's reason -> the first guest it was told for
    near = existing_parent(workdir) if boot else None
    for name in _guest_names() if guests is None else guests:
        results.append(_check_guest(name, near, name in set(again), told))
    results.extend(_check_filesystem(profile, near) for profile in profiles)
    return results


def _guest_names() -> list[str]:
    from fsarena.guest.kernels import GUESTS

    return list(GUESTS)


def _check_guest(name: str, near: str | None, again: bool, told: dict[str, str]) -> CheckResult:
    """A guest kernel is optional: whether it boots here, and if not why and what fixes it.

    Its boot is the one kept from an earlier check or run (with its date), else one now
    (near: where to boot it; None: only what is kept). A missing-software reason
    already told for another guest refers to it rather than repeat it.
    """
    from fsarena.guest.boots import booted
    from fsarena.guest.kernels import GUESTS

    kernel = GUESTS[name]
    title = f"guest kernel {name} ({kernel.label})"
    if why := kernel.missing():
        said = f"as {told[why]} above" if why in told else why
        told.setdefault(why, name)
        return CheckResult(title, True, f"not available: {said}", info=True)
    record = booted(name, near, again)
    if record is None:
        why = "booting it needs root" if near else "`fsarena check` boots it"
        return CheckResult(title, True, f"not verified here yet: {why}", info=True)
    if record.booted:
        return CheckResult(title, True, f"ready: {record.said()}")
    return CheckResult(title, False, f"not available: {record.said()}", _guest_fix(name))


def _guest_fix(name: str) -> str:
    """What to do about a guest kernel that does not boot here: the guests that do, or how
    to install the one that runs on any x86-64 CPU."""
    from fsarena.guest.boots import kept

    working = [n for n in _guest_names() if n != name and (r := kept(n)) and r.booted]
    if working:
        return (
            f"nothing to do: filesystems that need a guest kernel run in {' or '.join(working)} "
            f"instead (name one with NAME@DRIVER); read the {name} guest's console above"
        )
    return (
        "`fsarena setup-guest` installs the qemu guest (Debian's kernel under an emulated CPU), "
        "which boots on any x86-64 CPU; `fsarena run` installs it itself when a filesystem "
        "needs it"
    )


def _check_filesystem(profile: FilesystemProfile, near: str | None) -> CheckResult:
    """Whether a filesystem is reachable, through which driver, and why its others are not."""
    from fsarena.filesystems.drivers import choose, drivers_of

    name = f"filesystem {profile.name}"
    if profile.never:
        return CheckResult(name, True, f"listed only, not runnable: {profile.never}", info=True)
    found = choose(profile.name, near=near)
    if not found.available:  # its reason names every driver tried
        fix = found.reason.rsplit(": ", 1)[-1].rstrip(")")
        return CheckResult(name, False, found.reason, fix)
    chosen = found.profile
    base, named = split_name(profile.name)
    others = () if named else _other_drivers(drivers_of(base, near), chosen.name)
    detail = f"through {chosen.name} ({chosen.driver_label}), {chosen.mkfs_tool}"
    return CheckResult(name, True, detail, more=others)


def _other_drivers(tried: list[Support], chosen: str) -> tuple[str, ...]:
    """One line per driver not chosen: available too, or why not."""
    from fsarena.filesystems.drivers import unavailable

    return tuple(
        f"{s.profile.name}: " + ("also available" if s.available else unavailable(s))
        for s in tried
        if s.profile.name != chosen
    )
