"""The power-loss test's detailed tables, per filesystem and workload, from the runs' raw outcomes.

Every figure is computed here from the stored per-state outcomes
(fsarena.powerloss.results), as sections of the report's document.
"""

from __future__ import annotations

from fsarena.powerloss.results import (
    UNSYNCED_OUTCOMES,
    WorkloadResult,
    WorkloadStats,
    parse_details,
    summarize,
)
from fsarena.report.comparison import fmt
from fsarena.report.document import Section, table_section
from fsarena.session.file import Session


def results(session: Session) -> list[tuple[int, WorkloadResult]]:
    """Every workload result in the session with its run's repetition, controls first."""
    found: list[tuple[int, WorkloadResult]] = []
    for run in session.runs:
        details = parse_details(run.details)
        if details is not None:
            found.extend((run.repetition, r) for r in details.all_results())
    return sorted(found, key=lambda pair: not pair[1].control)


def _ms(value: float | None) -> str:
    return "-" if value is None else fmt(value, 3)


def _name(result: WorkloadResult, repetition: int | None = None) -> str:
    """The filesystem's name, '(control)' after it, ', repetition N' when a workload repeats."""
    name = f"{result.filesystem} (control)" if result.control else result.filesystem
    return name if repetition is None else f"{name}, repetition {repetition}"


def _repeated(found: list[tuple[int, WorkloadResult]]) -> bool:
    """Whether some filesystem's workload ran in several repetitions (rows must say which)."""
    keys = [(r.filesystem, r.control, r.workload) for _, r in found]
    return len(keys) != len(set(keys))


def _outcome_row(result: WorkloadResult, s: WorkloadStats, name: str) -> list[str]:
    return [
        name,
        result.workload,
        str(s.states),
        fmt(s.mounted_pct, 3),
        fmt(s.fsck_clean_pct, 3),
        str(s.states_losing_data),
        str(len(s.files_lost)),
        f"{_ms(s.mount_ms_median)} / {_ms(s.mount_ms_max)}",
        _ms(s.clean_mount_ms_median),
        _ms(s.fsck_ms_median),
    ]


def _findings(result: WorkloadResult, s: WorkloadStats, repetition: int | None) -> list[str]:
    head = f"{_name(result)} {result.workload}"
    head += "" if repetition is None else f" (repetition {repetition})"
    if result.status != "ok":
        return [f"{head}: {result.status.upper()}: {result.error}"]
    notes = []
    if result.control:
        verdict = "as it must without flushes" if s.states_losing_data else "REFUSED: it must"
        notes.append(
            f"{head}: fsync'ed data lost in {s.states_losing_data} of {s.states} states "
            f"({len(s.files_lost)} files), {verdict}: the harness sees losses"
        )
    elif s.states_losing_data:
        saved = [st.saved_image for st in result.states if st.saved_image]
        notes.append(
            f"SERIOUS: {head}: fsync'ed data lost in {s.states_losing_data} of {s.states} "
            f"states: {', '.join(s.files_lost[:5])}"
            + (f"; states saved for inspection: {', '.join(saved)}" if saved else "")
        )
    if not result.control and s.mounted < s.states:
        notes.append(f"SERIOUS: {head}: {s.states - s.mounted} of {s.states} states do not mount")
    if s.states_resurrecting and not result.control:
        notes.append(f"{head}: a durable deletion undone in {s.states_resurrecting} states")
    return notes


def sections(session: Session) -> list[Section]:
    found = results(session)
    if not found:
        return []
    outcome_rows, unsynced_rows, notes = [], [], []
    repeated = _repeated(found)
    for repetition, result in found:
        s = summarize(result)
        which = repetition if repeated else None
        name = _name(result, which)
        notes.extend(_findings(result, s, which))
        if result.status != "ok":
            continue
        outcome_rows.append(_outcome_row(result, s, name))
        for path, counts in sorted(s.unsynced.items()):
            cells = [str(counts.get(o, 0)) for o in UNSYNCED_OUTCOMES]
            unsynced_rows.append([name, result.workload, path, *cells])
    tested = [r for _, r in found if not r.control] or [r for _, r in found]
    caps = ", ".join(str(c) for c in sorted({r.states_cap for r in tested}))
    seeds = ", ".join(str(s) for s in sorted({r.seed for r in tested}))
    method = (
        f"at most {caps} states per workload, seed {seeds}; "
        "a state: the post-mkfs image, every write before a flush, and a prefix or random "
        "subset of the writes after it; mount ms: median / max of the recovery mounts"
    )
    return [
        table_section(
            "Power loss: crash states per filesystem and workload",
            [
                "filesystem", "workload", "states", "mounted %", "fsck clean %",
                "states losing fsync'ed data", "fsync'ed files lost", "recovery mount ms",
                "clean mount ms", "fsck ms",
            ],
            outcome_rows,
            [method, *notes],
        ),
        table_section(
            "Power loss: data never fsync'ed, what a power cut left (states)",
            ["filesystem", "workload", "path", *UNSYNCED_OUTCOMES],
            unsynced_rows,
            [
                "counted in the states cut after the path was written and before its latest "
                "version was synced; not failures: POSIX promises nothing for them"
            ],
        ),
    ]  # fmt: skip
