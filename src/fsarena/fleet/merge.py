"""The merge of many hosts' sessions: refuse bad merges, then ratios per host, never pooled.

Raw times from different machines are never averaged together. Within each host,
every filesystem's result is a ratio to the baseline filesystem measured on that
same host, with a 95 % interval (Welch's t-test on log samples, stats.ratio_test);
across hosts only those ratios are summarised: their geometric mean, and how many
hosts agree on the direction and how many of those are significant (pyperf's
compare_to does the same across benchmarks).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsarena.analysis.evidence import Index
from fsarena.analysis.ranking import ALPHA, RatioTest, ratio_test
from fsarena.errors import FsarenaError
from fsarena.measure.metrics import METRICS
from fsarena.session.file import Session, load

# Plan keys that may differ between hosts: where each host keeps its files.
HOST_LOCAL_PLAN_KEYS = frozenset({"workdir", "device"})


@dataclass(frozen=True)
class Host:
    label: str
    path: Path
    session: Session
    complete: bool

    def facts(self) -> dict[str, str]:
        """What may explain disagreement, side by side (empty: not recorded)."""
        h, s = self.session.host, self.session
        backing = h.workdir_backing
        device = s.target.model or " ".join(v for v in (backing.device, backing.model) if v)
        options = {
            name: ",".join(p.mount_options) or "defaults" for name, p in s.profiles_as_run.items()
        }
        return {
            "hostname": h.hostname,
            "machine-id": h.machine_id[:12] or "not recorded",
            "kernel": h.kernel,
            "CPU": f"{h.cpu_model} x{h.cpus or ''}",
            "device": device or "not recorded",
            "scheduler": backing.scheduler or "not recorded",
            "mount options": " ".join(f"{k}:{v}" for k, v in sorted(options.items())),
            "fsarena build": h.fsarena_build or "not recorded",
            "status": s.status,
        }


@dataclass(frozen=True)
class Cell:
    """One filesystem on one host: its ratio to the baseline there, with the test."""

    test: RatioTest

    @property
    def significant(self) -> bool:
        return self.test.p_value < ALPHA


@dataclass(frozen=True)
class Across:
    """One filesystem, one task, over the hosts that measured both it and the baseline."""

    geomean: float
    hosts: int
    better: int
    worse: int
    significant_better: int
    significant_worse: int


@dataclass
class FleetReport:
    hosts: list[Host]
    baseline: str
    metric: str
    tasks: list[str]
    filesystems: list[str]  # without the baseline
    cells: dict[tuple[str, str, str], Cell] = field(default_factory=dict)  # task, fs, host
    across: dict[tuple[str, str], Across] = field(default_factory=dict)  # task, fs
    warnings: list[str] = field(default_factory=list)

    @property
    def included(self) -> list[Host]:
        return [h for h in self.hosts if h.complete]


def load_hosts(paths: list[Path], allow_same_machine: bool = False) -> tuple[list[Host], list[str]]:
    """Load sessions and refuse merges that would mislead; returns hosts and warnings."""
    if len(paths) < 2:
        raise FsarenaError("a fleet report needs the sessions of at least two hosts")
    sessions = [(p, load(p)) for p in paths]
    _same(sessions, lambda s: s.tool_version, "fsarena versions")
    _same_build(sessions)
    _same(sessions, _comparable_plan, "plans")
    warnings = _duplicates(sessions, allow_same_machine)
    labels = [s.host.hostname or p.stem for p, s in sessions]
    if len(set(labels)) < len(labels):  # e.g. clones named alike: the files tell them apart
        labels = [p.stem for p, _ in sessions]
    hosts = [
        Host(label, p, s, s.status == "complete")
        for label, (p, s) in zip(labels, sessions, strict=True)
    ]
    for h in hosts:
        if not h.complete:
            warnings.append(
                f"{h.label} ({h.path}) is {h.session.status}, not complete: "
                "shown, never averaged in"
            )
    return hosts, warnings


def _comparable_plan(session: Session) -> dict[str, Any]:
    plan = session.plan.model_dump(mode="json")  # every key as stored, the unknown ones too
    return {k: v for k, v in plan.items() if k not in HOST_LOCAL_PLAN_KEYS}


def _same(sessions: list[tuple[Path, Session]], key: Any, what: str) -> None:
    first_path, first = sessions[0]
    for path, s in sessions[1:]:
        if key(s) != key(first):
            a, b = key(first), key(s)
            diff = (
                sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
                if isinstance(a, dict)
                else f"{a} and {b}"
            )
            raise FsarenaError(
                f"refusing to merge: different {what} in {first_path} and {path} ({diff}); "
                "run the same fsarena and plan on every host (fsarena fleet run does)"
            )


def _same_build(sessions: list[tuple[Path, Session]]) -> None:
    """Refuse sessions measured by different fsarena builds (one commit or one set of files).

    A session older than the build record has none: it merges only with others like it.
    """
    first_path, first = sessions[0]
    for path, s in sessions[1:]:
        a, b = _build(first), _build(s)
        if a != b:
            raise FsarenaError(
                f"refusing to merge: {_name(first, first_path)} ran fsarena {a} but "
                f"{_name(s, path)} ran {b}; run one build on every host "
                "(fsarena fleet run installs the controller's where it differs)"
            )


def _build(session: Session) -> str:
    return session.host.fsarena_build or "(build not recorded)"


def _name(session: Session, path: Path) -> str:
    return f"{session.host.hostname or '?'} ({path})"


def _duplicates(sessions: list[tuple[Path, Session]], allow: bool) -> list[str]:
    seen: dict[str, Path] = {}
    warnings = []
    for path, s in sessions:
        mid = s.host.machine_id
        if not mid:
            warnings.append(f"{path} records no machine-id: cannot prove it is another machine")
            continue
        if mid in seen:
            message = (
                f"{seen[mid]} and {path} come from one machine identity ({mid[:12]}, "
                "/etc/machine-id): a cloned VM, or the same host twice"
            )
            if not allow:
                raise FsarenaError(
                    f"refusing to merge: {message}; give each clone its own machine-id "
                    "(systemd-machine-id-setup), or --allow-same-machine for a test fleet"
                )
            warnings.append(f"{message}: their results are not independent")
        seen[mid] = path
    return warnings


def build(hosts: list[Host], baseline: str | None, metric: str, warnings: list[str]) -> FleetReport:
    """The report; baseline None: the plan's first filesystem."""
    if metric not in METRICS:
        raise FsarenaError(f"unknown metric {metric!r}; known: {', '.join(sorted(METRICS))}")
    first = hosts[0].session
    baseline = baseline or first.filesystems()[0]
    if baseline not in first.filesystems():
        raise FsarenaError(
            f"the baseline {baseline} is not in the plan ({', '.join(first.filesystems())}); "
            "give --baseline one of those"
        )
    others = [f for f in first.filesystems() if f != baseline]
    report = FleetReport(hosts, baseline, metric, [], others, warnings=warnings)
    indexes = {h.label: Index(h.session) for h in report.included}
    for task in first.tasks():
        for fs in others:
            for label, index in indexes.items():
                a = list(index.samples(fs, task, metric).values())
                b = list(index.samples(baseline, task, metric).values())
                if a and b:
                    report.cells[(task, fs, label)] = Cell(ratio_test(a, b))
            _summarise(report, task, fs)
        if any(k[0] == task for k in report.across):
            report.tasks.append(task)
    return report


