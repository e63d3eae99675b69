"""The guest kernels fsarena can boot, as data: how to find, probe and launch each.

- uml: User-Mode Linux (Debian's `user-mode-linux`), the lightest: a Linux
  kernel that runs as a host process, boots in about three seconds and sees the
  host's root read-only through hostfs. It emulates every system call. Debian 12's
  UML (6.1) cannot boot on CPUs with AMX without fsarena's XSAVE shim
  (native/umlxstate.c, preloaded into it: the cause is written there).
- kvm / qemu: Debian's own kernel (6.1) under qemu, with the host's root over
  9p; it has what UML lacks (exfat). `kvm` uses hardware virtualisation, where
  /dev/kvm can run a stock kernel; `qemu` emulates the CPU (TCG), boots in about
  17 seconds here and is the slowest. Both need `fsarena setup-guest` (guest.install),
  which `fsarena run` runs itself when a filesystem needs a guest and none boots.

Times inside a guest are only comparable with times inside the same guest.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fsarena.guest import initramfs
from fsarena.measure.native import find_native_tool

UML_MODULES = Path("/usr/lib/uml/modules")
QEMU_GUEST_DIR = Path(os.environ.get("FSARENA_QEMU_GUEST_DIR", "/var/cache/fsarena/qemu-guest"))
SETUP_QEMU = "`fsarena setup-guest` (qemu-system-x86, busybox-static, Debian's kernel)"
# Where a guest's memory file lives (TMPDIR of the guest's process): memory, not the host
# disk that holds the target images, whose page cache and writeback it would disturb.
MEMORY_DIR = "/dev/shm"


def _free_mib(path: str) -> int:
    try:
        st = os.statvfs(path)
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize >> 20


def module_name(path_or_name: str) -> str:
    """A module's canonical name: "kernel/fs/nls/nls_iso8859-1.ko" -> "nls_iso8859_1"."""
    return Path(path_or_name).name.removesuffix(".ko").replace("-", "_")


def _names(lines: Iterable[str]) -> set[str]:
    return {module_name(line.strip()) for line in lines if line.strip()}


@dataclass(frozen=True)
class GuestDisk:
    """An image file attached to a guest."""

    image: str
    read_only: bool = False


@dataclass
class Launch:
    """How to start one guest: argv, fds it inherits, and how to reach its agent once started."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    connect: Callable[[float], tuple[int, int]] = field(default=lambda timeout_s: (-1, -1))
    env: dict[str, str] = field(default_factory=dict)  # added to the environment it starts in


def _file_identity(path: str | Path | None) -> str:
    """A file's path, size and modification time: what changes when it is rebuilt or upgraded."""
    if path is None:
        return "none"
    try:
        st = os.stat(path)
    except OSError:
        return f"{path}: absent"
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


class _ModuleTree:
    """What a guest kernel can mount: its built-in modules and the loadable ones."""

    def modules_dir(self) -> Path | None:
        raise NotImplementedError

    def release(self) -> str:
        """The kernel's release ("6.1.176"): its module tree is named so; "" when none."""
        root = self.modules_dir()
        return root.name if root is not None else ""

    def lacks(self, modules: tuple[str, ...]) -> list[str]:
        """The modules, of those named, that this kernel neither has built in nor can load."""
        root = self.modules_dir()
        if root is None:
            return list(modules)
        builtin = _names((root / "modules.builtin").read_text().splitlines())
        loadable = _names(line.split(":", 1)[0] for line in (root / "modules.dep").open())
        return [m for m in modules if module_name(m) not in builtin | loadable]


