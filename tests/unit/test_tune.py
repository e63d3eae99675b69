"""`fsarena tune`: a filesystem's defaults beside one configuration per option, as a suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.filesystems.options import options_for
from fsarena.plan.model import make_plan
from fsarena.plan.tuning import configuration_name, sweep


def test_every_option_becomes_a_variant_beside_the_defaults() -> None:
    swept = sweep("server-2026", ["btrfs"], None)
    assert swept.filesystems[0] == "btrfs"
    assert len(swept.filesystems) == 1 + len(options_for("btrfs"))
    assert swept.left_out == []
    plan = make_plan(swept.suite, swept.filesystems, 1, 0.1, 1, "/var/tmp/x")
    zstd = plan.profile("btrfs-compress-zstd-1")
    assert zstd.fstype == "btrfs" and "compress=zstd:1" in zstd.mount_options
    assert zstd.compresses and not plan.profile("btrfs").compresses
    assert plan.profile("btrfs").mount_options == ()
    # The per-directory setting is a configuration too: same mount, +C on the data directory.
    nocow = plan.profile("btrfs-chattr-C")
    assert nocow.mount_options == () and nocow.data_dir_attributes == ("+C",)


def test_an_option_the_table_lacks_is_the_users_mount_option() -> None:
    swept = sweep("quick", ["btrfs"], ["compress=zstd:-10", "compress=zstd:1"])
    assert swept.filesystems == ["btrfs", "btrfs-compress-zstd-1", "btrfs-compress-zstd-minus10"]
    plan = make_plan(swept.suite, swept.filesystems, 1, 0.02, 1, "/var/tmp/x")
    assert plan.profile("btrfs-compress-zstd-minus10").mount_options == ("compress=zstd:-10",)
    assert swept.options["btrfs-compress-zstd-minus10"].group == "user"


def test_zstds_negative_level_is_not_its_positive_one() -> None:
    by_name = {o.name: o for o in options_for("btrfs")}
    minus = configuration_name("btrfs", by_name["compress=zstd:-3"])
    assert minus == "btrfs-compress-zstd-minus3"
    assert minus != configuration_name("btrfs", by_name["compress=zstd:3"])


def test_picked_options_only_and_unknown_ones_refused() -> None:
    swept = sweep("server-2026", ["btrfs", "ext4"], ["nodatacow", "fast_commit"])
    assert swept.filesystems == ["btrfs", "btrfs-nodatacow", "ext4", "ext4-fast-commit"]
    with pytest.raises(FsarenaError, match="not in the options table"):
        sweep("server-2026", ["xfs"], ["nodatacow"])


def test_tune_dry_run_plans_every_configuration(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "tune", "--fs", "ext4", "--suite", "server-2026", "--scale", "0.1",
            "--options", "fast_commit,noatime", "--dry-run",
            "--workdir", str(tmp_path / "w"), "--results-dir", str(tmp_path / "r"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "3 filesystems x" in result.output
    assert "mkfs.ext4" in result.output and "-O fast_commit" in result.output
    assert "-o noatime" in result.output


def test_tune_needs_the_filesystems_to_sweep(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["tune", "--dry-run", "--workdir", str(tmp_path)])
    assert result.exit_code == 2 and "--fs" in result.output


def test_an_option_the_probe_refused_is_left_out_and_said() -> None:
    why = "`mount -t btrfs -o compress=zstd:-10 …` failed: bad option"
    swept = sweep(
        "quick", ["btrfs"], ["compress=zstd:1", "compress=zstd:-10"],
        {("btrfs", "compress=zstd:-10"): why},
    )  # fmt: skip
    assert swept.filesystems == ["btrfs", "btrfs-compress-zstd-1"]
    assert swept.left_out == [f"btrfs compress=zstd:-10: unavailable here: {why}"]
    with pytest.raises(FsarenaError, match="no option to sweep; btrfs compress=zstd:-10"):
        sweep("quick", ["btrfs"], ["compress=zstd:-10"], {("btrfs", "compress=zstd:-10"): why})
