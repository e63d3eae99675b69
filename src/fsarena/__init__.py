"""fsarena: compare Linux filesystems with real-world tasks, measured honestly."""

from __future__ import annotations

import functools
from pathlib import Path

__version__ = "0.1.0"

# Written into a copy of the package that has no git history (the archive `fleet run`
# ships, a wheel build): the identity of the tree it was made from.
BUILD_FILE = "BUILD"


@functools.cache
def build_identity() -> str:
    """What tells two builds apart, where the version number does not.

    `0.1.0+git.COMMIT` from a clean checkout; `0.1.0+git.COMMIT.dirty.DIGEST` from a
    checkout whose fsarena files changed (DIGEST: of the package's files, so two dirty
    trees differ too); the identity baked into BUILD when there is one; otherwise
    (an installed wheel) `0.1.0+files.DIGEST`.
    """
    package = Path(__file__).resolve().parent
    baked = package / BUILD_FILE
    if baked.is_file():
        return baked.read_text().strip()
    commit = _git(package.parents[1], "rev-parse", "HEAD")
    if commit is None:
        return f"{__version__}+files.{_digest(package)}"
    changed = _git(package.parents[1], "status", "--porcelain", "--", "src", "native")
    dirty = f".dirty.{_digest(package)}" if changed else ""
    return f"{__version__}+git.{commit[:12]}{dirty}"


def _git(checkout: Path, *args: str) -> str | None:
    """git's answer in the checkout, or None when it is not one (or git is missing)."""
    import subprocess

    if not (checkout / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=30
        )
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _digest(root: Path) -> str:
    """sha256 of the package's files (names and contents), caches and BUILD left out."""
    import hashlib

    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or "__pycache__" in rel.parts or rel.name == BUILD_FILE:
            continue
        h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]
