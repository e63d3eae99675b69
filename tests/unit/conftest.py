"""Unit tests never read or write this machine's record of which guest kernels boot here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _guest_boots_kept_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from fsarena.guest import boots

    kept = tmp_path / "guest-boots.json"
    monkeypatch.setattr(boots, "KEPT", kept)
    monkeypatch.setenv("FSARENA_GUEST_BOOTS", str(kept))
    yield
