"""The shipped playbooks parse, use what fsarena passes, and the checkout archive is clean."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from fsarena.fleet import run as fleet_run

PLAYBOOKS = ("playbook.yml", "stop.yml")


@pytest.mark.parametrize("name", PLAYBOOKS)
def test_playbook_passes_ansibles_syntax_check(name: str, tmp_path: Path) -> None:
    binary = Path(sys.executable).parent / "ansible-playbook"
    out = subprocess.run(
        [str(binary), "--syntax-check", "-i", "localhost,", str(fleet_run.HERE / name)],
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr


def test_playbook_uses_every_variable_fsarena_passes(tmp_path: Path) -> None:
    run = fleet_run.FleetRun(Path("inv"), ["--fs", "a,b"], tmp_path, "0+git.0")
    passed = set(fleet_run._extravars(run, tmp_path / "x.tar.gz", "stamp"))
    text = (fleet_run.HERE / "playbook.yml").read_text()
    used = set(re.findall(r"\b(fsarena_[a-z_]+)\b", text))
    assert passed <= used
    assert used - passed == {"fsarena_dir", "fsarena_workdir", "fsarena_pip_cache"}  # inventory's


def test_checkout_archive_holds_the_source_not_the_venv(tmp_path: Path) -> None:
    with tarfile.open(fleet_run._archive(tmp_path, "0.1.0+git.abc")) as tar:
        names = tar.getnames()
    assert "pyproject.toml" in names and "scripts/setup.sh" in names
    assert "src/fsarena/fleet/playbook.yml" in names
    assert not [n for n in names if n.split("/")[0] in (".venv", ".git", "results")]
    assert not [n for n in names if "__pycache__" in n]
