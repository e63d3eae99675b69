"""Compression told as it is: what reached the device, the ceiling rule, the report's figure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fsarena.filesystems.profiles import PROFILES
from fsarena.filesystems.variants import derive
from fsarena.report import render
from fsarena.report.compression import build, sections
from fsarena.run.space import accounts_space, judged_rate, parse_compsize, space_added
from fsarena.session.file import Session
from fsarena.session.records import DatasetRecord, DatasetSpecRecord
from tests.sessions import make_session, measurement

# compsize -b -x on a btrfs mounted with compress=zstd:-3 (this machine, 2026-11-25)
COMPSIZE = """Processed 223 files, 148 regular extents (148 refs), 73 inline.
Type       Perc     Disk Usage   Uncompressed Referenced  
TOTAL       59%     987895       1659197      1659197     
none       100%     136368       136368       136368      
zstd        55%     851527       1522829      1522829     
"""  # noqa: W291 (compsize pads its columns)

ZSTD = derive("btrfs-zstd", PROFILES["btrfs"], ["compress=zstd:1"])


def test_compsize_total_line_is_read_in_bytes() -> None:
    assert parse_compsize(COMPSIZE) == {
        "compsize_disk_bytes": 987895.0,
        "compsize_uncompressed_bytes": 1659197.0,
        "compsize_referenced_bytes": 1659197.0,
    }


def test_the_space_a_task_added_is_after_less_before() -> None:
    after = parse_compsize(COMPSIZE)
    assert space_added(after, {}) == {
        "compsize_disk_added_bytes": 987895.0,
        "compsize_uncompressed_added_bytes": 1659197.0,
    }
    assert space_added({"compsize_disk_bytes": 10.0}, {"compsize_disk_bytes": 30.0}) == {
        "compsize_disk_added_bytes": -20.0
    }


def test_space_is_accounted_on_compressing_configurations_and_their_peers() -> None:
    btrfs, ext4 = PROFILES["btrfs"], PROFILES["ext4"]
    assert accounts_space(ZSTD, [ZSTD])
    assert accounts_space(btrfs, [btrfs, ZSTD]), "the uncompressed reference"
    assert not accounts_space(btrfs, [btrfs, ext4])
    assert not accounts_space(ext4, [btrfs, ZSTD, ext4])


@pytest.mark.parametrize("direction", ["write", "read"])
def test_a_compressing_configuration_is_judged_on_its_device_bytes(direction: str) -> None:
    # 3 GB of files moved in a second while 0.1 GB reached the device: what compression buys.
    m = measurement(1.0, payload_bytes=3e9)
    if direction == "write":
        m = replace(m, device_write_bytes=100_000_000)
    else:
        m = replace(m, device_read_bytes=100_000_000)
    assert judged_rate(PROFILES["btrfs"], direction, m) == pytest.approx(3e9)
    assert judged_rate(ZSTD, direction, m) == pytest.approx(1e8)


def _sweep() -> Session:
    """tree_copy_in on four btrfs configurations, 3 repetitions each, with space figures."""
    # (time s, space added MB by compsize) per configuration; zlib is dominated by zstd:9.
    figures = {
        "btrfs": (10.0, 100.0),
        "btrfs-zstd-1": (11.0, 40.0),
        "btrfs-zstd-9": (20.0, 35.0),
        "btrfs-zlib": (25.0, 38.0),
    }
    session = make_session(
        {fs: {"tree_copy_in": [t, t * 1.01, t * 0.99]} for fs, (t, _) in figures.items()}
    )
    options = {
        "btrfs": [],
        "btrfs-zstd-1": ["compress=zstd:1"],
        "btrfs-zstd-9": ["compress=zstd:9"],
        "btrfs-zlib": ["compress=zlib"],
    }
    for fs, profile in session.profiles_as_run.items():
        profile.fstype = "btrfs"
        profile.mount_options = options[fs]
        profile.compress_options = ["compress", "compress-force"]
    for run in session.runs:
        assert run.measurement is not None
        disk = figures[run.filesystem][1] * 1e6
        run.measurement.extra.update(
            logical_write_bytes=100e6,
            compsize_disk_added_bytes=disk,
            compsize_uncompressed_added_bytes=100e6,
        )
    session.plan.task_info["tree_copy_in"].datasets = ["tree"]
    session.datasets = {
        "tree": DatasetRecord(
            spec=DatasetSpecRecord(name="tree", compressibility="compressible: text")
        )
    }
    return session


def test_the_best_trade_offs_are_the_configurations_nothing_beats_on_both() -> None:
    (figure,) = build(_sweep())
    best = {p.setting for p in figure.points if p.best}
    assert best == {"none", "compress=zstd:1", "compress=zstd:9"}  # zlib: slower and larger
    saved = {p.setting: p.saved_pct for p in figure.points}
    assert saved["none"] == pytest.approx(0) and saved["compress=zstd:1"] == pytest.approx(60)
    assert figure.data == "tree: compressible: text"


def test_no_compressing_configuration_no_figure() -> None:
    assert build(make_session({"ext4": {"tree_copy_in": [1.0, 2.0]}})) == []


def test_every_format_tells_time_against_space_and_the_data() -> None:
    session = _sweep()
    (section,) = sections(session)
    assert section.title == "Compression: tree_copy_in, time against space"
    assert any("never marked invalid" in note for note in section.notes)
    text = render(session, "text")
    assert "Compression: tree_copy_in, time against space" in text
    assert "Data: tree: compressible: text." in text
    html = render(session, "html")
    heading = "<h2>Compression: tree_copy_in, time against space</h2>"  # the document's
    assert heading in html
    picture = html.split(heading)[1]
    assert "<svg" in picture.split("</section>")[0]
    assert "compress=zstd:9" in picture  # each point is labelled with its setting
    assert "| compress=zstd:1 |" in render(session, "markdown")
