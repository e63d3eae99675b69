"""The host's faults are the host's: a missing tool makes the run partial, exit 1, fix first.

dbench is taken off PATH (a directory of links to every other tool on PATH): the
dbench runs are recorded as host faults (missing-tool), not as "this filesystem
cannot", so the session is partial, `fsarena run` exits 1, and the report opens
with what is missing and how to fix it. A filesystem's own incapacity stays a skip.
"""

from __future__ import annotations

import os
from pathlib import Path

from fsarena.session.file import load
from tests.integration.conftest import fsarena

SUITE = """
name = "host-fault-test"
filesystems = ["ext4"]
tasks = ["mkfs", "mount", "dbench_1", "umount"]
"""


def _path_without(tool: str, where: Path) -> str:
    """A PATH of one directory: links to every executable on PATH but `tool`."""
    where.mkdir()
    for d in os.environ.get("PATH", "").split(":"):
        if not d or not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            target = os.path.join(d, name)
            if name != tool and not (where / name).exists() and os.access(target, os.X_OK):
                (where / name).symlink_to(target)
    return str(where)


def test_a_missing_dbench_is_a_host_fault_with_its_fix(workdir: Path) -> None:
    (workdir / "suite.toml").write_text(SUITE)
    env = {**os.environ, "PATH": _path_without("dbench", workdir / "bin")}
    out = workdir / "session.json"
    result = fsarena(
        "run", "--suite", str(workdir / "suite.toml"), "-n", "1", "--scale", "0.01",
        "--workdir", str(workdir / "w"), "--output", str(out), "--quiet",
        check=False, env=env,
    )  # fmt: skip
    assert result.returncode == 1, (result.returncode, result.stderr)
    session = load(out)
    runs = [r for r in session.runs if r.task == "dbench_1"]
    assert [(r.status, r.fault) for r in runs] == [("skipped", "missing-tool")]
    assert session.status == "partial"
    # mkfs, mount and umount were still measured: the sequence went on.
    assert {r.task for r in session.runs if r.status == "ok"} >= {"mkfs", "mount", "umount"}
    report = fsarena("report", str(out)).stdout.splitlines()
    opening = " ".join(" ".join(report[:12]).split())  # the text report wraps its lines
    assert report[0] == "fsarena results" and report[1].startswith("ONLY PART WAS MEASURED")
    assert "dbench not found on PATH" in opening, opening
    assert "Fix: install dbench" in opening, opening
