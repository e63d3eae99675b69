"""A User-Mode Linux guest boots and runs its agent wherever the checkout, venv and work
directory live: under /tmp (which the guest once covered with a tmpfs), and with the venv
inside the work directory (which the guest covers with its own tmpfs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.filesystems.drivers import choose
from tests.integration.conftest import REPO

pytestmark = pytest.mark.skipif(
    not choose("ext4@uml").available, reason="needs user-mode-linux (scripts/setup.sh)"
)


@pytest.fixture
def under_tmp() -> Iterator[Path]:
    path = Path(subprocess.check_output(["mktemp", "-d", "-p", "/tmp"], text=True).strip())
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def checkout_with_venv(checkout: Path, venv: Path) -> Path:
    """A copy of this checkout's package and a venv that runs fsarena from it; its python.

    The source is copied as it is (not cloned from HEAD): the code under test. The venv
    borrows the test run's installed dependencies (numpy, ...) through a .pth
    file rather than downloading them again: what matters is where fsarena and the
    interpreter live.
    """
    shutil.copytree(REPO / "src", checkout / "src", ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    here = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (site / "fsarena-checkout.pth").write_text(f"{checkout / 'src'}\n{here}\n")
    return venv / "bin" / "python"


def fsarena_in_guest(python: Path, workdir: Path) -> str:
    """Boot a guest with that python as its agent; where fsarena is imported from inside it."""
    from fsarena.guest.host import boot
    from fsarena.host.executor import GuestSpec, RealExecutor

    host = RealExecutor()
    image = str(workdir / "target.img")
    host.create_image(image, 64 << 20)
    spec = GuestSpec("uml", image, str(workdir / "run"), str(workdir), python=str(python))
    guest = boot(spec, host)
    try:
        # fsarena.datasets.spec imports numpy: what the agent imports late, to verify a copy.
        code = "import fsarena.datasets.spec, numpy; print(fsarena.datasets.spec.__file__)"
        found = guest.output((str(python), "-c", code)).strip()
        assert guest.exists(str(workdir / "run" / "config.json")) is False  # covered by its tmpfs
        return found
    finally:
        guest.close()


def test_a_guest_runs_the_agent_from_a_checkout_under_tmp(under_tmp: Path, workdir: Path) -> None:
    python = checkout_with_venv(under_tmp / "fsarena", under_tmp / "fsarena" / ".venv")
    found = fsarena_in_guest(python, workdir)
    assert found == str(under_tmp / "fsarena" / "src" / "fsarena" / "datasets" / "spec.py")


def test_a_guest_sees_a_venv_inside_its_work_directory(under_tmp: Path) -> None:
    # The work directory under /tmp too, holding the checkout and its venv.
    workdir = under_tmp / "w"
    python = checkout_with_venv(workdir / "fsarena", workdir / "venv")
    found = fsarena_in_guest(python, workdir)
    assert found == str(workdir / "fsarena" / "src" / "fsarena" / "datasets" / "spec.py")
    assert not (workdir / "run").exists()


def test_a_failed_boot_quotes_the_line_that_explains_it(workdir: Path) -> None:
    from fsarena.errors import FsarenaError
    from fsarena.guest.host import boot
    from fsarena.host.executor import GuestSpec, RealExecutor

    host = RealExecutor()
    image = str(workdir / "target.img")
    host.create_image(image, 64 << 20)
    python = "/nonexistent/fsarena-venv/bin/python"
    spec = GuestSpec("uml", image, str(workdir / "run"), str(workdir), python=python)
    with pytest.raises(FsarenaError) as failed:
        boot(spec, host)
    message = str(failed.value)
    assert message.startswith("the uml guest did not boot: it stopped before its agent started")
    assert f"exec: {python}: not found" in message
    assert "Kernel panic - not syncing: Attempted to kill init!" in message
    assert "[<" not in message  # no stack trace
    assert not (workdir / "run").exists()
