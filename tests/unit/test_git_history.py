"""The git dataset's histories: ignore rules obeyed by nobody, shaped like real, or real."""

from __future__ import annotations

import os
import random
import statistics
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsarena.aging.gitreplay import files_touched, git, replay
from fsarena.aging.profiles import resolve_age
from fsarena.cli.commands import main
from fsarena.datasets.gitrepo import REPO_DIR, GitRepoSpec, make_repo
from fsarena.datasets.history import REAL_SHAPE, draw, plan_commits
from fsarena.datasets.manifest import FileEntry, Manifest
from fsarena.errors import FsarenaError
from fsarena.plan.model import make_plan
from fsarena.report import aging, render
from fsarena.session.file import Session


def _tree(root: Path, files: int = 240) -> Manifest:
    """A source-like tree whose root .gitignore ignores everything, as `*` rules do."""
    rng = random.Random(5)
    entries = []
    for n in range(files):
        path = f"d{n % 12}/s{n % 3}/f{n}.c" if n else ".gitignore"
        body = "*\n" if not n else "".join(f"line {k} of {n}\n" for k in range(rng.randint(5, 90)))
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(body)
        entries.append(FileEntry(path, len(body), ""))
    return Manifest("kernel", "x", tuple(sorted(entries, key=lambda e: e.path)), ())


def _log(repo: Path, *argv: str) -> list[str]:
    return git("-C", str(repo), *argv).splitlines()


@pytest.mark.parametrize("history", ["appends", "shaped"])
def test_ignore_rules_of_the_tree_leave_nothing_out(tmp_path: Path, history: str) -> None:
    tree = tmp_path / "kernel"
    manifest = _tree(tree)
    spec = GitRepoSpec(name="r", commits=40, history=history)
    make_repo(spec, tree, manifest, tmp_path, tmp_path / "cache")
    repo = tmp_path / "r" / REPO_DIR
    assert len(_log(repo, "rev-list", "last")) == 41
    added = set(_log(repo, "log", "--format=", "--name-only", "--diff-filter=A")) - {""}
    assert added == {f.path for f in manifest.files}  # on main: only .gitignore was ever added


def test_the_shaped_history_touches_files_as_real_commits_do(tmp_path: Path) -> None:
    tree = tmp_path / "kernel"
    manifest = _tree(tree, 600)
    make_repo(GitRepoSpec(name="r", commits=120, history="shaped"), tree, manifest, tmp_path,
              tmp_path / "cache")  # fmt: skip
    repo = tmp_path / "r" / REPO_DIR
    commits = _log(repo, "rev-list", "--reverse", "last")
    touched = files_touched(str(repo), commits)[1:]
    assert statistics.median(touched) <= 3 and max(touched) > 3  # few, now and then many
    first = set(_log(repo, "ls-tree", "-r", "--name-only", "first"))
    assert len(first) > 0.8 * len(manifest.files)  # the tree, but the files it adds (~11 %)
    diff = git("-C", str(repo), "diff", "--numstat", commits[1], commits[-1])
    assert "fsarena_c" in git("-C", str(repo), "log", "-p", "-3", "last")  # hunks, not appends
    assert diff.strip()


def test_drawn_commits_have_the_measured_shape() -> None:
    rng = random.Random(1)
    commits = plan_commits(20_000, REAL_SHAPE, rng)
    touched = [c.modified + c.added + c.deleted for c in commits]
    assert statistics.median(touched) == 2
    assert 3.4 < statistics.fmean(touched) < 4.6  # measured 3.74; the tail's interpolation
    added = sum(c.added for c in commits) / sum(touched)
    assert abs(added - REAL_SHAPE.added_share) < 0.01
    assert all(1 <= draw(REAL_SHAPE.files_touched, rng) <= 268 for _ in range(1000))


def _real(tmp_path: Path, commits: int) -> Path:
    work = tmp_path / "user"
    git("init", "-q", "-b", "trunk", str(work))
    for n in range(commits):
        (work / f"f{n % 4}.txt").write_text(f"version {n}\n")
        git("-C", str(work), "add", "-A")
        git("-C", str(work), "commit", "-q", "-m", f"c{n}")
    return work


