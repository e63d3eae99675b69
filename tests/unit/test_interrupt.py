"""A stop signal is never lost, even one that lands where Python drops exceptions.

CI saw a SIGINT land in `subprocess.Popen.__del__`: the KeyboardInterrupt the
handler raised there was printed as "Exception ignored in" and dropped, and the
power-loss run went on to its end and exited 0. These tests send real signals
to this process.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.interrupt import Stop, checkpoint, deferred, whole


class _SignalsInFinaliser:
    """Sends SIGINT to this process from its own `__del__`: the handler runs there."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):  # bytecodes enough for the pending handler to run here
            pass


def test_a_signal_in_a_finaliser_is_raised_at_the_next_checkpoint() -> None:
    stop = Stop()
    with stop.installed():
        _SignalsInFinaliser()  # collected at once: the signal arrives inside __del__
        assert stop.signum == signal.SIGINT  # received, not raised (it would be dropped)
        with pytest.raises(KeyboardInterrupt, match="SIGINT"):
            checkpoint()
    assert stop.exit_code == 130


def test_a_signal_elsewhere_is_raised_where_it_lands() -> None:
    stop = Stop()
    with stop.installed(), pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass
    assert stop.exit_code == 128 + signal.SIGTERM


def test_later_signals_are_ignored_until_teardown_ends() -> None:
    stop = Stop()
    with stop.installed():
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
        os.kill(os.getpid(), signal.SIGHUP)  # teardown goes on
        for _ in range(1000):
            pass
    assert stop.name == "SIGINT"


def test_no_checkpoint_raises_without_a_signal_or_outside_a_run() -> None:
    checkpoint()  # no Stop installed
    with Stop().installed():
        checkpoint()
    previous = signal.getsignal(signal.SIGINT)
    with Stop().installed():
        pass
    assert signal.getsignal(signal.SIGINT) is previous  # handlers restored


def _spin(seconds: float) -> None:
    """Python bytecodes for a while: where a pending handler runs."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def test_a_signal_held_in_a_finaliser_is_raised_soon_after_without_a_checkpoint() -> None:
    stop = Stop()
    with stop.installed(), pytest.raises(KeyboardInterrupt, match="SIGINT"):
        _SignalsInFinaliser()
        assert stop.signum == signal.SIGINT
        _spin(2.0)  # a long step with no checkpoint: the handler raises the stop in it
    assert not stop.held


def test_a_signal_while_a_child_starts_is_held_until_check() -> None:
    stop = Stop()
    with stop.installed():
        with deferred() as held:
            os.kill(os.getpid(), signal.SIGTERM)
            _spin(0.1)  # not raised here: Popen would leave its child running unseen
        assert held.signum == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            held.check()


def test_a_stop_raised_before_is_not_raised_again_by_a_teardown_helper() -> None:
    stop = Stop()
    with stop.installed():
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            _spin(0.1)
        with deferred() as held:  # teardown's umount: it must run to its end
            os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C: ignored, as in teardown
            _spin(0.1)
        held.check()
        assert held.signum == 0


def test_deferred_outside_the_main_thread_or_a_run_holds_nothing() -> None:
    with deferred() as held:  # no Stop installed: nothing to hold
        pass
    held.check()
    stop = Stop()
    seen: list[int] = []

    def other() -> None:
        with deferred() as mine:
            time.sleep(0.3)
        seen.append(mine.signum)

    with stop.installed():
        thread = threading.Thread(target=other)
        thread.start()
        with pytest.raises(KeyboardInterrupt):  # the main thread is not deferring
            time.sleep(0.1)
            os.kill(os.getpid(), signal.SIGINT)
            _spin(0.1)
        thread.join()
    assert seen == [0]


def test_a_signal_in_a_whole_step_is_raised_once_the_step_is_done() -> None:
    done: list[str] = []
    stop = Stop()
    with stop.installed(), pytest.raises(KeyboardInterrupt, match="SIGHUP"), whole():
        os.kill(os.getpid(), signal.SIGHUP)
        _spin(0.1)
        with deferred() as inner:  # a helper the step starts: not raised there
            _spin(0.01)
        inner.check()
        done.append("umount")
    assert done == ["umount"]


def test_a_whole_step_that_fails_still_raises_the_stop() -> None:
    stop = Stop()
    with stop.installed(), pytest.raises(KeyboardInterrupt) as raised, whole():
        os.kill(os.getpid(), signal.SIGINT)
        _spin(0.1)
        raise OSError("umount: target is busy")
    assert isinstance(raised.value.__context__, OSError)


def test_a_signal_while_the_run_is_planned_stops_it_with_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fsarena run ... &` in a script starts with SIGINT ignored: one during planning was lost.

    The run then went on (here the dry run, which touches nothing, printed its plan).
    """
    from fsarena.cli import running

    planned = running._new_or_resumed

    def slow_planning(*args: Any) -> Any:
        os.kill(os.getpid(), signal.SIGINT)
        _spin(0.1)
        return planned(*args)

    monkeypatch.setattr(running, "_new_or_resumed", slow_planning)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job's
    try:
        result = CliRunner().invoke(
            main,
            ["run", "--dry-run", "--fs", "ext4", "--scale", "0.01", "--workdir",
             str(tmp_path / "work")],
        )  # fmt: skip
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.exit_code == 130, result.output
    assert "interrupted by SIGINT before anything was measured" in result.stderr
    assert "nothing left mounted or attached" in result.stderr
    assert not (tmp_path / "work").exists()
