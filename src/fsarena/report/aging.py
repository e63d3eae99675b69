"""Aged beside fresh (--age): per filesystem and task, fresh, aged and their ratio; the aging.

Every figure comes from the session: an aged filesystem's runs are recorded
as "NAME+PROFILE" and its profile as run names its fresh twin ("fresh").
The ratio is aged / fresh of the geometric mean wall time, with the 95 %
interval of Welch's t on log times (stats.ratio_test); an interval that
excludes 1 is a change age made. The ranking line compares the order of the
geometric means, fresh and aged, task by task.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

from fsarena.analysis.ranking import ratio_test
from fsarena.analysis.stats import TOO_WIDE
from fsarena.measure.metrics import METRICS
from fsarena.report import agedref
from fsarena.report.comparison import fmt, run_value
from fsarena.report.document import Section, table_section
from fsarena.session.file import Session
from fsarena.session.records import given

LAYOUT_METRICS = (
    "extents_per_file",
    "fragmented_files_pct",
    "layout_score",
    "free_extents",
    "free_extent_mean_bytes",
)
LOOP_CAVEAT = (
    "Layout on loop images: the extents and free space above are offsets within the loop "
    "image, i.e. the layout the filesystem under test chose, but the image file itself is "
    "laid out by the host filesystem, so reads of the aged tree also pay for that layout. "
    "Run with --device for the device's own layout (aged again for every repetition there)."
)
RUNTIME_NOTE = (
    "Guests and FUSE drivers age inside their own runtime: a FUSE driver's files are written "
    "through its FUSE mount, a guest kernel's by fsarena's agent inside the guest (its "
    "device bytes and extents read there, its image snapshotted by the host while the guest "
    "has it unmounted)."
)


def pairs(session: Session) -> list[tuple[str, str]]:
    """(fresh, aged) filesystem names, in the plan's order."""
    found = []
    for name in session.filesystems():
        profile = session.profiles_as_run.get(name)
        if profile is not None and (fresh := profile.fresh):
            found.append((str(fresh), name))
    return found


def _samples(session: Session, task: str, filesystem: str, metric: str) -> list[float]:
    return [
        v
        for r in session.runs
        if r.task == task
        and r.filesystem == filesystem
        and r.status == "ok"
        and (v := run_value(r, metric)) is not None
    ]


def _gmean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _timed_tasks(session: Session) -> list[str]:
    return [t for t in session.tasks() if session.plan.info(t).timed]


def _time_rows(session: Session) -> tuple[list[list[str]], list[str]]:
    rows, changed = [], []
    for task in _timed_tasks(session):
        for fresh, aged in pairs(session):
            a = [v for v in _samples(session, task, fresh, "wall_s") if v > 0]
            b = [v for v in _samples(session, task, aged, "wall_s") if v > 0]
            if not a or not b:
                continue
            test = ratio_test(b, a)
            interval = (
                "-"
                if math.isnan(test.low)
                else f"over {TOO_WIDE:.0f}× wide: too few runs"
                if test.low <= 0 or test.high / test.low > TOO_WIDE
                else f"{fmt(test.low, 3)}–{fmt(test.high, 3)}"
            )
            if not math.isnan(test.low) and (test.low > 1 or test.high < 1):
                changed.append(f"{task} on {fresh}: {fmt(test.ratio, 3)}x")
            rows.append(
                [
                    task,
                    fresh,
                    f"{fmt(_gmean(a))} s",
                    f"{fmt(_gmean(b))} s",
                    fmt(test.ratio, 3),
                    interval,
                    f"{len(a)}/{len(b)}",
                ]
            )
    return rows, changed


def _differs(a: Sequence[float], b: Sequence[float]) -> int:
    """+1 if a is surely slower than b, -1 if surely faster, 0 if the 95 % interval has 1."""
    test = ratio_test(a, b)
    if math.isnan(test.low):
        return 0
    return 1 if test.low > 1 else -1 if test.high < 1 else 0


def _flips(session: Session, task: str, fresh_order: list[str], aged_order: list[str]) -> str:
    """The pairs whose order age reversed, each with whether both orders are significant."""
    aged_of = dict(pairs(session))
    found = []
    for i, a in enumerate(fresh_order):
        for b in fresh_order[i + 1 :]:
            if aged_order.index(a) < aged_order.index(b):
                continue  # same order aged
            fresh_sure = _differs(
                _walls(session, task, b), _walls(session, task, a)
            )  # b slower fresh
            aged_sure = _differs(
                _walls(session, task, aged_of[a]), _walls(session, task, aged_of[b])
            )  # a slower aged
            sure = fresh_sure == 1 and aged_sure == 1
            found.append(f"{a}/{b} {'significant both ways' if sure else 'within noise'}")
    return "; ".join(found)


