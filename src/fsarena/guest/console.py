"""Why a guest stopped: the one line of its console log that explains it.

A guest whose init dies leaves a kernel panic and forty lines of stack trace;
the last lines say nothing a user can act on. The line that explains is, in
order of preference: what init printed just before the kernel panicked because
init died (`exec: ...: not found`, a Python exception); the panic's own reason
when the kernel gave one (`Requested init ... failed`); else the last line that
names an error (a module that cannot be loaded, a mount that failed, qemu's own
complaint). Works on UML's console (kernel.log) and qemu's (console.log, with
printk timestamps).
"""

from __future__ import annotations

import re

PANIC = "Kernel panic - not syncing:"
INIT_DIED = "Attempted to kill init"
# printk's "[    1.234567] " prefix (qemu's console; UML's has none here).
_TIMESTAMP = re.compile(r"^\[\s*\d+\.\d+\]\s*")
# Lines that are part of a stack dump, or printed on every boot (noise, never the cause).
_NOISE = re.compile(
    r"^(\[<[0-9a-f]+>\]|[0-9a-f]{8}( [0-9a-f]{8})*$|Stack:|Call Trace:|CPU: \d+ PID:"
    r"|Hardware name:|RIP:|RSP:|R[A-Z0-9]{2}:|SELinux:|mmapper_init)"
)
# What names a cause, most specific first.
_CAUSES = (
    re.compile(r"not found|No such file|No module named|cannot load|Unknown symbol"),
    re.compile(r"^\w+(Error|Exception)\b"),  # a Python exception's last line
    re.compile(r"error|fail|cannot|unable", re.IGNORECASE),
)


def _lines(log: str) -> list[str]:
    stripped = (_TIMESTAMP.sub("", line).strip() for line in log.splitlines())
    return [line for line in stripped if line]


def explain(log: str) -> str:
    """The line of a guest's console log that says why it stopped ("" if none does)."""
    lines = _lines(log)
    for i, line in enumerate(lines):
        if PANIC not in line:
            continue
        said = [x for x in lines[:i] if not _NOISE.match(x)]
        if INIT_DIED in line and said:
            return f"{said[-1]} (then: {line})"
        return line
    meaningful = [x for x in lines if not _NOISE.match(x)]
    for pattern in _CAUSES:
        found = [x for x in meaningful if pattern.search(x)]
        if found:
            return found[-1]
    return meaningful[-1] if meaningful else ""
