"""A tool's own words, made fit for one line: the meaningful lines of its stderr, the kernel's.

A failed mkfs with a bad option prints one line of reason and a usage text of
28 more; a failed mount(8) hides its reason in the kernel's log ("dmesg(1) may
have more information"). The session keeps the whole text; progress lines and
error messages show what says why. Standard library only (a guest's agent
imports the measurement core).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator

_USAGE = re.compile(r"^\s*usage:", re.IGNORECASE)


def meaningful(text: str) -> list[str]:
    """The lines that say why: those before a usage text, if one follows; blank ones out."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if _USAGE.match(line):
            return lines[:i] or lines[:1]
    return lines


def brief(text: str, keep: int = 2) -> str:
    """The first meaningful lines, joined; says how many more the full text has."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    shown = meaningful(text)[:keep]
    more = len(lines) - len(shown)
    return " | ".join(shown) + (f" (+{more} more lines in the session)" if more > 0 else "")


@contextlib.contextmanager
def kernel_messages() -> Iterator[list[str]]:
    """Collects the kernel's log records written inside the block (from /dev/kmsg).

    The list is filled when the block ends; empty where /dev/kmsg cannot be read
    (not root, a guest without it). Each record is the message alone.
    """
    found: list[str] = []
    fd = -1
    with contextlib.suppress(OSError):
        fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(fd, 0, os.SEEK_END)  # only what is logged from now on
    try:
        yield found
    finally:
        if fd >= 0:
            found += _read_records(fd)
            os.close(fd)


def _read_records(fd: int) -> list[str]:
    records = []
    for _ in range(10_000):
        try:
            raw = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:  # EPIPE: records were overwritten while we read; go on
            continue
        if not raw:
            break
        head, _, message = raw.decode(errors="replace").partition(";")
        if head:
            records.append(message.splitlines()[0] if message else "")
    return records


def about(records: list[str], *names: str) -> list[str]:
    """The records that name a device or filesystem (e.g. `EXT4-fs (loop3): ...`)."""
    wanted = [n for n in names if n]
    return [r for r in records if any(n in r for n in wanted)]