def _summarise(report: FleetReport, task: str, fs: str) -> None:
    cells = [c for (t, f, _), c in report.cells.items() if (t, f) == (task, fs)]
    ratios = [c.test.ratio for c in cells if c.test.ratio > 0 and math.isfinite(c.test.ratio)]
    if not ratios or len(ratios) < len(cells):
        return  # a ratio of zero or nan has no geometric mean: the cells still show
    lower = METRICS[report.metric].better == "lower"
    good = [c for c in cells if (c.test.ratio < 1) == lower and c.test.ratio != 1]
    bad = [c for c in cells if (c.test.ratio > 1) == lower and c.test.ratio != 1]
    report.across[(task, fs)] = Across(
        geomean=math.exp(statistics.fmean(math.log(r) for r in ratios)),
        hosts=len(cells),
        better=len(good),
        worse=len(bad),
        significant_better=sum(c.significant for c in good),
        significant_worse=sum(c.significant for c in bad),
    )


def agreement(report: FleetReport, task: str, fs: str) -> str:
    """e.g. "xfs faster than ext4 on 7 of 9 hosts, significant on 5"."""
    a = report.across[(task, fs)]
    metric = METRICS[report.metric]
    good, bad = ("faster", "slower") if metric.unit == "s" else ("better", "worse")
    if a.better >= a.worse:
        word, count, sig = good, a.better, a.significant_better
    else:
        word, count, sig = bad, a.worse, a.significant_worse
    return f"{fs} {word} than {report.baseline} on {count} of {a.hosts} hosts, significant on {sig}"
