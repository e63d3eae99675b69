"""The view merged from many bundles: per comparison key, how within-host ratios are spread.

Raw times from different machines are never pooled: each session gives, per
task and filesystem, the ratio of its figure to the baseline filesystem's
measured in that same session (the ratio of their geometric means over the
rounds, as the fleet and the reports estimate it: analysis.ranking.point_ratio),
on the task's headline metric (its table's first column). A ratio's key is the
result's comparison key (session/key.py) with the baseline's filesystem fields
and the metric: two ratios are pooled only when their keys are equal, and a key
the session could not complete (an older session: no device class, no task
versions) is pooled with nothing.

Within a key, each host counts once however many sessions it sent: its value
is the geometric mean of its sessions' ratios, and the distribution is over
hosts. Fewer than MIN_HOSTS hosts are shown as such, with their values, never
as percentiles; a percentile p is given only when at least one host is expected
beyond it on either side (hosts x min(p, 100 - p) / 100 >= 1: the 10th and 90th
from 10 hosts, the 5th and 95th from 20). A session of yours is placed among the
other hosts (your own host's sessions left out): its percentile rank is the
share of those hosts whose ratio is lower, ties counted half.
"""

from __future__ import annotations

import hashlib
import math
import re
import statistics
import subprocess
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from fsarena.analysis.adaptive import headline_columns
from fsarena.analysis.evidence import Index
from fsarena.analysis.ranking import point_ratio
from fsarena.errors import FsarenaError
from fsarena.measure.metrics import METRICS
from fsarena.session.file import Run, Session
from fsarena.session.key import KeyParts, digest, missing
from fsarena.session.records import PlanRecord, TaskInfo
from fsarena.share.bundle import canonical, read

MIN_HOSTS = 5
PERCENTILES = (5, 10, 25, 50, 75, 90, 95)
# The fields of a result's key that are the filesystem's: the baseline's go into a ratio's key.
FILESYSTEM_FIELDS = (
    "fstype", "driver", "mkfs", "mount_options", "data_dir_attributes", "image_size_bytes",
    "aged", "mkfs_version", "kernel", "device",
)  # fmt: skip
# What of a bundle's run the analysis reads (Index: status, values, measurements).
RUN_FIELDS = (
    "filesystem", "task", "repetition", "status", "fault", "measurement", "repeats", "values",
)  # fmt: skip
# The fields a view's section shares: where and how it ran (against one baseline).
CONTEXT_FIELDS = (
    "scheme", "scale", "source", "cold_caches", "emulated_machine", "kernel", "device",
)  # fmt: skip


@dataclass(frozen=True)
class Shared:
    """One verified bundle and where it was read from."""

    where: str
    body: dict[str, Any]

    @property
    def host(self) -> str:
        return str(self.body["host"]["id"])

    @property
    def session(self) -> str:
        return str(self.body["session"]["id"])

    @cached_property
    def runs(self) -> str:
        """The digest of its runs: the same session shared twice under two salts has one."""
        return hashlib.sha256(canonical(self.body["runs"])).hexdigest()

    @cached_property
    def results(self) -> Session:
        """Its runs as a session, for the analysis that reads sessions (as_session)."""
        return as_session(self.body)


@dataclass(frozen=True)
class Ratio:
    """One session's ratio of a filesystem to the baseline on one task, and its key."""

    task: str
    filesystem: str
    baseline: str
    metric: str
    value: float
    fields: dict[str, Any]
    key: str  # digest of fields
    host: str
    session: str

    @property
    def complete(self) -> bool:
        """Whether the session recorded every field of its key (else it is pooled with none)."""
        return not missing(self.fields)


def stem(name: str) -> str:
    """A filesystem's name without its driver or aging: "jfs@uml" is jfs's, "x+git" x's."""
    return re.split(r"[@+]", name, maxsplit=1)[0]


# ---------------------------------------------------------------- reading bundles


