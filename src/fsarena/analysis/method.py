"""What a session's runs read back about its own method, in words for the report.

The report says what was read on the machine, never what fsarena asked for: a loop
device's direct I/O as /sys/block/loopN/loop/dio said before each run, and the
device flushes each writing run's counters counted (fsarena.measure.collect).
"""

from __future__ import annotations

import statistics

from fsarena.session.file import Session


def loop_io(session: Session) -> str:
    """The loop images' I/O as read: "loop images (direct I/O)" only when every run read 1."""
    read = [
        r.measurement.loop_direct_io
        for r in session.runs
        if r.measurement is not None and r.measurement.loop_direct_io is not None
    ]
    allocated = [
        r.measurement.loop_allocated_pct
        for r in session.runs
        if r.measurement is not None and r.measurement.loop_allocated_pct is not None
    ]
    space = f", at least {min(allocated):.0f} % of each image allocated" if allocated else ""
    if not read:  # sessions before the read-back: what was asked, said as such
        return "loop images (direct I/O asked, not read back)"
    buffered = read.count(0)
    if not buffered:
        return f"loop images (direct I/O{space})"
    return (
        f"loop images (buffered: /sys/block/loopN/loop/dio read 0 before {buffered} of "
        f"{len(read)} runs{space})"
    )


# The session warning for runs on a loop device the kernel left buffered.
BUFFERED_LOOP = (
    "runs on a loop device the kernel left buffered (/sys/block/loopN/loop/dio read 0: "
    "direct I/O refused, e.g. the image's filesystem has a larger logical block size, or "
    "is a tmpfs): the image's pages are cached twice and written back by the host, so "
    "these times are not those of direct-I/O loop images; put --workdir on another "
    "filesystem, or use --device"
)


def durability(session: Session) -> str:
    """How writing runs ended their timed region, as the device's flush counters tell it."""
    flushes = [
        r.measurement.device_flushes
        for r in session.runs
        if r.measurement is not None and r.measurement.device_flushes is not None
    ]
    if not flushes:  # sessions before the counters were read: syncfs only
        return "writes timed through syncfs"
    return (
        "writes timed to durable (the filesystem's sync, then one flush of the device; "
        f"{statistics.median_low(flushes)} device flushes per run, median, read from its "
        "counters)"
    )
