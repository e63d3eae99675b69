"""Snapshots of an aged image: reflink where the host filesystem can, else a sparse copy.

Aging writes several times the image's size; it is done once per filesystem
and seed, and every repetition restores the aged image from its snapshot.
Both copies go through the Host seam (Host.copy_image, host/executor.py),
so the whole aged sequence's order is tested with a fake host.
"""

from __future__ import annotations

import time
from typing import Any

from fsarena.host.executor import Host


def snapshot(host: Host, image: str, dest: str) -> dict[str, Any]:
    """Copy the unmounted aged image; the method and its cost, for the aging record."""
    started = time.monotonic()
    copy = host.copy_image(image, dest)
    return {
        "snapshot_method": copy.method,
        "snapshot_s": time.monotonic() - started,
        "snapshot_allocated_bytes": copy.allocated_bytes,
    }
