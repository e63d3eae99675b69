"""The workstation-2026 suite on real loop devices at a tiny scale: every task verified.

The kernel tree and the packages are the generated look-alikes (FSARENA_KERNEL and
FSARENA_DEBS=generated), as CI runs: nothing is downloaded, and the session says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fsarena.session.file import load
from tests.integration.conftest import REPO, leftovers, measured


def _run(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fsarena", "run", *args, "--workdir", str(work / "w"),
         "--results-dir", str(work / "results"), "--output", str(work / "session.json")],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
        env={**os.environ, "FSARENA_KERNEL": "generated", "FSARENA_DEBS": "generated"},
    )  # fmt: skip


def test_workstation_suite_completes_with_every_task_verified(workdir: Path) -> None:
    result = _run(workdir, "--suite", "workstation-2026", "--fs", "ext4,xfs", "--scale", "0.01",
                  "-n", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    session = load(workdir / "session.json")
    assert session.status == "complete"
    for run in session.runs:
        assert measured(run), (run.filesystem, run.task, run.error)
        assert run.checks and all(c.ok for c in run.checks), (run.task, run.checks)
    origin = str(session.datasets["gitrepo"].origin)
    assert origin.startswith("git history built from dataset kernel (generated"), origin
    checks = {c.name for r in session.runs for c in r.checks}
    assert {"git fsck clean", "work tree matches the commit"} <= checks
    assert {"backup matches the changed source", "unpacked files match md5sums"} <= checks
    assert {"image loaded", "files copied up", "store emptied"} <= checks
    assert str(session.datasets["debs"].origin).startswith("generated look-alike packages")
    for kind in ("development (git):", "backups (rsync):", "packages and containers:"):
        assert kind in result.stdout
    assert not leftovers(workdir)