@dataclass(frozen=True)
class UmlKernel(_ModuleTree):
    """User-Mode Linux: the host's root through hostfs, disks as ubd devices."""

    name: str = "uml"
    binary: str = "linux.uml"
    package: str = "user-mode-linux"
    modules_root: Path = UML_MODULES
    mem_mib: int = 1024
    agent_tty: str = "/dev/ttyS0"
    label: str = "User-Mode Linux"
    shim: str = "umlxstate.so"  # native/umlxstate.c, preloaded into the kernel's process

    def build(self) -> str:
        """What identifies this guest's build here: its binary, modules and preloaded shim."""
        parts = (shutil.which(self.binary), self.modules_dir(), find_native_tool(self.shim))
        return " ".join(_file_identity(p) for p in parts)

    def missing(self) -> str:
        """Why this guest cannot boot here ("" if it can)."""
        if shutil.which(self.binary) is None:
            return f"{self.binary} not found: apt-get install {self.package}"
        if self.modules_dir() is None:
            return f"no module tree under {self.modules_root}: reinstall {self.package}"
        if (free := _free_mib(MEMORY_DIR)) < self.mem_mib:
            # A smaller tmpfs (a container's 64 MiB) would kill the guest with SIGBUS mid-run.
            return (
                f"{MEMORY_DIR} has {free} MiB free, less than the guest's {self.mem_mib} MiB "
                f"of memory: enlarge it (mount -o remount,size=2G {MEMORY_DIR})"
            )
        return ""

    def modules_dir(self) -> Path | None:
        found = sorted(p for p in self.modules_root.glob("*") if (p / "modules.dep").is_file())
        return found[-1] if found else None

    def device(self, index: int) -> str:
        return f"/dev/ubd{chr(ord('a') + index)}"

    def launch(self, disks: tuple[GuestDisk, ...], init: str, run_dir: Path) -> Launch:
        """Host root read-only, the disks, and the agent's serial line on a pair of pipes."""
        to_guest_r, to_guest_w = os.pipe()
        from_guest_r, from_guest_w = os.pipe()
        argv = [
            self.binary,
            f"mem={self.mem_mib}M",
            "root=/dev/root",
            "rootfstype=hostfs",
            "rootflags=/",
            "ro",
            f"init={init}",
            "con=null",
            "con0=fd:0,fd:1",  # kernel messages: the console log
            "ssl=null",
            f"ssl0=fd:{to_guest_r},fd:{from_guest_w}",  # the agent's line (/dev/ttyS0)
            f"uml_dir={run_dir}",  # its pid file and mconsole socket, removed with run_dir
            f"umid=fsarena-{run_dir.name}",
            "quiet",
        ]
        argv += [f"ubd{i}{'r' if d.read_only else ''}={d.image}" for i, d in enumerate(disks)]

        def connect(timeout_s: float) -> tuple[int, int]:
            os.close(to_guest_r)  # the guest's ends, now inherited by it
            os.close(from_guest_w)
            return from_guest_r, to_guest_w

        shim = find_native_tool(self.shim)
        env = {"LD_PRELOAD": shim} if shim else {}
        return Launch(argv, (to_guest_r, from_guest_w), connect, env)


def _static(path: Path) -> bool:
    """Whether an ELF executable needs no dynamic loader (no PT_INTERP program header)."""
    try:
        data = path.read_bytes()[:4096]
    except OSError:
        return False
    if data[:4] != b"\x7fELF" or data[4] != 2:  # 64-bit only
        return False
    phoff = int.from_bytes(data[32:40], "little")
    size, count = int.from_bytes(data[54:56], "little"), int.from_bytes(data[56:58], "little")
    kinds = [
        int.from_bytes(data[phoff + i * size : phoff + i * size + 4], "little")
        for i in range(count)
    ]
    return 3 not in kinds  # PT_INTERP


