"""Plans, suites and filesystem profiles: validated before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.filesystems.drivers import probe
from fsarena.filesystems.profiles import PROFILES, FilesystemProfile
from fsarena.filesystems.variants import resolve
from fsarena.plan.model import make_plan
from fsarena.plan.suite import builtin_suites, load_suite, parse_suite


def test_article_a_suite_has_the_eleven_tasks_and_capacity() -> None:
    suite = builtin_suites()["article-a-2006"]
    timed = [t for t in suite.tasks if not t.startswith("capacity")]
    assert len(timed) == 11
    assert suite.tasks[0] == "mkfs" and suite.tasks[-1] == "umount"
    assert suite.repetitions == 3
    assert suite.filesystem_names == ["ext2", "ext3", "ext4", "xfs", "btrfs"]


def test_unknown_filesystem_names_the_known_ones() -> None:
    with pytest.raises(FsarenaError, match=r"unknown filesystem 'ext5'.*ext4"):
        make_plan("article-a-2006", ["ext4", "ext5"], 1, 0.01, 1, "/tmp/w")


def test_bad_numbers_name_the_option() -> None:
    with pytest.raises(FsarenaError, match="repetitions"):
        make_plan("article-a-2006", ["ext4"], 0, 0.01, 1, "/tmp/w")
    with pytest.raises(FsarenaError, match="scale"):
        make_plan("article-a-2006", ["ext4"], 1, -1.0, 1, "/tmp/w")


def test_unknown_suite() -> None:
    with pytest.raises(FsarenaError, match=r"unknown suite 'nope'.*article-a-2006"):
        load_suite("nope")


def test_suite_file_with_misspelled_key_names_it(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text('name = "mine"\nfilesystems = ["ext4"]\ntasks = ["mkfs"]\nrepetitons = 2\n')
    with pytest.raises(FsarenaError, match=r"mine.toml: repetitons: unknown key"):
        load_suite(str(path))


def test_suite_file_with_unknown_task(tmp_path: Path) -> None:
    with pytest.raises(FsarenaError, match=r"unknown task.*mkfz"):
        parse_suite('name = "x"\nfilesystems = ["ext4"]\ntasks = ["mkfz"]\n', "x.toml")


def test_malformed_toml() -> None:
    with pytest.raises(FsarenaError, match="not valid TOML"):
        parse_suite("name = ", "broken.toml")


def test_datasets_scale_and_image_fits_two_copies() -> None:
    plan = make_plan("article-a-2006", ["xfs"], 1, 0.02, 1, "/tmp/w")
    specs = plan.dataset_specs()
    assert set(specs) == {"iso", "tree"}
    assert abs(specs["tree"].total_bytes - 0.02 * 1.9e9) < 0.001 * 1.9e9
    size = plan.image_size_for(PROFILES["xfs"])
    assert size >= 2 * max(s.total_bytes for s in specs.values())
    assert size >= PROFILES["xfs"].min_size_bytes


def test_profiles_hold_mkfs_argv_and_reasons() -> None:
    ext4 = PROFILES["ext4"]
    assert "lazy_itable_init=0,lazy_journal_init=0" in ext4.mkfs_argv("/dev/loop9")
    assert ext4.mkfs_argv("/dev/loop9")[-1] == "/dev/loop9"
    assert "48 MiB" in ext4.notes
    assert ext4.mount_argv("/dev/loop9", "/mnt") == ("mount", "-t", "ext4", "/dev/loop9", "/mnt")
    assert set(PROFILES) >= {"ext2", "ext3", "ext4", "xfs", "btrfs"}


def test_probe_reports_why() -> None:
    fake = FilesystemProfile("zzfs", "zzfs", ("mkfs.zzfs", "{device}"), packages=("zzfs-tools",))
    assert not probe(fake, kernel={"ext4"}).available
    assert "kernel has no zzfs" in probe(fake, kernel={"ext4"}).reason
    missing_tool = probe(fake, kernel={"zzfs"})
    assert not missing_tool.available and "apt-get install zzfs-tools" in missing_tool.reason


def test_resolve_keeps_order_and_drops_duplicates() -> None:
    assert [p.name for p in resolve(["xfs", "ext4", "xfs"])] == ["xfs", "ext4"]
    with pytest.raises(FsarenaError, match="no filesystem selected"):
        resolve(["", " "])


def test_no_module_outside_the_profile_table_branches_on_a_filesystem_name() -> None:
    src = Path(__file__).resolve().parents[2] / "src" / "fsarena"
    names: tuple[str, ...] = (
        "ext2",
        "ext3",
        "ext4",
        "xfs",
        "btrfs",
        "jfs",
        "reiserfs",
        "vfat",
        "exfat",
    )
    names += ("ntfs", "ntfs3", "f2fs", "nilfs2", "reiser4")
    allowed = {src / "filesystems" / "profiles.py"}  # the profile table itself
    for path in src.rglob("*.py"):
        if path in allowed:
            continue
        text = path.read_text()
        for name in names:
            assert f'"{name}"' not in text and f"'{name}'" not in text, (path, name)


def test_sizes_are_parsed_in_binary_units() -> None:
    from fsarena.plan.suite import parse_size

    assert parse_size("300M") == 300 << 20
    assert parse_size("1.5GiB") == 3 << 29
    assert parse_size("4096") == 4096
    for bad in ("", "big", "-5M", "0", "3X"):
        with pytest.raises(FsarenaError, match="is not a size"):
            parse_size(bad)


def test_image_size_override_is_never_below_what_mkfs_accepts() -> None:
    plan = make_plan("article-a-2006", ["ext4", "xfs"], 1, 0.02, 1, "/tmp/w", image_size_bytes=1)
    sizes = {p.name: plan.image_size_for(p) for p in plan.profiles()}
    assert sizes == {"ext4": PROFILES["ext4"].min_size_bytes, "xfs": 300 << 20}
