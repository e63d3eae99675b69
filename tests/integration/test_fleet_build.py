"""Every session records which fsarena build measured it; a fleet merge of two builds is refused.

Two real trees (copies of this checkout's package, one file changed in the second)
each run a real, tiny comparison; `fsarena fleet report` on their sessions refuses,
naming both hosts and both builds. A git checkout's build is its commit, and a
change to its files adds a digest of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import leftovers

SRC = Path(__file__).resolve().parents[2] / "src"


def _tree(top: Path, name: str, change: str = "") -> Path:
    """A copy of fsarena's package (no git history), one file changed when asked."""
    src = top / name / "src"
    shutil.copytree(SRC, src, ignore=shutil.ignore_patterns("__pycache__", "BUILD"))
    if change:
        with (src / "fsarena" / "fleet" / "render.py").open("a") as f:
            f.write(f"# {change}\n")
    return src


def _fsarena(src: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [sys.executable, "-m", "fsarena", *args],
        capture_output=True, text=True, env=env, check=check, timeout=600,
    )  # fmt: skip


def _version(src: Path) -> str:
    return _fsarena(src, "--version").stdout.split("version ")[1].strip()


def test_sessions_from_two_trees_are_refused_by_the_fleet_merge(tmp_path: Path) -> None:
    trees = {"a": _tree(tmp_path, "a"), "b": _tree(tmp_path, "b", change="tree b")}
    builds = {name: _version(src) for name, src in trees.items()}
    assert builds["a"] != builds["b"] and builds["a"].startswith("0.1.0+files.")
    work = tmp_path / "work"
    for name, src in trees.items():
        _fsarena(
            src, "run", "--fs", "ext4,ext2", "--command", "true", "--quick", "-q",
            "--workdir", str(work / name), "--results-dir", str(tmp_path / "r"),
            "-o", str(tmp_path / "r" / f"{name}.json"),
        )  # fmt: skip
    sessions = [tmp_path / "r" / "a.json", tmp_path / "r" / "b.json"]
    for name, path in zip(trees, sessions, strict=True):
        assert f'"fsarena_build": "{builds[name]}"' in path.read_text()
    out = _fsarena(trees["a"], "fleet", "report", *map(str, sessions), "--allow-same-machine",
                   check=False)  # fmt: skip
    assert out.returncode == 2, out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"ran fsarena {builds['a']} but" in lines[0] and f"ran {builds['b']};" in lines[0]
    assert str(sessions[0]) in lines[0] and str(sessions[1]) in lines[0]
    assert leftovers(work) == []


def test_a_checkouts_build_is_its_commit_and_a_change_adds_a_digest(tmp_path: Path) -> None:
    src = _tree(tmp_path, "repo")
    git = ["git", "-C", str(src.parent), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    clean = _version(src)
    assert clean == f"0.1.0+git.{head.stdout.strip()[:12]}"
    changed = src / "fsarena" / "fleet" / "render.py"
    changed.write_text(changed.read_text() + "# changed\n")
    dirty = _version(src)
    assert dirty.startswith(clean + ".dirty.")
    changed.write_text(changed.read_text() + "# changed again\n")
    assert _version(src) not in (clean, dirty)  # two dirty trees differ too
