"""Integration tests: root, real loop devices, real mkfs; each checks nothing is left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FSARENA = [sys.executable, "-m", "fsarena"]

pytestmark = pytest.mark.root


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="integration tests need root (loop devices, mkfs, mount)")
        for item in items:
            if "integration" in str(item.fspath):
                item.add_marker(skip)


def leftovers(workdir: Path) -> list[str]:
    """Mounts and loop devices that refer to the work directory."""
    found = []
    with open("/proc/mounts") as f:
        found += [line.split()[1] for line in f if str(workdir) in line.split()[1]]
    out = subprocess.run(["losetup", "-J", "-l"], capture_output=True, text=True, check=False)
    if out.stdout.strip():
        for dev in json.loads(out.stdout).get("loopdevices", []):
            if str(workdir) in (dev.get("back-file") or ""):
                found.append(dev["name"])
    return found


def new_workdir() -> Path:
    """A fresh directory for a test's work, under /var/tmp like the default.

    Not /tmp: it may be a tmpfs, which loop direct I/O cannot use.
    """
    base = Path("/var/tmp/fsarena-tests")
    base.mkdir(parents=True, exist_ok=True)
    return Path(subprocess.check_output(["mktemp", "-d", "-p", str(base)], text=True).strip())


@pytest.fixture
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = new_workdir()
    yield path
    left = leftovers(path)
    for mnt in [x for x in left if not x.startswith("/dev/")]:
        subprocess.run(["umount", "-l", mnt], check=False)
    for dev in [x for x in left if x.startswith("/dev/")]:
        subprocess.run(["losetup", "-d", dev], check=False)
    subprocess.run(["rm", "-rf", str(path)], check=False)
    assert not left, f"fsarena left these behind: {left}"


def fsarena(
    *args: str, check: bool = True, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [*FSARENA, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        env=env,
    )
    if check and result.returncode != 0:
        raise AssertionError(
            f"fsarena {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
        )
    return result
