"""The device's ceiling: fio's output parsed, and runs faster than the device flagged invalid."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.plan.model import make_plan
from fsarena.report import render
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load
from fsarena.targets.ceiling import Direction, ceiling_bytes, parse_fio
from tests.fakes import FIO_FIXTURES, FakeExecutor

MIB = 1 << 20


def test_parse_real_fio_output() -> None:
    rate, moved = parse_fio((FIO_FIXTURES / "seq-write-qd16.json").read_text(), "write")
    assert moved == 256 * MIB and rate == 1_516_584_497
    rate, moved = parse_fio((FIO_FIXTURES / "seq-read-qd16.json").read_text(), "read")
    assert moved == 256 * MIB and rate > 0


def test_unreadable_fio_output_says_what_to_do() -> None:
    with pytest.raises(FsarenaError, match="apt-get install fio"):
        parse_fio("fio: command not found", "write")


def test_ceiling_size_is_bounded_by_the_plan_and_the_device() -> None:
    assert ceiling_bytes(14 * MIB, 10_000 * MIB) == 256 * MIB  # fio start-up must not dominate
    assert ceiling_bytes(700 * MIB, 10_000 * MIB) == 700 * MIB  # as large as the largest file
    assert ceiling_bytes(5000 * MIB, 10_000 * MIB) == 1024 * MIB
    assert ceiling_bytes(700 * MIB, 300 * MIB) == 300 * MIB  # never beyond the device


def test_a_copy_faster_than_the_device_is_invalid_and_kept_out_of_statistics(
    tmp_path: Path,
) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 2, 0.001, 7, str(tmp_path / "w"))
    ex = FakeExecutor(wall_s=1e-6)  # 1 MiB in a microsecond: a terabyte per second
    path = tmp_path / "s.json"
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    session = load(path)
    runs = {(r.task, r.repetition): r for r in session.runs}
    copy = runs[("iso_copy_in", 1)]
    assert copy.status == "invalid"
    assert "the device's raw write ceiling" in copy.error
    assert copy.measurement is not None, "the figure is kept"
    # The sequence went on: the task did its job, only its figure is unusable.
    assert runs[("umount", 2)].status == "ok"
    text = render(session, "text")
    assert "2 invalid" in text and "cache contamination" in text


def test_plausible_copies_get_throughput_and_share_of_ceiling(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    path = tmp_path / "s.json"
    ex = FakeExecutor(wall_s=1.0)
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    session = load(path)
    copy = next(r for r in session.runs if r.task == "iso_copy_in")
    assert copy.status == "ok"
    assert copy.measurement is not None
    assert copy.measurement.extra["payload_bytes"] == session.datasets["iso"].total_bytes
    text = render(session, "text")
    assert "throughput (MB/s)" in text and "of device ceiling (%)" in text
    assert "device ceiling (fio" in text


def test_the_tolerance_is_derived_from_the_page_caches_speed() -> None:
    from fsarena.measure.metrics import CEILING_TOLERANCE, ceiling_catches, ceiling_tolerance

    assert ceiling_tolerance(None) == CEILING_TOLERANCE == 1.5  # not measured: the constant
    assert ceiling_tolerance(4.0) == pytest.approx(2.0)  # the geometric middle
    assert ceiling_tolerance(100.0) == pytest.approx(10.0)
    assert ceiling_tolerance(1.2) == 1.5 and ceiling_tolerance(2.0) == 1.5  # never below
    assert ceiling_catches(1.2) is False and ceiling_catches(2.0) is True
    assert ceiling_catches(None) is None


def _fio_rate(direction: Direction) -> float:
    return parse_fio((FIO_FIXTURES / f"seq-{direction}-qd16.json").read_text(), direction)[0]


@pytest.mark.parametrize("speedup", [4.0, 1.2])
def test_a_run_measures_its_page_cache_and_says_what_its_tolerance_catches(
    tmp_path: Path, speedup: float
) -> None:
    # Article A's tasks only write: the page cache's speed stands against the write
    # ceiling. The fake's cached read runs `speedup` x the fio read fixture.
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    path = tmp_path / "s.json"
    ex = FakeExecutor(wall_s=1.0, page_cache_speedup=speedup)
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    session = load(path)
    cached = [c for c in session.ceilings if c.kind == "cache"]
    assert len(cached) == 1 and "--direct=0" in cached[0].argv
    assert session.ceiling("read") is None  # no task reads a payload: not measured
    ratio = speedup * _fio_rate("read") / _fio_rate("write")
    assert session.page_cache_ratio("write") == pytest.approx(ratio)
    assert session.page_cache_ratio("read") is None
    text = " ".join(render(session, "text").split())
    assert f"{ratio:.1f}x its direct-I/O write ceiling" in text
    assert "read ceiling" not in text
    assert "; read not measured (no task here is judged on it)" in text
    if ratio > 1.5:
        assert session.ceiling_tolerance("write") == pytest.approx(ratio**0.5)
        assert f"write figures above {ratio**0.5:.2g}x their ceiling (the geometric" in text
    else:
        assert session.ceiling_tolerance("write") == 1.5
        assert "a write figure served from the page cache cannot be told" in text


def _article_b(tmp_path: Path, wall_s: float) -> Session:
    """Article B (it reads a file back: dd_read) on a machine like this VM: direct reads
    at 0.4x the writes' speed, the page cache at 4x the device's reads."""
    plan = make_plan("article-b-2001", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    path = tmp_path / "s.json"
    ex = FakeExecutor(wall_s=wall_s, page_cache_speedup=4.0, direct_read_scale=0.4)
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    directions = [c[4] for c in ex.calls if c[:2] == ("measure", "fio")]
    assert directions == ["--rw=write", "--rw=read"] * 2
    return load(path)


def test_each_direction_gets_its_own_tolerance(tmp_path: Path) -> None:
    session = _article_b(tmp_path, 1.0)
    cache = 4.0 * _fio_rate("read")
    for direction, rate in (("write", _fio_rate("write")), ("read", 0.4 * _fio_rate("read"))):
        assert session.ceiling(direction) == pytest.approx(rate)
        ratio = cache / rate
        assert session.page_cache_ratio(direction) == pytest.approx(ratio)
        assert session.ceiling_tolerance(direction) == pytest.approx(max(1.5, ratio**0.5))
    text = " ".join(render(session, "text").split())
    assert "its direct-I/O write ceiling and" in text and "its direct-I/O read ceiling:" in text
    said = "write figures above 2.1x their ceiling and read figures above 3.2x their ceiling"
    assert said in text


def test_a_cached_write_is_flagged_against_the_write_ceiling(tmp_path: Path) -> None:
    # dd's synced write at 4 GB/s, as if its data had stayed in memory: below the page
    # cache (6.5 GB/s) and above the write ceiling's flag (1.5 GB/s x 2.07). One tolerance
    # for both directions, the read ratio's (3.2x), put the flag at 4.8 GB/s: missed.
    payload = next(
        r.measurement.extra["payload_bytes"]
        for r in _article_b(tmp_path / "a", 1.0).runs
        if r.task == "dd_write_synced" and r.measurement is not None
    )
    session = _article_b(tmp_path / "b", payload / 4e9)
    write = session.ceiling("write")
    assert write is not None
    assert (
        write * session.ceiling_tolerance("write") < 4e9 < write * session.ceiling_tolerance("read")
    )
    run = next(r for r in session.runs if r.task == "dd_write_synced")
    assert run.status == "invalid" and "the device's raw write ceiling" in run.error
