"""Git replay's plan: which commits are pulled, and the profile as data."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fsarena.aging.gitreplay import git, history, replay, tree_digest
from fsarena.aging.profiles import builtin_profiles, resolve_age
from fsarena.errors import FsarenaError


def _origin(tmp_path: Path, commits: int) -> str:
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    for n in range(commits + 1):
        (work / f"f{n}.txt").write_text(f"change {n}\n")
        git("-C", str(work), "add", "-A")
        git("-C", str(work), "commit", "-q", "-m", f"c{n}")
        if n == 0:
            git("-C", str(work), "tag", "first")
    git("-C", str(work), "tag", "last")
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return str(bare)


def test_the_builtin_profile_documents_its_source_and_needs_the_repository() -> None:
    profile = builtin_profiles()["git-replay"]
    assert "Conway" in profile.source and profile.kind == "git-replay"
    assert profile.datasets == ("kernel", "agingrepo")
    assert "300 commits" in profile.describe() and "3 commits per" in profile.describe()
    assert builtin_profiles()["churn"].datasets == ()


def test_steps_of_k_commits_end_on_the_last_one(tmp_path: Path) -> None:
    origin = _origin(tmp_path, 7)
    every = git("-C", origin, "rev-list", "--reverse", "last").split()
    profile = resolve_age({"source": "t", "kind": "git-replay", "commits": 7, "pull_step": 3})
    assert history(origin, profile) == [every[0], every[3], every[6], every[7]]


def test_too_short_a_history_is_named(tmp_path: Path) -> None:
    origin = _origin(tmp_path, 2)
    profile = resolve_age({"source": "t", "kind": "git-replay", "commits": 5})
    with pytest.raises(FsarenaError, match=r"has 2 after its first; raise datasets.agingrepo"):
        history(origin, profile)


def test_a_replay_ends_on_the_last_commit_with_the_same_tree(tmp_path: Path) -> None:
    origin = _origin(tmp_path, 4)
    profile = resolve_age({"source": "t", "kind": "git-replay", "commits": 4, "pull_step": 2})
    one, two = (
        replay(origin, str(tmp_path / "a"), profile),
        replay(origin, str(tmp_path / "b"), profile),
    )
    assert one.pulls == 3 and one.head == two.head
    assert one.head == git("-C", origin, "rev-parse", "last").strip()
    assert tree_digest(str(tmp_path / "a")) == tree_digest(str(tmp_path / "b"))
    assert tree_digest(str(tmp_path / "a"))[1] == 5  # f0..f4, .git left out
