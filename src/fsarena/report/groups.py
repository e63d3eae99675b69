"""Driver groups: results are ranked only within a group, and guest results only as ratios.

A filesystem's group comes from the session (profiles_as_run[name]["group"],
"kernel" for sessions that predate drivers): "kernel" (the host kernel's own
drivers, absolute numbers), "fuse" (user-space drivers on the host, absolute
but of another implementation) and "guest:KERNEL" (inside a guest kernel,
where times include the emulator: shown as ratios to the reference filesystem
run in the same guest, repetition by repetition). A table whose rows are all
kernel-driven renders exactly as before.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from fsarena.analysis.scope import KERNEL, group_of, ranked_group
from fsarena.measure.metrics import METRICS
from fsarena.report.cells import grid
from fsarena.report.comparison import Row, TaskTable, fmt, run_value
from fsarena.session.file import Session

# Per group: a title, one sentence beside each of its tables, and the full
# explanation that the report prints once (see explanations()).
_WORDS = {
    KERNEL: ("Host kernel drivers", "", ""),
    "fuse": (
        "FUSE drivers (user space, on this host)",
        "Native times of user-space drivers ({tools}), not of in-kernel filesystems: "
        "compare them with each other only.",
        "FUSE drivers ({tools}) ran as user-space programs on this host. Their times are real "
        "and measured natively, but they measure those programs, not the in-kernel filesystems "
        "most systems mount, and they are never ranked against the host kernel drivers.{verdicts}",
    ),
    "guest": (
        "Guest kernel {guest}{label}: ratios to {reference} in the same guest",
        "Values are ratios to {reference} run in the same guest and repetitions (1 = as fast, "
        "2 = twice as long); never compare them with the host's numbers.",
        "Filesystems the host kernel lacks ran inside a {guest} guest kernel{label}, where every "
        "system call and disk access is emulated, so a time there includes the emulator's cost "
        "and says nothing on its own. Every guest run therefore also ran {reference} in the "
        "same guest, and guest results are shown only as ratios to it, repetition by "
        "repetition: 1 means as fast as {reference}, 2 twice as long (for counts and bytes, "
        "twice as many). They are never ranked against the host's absolute numbers.{verdicts}",
    ),
    "aged": (
        "Aged filesystems ({guest} drivers)",
        "The same filesystems after aging (--age), restored from one snapshot per repetition: "
        "compare them with each other here, and with their fresh selves in the aged section.",
        "Filesystems named NAME+PROFILE ran aged (--age): aged once per seed, snapshotted, and "
        "restored for every repetition. They are ranked among themselves, never against the "
        "fresh filesystems; the aged-beside-fresh section gives each one's ratio to its fresh "
        "self.{verdicts}",
    ),
}


@dataclass(frozen=True)
class GroupPart:
    """The rows of one task table that belong to one driver group, ready to render."""

    key: str
    title: str
    explanation: str
    headers: list[str]
    cells: list[list[str]]


def _tool(session: Session, filesystem: str) -> str:
    """The program that mounted it (a FUSE driver), from the profile as run."""
    command = session.profile(filesystem).mount_command or [""]
    return str(command[0])


def split(session: Session, table: TaskTable) -> list[GroupPart]:
    """The table's rows by driver group, kernel first; one untitled part if all are kernel."""
    keys = sorted({group_of(session, r.filesystem) for r in table.rows}, key=_order)
    if keys == [KERNEL]:
        headers, cells = grid(table)
        return [GroupPart(KERNEL, "", "", headers, cells)]
    return [_part(session, table, key) for key in keys]


def _texts(session: Session, key: str, rows: list[Row]) -> tuple[str, str, str]:
    """Title, sentence beside the table, and full explanation of a group."""
    kind, _, guest = key.partition(":")
    names = [r.filesystem for r in rows]
    reference = (session.profile(names[0]).reference or "") if names else ""
    tools = ", ".join(sorted({_tool(session, n) for n in names} - {""}))
    verdicts = "" if key == ranked_group(session) else " The verdicts do not include them."
    label = (session.profile(names[0]).guest_label or "") if names and guest else ""
    fill = {
        "guest": guest,
        "label": f" ({label})" if label else "",
        "reference": reference,
        "tools": tools,
        "verdicts": verdicts,
    }
    texts = _WORDS.get(kind, (key, "", ""))
    return texts[0].format(**fill), texts[1].format(**fill), texts[2].format(**fill)


