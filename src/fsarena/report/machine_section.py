"""The emulated machine of a session (--machine): its profile, the limits applied, their proof.

Read from Session.machine as stored (machines/ writes it); reports never
import machines/, so this reads the typed record (session.records): a session
without a machine shows nothing.
"""

from __future__ import annotations

from fsarena.session.file import Session
from fsarena.session.records import MachineLimits, MachineProbe, MachineProfileRecord, MachineRecord

MIB = 1 << 20


def _profile_part(profile: MachineProfileRecord) -> str:
    parts = []
    if (mem := profile.memory_mib) is not None:
        parts.append(f"{mem:g} MiB RAM")
    if (mhz := profile.cpu_mhz) is not None:
        parts.append(f"a {mhz:g} MHz CPU")
    if (cores := profile.cpu_cores) is not None:
        parts.append(f"{cores:g} CPU cores")
    for direction, rate in (("read", profile.disk_read_mib_s), ("write", profile.disk_write_mib_s)):
        if rate is not None:
            parts.append(f"disk {direction} {rate:g} MiB/s")
    if (dirty := profile.dirty_mib) is not None:
        parts.append(f"vm.dirty_bytes {dirty:g} MiB")
    if (background := profile.dirty_background_mib) is not None:
        parts.append(f"vm.dirty_background_bytes {background:g} MiB")
    return ", ".join(parts) or "no limits"


def _applied_part(machine: MachineRecord) -> str:
    limits: MachineLimits = machine.limits
    parts = []
    if (cores := limits.cpu_cores) is not None:
        parts.append(
            f"CPU {float(cores):.3f} of a core ({limits.cpu_quota_us} us per "
            f"{limits.cpu_period_us} us)"
        )
    parts += [n for n in limits.notes if n.startswith("CPU not limited")]
    return f"applied through {machine.backend or '?'}" + (f": {'; '.join(parts)}" if parts else "")


def _probe_part(probe: MachineProbe) -> str:
    parts = []
    rates: dict[str, list[float]] = {}
    for sample in probe.disk:
        rates.setdefault(sample.direction, []).append(float(sample.bytes_per_s))
    for direction, values in rates.items():
        mean = sum(values) / len(values)
        parts.append(f"disk {direction} {mean / MIB:.2f} MiB/s (fio, n={len(values)})")
    if cpu := probe.cpu:
        parts.append(f"a CPU-bound loop got {float(cpu['share_cores']):.3f} of a core")
    if memory := probe.memory:
        parts.append(
            f"{int(memory['written_bytes']) / MIB:.0f} MiB written through the page cache "
            f"peaked at {int(memory['peak_bytes']) / MIB:.0f} MiB "
            f"(limit {int(memory['limit_bytes']) / MIB:.0f} MiB)"
        )
    misses = len(probe.misses)
    verdict = "all within 10 % of the profile" if not misses else f"{misses} off by > 10 %"
    return "; ".join(parts) + f": {verdict}" if parts else verdict


def machine_lines(session: Session) -> list[str]:
    """Lines for the report's header, beside the host facts; [] without a machine."""
    machine = session.machine
    if not machine:
        return []
    profile = machine.profile
    lines = [
        f"emulated machine {profile.name or '?'}: {_profile_part(profile)} "
        f"({profile.article or profile.description or 'user-defined'}); "
        f"{_applied_part(machine)}"
    ]
    for probe in machine.probes:
        lines.append(f"machine probe {probe.at}: {_probe_part(probe)}")
    return lines


def machine_rows(session: Session) -> list[tuple[str, str]]:
    """The HTML report's "Emulated machine" table: each figure with its source."""
    machine = session.machine
    if not machine:
        return []
    profile = machine.profile
    rows = [("profile", profile.name or "?"), ("limits", _profile_part(profile))]
    rows += [(f"source of {k}", v) for k, v in profile.sources.items()]
    rows.append(("backend", _applied_part(machine)))
    rows += [("note", n) for n in machine.limits.notes]
    rows += [(f"probe {p.at}", _probe_part(p)) for p in machine.probes]
    return rows
