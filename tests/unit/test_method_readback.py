"""What the report says about its method is read back from the runs (analysis/method.py).

Configuration values and flush counts are shown, never ranked; the loop images'
direct I/O and the durability line say what the runs read, and sessions recorded
before the read-back say so instead of asserting direct I/O.
"""

from __future__ import annotations

from dataclasses import replace

from fsarena.analysis.evidence import Index, rank_task
from fsarena.analysis.method import durability, loop_io
from fsarena.measure.collect import Measurement
from fsarena.measure.metrics import METRICS
from fsarena.session.file import Session
from tests.sessions import make_session

CONFIGURATION = (
    "pg_database_bytes",
    "sqlite_databases",
    "dbench_clients",
    "pgbench_scale_factor",
    "fio_direct",
    "device_flushes",
    "loop_direct_io",
)


def _with(session: Session, **fields: int | float | None) -> Session:
    for run in session.runs:
        if run.measurement is not None:
            run.measurement = replace(run.measurement, **fields)  # type: ignore[arg-type]
    return session


def _session() -> Session:
    return make_session({"ext4": {"iso_copy_in": [1.0, 1.1]}, "xfs": {"iso_copy_in": [2.0, 2.1]}})


def test_configuration_values_and_flushes_are_never_ranked() -> None:
    session = _session()
    for run in session.runs:
        if run.measurement is not None:
            fs_value = 1.0 if run.filesystem == "ext4" else 9.0
            extra = {name: fs_value for name in CONFIGURATION}
            run.measurement = replace(run.measurement, extra={**run.measurement.extra, **extra})
    index = Index(session)
    for name in CONFIGURATION:
        assert not METRICS[name].ranked
        assert rank_task(index, "iso_copy_in", name) is None, name
    assert rank_task(index, "iso_copy_in", "wall_s") is not None


def test_old_sessions_read_as_not_read_back() -> None:
    session = _session()
    assert loop_io(session) == "loop images (direct I/O asked, not read back)"
    assert durability(session) == "writes timed through syncfs"
    # A measurement saved before the counters existed loads with them unknown, not 0.
    old = {k: v for k, v in _session().runs[0].measurement.to_dict().items()}  # type: ignore[union-attr]
    for name in ("device_flushes", "loop_direct_io", "loop_allocated_pct"):
        old.pop(name)
    assert Measurement.from_dict(old).device_flushes is None


def test_direct_buffered_and_flushes_are_said_as_read() -> None:
    direct = _with(_session(), loop_direct_io=1, loop_allocated_pct=100.0, device_flushes=3)
    assert loop_io(direct) == "loop images (direct I/O, at least 100 % of each image allocated)"
    assert "3 device flushes per run, median" in durability(direct)
    buffered = _with(_session(), loop_direct_io=1)
    buffered.runs[0].measurement = replace(buffered.runs[0].measurement, loop_direct_io=0)  # type: ignore[type-var]
    said = loop_io(buffered)
    assert said.startswith("loop images (buffered") and "1 of 4 runs" in said


def test_fixed_time_rates_average_arithmetically_and_cpu_is_per_unit_of_work() -> None:
    from fsarena.tasks.base import cpu_per_unit
    from tests.sessions import measurement

    for rate in ("pgbench_tps", "fio_iops", "fio_iops_buffered", "dbench_mb_s"):
        assert METRICS[rate].mean == "arithmetic", rate
    m = measurement(10.0, cpu_share=0.4)  # 4 s of CPU in 10 s
    assert cpu_per_unit(m, 2000, 1e3) == 2.0  # ms per transaction
    assert cpu_per_unit(m, 0, 1e3) is None