def bundle_files(paths: Sequence[Path]) -> list[Path]:
    """The files named, those under directories named, and in a git repository the files
    it tracks (what was published, not what lies around in its work tree)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir() and (path / ".git").exists():
            found += _tracked(path)
        elif path.is_dir():
            found += sorted(p for p in path.rglob("*.json") if ".git" not in p.parts)
        elif path.exists():
            found.append(path)
        else:
            raise FsarenaError(
                f"no bundle or directory at {path}; give bundles `fsarena share` wrote"
            )
    return list(dict.fromkeys(found))


def _tracked(repository: Path) -> list[Path]:
    out = subprocess.run(
        ["git", "-C", str(repository), "ls-files", "-z", "--", "*.json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise FsarenaError(
            f"cannot list the files of the git repository {repository}: {out.stderr.strip()}"
        )
    return sorted(repository / name for name in out.stdout.split("\0") if name)


def load_bundles(paths: Sequence[Path]) -> tuple[list[Shared], list[str]]:
    """Every bundle that verifies, a session sent twice once (by its pseudonym, or by its runs
    when another salt sent it again); and what was left out, and why."""
    shared: list[Shared] = []
    left_out: list[str] = []
    seen: dict[str, str] = {}
    for path in bundle_files(paths):
        try:
            body = read(path)
        except FsarenaError as exc:
            left_out.append(str(exc))
            continue
        item = Shared(str(path), body)
        why = damage(item)
        if why:
            left_out.append(f"{path}: verifies, but does not hold what a bundle holds ({why})")
            continue
        first = seen.get(item.session) or seen.get(item.runs)
        if first:
            left_out.append(f"{path}: the same session as {first}: counted once")
            continue
        seen[item.session] = seen[item.runs] = str(path)
        shared.append(item)
    return shared, left_out


def damage(item: Shared) -> str:
    """Why a bundle's contents cannot be read as results ("" when they can): one whose digest
    matches may still have been made by hand."""
    try:
        KeyParts(**item.body["key"])
        item.results, item.host, item.session  # noqa: B018 (read to check they are there)
    # pydantic's ValidationError is a ValueError
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return ""


def as_session(body: dict[str, Any]) -> Session:
    """The bundle's runs as a session, for the analysis that reads sessions (Index)."""
    s = body["session"]
    plan = PlanRecord(
        filesystems=s["filesystems"],
        tasks=s["tasks"],
        task_info={t: TaskInfo.model_validate(info) for t, info in body["tasks"].items()},
    )
    runs = [
        Run.model_validate({k: r[k] for k in RUN_FIELDS} | {"started_at": ""}) for r in body["runs"]
    ]
    return Session(tool_version=s["fsarena"], created_at=s["month"], plan=plan, runs=runs)


# ---------------------------------------------------------------- ratios


def ratios(item: Shared, baseline: str) -> list[Ratio]:
    """Each (task, filesystem) ratio to the baseline in one bundle's session."""
    session = item.results
    index = Index(session)
    heads = headline_columns(session)
    key = KeyParts(**item.body["key"])
    found = []
    for task in session.tasks():
        metric = (heads.get(task) or ["wall_s"])[0]
        if metric not in METRICS or not METRICS[metric].ranked:
            continue
        for fs in session.filesystems():
            base = baseline_for(fs, baseline, key)
            if base is None:
                continue
            a = list(index.samples(fs, task, metric).values())
            b = list(index.samples(base, task, metric).values())
            if not a or not b:
                continue
            value = point_ratio(a, b)
            if not (math.isfinite(value) and value > 0):
                continue
            fields = ratio_fields(key, task, fs, base, metric)
            ident = (item.host, item.session)
            found.append(Ratio(task, fs, base, metric, value, fields, digest(fields), *ident))
    return found


def baseline_for(fs: str, baseline: str, key: KeyParts) -> str | None:
    """The filesystem fs is compared with: the baseline run by the same driver (and aged
    alike); None for the baseline itself, or when the session has no such baseline."""
    if stem(fs) == baseline or fs not in key.filesystems:
        return None
    mine = key.filesystems[fs]
    for name, other in key.filesystems.items():
        if (
            stem(name) == baseline
            and other["driver"] == mine["driver"]
            and other["aged"] == mine["aged"]
        ):
            return name
    return None


def ratio_fields(key: KeyParts, task: str, fs: str, base: str, metric: str) -> dict[str, Any]:
    """A ratio's key: the filesystem's result key, the baseline's filesystem fields, the metric."""
    other = key.filesystems[base]
    return {
        **key.fields(task, fs),
        "metric": metric,
        "baseline": {name: other[name] for name in FILESYSTEM_FIELDS if name in other},
    }


# ---------------------------------------------------------------- pooled


@dataclass
class Group:
    """The ratios of one key, from every bundle that has it."""

    key: str
    task: str
    filesystem: str  # the name most of its sessions gave it
    baseline: str
    metric: str
    fields: dict[str, Any]
    complete: bool
    ratios: list[Ratio] = field(default_factory=list)

    def host_values(self, without: str = "") -> dict[str, float]:
        """Each host's ratio: the geometric mean over its sessions (a host counts once)."""
        by_host: dict[str, list[float]] = defaultdict(list)
        for r in self.ratios:
            if r.host != without:
                by_host[r.host].append(r.value)
        return {h: _geomean(v) for h, v in sorted(by_host.items())}

    def sessions(self, without: str = "") -> int:
        return sum(r.host != without for r in self.ratios)

    def percentiles(self, without: str = "") -> dict[int, float]:
        """The percentiles its hosts support ({} under MIN_HOSTS hosts; see the module)."""
        values = sorted(self.host_values(without).values())
        if len(values) < MIN_HOSTS:
            return {}
        cuts = statistics.quantiles(values, n=100, method="inclusive")
        return {p: cuts[p - 1] for p in PERCENTILES if len(values) * min(p, 100 - p) >= 100}

    @property
    def context(self) -> tuple[str, ...]:
        """What its section shares: the conditions, kernel, device and baseline."""
        shared = {k: self.fields.get(k) for k in CONTEXT_FIELDS}
        return (digest({**shared, "baseline": self.fields.get("baseline")}),)


