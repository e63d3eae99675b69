"""The options table (filesystems/options.toml): every row complete, sourced and usable."""

from __future__ import annotations

import re

from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.filesystems.options import ANY_FS, configuration, options_for, table
from fsarena.filesystems.profiles import PROFILES
from fsarena.kinds import KINDS


def test_every_option_names_known_kinds_a_version_and_a_source() -> None:
    for o in table():
        assert o.fs == ANY_FS or o.fs in PROFILES
        assert o.kinds and all(k in KINDS for k in o.kinds), o.name
        assert re.fullmatch(r"\d+\.\d+(\.\d+)?", o.since), o.name
        assert o.source and o.trades and o.group
        assert o.mount or o.mkfs or o.directory, f"{o.name} sets nothing"


def test_a_configuration_adds_the_options_to_the_profile() -> None:
    by_name = {o.name: o for o in options_for("btrfs")}
    zstd = configuration("btrfs", by_name["compress=zstd:1"])
    assert zstd.name == "btrfs+compress=zstd:1"
    assert zstd.fstype == "btrfs" and zstd.mount_options[-1] == "compress=zstd:1"
    fast = configuration("ext4", next(o for o in options_for("ext4") if o.name == "fast_commit"))
    at = fast.mkfs.index("{device}")
    assert fast.mkfs[at - 2 : at] == ("-O", "fast_commit")
    assert fast.mount_options == PROFILES["ext4"].mount_options


def test_vfs_options_apply_to_every_filesystem_after_its_own() -> None:
    names = [o.name for o in options_for("xfs")]
    assert names[-2:] == ["noatime", "lazytime"]
    assert "compress=zstd:1" not in names


def test_btrfs_compression_covers_every_algorithm_and_zstds_negative_levels() -> None:
    compression = [o for o in options_for("btrfs") if o.group == "compression"]
    algorithms = {o.mount[0].split("=")[1].split(":")[0] for o in compression}
    assert {"lzo", "zlib", "zstd"} <= algorithms
    assert any(":-" in o.mount[0] and o.since == "6.15" for o in compression)


def test_list_options_shows_each_option_and_refuses_an_unknown_filesystem() -> None:
    runner = CliRunner()
    shown = runner.invoke(main, ["list", "options", "--fs", "btrfs"])
    assert shown.exit_code == 0
    assert "compress=zstd:-3 [compression]: mount -o compress=zstd:-3; since Linux 6.15" in (
        shown.output
    )
    assert "chattr +C on the data directory" in shown.output
    bad = runner.invoke(main, ["list", "options", "--fs", "nosuch"])
    assert bad.exit_code == 2 and bad.output.startswith("fsarena: error: unknown filesystem")
