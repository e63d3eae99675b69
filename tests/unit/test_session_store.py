"""Saving a session: atomic, and not cut by Ctrl-C or SIGTERM."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from fsarena.session.store import load, save

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "three-filesystems.json"


def test_an_interrupt_during_a_save_lands_after_the_file_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = load(FIXTURE)
    real_dumps = json.dumps

    def interrupted_dumps(*args: Any, **kwargs: Any) -> str:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of the save
        return real_dumps(*args, **kwargs)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt("SIGINT")  # as fsarena's Stop turns it

    monkeypatch.setattr(json, "dumps", interrupted_dumps)
    previous = signal.signal(signal.SIGINT, interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            save(session, tmp_path / "s.json")  # raised once the file is whole
    finally:
        signal.signal(signal.SIGINT, previous)
    monkeypatch.undo()
    assert len(load(tmp_path / "s.json").runs) == len(session.runs)
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]  # no temporary file left
