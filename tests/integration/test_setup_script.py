"""First-run setup: one line per step, apt's and pip's output in a log whose path is printed
when a step fails, and nothing at all when there is nothing to install."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.integration.conftest import REPO


def test_setup_with_nothing_to_install_prints_nothing() -> None:
    # This checkout is set up (the test run uses its venv): nothing to install.
    for args in ([], ["--dev"]):
        result = subprocess.run([str(REPO / "scripts" / "setup.sh"), *args],
                                capture_output=True, text=True, check=False)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert (result.stdout, result.stderr) == ("", "")


def test_a_failed_step_prints_its_log_s_path_and_its_end(tmp_path: Path) -> None:
    # A copy of the script in a checkout of its own: its log goes there, not into ours.
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    bogus = tmp_path / "bogus-packages.txt"
    bogus.write_text("# a package no Debian has\nfsarena-no-such-package\n")
    env = {**os.environ, "FSARENA_SETUP_APT_LISTS": str(bogus)}
    result = subprocess.run([str(tmp_path / "scripts" / "setup.sh")], env=env,
                            capture_output=True, text=True, check=False)  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    log = tmp_path / ".venv" / "setup.log"
    assert lines[:2] == [
        "fsarena setup: updating apt's package lists (1 Debian package to install)",
        "fsarena setup: installing 1 Debian package (the filesystems' tools, the tasks' "
        "programs): fsarena-no-such-package",
    ]
    assert re.match(rf"fsarena setup: FAILED: installing .*\. The full log is {log}; it ends:$",
                    lines[2])  # fmt: skip
    assert "E: Unable to locate package fsarena-no-such-package" in result.stderr
    assert "Unable to locate package fsarena-no-such-package" in log.read_text()
    assert len(lines) <= 8, "apt's own output stays in the log"
