"""`fsarena check` boots each guest it calls ready, counts only what it checked, and tells
a guest kernel's missing-software sentence once."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fsarena.filesystems.drivers import choose
from tests.integration.conftest import REPO, fsarena

pytestmark = pytest.mark.skipif(
    not choose("ext4@uml").available, reason="needs user-mode-linux (scripts/setup.sh)"
)


def summary(check: str) -> tuple[int, int]:
    found = re.search(r"^(\d+) of (\d+) checks passed", check, re.MULTILINE)
    assert found, check
    return int(found[1]), int(found[2])


def test_check_boots_the_guest_it_calls_ready(workdir: Path) -> None:
    check = fsarena("check", "--workdir", str(workdir / "w")).stdout
    assert re.search(r"^\[ok  \] guest kernel uml \(User-Mode Linux\): ready: booted here on "
                     r"\d{4}-\d\d-\d\d: its agent answered in \d+\.\d s$", check,
                     re.MULTILINE), check  # fmt: skip
    marks = re.findall(r"^\[(ok  |FAIL|--  )\]", check, re.MULTILINE)
    passed, total = summary(check)
    assert total == marks.count("ok  ") + marks.count("FAIL")  # [--] lines are not checks
    assert passed == marks.count("ok  ")
    if marks.count("--  "):
        assert f"({marks.count('--  ')} [--] lines for information)" in check
    # It booted beside its work directory (the nearest existing parent: workdir); other
    # runs on this machine may boot beside theirs meanwhile.
    assert not list(workdir.glob("**/*.img")) and not list(workdir.glob(".fsarena-boot-*"))


def test_a_guest_reason_is_printed_once() -> None:
    check = fsarena("check", check=False).stdout
    listing = fsarena("list", "filesystems").stdout
    for out in (check, listing):
        reasons = re.findall(r"not available: (.*)$", out, re.MULTILINE)
        assert len(reasons) == len(set(reasons)), reasons  # each sentence once, then "as kvm"


def test_a_guest_that_does_not_boot_fails_the_check_with_its_reason(workdir: Path) -> None:
    # fsarena run from PYTHONPATH: the guest's init does not have it, so its agent cannot start.
    site = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    # The venv's bin on PATH: its native helpers (UML's XSAVE shim) are found there.
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'src'}:{site}", "PATH": path}
    result = subprocess.run(
        ["/usr/bin/python3", "-m", "fsarena", "check", "--workdir", str(workdir / "w")],
        capture_output=True, text=True, env=env, cwd=REPO, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    line = next(x for x in result.stdout.splitlines() if x.startswith("[FAIL] guest kernel uml"))
    assert "does not boot here (tried " in line, line
    assert "No module named 'fsarena'" in line and "[<" not in line, line
