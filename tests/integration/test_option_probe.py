"""Options tried before the run, chattr +C applied, compression recorded: on real btrfs.

- The probe (run.optionprobe) tries each option on a small loop image through the
  ledger: the table's zstd level is available, a made-up mount option is refused
  with the kernel's own words, `chattr +C` holds; nothing is left behind.
- `fsarena tune` with a made-up option in --options: the probe leaves it out and
  says why, the run goes on without it, the session keeps the reason.
- The per-directory configuration: the sqlite task's data directory gets +C before
  its databases are made, read back with lsattr and recorded with the run; the
  defaults' directory has no C.
- A compressing configuration records logical bytes against device bytes and
  compsize's figures; its uncompressed peer records them too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fsarena.filesystems.options import options_for, user_option
from fsarena.host.executor import RealExecutor
from fsarena.host.ledger import Ledger
from fsarena.run.optionprobe import probe_options

from .conftest import fsarena

BOGUS = "fsarena_no_such_option"


def test_probe_tries_each_option_and_says_why_one_is_refused(workdir: Path) -> None:
    table = {o.name: o for o in options_for("btrfs")}
    wanted = [
        ("btrfs", table["compress=zstd:1"]),
        ("btrfs", user_option("btrfs", BOGUS)),
        ("btrfs", table["chattr +C"]),
    ]
    ledger = Ledger(str(workdir))
    found = probe_options(RealExecutor(ledger=ledger), str(workdir), wanted)
    by_name = {p.option: p for p in found}
    assert by_name["compress=zstd:1"].available
    assert by_name["chattr +C"].available
    refused = by_name[BOGUS]
    assert not refused.available and refused.step == "mount"
    # mount's own line, and what the kernel logged about the option
    assert "failed" in refused.reason and BOGUS in refused.reason
    assert ledger.entries() == []  # image, loop device and mount all undone


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "tiny.toml"
    suite.write_text(
        'name = "tiny"\narticle = "test"\ndescription = "test"\nrepetitions = 1\n'
        'tasks = ["kernel_tar_copy", "sqlite_commit_wal_1", "umount"]\n'
        '[datasets.kernel]\norigin = "generated"\n'
    )
    return suite


def test_tune_leaves_a_refused_option_out_and_applies_chattr(workdir: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    out = fsarena(
        "tune", "--fs", "btrfs", "--suite", str(_suite(tmp_path)), "--scale", "0.01",
        "--options", f"chattr +C,compress=zstd:1,{BOGUS}", "-n", "1", "--no-warmup",
        "--workdir", str(workdir), "--results-dir", str(results), "--format", "text",
    )  # fmt: skip
    assert f"btrfs {BOGUS}: unavailable here (mount refused it)" in out.stderr
    assert f"not swept: btrfs {BOGUS}: unavailable here" in out.stderr
    (path,) = results.glob("fsarena-*.json")
    session = json.loads(path.read_text())
    assert session["plan"]["filesystems"] == ["btrfs", "btrfs-compress-zstd-1", "btrfs-chattr-C"]
    warned = [w["message"] for w in session["warnings"] if w["code"] == "option_unavailable"]
    assert len(warned) == 1 and BOGUS in warned[0]

    runs = {(r["filesystem"], r["task"]): r for r in session["runs"]}
    nocow = runs[("btrfs-chattr-C", "sqlite_commit_wal_1")]
    assert nocow["status"] == "ok", nocow["error"]
    (flags,) = nocow["details"]["data_dir_attributes"].values()
    assert "C" in flags
    assert "data_dir_attributes" not in runs[("btrfs", "sqlite_commit_wal_1")]["details"]

    # Compression told as it is: the compressing copy and its uncompressed peer.
    for fs in ("btrfs", "btrfs-compress-zstd-1"):
        extra = runs[(fs, "kernel_tar_copy")]["measurement"]["extra"]
        assert extra["logical_write_bytes"] > 0 and extra["device_per_logical"] > 0
        assert extra["compsize_disk_bytes"] > 0
        assert extra["compsize_disk_added_bytes"] == extra["compsize_disk_bytes"]
    zstd = runs[("btrfs-compress-zstd-1", "kernel_tar_copy")]["measurement"]["extra"]
    plain = runs[("btrfs", "kernel_tar_copy")]["measurement"]["extra"]
    assert zstd["compsize_disk_bytes"] < plain["compsize_disk_bytes"]  # text-like data
    assert "Compression: kernel_tar_copy, time against space" in out.stdout
    assert "compressible: generated text-like files" in out.stdout
    # The tune's answer: the space compsize counted, beside the time, against the defaults.
    flat = " ".join(out.stdout.split())
    found = re.search(r"btrfs-compress-zstd-1: [^;]*; (\d+) % less space \(([\d.,]+) MB "
                      r"against ([\d.,]+) MB, compsize\)", flat)  # fmt: skip
    assert found, flat[flat.find("Tuning") :][:1500]
    saved = 100 * (1 - zstd["compsize_disk_added_bytes"] / plain["compsize_disk_added_bytes"])
    assert int(found.group(1)) == pytest.approx(saved, abs=1)
