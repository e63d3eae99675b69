"""What a compressing configuration's writes reached the device: logical, device, compsize.

A compressing filesystem (btrfs compress=, compress-force=) writes fewer bytes than
it is given, and a run's time alone hides what it bought. After every writing task
on a compressing configuration, and on the same filesystem's other configurations
of the run (so "none" has its own figure to be compared with), the run records:

- the logical bytes the task wrote (its payload) against the bytes that reached the
  device in the timed region (/sys/block/DEV/stat, already in every Measurement);
- what the filesystem's own space tool says of the files on it afterwards (btrfs's
  compsize: disk usage against uncompressed size), untimed, where the profile names
  one and it is installed.

Device bytes include metadata and the journal or log: they are what the device
paid, not only the data's compressed size. compsize counts data extents only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fsarena.errors import FsarenaError
from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.measure.collect import Measurement
from fsarena.measure.metrics import metric_value
from fsarena.tasks.base import TaskContext

# compsize -b: "TOTAL       59%     987895       1659197      1659197"
_TOTAL = re.compile(r"^TOTAL\s+\d+%\s+(\d+)\s+(\d+)\s+(\d+)\s*$", re.MULTILINE)


def accounts_space(profile: FilesystemProfile, run_profiles: Iterable[FilesystemProfile]) -> bool:
    """Whether this profile's writing runs record their space: it compresses, or another
    configuration of the same filesystem in this run does (its uncompressed reference)."""
    return profile.compresses or any(
        p.compresses and p.fstype == profile.fstype for p in run_profiles
    )


def judged_rate(
    profile: FilesystemProfile, payload: str | None, measurement: Measurement
) -> float | None:
    """The rate the device's ceiling check judges (run/sequence.py), bytes per second.

    The logical throughput, except on a compressing configuration: it moves fewer bytes
    to and from the device than its files hold, so its logical rate may rightly beat the
    raw device (that is what compression buys). It is judged on the bytes that reached
    the device in the task's direction instead, never marked invalid for being fast.
    """
    if payload is None or not profile.compresses:
        return metric_value(measurement, "throughput_bytes_per_s")
    moved = metric_value(measurement, f"device_{payload}_bytes")
    return moved / measurement.wall_s if moved is not None and measurement.wall_s > 0 else None


def parse_compsize(text: str) -> dict[str, float]:
    """compsize -b's TOTAL line as values: disk usage, uncompressed and referenced bytes."""
    m = _TOTAL.search(text)
    if m is None:
        raise FsarenaError(f"compsize printed no TOTAL line: {text.strip()[:200]!r}")
    disk, uncompressed, referenced = (float(g) for g in m.groups())
    return {
        "compsize_disk_bytes": disk,
        "compsize_uncompressed_bytes": uncompressed,
        "compsize_referenced_bytes": referenced,
    }


def device_values(measurement: Measurement, logical_bytes: int) -> dict[str, float]:
    """The logical bytes written beside the device's, and their ratio (1 = no saving)."""
    if logical_bytes <= 0:
        return {}
    out = {"logical_write_bytes": float(logical_bytes)}
    if measurement.device_write_bytes is not None:
        out["device_per_logical"] = measurement.device_write_bytes / logical_bytes
    return out


def space_values(ctx: TaskContext) -> tuple[dict[str, float], str]:
    """compsize of the whole mounted filesystem after a task, and why there is none ("" if
    there is). An empty filesystem (everything deleted) takes no space: zeros."""
    argv = ctx.profile.space_usage_argv(ctx.mountpoint)
    if not argv:
        return {}, ""
    tool = argv[0]
    found = ctx.executor.output(("sh", "-c", f"command -v {tool} || true")).strip()
    if not found:
        return {}, f"{tool} not installed (apt-get install btrfs-compsize): no space figure"
    # compsize exits 1 with "No files." on an empty tree; a shell keeps that apart from
    # a real failure, which still raises with compsize's own words.
    script = (
        'out=$("$@" 2>&1); rc=$?; echo "$out"; [ $rc -eq 0 ] || echo "$out" | grep -qx "No files."'
    )
    text = ctx.executor.output(("sh", "-c", script, "sh", *argv))
    if "No files." in text.splitlines():
        return dict.fromkeys(
            ("compsize_disk_bytes", "compsize_uncompressed_bytes", "compsize_referenced_bytes"),
            0.0,
        ), ""
    return parse_compsize(text), ""


def space_added(after: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """What one task added to the filesystem's space: compsize after it, less before it
    (nothing before: a fresh filesystem). Negative for a task that deletes."""
    return {
        f"{key.removesuffix('_bytes')}_added_bytes": after[key] - before.get(key, 0.0)
        for key in ("compsize_disk_bytes", "compsize_uncompressed_bytes")
        if key in after
    }
