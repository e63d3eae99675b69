"""What the aging was and what it showed, beside what is published for this class of device.

Read back from the session: the history replayed (the repository dataset's
record: a real repository and its commit range, or which synthetic history),
the files each pull touched, the device class each filesystem was aged on
(aging.device), the aged/fresh ratios of the cold-read tasks and the layout
scores. The published effects are references, labelled so, chosen by the
device class found; nothing here is a figure this run did not measure.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from fsarena.analysis.ranking import ratio_test
from fsarena.report.comparison import fmt
from fsarena.report.document import Section, table_section
from fsarena.session.file import Session
from fsarena.session.records import AgingRecord, given

READS = ("aged_grep", "aged_tar", "aged_cat")  # cold reads of the aged tree

# Published effects (references, not measured here), by whether the disk spins.
ON_HDD = (
    "Conway et al. (FAST '17) measured a cold grep of the aged tree 2x slower on ext4 after a "
    "few hundred pulls of the real Linux history on an HDD (up to 30x after 1,000); Geriatrix "
    "(Kadekodi et al., ATC '18): results on fresh filesystems overstate performance by up to "
    "30 % on HDD"
)
ON_SSD = (
    "Conway et al. (HotStorage '19) measured cold reads of trees aged by real git histories "
    "2-4x slower on SSDs, even with the device nearly empty; Geriatrix (Kadekodi et al., "
    "ATC '18): results on fresh filesystems overstate performance by up to 75-80 % on SSD"
)


def describe(found: dict[str, Any]) -> str:
    """ "a loop image on /dev/vda (not rotational)" and the like."""

    def spin(value: Any, virtio: Any) -> str:
        said = "rotational" if value else "not rotational" if value is False else "unknown"
        return f"virtio, sysfs says {said}: a virtual disk's default" if virtio else said

    if found.get("loop"):
        return (
            f"a loop image on {found.get('backing_device') or '?'} "
            f"({spin(found.get('backing_rotational'), found.get('backing_virtio'))})"
        )
    return (
        f"the device {found.get('device') or '?'} "
        f"({spin(found.get('rotational'), found.get('virtio'))})"
    )


def spins(found: dict[str, Any]) -> bool | None:
    """Whether the disk the reads end on spins (a loop image: its backing disk); None when
    unknown, as for a virtio disk (its rotational flag is the driver's default)."""
    loop = bool(found.get("loop"))
    if found.get("backing_virtio" if loop else "virtio"):
        return None
    value = found.get("backing_rotational") if loop else found.get("rotational")
    return value if isinstance(value, bool) else None


def history_lines(session: Session) -> list[str]:
    """The history replayed: the repository and commit range, the files each pull touched."""
    age = session.plan.age
    if age is None or age.kind != "git-replay":
        return []
    record = session.datasets.get(str(age.repository))
    spec = record.spec.model_dump() if record else {}
    repo, history = spec.get("repo"), spec.get("history", "appends")
    aged = [a for a in session.aging.values() if a.head]
    first = aged[0] if aged else None
    span = (
        f"commits {str(first.first_commit)[:12]}..{str(first.head)[:12]}"
        if first and first.first_commit
        else f"up to commit {str(first.head)[:12]}"
        if first
        else "no commit pulled"
    )
    if repo:
        what = f"the real history of the git repository {repo}, {span} (HEAD's first-parent line)"
    elif history == "shaped":
        what = (
            f"a synthetic history shaped like real commits ({span}; files per commit, lines per "
            "hunk and spread drawn from git log --numstat of e2fsprogs: fsarena.datasets.history)"
        )
    else:
        what = (
            f"fsarena's first synthetic history ({span}; each commit appends a line to 4 files, "
            "deletes 1-2 and adds an even share of the tree)"
        )
    lines = [f"History: {what}."]
    for name, a in session.aging.items():
        if a.files_touched:
            lines.append(f"{name}: {_touched_words(a.files_touched)}.")
    return _once(lines)


def _touched_words(touched: Sequence[int]) -> str:
    later = touched[1:]
    if not later:
        return f"1 pull ({touched[0]:,} files: the clone)"
    return (
        f"{len(touched)} pulls; the first (the clone) brought {touched[0]:,} files, each later "
        f"pull touched median {statistics.median(later):g}, mean {statistics.fmean(later):.1f}, "
        f"at most {max(later):,} files ({sum(later):,} in all)"
    )


def _once(lines: list[str]) -> list[str]:
    """Per-filesystem lines that say the same after the name, said once for all."""
    head, rest = lines[:1], lines[1:]
    tails = {line.split(": ", 1)[1] for line in rest}
    if len(rest) > 1 and len(tails) == 1:
        return [*head, f"Every filesystem: {tails.pop()}"]
    return lines


def _largest_read_change(
    session: Session, fresh: str, aged: str, walls: Callable[[str, str], list[float]]
) -> tuple[str, float, float, float] | None:
    """(task, ratio, low, high) of the cold read whose aged/fresh ratio is farthest from 1."""
    found = []
    for task in READS:
        a, b = walls(task, fresh), walls(task, aged)
        if a and b:
            test = ratio_test(b, a)
            found.append((task, test.ratio, test.low, test.high))
    if not found:
        return None
    return max(found, key=lambda t: abs(math.log(t[1])) if t[1] > 0 else 0.0)


def _layout(session: Session, name: str, values: Callable[[str, str, str], list[float]]) -> str:
    scores = values("aged_layout", name, "layout_score")
    return fmt(statistics.fmean(scores), 3) if scores else "-"


def _limits(device: dict[str, Any] | None) -> str:
    if not device:
        return "the device the filesystem was aged on was not recorded"
    spinning, where = spins(device), describe(device)
    if device.get("loop") and spinning is False:
        return (
            f"{where}: random reads on an SSD cost little and the host filesystem lays out the "
            "image file, so most layout effects are hidden; --device on a real disk shows more"
        )
    if device.get("loop"):
        unknown = (
            "; whether its disk spins is unknown (a virtual disk may sit on an SSD or an HDD), "
            "so both reference classes are given"
            if spinning is None
            else ""
        )
        return (
            f"{where}: the host filesystem lays out the image file, so the reads pay for its "
            f"layout as well as the aged filesystem's; --device shows the filesystem's own{unknown}"
        )
    if spinning is False:
        return f"{where}: random reads on an SSD cost little, so layout effects are smaller"
    if spinning:
        return f"{where}: every discontiguity costs a seek, where published effects are largest"
    return (
        f"{where}: whether it spins is unknown (a virtual disk may sit on an SSD or an HDD), "
        "so both reference classes are given; --device on a known disk tells them apart"
    )


def section(
    session: Session,
    pairs: list[tuple[str, str]],
    walls: Callable[[str, str], list[float]],
    values: Callable[[str, str, str], list[float]],
) -> Section | None:
    """Per filesystem: the aging done, the largest cold-read change and the layout score moved,
    then what limits the effect here and the published effects for this device class."""
    rows, largest, classes = [], 0.0, set()
    for fresh, aged in pairs:
        a: AgingRecord | None = session.aging.get(fresh) or session.aging.get(aged)
        device = a.device_class if a else None
        classes.add(spins(device) if device else None)
        change = _largest_read_change(session, fresh, aged, walls)
        if change is not None:
            task, ratio, low, high = change
            sure = not math.isnan(low) and (low > 1 or high < 1)
            largest = max(largest, abs(ratio - 1)) if sure else largest
            interval = "-" if math.isnan(low) else f"{fmt(low, 3)}–{fmt(high, 3)}"
            read = f"{task} {fmt(ratio, 3)}x ({interval}{'' if sure else ', within noise'})"
        else:
            read = "-"
        work = (
            f"{len(a.files_touched)} pulls, {sum(a.files_touched[1:]):,} files touched"
            if a and a.files_touched
            else f"{given(a.rounds if a else None, '-')} rounds"
        )
        rows.append(
            [
                fresh,
                describe(device) if device else "-",
                work,
                f"{_layout(session, fresh, values)} → {_layout(session, aged, values)}",
                read,
            ]
        )
    if not rows:
        return None
    limits = sorted({_limits(a.device_class) for a in session.aging.values()})
    refs = [ON_HDD] if classes == {True} else [ON_SSD] if classes == {False} else [ON_HDD, ON_SSD]
    measured = (
        f"Measured here: aging changed cold reads by at most {largest * 100:.0f} % (the "
        "largest ratio whose 95 % interval excludes 1)."
        if largest
        else "Measured here: no cold read changed with age beyond noise (every 95 % interval "
        "includes 1); that is not evidence of no effect on another device or history."
    )
    return table_section(
        "Aging beside published effects",
        ["filesystem", "aged on", "aging done", "layout score fresh → aged", "largest read change"],
        rows,
        [
            measured,
            *(f"What limits it here: {line}." for line in limits),
            *(f"Reference (published, not measured here): {ref}." for ref in refs),
        ],
    )
