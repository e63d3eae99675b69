"""Unit tests never read or write this machine's record of which guest kernels boot here,
and never boot one: a guest's boot is a measurement of the machine (tests/integration
boot them for real, test_guest_boots.py and test_check_guests.py)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

STAND_IN = "a unit test's stand-in: unit tests boot no guest (tests/unit/conftest.py)"


@pytest.fixture(autouse=True)
def _guest_boots_kept_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import fsarena.guest.boots as boots
    from fsarena.guest.kernels import GUESTS

    kept = tmp_path / "guest-boots.json"
    monkeypatch.setattr(boots, "KEPT", kept)
    monkeypatch.setenv("FSARENA_GUEST_BOOTS", str(kept))

    def boot_now(name: str, near: str) -> boots.BootRecord:
        """As boots.boot_now answers for a guest whose agent answered, without the boot
        (which took 15-60 s a test under qemu, root only): a guest whose software is
        missing still says why, as the real one does."""
        key, now = boots.key_of(name), datetime.now(UTC).isoformat(timespec="seconds")
        if why := GUESTS[name].missing():
            return boots.BootRecord(name, False, why, now, key)
        record = boots.BootRecord(name, True, STAND_IN, now, key)
        boots.keep(record)
        return record

    monkeypatch.setattr(boots, "boot_now", boot_now)
    yield
