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

from fsarena.datasets.history import REAL_SHAPE, patched, plan_commits
from fsarena.datasets.manifest import FileEntry, Manifest, file_digest
from fsarena.datasets.spec import DatasetSpec, Layout, check_factor, require
from fsarena.errors import FsarenaError
from fsarena.interrupt import deferred

# 2: every file of the tree committed whatever the tree's .gitignore files say (issue 29).
BUILD_VERSION = 2
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
HISTORIES = ("appends", "shaped")


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
    # "appends": each commit adds an even share of the tree, appends a line to 4 files and
    # deletes 1-2 (fsarena's first history); "shaped": commits drawn from a real history's
    # measured shape (fsarena.datasets.history).
    history: str = "appends"
    # A local git repository: its real history (the newest `commits` commits on HEAD's
    # first-parent line, after the one before them), instead of a synthetic one.
    repo: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        require(1 <= self.commits <= 10_000, f"commits must be 1..10000, got {self.commits}")
        require(self.history in HISTORIES, f"history must be one of {', '.join(HISTORIES)}")

    @property
    def total_bytes(self) -> int:
        return self.source_bytes // 2 + (1 << 20)

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return self  # follows the tree it is built from, which the plan scales

    def plan(self) -> Layout:
        return Layout((), ())

    def description(self) -> str:
        if self.repo:
            return (
                f"bare copy of the git repository {self.repo}: its newest {self.commits} "
                "commits on HEAD's first-parent line and the one before them (real history)"
            )
        if self.history == "shaped":
            return (
                f"bare git repository of dataset {self.of!r}: all but the files to be added in "
                f"a first commit, then {self.commits} seeded commits shaped like real ones "
                f"(files per commit, lines per file, spread; from {REAL_SHAPE.source})"
            )
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
    if spec.repo:  # the user's repository at its newest commit: a new commit, a new copy
        head = _git(["git", "-C", spec.repo, "rev-parse", "--verify", "HEAD^{commit}"])
        key = hashlib.sha256(
            f"{os.path.realpath(spec.repo)} {head.strip()} {spec.spec_hash()} "
            f"{BUILD_VERSION}".encode()
        ).hexdigest()[:24]
    cached = cache / "git" / f"{key}.git"
    if not (cached / ".complete").exists():
        if spec.repo:
            _copy_real(spec, cached)
        else:
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
        _plain_data(work)
        with _Importer(work) as importer:
            _history(spec, tree, manifest, work, importer)
        _all_committed(work, importer.present)
        _git(["git", "clone", "-q", "--bare", str(work), str(bare)])
        _git(["git", "-C", str(bare), "repack", "-adq"])
    except BaseException:
        shutil.rmtree(bare, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    (bare / ".complete").write_text(f"{spec.description()}\n")


def replay_line(repo: str, commits: int) -> list[str]:
    """The commits a replay of the user's repository pulls: the newest `commits` on HEAD's
    first-parent line and the one before them, oldest first; FsarenaError, naming what is
    wrong, for a path that is not a directory, not a git repository (a worktree or a bare
    repository is one), or has too short a history. Checked when the plan is made."""
    if not os.path.exists(repo):
        raise FsarenaError(f"--age-repo {repo}: no such directory; give a local git repository")
    if not os.path.isdir(repo):
        raise FsarenaError(f"--age-repo {repo}: not a directory; give a local git repository")
    try:
        _git(["git", "-C", repo, "rev-parse", "--git-dir"])
    except FsarenaError:
        raise FsarenaError(
            f"--age-repo {repo}: not a git repository (git finds none there); give a local "
            "git repository, its work tree or a bare one"
        ) from None
    try:
        line = _git(["git", "-C", repo, "rev-list", "--first-parent", "--reverse",
                     f"--max-count={commits + 1}", "HEAD"]).split()  # fmt: skip
    except FsarenaError:
        line = []  # no commit on HEAD yet
    if len(line) < commits + 1:
        raise FsarenaError(
            f"--age-repo {repo}: {commits} commits to replay, but HEAD's first-parent line has "
            f"{max(len(line) - 1, 0)} after its first; lower the aging profile's commits, or "
            "give a repository with a longer history"
        )
    return line


def _copy_real(spec: GitRepoSpec, bare: Path) -> None:
    """A bare copy of the user's repository, with `first`, `last` and main on the range."""
    line = replay_line(spec.repo, spec.commits)
    shutil.rmtree(bare, ignore_errors=True)
    bare.parent.mkdir(parents=True, exist_ok=True)
    try:
        _git(["git", "clone", "-q", "--bare", "--no-local", "--single-branch", "--no-tags",
              spec.repo, str(bare)])  # fmt: skip
        _git(["git", "-C", str(bare), "update-ref", "refs/heads/main", line[-1]])
        _git(["git", "-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main"])
        _git(["git", "-C", str(bare), "tag", "first", line[0]])
        _git(["git", "-C", str(bare), "tag", "last", line[-1]])
    except BaseException:
        shutil.rmtree(bare, ignore_errors=True)
        raise
    (bare / ".complete").write_text(f"{spec.description()}\n")


def _plain_data(work: Path) -> None:
    """Commit the tree as it is: its own .gitignore and .gitattributes are data, not rules.

    The real kernel tree carries hundreds of .gitignore files (the root one
    ignores `.*`, `*.bin`, `*.gz`, ...): obeyed, `git add -A` left files of the
    tree out and a commit whose changes all fell on ignored files was empty
    (issue 29). The history goes in through `git fast-import` (_Importer), which
    never reads them; they stay off here too, for any git command run in the work
    tree, and info/attributes (which wins over the tree's .gitattributes) turns off
    every content conversion.
    """
    _git(["git", "-C", str(work), "config", "core.excludesFile", "/dev/null"])
    # No automatic gc: detached, it repacked loose objects while `git clone` copied them
    # ("failed to copy file": the clone of a 300-commit history failed at random).
    _git(["git", "-C", str(work), "config", "gc.auto", "0"])
    info = work / ".git" / "info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "exclude").write_text("")
    (info / "attributes").write_text("* -text -eol -filter -ident -working-tree-encoding\n")


def _history(
    spec: GitRepoSpec, tree: Path, manifest: Manifest, work: Path, importer: _Importer
) -> None:
    if spec.history == "shaped":
        _shaped(spec, tree, manifest, work, importer)
    else:
        _appends(spec, tree, manifest, work, importer)


def _shaped(
    spec: GitRepoSpec, tree: Path, manifest: Manifest, work: Path, importer: _Importer
) -> None:
    """A first commit of all but the files to be added, then commits shaped like real ones."""
    rng = random.Random(spec.seed)
    paths = sorted(f.path for f in manifest.files)
    rng.shuffle(paths)
    commits = plan_commits(spec.commits, REAL_SHAPE, rng)
    reserve = paths[: min(sum(c.added for c in commits), len(paths) // 2)]
    present = _add(tree, work, paths[len(reserve) :])
    by_dir: dict[str, list[str]] = {}
    for path in present:
        by_dir.setdefault(os.path.dirname(path), []).append(path)
    importer.commit(0, "first: the tree but the files its history adds", present)
    importer.tag("first")
    for n, c in enumerate(commits, 1):
        chosen = _touched(present, by_dir, c.modified + c.deleted, c.same_directory, rng)
        for path in chosen[: c.modified]:
            target = work / path
            target.write_bytes(patched(target.read_bytes(), REAL_SHAPE, rng, f"c{n}"))
        for path in chosen[c.modified :]:
            (work / path).unlink()
            present.remove(path)
            by_dir[os.path.dirname(path)].remove(path)
        new, reserve = reserve[: c.added], reserve[c.added :]
        for path in _add(tree, work, new):
            present.append(path)
            by_dir.setdefault(os.path.dirname(path), []).append(path)
        importer.commit(n, f"change {n}: {c.modified} modified, {len(new)} added, "
                           f"{len(chosen) - c.modified} deleted", [*chosen, *new])  # fmt: skip
    importer.tag("last")
    if reserve:  # more files kept for additions than the drawn commits added
        raise FsarenaError(f"building the git dataset: {len(reserve)} files never added")
    importer.present = list(present)


def _touched(
    present: list[str], by_dir: dict[str, list[str]], count: int, local: float,
    rng: random.Random,
) -> list[str]:  # fmt: skip
    """`count` distinct files, a `local` share of them from one directory (a commit's spread)."""
    count = min(count, len(present) // 2)
    near = by_dir[os.path.dirname(rng.choice(present))]
    chosen = rng.sample(near, min(len(near), round(local * count)))
    seen = set(chosen)
    while len(chosen) < count:
        if (path := rng.choice(present)) not in seen:
            seen.add(path)
            chosen.append(path)
    return chosen


def _appends(
    spec: GitRepoSpec, tree: Path, manifest: Manifest, work: Path, importer: _Importer
) -> None:
    rng = random.Random(spec.seed)
    paths = [f.path for f in manifest.files]
    rng.shuffle(paths)
    first, rest = paths[: len(paths) // 2], paths[len(paths) // 2 :]
    present = _add(tree, work, first)
    importer.commit(0, "first: half of the tree", present)
    importer.tag("first")
    for n in range(1, spec.commits + 1):
        share = rest[(n - 1) * len(rest) // spec.commits : n * len(rest) // spec.commits]
        earlier = list(present)  # a file is deleted in a later commit than its own
        present += _add(tree, work, share)
        changed = list(share)
        for path in rng.sample(present, min(4, len(present))):  # patched: lines appended
            with open(work / path, "ab") as f:
                f.write(f"/* fsarena change {n} */\n".encode())
            changed.append(path)
        for path in rng.sample(earlier, min(rng.randint(1, 2), len(earlier) - 1)):
            (work / path).unlink()
            present.remove(path)
            changed.append(path)
        changed = list(dict.fromkeys(changed))
        importer.commit(n, f"change {n}: {len(share)} files added", changed)
    importer.tag("last")
    importer.present = list(present)


def _all_committed(work: Path, present: list[str]) -> None:
    """Nothing left out: the last commit tracks exactly the files the history kept."""
    listed = _git(["git", "-C", str(work), "ls-tree", "-r", "-z", "--name-only", "last"])
    tracked = set(listed.split("\0")) - {""}
    if missing := sorted(set(present) - tracked):
        raise FsarenaError(
            f"building the git dataset: {len(missing)} files of the tree are not in its last "
            f"commit (first: {missing[0]}); report this as a bug of fsarena"
        )


def _add(tree: Path, work: Path, paths: list[str]) -> list[str]:
    for path in paths:
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tree / path, work / path)
    return list(paths)


class _Importer:
    """The history, streamed to one `git fast-import`: one process for every commit.

    Two git processes per commit (add, then commit, which also stats the whole tree
    for its status) took 46 s for 300 commits of 786 files on the shared machine, and
    tens of minutes at scale 1. The commits are the same objects `git commit` made
    (same trees, messages, identity and dates, so the same ids): each commit lists
    the paths it changed, as they are in the work tree then (present: added or
    rewritten; absent: deleted). Every file is a plain 100644 blob: the tree's files
    are copied without their modes, as `git add` of them recorded.
    """

    def __init__(self, work: Path) -> None:
        self.work = work
        self.present: list[str] = []  # the last commit's files, for _all_committed
        self._commits = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._errors = work / ".git" / "fsarena-fast-import.err"

    def __enter__(self) -> _Importer:
        # A stop raised inside Popen would leave git writing on (fsarena.interrupt); and
        # __exit__, which stops it otherwise, is not called when __enter__ raises.
        try:
            with self._errors.open("wb") as errors, deferred() as held:
                self._proc = subprocess.Popen(
                    ["git", "-C", str(self.work), "fast-import", "--quiet", "--done"],
                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=errors,
                    env={**os.environ, **GIT_ENV},
                )  # fmt: skip
        except FileNotFoundError:
            raise FsarenaError(
                "git not found: run ./scripts/setup.sh (Debian package git)"
            ) from None
        try:
            held.check()
        except BaseException:
            self._proc.kill()
            self._proc.wait()
            raise
        return self

    def _write(self, data: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write(data)
        except BrokenPipeError:
            self._failed()

    def commit(self, n: int, message: str, changed: list[str]) -> None:
        """Commit the changed paths as the work tree has them, dated n hours on.

        A commit that changes nothing (possible in a history of a real tree) is kept as
        one, so the history has the commits the spec asks for.
        """
        who = f"fsarena <fsarena@localhost> {EPOCH + 3600 * n} +0000"
        text = f"{message}\n".encode()  # `git commit -m` ends the message with a newline
        self._commits += 1
        self._write(
            f"commit refs/heads/main\nmark :{self._commits}\nauthor {who}\n"
            f"committer {who}\ndata {len(text)}\n".encode()
            + text
            + b"\n"
        )
        for path in dict.fromkeys(changed):
            name = _quoted(path)
            target = self.work / path
            if target.is_file():
                data = target.read_bytes()
                self._write(b"M 100644 inline " + name + f"\ndata {len(data)}\n".encode())
                self._write(data + b"\n")
            else:
                self._write(b"D " + name + b"\n")
        self._write(b"\n")

    def tag(self, name: str) -> None:
        """A lightweight tag on the newest commit, as `git tag NAME` makes."""
        self._write(f"reset refs/tags/{name}\nfrom :{self._commits}\n\n".encode())

    def _failed(self) -> None:
        assert self._proc is not None
        self._proc.kill()
        self._proc.wait()
        tail = self._errors.read_text(errors="replace").strip().splitlines()[-1:] or [
            f"exit {self._proc.returncode}"
        ]
        raise FsarenaError(f"building the git dataset: `git fast-import` failed: {tail[0]}")

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        if exc is not None:
            self._proc.kill()
            self._proc.wait()
            return
        try:
            self._proc.stdin.write(b"done\n")
            self._proc.stdin.close()
        except BrokenPipeError:
            pass
        if self._proc.wait() != 0:
            self._failed()
        # Only the refs are updated, not the index: the work tree is cloned (--bare) and
        # deleted, and _all_committed reads the last commit's tree.


def _quoted(path: str) -> bytes:
    """A path in fast-import's C-style quotes: tree names are data (spaces, quotes, bytes)."""
    out = bytearray(b'"')
    for byte in path.encode("utf-8", "surrogateescape"):
        if byte in (0x22, 0x5C):
            out += b"\\" + bytes([byte])
        elif 0x20 <= byte < 0x7F:
            out.append(byte)
        else:
            out += f"\\{byte:03o}".encode()
    return bytes(out + b'"')


def _git(argv: list[str], env: dict[str, str] | None = None) -> str:
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
    return out.stdout


def _digest(path: Path) -> str:
    with open(path, "rb") as f:
        return file_digest(f)
