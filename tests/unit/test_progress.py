"""The run's progress lines: figures as the reports print them."""

from __future__ import annotations

from fsarena.cli.progress import describe_run
from fsarena.session.file import Run


def test_a_probe_line_prints_units_not_exponents() -> None:
    run = Run(
        filesystem="ext4",
        task="capacity_initial",
        repetition=1,
        started_at="t",
        status="ok",
        values={"available_bytes": 2.55484e9, "capacity_pct": 93.2806, "device_bytes": 2.73888e9},
    )
    line = describe_run(run)
    assert "e+" not in line
    assert "available_bytes 2.55 GB  capacity_pct 93.3 %  device_bytes 2.74 GB" in line