@dataclass(frozen=True)
class QemuKernel(_ModuleTree):
    """Debian's kernel under qemu: an initramfs mounts the host's root over 9p."""

    name: str = "qemu"
    accel: str = "tcg"  # "kvm": hardware virtualisation
    binary: str = "qemu-system-x86_64"
    busybox: Path = Path("/bin/busybox")
    guest_dir: Path = QEMU_GUEST_DIR
    mem_mib: int = 1024
    agent_tty: str = "/dev/ttyS1"

    @property
    def label(self) -> str:
        return "KVM" if self.accel == "kvm" else "qemu (TCG, an emulated CPU)"

    def build(self) -> str:
        """What identifies this guest's build here: qemu, the busybox and Debian's kernel."""
        kernel = self.kernel_dir()
        parts = (shutil.which(self.binary), self.busybox, kernel / "vmlinuz" if kernel else None)
        return f"accel={self.accel} " + " ".join(_file_identity(p) for p in parts)

    def kernel_dir(self) -> Path | None:
        """The newest kernel unpacked by `fsarena setup-guest` (VERSION/vmlinuz)."""
        found = sorted(p for p in self.guest_dir.glob("*") if (p / "vmlinuz").is_file())
        return found[-1] if found else None

    def modules_dir(self) -> Path | None:
        kernel = self.kernel_dir()
        tree = kernel / "lib/modules" / kernel.name if kernel else None
        return tree if tree and (tree / "modules.dep").is_file() else None

    def missing(self) -> str:
        if shutil.which(self.binary) is None or not _static(self.busybox):
            return f"qemu or a static busybox is missing: run {SETUP_QEMU}"
        if self.modules_dir() is None:
            return f"no guest kernel in {self.guest_dir}: run {SETUP_QEMU}"
        if self.accel == "kvm":
            return _kvm_missing()
        return ""

    def device(self, index: int) -> str:
        return f"/dev/vd{chr(ord('a') + index)}"

    def launch(self, disks: tuple[GuestDisk, ...], init: str, run_dir: Path) -> Launch:
        kernel, modules = self.kernel_dir(), self.modules_dir()
        assert kernel is not None and modules is not None, "probe with missing() first"
        initrd = run_dir / "initrd.cpio"
        initramfs.write(initrd, self.busybox, modules, init)
        sock = run_dir / "agent.sock"
        argv = [
            self.binary, "-accel", self.accel, "-m", str(self.mem_mib), "-smp", "1",
            # Every CPU feature it can offer: numpy (verification) needs x86-64-v2.
            "-cpu", "host" if self.accel == "kvm" else "max",
            "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
            "-kernel", str(kernel / "vmlinuz"), "-initrd", str(initrd),
            "-append", "console=ttyS0 quiet panic=-1",
            "-chardev", f"file,id=console,path={run_dir / 'console.log'}",
            "-serial", "chardev:console",
            "-chardev", f"socket,id=agent,path={sock},server=on,wait=off",
            "-serial", "chardev:agent",  # the agent's line (/dev/ttyS1)
            "-fsdev", "local,id=root,path=/,security_model=passthrough,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=root,mount_tag=hostroot",
        ]  # fmt: skip
        for d in disks:
            # cache=none: O_DIRECT on the host, so the host's page cache holds none of it.
            ro = ",readonly=on" if d.read_only else ""
            argv += ["-drive", f"file={d.image},format=raw,if=virtio,cache=none{ro}"]

        def connect(timeout_s: float) -> tuple[int, int]:
            deadline = time.monotonic() + timeout_s
            while True:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    conn.connect(str(sock))
                except OSError:
                    conn.close()
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.02)
                    continue
                fd = conn.detach()
                return fd, os.dup(fd)

        return Launch(argv, (), connect)


def _kvm_missing() -> str:
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "no usable /dev/kvm (no hardware virtualisation here)"
    if Path("/sys/module/kvm_pvm").exists():
        return "/dev/kvm is KVM-PVM, which cannot run a stock kernel"
    return ""


# Every guest kernel. Profiles name them in their order of preference.
GUESTS: dict[str, UmlKernel | QemuKernel] = {
    k.name: k for k in (UmlKernel(), QemuKernel("kvm", accel="kvm"), QemuKernel())
}
