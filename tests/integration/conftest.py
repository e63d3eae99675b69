"""Integration tests: root, real loop devices, real mkfs; each checks nothing is left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
FSARENA = [sys.executable, "-m", "fsarena"]

pytestmark = pytest.mark.root


# Integration tests that may skip, each with why that is expected (by node id prefix,
# relative to tests/integration). Any other skip of an integration test run as root
# fails (pytest_runtest_makereport below): CI cannot pass by skipping what it should
# have run. A test that starts skipping for a new reason must be fixed or listed here.
EXPECTED_SKIPS: dict[str, str] = {
    "test_article_suites.py::test_real_kernel_if_cached": (
        "opt-in (FSARENA_KERNEL_CACHE): the real kernel source is a large download"
    ),
    "test_safety_zram.py": "kernels built without zram have no /sys/class/zram-control",
    # cgroup v1 only: on a cgroup v2 host these skip, listed; the v2 code paths are
    # covered as docs/methodology.md ("CI that cannot pass silently") says.
    "test_ceiling_real.py": "cgroup v1 blkio throttling (skips on cgroup v2 hosts)",
    "test_machine_real.py": "the cgroup v1 backend of --machine (skips on cgroup v2 hosts)",
}


def _boot_guests_once() -> None:
    """Every installed guest kernel booted once before the tests are collected (guest.boots
    keeps the answer), so that a test's `choose("jfs@uml")` sees what a run would."""
    if os.geteuid() != 0:
        return
    from fsarena.guest.boots import booted
    from fsarena.guest.kernels import GUESTS

    for name, kernel in GUESTS.items():
        if not kernel.missing():
            booted(name, "/var/tmp")


_boot_guests_once()
# Set by ./run-tests (and so .ci/run): without root the integration tests cannot run,
# which is an error there, never a suite of skips that passes.
REQUIRE = "FSARENA_REQUIRE_INTEGRATION"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.geteuid() != 0:
        if os.environ.get(REQUIRE) == "1" and any(_integration(i) for i in items):
            pytest.exit(f"integration tests need root and {REQUIRE}=1 is set: run as root", 1)
        skip = pytest.mark.skip(reason="integration tests need root (loop devices, mkfs, mount)")
        for item in items:
            if _integration(item):
                item.add_marker(skip)


def _integration(item: pytest.Item) -> bool:
    return "integration" in str(item.fspath)


def expected_skip(nodeid: str) -> str:
    """Why this integration test may skip, or "" when a skip of it is a failure."""
    local = nodeid.split("tests/integration/", 1)[-1]
    return next((why for prefix, why in EXPECTED_SKIPS.items() if local.startswith(prefix)), "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()  # type: ignore[attr-defined]
    if not (report.skipped and _integration(item) and os.geteuid() == 0):
        return
    if expected_skip(item.nodeid):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (
        f"unexpected skip of an integration test: {reason}. Fix the host, or list it with "
        "why in EXPECTED_SKIPS (tests/integration/conftest.py)"
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """List the integration tests that skipped, each with its reason and why it may."""
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "integration" in r.nodeid]
    if not skipped or os.geteuid() != 0:
        return
    terminalreporter.section("integration tests skipped (expected, see EXPECTED_SKIPS)")
    for r in skipped:
        reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else ""
        terminalreporter.line(f"{r.nodeid}: {reason} [expected: {expected_skip(r.nodeid)}]")


def measured(run: Any) -> bool:
    """The run measured its task: ok, or flagged as faster than the device's ceiling.

    On the shared disk the ceiling can be measured while another test keeps it busy, and a
    later honest copy then beats it: a test that is not about the ceiling accepts that
    flag (test_ceiling_real checks the flag itself). Any other status is a failure.
    """
    return bool(run.status == "ok" or (run.status == "invalid" and "ceiling" in (run.error or "")))


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


def processes_using(workdir: Path) -> list[str]:
    """Processes whose command line names the work directory (a guest left running)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(workdir).encode() in a for a in args) and b"pytest" not in args[0]:
            found.append(b" ".join(args).decode(errors="replace")[:200])
    return [p for p in found if "fsarena run" not in p and "-m fsarena" not in p]


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
