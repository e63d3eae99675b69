"""Git replay aging (Conway et al., FAST '17): a repository's history pulled commit by commit.

Conway's git-aging benchmark (aineshbakshi/Git-Benchmark, git_benchmark.py)
pulls each commit of a real repository's history into a checkout on the
filesystem under test, with `gc.auto 0` so git never repacks what the pulls
left. fsarena does the same with the repository its git task already builds
once into the dataset cache (fsarena.datasets.gitrepo: the kernel tree with
a seeded history; the profile names the dataset): `git init`, a first pull
of the history's first commit (half the tree: the early clone), then one
`git pull --ff-only` per `pull_step` commits, fetch and fast-forward merge,
until `commits` commits are applied or the profile's time cap. The origin
is the bare copy of the cached repository on the run's source; its
upload-pack is asked to serve any commit by id (uploadpack.allowAnySHA1InWant).

What is reproducible: the history (the dataset's seed), hence the work tree
at the last pulled commit; its digest (paths, sizes, contents, .git left
out: git's index holds inode numbers) is the same on every filesystem. The
fresh twin is Conway's clean copy: the same replay once on the host (in the
run's scratch directory, removed when the run ends), copied with `cp -a` onto
the fresh filesystem.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import resource
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from fsarena.aging.profiles import AgeProfile
from fsarena.datasets.gitrepo import GIT_ENV
from fsarena.errors import FsarenaError
from fsarena.host.executor import run_helper_group

# Any commit by its id, from the origin's upload-pack (Conway pulls each commit's id).
UPLOAD_PACK = "git -c uploadpack.allowAnySHA1InWant=true upload-pack"


@dataclass
class Replayed:
    """What a replay did: pulls, the last commit, blocks git wrote, why it stopped."""

    pulls: int = 0
    head: str = ""
    pulled: list[str] = field(default_factory=list)  # the commit of each pull, in order
    bytes_written: int = 0  # by the git processes, block-layer accounting (ru_oublock)
    stopped_by: str = "commits"  # "commits" (all applied) | "time" (the cap)


def git(*argv: str, cwd: str | None = None) -> str:
    """Run git with no user or system configuration; its stdout, or FsarenaError."""
    # git's own helpers (a pull's fetch, upload-pack, index-pack) in its process group: a
    # stop ends them all before the teardown unmounts the checkout they write in.
    try:
        out = run_helper_group(["git", *argv], cwd=cwd, env={**os.environ, **GIT_ENV})
    except FsarenaError:
        raise FsarenaError("git not found: run ./scripts/setup.sh (Debian package git)") from None
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        raise FsarenaError(f"git replay: `git {' '.join(argv[:2])}` failed: {tail[0]}")
    return out.stdout


def history(origin: str, profile: AgeProfile) -> list[str]:
    """The commit ids pulled, in order: the first commit, then every pull_step-th after it."""
    # From `first` (a real repository's copy holds the history before it too).
    first = git("-C", origin, "rev-parse", "first^{commit}").strip()
    after = git("-C", origin, "rev-list", "--reverse", "--first-parent", "first..last").split()
    commits = [first, *after]
    if len(commits) < profile.commits + 1:
        raise FsarenaError(
            f"aging profile {profile.name}: {profile.commits} commits to replay, but the "
            f"repository dataset {profile.repository!r} has {len(commits) - 1} after its first; "
            f"raise datasets.{profile.repository}.commits or lower the profile's commits"
        )
    applied = commits[1 : profile.commits + 1]
    steps = applied[profile.pull_step - 1 :: profile.pull_step]
    if steps[-1:] != applied[-1:]:
        steps.append(applied[-1])  # the last commit always, whatever the step
    return [commits[0], *steps]


def replay(
    origin: str, root: str, profile: AgeProfile, clock: Callable[[], float] = time.monotonic
) -> Replayed:
    """Init a repository at root and pull the history into it, one step at a time."""
    done = Replayed()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock
    git("init", "-q", "-b", "main", root)
    git("-C", root, "config", "gc.auto", "0")  # as Conway: never repack what pulls leave
    deadline = clock() + profile.time_cap_s
    for sha in history(origin, profile):
        if done.pulls and clock() > deadline:
            done.stopped_by = "time"
            break
        # --update-shallow: a user's repository may be a shallow clone (its roots cut).
        git("-C", root, "pull", "-q", "--ff-only", "--no-edit", "--update-shallow",
            "--upload-pack", UPLOAD_PACK, origin, sha)  # fmt: skip
        done.pulls += 1
        done.head = sha
        done.pulled.append(sha)
    done.bytes_written = (resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock - before) * 512
    return done


def files_touched(origin: str, pulled: list[str]) -> list[int]:
    """Files each pull brought: the first commit's whole tree, then each step's diff.

    Read from the origin after the replay (the timed part does no more than the pulls).
    """
    if not pulled:
        return []
    counts = [len(git("-C", origin, "ls-tree", "-r", "--name-only", pulled[0]).splitlines())]
    for before, after in itertools.pairwise(pulled):
        diff = git("-C", origin, "diff", "--name-only", "--no-renames", before, after)
        counts.append(len(diff.splitlines()))
    return counts


def tree_digest(root: str) -> tuple[str, int, int]:
    """(digest, files, bytes) of the work tree under root, .git left out, in sorted order."""
    h = hashlib.sha256(b"fsarena-git-replay-1\n")
    files = total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not (folder == root and d == ".git"))
        for name in sorted(names):
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                content = hashlib.file_digest(f, "sha256").hexdigest()
            size = os.path.getsize(path)
            h.update(f"{os.path.relpath(path, root)}\0{size}\0{content}\n".encode())
            files += 1
            total += size
    return h.hexdigest(), files, total


HOST_COPY = "git-replay"  # in the run's scratch directory; removed when the run ends


def reference(origin: str, scratch: str, profile: AgeProfile) -> str:
    """The replay done once on the host, for fresh filesystems' clean copies; its path.

    Kept in WORKDIR/scratch/git-replay for the run's repetitions (the caller
    tracks it in the ledger and removes it when the run ends); a copy of another
    history or profile (the key in its .complete) is replayed again.
    """
    key = hashlib.sha256(
        f"{git('-C', origin, 'rev-parse', 'last').strip()} {profile.model_dump_json()}".encode()
    ).hexdigest()[:16]
    done = os.path.join(scratch, HOST_COPY)
    complete = Path(done, ".complete")
    if not complete.exists() or complete.read_text().strip() != key:
        subprocess.run(["rm", "-rf", done], check=False)
        os.makedirs(done)
        replay(origin, os.path.join(done, "tree"), profile)
        complete.write_text(f"{key}\n")
    return os.path.join(done, "tree")
