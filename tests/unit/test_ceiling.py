"""The device's ceiling: fio's output parsed, and runs faster than the device flagged invalid."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.plan.model import make_plan
from fsarena.report import render
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import load
from fsarena.targets.ceiling import ceiling_bytes, parse_fio
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
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs").run()
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
    Runner(plan, FakeExecutor(wall_s=1.0), new_session(plan, {}, {}), path, "tmpfs").run()
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


@pytest.mark.parametrize("speedup", [4.0, 1.2])
def test_a_run_measures_its_page_cache_and_says_what_its_tolerance_catches(
    tmp_path: Path, speedup: float
) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    path = tmp_path / "s.json"
    ex = FakeExecutor(wall_s=1.0, page_cache_speedup=speedup)
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs").run()
    session = load(path)
    cached = [c for c in session.ceilings if c.kind == "cache"]
    assert len(cached) == 1 and "--direct=0" in cached[0].argv
    device = session.ceiling("read")  # the direct-I/O ceiling, the cached read left out
    assert device is not None and device < cached[0].bytes_per_s
    assert session.page_cache_ratio() == pytest.approx(speedup)
    text = " ".join(render(session, "text").split())
    assert f"{speedup:.1f}x its direct-I/O read ceiling" in text
    if speedup == 4.0:
        assert session.ceiling_tolerance() == pytest.approx(2.0)
        assert "figures above 2x this ceiling (the geometric middle" in text
    else:
        assert session.ceiling_tolerance() == 1.5
        assert "cannot be told from one that reached the device" in text
