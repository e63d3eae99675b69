"""zram devices for tests: real, non-loop block devices, made here and removed afterwards.

Only devices this helper created are touched (by the number hot_add returned): other
zram devices on the machine may be in use by someone else.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CONTROL = Path("/sys/class/zram-control")


def available() -> bool:
    return (CONTROL / "hot_add").exists()


@contextmanager
def zram_device(size_bytes: int) -> Iterator[str]:
    """A new /dev/zramN of that size; unmounted (if a test left it so) and removed afterwards."""
    number = int((CONTROL / "hot_add").read_text())
    device = f"/dev/zram{number}"
    try:
        Path(f"/sys/block/zram{number}/disksize").write_text(str(size_bytes))
        for _ in range(100):  # devtmpfs makes the node; give it a moment
            if Path(device).exists():
                break
            time.sleep(0.05)
        yield device
    finally:
        found = subprocess.run(["findmnt", "-rn", "-o", "TARGET", "-S", device],
                               capture_output=True, text=True, check=False)  # fmt: skip
        for target in reversed(found.stdout.split()):
            subprocess.run(["umount", target], check=False)
        (CONTROL / "hot_remove").write_text(str(number))
