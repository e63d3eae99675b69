"""The session file: the one record that crosses from measurement to reporting.

A session holds raw measurements only, with full provenance; every table,
statistic and verdict is recomputed from it when read, on any machine.
It is written whole when a run starts and when it ends; in between, every
measurement is appended to a journal beside it (session/journal.py), so an
interrupted run keeps everything it measured and a save costs the same in round
100 as in round 1.
"""

from __future__ import annotations

import json
import os
import stat
import statistics
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from fsarena.errors import FsarenaError, not_text
from fsarena.measure.collect import Measurement
from fsarena.measure.metrics import ceiling_tolerance, metric_value
from fsarena.session.journal import merge
from fsarena.session.outputs import in_the_way
from fsarena.session.records import (
    AgingRecord,
    ComparisonRecord,
    DatasetRecord,
    HostFacts,
    MachineRecord,
    PlanRecord,
    ProfileRecord,
    RaceRecord,
    SourceRecord,
    StopRecord,
    TargetRecord,
    TimingRecord,
)
from fsarena.session.signals import stop_signals_held

# History of the stored format (keep one fixture per version in tests/fixtures):
# 1 (fsarena 0.1.0): first version: host, tool versions, plan, profiles as run,
#   datasets with manifest digests, source, per-repetition order, raw runs, warnings.
# 2 (fsarena 0.1.0, November 2026; every addition is optional, so version-1 files
#   load unchanged): `ceilings` (fio's raw sequential write/read throughput of the
#   target, per round); run status "invalid" (measured, but faster than the device's
#   ceiling: excluded from statistics); Measurement.extra["payload_bytes"]; plan
#   target_ci_pct / max_repetitions / time_budget_s (adaptive repetitions);
#   plan.variants (a suite's filesystem variants) and plan.datasets (its dataset
#   overrides); plan.task_info[task].columns; datasets[name].origin (e.g. the real
#   Debian kernel or the generated look-alike) and .size_histogram; new metrics in
#   Measurement.extra (files_per_s, bonnie_*) and Run.values (portage_space's df/du).
#   Run.details (optional, default {}): raw detail data of an untimed task, e.g.
#   powerloss's per-workload, per-crash-state outcomes
#   (fsarena.powerloss.results.PowerlossDetails).
#   Run.fault (short code of a failed run's cause: enospc, timeout, mount, ...;
#   faults.py), Session.target (the block device used instead of loop images:
#   path, size, model, serial, signatures destroyed).
#   Filesystem names may carry a driver (NAME@DRIVER: "jfs@uml", "ntfs@fuse");
#   profiles_as_run[name] gains driver ("kernel" | "fuse" | "guest"), guest, base,
#   group ("kernel", "fuse", "guest:KERNEL": what it may be ranked against) and
#   reference (the filesystem its guest times are reported against); absent
#   keys mean the host kernel's driver.
#   Session.machine (optional, default {}): the machine profile the run was
#   emulating (--machine): the profile as given, the backend, the limits applied
#   on this host, and each probe that proved them (disk fio samples, CPU share,
#   memory peak, misses); plan.machine holds the profile too.
# 3 (fsarena 0.1.0, November 2026; nothing removed, version-2 files load unchanged):
#   Measurement.max_rss_kib is the command's own, from the native launcher
#   fsarena-timeit (as GNU time measures it), and may be null (not measured: no
#   launcher). Earlier versions stored the max RSS of a child forked straight from
#   fsarena, which carried fsarena's own high-water mark: their values are kept in
#   the file but read as unavailable (Run.value gives None, see UNAVAILABLE_BEFORE).
#   Session.status "partial" (the run went through its plan, but some runs failed
#   or were skipped); "failed" now also means it went through its plan and nothing
#   was measured (before: "complete"), besides a run stopped by an error. Why a run
#   stopped (error or signal) is a warning with code "stopped". Older files that say
#   "complete" are read as they are; reports recount their runs (Session.settled).
#   Run.repeats: the earlier timed executions of a sub-second task in the same
#   repetition (mkfs, mount, umount, find; Task.samples), `measurement` being the
#   last; a run's value of a metric is the median over all of them.
#   Session.warmup: the runs of the warm-up round (repetition 0), kept and shown but
#   never a sample. Session.timing: wall seconds of the set-up, of each round and of
#   the timed tasks within it, and of the whole run (fsarena's own share of the time).
#   CeilingSample.kind: "full" (fio write/read, once per session, in the directions the
#   plan's tasks are judged in) or "drift" (one short write in a round a minute or more
#   after the last measurement); "cache" (optional): the page cache's read speed.
#   plan.warmup_rounds, plan.decisive.
#   Session.aging (optional, default {}): per filesystem aged with --age, what the
#   aging did once for the seed (profile, seed, wall_s, bytes_written, device bytes,
#   files, rounds, manifest_digest, snapshot method); plan.age holds the profile, and
#   aged runs are recorded under "NAME+PROFILE" with profiles_as_run[...]["aged"].
#   host.machine_id (optional, "" or absent in older files): /etc/machine-id, so a
#   fleet merge can refuse two sessions from one cloned machine identity;
#   host.workdir_backing gains scheduler and model (of the disk under the work directory).
#   cold_caches (optional, absent in older files): how caches were emptied before timed
#   tasks (run.cold); absent: sync + drop_caches of the whole machine before every task.
#   host.fsarena_build (optional, absent in older files): fsarena.build_identity() of the
#   fsarena that measured (its commit, or a digest of its files); a fleet merges one only.
#   timing.rounds[].own_s (optional, absent in older files): fsarena's own time in the
#   round, seconds per phase (run/owntime.py PHASES); the rest is the runner's bookkeeping.
# 4 (fsarena 0.1.0, November 2026; nothing removed, version-3 files load unchanged):
#   Session.comparison (optional, default {}): what each result's comparison key
#   (session/key.py) needs that only the run can know: the class of device the
#   filesystems were made on, read from sysfs (label, kind, transport, rotational;
#   never its name, model or serial), each task's version (Task.key_version(): its
#   declared version, or the digest of a user's command) and the tools it runs, and
#   a guest driver's kernel release per filesystem. Older sessions have no such
#   record: their keys lack the device class, the task versions and the task's tools,
#   and are pooled with no other (fsarena share).
#   Also in 4 (optional, absent in older files): a replayed trace (issue 37):
#   datasets["trace"] of kind "trace", its spec with the trace's sha256 and `captured`
#   (the capture's own figures: fstype, device_class, duration_s, fs_call_s, calls,
#   per_call, unreplayable_share_pct, compress_ratio); the replay tasks' metrics replay_*
#   in Measurement.extra (the replay error, replay_error_pct, only on the capture's
#   filesystem type and device class); and
#   Run.details of a timed task (before: of untimed probes only): a replay's per call type
#   count, time and latency percentiles in ns.
#   Also in 4 (optional, 0 in older files): Session.journaled, the last line of the
#   journal beside the file (NAME.json.journal, session/journal.py) that the file holds;
#   `load` merges the lines after it (a run killed -9 leaves them there).
SCHEMA_VERSION = 4

