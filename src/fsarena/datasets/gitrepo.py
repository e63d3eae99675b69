"""The git dataset: a real repository built once into the cache from a tree, with seeded history.

No network: the repository is made with the real git from the kernel tree
fsarena already has (Debian's Linux source, or the generated look-alike
when FSARENA_KERNEL=generated; the session's origin of the kernel dataset
says which). History is a seeded series of commits, so packs and deltas are
realistic: the first commit holds half of the tree's files; each of the
next `commits` adds an even share of the rest, rewrites a few files
(appending lines, as patches do) and deletes one or two; the tag `first`
names the first commit and `last` the newest, far apart. Author, committer
and dates are fixed, so the same tree and spec always give the same commit
ids; the bare repository is cached by the tree's digest and the spec, and
copied (`cp -a`) to the source for each run.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from fsarena.datasets.manifest import FileEntry, Manifest, file_digest
from fsarena.datasets.spec import DatasetSpec, Layout, check_factor, require
from fsarena.errors import FsarenaError

BUILD_VERSION = 1
REPO_DIR = "repo.git"
# A clean, reproducible git: no user or system configuration, fixed identity.
GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_AUTHOR_NAME": "fsarena",
    "GIT_AUTHOR_EMAIL": "fsarena@localhost",
    "GIT_COMMITTER_NAME": "fsarena",
    "GIT_COMMITTER_EMAIL": "fsarena@localhost",
    "LC_ALL": "C",
}
EPOCH = 1_700_000_000


@dataclass(frozen=True, kw_only=True)
class GitRepoSpec(DatasetSpec):
    """A bare repository of another dataset's tree, with `commits` seeded commits after the first.

    `source_bytes` (the tree's size, set by the plan) makes total_bytes an estimate:
    git's compressed objects of text are about half the tree.
    """

    kind: ClassVar[str] = "git_repo"
    name: str = "gitrepo"
    of: str = "kernel"
    commits: int = 60
    source_bytes: int = 0
    seed: int = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        require(1 <= self.commits <= 10_000, f"commits must be 1..10000, got {self.commits}")

    @property
    def total_bytes(self) -> int:
        return self.source_bytes // 2 + (1 << 20)

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return self  # follows the tree it is built from, which the plan scales

    def plan(self) -> Layout:
        return Layout((), ())

    def description(self) -> str:
        return (
            f"bare git repository of dataset {self.of!r}: half its files in a first commit, "
            f"the rest over {self.commits} seeded commits that add, rewrite and delete files"
        )


def make_repo(
    spec: GitRepoSpec, tree: Path, manifest: Manifest, dest: Path, cache: Path
) -> Manifest:
    """Copy the cached bare repository (built first if absent) to dest/spec.name/repo.git."""
    key = hashlib.sha256(
        f"{manifest.digest()} {spec.spec_hash()} {BUILD_VERSION}".encode()
    ).hexdigest()[:24]
    cached = cache / "git" / f"{key}.git"
    if not (cached / ".complete").exists():
        _build(spec, tree, manifest, cached)
    out = dest / spec.name
    out.mkdir(parents=True)
    _git(["cp", "-a", str(cached), str(out / REPO_DIR)])
    (out / REPO_DIR / ".complete").unlink()
    found = list((out / REPO_DIR).rglob("*"))
    files = sorted(str(p.relative_to(out)) for p in found if p.is_file())
    entries = tuple(FileEntry(p, (out / p).stat().st_size, _digest(out / p)) for p in files)
    dirs = sorted([REPO_DIR, *(str(p.relative_to(out)) for p in found if p.is_dir())])
    return Manifest(spec.name, spec.spec_hash(), entries, tuple(dirs))


def _build(spec: GitRepoSpec, tree: Path, manifest: Manifest, bare: Path) -> None:
    work = bare.with_suffix(".building")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(bare, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        _git(["git", "init", "-q", "-b", "main", str(work)])
        _history(spec, tree, manifest, work)
        _git(["git", "clone", "-q", "--bare", str(work), str(bare)])
        _git(["git", "-C", str(bare), "repack", "-adq"])
    except BaseException:
        shutil.rmtree(bare, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    (bare / ".complete").write_text(f"{spec.description()}\n")


def _history(spec: GitRepoSpec, tree: Path, manifest: Manifest, work: Path) -> None:
    rng = random.Random(spec.seed)
    paths = [f.path for f in manifest.files]
    rng.shuffle(paths)
    first, rest = paths[: len(paths) // 2], paths[len(paths) // 2 :]
    present = _add(tree, work, first)
    _commit(work, 0, "first: half of the tree")
    _git(["git", "-C", str(work), "tag", "first"])
    for n in range(1, spec.commits + 1):
        share = rest[(n - 1) * len(rest) // spec.commits : n * len(rest) // spec.commits]
        present += _add(tree, work, share)
        for path in rng.sample(present, min(4, len(present))):  # patched: lines appended
            with open(work / path, "ab") as f:
                f.write(f"/* fsarena change {n} */\n".encode())
        for path in rng.sample(present, min(rng.randint(1, 2), len(present) - 1)):
            (work / path).unlink()
            present.remove(path)
        _commit(work, n, f"change {n}: {len(share)} files added")
    _git(["git", "-C", str(work), "tag", "last"])


def _add(tree: Path, work: Path, paths: list[str]) -> list[str]:
    for path in paths:
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tree / path, work / path)
    return list(paths)


def _commit(work: Path, n: int, message: str) -> None:
    date = f"@{EPOCH + 3600 * n} +0000"
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    _git(["git", "-C", str(work), "add", "-A"])
    _git(["git", "-C", str(work), "commit", "-q", "--no-verify", "-m", message], env)


def _git(argv: list[str], env: dict[str, str] | None = None) -> None:
    try:
        out = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **GIT_ENV, **(env or {})},
        )
    except FileNotFoundError:
        raise FsarenaError(
            f"{argv[0]} not found: run ./scripts/setup.sh (Debian package git)"
        ) from None
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        raise FsarenaError(f"building the git dataset: `{' '.join(argv[:3])}` failed: {tail[0]}")


def _digest(path: Path) -> str:
    with open(path, "rb") as f:
        return file_digest(f)
