"""One filesystem per driver, for real: jfs in a User-Mode Linux guest (with its ext4
reference), vfat through FUSE (fusefat), ext4 on the host kernel; and Ctrl-C in a guest."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fsarena.filesystems.drivers import choose
from fsarena.session.file import load
from tests.integration.conftest import FSARENA, REPO, fsarena, leftovers, measured, processes_using
from tests.integration.watch import saved_runs

pytestmark = pytest.mark.skipif(
    not (choose("jfs@uml").available and choose("vfat@fuse").available),
    reason="needs user-mode-linux, jfsutils, fusefat and dosfstools (scripts/setup.sh)",
)


def test_one_filesystem_per_driver(workdir: Path) -> None:
    out = workdir / "session.json"
    result = fsarena(
        "run", "--fs", "ext4,jfs,vfat@fuse", "--scale", "0.01", "-n", "1", "--seed", "2",
        "--workdir", str(workdir / "w"), "--output", str(out),
    )  # fmt: skip
    session = load(out)
    assert session.status == "complete"
    # jfs went to the guest (this kernel lacks it) and brought its reference along.
    assert set(session.filesystems()) == {"ext4", "jfs@uml", "vfat@fuse", "ext4@uml"}
    assert all(measured(r) for r in session.runs), [
        (r.filesystem, r.task, r.error) for r in session.runs if r.status != "ok"
    ]
    groups = {fs: p.group for fs, p in session.profiles_as_run.items()}
    assert groups == {
        "ext4": "kernel", "jfs@uml": "guest:uml", "ext4@uml": "guest:uml", "vfat@fuse": "fuse"
    }  # fmt: skip
    # Inside the guest, the target is its disk, and copies were verified there.
    guest_copy = next(
        r for r in session.runs if (r.filesystem, r.task) == ("jfs@uml", "tree_copy_in")
    )
    assert guest_copy.measurement is not None
    assert guest_copy.measurement.device_write_bytes >= session.datasets["tree"].total_bytes
    assert all(c.ok for c in guest_copy.checks) and guest_copy.checks
    text = result.stdout
    assert "[Guest kernel uml (User-Mode Linux): ratios to ext4@uml in the same guest]" in text
    assert "[FUSE drivers (user space, on this host)]" in text
    assert not leftovers(workdir)
    assert not processes_using(workdir)
    assert not list((workdir / "w").glob("**/*.img"))


def test_ctrl_c_in_a_guest_stops_it_and_removes_its_images(workdir: Path) -> None:
    out = workdir / "session.json"
    proc = subprocess.Popen(
        [*FSARENA, "run", "--fs", "jfs@uml", "--scale", "0.01", "-n", "2",
         "--workdir", str(workdir / "w"), "--output", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if len(saved_runs(out)) >= 4:
            break
        time.sleep(0.05)
    assert processes_using(workdir), "a guest should be running now"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert load(out).status == "interrupted"
    assert not processes_using(workdir)
    assert not leftovers(workdir)
    assert not list((workdir / "w").glob("**/*.img"))


def test_list_and_check_say_which_driver_runs_each_filesystem() -> None:
    listing = fsarena("list", "filesystems").stdout
    assert "* jfs@uml" in listing and "never merged into Linux" in listing
    assert "vfat@fuse" in listing
    check = fsarena("check", "--fs", "jfs,ntfs,reiser4", check=False).stdout
    assert "filesystem jfs: through jfs@uml (uml guest kernel)" in check
    assert "jfs: unavailable: the running kernel has no jfs" in check  # why not the others
    assert "filesystem ntfs: through ntfs@fuse (FUSE)" in check
    assert "[--  ] filesystem reiser4: listed only" in check


QEMU = choose("exfat@qemu")


@pytest.mark.skipif(
    not QEMU.available,
    reason=f"optional qemu guest not installed ({QEMU.reason}); CI covers uml, fuse and kernel",
)
def test_exfat_in_a_qemu_guest(workdir: Path) -> None:
    # A short sequence: a qemu boot with CPU emulation takes about 17 s here.
    suite = workdir / "short.toml"
    suite.write_text(
        'name = "short"\nfilesystems = ["exfat"]\n'
        'tasks = ["mkfs", "mount", "capacity_initial", "iso_copy_in", "umount"]\n'
    )
    out = workdir / "session.json"
    fsarena(
        "run", "--suite", str(suite), "--fs", "exfat@qemu", "--scale", "0.01", "-n", "1",
        "--workdir", str(workdir / "w"), "--output", str(out),
    )  # fmt: skip
    session = load(out)
    assert set(session.filesystems()) == {"exfat@qemu", "ext4@qemu"}
    assert all(measured(r) for r in session.runs), [r.error for r in session.runs]
    copy = next(r for r in session.runs if (r.filesystem, r.task) == ("exfat@qemu", "iso_copy_in"))
    assert copy.checks and all(c.ok for c in copy.checks)
    assert not processes_using(workdir)
    assert not leftovers(workdir)


def test_a_guest_serves_what_the_article_tasks_ask_of_an_executor(workdir: Path) -> None:
    # Files the host writes (a text pool of megabytes), command output and memory
    # cgroups (bonnie++), inside a real User-Mode Linux guest.
    from fsarena.guest.host import boot
    from fsarena.host.executor import GuestSpec, RealExecutor

    host = RealExecutor()
    image = str(workdir / "target.img")
    host.create_image(image, 64 << 20)
    spec = GuestSpec("uml", image, str(workdir / "run"), str(workdir))
    guest = boot(spec, host)
    try:
        data = os.urandom(3 << 20)
        guest.write_file(str(workdir / "scratch" / "pool"), data)
        digest = guest.output(("sha256sum", str(workdir / "scratch" / "pool"))).split()[0]
        assert digest == hashlib.sha256(data).hexdigest()
        assert not list((workdir / "run").glob("staged-*")), "the staged copy is removed"
        cgroup = guest.create_memory_cgroup(32 << 20)
        assert guest.read_text(f"{cgroup}/memory.max").strip() == str(32 << 20)
        guest.remove_cgroup(cgroup)
        assert not guest.exists(cgroup)
    finally:
        guest.close()
    assert not (workdir / "run").exists()
    assert not processes_using(workdir)
