"""Ctrl-C in the middle of a run: measurements kept, nothing left mounted or attached."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from fsarena.session.file import load
from tests.integration.conftest import FSARENA, REPO, leftovers, measured
from tests.integration.watch import saved_runs


def _runs_saved(path: Path) -> int:
    return len(saved_runs(path))


def test_sigint_keeps_measurements_and_cleans_up(workdir: Path) -> None:
    out = workdir / "session.json"
    proc = subprocess.Popen(
        [*FSARENA, "run", "--fs", "ext4,xfs", "--scale", "0.05", "-n", "3",
         "--workdir", str(workdir / "w"), "--output", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 600  # datasets, the ceiling and a warm-up come first
    while _runs_saved(out) < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "measurements kept" in stderr
    session = load(out)
    assert session.status == "interrupted"
    assert len(session.runs) >= 5
    assert all(measured(r) for r in session.runs)
    assert not leftovers(workdir)
    assert not list((workdir / "w" / "images").glob("*.img"))
