"""The session's inner records, typed: host facts, plan, profiles as run, datasets, machine.

Each record types the keys fsarena reads, so a renamed key is a type error
(mypy) rather than a silent default. These rules keep every older session
loading and re-saving unchanged (tests/unit/test_records.py):
- Every field is optional, with the default a reader assumed when the key was
  absent; versions that did not write a key still load.
- A record writes back only the keys it was given (read from the file, passed
  to its constructor, or assigned) or whose value left its default (a list
  appended to): a key a version never wrote is not added on a re-save, so a
  session saved and loaded again is the same JSON.
- A record is false when it would write {} (`if session.machine:`), as the
  dictionary it replaces was.
- Unknown keys are kept (extra="allow"), untyped, in `model_extra`, and
  written back as they were: a key written by a newer fsarena, or one no reader
  needs, is never lost on a re-save. Only the keys typed here are read.
- A value of the wrong type is refused on load ("damaged: host.cpus: ..."),
  never read as a default.
Numbers that a version may have stored as an integer are `int | float` (a
float field would turn 1 into 1.0, and the file and the reports would change).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from fsarena.stopping import Stopping, of_plan

Number = int | float


def given(value: object, absent: str = "?") -> object:
    """A record's value, or what a report shows for a key the record did not have (None)."""
    return absent if value is None else value


