"""Guest kernels as data: how each is probed and launched (nothing booted here)."""

from __future__ import annotations

import os
from pathlib import Path

from fsarena.guest import initramfs
from fsarena.guest.kernels import GuestDisk, QemuKernel, UmlKernel


def _read_cpio(data: bytes) -> dict[str, bytes]:
    """name -> content of a newc archive."""
    files: dict[str, bytes] = {}
    at = 0
    while True:
        head = data[at : at + 110]
        size, name_len = int(head[54:62], 16), int(head[94:102], 16)
        name = data[at + 110 : at + 110 + name_len - 1].decode()
        start = at + 110 + name_len
        start += -start % 4
        if name == "TRAILER!!!":
            return files
        files[name] = data[start : start + size]
        at = start + size + (-size % 4)


def _fake_kernel_tree(root: Path) -> Path:
    tree = root / "6.1.0-9-amd64" / "lib/modules/6.1.0-9-amd64"
    for name in initramfs.ROOT_MODULES:
        (tree / "kernel").mkdir(parents=True, exist_ok=True)
        (tree / "kernel" / f"{name}.ko").write_bytes(name.encode())
    deps = "".join(f"kernel/{n}.ko:\n" for n in initramfs.ROOT_MODULES)
    (tree / "modules.dep").write_text(deps + "kernel/fs/exfat/exfat.ko:\n")
    (tree / "modules.builtin").write_text("")
    (root / "6.1.0-9-amd64" / "vmlinuz").write_bytes(b"kernel")
    return tree


def test_initramfs_holds_busybox_the_root_modules_and_an_init(tmp_path: Path) -> None:
    tree = _fake_kernel_tree(tmp_path)
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"\x7fELF-static")
    out = tmp_path / "initrd.cpio"
    initramfs.write(out, busybox, tree, "/work/run/init")
    files = _read_cpio(out.read_bytes())
    assert files["bin/busybox"] == b"\x7fELF-static"
    assert {f"modules/{n}.ko" for n in initramfs.ROOT_MODULES} <= set(files)
    init = files["init"].decode()
    assert "mount -t 9p -o trans=virtio,version=9p2000.L,ro" in init
    assert init.rstrip().endswith("switch_root /newroot /work/run/init")
    assert init.index("insmod") < init.index("mount -t 9p")
    assert len(out.read_bytes()) % 512 == 0


def test_qemu_says_what_to_run_when_its_kernel_is_missing(tmp_path: Path) -> None:
    qemu = QemuKernel(guest_dir=tmp_path / "none", busybox=Path("/bin/sh"))
    assert "`fsarena setup-guest`" in qemu.missing()


def test_qemu_launch_attaches_disks_without_host_caching(tmp_path: Path) -> None:
    _fake_kernel_tree(tmp_path)
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"x")
    qemu = QemuKernel(guest_dir=tmp_path, busybox=busybox)
    assert qemu.lacks(("exfat", "ntfs3")) == ["ntfs3"]
    run = tmp_path / "run"
    run.mkdir()
    disks = (GuestDisk("/w/t.img"), GuestDisk("/w/s.img", read_only=True))
    launch = qemu.launch(disks, "/w/init", run)
    argv = " ".join(launch.argv)
    assert "file=/w/t.img,format=raw,if=virtio,cache=none " in argv + " "
    assert "file=/w/s.img,format=raw,if=virtio,cache=none,readonly=on" in argv
    assert "-accel tcg" in argv and "-cpu max" in argv and "readonly=on,multidevs=remap" in argv
    assert (run / "initrd.cpio").exists()
    assert qemu.device(1) == "/dev/vdb"


def test_uml_launch_hands_the_guest_its_ends_of_the_agent_line(tmp_path: Path) -> None:
    launch = UmlKernel().launch(
        (GuestDisk("/w/t.img"), GuestDisk("/w/s.img", True)), "/i", tmp_path
    )
    assert "ubd0=/w/t.img" in launch.argv and "ubd1r=/w/s.img" in launch.argv
    r, w = launch.pass_fds
    assert f"ssl0=fd:{r},fd:{w}" in launch.argv
    host_read, host_write = launch.connect(1.0)  # closes the guest's ends in this process
    for fd in (r, w):
        try:
            os.fstat(fd)
            raise AssertionError(f"fd {fd} still open")
        except OSError:
            pass
    os.close(host_read)
    os.close(host_write)
