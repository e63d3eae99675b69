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


def groups(session: Session) -> dict[str, list[str]]:
    """Each driver group's filesystems, in the session's order."""
    found: dict[str, list[str]] = {}
    for fs in session.filesystems():
        found.setdefault(group_of(session, fs), []).append(fs)
    return found


def ranked_group(session: Session) -> str:
    """The group the answer (and a decisive run's stopping rule) ranks first: the host
    kernel's when it has two filesystems or more, else the first group that has (a run of
    jfs, reiserfs and f2fs in one guest, beside ext4 on the host as a reference)."""
    found = groups(session)
    if len(found.get(KERNEL, ())) >= 2:
        return KERNEL
    ranked = next((g for g, members in found.items() if len(members) >= 2), None)
    if ranked is not None:
        return ranked
    return KERNEL if KERNEL in found or not found else next(iter(found))


def scope_of(session: Session, group: str) -> Session:
    """The session as one group's verdicts see it: its filesystems and runs only."""
    if all(group_of(session, fs) == group for fs in session.filesystems()):
        return session
    keep = [fs for fs in session.filesystems() if group_of(session, fs) == group]
    plan = session.plan.model_copy(update={"filesystems": keep})
    runs = [r for r in session.runs if r.filesystem in keep]
    return session.model_copy(update={"plan": plan, "runs": runs})


def verdict_scope(session: Session) -> Session:
    """The session as verdicts see it: only the ranked group's filesystems and runs."""
    return scope_of(session, ranked_group(session))


def other_groups(session: Session) -> list[str]:
    """The groups of two filesystems or more besides the ranked one: each gets its own
    answer, ranked among themselves only."""
    ranked = ranked_group(session)
    return [g for g, members in groups(session).items() if g != ranked and len(members) >= 2]


def group_words(session: Session, group: str) -> str:
    """A group in words: "the host kernel's filesystems", "the FUSE filesystems", "the uml
    guest kernel's filesystems (User-Mode Linux)"."""
    if group == KERNEL:
        return "the host kernel's filesystems"
    if group == "fuse":
        return "the FUSE filesystems"
    guest = group.partition(":")[2]
    members = groups(session).get(group, [])
    label = session.profile(members[0]).guest_label if members else None
    return f"the {guest} guest kernel's filesystems" + (f" ({label})" if label else "")


def scope_words(session: Session) -> str:
    """The ranked group in words when others are left out of the verdicts ("" when none are)."""
    if verdict_scope(session) is session:
        return ""
    group = ranked_group(session)
    if group.startswith("guest:"):
        return f"{group.partition(':')[2]} guest kernel drivers"
    return {KERNEL: "host kernel drivers", "fuse": "FUSE drivers"}.get(group, group)