def test_a_users_repository_is_replayed_from_its_newest_commits(tmp_path: Path) -> None:
    user = _real(tmp_path, 9)
    spec = GitRepoSpec(name="agingrepo", commits=5, repo=str(user))
    make_repo(spec, tmp_path, Manifest("kernel", "x", (), ()), tmp_path, tmp_path / "cache")
    origin = str(tmp_path / "agingrepo" / REPO_DIR)
    line = _log(user, "rev-list", "--reverse", "HEAD")
    assert _log(Path(origin), "rev-parse", "first", "last", "main") == [line[3], line[8], line[8]]
    profile = resolve_age({"source": "t", "kind": "git-replay", "commits": 5, "pull_step": 2})
    done = replay(origin, str(tmp_path / "aged"), profile)
    assert done.pulled == [line[3], line[5], line[7], line[8]]
    assert files_touched(origin, done.pulled) == [4, 2, 2, 1]
    assert (tmp_path / "aged" / "f0.txt").read_text() == "version 8\n"


def test_a_repository_too_short_for_the_profile_is_named(tmp_path: Path) -> None:
    user = _real(tmp_path, 3)
    spec = GitRepoSpec(name="agingrepo", commits=5, repo=str(user))
    with pytest.raises(FsarenaError, match=r"--age-repo .*has 2 after its first; lower"):
        make_repo(spec, tmp_path, Manifest("k", "x", (), ()), tmp_path, tmp_path / "cache")


def test_age_repo_sets_the_repository_datasets_and_needs_git_replay(tmp_path: Path) -> None:
    user = _real(tmp_path, 3)
    short = {"source": "t", "kind": "git-replay", "commits": 2, "pull_step": 1}
    plan = make_plan("quick", ["ext4"], 1, 0.01, 1, str(tmp_path), age=short, age_repo=str(user))
    assert plan.age is not None and plan.age.kind == "git-replay"
    assert plan.datasets["agingrepo"] == {"repo": str(user), "commits": 2}
    with pytest.raises(FsarenaError, match="--age-repo replays a git history, but aging"):
        make_plan("quick", ["ext4"], 1, 0.01, 1, str(tmp_path), age="churn", age_repo=str(user))
    assert os.path.isdir(user)


def test_age_repo_is_checked_when_the_plan_is_made(tmp_path: Path) -> None:
    """Issue 36, case 7: --age-repo was checked only when the dataset was built: a
    one-commit repository passed --dry-run and each real try left a failed session; a
    git worktree was "not a git repository"; so was a path that does not exist."""
    user = _real(tmp_path, 1)
    plain = tmp_path / "plain"
    plain.mkdir()
    cases = {
        str(user): "300 commits to replay, but HEAD's first-parent line has 0 after its first",
        str(tmp_path / "no"): "no such directory",
        str(plain): "not a git repository",
    }
    for path, said in cases.items():
        result = CliRunner().invoke(
            main, ["run", "--dry-run", "--fs", "ext4", "--scale", "0.01", "--age-repo", path,
                   "--workdir", str(tmp_path / "w")],
        )  # fmt: skip
        assert result.exit_code == 2, result.output
        assert said in result.output and result.output.count("\n") == 1, result.output
    worktree = tmp_path / "wt"
    git("-C", str(_real(tmp_path / "x", 4)), "worktree", "add", "-q", str(worktree))
    short = {"source": "t", "kind": "git-replay", "commits": 3, "pull_step": 1}
    plan = make_plan("quick", ["ext4"], 1, 0.01, 1, str(tmp_path), age=short,
                     age_repo=str(worktree))  # fmt: skip
    assert plan.datasets["agingrepo"]["repo"] == str(worktree)


def test_the_origin_is_never_written(tmp_path: Path) -> None:
    user = _real(tmp_path, 4)
    before = subprocess.run(["git", "-C", str(user), "for-each-ref"], capture_output=True)
    spec = GitRepoSpec(name="agingrepo", commits=2, repo=str(user))
    make_repo(spec, tmp_path, Manifest("k", "x", (), ()), tmp_path, tmp_path / "cache")
    after = subprocess.run(["git", "-C", str(user), "for-each-ref"], capture_output=True)
    assert before.stdout == after.stdout


def _replayed_session(device: dict[str, object], repo: str = "") -> Session:
    """ext4 fresh and aged by a git replay: cold greps 1.5x slower aged, 3 runs each."""
    from tests.unit.test_aging import _run

    walls = {"ext4": 1.0, "ext4+git-replay": 1.5}
    runs = [_run(fs, "aged_grep", rep, w * (1 + 0.01 * rep)) for fs, w in walls.items()
            for rep in (1, 2, 3)]  # fmt: skip
    record = {"manifest_digest": "abc", "wall_s": 10.0, "bytes_written": 1e9, "files": 5,
              "head": "b" * 40, "first_commit": "a" * 40, "files_touched": [900, 2, 5, 1],
              "device_class": device}  # fmt: skip
    spec = {"name": "agingrepo", "kind": "git_repo", "history": "shaped"}
    return Session(
        tool_version="t",
        created_at="t",
        plan={"filesystems": ["ext4"], "tasks": ["aged_grep"],
              "age": {"name": "git-replay", "kind": "git-replay", "repository": "agingrepo"},
              "task_info": {"aged_grep": {"kind": "aged_reads", "timed": True}}},
        profiles_as_run={"ext4": {"group": "kernel"},
                         "ext4+git-replay": {"group": "aged:kernel", "fresh": "ext4",
                                             "aged": "git-replay"}},
        runs=runs,
        aging={"ext4": record},
        datasets={"agingrepo": {"spec": {**spec, **({"repo": repo} if repo else {})}}},
    )  # fmt: skip


