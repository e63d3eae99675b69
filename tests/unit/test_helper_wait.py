"""Untimed helpers are waited for by their exit (a pidfd), with the same results as before.

subprocess.run(timeout=) polled with sleeps of up to 50 ms; the executor now waits
on a pidfd. What a caller gets must not change: the exit code, stdout and stderr,
a timeout as FsarenaError with the helper killed, a missing command named.
"""

from __future__ import annotations

import subprocess
import time

import pytest

from fsarena.errors import FsarenaError
from fsarena.host.executor import RealExecutor, wait_exited


def test_a_helpers_code_and_output_are_as_it_left_them() -> None:
    ex = RealExecutor(call_timeout_s=60)
    assert ex.output(["sh", "-c", "echo out; echo err >&2"]) == "out\n"
    with pytest.raises(FsarenaError, match="failed: boom"):
        ex.call(["sh", "-c", "echo boom >&2; exit 3"])


def test_a_helper_past_its_limit_is_killed_and_named() -> None:
    ex = RealExecutor(call_timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(FsarenaError, match="timed out"):
        ex.call(["sleep", "30"])
    assert time.monotonic() - started < 20  # killed, not waited for


def test_a_missing_helper_is_named() -> None:
    with pytest.raises(FsarenaError, match="command not found: no-such-helper"):
        RealExecutor(call_timeout_s=5).call(["no-such-helper"])


def test_the_wait_ends_with_the_process_not_at_the_limit() -> None:
    proc = subprocess.Popen(["sh", "-c", "exit 7"])
    started = time.monotonic()
    assert wait_exited(proc, 600) == 7
    assert time.monotonic() - started < 60
    assert proc.returncode == 7 and proc.poll() == 7  # reaped