# Metrics whose stored values are wrong in sessions older than a version: kept in the
# file, read as unavailable, with the reason as a warning of the session.
UNAVAILABLE_BEFORE: dict[str, tuple[int, str]] = {
    "max_rss_kib": (
        3,
        "max RSS is unavailable in sessions of schema version 1 and 2: fsarena forked "
        "commands straight from its own Python process, so the figure recorded was "
        "fsarena's memory, not the command's; run again to measure it",
    ),
}

# ok: a valid sample. failed: the task did not do its job (the sequence stops).
# skipped: not run because an earlier task failed. invalid: it ran and did its job,
# but its figure cannot be right (e.g. faster than the device): kept, not used.
RunStatus = Literal["ok", "failed", "skipped", "invalid"]
# running: not finished (or killed -9). complete: every planned run measured.
# partial: the plan was gone through, but some runs failed or were skipped.
# failed: nothing was measured, or an error stopped the run (a "stopped" warning says
# which). interrupted: stopped by a signal; resumable.
SessionStatus = Literal["running", "complete", "partial", "interrupted", "failed"]


class CheckRecord(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    name: str
    ok: bool
    detail: str = ""


class Run(BaseModel):
    """One (filesystem, task, repetition): its raw measurement and verification."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    filesystem: str
    task: str
    repetition: int
    started_at: str
    status: RunStatus
    error: str = ""
    # failed runs: what kind of fault (faults.py), for grouping in reports; skipped runs:
    # "unsupported" when this filesystem or driver cannot run the task (not a failure)
    fault: str = ""
    measurement: Measurement | None = None
    # Earlier timed executions in this repetition (Task.samples > 1); the last is above.
    repeats: list[Measurement] = Field(default_factory=list)
    values: dict[str, float] = Field(default_factory=dict)  # untimed probes (capacity)
    details: dict[str, Any] = Field(default_factory=dict)  # raw detail data of an untimed task
    checks: list[CheckRecord] = Field(default_factory=list)
    _unavailable: frozenset[str] = PrivateAttr(default=frozenset())  # see UNAVAILABLE_BEFORE

    @property
    def unavailable(self) -> frozenset[str]:
        """Metrics stored in this run whose values must not be read (UNAVAILABLE_BEFORE)."""
        return self._unavailable

    @property
    def not_applicable(self) -> bool:
        """Skipped because this filesystem or driver cannot run the task: nothing was lost."""
        return self.status == "skipped" and self.fault == "unsupported"

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.filesystem, self.task, self.repetition)

    def value(self, metric: str) -> float | None:
        """A metric's raw value in this run: a probed value, or from the measurement."""
        if metric in self.values:
            return float(self.values[metric])
        if self.measurement is None or metric in self._unavailable:
            return None
        if not self.repeats:
            return metric_value(self.measurement, metric)
        # Several timed executions in one repetition: their median, robust to one stall.
        found = [
            v
            for m in (*self.repeats, self.measurement)
            if (v := metric_value(m, metric)) is not None
        ]
        return statistics.median(found) if found else None

    @property
    def timed_s(self) -> float:
        """Wall seconds of every timed execution of this run."""
        return sum(m.wall_s for m in self.timed_executions)

    @property
    def timed_executions(self) -> list[Measurement]:
        return [*self.repeats, *([self.measurement] if self.measurement else [])]


class CeilingSample(BaseModel):
    """One fio measurement of the raw target: what the device can do without a filesystem."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    repetition: int
    direction: Literal["write", "read"]
    bytes_per_s: float
    size_bytes: int
    argv: list[str]
    # drift: a short check in a later round (targets/ceiling.py); cache: the same device
    # read again through the page cache (buffered, second pass), to derive the
    # contamination tolerance.
    kind: Literal["full", "drift", "cache"] = "full"


class WarningRecord(BaseModel):
    """A warning is data: what was seen and what to do about it."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="constants")

    code: str
    message: str


class Session(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    schema_version: int = SCHEMA_VERSION
    tool_version: str
    created_at: str
    finished_at: str | None = None
    status: SessionStatus = "running"
    # The inner records are typed (session.records): unknown keys are kept, and a
    # record writes back only the keys it was given.
    host: HostFacts = Field(default_factory=HostFacts)
    tool_versions: dict[str, str] = Field(default_factory=dict)
    plan: PlanRecord = Field(default_factory=PlanRecord)
    profiles_as_run: dict[str, ProfileRecord] = Field(default_factory=dict)
    datasets: dict[str, DatasetRecord] = Field(default_factory=dict)
    source: SourceRecord = Field(default_factory=SourceRecord)
    target: TargetRecord = Field(default_factory=TargetRecord)  # a block device; empty: loop images
    machine: MachineRecord = Field(default_factory=MachineRecord)  # emulated machine; empty: none
    order: list[list[str]] = Field(default_factory=list)  # filesystems, per repetition
    runs: list[Run] = Field(default_factory=list)
    warnings: list[WarningRecord] = Field(default_factory=list)
    ceilings: list[CeilingSample] = Field(default_factory=list)
    warmup: list[Run] = Field(default_factory=list)  # the warm-up round: shown, never a sample
    timing: TimingRecord = Field(default_factory=TimingRecord)  # where the wall time went
    # How caches were emptied before timed tasks (fsarena.run.cold); None in older files:
    # sync + drop_caches of the whole machine before every task.
    cold_caches: str | None = None
    race: RaceRecord | None = None  # fsarena tune: what the race dropped (analysis.race)
    stop: StopRecord | None = None  # why the run took no more rounds

    @model_validator(mode="after")
    def _mark_unavailable(self) -> Session:
        """Metrics an older version stored wrongly read as unavailable, with a warning why."""
        stale = {m for m, (v, _) in UNAVAILABLE_BEFORE.items() if self.schema_version < v}
        for run in self.runs:
            run._unavailable = frozenset(stale)
        for metric in sorted(stale):
            self.warn(f"{metric}_unavailable", UNAVAILABLE_BEFORE[metric][1])
        return self

    aging: dict[str, AgingRecord] = Field(default_factory=dict)  # per filesystem (--age)
    # What the comparison key needs that only the run knows (schema 4; {} in older files).
    comparison: ComparisonRecord = Field(default_factory=ComparisonRecord)
    # The journal's lines this file holds (session/journal.py; schema 4, 0 before).
    journaled: int = 0

    def ceiling(self, direction: str) -> float | None:
        """The best raw throughput measured for a direction, bytes/s (None: not measured)."""
        rates = [
            c.bytes_per_s for c in self.ceilings if c.direction == direction and c.kind != "cache"
        ]
        return max(rates) if rates else None

    def page_cache_ratio(self, direction: str) -> float | None:
        """The page cache's read speed over the device's ceiling in a direction (None: either
        not measured). A figure served from memory, read or written, runs at about that
        speed, so it stands against both ceilings (targets/ceiling.py)."""
        cache = [c.bytes_per_s for c in self.ceilings if c.kind == "cache"]
        device = self.ceiling(direction)
        return max(cache) / device if cache and device else None

    def ceiling_tolerance(self, direction: str) -> float:
        """How far above a direction's ceiling a rate must be to be flagged as cached
        (metrics.py)."""
        return ceiling_tolerance(self.page_cache_ratio(direction))

    def ok_runs(self) -> list[Run]:
        return [r for r in self.runs if r.status == "ok"]

    def settled(self) -> SessionStatus:
        """The status its runs earn once the plan is gone through: complete, partial or failed.

        Invalid runs ran and did their job (their figure is flagged, not missing); a
        task a filesystem cannot run (a skip with its reason) is not a loss either;
        with no valid run at all, nothing was measured.
        """
        if not self.ok_runs():
            return "failed"
        if any(r.status in ("failed", "skipped") and not r.not_applicable for r in self.runs):
            return "partial"
        return "complete"

    def filesystems(self) -> list[str]:
        """Filesystems in the plan's order."""
        planned = list(self.plan.filesystems)
        seen = {r.filesystem for r in self.runs}
        return [*planned, *sorted(seen - set(planned))]

    def tasks(self) -> list[str]:
        """Tasks in the plan's order."""
        planned = list(self.plan.tasks)
        seen = {r.task for r in self.runs}
        return [*planned, *sorted(seen - set(planned))]

    def profile(self, filesystem: str) -> ProfileRecord:
        """A filesystem's profile as run; all defaults (the host kernel's driver) when absent."""
        return self.profiles_as_run.get(filesystem) or ProfileRecord()

    def warn(self, code: str, message: str) -> None:
        record = WarningRecord(code=code, message=message)
        if record not in self.warnings:
            self.warnings.append(record)


def save(session: Session, path: Path) -> None:
    """Write the session atomically: a crash leaves the old file or the new one, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # pydantic's own encoder: the runner saves after every run (tests and resume read
    # the file mid-sequence), and a dictionary through json.dumps cost 3.5 times as
    # much at 650 runs (bench/session_save.py). Keys in the models' order, infinity
    # and NaN written as json.dumps wrote them (ser_json_inf_nan="constants").
    with stop_signals_held():
        data = session.model_dump_json(indent=1)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(data + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def create(session: Session, path: Path, *, rename: bool) -> Path:
    """Save a new session under a name no other file has (see `claim`), and return that name."""
    claimed = claim(path, rename=rename)
    try:
        save(session, claimed)
    except BaseException:
        claimed.unlink(missing_ok=True)  # the claim only: nothing was saved in it
        raise
    return claimed


def claim(path: Path, *, rename: bool) -> Path:
    """A new, empty file for a session: a name no other file has, returned.

    The name is claimed by exclusive creation (O_EXCL), so two runs that start in the
    same second with one results directory never share a file: with rename, the second
    gets NAME-2.json (then -3, ...); without (a name the user gave), an existing file
    is refused. Replacing a file on purpose is `save` (--force); continuing one is
    --resume. A name whose derived files (its HTML report and charts beside it,
    session.outputs.DERIVED) would land on something fsarena did not write is passed
    over too, or refused (require_derived_free).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, MAX_SUFFIX + 1):
        candidate = path if n == 1 else path.with_name(f"{path.stem}-{n}{path.suffix}")
        if rename and in_the_way(candidate):
            continue
        if not rename:
            require_derived_free(candidate)
        try:
            os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            if not rename:
                raise FsarenaError(refusal(candidate, "session file")) from None
            continue
        return candidate
    raise FsarenaError(
        f"{path} and {MAX_SUFFIX - 1} numbered names beside it exist already; "
        "give another --results-dir or --output"
    )


MAX_SUFFIX = 1000  # NAME-2 .. NAME-1000: beyond, something is starting runs in a loop


def require_derived_free(path: Path) -> None:
    """Refuse a session name whose reports would replace what fsarena did not write."""
    if blocking := in_the_way(path):
        raise FsarenaError(
            f"{'; '.join(blocking)} exists and fsarena did not write it (or it changed since): "
            f"fsarena never replaces or deletes what it did not write, and the session {path} "
            "would put its own there; move it away, or give another --output"
        )


def refusal(path: Path, what: str) -> str:
    """The one line that refuses to write over an existing file."""
    return (
        f"{path} exists already: give another --output, or --force to replace it "
        f"(a {what} is never overwritten without it)"
    )


# Keys every schema version wrote: a file without one is damaged, not an empty session.
REQUIRED_KEYS = ("created_at", "status", "plan", "runs")


def load(path: Path) -> Session:
    """Read a session file of this or an older schema version (with its journal's lines)."""
    try:
        return Session.model_validate(read_json(path))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise FsarenaError(f"{path} is damaged: {where}: {first['msg']}") from exc


def read_json(path: Path) -> dict[str, Any]:
    """A session file's JSON, checked as far as a dictionary can be, its journal merged."""
    try:
        raw = json.loads(path.read_bytes().decode())
    except FileNotFoundError:
        raise FsarenaError(
            f"no session file at {path}; give the path `fsarena run` printed"
        ) from None
    except UnicodeDecodeError as exc:
        raise FsarenaError(
            f"{path} is not a readable session file: {not_text(exc)}; give a session "
            "file `fsarena run` wrote"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise FsarenaError(f"{path} is not a readable session file: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("schema_version"), int):
        raise FsarenaError(f"{path} is not an fsarena session file (no schema_version)")
    missing = [k for k in REQUIRED_KEYS if k not in raw]
    if missing:
        raise FsarenaError(
            f"{path} is damaged: no {', '.join(missing)} (every session file has them); "
            "use an intact copy of it"
        )
    version = raw["schema_version"]
    if version > SCHEMA_VERSION:
        raise FsarenaError(
            f"{path} has schema version {version}, newer than this fsarena's "
            f"{SCHEMA_VERSION}; upgrade fsarena to read it"
        )
    return merge(raw, path)


def session_files(directory: Path, newest_first: bool = False) -> list[Path]:
    """The *.json files of a directory that can be session files, by name (or newest first).

    Symbolic links are followed; what is not a regular file then (a dangling link, a
    directory or a FIFO named *.json) is no session file and is passed over: it must
    not stop a run's estimate, a report or an import of the directory.
    """
    found = []
    for path in directory.glob("*.json"):
        try:
            st = path.stat()
        except OSError:  # dangling, or gone since the listing
            continue
        if stat.S_ISREG(st.st_mode):
            found.append((st.st_mtime, path))
    if newest_first:
        return [p for _, p in sorted(found, key=lambda mp: mp[0], reverse=True)]
    return sorted(p for _, p in found)


def latest(directory: Path) -> Path:
    """The newest session file in a directory."""
    return newest(directory)[0]


def newest(directory: Path) -> tuple[Path, list[tuple[Path, str]]]:
    """The newest session that measured something, and the newer files passed over, with why.

    A session with no valid run (a failed or empty run) is passed over for an
    older one that has some; if none has, the newest session is the answer.
    Files that are not sessions (e.g. a JSON summary written there) are passed over.
    """
    files = session_files(directory, newest_first=True)
    passed: list[tuple[Path, str]] = []
    first_session: Path | None = None
    for path in files:
        try:
            session = load(path)
        except FsarenaError:
            passed.append((path, "not a session file"))
            continue
        if session.ok_runs():
            return path, passed
        first_session = first_session or path
        runs = f"none of its {len(session.runs)} runs valid" if session.runs else "no run"
        passed.append((path, f"measured nothing ({runs})"))
    if first_session is None:
        raise FsarenaError(
            f"no session files in {directory}; run `fsarena run` first or give a session path"
        )
    return first_session, passed
