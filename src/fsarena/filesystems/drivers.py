"""Which driver runs each filesystem here: probing kernel, FUSE and guest drivers, and choosing.

A profile lists the drivers that can run it, best first (filesystems.py); the
first one available on this host is the default, and `NAME@DRIVER` picks one
explicitly. Every probe says why a driver is unavailable and what fixes it.

Default order, and why:
1. kernel: the host's own driver at native speed, the code users run; absolute
   numbers, ranked with every other native filesystem.
2. a guest kernel, lightest first: kvm (hardware virtualisation, near native,
   where /dev/kvm can run a stock kernel), uml (User-Mode Linux, boots in ~3 s),
   qemu (CPU emulation, ~17 s; bench/guest_overhead.py): the same in-kernel code,
   so only the ratio to the reference filesystem in the same guest means anything.
3. fuse: native speed, but another implementation (user space, its own caching
   and sync behaviour), so results describe that program.
A profile puts fuse before the guests where its FUSE driver is what users
commonly mount it with (ntfs-3g); the table says so beside the profile.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import PROFILES, FilesystemProfile
from fsarena.filesystems.variants import Support, profile_for, split_name, variant
from fsarena.guest.kernels import GUESTS


def _tool_missing(tool: str, packages: Iterable[str]) -> str:
    if shutil.which(tool) is not None:
        return ""
    return f"{tool} not found: apt-get install {' '.join(packages) or tool}"


def probe_fuse(profile: FilesystemProfile) -> Support:
    """FUSE: the kernel's fuse support, /dev/fuse, the driver program and the mkfs tool."""
    if not profile.mount_command:
        return Support(profile, False, "no FUSE implementation is known for it")
    if "fuse" not in kernel_filesystems() or not Path("/dev/fuse").exists():
        return Support(profile, False, "the running kernel has no FUSE (/dev/fuse)")
    tool = profile.mount_command[0]
    package = profile.fuse.package if profile.fuse else tool
    why = _tool_missing(tool, [package]) or _tool_missing(profile.mkfs_tool, profile.packages)
    return Support(profile, not why, why)


def probe_guest(profile: FilesystemProfile) -> Support:
    """Guest: the guest kernel boots here and has (or can load) the filesystem's modules."""
    kernel = GUESTS[profile.guest]
    if why := kernel.missing():
        return Support(profile, False, why)
    if lacking := kernel.lacks(profile.modules):
        return Support(
            profile, False, f"the {kernel.name} guest kernel has no {', '.join(lacking)}"
        )
    # The guest runs the host's tools, through its read-only view of the host's root.
    why = _tool_missing(profile.mkfs_tool, profile.packages)
    return Support(profile, not why, why)


def unavailable(found: Support) -> str:
    """ "unavailable: why", a guest kernel's own reason (told once, above) referred to."""
    if found.profile.driver == "guest" and found.reason == GUESTS[found.profile.guest].missing():
        return f"unavailable: guest kernel {found.profile.guest} not available (above)"
    return f"unavailable: {found.reason}"


# Probing the host kernel's own driver (kept here, beside the other drivers' probes,
# so that the profile table stays data).
def kernel_filesystems(proc_filesystems: Path = Path("/proc/filesystems")) -> set[str]:
    """Filesystem types the running kernel has (built in or already loaded)."""
    try:
        lines = proc_filesystems.read_text().splitlines()
    except OSError:
        return set()
    return {line.split()[-1] for line in lines if line.strip()}


def _try_load_module(fstype: str) -> bool:
    """Ask the kernel for the filesystem the way mount would: modprobe, if there is one."""
    modprobe = shutil.which("modprobe")
    if modprobe is None:
        return False
    result = subprocess.run(
        [modprobe, "-q", fstype], stdin=subprocess.DEVNULL, capture_output=True, check=False
    )
    return result.returncode == 0


def probe(profile: FilesystemProfile, kernel: set[str] | None = None) -> Support:
    """Probe by trying: the kernel must list the type (after a modprobe), the mkfs tool must run.

    Profiles of other drivers (FUSE, guests) are probed by `support` below.
    """
    if profile.never:
        return Support(profile, False, profile.never)
    if profile.driver != "kernel":
        return support(profile)
    have = kernel if kernel is not None else kernel_filesystems()
    if profile.fstype not in have and not (
        kernel is None
        and _try_load_module(profile.fstype)
        and profile.fstype in kernel_filesystems()
    ):
        return Support(
            profile,
            False,
            f"the running kernel has no {profile.fstype} (not in /proc/filesystems, "
            "and no module could be loaded)",
        )
    if shutil.which(profile.mkfs_tool) is None:
        pkgs = " ".join(profile.packages) or profile.mkfs_tool
        return Support(profile, False, f"{profile.mkfs_tool} not found: apt-get install {pkgs}")
    return Support(profile, True)


PROBES = {"kernel": probe, "fuse": probe_fuse, "guest": probe_guest}


def support(profile: FilesystemProfile) -> Support:
    """Whether this concrete profile (one driver) can run here, and if not, why."""
    if profile.never:
        return Support(profile, False, profile.never)
    return PROBES[profile.driver](profile)


def drivers_of(base: FilesystemProfile) -> list[Support]:
    """Every driver of a profile, in its order of preference, probed."""
    return [support(variant(base, d)) for d in base.drivers]


def choose(name: str, table: Mapping[str, FilesystemProfile] = PROFILES) -> Support:
    """The profile to run for a user's name: the driver named, or the best available.

    table: the profiles names may refer to (a plan's, with its suite's variants).
    """
    base, driver = split_name(name, table)
    if base.never:
        return Support(base, False, base.never)
    if driver is not None:
        return support(variant(base, driver))
    tried = drivers_of(base)
    for found in tried:
        if found.available:
            return found
    reasons = "; ".join(f"{s.profile.name}: {s.reason}" for s in tried)
    return Support(variant(base, base.drivers[0]), False, f"no driver available ({reasons})")


def plan_names(
    names: Iterable[str], table: Mapping[str, FilesystemProfile] = PROFILES
) -> list[str]:
    """The filesystems a plan runs: each name with its driver chosen, and each guest's reference.

    A name no driver can run here stays as typed, so that the run records it as
    skipped with choose()'s reason. Guest times measure the emulator too, so
    every guest kernel used also runs REFERENCE_FILESYSTEM@guest in the same plan.
    """
    chosen: list[str] = []
    for name in (n.strip() for n in names):
        found = choose(name, table)
        concrete = found.profile.name if found.available else name
        if name and concrete not in chosen:
            chosen.append(concrete)
    for name in list(chosen):
        reference = profile_for(
            name, table
        ).reference  # "" for names left as typed (kernel variant)
        if reference and reference not in chosen:
            chosen.append(reference)
    return chosen


__all__ = ["FsarenaError", "choose", "drivers_of", "plan_names", "support"]
