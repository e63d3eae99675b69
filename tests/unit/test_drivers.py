"""Drivers as profile data: variants, capabilities, the default choice and guest references."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.filesystems import drivers
from fsarena.filesystems.profiles import PROFILES
from fsarena.filesystems.variants import Support, profile_for, split_name, variant


def test_variants_are_named_by_driver_and_keep_the_kernel_name_bare() -> None:
    assert profile_for("ext4").name == "ext4"
    assert profile_for("ext4@kernel") == profile_for("ext4")
    jfs = profile_for("jfs@uml")
    assert (jfs.name, jfs.driver, jfs.guest, jfs.base) == ("jfs@uml", "guest", "uml", "jfs")
    assert jfs.group == "guest:uml" and jfs.reference == "ext4@uml"
    assert profile_for("ntfs@fuse").group == "fuse" and profile_for("ntfs@fuse").reference == ""


def test_capabilities_come_from_the_profile_and_its_fuse_driver() -> None:
    kernel_vfat, fusefat = profile_for("vfat"), profile_for("vfat@fuse")
    # The kernel's vfat honours syncfs; fusefat ignores it, so a global sync ends its timings.
    assert kernel_vfat.sync_argv("/m") == ("sync", "-f", "/m")
    assert fusefat.sync_argv("/m") == ("sync",)
    # FAT has no Unix owners, whichever driver: tar must not try to restore them.
    assert "--no-same-owner" in fusefat.tar_extract_flags()
    assert "--no-same-permissions" in kernel_vfat.tar_extract_flags()
    assert profile_for("ext4").tar_extract_flags() == ()
    assert fusefat.mount_argv("/dev/loop3", "/m") == ("fusefat", "-o", "rw+", "/dev/loop3", "/m")


def test_profiles_as_run_record_driver_group_and_reference() -> None:
    data = profile_for("f2fs@uml").to_dict()
    assert data["driver"] == "guest" and data["group"] == "guest:uml"
    assert data["reference"] == "ext4@uml" and data["guest_modules"] == ("crc32_generic", "f2fs")


def test_bad_driver_names_say_what_exists() -> None:
    with pytest.raises(FsarenaError, match=r"unknown driver .vm..*kernel, fuse, kvm, uml, qemu"):
        split_name("jfs@vm")
    with pytest.raises(FsarenaError, match=r"exfat cannot run through the .uml..*exfat@qemu"):
        split_name("exfat@uml")
    with pytest.raises(FsarenaError, match="unknown filesystem 'zfs'"):
        split_name("zfs@fuse")


def test_every_article_filesystem_has_a_profile_and_reiser4_says_why_not() -> None:
    assert {"jfs", "reiserfs", "vfat", "exfat", "ntfs", "f2fs", "nilfs2", "tmpfs"} <= set(PROFILES)
    found = drivers.choose("reiser4")
    assert not found.available and "never merged into Linux" in found.reason
    assert drivers.drivers_of(PROFILES["reiser4"]) == []


def _pretend(monkeypatch: pytest.MonkeyPatch, available: set[str]) -> None:
    def support(profile, near=None):  # type: ignore[no-untyped-def]
        ok = profile.name in available
        return Support(profile, ok, "" if ok else f"{profile.name} missing here")

    monkeypatch.setattr(drivers, "support", support)


def test_the_first_available_driver_in_the_profile_order_is_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _pretend(monkeypatch, {"vfat@uml", "vfat@fuse"})
    assert drivers.choose("vfat").profile.name == "vfat@uml"
    assert drivers.choose("vfat@fuse").profile.name == "vfat@fuse"  # asked for explicitly
    _pretend(monkeypatch, {"vfat", "vfat@uml", "vfat@fuse"})
    assert drivers.choose("vfat").profile.name == "vfat"
    _pretend(monkeypatch, set())
    missing = drivers.choose("vfat")
    assert not missing.available
    assert "vfat@uml: vfat@uml missing here" in missing.reason


def test_every_guest_brings_its_reference_filesystem(monkeypatch: pytest.MonkeyPatch) -> None:
    _pretend(monkeypatch, {"ext4", "jfs@uml", "ext4@uml", "ntfs@fuse"})
    # f2fs has no driver here: it stays as typed, and the run records it as skipped, with why.
    names = drivers.plan_names(["ext4", "jfs", "ntfs", "f2fs"])
    assert names == ["ext4", "jfs@uml", "ntfs@fuse", "f2fs", "ext4@uml"]
    assert drivers.choose("f2fs").reason.startswith("no driver available")


def test_a_reference_named_by_the_user_is_not_doubled(monkeypatch: pytest.MonkeyPatch) -> None:
    _pretend(monkeypatch, {"jfs@uml", "ext4@uml"})
    assert drivers.plan_names(["ext4@uml", "jfs"]) == ["ext4@uml", "jfs@uml"]


def test_guest_probe_reads_the_guest_kernel_modules(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from fsarena.guest import kernels

    tree = tmp_path / "6.1.0"
    tree.mkdir()
    (tree / "modules.builtin").write_text("kernel/fs/jfs/jfs.ko\n")
    (tree / "modules.dep").write_text(
        "kernel/fs/fat/vfat.ko: kernel/fs/fat/fat.ko\nkernel/fs/nls/nls_iso8859-1.ko:\n"
    )
    uml = kernels.UmlKernel(modules_root=tmp_path)
    assert uml.lacks(("jfs", "vfat", "nls_iso8859-1", "exfat")) == ["exfat"]
    assert variant(PROFILES["vfat"], "uml").modules == ("vfat", "nls_cp437", "nls_iso8859-1")
    assert uml.lacks(variant(PROFILES["vfat"], "uml").modules) == ["nls_cp437"]


def test_a_suite_variant_runs_through_drivers_like_a_built_in(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from fsarena.plan.model import make_plan

    suite = tmp_path / "zstd.toml"
    suite.write_text(
        'name = "zstd"\ntasks = ["mkfs", "mount", "umount"]\n'
        '[filesystems.btrfs-zstd]\nbase = "btrfs"\nmount_options = ["compress=zstd"]\n'
        '[filesystems."jfs@uml"]\n'
    )
    plan = make_plan(str(suite), None, 1, 0.01, 1, str(tmp_path / "w"))
    assert plan.filesystems == ["btrfs-zstd", "jfs@uml"]
    _pretend(monkeypatch, {"btrfs-zstd@uml", "jfs@uml", "ext4@uml"})
    names = drivers.plan_names(plan.filesystems, plan.table())
    assert names == ["btrfs-zstd@uml", "jfs@uml", "ext4@uml"]
    zstd = plan.model_copy(update={"filesystems": names}).profile("btrfs-zstd@uml")
    assert (zstd.guest, zstd.mount_options, zstd.base) == ("uml", ("compress=zstd",), "btrfs-zstd")


def test_a_suite_cannot_give_options_to_a_driver_name(tmp_path: Path) -> None:
    from fsarena.plan.suite import load_suite

    suite = tmp_path / "bad.toml"
    suite.write_text(
        'name = "bad"\ntasks = ["mkfs"]\n[filesystems."jfs@uml"]\nmount_options = ["noatime"]\n'
    )
    with pytest.raises(FsarenaError, match=r"'@' picks a driver; give a variant a plain name"):
        load_suite(str(suite))
    suite.write_text('name = "bad"\ntasks = ["mkfs"]\nfilesystems = ["jfs@vm"]\n')
    with pytest.raises(FsarenaError, match="unknown driver 'vm'"):
        load_suite(str(suite))


def test_check_names_the_chosen_driver_and_why_the_others_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fsarena.run.preflight import _check_filesystem

    _pretend(monkeypatch, {"jfs@uml", "jfs@qemu"})
    found = _check_filesystem(PROFILES["jfs"], None)
    assert found.ok and found.detail.startswith("through jfs@uml (uml guest kernel)")
    assert found.more == (
        "jfs: unavailable: jfs missing here",
        "jfs@kvm: unavailable: jfs@kvm missing here",
        "jfs@qemu: also available",
    )
    # A driver named explicitly is checked alone.
    assert _check_filesystem(profile_for("jfs@qemu"), None).more == ()
    _pretend(monkeypatch, set())
    missing = _check_filesystem(PROFILES["jfs"], None)
    assert not missing.ok and "jfs@uml: jfs@uml missing here" in missing.detail


def test_guests_are_skipped_with_a_reason_on_a_real_device(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from fsarena.plan.model import make_plan
    from fsarena.run.launch import unavailable_filesystems

    _pretend(monkeypatch, {"ext4", "jfs@uml", "ext4@uml"})
    fs = drivers.plan_names(["ext4", "jfs"])
    plan = make_plan("article-a-2006", fs, 1, 0.01, 1, str(tmp_path), device="/dev/sdz9")
    assert unavailable_filesystems(plan) == {
        "jfs@uml": "runs in a uml guest kernel, on an image file: not with --device",
        "ext4@uml": "runs in a uml guest kernel, on an image file: not with --device",
    }


def test_a_guest_kernel_s_reason_is_told_once_and_referred_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fsarena.guest import boots, kernels
    from fsarena.run import preflight as system

    why = "qemu or a static busybox is missing: run scripts/setup-qemu-guest.sh"
    monkeypatch.setattr(kernels.QemuKernel, "missing", lambda self: why)  # kvm and qemu
    monkeypatch.setattr(kernels.UmlKernel, "missing", lambda self: "")
    key = boots.key_of("uml")
    boots.keep(boots.BootRecord("uml", True, "its agent answered", "2026-11-27", key))
    results = system.preflight("/nonexistent/w", 0, [PROFILES["jfs"]])
    guests = {r.name.split(" (")[0]: r for r in results if r.name.startswith("guest kernel")}
    assert guests["guest kernel kvm"].detail == f"not available: {why}"
    assert guests["guest kernel qemu"].detail == "not available: as kvm above"
    # Without boot (a run's preflight), uml is called ready by its kept boot, with its date.
    assert guests["guest kernel uml"].detail == (
        "ready: booted here on 2026-11-27: its agent answered"
    )
    jfs = next(r for r in results if r.name == "filesystem jfs")
    assert "jfs@kvm: unavailable: guest kernel kvm not available (above)" in jfs.more
    told = [line for r in results for line in (r.detail, *r.more) if why in line]
    assert told == [f"not available: {why}"]


def test_two_commands_that_start_together_boot_a_guest_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boot test holds a lock beside the kept answers: the second command waits, then
    takes the first one's answer instead of booting the same guest again beside it."""
    import threading
    import time

    import fsarena.guest.boots as boots

    calls: list[str] = []

    def slow_boot(name: str, near: str) -> boots.BootRecord:
        calls.append(name)
        time.sleep(0.3)
        record = boots.BootRecord(name, True, "stand-in", "2026-11-28T03:00:00+00:00",
                                  boots.key_of(name))  # fmt: skip
        boots.keep(record)
        return record

    monkeypatch.setattr(boots, "boot_now", slow_boot)
    answers: list[boots.BootRecord | None] = []
    threads = [
        threading.Thread(target=lambda: answers.append(boots.booted("uml", str(tmp_path))))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["uml"]
    assert len(answers) == 2 and all(a is not None and a.booted for a in answers)
