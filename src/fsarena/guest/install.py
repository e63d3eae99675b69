"""Installing the qemu guest: qemu, a static busybox and Debian's kernel, unpacked, not installed.

The guest that boots on any x86-64 CPU: Debian's own kernel under qemu (an emulated
CPU where /dev/kvm cannot run it). Its packages come from apt; the kernel package is
downloaded and unpacked into QEMU_GUEST_DIR (the host's own kernel and /boot are
untouched), its modules indexed with depmod. Each step is said in one line with its
size, before it runs; apt's own output is kept in a log whose path a failure names.
`fsarena setup-guest` runs it, and `fsarena run` does when a filesystem needs a guest
kernel and none boots here. Idempotent: a kernel already unpacked is kept.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fsarena.errors import FsarenaError
from fsarena.guest.kernels import GUESTS, QEMU_GUEST_DIR

if TYPE_CHECKING:
    from fsarena.guest.boots import BootRecord

PACKAGES = ("qemu-system-x86", "busybox-static", "kmod")
# What a run in it costs, as measured on the project's machine (a reference, not this
# host's figure): bench/RESULTS.md, "Guest kernels side by side" (bench/guest_rounds.py).
SLOWDOWN = (
    "a round of a suite takes about 13x as long in it as on the host (reference: article A "
    "at scale 0.01 on the project's 2-core Xeon, bench/RESULTS.md; User-Mode Linux took "
    "4.5x there); the report prints the factor measured in its own run"
)
KERNEL_META = "linux-image-amd64"  # Debian's current kernel, by its meta-package


def _mb(n_bytes: int) -> str:
    return f"{n_bytes / 1e6:.0f} MB"


class _Steps:
    """Runs commands with their output appended to a log; a failure quotes the log's end."""

    def __init__(self, log: Path, say: Callable[[str], None]) -> None:
        self.log, self.say = log, say

    def run(self, argv: list[str], cwd: str | None = None) -> str:
        with self.log.open("a") as out:
            out.write(f"\n$ {' '.join(argv)}\n")
            done = subprocess.run(
                argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
            )
            out.write(done.stdout + done.stderr)
        if done.returncode != 0:
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-3:])
            raise FsarenaError(
                f"installing the qemu guest failed at `{' '.join(argv[:3])} …`: {tail} "
                f"(the whole log: {self.log}); fix that and run `fsarena setup-guest` again"
            )
        return done.stdout


def _missing_packages() -> list[str]:
    missing = []
    for pkg in PACKAGES:
        status = subprocess.run(
            ["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True, check=False
        ).stdout
        if status != "install ok installed":
            missing.append(pkg)
    return missing


def _download_bytes(uris: str) -> int:
    """The sum of the sizes apt-get --print-uris lists ('URI' FILE SIZE HASH per line)."""
    total = 0
    for line in uris.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0].startswith("'") and fields[2].isdigit():
            total += int(fields[2])
    return total


def _kernel_package(steps: _Steps) -> tuple[str, int]:
    """The kernel package linux-image-amd64 depends on, and its download size in bytes."""
    depends = steps.run(["apt-cache", "depends", KERNEL_META])
    pkg = next(
        (
            line.split()[-1]
            for line in depends.splitlines()
            if line.strip().startswith("Depends: linux-image-")
        ),
        "",
    )
    if not pkg:
        raise FsarenaError(f"apt knows no {KERNEL_META}: check /etc/apt/sources.list")
    shown = steps.run(["apt-cache", "show", "--no-all-versions", pkg])
    size = next((int(x.split()[1]) for x in shown.splitlines() if x.startswith("Size: ")), 0)
    return pkg, size


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def install_qemu_guest(say: Callable[[str], None], dest: Path = QEMU_GUEST_DIR) -> Path:
    """Install what the qemu guest needs; the directory of the kernel it will boot.

    Needs root. Says each step, with its size, before running it.
    """
    if os.geteuid() != 0:
        raise FsarenaError("installing the qemu guest needs root (apt-get, depmod): use sudo")
    dest.mkdir(parents=True, exist_ok=True)
    steps = _Steps(dest / "setup.log", say)
    missing = _missing_packages()
    if missing:
        say("updating apt's package lists")
        steps.run(["apt-get", "-o", "DPkg::Lock::Timeout=600", "update", "-q"])
        install = ["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-q"]
        install += ["--no-install-recommends", *missing]
        size = _download_bytes(steps.run([*install[: -len(missing)], "--print-uris", *missing]))
        say(f"installing {', '.join(missing)} with their dependencies ({_mb(size)} to download)")
        steps.run(install)
    pkg, size = _kernel_package(steps)
    version = pkg.removeprefix("linux-image-")
    target = dest / version
    if (target / "vmlinuz").is_file() and (
        target / "lib/modules" / version / "modules.dep"
    ).is_file():
        say(f"Debian's kernel {version} is already unpacked in {target}")
        return target
    with tempfile.TemporaryDirectory(prefix="fsarena-kernel.", dir="/var/tmp") as tmp:
        if _has_user("_apt"):  # apt-get download drops to _apt, which must write here
            shutil.chown(tmp, user="_apt")
        say(f"downloading Debian's kernel package {pkg} ({_mb(size)})")
        steps.run(["apt-get", "download", "-q", pkg], cwd=tmp)
        deb = next(Path(tmp).glob("*.deb"))
        steps.run(["dpkg-deb", "-x", str(deb), f"{tmp}/x"])
        unpacked = Path(tmp, "x")
        say(
            f"unpacking its kernel and modules into {target} ({_mb(_tree_bytes(unpacked))}; "
            "the host's own kernel and /boot are untouched)"
        )
        (target / "lib/modules").mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target / "lib/modules" / version, ignore_errors=True)
        shutil.move(str(unpacked / "lib/modules" / version), target / "lib/modules")
        steps.run(["depmod", "-b", str(target), version])
        shutil.copyfile(unpacked / "boot" / f"vmlinuz-{version}", target / "vmlinuz.tmp")
        os.replace(target / "vmlinuz.tmp", target / "vmlinuz")  # last: marks it complete
    if why := GUESTS["qemu"].missing():
        raise FsarenaError(f"the qemu guest is still not usable after its setup: {why}")
    return target


def install_and_boot(near: str, say: Callable[[str], None]) -> BootRecord:
    """Install the qemu guest, then boot it once here (beside `near`) and say how it went."""
    from fsarena.guest.boots import boot_now

    install_qemu_guest(say)
    say("booting it once to check that it runs here")
    record = boot_now("qemu", near)
    if record.booted:
        say(f"the qemu guest is ready: {record.detail}; {SLOWDOWN}")
    return record


def _has_user(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
