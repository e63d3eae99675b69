"""The playbook installs fsarena on a host that has none, for real, then runs the plan there.

h1's fsarena directory starts empty: the playbook must copy the controller's checkout
(an archive, with the build identity baked in), run scripts/setup.sh there (a new
venv, pip from PyPI, the native helpers) and run the plan with what it installed.
h2 shares this checkout and skips the install. Both sessions merge only because the
install reproduced the controller's build exactly. h1 is given a pip cache under
/var/tmp (inventory variable fsarena_pip_cache), but on the machine this was written
on pip stored nothing there (its downloads go through a proxy), so the cache does not
bound the time: the test takes minutes and is marked `slow_install` (deselect it with
`-m 'not slow_install'`; CI runs it once, in the full run).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from fsarena import build_identity
from tests.integration.conftest import leftovers
from tests.integration.test_fleet_hosts import SSHD, loopback_hosts

pytestmark = [
    pytest.mark.skipif(not SSHD.exists(), reason="openssh-server is not installed"),
    pytest.mark.slow_install,
]

FLEET_PIP_CACHE = Path("/var/tmp/fsarena-test-pip-cache")  # kept: where pip caches, reused
ARGS = ["--fs", "ext4,xfs", "--scale", "0.01", "-n", "2", "--seed", "7", "--allow-same-machine"]


def test_a_host_without_fsarena_gets_it_installed_and_runs_the_plan(tmp_path: Path) -> None:
    target = tmp_path / "h1-opt" / "fsarena"  # does not exist: nothing of fsarena on h1
    work = tmp_path / "work"
    host_vars = {"h1": f"fsarena_dir={target} fsarena_pip_cache={FLEET_PIP_CACHE}"}
    with loopback_hosts(tmp_path, 2, work, host_vars, pipelining=True) as inventory:
        started = time.monotonic()
        out = subprocess.run(
            [sys.executable, "-m", "fsarena", "fleet", "run", "-i", str(inventory), *ARGS,
             "--results-dir", str(tmp_path / "r")],
            capture_output=True, text=True, check=False, timeout=1200,
        )  # fmt: skip
        took = time.monotonic() - started
    print(f"\nfleet run with one install: {took:.1f} s\n{out.stderr}")
    assert out.returncode == 0, out.stderr
    err = out.stderr
    assert "h1: set it up (Debian packages, venv): done" in err
    assert "h2: set it up (Debian packages, venv): skipped" in err  # h2 has this build
    installed = subprocess.run(
        [str(target / "fsarena"), "--version"], capture_output=True, text=True, check=True
    )
    assert installed.stdout.strip() == f"fsarena, version {build_identity()}"
    # setup.sh built the native helpers in the host's own venv
    assert (target / ".venv" / "bin" / "fsarena-timeit").exists()
    assert not (target / ".git").exists() and not (target / "results").exists()
    fetched = sorted(p.name for p in (tmp_path / "r").glob("fleet-*/*.json"))
    assert fetched == ["h1.json", "h2.json"]
    assert "Fleet of 2 hosts (2 complete)" in out.stdout
    assert leftovers(work) == []
