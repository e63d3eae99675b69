"""Which filesystems may be ranked together: those of one driver group.

A filesystem's group is in the session (profiles_as_run[name]["group"]; sessions
that predate drivers have only "kernel"). Times through different drivers are
not comparable (a guest's include its emulator, a FUSE driver's are another
program's), so verdicts and recommendations rank one group only: the host
kernel's when the session has any, else the first group the plan names.
"""

from __future__ import annotations

from fsarena.session.file import Session

KERNEL = "kernel"


def group_of(session: Session, filesystem: str) -> str:
    return session.profile(filesystem).group or KERNEL


def ranked_group(session: Session) -> str:
    """The group that verdicts rank."""
    groups = [group_of(session, fs) for fs in session.filesystems()]
    return KERNEL if KERNEL in groups or not groups else groups[0]


def verdict_scope(session: Session) -> Session:
    """The session as verdicts see it: only the ranked group's filesystems and runs."""
    group = ranked_group(session)
    if all(group_of(session, fs) == group for fs in session.filesystems()):
        return session
    keep = [fs for fs in session.filesystems() if group_of(session, fs) == group]
    plan = session.plan.model_copy(update={"filesystems": keep})
    runs = [r for r in session.runs if r.filesystem in keep]
    return session.model_copy(update={"plan": plan, "runs": runs})


def scope_words(session: Session) -> str:
    """The ranked group in words when others are left out of the verdicts ("" when none are)."""
    if verdict_scope(session) is session:
        return ""
    group = ranked_group(session)
    return {KERNEL: "host kernel drivers", "fuse": "FUSE drivers"}.get(group, group)
