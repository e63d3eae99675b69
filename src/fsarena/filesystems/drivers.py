"""Which driver runs each filesystem here: probing kernel, FUSE and guest drivers, and choosing.

A profile lists the drivers that can run it, best first (profiles.py); the
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
from fsarena.filesystems.profiles import DRIVER_KINDS, PROFILES, FilesystemProfile
from fsarena.filesystems.variants import Support, profile_for, split_name, variant
from fsarena.guest.boots import booted
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


def guest_unavailable(name: str, near: str | None = None) -> str:
    """Why a guest kernel can run nothing here ("" when it has booted here).

    Its software first, then whether it boots: the answer kept from an earlier boot
    (guest.boots), else a boot now beside `near` (a directory; None: never boot here).
    """
    if why := GUESTS[name].missing():
        return why
    record = booted(name, near)
    if record is None:
        return "has not been booted here yet: `fsarena check` boots it (as root)"
    return "" if record.booted else f"does not boot here: {record.detail}"


def probe_guest(profile: FilesystemProfile, near: str | None = None) -> Support:
    """Guest: the guest kernel boots here and has (or can load) the filesystem's modules."""
    kernel = GUESTS[profile.guest]
    if why := guest_unavailable(profile.guest, near):
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
    guest = found.profile.guest
    if found.profile.driver == "guest" and found.reason == guest_unavailable(guest):
        return f"unavailable: guest kernel {guest} not available (above)"
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


def support(profile: FilesystemProfile, near: str | None = None) -> Support:
    """Whether this concrete profile (one driver) can run here, and if not, why.

    near: a directory beside which a guest kernel not yet known to boot here is booted
    to find out (None: only what earlier boots found counts).
    """
    if profile.never:
        return Support(profile, False, profile.never)
    if profile.driver == "guest":
        return probe_guest(profile, near)
    return probe_fuse(profile) if profile.driver == "fuse" else probe(profile)


def drivers_of(base: FilesystemProfile, near: str | None = None) -> list[Support]:
    """Every driver of a profile, in its order of preference (lightest first), probed."""
    return [support(variant(base, d), near) for d in base.drivers]


def choose(
    name: str, table: Mapping[str, FilesystemProfile] = PROFILES, near: str | None = None
) -> Support:
    """The profile to run for a user's name: the driver named, or the best available.

    table: the profiles names may refer to (a plan's, with its suite's variants);
    near: where a guest kernel may be booted to learn whether it boots (see support).
    """
    base, driver = split_name(name, table)
    if base.never:
        return Support(base, False, base.never)
    if driver is not None:
        return support(variant(base, driver), near)
    tried = drivers_of(base, near)
    for found in tried:
        if found.available:
            return found
    reasons = "; ".join(f"{s.profile.name}: {s.reason}" for s in tried)
    return Support(variant(base, base.drivers[0]), False, f"no driver available ({reasons})")


def runs_in(profile: FilesystemProfile) -> str:
    """Where a concrete profile runs, in words: "the host kernel", "FUSE (ntfs-3g)",
    "User-Mode Linux (jfs@uml)"."""
    if profile.driver == "guest":
        return f"{GUESTS[profile.guest].label} ({profile.name})"
    if profile.driver == "fuse":
        return f"FUSE ({profile.name})"
    return "the host kernel"


def why_chosen(name: str, table: Mapping[str, FilesystemProfile] = PROFILES) -> str:
    """Why a name typed without a driver runs where it does: each driver passed over, and
    why ("" when it is the first of its profile's drivers, or was named)."""
    base, driver = split_name(name.strip(), table)
    if driver is not None or base.never:
        return ""
    tried = drivers_of(base)  # after plan_names: every guest's boot is kept by now
    chosen = next((i for i, s in enumerate(tried) if s.available), 0)
    if chosen == 0:
        return ""
    passed = "; ".join(f"{s.profile.name}: {s.reason}" for s in tried[:chosen])
    return f"{base.name} runs in {runs_in(tried[chosen].profile)}, not: {passed}"


def refuse_unbootable(names: Iterable[str], table: Mapping[str, FilesystemProfile]) -> None:
    """A guest driver named explicitly whose guest kernel cannot run here is refused, with the
    drivers of the same filesystem that would run it (FsarenaError), before anything is made."""
    for name in (n.strip() for n in names if n.strip()):
        base, driver = split_name(name, table)
        if driver is None or DRIVER_KINDS[driver] != "guest":
            continue
        why = guest_unavailable(driver)
        if not why:
            continue
        working = [s.profile.name for s in drivers_of(base) if s.available]
        instead = (
            f"--fs {' or --fs '.join(working)} would run it"
            if working
            else f"no driver of {base.name} runs here (`fsarena check --fs {base.name}`)"
        )
        raise FsarenaError(
            f"{name} cannot run here: {GUESTS[driver].label} ({driver}) {why}; "
            f"{instead} (or --fs {base.name} lets fsarena choose)"
        )


def wanting_a_guest(names: Iterable[str], table: Mapping[str, FilesystemProfile]) -> list[str]:
    """The names typed without a driver that no driver runs here, though the qemu guest,
    not installed, would: what installing it (guest.install) makes runnable."""
    wanting = []
    for name in (n.strip() for n in names if n.strip()):
        base, driver = split_name(name, table)
        if driver is None and "qemu" in base.drivers and not choose(name, table).available:
            wanting.append(name)
    return wanting if GUESTS["qemu"].missing() else []


def plan_names(
    names: Iterable[str],
    table: Mapping[str, FilesystemProfile] = PROFILES,
    near: str | None = None,
) -> list[str]:
    """The filesystems a plan runs: each name with its driver chosen, and each guest's reference.

    A name no driver can run here stays as typed, so that the run records it as
    skipped with choose()'s reason. Guest times measure the emulator too, so
    every guest kernel used also runs REFERENCE_FILESYSTEM@guest in the same plan.
    """
    chosen: list[str] = []
    for name in (n.strip() for n in names):
        found = choose(name, table, near)
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
