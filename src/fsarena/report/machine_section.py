"""The emulated machine of a session (--machine): its profile, the limits applied, their proof.

Read from Session.machine as stored (machines/ writes it); reports never
import machines/, so this reads the dict defensively: a session without a
machine shows nothing.
"""

from __future__ import annotations

from typing import Any

from fsarena.session.store import Session

MIB = 1 << 20


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _profile_part(profile: dict[str, Any]) -> str:
    parts = []
    if (mem := _num(profile.get("memory_mib"))) is not None:
        parts.append(f"{mem:g} MiB RAM")
    if (mhz := _num(profile.get("cpu_mhz"))) is not None:
        parts.append(f"a {mhz:g} MHz CPU")
    if (cores := _num(profile.get("cpu_cores"))) is not None:
        parts.append(f"{cores:g} CPU cores")
    for direction in ("read", "write"):
        if (rate := _num(profile.get(f"disk_{direction}_mib_s"))) is not None:
            parts.append(f"disk {direction} {rate:g} MiB/s")
    if (dirty := _num(profile.get("dirty_mib"))) is not None:
        parts.append(f"vm.dirty_bytes {dirty:g} MiB")
    if (background := _num(profile.get("dirty_background_mib"))) is not None:
        parts.append(f"vm.dirty_background_bytes {background:g} MiB")
    return ", ".join(parts) or "no limits"


def _applied_part(machine: dict[str, Any]) -> str:
    limits = machine.get("limits", {})
    parts = []
    if (cores := _num(limits.get("cpu_cores"))) is not None:
        parts.append(
            f"CPU {cores:.3f} of a core ({limits.get('cpu_quota_us')} us per "
            f"{limits.get('cpu_period_us')} us)"
        )
    parts += [str(n) for n in limits.get("notes", []) if str(n).startswith("CPU not limited")]
    return f"applied through {machine.get('backend', '?')}" + (
        f": {'; '.join(parts)}" if parts else ""
    )


def _probe_part(probe: dict[str, Any]) -> str:
    parts = []
    rates: dict[str, list[float]] = {}
    for sample in probe.get("disk", []):
        rates.setdefault(str(sample.get("direction")), []).append(float(sample["bytes_per_s"]))
    for direction, values in rates.items():
        mean = sum(values) / len(values)
        parts.append(f"disk {direction} {mean / MIB:.2f} MiB/s (fio, n={len(values)})")
    if cpu := probe.get("cpu"):
        parts.append(f"a CPU-bound loop got {float(cpu['share_cores']):.3f} of a core")
    if memory := probe.get("memory"):
        parts.append(
            f"{int(memory['written_bytes']) / MIB:.0f} MiB written through the page cache "
            f"peaked at {int(memory['peak_bytes']) / MIB:.0f} MiB "
            f"(limit {int(memory['limit_bytes']) / MIB:.0f} MiB)"
        )
    misses = len(probe.get("misses", []))
    verdict = "all within 10 % of the profile" if not misses else f"{misses} off by > 10 %"
    return "; ".join(parts) + f": {verdict}" if parts else verdict


def machine_lines(session: Session) -> list[str]:
    """Lines for the report's header, beside the host facts; [] without a machine."""
    machine = session.machine
    if not machine:
        return []
    profile = machine.get("profile", {})
    lines = [
        f"emulated machine {profile.get('name', '?')}: {_profile_part(profile)} "
        f"({profile.get('article') or profile.get('description') or 'user-defined'}); "
        f"{_applied_part(machine)}"
    ]
    for probe in machine.get("probes", []):
        lines.append(f"machine probe {probe.get('at', '')}: {_probe_part(probe)}")
    return lines


def machine_rows(session: Session) -> list[tuple[str, str]]:
    """The HTML report's "Emulated machine" table: each figure with its source."""
    machine = session.machine
    if not machine:
        return []
    profile = machine.get("profile", {})
    rows = [("profile", str(profile.get("name", "?"))), ("limits", _profile_part(profile))]
    rows += [(f"source of {k}", str(v)) for k, v in profile.get("sources", {}).items()]
    rows.append(("backend", _applied_part(machine)))
    rows += [("note", str(n)) for n in machine.get("limits", {}).get("notes", [])]
    rows += [(f"probe {p.get('at', '')}", _probe_part(p)) for p in machine.get("probes", [])]
    return rows
