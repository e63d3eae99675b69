"""The guest agent's protocol and module loading, over pipes (no guest booted)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fsarena.errors import FsarenaError
from fsarena.guest import agent
from fsarena.guest.host import PIECE_BYTES, _Channel


@pytest.fixture
def channel() -> Iterator[tuple[_Channel, list[str]]]:
    """A host channel talking to an agent that serves in a thread; yields it and the log."""
    to_agent_r, to_agent_w = os.pipe()
    from_agent_r, from_agent_w = os.pipe()
    seen: list[str] = []

    def echo(text: str) -> str:
        seen.append(text)
        return text.upper()

    def fail(kind: str) -> None:
        raise FsarenaError("disk full") if kind == "user" else ValueError("oops")

    ops: dict[str, Any] = {"echo": echo, "fail": fail}
    stopped: list[bool] = []
    thread = threading.Thread(
        target=agent.serve,
        args=(to_agent_r, from_agent_w, ops, {"ready": True}, lambda: stopped.append(True)),
    )
    thread.start()
    host = _Channel(from_agent_r, to_agent_w)
    assert host.receive(5) == {"ready": True}
    yield host, seen
    host.send({"id": 0, "op": "shutdown"})
    assert host.receive(5) == {"id": 0, "result": None}
    thread.join(5)
    assert stopped == [True], "shutdown calls the power-off hook, never the real one in a test"
    host.close()
    os.close(to_agent_r)
    os.close(from_agent_w)


def test_requests_get_results_and_errors(channel: tuple[_Channel, list[str]]) -> None:
    host, _ = channel
    host.send({"id": 1, "op": "echo", "args": {"text": "hi"}})
    assert host.receive(5) == {"id": 1, "result": "HI"}
    host.send({"id": 2, "op": "fail", "args": {"kind": "user"}})
    assert host.receive(5) == {"id": 2, "error": "disk full"}
    host.send({"id": 3, "op": "fail", "args": {"kind": "bug"}})
    reply = host.receive(5)
    assert reply is not None and "guest agent bug" in reply["error"]
    assert "ValueError" in reply["traceback"]


def test_long_requests_travel_in_acknowledged_pieces(
    channel: tuple[_Channel, list[str]],
) -> None:
    # A tty throttles past 4 KiB of unread input, and UML's line then stops reading.
    host, seen = channel
    text = "x" * (20 * PIECE_BYTES + 7)
    host.send({"id": 4, "op": "echo", "args": {"text": text}})
    assert host.receive(5) == {"id": 4, "result": text.upper()}
    assert seen == [text]


def test_a_silent_guest_times_out() -> None:
    r, w = os.pipe()
    try:
        with pytest.raises(FsarenaError, match="did not answer within 0 s"):
            _Channel(r, w).receive(0.05)
    finally:
        os.close(r)
        os.close(w)


def test_modules_load_after_their_dependencies_and_builtins_are_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "modules.builtin").write_text("kernel/fs/jfs/jfs.ko\n")
    (tmp_path / "modules.dep").write_text(
        "kernel/fs/fat/vfat.ko: kernel/fs/fat/fat.ko kernel/fs/nls/nls_base.ko\n"
        "kernel/fs/fat/fat.ko: kernel/fs/nls/nls_base.ko\n"
        "kernel/fs/nls/nls_base.ko:\n"
        "kernel/fs/nls/nls_iso8859-1.ko: kernel/fs/nls/nls_base.ko\n"
    )
    loaded: list[str] = []
    monkeypatch.setattr(agent, "_load_module", lambda path: loaded.append(path.name))
    agent.load_modules(str(tmp_path), ["jfs", "vfat", "nls_iso8859-1"])
    assert loaded == ["nls_base.ko", "fat.ko", "vfat.ko", "nls_iso8859-1.ko"]
    with pytest.raises(FsarenaError, match="no module exfat"):
        agent.load_modules(str(tmp_path), ["exfat"])


def test_a_job_runs_a_named_fsarena_modules_job_and_nothing_else(tmp_path: Path) -> None:
    from tests.fakes import FakeExecutor

    ops = agent.operations(FakeExecutor(), str(tmp_path))
    (tmp_path / "aged").mkdir()
    layout = {"module": "fsarena.aging.runtime", "name": "layout"}
    args = {"mountpoint": str(tmp_path), "sync_argv": ["sync"]}
    reply = agent.answer(ops, {"id": 1, "op": "job", "args": {**layout, "args": args}})
    assert reply["result"]["block_bytes"] > 0, reply
    elsewhere = {"module": "os", "name": "system", "args": {}}
    assert agent.answer(ops, {"id": 2, "op": "job", "args": elsewhere})["error"] == (
        "guest agent: no jobs outside fsarena (os)"
    )
    missing = {"module": "fsarena.aging.runtime", "name": "rm", "args": {}}
    assert agent.answer(ops, {"id": 3, "op": "job", "args": missing})["error"] == (
        "guest agent: fsarena.aging.runtime has no job 'rm'"
    )
