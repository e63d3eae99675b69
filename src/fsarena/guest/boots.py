"""Whether each guest kernel boots on this host: booted once to its agent, the answer kept.

A guest kernel whose software is installed may still not boot (Debian 12's User-Mode
Linux without fsarena's XSAVE shim on a CPU with AMX; a kernel that panics; a qemu that
cannot start), so it is "available" only once it has booted here: started with a small
empty disk, and its agent (the program fsarena drives inside it) has answered. The
answer, a boot or the console line that says why not, is kept in a small JSON file keyed
by everything that can change it: the guest's build (its binaries' and modules' sizes and
times, and the shim's), the interpreter its agent runs (the host's, through the guest's
view of the host's root), the host kernel (release and version) and the CPU (model and
flags). A key that no longer matches is booted again. `fsarena check --fs NAME` boots
again whatever is kept.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.guest.kernels import GUESTS

KEPT = Path(os.environ.get("FSARENA_GUEST_BOOTS", "/var/cache/fsarena/guest-boots.json"))
BOOT_DISK_BYTES = 16 << 20


@dataclass(frozen=True)
class BootRecord:
    """One guest kernel's boot here: whether its agent answered, and in how long or why not."""

    guest: str
    booted: bool
    detail: str  # "its agent answered in 3.1 s", or the console's line that says why not
    checked_at: str  # ISO 8601, UTC
    key: str

    @property
    def date(self) -> str:
        return self.checked_at[:10]

    def said(self) -> str:
        """The record in words, with its date: what `check` and `list filesystems` print."""
        if self.booted:
            return f"booted here on {self.date}: {self.detail}"
        return f"does not boot here (tried {self.date}): {self.detail}"


def _cpu() -> str:
    """The CPU's model and flags, as /proc/cpuinfo gives them for its first processor."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            name = name.strip()
            if name in ("model name", "flags") and name not in found:
                found[name] = value.strip()
    return f"{found.get('model name', '?')} [{found.get('flags', '?')}]"


def key_of(name: str) -> str:
    """What the boot's answer depends on, as a digest: the guest's build, the host, the CPU."""
    uname = platform.uname()
    parts = (GUESTS[name].build(), sys.executable, uname.release, uname.version, _cpu())
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _read() -> dict[str, dict[str, object]]:
    """guest -> key -> record, as kept; {} for a file that is missing or not this shape."""
    try:
        data = json.loads(KEPT.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)}


def kept(name: str) -> BootRecord | None:
    """The boot answer kept for this guest here under its current key, if any."""
    key = key_of(name)
    entry = _read().get(name, {}).get(key)
    if not isinstance(entry, dict):
        return None
    with contextlib.suppress(TypeError):
        return BootRecord(**entry)
    return None


def keep(record: BootRecord) -> None:
    """Add the record to the file, under its guest and key, atomically (a reader sees the
    old file or the new); a guest's other keys (another interpreter, an older build) stay."""
    data = _read()
    data.setdefault(record.guest, {})[record.key] = asdict(record)
    with contextlib.suppress(OSError):  # unkept, the next command boots it again
        KEPT.parent.mkdir(parents=True, exist_ok=True)
        tmp = KEPT.with_name(f".{KEPT.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, KEPT)


def boot_now(name: str, near: str) -> BootRecord:
    """Boot the guest on a small empty disk now, in a directory beside `near` that is
    removed afterwards, and keep the answer.

    Needs root (FsarenaError otherwise). A guest whose software is missing is not
    booted: its missing() sentence is the answer, and it is not kept (installing the
    software changes the key anyway).
    """
    from fsarena.guest.host import boot
    from fsarena.host.executor import GuestSpec, RealExecutor

    kernel = GUESTS[name]
    key = key_of(name)
    if why := kernel.missing():
        return BootRecord(name, False, why, _now(), key)
    if os.geteuid() != 0:
        raise FsarenaError(f"cannot boot the {name} guest to test it: that needs root")
    tmp = Path(tempfile.mkdtemp(prefix=".fsarena-boot-", dir=near))
    try:
        host = RealExecutor(boot=boot)
        image = str(tmp / "boot.img")
        host.create_image(image, BOOT_DISK_BYTES)
        started = time.monotonic()
        try:
            guest = boot(GuestSpec(name, image, str(tmp / "run"), str(tmp)), host)
        except (FsarenaError, OSError) as exc:  # OSError: qemu's agent socket never opened
            record = BootRecord(name, False, _reason(exc), _now(), key)
        else:
            took = time.monotonic() - started
            guest.close()
            record = BootRecord(name, True, f"its agent answered in {took:.1f} s", _now(), key)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    keep(record)
    return record


def _reason(error: Exception) -> str:
    """Why a boot failed: the console's line when there is one (guest.console), else the error."""
    text = str(error) if isinstance(error, FsarenaError) else f"{type(error).__name__}: {error}"
    return text.partition(": its console says: ")[2] or text


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def booted(name: str, near: str | None, again: bool = False) -> BootRecord | None:
    """Whether the guest boots here: the kept answer, else (near: a directory to boot
    beside) a boot now; None when nothing is kept and booting is not allowed or not
    possible (not root).

    again: boot even if an answer is kept (`fsarena check --fs NAME`).
    """
    if not again and (record := kept(name)) is not None:
        return record
    if near is None:
        return None
    with _one_at_a_time():
        if not again and (record := kept(name)) is not None:
            return record  # another command booted it while this one waited
        try:
            return boot_now(name, near)
        except FsarenaError:
            return None


@contextlib.contextmanager
def _one_at_a_time() -> Iterator[None]:
    """One boot test at a time on this host (a lock beside the kept answers): two commands
    that start together boot each guest once, not twice at once on the same CPUs (each
    slower, a timeout kept as the answer), and neither loses the other's kept record."""
    try:
        KEPT.parent.mkdir(parents=True, exist_ok=True)
        handle = open(KEPT.with_name(f".{KEPT.name}.lock"), "a")  # noqa: SIM115
    except OSError:
        yield  # no lock where the answers are not kept either: booted as before
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
