"""`fsarena tune`: a filesystem's defaults beside one configuration per option, as a suite."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.filesystems.options import options_for
from fsarena.plan.model import make_plan
from fsarena.plan.suite import builtin_suites
from fsarena.plan.tuning import ALL, configuration_name, picked_options, rounds_within, sweep


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


# ---------------------------------------------------------------- the default sweep and its budget

SERVER_KINDS = ["databases", "small_synced_files", "file_serving", "random_io"]


def test_by_default_one_option_per_setting_for_the_workloads_kinds() -> None:
    """server-2026 weighs databases, mail, file serving and VM images: of btrfs's options,
    the copy-on-write setting (nodatacow, meant for three of those kinds, before chattr
    +C, meant for two) and the atime setting (lazytime; noatime is for trees and
    listings); no compression (meant for large files, trees and space)."""
    picked = picked_options(["btrfs"], None, SERVER_KINDS)
    assert [o.name for _, o in picked] == ["nodatacow", "lazytime"]
    swept = sweep("server-2026", ["btrfs"], None, None, SERVER_KINDS)
    assert swept.filesystems == ["btrfs", "btrfs-nodatacow", "btrfs-lazytime"]
    # `--options all`: the whole table, as before.
    every = sweep("server-2026", ["btrfs"], [ALL], None, SERVER_KINDS)
    assert len(every.filesystems) == 1 + len(options_for("btrfs"))
    with pytest.raises(FsarenaError, match="no option of btrfs is meant for the kinds"):
        sweep("server-2026", ["btrfs"], None, None, ["archives"])


def test_the_rounds_three_runs_of_the_defaults_hold() -> None:
    # A run of the defaults: a warm-up and 3 rounds of 1 sequence = 4; three runs: 12. The
    # sweep warms up on the defaults (1), then 3 configurations a round: 3 rounds (10).
    assert rounds_within(3, 3, 1, 3) == 3
    assert rounds_within(3, 3, 1, 2) == 5  # one option: (12 - 1) / 2
    assert rounds_within(3, 3, 1, 4) == 2  # too many for the plan's 3 rounds
    assert rounds_within(3, 3, 2, 6) == 3  # two filesystems, two options each
    assert rounds_within(3, 3, 1, 14) == 0


def _dry(tmp_path: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        main,
        ["tune", "--fs", "btrfs", "--suite", "server-2026", "--scale", "0.1", "--dry-run",
         "--workdir", str(tmp_path / "w"), "--results-dir", str(tmp_path / "r"), *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def test_the_documented_example_plans_what_three_runs_of_the_defaults_hold(
    tmp_path: Path,
) -> None:
    out = _dry(tmp_path)
    assert (
        "fsarena: options: one per setting, for the kinds of work this workload weighs "
        "(databases, small_synced_files, file_serving, random_io): nodatacow, lazytime; "
        "not swept: compress=lzo" in out
    )
    assert "fsarena: configurations: btrfs, btrfs-nodatacow, btrfs-lazytime" in out
    assert (
        "fsarena: the sweep's budget: 3 runs of the defaults alone (12 sequences), shared by "
        "3 configurations: the warm-up round on the defaults, then up to 3 rounds (1 + 3 x 3 "
        "sequences)" in out
    )
    tasks = len(builtin_suites()["server-2026"].tasks)  # a family added there adds one
    assert f"3 filesystems x {tasks} tasks x 3 repetitions" in out
    every = _dry(tmp_path, "--options", "all")
    assert "more than 3 runs of the defaults alone (12): it will take longer" in every


def test_the_estimate_counts_the_warm_up_on_the_defaults_alone(tmp_path: Path) -> None:
    """An earlier run of btrfs alone at the same scale: the sweep is its pace per sequence
    times the sequences planned (a warm-up of the defaults, then 3 configurations x 3)."""
    from fsarena.run.estimate import estimate
    from fsarena.session.file import Session, save

    results = tmp_path / "r"
    results.mkdir()
    earlier = Session(
        tool_version="t", created_at="t", status="complete",
        plan={"filesystems": ["btrfs"], "scale": 0.1, "tasks": ["mkfs"]},
        runs=[{"filesystem": "btrfs", "task": "mkfs", "repetition": 1, "started_at": "t",
               "status": "ok", "measurement": {
                   "wall_s": 1.0, "user_s": 0, "sys_s": 0, "minor_faults": 0,
                   "major_faults": 0, "max_rss_kib": 0, "device_read_bytes": 0,
                   "device_write_bytes": 0, "system_busy_s": 0, "system_iowait_s": 0,
                   "exit_code": 0}}],
        timing={"setup_s": 20.0, "rounds": [
            {"repetition": r, "warmup": False, "wall_s": 90.0, "timed_s": 80.0}
            for r in (1, 2, 3)]},
    )  # fmt: skip
    save(earlier, results / "fsarena-earlier.json")
    swept = sweep("server-2026", ["btrfs"], None, None, SERVER_KINDS)
    plan = make_plan(swept.suite, swept.filesystems, 3, 0.1, 1, str(tmp_path / "w"),
                     decisive=True, warmup_rounds=1, tune={"btrfs": swept.filesystems},
                     max_repetitions=3, time_budget_s=1800.0)  # fmt: skip
    assert plan.warmup_sequences() == ["btrfs"]
    assert plan.planned_sequences() == 10
    said = estimate(plan, results)
    assert said.startswith(
        "about 15 min for a warm-up round and 3 rounds, 10 sequences of 90 s each at the pace "
        "of btrfs alone"
    ), said  # 20 s + 10 x 90 s
    assert "no more rounds (the ceiling)" in said
    # --options all: 14 configurations, 43 sequences for the warm-up and 3 rounds (65 min),
    # past the 30 min budget, which stops it after 2 rounds (1 + 28 sequences: 44 min).
    every = sweep("server-2026", ["btrfs"], [ALL], None, SERVER_KINDS)
    plan = plan.model_copy(update={"filesystems": every.filesystems,
                                   "tune": {"btrfs": every.filesystems},
                                   "variants": make_plan(every.suite, every.filesystems, 3,
                                                         0.1, 1, "/w").variants})  # fmt: skip
    said = estimate(plan, results)
    assert said.startswith(
        "about 65 min for a warm-up round and 3 rounds, 43 sequences of 90 s each at the "
        "pace of btrfs alone (measured whole rounds, verification and set-up included), PAST "
        "the 30 min budget: the budget stops it after 2 rounds, about 44 min, too few to "
        "decide"
    ), said


def test_the_pace_after_a_warm_up_of_the_defaults_is_scaled_to_a_whole_round() -> None:
    from fsarena.run.firstrun import paced_estimate

    swept = sweep("server-2026", ["btrfs"], None, None, SERVER_KINDS)
    plan = make_plan(swept.suite, swept.filesystems, 3, 0.1, 1, "/var/tmp/x", decisive=True,
                     max_repetitions=3, time_budget_s=1800.0, tune={"btrfs": swept.filesystems},
                     warmup_rounds=1)  # fmt: skip
    said = paced_estimate(plan, 100.0, 90.0, 3, ran=1)
    assert said.startswith(
        "the warm-up round (1 of the 3 sequences a round runs) took 90 s, so about 4 min a "
        "round: at that pace the 3 planned rounds end about 15 min after the start, within "
        "the 30 min budget"
    ), said  # 100 s + 3 x 270 s; no round past the ceiling of 3