def _geomean(values: Iterable[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def pool(found: Iterable[Ratio]) -> list[Group]:
    """Ratios grouped by key; an incomplete key is a group of its one session's ratio."""
    groups: dict[tuple[str, str], Group] = {}
    names: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in found:
        ident = (r.key, "" if r.complete else r.session)
        if ident not in groups:
            groups[ident] = Group(
                r.key, r.task, r.filesystem, r.baseline, r.metric, r.fields, r.complete
            )
        groups[ident].ratios.append(r)
        names[ident][r.filesystem] += 1
    for ident, group in groups.items():
        group.filesystem = max(sorted(names[ident]), key=lambda n: names[ident][n])
    return list(groups.values())


# ---------------------------------------------------------------- yours


@dataclass(frozen=True)
class Placement:
    """Where one of your ratios falls among the other hosts with the same key."""

    mine: Ratio
    group: Group | None  # None: no bundle has its key
    rank_pct: float | None  # share of the other hosts below it, ties half (None: too few)
    others: dict[str, float]  # the other hosts' values
    sessions: int  # the other hosts' sessions
    nearest: Group | None = None  # no match: the group of the same comparison closest to it
    differs: tuple[str, ...] = ()  # the key fields in which the nearest differs


def place(mine: Ratio, groups: Sequence[Group]) -> Placement:
    """Your ratio among the other hosts' with its key; the nearest key when none has it."""
    group = next((g for g in groups if g.key == mine.key and g.complete and mine.complete), None)
    if group is None:
        near, differs = nearest(mine, groups)
        return Placement(mine, None, None, {}, 0, near, differs)
    others = group.host_values(without=mine.host)
    sessions = group.sessions(without=mine.host)
    if len(others) < MIN_HOSTS:
        return Placement(mine, group, None, others, sessions)
    below = sum(v < mine.value for v in others.values())
    equal = sum(v == mine.value for v in others.values())
    return Placement(mine, group, 100 * (below + equal / 2) / len(others), others, sessions)


def nearest(mine: Ratio, groups: Sequence[Group]) -> tuple[Group | None, tuple[str, ...]]:
    """The group of the same task, filesystem type, baseline and metric whose key differs from
    yours in the fewest fields, and those fields."""
    same = [
        g
        for g in groups
        if (g.task, g.metric) == (mine.task, mine.metric)
        and g.fields.get("fstype") == mine.fields.get("fstype")
        and stem(g.baseline) == stem(mine.baseline)
        and any(r.session != mine.session for r in g.ratios)
    ]
    if not same:
        return None, ()
    scored = [(differences(mine.fields, g.fields), g) for g in same]
    differs, group = min(scored, key=lambda s: (len(s[0]), -len(s[1].host_values())))
    return group, tuple(differs)


def differences(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    """The fields in which two keys differ, as paths ("device", "baseline.device"), the
    top-level ones first."""
    found: list[str] = []
    for name in sorted({*a, *b}):
        x, y = a.get(name), b.get(name)
        if isinstance(x, dict) and isinstance(y, dict) and name != "datasets":
            found += differences(x, y, f"{prefix}{name}.")
        elif x != y:
            found.append(prefix + name)
    return sorted(found, key=lambda path: (path.count("."), path))


# ---------------------------------------------------------------- the view


@dataclass(frozen=True)
class View:
    """Every group of ratios from the bundles read, what was left out, and yours placed."""

    baseline: str
    shared: list[Shared]
    left_out: list[str]
    groups: list[Group]
    tasks: list[str]  # in the order the bundles' plans ran them
    placements: list[Placement]
    yours: str = ""  # where your session was read from ("" for none)

    @property
    def hosts(self) -> int:
        return len({s.host for s in self.shared})


def build(paths: Sequence[Path], baseline: str, mine: Shared | None = None) -> View:
    """The view of the bundles under paths, compared with baseline; mine placed among them."""
    shared, left_out = load_bundles(paths)
    if not shared:
        raise FsarenaError(
            f"no bundle to view in {', '.join(map(str, paths))}"
            + (f" ({len(left_out)} left out: {left_out[0]})" if left_out else "")
            + "; give bundles `fsarena share` wrote, or a directory or git repository of them"
        )
    each = [(item, ratios(item, baseline)) for item in shared]
    found = [r for _, found in each for r in found]
    if not found:
        raise FsarenaError(
            f"none of the {len(shared)} bundles has {baseline} beside another filesystem: give "
            "--baseline one that every session ran (see their filesystems)"
        )
    groups = pool(found)
    tasks = list(dict.fromkeys(t for s in shared for t in s.body["session"]["tasks"]))
    placements = []
    if mine is not None:  # among the others: your session itself left out, whoever sent it
        others = pool(r for item, found in each if item.runs != mine.runs for r in found)
        placements = [place(r, others) for r in ratios(mine, baseline)]
    return View(baseline, shared, left_out, groups, tasks, placements, mine.where if mine else "")
