"""What differs between the sessions `fsarena compare` is given, and when that makes it doubtful.

A comparison of sessions is only as good as what they share. Said before any
figure: every setting that differs (suite, scale, repetitions, kernel, host,
emulated machine, tool versions), and a warning where a difference mixes
something else into the change the user is looking for (another dataset size,
another machine, the same session twice, an incomplete session). A session in
which nothing was measured is refused: it has nothing to compare.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fsarena.errors import FsarenaError
from fsarena.session.digest import session_digest, short
from fsarena.session.file import Session
from fsarena.session.records import ProfileRecord, given

Labelled = Sequence[tuple[str, Session]]


def refuse_empty(labelled: Labelled) -> None:
    """A session without one successful run cannot be compared: say which and why."""
    for label, session in labelled:
        if not any(r.status == "ok" for r in session.runs):
            what = f"{len(session.runs)} runs, none successful" if session.runs else "no runs"
            raise FsarenaError(
                f"session {label} (started {session.created_at or '?'}) has {what}: nothing to "
                "compare; give a session that measured something (fsarena report FILE shows one)"
            )


def _shown(value: object) -> str:
    """A fact as the table shows it: "?" when the record does not have it."""
    return "?" if value is None or value == "" else str(value)


def _repetitions(s: Session) -> str:
    return str(len(s.order) or given(s.plan.repetitions))


def _machine(s: Session) -> str:
    return str(given(s.machine.profile.name, "none"))


def _cold(s: Session) -> str:
    """How caches were emptied before timed tasks (sessions before the per-filesystem way
    recorded nothing: they dropped the whole machine's)."""
    per_fs = (s.cold_caches or "").startswith("cold caches per filesystem")
    return "per filesystem (remount)" if per_fs else "machine-wide (drop_caches)"


# (what, how to read it from a session, the warning when it differs, or "" for none)
SETTINGS: tuple[tuple[str, Callable[[Session], str], str], ...] = (
    (
        "suite",
        lambda s: _shown(s.plan.suite),
        "different suites: only the tasks every session ran are compared side by side",
    ),
    (
        "scale",
        lambda s: _shown(s.plan.scale),
        "different dataset scales: a task's time grows with its data, so a difference "
        "between these sessions is mostly the size, not the change you are looking for; "
        "compare sessions run at the same --scale",
    ),
    ("repetitions", _repetitions, ""),
    ("kernel", lambda s: _shown(s.host.kernel), ""),
    (
        "host",
        lambda s: _shown(s.host.hostname),
        "different hosts: hardware, disk and background load differ too, and are mixed "
        "into every difference",
    ),
    (
        "CPU",
        lambda s: _shown(s.host.cpu_model),
        "different CPUs: CPU-bound tasks (archives, small files) change with the processor",
    ),
    (
        "cold caches",
        _cold,
        "different ways of emptying caches: a remount also ends what a machine-wide drop "
        "keeps (a filesystem's in-memory allocation state), so cold-start costs differ",
    ),
    (
        "emulated machine",
        _machine,
        "different emulated machines (--machine): memory, CPU and disk limits differ",
    ),
)


def _tools(labelled: Labelled) -> list[str]:
    """Tools whose recorded version differs between the sessions."""
    names = sorted({t for _, s in labelled for t in s.tool_versions})
    out = []
    for tool in names:
        versions = [(label, s.tool_versions.get(tool, "not recorded")) for label, s in labelled]
        if len({v for _, v in versions}) > 1:
            out.append(f"{tool} (" + "; ".join(f"{label}: {v}" for label, v in versions) + ")")
    return out


def _same_start(labelled: Labelled) -> list[str]:
    """Sessions that started at the same moment on the same host: the same session (the
    same measured content, session.digest) or a copy that differs from it."""
    out = []
    seen: dict[tuple[str, str], tuple[str, str]] = {}
    for label, s in labelled:
        key = (s.created_at, s.host.hostname)
        digest = session_digest(s)
        if key in seen:
            first, first_digest = seen[key]
            if digest == first_digest:
                out.append(
                    f"{first} and {label} are the same session (started {s.created_at}, "
                    f"content digest {short(digest)}): they can only agree; did you mean "
                    "another file?"
                )
            else:
                out.append(
                    f"{first} and {label} have the same start time ({s.created_at}, host "
                    f"{s.host.hostname or '?'}) but different content (digests "
                    f"{short(first_digest)} and {short(digest)}): one is a changed copy of "
                    "the other, or the same session at another stage (fetched mid-run, "
                    "resumed); compare them knowing that"
                )
        seen.setdefault(key, (label, digest))
    return out


def same_session(labelled: Labelled) -> str:
    """Why these sessions are one and the same (their measured content), or ""."""
    digests = {session_digest(s) for _, s in labelled}
    if len(digests) != 1 or len(labelled) < 2:
        return ""
    labels = " and ".join(label for label, _ in labelled)
    return f"{labels} are the same session (content digest {short(digests.pop())})"


def differences(labelled: Labelled) -> list[str]:
    """Every setting that differs between the sessions, as 'scale: s1 0.5, s2 0.01'."""
    out = []
    for what, read, _ in SETTINGS:
        values = [(label, read(s)) for label, s in labelled]
        if len({v for _, v in values}) > 1:
            out.append(f"{what}: " + ", ".join(f"{label} {v}" for label, v in values))
    if tools := _tools(labelled):
        out.append("tool versions: " + ", ".join(tools))
    return out + _profiles(labelled)


# How a filesystem was made and mounted, as recorded with each session (profiles_as_run).
PROFILE_SETTINGS: tuple[tuple[str, Callable[[ProfileRecord], str]], ...] = (
    ("mkfs", lambda p: " ".join(p.mkfs) or "?"),
    ("mount options", lambda p: ",".join(p.mount_options) or "(none)"),
    ("driver", lambda p: p.driver or "kernel"),
    ("image size", lambda p: f"{p.image_size_bytes >> 20} MiB" if p.image_size_bytes else "?"),
)


def _profiles(labelled: Labelled) -> list[str]:
    """Each filesystem of several sessions whose mkfs, mount options, driver or image size
    differ, as "ext4 mount options: s1 defaults, s2 noatime"."""
    out = []
    names = dict.fromkeys(fs for _, s in labelled for fs in s.filesystems())
    for fs in names:
        having = [
            (label, s.profiles_as_run[fs]) for label, s in labelled if fs in s.profiles_as_run
        ]
        if len(having) < 2:
            continue
        for what, read in PROFILE_SETTINGS:
            values = [(label, read(profile)) for label, profile in having]
            if len({v for _, v in values}) > 1:
                out.append(f"{fs} {what}: " + ", ".join(f"{label} {v}" for label, v in values))
    return out


def warnings(labelled: Labelled) -> list[str]:
    """What makes this comparison questionable, one sentence each."""
    out = []
    for what, read, warning in SETTINGS:
        if warning and len({read(s) for _, s in labelled}) > 1:
            out.append(warning[0].upper() + warning[1:] + f" ({what} differs).")
    out += _same_start(labelled)
    out += [
        f"Session {label} is {s.status}: some of its runs are missing."
        for label, s in labelled
        if s.status != "complete"
    ]
    common = set.intersection(*(set(s.tasks()) for _, s in labelled))
    if not common:
        out.append("The sessions have no task in common: nothing is compared side by side.")
    return out
