"""Machine profiles as data: the articles' machines (builtin.toml) and users' own, in TOML.

A profile states the machine to emulate in the units its source uses: RAM in
MiB, the CPU's clock in MHz (or a share of this host's CPUs in cores), the
disk's sequential read and write bandwidth in MiB/s, and optionally the
kernel's dirty-page thresholds. A figure left out is not limited. `sources`
says where each figure comes from; the built-ins must give one for every
figure (a test checks), so a report can always say why a limit is what it is.

Limits are the profile resolved on this host (see limits_for): the CPU clock
becomes a CFS quota by clock ratio, the rest become bytes.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fsarena.errors import FsarenaError, not_text

MIB = 1 << 20
CPU_PERIOD_US = 10_000  # CFS period: 10 ms tracked CPU time / quota within 2-5 % here
MIN_QUOTA_US = 1_000  # the kernel refuses a CFS quota below 1 ms
LIMIT_FIELDS = (
    "memory_mib",
    "cpu_mhz",
    "cpu_cores",
    "disk_read_mib_s",
    "disk_write_mib_s",
    "dirty_mib",
    "dirty_background_mib",
)


class MachineProfile(BaseModel):
    """A machine to emulate: what to limit, and where each figure comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = ""
    article: str = ""
    description: str = ""
    memory_mib: float | None = Field(default=None, gt=0)
    cpu_mhz: float | None = Field(default=None, gt=0)  # converted by clock ratio to this host
    cpu_cores: float | None = Field(default=None, gt=0)  # or a share of this host's CPUs
    disk_read_mib_s: float | None = Field(default=None, gt=0)
    disk_write_mib_s: float | None = Field(default=None, gt=0)
    # vm.dirty_bytes / dirty_background_bytes: system-wide while the run lasts, restored after.
    dirty_mib: float | None = Field(default=None, gt=0)
    dirty_background_mib: float | None = Field(default=None, gt=0)
    sources: dict[str, str] = Field(default_factory=dict)  # field -> where its figure comes from

    @model_validator(mode="after")
    def _consistent(self) -> MachineProfile:
        if self.cpu_mhz is not None and self.cpu_cores is not None:
            raise ValueError("give cpu_mhz or cpu_cores, not both")
        if not any(getattr(self, f) is not None for f in LIMIT_FIELDS):
            raise ValueError(f"a machine limits something: give at least one of {LIMIT_FIELDS}")
        unknown = sorted(set(self.sources) - set(LIMIT_FIELDS))
        if unknown:
            raise ValueError(f"sources name unknown figures {unknown}; known: {LIMIT_FIELDS}")
        dirty, background = self.dirty_mib, self.dirty_background_mib
        if dirty is not None and background is not None and background >= dirty:
            raise ValueError("dirty_background_mib must be below dirty_mib")
        return self

    @property
    def limits_disk(self) -> bool:
        return self.disk_read_mib_s is not None or self.disk_write_mib_s is not None

    def summary(self) -> str:
        """One line: what is limited, in the profile's own units."""
        parts = []
        if self.memory_mib is not None:
            parts.append(f"{self.memory_mib:g} MiB RAM")
        if self.cpu_mhz is not None:
            parts.append(f"a {self.cpu_mhz:g} MHz CPU")
        if self.cpu_cores is not None:
            parts.append(f"{self.cpu_cores:g} CPU cores")
        if self.limits_disk:
            read, write = _or_free(self.disk_read_mib_s), _or_free(self.disk_write_mib_s)
            parts.append(f"disk read {read}, write {write}")
        if self.dirty_mib is not None or self.dirty_background_mib is not None:
            parts.append(
                f"dirty pages {_or_free(self.dirty_mib, 'MiB')} "
                f"(background {_or_free(self.dirty_background_mib, 'MiB')})"
            )
        return ", ".join(parts)


def _or_free(value: float | None, unit: str = "MiB/s") -> str:
    return "not limited" if value is None else f"{value:g} {unit}"


@dataclass(frozen=True)
class Limits:
    """A profile resolved on this host: what the kernel is told (None: not limited)."""

    memory_bytes: int | None
    cpu_cores: float | None
    disk_read_bytes_per_s: int | None
    disk_write_bytes_per_s: int | None
    dirty_bytes: int | None
    dirty_background_bytes: int | None
    notes: tuple[str, ...] = ()
    cpu_period_us: int = CPU_PERIOD_US

    @property
    def cpu_quota_us(self) -> int | None:
        if self.cpu_cores is None:
            return None
        return max(MIN_QUOTA_US, round(self.cpu_cores * self.cpu_period_us))

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory_bytes": self.memory_bytes,
            "cpu_cores": self.cpu_cores,
            "cpu_quota_us": self.cpu_quota_us,
            "cpu_period_us": self.cpu_period_us,
            "disk_read_bytes_per_s": self.disk_read_bytes_per_s,
            "disk_write_bytes_per_s": self.disk_write_bytes_per_s,
            "dirty_bytes": self.dirty_bytes,
            "dirty_background_bytes": self.dirty_background_bytes,
            "notes": list(self.notes),
        }


