"""Development with git on the test filesystem: clone, checkout far and back, status, repack.

The repository is the git dataset (fsarena.datasets.gitrepo): the kernel tree with a
seeded history, built once into the cache. The tasks follow pts/git and
BetrFS's git clone, with the real git and no user configuration:
`git clone --no-local` (objects copied and indexed, the work tree written),
`git checkout first` then `git checkout main` (half the tree's files
removed and written back), a cold-cache `git status --porcelain` (a stat of
every file of the index), and `git repack -adq` (every object rewritten
into one pack). Each step is verified: the work tree matches the commit
(`git status` empty, HEAD the expected commit) and `git fsck` is clean
after the clone and the repack.
"""

from __future__ import annotations

from fsarena.datasets.gitrepo import GIT_ENV, REPO_DIR
from fsarena.measure.collect import Command
from fsarena.tasks.base import REAL_USER_SYS, Check, Task, TaskContext, Tool, verify_absent

DATASETS = ("kernel", "gitrepo")
WORK = "git-work"
STATUS_OUTPUT = "git-status.txt"


def git(ctx: TaskContext, *args: str) -> tuple[str, ...]:
    """A git command in the work tree, with no user or system configuration."""
    env = [f"{k}={v}" for k, v in GIT_ENV.items()]
    return ("env", *env, "git", "-C", ctx.path(WORK), *args)


def _clean_tree(ctx: TaskContext, want: str = "last") -> Check:
    """The work tree matches the commit: nothing modified, missing or extra; HEAD as expected."""
    status = ctx.executor.output(git(ctx, "status", "--porcelain", "--untracked-files=all"))
    head = ctx.executor.output(git(ctx, "rev-parse", "HEAD")).strip()
    expected = ctx.executor.output(git(ctx, "rev-parse", f"{want}^{{commit}}")).strip()
    lines = status.splitlines()
    ok = not lines and head == expected
    detail = f"HEAD {head[:12]} = {want}, work tree clean" if ok else "; ".join(lines[:5])
    if head != expected:
        detail = f"HEAD {head[:12]}, expected {want} {expected[:12]}"
    return Check("work tree matches the commit", ok, detail)


def _fsck(ctx: TaskContext) -> Check:
    out = ctx.executor.output(git(ctx, "fsck", "--no-progress", "--no-dangling"))
    return Check("git fsck clean", not out.strip(), out.strip()[:200] or "no problem reported")


def _ensure_clone(ctx: TaskContext) -> None:
    if not ctx.executor.exists(ctx.path(WORK)):
        ctx.executor.call(_clone_argv(ctx))


def _clone_argv(ctx: TaskContext) -> tuple[str, ...]:
    env = [f"{k}={v}" for k, v in GIT_ENV.items()]
    source = f"{ctx.dataset('gitrepo').root}/{REPO_DIR}"
    return ("env", *env, "git", "clone", "-q", "--no-local", source, ctx.path(WORK))


class _Git(Task):
    """What every git task shares: the kind, the datasets, the columns; a clone to work in."""

    tools = (Tool("git", "git"),)

    kind = "development"
    writes = True
    datasets = DATASETS
    columns = REAL_USER_SYS

    def prepare(self, ctx: TaskContext) -> None:
        _ensure_clone(ctx)


class GitClone(_Git):
    """`git clone -q --no-local REPO WORK` onto the test filesystem, syncfs included.

    Verified: git fsck clean, the work tree matches the newest commit.
    """

    name = "git_clone"

    def prepare(self, ctx: TaskContext) -> None:
        """Nothing: the clone is what is timed."""

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(_clone_argv(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [_fsck(ctx), _clean_tree(ctx)]


class GitCheckout(_Git):
    """`git checkout -q first` then `git checkout -q main`: half the tree removed and back.

    The first commit holds half the files of the newest; both checkouts are one
    timed region, syncfs included. Verified: the work tree matches main again.
    """

    name = "git_checkout"

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [
            Command(git(ctx, "checkout", "-q", "first")),
            Command(git(ctx, "checkout", "-q", "main")),
        ]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [_clean_tree(ctx)]


class GitStatus(_Git):
    """A cold-cache `git status --porcelain`: the stat of every file in the index.

    Its output goes outside the test filesystem and must be empty (nothing
    changed). git may refresh its index file; that write is not synced.
    """

    name = "git_status"
    writes = False

    def _output(self, ctx: TaskContext) -> str:
        return f"{ctx.scratch}/{STATUS_OUTPUT}"

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(git(ctx, "status", "--porcelain"), stdout_path=self._output(ctx))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        lines = ctx.executor.count_lines(self._output(ctx))
        return [Check("status reports a clean tree", lines == 0, f"{lines} lines of changes")]


class GitRepack(_Git):
    """`git repack -adq`: every object rewritten into one new pack, syncfs included.

    Verified: git fsck clean, the work tree still matches the newest commit.
    """

    name = "git_repack"

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(git(ctx, "repack", "-adq"))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [_fsck(ctx), _clean_tree(ctx)]


class GitDelete(_Git):
    """Delete the clone (`rm -rf`: work tree and .git), syncfs included; verified gone."""

    name = "git_delete"

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("rm", "-rf", ctx.path(WORK)))]

    def verify(self, ctx: TaskContext) -> list[Check]:
        return [verify_absent(ctx, ctx.path(WORK))]


TASKS = (GitClone, GitCheckout, GitStatus, GitRepack, GitDelete)
