"""Container images where podman cannot run: umoci is the engine, the runs and reports say so.

The measured environment really lacks podman: fsarena runs with a PATH of
links to every program of the host's PATH but podman. The packages are the
generated look-alikes (FSARENA_DEBS=generated), one filesystem, one round: 20 s
alone here, 50 s beside other test runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fsarena.session.file import load
from tests.integration.conftest import REPO, leftovers

SUITE = """
name = "containers-only"
repetitions = 1
scale = 0.01
tasks = ["container_load", "container_copyup", "container_remove"]
"""


def _path_without_podman(root: Path) -> str:
    """A directory of links to every program on PATH except podman."""
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(":"):
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            target = os.path.join(folder, name)
            link = bin_dir / name
            if name != "podman" and not link.exists() and os.access(target, os.X_OK):
                link.symlink_to(target)
    return str(bin_dir)


def test_missing_podman_falls_back_to_umoci_and_the_report_says_so(workdir: Path) -> None:
    suite = workdir / "containers.toml"
    suite.write_text(SUITE)
    path = _path_without_podman(workdir)
    env = {**os.environ, "PATH": path, "FSARENA_DEBS": "generated"}
    assert subprocess.run(["sh", "-c", "command -v podman"], env=env, check=False).returncode
    result = subprocess.run(
        [sys.executable, "-m", "fsarena", "run", "--suite", str(suite), "--fs", "ext4",
         "--workdir", str(workdir / "w"), "--results-dir", str(workdir / "results"),
         "--output", str(workdir / "session.json"), "--format", "markdown"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    session = load(workdir / "session.json")
    runs = [r for r in session.runs if r.task.startswith("container_")]
    assert len(runs) == 3
    for run in runs:
        assert run.status == "ok", (run.task, run.error)
        assert run.checks and all(c.ok for c in run.checks), (run.task, run.checks)
        engine = {c.name: c.detail for c in run.checks}["container engine"]
        assert engine.startswith("umoci"), engine
        assert "podman not available: podman not found on PATH" in engine
    checks = {c.name for r in runs for c in r.checks}
    assert {"image loaded", "files copied up", "store emptied"} <= checks
    assert "container images: umoci unpack" in result.stdout
    assert "podman not available: podman not found on PATH" in result.stdout
    assert not leftovers(workdir)