def _bytes(mib: float | None) -> int | None:
    return None if mib is None else int(mib * MIB)


def host_cpu_mhz(cpuinfo: Path = Path("/proc/cpuinfo")) -> float | None:
    """This host's CPU clock: /proc/cpuinfo's "cpu MHz" (x86), else cpufreq's maximum."""
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("cpu MHz"):
                return float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    freq = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        return int(freq.read_text()) / 1000
    except (OSError, ValueError):
        return None


def _cpu_cores(profile: MachineProfile, host_mhz: float | None) -> tuple[float | None, str]:
    """Cores of CFS quota the profile's CPU amounts to here, and how that was worked out."""
    if profile.cpu_cores is not None:
        return profile.cpu_cores, f"CPU: {profile.cpu_cores:g} cores, as the profile gives"
    if profile.cpu_mhz is None:
        return None, ""
    if host_mhz is None or host_mhz <= 0:
        raise FsarenaError(
            f"machine {profile.name}: cannot read this host's CPU clock to emulate a "
            f"{profile.cpu_mhz:g} MHz CPU; give the machine cpu_cores instead of cpu_mhz"
        )
    cores = profile.cpu_mhz / host_mhz
    return cores, (
        f"CPU: {profile.cpu_mhz:g} MHz / this host's {host_mhz:g} MHz = {cores:.3f} of a core "
        "(clock ratio; a modern core does more per clock, so the emulated CPU is still faster "
        "than the original)"
    )


def limits_for(profile: MachineProfile, host_mhz: float | None, host_cpus: int) -> Limits:
    """The profile in kernel units on this host."""
    cores, how = _cpu_cores(profile, host_mhz)
    notes = [how] if how else []
    if cores is not None and cores >= host_cpus:
        notes.append(f"CPU not limited: the profile's {cores:.2f} cores >= this host's {host_cpus}")
        cores = None
    return Limits(
        memory_bytes=_bytes(profile.memory_mib),
        cpu_cores=cores,
        disk_read_bytes_per_s=_bytes(profile.disk_read_mib_s),
        disk_write_bytes_per_s=_bytes(profile.disk_write_mib_s),
        dirty_bytes=_bytes(profile.dirty_mib),
        dirty_background_bytes=_bytes(profile.dirty_background_mib),
        notes=tuple(notes),
    )


# ---------------------------------------------------------------- loading


def _message(source: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = f"unknown key (misspelled?); known: {', '.join(MachineProfile.model_fields)}"
    return f"{source}: {where}: {msg}" if where else f"{source}: {msg}"


def parse_machines(tables: Mapping[str, Any], source: str) -> dict[str, MachineProfile]:
    """[machines.NAME] tables (of a suite or builtin.toml) as profiles named by their key."""
    found = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise FsarenaError(f"{source}: machines.{name} must be a table ([machines.{name}])")
        try:
            found[name] = MachineProfile.model_validate({**table, "name": name})
        except ValidationError as exc:
            raise FsarenaError(_message(f"{source}: machines.{name}", exc)) from None
    return found


def _load_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise FsarenaError(f"{source} is not valid TOML: {exc}") from None


def builtin_machines() -> dict[str, MachineProfile]:
    text = resources.files("fsarena.machines").joinpath("builtin.toml").read_text()
    data = _load_toml(text, "built-in machines")
    return parse_machines(data.get("machines", {}), "built-in machines")


def load_machine_file(path: Path) -> MachineProfile:
    """A user's machine file: one machine as top-level keys (name defaults to the file's)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise FsarenaError(f"cannot read machine file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise FsarenaError(f"machine file {path} is not TOML: {not_text(exc)}") from None
    data = _load_toml(text, str(path))
    data.setdefault("name", path.stem)
    try:
        return MachineProfile.model_validate(data)
    except ValidationError as exc:
        raise FsarenaError(_message(str(path), exc)) from None


def resolve_machine(
    name_or_path: str, suite_machines: Mapping[str, MachineProfile] | None = None
) -> MachineProfile:
    """--machine: a machine the suite defines, a built-in, or a .toml file of one machine."""
    if suite_machines and name_or_path in suite_machines:
        return suite_machines[name_or_path]
    builtins = builtin_machines()
    if name_or_path in builtins:
        return builtins[name_or_path]
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        return load_machine_file(path)
    known = [*(suite_machines or {}), *builtins]
    raise FsarenaError(
        f"unknown machine {name_or_path!r}; known: {', '.join(known)} "
        "(or give the path of a .toml machine file; `fsarena list machines`)"
    )