class Record(BaseModel):
    """A record of the session file: typed where read, open to keys it does not know."""

    model_config = ConfigDict(extra="allow", ser_json_inf_nan="constants")

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys given or changed, and the unknown ones: the file as it was read."""
        data: dict[str, Any] = handler(self)
        fields = type(self).model_fields
        return {
            key: value
            for key, value in data.items()
            if key not in fields
            or key in self.model_fields_set
            or getattr(self, key) != fields[key].get_default(call_default_factory=True)
        }

    def __bool__(self) -> bool:
        """Whether the record holds anything, as a dictionary is: {} in the file is empty."""
        return bool(self.model_dump())


# ---------------------------------------------------------------- host


class BackingDisk(Record):
    """The disk under the work directory, where the loop images live."""

    device: str = ""
    fstype: str = ""
    mountpoint: str = ""
    model: str = ""  # schema 3
    scheduler: str = ""  # schema 3


class HostFacts(Record):
    """Session.host: the machine the session ran on (run.preflight.host_facts)."""

    hostname: str = ""
    machine_id: str = ""  # schema 3: /etc/machine-id ("" when unreadable)
    kernel: str = ""
    kernel_build: str = ""
    machine: str = ""  # uname's machine (x86_64), not the emulated one
    cpu_model: str = ""
    cpus: int = 0
    mem_total_bytes: int = 0
    python: str = ""
    workdir: str = ""
    fsarena_build: str = ""  # schema 3: the measuring fsarena's build identity
    workdir_backing: BackingDisk = Field(default_factory=BackingDisk)


# ---------------------------------------------------------------- plan


class TaskInfo(Record):
    """Session.plan.task_info[task]: what the report needs to know of a task."""

    kind: str = ""
    timed: bool = True
    writes: bool = False
    payload: str | None = None  # the metric of its payload bytes, if any
    description: str = ""
    datasets: list[str] = Field(default_factory=list)
    columns: list[str] = Field(default_factory=list)  # schema 2: its table's metrics
    fresh: bool = False  # it ran on a filesystem made for it (Task.fresh); given only if so


class AgeProfileRecord(Record):
    """PlanRecord.age and AgingRecord.profile: the aging profile (aging.profiles), dumped."""

    name: str | None = None
    kind: str = "tree"  # "tree" (churn) or "git-replay"; absent before git replay
    source: str = ""  # where the profile came from
    repository: str | None = None  # git replay: the repository dataset it pulls from


class PlanRecord(Record):
    """Session.plan: the plan as run (plan.Plan.summary) and each task's info.

    Sub-records fsarena does not read field by field (a suite's variants and
    dataset overrides, the machine and aging profiles, the power-loss test's plan)
    stay dictionaries: they are the plan's own models, dumped.
    """

    suite: str = ""
    filesystems: list[str] = Field(default_factory=list)
    tasks: list[str] = Field(default_factory=list)
    repetitions: int | None = None
    scale: Number | None = None
    seed: int | None = None
    workdir: str = ""
    task_timeout_s: Number | None = None
    target_ci_pct: Number | None = None  # schema 2: adaptive repetitions
    max_repetitions: int | None = None
    time_budget_s: Number | None = None
    warmup_rounds: int = 0  # schema 3
    decisive: bool = False  # schema 3
    weights: dict[str, float] = Field(default_factory=dict)  # kinds' weights (--weigh)
    # fsarena tune: each filesystem's defaults -> its configurations (defaults first), and
    # whether configurations clearly behind are dropped after each round (analysis.race).
    tune: dict[str, list[str]] = Field(default_factory=dict)
    race: bool = False
    variants: dict[str, Any] = Field(default_factory=dict)  # schema 2
    datasets: dict[str, Any] = Field(default_factory=dict)  # schema 2
    machine: dict[str, Any] | None = None  # schema 2: the machine profile (--machine)
    age: AgeProfileRecord | None = None  # schema 3: the aging profile (--age)
    # The power-loss test's own plan. The stored key keeps the feature's old name, as the
    # suite name "crashtest" of its sessions does: sessions and results stores written
    # before the word became "power loss" stay readable and comparable (issue 27).
    crashtest: dict[str, Any] | None = None
    task_info: dict[str, TaskInfo] = Field(default_factory=dict)

    @property
    def stopping(self) -> Stopping:
        """The stopping rule the run followed, as one typed value (fsarena.stopping)."""
        return of_plan(
            self.repetitions or 1,
            self.decisive,
            self.target_ci_pct,
            self.max_repetitions,
            self.time_budget_s,
            self.warmup_rounds,
        )

    def info(self, task: str) -> TaskInfo:
        """A task's info; all defaults for a task the plan did not describe."""
        return self.task_info.get(task) or TaskInfo()


# ---------------------------------------------------------------- filesystems and data


class ProfileRecord(Record):
    """Session.profiles_as_run[name]: a filesystem profile as it was run.

    Absent driver keys mean the host kernel's driver (sessions before schema 2).
    """

    name: str = ""
    fstype: str = ""
    mkfs: list[str] = Field(default_factory=list)
    mount_options: list[str] = Field(default_factory=list)
    image_size_bytes: int = 0
    notes: str = ""
    driver: str | None = None  # schema 2: "kernel", "fuse", "guest"
    group: str | None = None  # schema 2: what it may be ranked against
    base: str | None = None  # schema 2: the filesystem a NAME@DRIVER runs
    guest: str | None = None
    guest_label: str | None = None  # the guest kernel in words ("User-Mode Linux")
    reference: str | None = None
    mount_command: list[str] = Field(default_factory=list)
    aged: str | None = None  # schema 3: the aging profile of NAME+PROFILE
    fresh: str | None = None  # schema 3: the fresh twin of an aged filesystem
    # The rest of the profile table's fields, as run (filesystems.profiles).
    drivers: list[str] = Field(default_factory=list)
    packages: list[str] = Field(default_factory=list)
    fsck: list[str] = Field(default_factory=list)
    after_umount: list[Any] = Field(default_factory=list)
    guest_modules: list[str] = Field(default_factory=list)
    min_size_bytes: int | None = None
    never: str | None = None
    on_device: bool | None = None
    syncfs: bool | None = None
    unix_ownership: bool | None = None
    fuse: dict[str, Any] | None = None
    # Compression and per-directory settings (filesystems.profiles); absent: none.
    compress_options: list[str] = Field(default_factory=list)
    space_usage: list[str] = Field(default_factory=list)
    space_usage_package: str = ""
    data_dir_attributes: list[str] = Field(default_factory=list)

    @property
    def compresses(self) -> bool:
        """Whether its mount options made it compress what it wrote."""
        return any(o.split("=")[0] in self.compress_options for o in self.mount_options)


class CapturedRecord(Record):
    """DatasetSpecRecord.captured: a replayed trace's own figures (capture/dataset.py), what
    the replay is judged against (the replay error, analysis/replay.py)."""

    fstype: str = ""  # the filesystem most of the captured calls were on
    device_class: str = ""  # its device: loop, rotational, non-rotational, virtual
    duration_s: Number = 0
    fs_call_s: Number = 0  # time inside the replayable calls, summed over threads
    calls: int = 0
    # per call type: count, total_s, p50_us, p99_us, p999_us
    per_call: dict[str, dict[str, Number]] = Field(default_factory=dict)
    unreplayable_share_pct: Number = 0
    compress_ratio: Number | None = None


class DatasetSpecRecord(Record):
    """DatasetRecord.spec: the dataset's specification (datasets.spec.DatasetSpec)."""

    name: str = ""
    kind: str = ""
    description: str = ""
    compressibility: str = ""  # what the data is to a compressor; "": not stated (older files)
    captured: CapturedRecord | None = None  # a trace (kind "trace"): the capture's figures


class DatasetRecord(Record):
    """Session.datasets[name]: the dataset as generated, with its manifest digest."""

    spec: DatasetSpecRecord = Field(default_factory=DatasetSpecRecord)
    spec_hash: str = ""
    manifest_digest: str = ""
    files: int | None = None
    directories: int | None = None
    total_bytes: int = 0
    origin: str | None = None  # schema 2: e.g. "your directory ..."; absent: generated
    size_histogram: dict[str, Any] = Field(default_factory=dict)  # schema 2


class SourceRecord(Record):
    """Session.source: where the datasets were read from (targets.source)."""

    kind: str = ""
    size_bytes: int = 0


class TargetRecord(Record):
    """Session.target (schema 2): the block device used instead of loop images."""

    kind: str = ""  # "block-device"
    path: str = ""
    size_bytes: int | None = None
    model: str = ""
    serial: str = ""
    signatures_destroyed: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- emulated machine


class MachineProfileRecord(Record):
    """MachineRecord.profile: the machine profile as given (plan.machines)."""

    name: str | None = None
    article: str | None = None
    description: str | None = None
    memory_mib: Number | None = None
    cpu_mhz: Number | None = None
    cpu_cores: Number | None = None
    disk_read_mib_s: Number | None = None
    disk_write_mib_s: Number | None = None
    dirty_mib: Number | None = None
    dirty_background_mib: Number | None = None
    sources: dict[str, str] = Field(default_factory=dict)


class MachineLimits(Record):
    """MachineRecord.limits: the limits applied on this host."""

    cpu_cores: Number | None = None
    cpu_quota_us: int | None = None
    cpu_period_us: int | None = None
    notes: list[str] = Field(default_factory=list)


class DiskProbe(Record):
    direction: str = ""
    bytes_per_s: Number = 0


class MachineProbe(Record):
    """One probe that proved the limits: fio samples, CPU share, memory peak, misses."""

    at: str = ""
    disk: list[DiskProbe] = Field(default_factory=list)
    cpu: dict[str, Any] | None = None  # share_cores
    memory: dict[str, Any] | None = None  # written_bytes, peak_bytes, limit_bytes
    misses: list[Any] = Field(default_factory=list)


class MachineRecord(Record):
    """Session.machine (schema 2): the emulated machine (--machine); empty: none."""

    profile: MachineProfileRecord = Field(default_factory=MachineProfileRecord)
    backend: str | None = None
    host_cpu_mhz: Number | None = None
    cgroups: list[str] = Field(default_factory=list)  # what the tasks joined
    limits: MachineLimits = Field(default_factory=MachineLimits)
    probes: list[MachineProbe] = Field(default_factory=list)


# ---------------------------------------------------------------- schema 3


class RoundTiming(Record):
    """TimingRecord.rounds[i]: one round's wall time, and its timed tasks' own."""

    repetition: int = 0
    warmup: bool = False
    wall_s: Number = 0
    timed_s: Number = 0
    # fsarena's own time in the round, per phase (run/owntime.py PHASES); absent in older
    # files. What no phase holds is the runner's bookkeeping: wall - timed - their sum.
    own_s: dict[str, Number] = Field(default_factory=dict)


class TimingRecord(Record):
    """Session.timing (schema 3): where the wall time went (fsarena's own share)."""

    setup_s: Number | None = None
    total_s: Number | None = None
    rounds: list[RoundTiming] = Field(default_factory=list)
    # Writing the reports after the run (text and HTML with its charts), by `fsarena run`;
    # the next run keeps that much of its budget for them. Absent in older files.
    report_s: Number | None = None
    # The aging rate probed at launch (run/agingprobe.py) and on which filesystem: a later
    # run's probe of the same filesystem over this one is how much slower it is now.
    aging_probe_fs: str | None = None
    aging_probe_bytes_per_s: Number | None = None


class DropRecord(Record):
    """RaceRecord.drops[i]: a configuration the race stopped measuring, and why."""

    configuration: str = ""
    after_rounds: int = 0
    defaults: str = ""  # the filesystem's defaults it raced against
    # Per family (each weighed kind, and the workload when several): the configuration it
    # was shown behind, the ratio of their times and its interval at the race's level.
    behind: list[dict[str, Any]] = Field(default_factory=list)
    level: Number = 0  # the nominal two-sided level of each test at that look
    text: str = ""


class RaceRecord(Record):
    """Session.race (fsarena tune): the configurations dropped, in order."""

    margin: Number = 0.05  # dropped only when shown behind by more than this fraction
    drops: list[DropRecord] = Field(default_factory=list)

    def dropped(self) -> set[str]:
        return {d.configuration for d in self.drops}


class StopRecord(Record):
    """Session.stop: why the run took no more rounds (the stopping rule's own reason)."""

    code: str = ""  # fixed | decided | precise | max_rounds | budget | all_dropped | ...
    text: str = ""
    rounds: int = 0
    budget_left_s: Number | None = None


class AgingRecord(Record):
    """Session.aging[name] (schema 3): what aging did once for a filesystem (--age)."""

    profile: AgeProfileRecord | None = None
    seed: int | None = None
    image_size_bytes: int = 0
    wall_s: Number = 0
    bytes_written: Number = 0
    files: int | None = None
    rounds: int | None = None
    stopped_by: str | None = None
    manifest_digest: str | None = None
    on_disk_matches: bool | None = None
    bytes_written_per_s: Number | None = None
    live_bytes: Number | None = None
    device_write_bytes: Number = 0
    snapshot_method: str | None = None
    aged_times: int = 1  # --device: aged again for every aged repetition
    same_as_before: bool | None = None  # --device: the same file set as the time before
    head: str | None = None  # git replay: the last commit checked out
    first_commit: str | None = None  # git replay: the commit of the first pull (the clone)
    files_touched: list[int] | None = None  # git replay: files each pull brought, in order
    device_class: dict[str, Any] | None = None  # aging.device: loop or real, rotational or not
    snapshot_s: Number = 0


# ---------------------------------------------------------------- schema 4: the comparison key


class DeviceClassRecord(Record):
    """ComparisonRecord.device: the class of device the filesystems were made on, read from
    sysfs (targets/device_class.py): never its name, model or serial."""

    label: str = ""  # "NVMe SSD", "loop image on virtual disk (virtio)", "zram (compressed RAM)"
    kind: str = ""  # disk, loop, zram, stacked, memory, none, unknown
    transport: str = ""  # virtio, nvme, sata, usb, scsi, mmc; "" when none or not known
    rotational: bool | None = None


class TaskKeyRecord(Record):
    """ComparisonRecord.tasks[task]: what a task's comparison key takes from the code that ran."""

    version: str = ""  # Task.key_version(): changes whenever its commands or parameters change
    tools: list[str] = Field(default_factory=list)  # the programs it runs (Task.tools), by name


class ComparisonRecord(Record):
    """Session.comparison (schema 4): the facts a result's comparison key needs that only the
    run can know; session/key.py composes the key from them and the rest of the session."""

    scheme: str = ""  # the key's scheme when it was recorded (session.key.KEY_SCHEME)
    device: DeviceClassRecord = Field(default_factory=DeviceClassRecord)
    tasks: dict[str, TaskKeyRecord] = Field(default_factory=dict)
    # A guest driver's kernel release, per filesystem (the host's is host.kernel).
    kernels: dict[str, str] = Field(default_factory=dict)
