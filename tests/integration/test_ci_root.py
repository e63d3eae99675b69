"""CI cannot pass silently: without root, .ci/run and ./run-tests fail with one clear line.

Run as user nobody (runuser): before root was checked, both went on to pytest,
which skipped every integration test and exited 0.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.integration.conftest import REPO


@pytest.mark.parametrize("script", [".ci/run", "run-tests"])
def test_without_root_the_tests_refuse_in_one_line(script: str) -> None:
    result = subprocess.run(
        ["runuser", "-u", "nobody", "--", str(REPO / script)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "must run as root" in lines[0], result.stderr