def explanations(session: Session) -> list[str]:
    """What each non-kernel driver group means, once per report (empty if all are kernel)."""
    by_group: dict[str, list[str]] = {}
    for fs in session.filesystems():
        by_group.setdefault(group_of(session, fs), []).append(fs)
    found = []
    for key in sorted(by_group, key=_order):
        if key != KERNEL:
            rows = [Row(fs, 0, 0, 0, {}) for fs in by_group[key]]
            found.append(_texts(session, key, rows)[2])
    return found


def _order(key: str) -> tuple[int, str]:
    return ({KERNEL: 0, "fuse": 1}.get(key, 2), key)


def _subtable(table: TaskTable, rows: list[Row]) -> TaskTable:
    return TaskTable(
        table.task, table.kind, table.description, table.timed, table.columns, tuple(rows)
    )


def _part(session: Session, table: TaskTable, key: str) -> GroupPart:
    rows = [r for r in table.rows if group_of(session, r.filesystem) == key]
    title, words, _ = _texts(session, key, rows)
    reference = (session.profile(rows[0].filesystem).reference or "") if rows else ""
    rows.sort(key=lambda r: r.filesystem != reference)  # the reference first
    if not table.timed:  # probes (space): values as measured, whatever the driver
        title = title.partition(":")[0]
        words = "Space depends on the on-disk format, not on speed: shown as measured."
    if not reference or not table.timed:
        headers, cells = grid(_subtable(table, rows))
        return GroupPart(key, title, words, headers, cells)
    headers, cells = _ratio_grid(session, table, rows, reference)
    return GroupPart(key, title, words + _native_note(session, table, reference), headers, cells)


def _paired_ratios(session: Session, task: str, fs: str, reference: str) -> list[float]:
    """wall_s of fs / wall_s of the reference, repetition by repetition (same conditions)."""

    def walls(name: str) -> dict[int, float]:
        return {
            r.repetition: v
            for r in session.runs
            if r.task == task
            and r.filesystem == name
            and r.status == "ok"
            and (v := run_value(r, "wall_s")) is not None
        }

    mine, ref = walls(fs), walls(reference)
    return [mine[k] / ref[k] for k in sorted(mine) if k in ref and ref[k] > 0]


def _ratio_grid(
    session: Session, table: TaskTable, rows: list[Row], reference: str
) -> tuple[list[str], list[list[str]]]:
    ref_row = next((r for r in table.rows if r.filesystem == reference), None)
    headers = ["filesystem", "n", f"time × {reference} (mean ± sd)", "min–max"]
    headers += [f"{METRICS[c].label} ×" for c in table.columns[1:]]
    cells = []
    for row in rows:
        ratios = _paired_ratios(session, table.task, row.filesystem, reference)
        line = [row.filesystem, str(row.n_ok)]
        if ratios:
            sd = statistics.stdev(ratios) if len(ratios) > 1 else 0.0
            line += [
                f"{fmt(statistics.fmean(ratios))} ± {fmt(sd, 2)}",
                f"{fmt(min(ratios))}–{fmt(max(ratios))}",
            ]
        else:
            line += ["-", "-"]
        for column in table.columns[1:]:
            mine = row.stats.get(column)
            ref = ref_row.stats.get(column) if ref_row else None
            ok = mine is not None and ref is not None and ref.mean != 0
            line.append(fmt(mine.mean / ref.mean) if ok else "-")  # type: ignore[union-attr]
        if row.n_failed or row.n_skipped:
            line[1] += (
                f" ({row.n_failed} failed)" if row.n_failed else f" ({row.n_skipped} skipped)"
            )
        cells.append(line)
    return headers, cells


def _mean_wall(session: Session, task: str, filesystem: str) -> float | None:
    walls = [
        v
        for r in session.runs
        if r.task == task
        and r.filesystem == filesystem
        and r.status == "ok"
        and (v := run_value(r, "wall_s")) is not None
    ]
    return statistics.fmean(walls) if walls else None


def _native_note(session: Session, table: TaskTable, reference: str) -> str:
    """What the emulator cost in this run, where the reference also ran on the host."""
    native = session.profile(reference).base or ""
    in_guest = _mean_wall(session, table.task, reference)
    on_host = _mean_wall(session, table.task, native) if native else None
    if in_guest is None or not on_host:
        return ""
    return (
        f" Measured in this run: {reference} in the guest took {fmt(in_guest / on_host, 3)}× "
        f"the time of {native} on the host for this task."
    )