def _walls(session: Session, task: str, filesystem: str) -> list[float]:
    return [v for v in _samples(session, task, filesystem, "wall_s") if v > 0]


def groups(session: Session) -> dict[str, list[tuple[str, str]]]:
    """The (fresh, aged) pairs by their fresh filesystem's group (driver kind, guest kernel)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for fresh, aged in pairs(session):
        profile = session.profiles_as_run.get(fresh)
        found.setdefault(str(given(profile.group if profile else None, "kernel")), []).append(
            (fresh, aged)
        )
    return found


def rankings(session: Session) -> list[str]:
    """Per timed task and group, the order of the filesystems fresh and aged, and whether it
    changed. Only filesystems of one group are ranked together: a guest kernel's or a FUSE
    driver's times include their runtime's own cost (report.groups).

    A flipped pair is "significant both ways" when the fresh order and the aged
    order are each backed by a 95 % interval excluding 1; otherwise it is noise.
    """
    lines, flipped, sure, total = [], 0, 0, 0
    ranked = {g: both for g, both in groups(session).items() if len(both) >= 2}
    for group, both in ranked.items():
        where = f" ({group})" if len(ranked) > 1 else ""
        for task in _timed_tasks(session):
            total += _ranked_task(session, task, both)
            means = {}
            for fresh, aged in both:
                a, b = _walls(session, task, fresh), _walls(session, task, aged)
                if a and b:
                    means[fresh] = (_gmean(a), _gmean(b))
            if len(means) < 2:
                continue
            fresh_order = sorted(means, key=lambda f: means[f][0])
            aged_order = sorted(means, key=lambda f: means[f][1])
            if fresh_order != aged_order:
                flipped += 1
                detail = _flips(session, task, fresh_order, aged_order)
                sure += "significant" in detail
                lines.append(
                    f"{task}{where}: the ranking changed with age: fresh "
                    f"{' < '.join(fresh_order)}; aged {' < '.join(aged_order)} (fastest first, "
                    f"geometric means; {detail})"
                )
    head = (
        f"Ranking with age: the order changed in {flipped} of {total} timed tasks, "
        f"significantly (95 %, both fresh and aged) in {sure}."
        if flipped
        else f"Ranking with age: the same order, fresh and aged, in all {total} timed tasks."
    )
    return [head, *lines]


def verdict(session: Session) -> str:
    """One sentence for the verdicts: whether age changed the ranking ("" without --age)."""
    return rankings(session)[0] if _rankable(session) else ""


def _rankable(session: Session) -> bool:
    return any(len(both) >= 2 for both in groups(session).values())


def _ranked_task(session: Session, task: str, both: list[tuple[str, str]]) -> bool:
    found = [f for f, a in both if _samples(session, task, f, "wall_s")]
    return len(found) >= 2 and all(_samples(session, task, a, "wall_s") for _, a in both)


def _layout_rows(session: Session) -> list[list[str]]:
    rows = []
    for fresh, aged in pairs(session):
        for label, name in (("fresh", fresh), ("aged", aged)):
            cells = [name, label]
            for metric in LAYOUT_METRICS:
                values = _samples(session, "aged_layout", name, metric)
                m = METRICS[metric]
                cells.append(fmt(sum(values) / len(values) * m.scale) if values else "-")
            rows.append(cells)
    return rows


def _missing_figures(session: Session) -> list[str]:
    """Why a filesystem has no extent or no free-space figures, where its layout was read."""
    lines = []
    for fresh, aged in pairs(session):
        probes = [
            r
            for r in session.runs
            if r.task == "aged_layout" and r.filesystem in (fresh, aged) and r.status == "ok"
        ]
        if not probes:
            continue
        if why := next(
            (str(r.details["no_extents"]) for r in probes if r.details.get("no_extents")), ""
        ):
            lines.append(f"{fresh}: no extent figures nor layout score: {why}.")
        if not any("free_extents" in r.values for r in probes):
            profile = session.profiles_as_run.get(fresh)
            fstype = profile.fstype if profile else fresh
            lines.append(
                f"{fresh}: no free-space figures: fsarena knows no read-only free-space tool "
                f"for {fstype}."
            )
    return lines


def _group_note(session: Session) -> list[str]:
    """Which filesystems are ranked together, when a guest or FUSE driver runs some of them."""
    found = groups(session)
    if len(found) < 2:
        return []
    named = "; ".join(f"{g}: {', '.join(f for f, _ in both)}" for g, both in found.items())
    return [
        f"Groups (ranked within a group only; a guest kernel's or FUSE driver's times include "
        f"its runtime's cost): {named}."
    ]


def _aging_rows(session: Session) -> list[list[str]]:
    rows = []
    for name, a in session.aging.items():
        wall = float(a.wall_s)
        written = float(a.bytes_written)
        rows.append(
            [
                name,
                f"{fmt(wall)} s",
                f"{written / 1e9:.2f} GB",
                f"{written / wall / 1e6:,.0f} MB/s" if wall > 0 else "-",
                f"{float(a.device_write_bytes) / 1e9:.2f} GB",
                str(given(a.files, "-")),
                str(given(a.rounds, "-")),
                str(given(a.stopped_by, "-")),
                str(given(a.manifest_digest, ""))[:12],
                "yes" if a.on_disk_matches else "NO",
                f"{given(a.snapshot_method, '-')}, {fmt(float(a.snapshot_s))} s",
            ]
        )
    return rows


def _against_ceiling(session: Session) -> list[str]:
    """The aging's write rate as a share of fio's write ceiling measured in the same run."""
    ceiling = session.ceiling("write")
    rates = [
        float(a.bytes_written) / float(a.wall_s)
        for a in session.aging.values()
        if a.wall_s and a.bytes_written
    ]
    if ceiling is None or not rates:
        return []
    # Why it is slow: the bench measured it for churn; a git replay is git's processes.
    replayed = any(a.profile and a.profile.kind == "git-replay" for a in session.aging.values())
    why = (
        "one git pull (fetch, upload-pack, merge: several processes) after another sets its pace"
        if replayed
        else "the fsyncs and small files set its pace (bench/aging_throughput.py measures both)"
    )
    return [
        f"Aging wrote at {min(rates) / ceiling:.1%}-{max(rates) / ceiling:.1%} of the device's "
        f"write ceiling ({ceiling / 1e6:,.0f} MB/s, fio, this run): {why}."
    ]


def sections(session: Session) -> list[Section]:
    """The aged-vs-fresh sections; none for a session run without --age."""
    if not pairs(session):
        return []
    age = session.plan.age
    time_rows, changed = _time_rows(session)
    digests = {str(a.manifest_digest) for a in session.aging.values()}
    same = (
        "the same file set on every filesystem (one manifest digest)"
        if len(digests) == 1
        else f"{len(digests)} different file sets: the aging did not end alike everywhere"
    )
    beside = agedref.section(
        session, pairs(session), partial(_walls, session), partial(_samples, session)
    )
    return [
        table_section(
            f"Aged ({given(age.name if age else None)}) beside fresh: time per task",
            ["task", "filesystem", "fresh", "aged", "aged/fresh", "95 % interval", "n"],
            time_rows,
            [
                "aged/fresh: ratio of geometric mean wall times; interval: Welch's t on log "
                "times, 95 %; above 1, slower aged.",
                f"Changed by age (interval excludes 1): {', '.join(changed) or 'none'}.",
                *(rankings(session) if _rankable(session) else []),
                *_group_note(session),
            ],
        ),
        table_section(
            "Layout of the aged tree (aged_layout), fresh and aged",
            ["filesystem", "state"]
            + [f"{METRICS[m].label} {METRICS[m].unit}".strip() for m in LAYOUT_METRICS],
            _layout_rows(session),
            [
                "extents from FIEMAP; layout score: 1 - discontiguities / 4 KiB blocks in "
                "traversal order (static, after Conway et al.'s dynamic layout score; no "
                "blktrace here); free space from the filesystem's own tool, '-' where it has "
                "none.",
                *_missing_figures(session),
                LOOP_CAVEAT,
                RUNTIME_NOTE,
            ],
        ),
        table_section(
            "Aging, once per filesystem and seed",
            [
                "filesystem",
                "wall",
                "written",
                "rate",
                "device written",
                "files",
                "rounds",
                "stopped by",
                "manifest",
                "on disk = planned",
                "snapshot",
            ],
            _aging_rows(session),
            [
                f"Profile: {given(age.name if age else None)}: {age.source if age else ''}",
                *agedref.history_lines(session),
                f"Result: {same}.",
                *_against_ceiling(session),
            ],
        ),
        *([beside] if beside else []),
    ]
