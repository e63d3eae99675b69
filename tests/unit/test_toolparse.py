"""Parsers of tool output, against outputs captured from the real tools on this machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.tasks.portage import parse_du_total
from fsarena.tasks.synthetic import parse_bonnie_csv

TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"


def test_bonnie_csv_with_every_test_timed() -> None:
    # bonnie++ 2.00a -s 1024 -r 512 -n 64 on ext4 (loop, direct I/O), in a 512 MiB cgroup.
    v = parse_bonnie_csv((TOOLS / "bonnie-2.00a-ext4-1g.csv").read_text())
    # Throughputs are printed in KiB/s; fsarena stores MB/s.
    assert v["bonnie_seq_write_mb_s"] == pytest.approx(1307232 * 1024 / 1e6)
    assert v["bonnie_seq_write_cpu_pct"] == 57
    assert v["bonnie_rewrite_mb_s"] == pytest.approx(570539 * 1024 / 1e6)
    assert v["bonnie_seq_read_mb_s"] == pytest.approx(1564613 * 1024 / 1e6)
    assert v["bonnie_putc_mb_s"] == pytest.approx(2579 * 1024 / 1e6)
    assert v["bonnie_seq_create_per_s"] == 117235
    assert v["bonnie_seq_delete_per_s"] == 74837
    assert v["bonnie_random_create_per_s"] == 85769
    # "+++++" (too fast to time) is left out, never guessed.
    assert "bonnie_random_seeks_per_s" not in v and "bonnie_seq_stat_per_s" not in v
    assert v["bonnie_tests_too_fast"] == 3


def test_bonnie_csv_too_fast_everywhere() -> None:
    v = parse_bonnie_csv((TOOLS / "bonnie-2.00a-tiny.csv").read_text())
    assert "bonnie_seq_write_mb_s" not in v
    assert v["bonnie_putc_mb_s"] == pytest.approx(2941 * 1024 / 1e6)
    assert v["bonnie_tests_too_fast"] == 10


def test_bonnie_csv_xfs() -> None:
    v = parse_bonnie_csv((TOOLS / "bonnie-2.00a-xfs-512m.csv").read_text())
    assert v["bonnie_seq_write_mb_s"] == pytest.approx(646681 * 1024 / 1e6)
    assert v["bonnie_seq_write_cpu_pct"] == 74
    assert "bonnie_seq_read_mb_s" not in v


def test_bonnie_without_csv_is_an_error() -> None:
    with pytest.raises(FsarenaError, match="no CSV line"):
        parse_bonnie_csv("Writing intelligently...done\n")


def test_du_totals() -> None:
    # du -s -B1 [--apparent-size] of linux-source-6.1/fs/ext4 on this machine.
    assert parse_du_total((TOOLS / "du-s-B1.txt").read_text()) == 1961984
    assert parse_du_total((TOOLS / "du-s-B1-apparent.txt").read_text()) == 1845271
    with pytest.raises(FsarenaError, match="unexpected du output"):
        parse_du_total("du: cannot access 'x': No such file or directory\n")