SSD_LOOP = {"device": "/dev/loop3", "loop": True, "rotational": False,
            "backing_device": "/dev/vda", "backing_rotational": False}  # fmt: skip


def test_the_report_names_the_history_and_the_files_each_pull_touched() -> None:
    text = " ".join(render(_replayed_session(SSD_LOOP, repo="/home/me/proj"), "text").split())
    assert "the real history of the git repository /home/me/proj" in text
    assert "commits aaaaaaaaaaaa..bbbbbbbbbbbb" in text
    assert "4 pulls; the first (the clone) brought 900 files" in text
    assert "median 2, mean 2.7, at most 5 files (8 in all)" in text
    shaped = " ".join(render(_replayed_session(SSD_LOOP), "text").split())
    assert "a synthetic history shaped like real commits" in shaped


def test_the_measured_change_is_put_beside_the_published_one_for_the_device() -> None:
    section = aging.sections(_replayed_session(SSD_LOOP))[-1]
    assert section.title == "Aging beside published effects"
    row = section.rows[0]
    assert row[1] == "a loop image on /dev/vda (not rotational)" and row[2].startswith("4 pulls")
    assert row[4].startswith("aged_grep 1.5x (") and "noise" not in row[4]
    notes = " ".join(section.notes)
    assert "aging changed cold reads by at most 50 %" in notes
    assert "SSD cost little and the host filesystem lays out the image file" in notes
    assert "Reference (published, not measured here): Conway et al. (HotStorage '19)" in notes
    assert "FAST '17" not in notes  # the HDD reference is not this device's class
    hdd = {"device": "/dev/sdb", "loop": False, "rotational": True}
    notes = " ".join(aging.sections(_replayed_session(hdd))[-1].notes)
    assert "Conway et al. (FAST '17)" in notes and "every discontiguity costs a seek" in notes


def test_a_shallow_clone_is_replayed_too(tmp_path: Path) -> None:
    full = _real(tmp_path, 9)
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "6", f"file://{full}", str(shallow)],
                   check=True)  # fmt: skip
    spec = GitRepoSpec(name="agingrepo", commits=4, repo=str(shallow))
    make_repo(spec, tmp_path, Manifest("k", "x", (), ()), tmp_path, tmp_path / "cache")
    profile = resolve_age({"source": "t", "kind": "git-replay", "commits": 4})
    done = replay(str(tmp_path / "agingrepo" / REPO_DIR), str(tmp_path / "aged"), profile)
    assert done.pulls == 5 and (tmp_path / "aged" / "f0.txt").read_text() == "version 8\n"


def test_a_virtio_disk_is_no_evidence_of_spinning_so_both_references_are_given() -> None:
    virtio = {**SSD_LOOP, "backing_rotational": True, "backing_virtio": True}
    section = aging.sections(_replayed_session(virtio))[-1]
    assert "virtio, sysfs says rotational: a virtual disk's default" in section.rows[0][1]
    notes = " ".join(section.notes)
    assert "FAST '17" in notes and "HotStorage '19" in notes
    assert "whether its disk spins is unknown" in notes


def test_the_progress_names_the_users_repository(tmp_path: Path) -> None:
    """Issue 36, case 7: with a valid --age-repo, the progress and the report said "git
    history built from dataset kernel" while the session named the user's repository."""
    from types import SimpleNamespace

    from fsarena.run.source import resolved_specs
    from tests.fakes import FakeExecutor

    user = _real(tmp_path, 3)
    short = {"source": "t", "kind": "git-replay", "commits": 2, "pull_step": 1}
    plan = make_plan("quick", ["ext4"], 1, 0.01, 1, str(tmp_path), age=short, age_repo=str(user))
    ex = FakeExecutor()
    scope = SimpleNamespace(plan=plan, datasets=ex.datasets, workdir=lambda *p: str(tmp_path))
    _, origins = resolved_specs(scope)  # type: ignore[arg-type]
    assert origins["agingrepo"].startswith(f"the git repository {user}: its newest 2 commits")
    assert "built from dataset" not in origins["agingrepo"]
