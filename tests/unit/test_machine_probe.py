"""The probe's verdict on a machine profile, and how reports show the machine beside the host."""

from __future__ import annotations

from typing import Any

import pytest

from fsarena.machines.probe import MIB, misses, probe_bytes
from fsarena.plan.machines import Limits, builtin_machines, limits_for
from fsarena.report import render
from fsarena.report.machine_section import machine_lines
from fsarena.session.records import MachineRecord
from tests.sessions import make_session

LIMITS = Limits(512 * MIB, 0.232, 21 * MIB, 20 * MIB, None, None)


def _probe(read: float, write: float, share: float, peak: int) -> dict[str, Any]:
    disk = [
        {"direction": d, "bytes_per_s": r * MIB, "repetition": 0, "size_bytes": 1, "argv": []}
        for d, r in (("write", write), ("read", read)) * 2
    ]
    return {
        "at": "2026-01-01T00:00:00+00:00",
        "disk": disk,
        "cpu": {"wall_s": 2.0, "cpu_s": 2.0 * share, "share_cores": share},
        "memory": {"written_bytes": 768 * MIB, "peak_bytes": peak, "limit_bytes": 512 * MIB},
    }


def test_a_profile_in_force_has_no_misses() -> None:
    assert misses(_probe(21.3, 20.3, 0.226, 413 * MIB), LIMITS) == []


@pytest.mark.parametrize(
    ("probe", "words"),
    [
        (_probe(21, 30, 0.23, 400 * MIB), "writes at 30 MiB/s, +50% off the profile's 20 MiB/s"),
        (_probe(15, 20, 0.23, 400 * MIB), "slower than the profile"),
        (_probe(21, 20, 0.15, 400 * MIB), "the host is busy"),
        (_probe(21, 20, 0.9, 400 * MIB), "the CPU quota is not in force"),
        (_probe(21, 20, 0.23, 700 * MIB), "memory is not capped"),
    ],
)
def test_a_figure_more_than_ten_percent_off_is_named(probe: dict[str, Any], words: str) -> None:
    (miss,) = misses(probe, LIMITS)
    assert words in miss


def test_a_failed_memory_probe_is_a_miss() -> None:
    probe = _probe(21, 20, 0.23, 0)
    probe["memory"]["written_bytes"] = 0
    assert misses(probe, LIMITS) == [
        "the memory probe (dd into the page cache) failed: the cap is unproven"
    ]


def test_the_probe_lasts_seconds_at_the_slower_limit() -> None:
    assert probe_bytes(LIMITS) == 80 * MIB  # 4 s at 20 MiB/s
    fast = Limits(None, None, 4000 * MIB, None, None, None)
    assert probe_bytes(fast) == 1024 * MIB


def _machine_session() -> Any:
    session = make_session({"ext4": {"iso_copy_in": [10.0, 11.0]}})
    profile = builtin_machines()["2006-fileserver"]
    limits = limits_for(profile, 2300.0, 2)
    session.machine = MachineRecord.model_validate(
        {
            "profile": profile.model_dump(mode="json"),
            "backend": "cgroup v1",
            "host_cpu_mhz": 2300.0,
            "limits": limits.to_dict(),
            "probes": [{**_probe(21.3, 20.3, 0.226, 413 * MIB), "misses": []}],
        }
    )
    return session


def test_reports_show_the_machine_next_to_the_host() -> None:
    lines = machine_lines(_machine_session())
    assert lines[0].startswith("emulated machine 2006-fileserver: 512 MiB RAM, a 533 MHz CPU")
    assert "CPU 0.232 of a core (2317 us per 10000 us)" in lines[0]
    assert "disk write 20.30 MiB/s (fio, n=2)" in lines[1]
    assert "peaked at 413 MiB (limit 512 MiB): all within 10 % of the profile" in lines[1]
    text = render(_machine_session(), "text")
    host_at = text.index("GiB RAM")
    assert host_at < text.index("emulated machine") < text.index("target:")


def test_html_and_json_carry_the_machine_with_its_sources() -> None:
    html = render(_machine_session(), "html")
    assert "Emulated machine" in html and "Intel Celeron 533" in html
    assert '"backend": "cgroup v1"' in render(_machine_session(), "json")


def test_a_session_without_a_machine_shows_none() -> None:
    session = make_session({"ext4": {"iso_copy_in": [10.0, 11.0]}})
    assert machine_lines(session) == []
    assert "Emulated machine" not in render(session, "html")
