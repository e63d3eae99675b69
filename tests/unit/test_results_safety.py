"""Never lose a result, no traceback for any input (issue 24, findings 3, 4, 6 and 7).

The fast half of the fault matrix (no root): session files named by exclusive
creation, --output refused over a file, the store's session identity, a save that
fails mid-run, binary and damaged inputs, read-only store commands, estimates and
running sessions, what a copy of the user's directory changes. The half that needs
real mounts (full and read-only results directories) is
tests/integration/test_results_safety.py.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fsarena.cli.commands import main
from fsarena.plan.model import make_plan
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session, load, save
from fsarena.session.journal import Journal
from tests.fakes import FakeExecutor

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SESSION = FIXTURES / "session-v3.json"


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _one_line_refusal(result: Result, *words: str) -> None:
    """Exit 2, one line on stderr naming the problem; no traceback."""
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("fsarena: error:")]
    assert len(lines) == 1, result.output
    for word in words:
        assert word in lines[0], lines[0]


# ------------------------------------------------------------ finding 3: never overwritten


def test_two_sessions_created_in_the_same_second_keep_two_files(tmp_path: Path) -> None:
    from fsarena.session.file import create

    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    first, second = new_session(plan, {}, {}), new_session(plan, {}, {})
    first.warn("mark", "first")
    second.warn("mark", "second")
    name = tmp_path / "r" / "fsarena-20261125-120000-article-a-2006.json"  # one stamp for both
    paths = [create(first, name, rename=True), create(second, name, rename=True)]
    assert paths == [name, name.with_name("fsarena-20261125-120000-article-a-2006-2.json")]
    assert [load(p).warnings[-1].message for p in paths] == ["first", "second"]


def test_a_session_name_given_by_the_user_is_never_taken_over(tmp_path: Path) -> None:
    from fsarena.errors import FsarenaError
    from fsarena.session.file import create

    taken = tmp_path / "mine.json"
    taken.write_text("my notes\n")
    with pytest.raises(FsarenaError, match=r"exists already.*--force"):
        create(Session(tool_version="t", created_at="t"), taken, rename=False)
    assert taken.read_text() == "my notes\n"


@pytest.mark.parametrize(
    "command",
    [
        ["report", str(SESSION), "--format", "markdown"],
        ["compare", str(SESSION), str(SESSION)],
        ["run", "--fs", "ext4", "--command", "true", "-n", "1", "--dry-run"],
    ],
    ids=["report", "compare", "run"],
)
def test_an_output_onto_an_existing_file_is_refused_without_force(
    tmp_path: Path, command: list[str]
) -> None:
    existing = tmp_path / "results.json"
    existing.write_text("a complete session, or any file of the user's\n")
    extra = ["--workdir", str(tmp_path / "w")] if command[0] == "run" else []
    refused = _cli(*command, *extra, "-o", str(existing))
    _one_line_refusal(refused, str(existing), "exists already", "--force")
    assert existing.read_text() == "a complete session, or any file of the user's\n"
    if command[0] != "run":  # --force is the one way to replace it
        forced = _cli(*command, "-o", str(existing), "--force")
        assert forced.exit_code == 0, forced.output
        assert existing.read_text() != "a complete session, or any file of the user's\n"


def test_store_history_output_onto_an_existing_file_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    assert _cli("store", "import", str(SESSION), "--store", str(store)).exit_code == 0
    existing = tmp_path / "h.txt"
    existing.write_text("keep\n")
    history = ("store", "history", "--task", "mkfs", "--fs", "ext4", "--store", str(store))
    _one_line_refusal(_cli(*history, "-o", str(existing)), "exists already")
    assert existing.read_text() == "keep\n"


def _variant(tmp_path: Path, name: str, runs: int | None, status: str, **changes: object) -> Path:
    raw = json.loads(SESSION.read_text())
    raw["runs"] = raw["runs"][:runs]
    raw["status"] = status
    if status == "running":
        raw["finished_at"] = None
    raw.update(changes)
    path = tmp_path / name
    path.write_text(json.dumps(raw, indent=1))
    return path


def _rows(store: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(store) as db:
        return db.execute(
            "SELECT source_path, status, (SELECT count(*) FROM runs r "
            "WHERE r.session_id = s.session_id) FROM sessions s ORDER BY source_path"
        ).fetchall()


def test_the_store_replaces_a_running_session_with_its_finished_version(tmp_path: Path) -> None:
    running = _variant(tmp_path, "running.json", 10, "running")
    finished = _variant(tmp_path, "finished.json", None, "complete")
    store = tmp_path / "s.sqlite"
    result = _cli("store", "import", str(running), str(finished), "--store", str(store))
    assert result.exit_code == 0, result.output
    assert "replacing" in result.output
    assert _rows(store) == [(str(finished), "complete", 52)]
    history = _cli("store", "history", "--task", "mkfs", "--fs", "ext4", "--store", str(store),
                   "--format", "markdown")  # fmt: skip
    assert history.exit_code == 0, history.output
    rows = [line for line in history.output.splitlines() if line.startswith("| 20")]
    assert len(rows) == 1, "one session's row, counted once"
    # An earlier version imported after the finished one never replaces it.
    again = _cli("store", "import", str(running), "--store", str(store))
    assert "a later version of this session is in the store" in again.output
    assert _rows(store) == [(str(finished), "complete", 52)]


def test_two_sessions_that_started_in_the_same_second_are_two_rows(tmp_path: Path) -> None:
    raw = json.loads(SESSION.read_text())
    other_plan = {**raw["plan"], "workdir": "/var/tmp/another-run"}  # a second run's own lock
    one = _variant(tmp_path, "one.json", None, "complete")
    two = _variant(tmp_path, "one-2.json", None, "complete", plan=other_plan)
    store = tmp_path / "s.sqlite"
    assert _cli("store", "import", str(one), str(two), "--store", str(store)).exit_code == 0
    assert [r[0] for r in _rows(store)] == [str(two), str(one)]


# ------------------------------------------------------------ finding 4: a save that fails


def test_a_full_results_directory_mid_run_stops_it_like_ctrl_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fsarena.run import scope as scope_module
    from fsarena.run.scope import SessionUnsaved

    plan = make_plan("article-a-2006", ["ext4", "xfs"], 1, 0.001, 7, str(tmp_path / "work"))
    ex = FakeExecutor()
    session = new_session(plan, {"kernel": "test"}, {})
    path = tmp_path / "session.json"
    saves = {"n": 0}

    def filling(s: Session, p: Path) -> None:
        saves["n"] += 1
        if saves["n"] > 12:  # the disk fills partway through the first sequence
            raise OSError(errno.ENOSPC, "No space left on device", str(p))
        save(s, p)

    def filling_line(journal: Journal[Session], s: Session) -> None:
        saves["n"] += 1
        if saves["n"] > 12:
            raise OSError(errno.ENOSPC, "No space left on device", str(journal.journal))
        appending(journal, s)

    appending = Journal.save
    # Every save of the run goes there: the file written whole, or a line of its journal.
    monkeypatch.setattr(scope_module, "save", filling)
    monkeypatch.setattr(Journal, "save", filling_line)
    with pytest.raises(SessionUnsaved) as stopped:
        Runner(plan, ex, session, path, "tmpfs", datasets=ex.datasets).run()
    kept = load(path)
    assert stopped.value.kept_runs == len(kept.runs) > 0
    assert kept.status == "running", "the last save that fitted: resumable"
    kinds = [c[0] if c[0] != "call" else f"call:{c[1]}" for c in ex.calls]
    assert kinds.count("attach") == kinds.count("detach"), "every loop device detached"
    assert kinds[-1] == "call:umount" or "call:umount" in kinds[-4:], "the source unmounted"


# ------------------------------------------------------------ finding 7: any input, one line


@pytest.fixture
def binary(tmp_path: Path) -> Path:
    path = tmp_path / "photo.json"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe" + bytes(range(256)))
    return path


@pytest.mark.parametrize(
    "command",
    [["report"], ["compare", str(SESSION)], ["run", "--resume"], ["store", "import"]],
    ids=["report", "compare", "resume", "store-import"],
)
def test_a_binary_file_is_one_line(tmp_path: Path, binary: Path, command: list[str]) -> None:
    args = [*command, str(binary)]
    if command[0] == "store":
        args += ["--store", str(tmp_path / "s.sqlite")]
    _one_line_refusal(_cli(*args), str(binary), "not UTF-8")
    assert not (tmp_path / "s.sqlite").exists(), "a bad file is refused before the store is made"


@pytest.mark.parametrize("option", ["--suite", "--machine", "--age"])
def test_a_binary_suite_machine_or_aging_file_is_one_line(
    tmp_path: Path, binary: Path, option: str
) -> None:
    toml = binary.rename(binary.with_suffix(".toml"))
    args = ["run", "--fs", "ext4", "-n", "1", "--dry-run", "--workdir", str(tmp_path / "w")]
    _one_line_refusal(_cli(*args, option, str(toml)), str(toml), "not UTF-8")


@pytest.mark.parametrize("command", [["list"], ["import", str(SESSION)]], ids=["list", "import"])
def test_a_store_that_is_not_a_database_is_one_line(tmp_path: Path, command: list[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n" * 100)
    _one_line_refusal(_cli("store", *command, "--store", str(notes)), "not an fsarena store")
    assert notes.read_text() == "not a database\n" * 100


def test_a_session_without_its_runs_is_damaged_not_empty(tmp_path: Path) -> None:
    raw = json.loads(SESSION.read_text())
    del raw["runs"]
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(raw))
    _one_line_refusal(_cli("report", str(damaged)), "damaged", "runs")
    store = tmp_path / "s.sqlite"
    _one_line_refusal(_cli("store", "import", str(damaged), "--store", str(store)), "damaged")
    assert not store.exists()


@pytest.mark.parametrize(
    "command",
    [["list"], ["history", "--task", "mkfs", "--fs", "ext4"], ["export", "--parquet", "out"]],
    ids=["list", "history", "export"],
)
def test_read_only_store_commands_never_create_a_store(tmp_path: Path, command: list[str]) -> None:
    typo = tmp_path / "resluts" / "fsarena.sqlite"
    _one_line_refusal(_cli("store", *command, "--store", str(typo)), f"no store at {typo}")
    assert not typo.parent.exists()


def test_an_estimate_is_never_read_from_a_running_session(tmp_path: Path) -> None:
    from fsarena.run.estimate import NO_ESTIMATE, estimate

    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "w"))
    earlier = new_session(plan, {}, {})
    ex = FakeExecutor()
    Runner(plan, ex, earlier, tmp_path / "earlier.json", "tmpfs", datasets=ex.datasets).run()
    running = load(tmp_path / "earlier.json")
    running.status = "running"  # another run now, or one killed -9: its times are partial
    save(running, tmp_path / "earlier.json")
    assert estimate(plan, tmp_path).startswith(NO_ESTIMATE)
    running.status = "complete"
    save(running, tmp_path / "earlier.json")
    assert not estimate(plan, tmp_path).startswith(NO_ESTIMATE)


# ------------------------------------------------------------ finding 6: --data's copy


def _every_kind(root: Path) -> Path:
    """A user's tree with one entry of each kind a copy can lose or change."""
    tree = root / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "empty" / "deeper").mkdir(parents=True)
    (tree / "a.txt").write_text("hello\n")
    (tree / "sub" / "b.txt").write_text("world\n")
    os.link(tree / "sub" / "b.txt", tree / "b-again.txt")
    os.link(tree / "sub" / "b.txt", tree / "b-third.txt")
    (tree / "to-a").symlink_to("a.txt")
    (tree / "to-sub").symlink_to("sub")
    os.mkfifo(tree / "pipe")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tree / "sock"))
    with open(tree / "sparse.img", "wb") as f:
        f.truncate(8 << 20)
        f.write(b"x")
    return tree


def test_data_says_what_its_copy_leaves_out_and_changes(tmp_path: Path) -> None:
    from fsarena.datasets.userdir import DirectorySpec, resolve_directory

    tree = _every_kind(tmp_path)
    spec = DirectorySpec(path=str(tree))
    said = spec.description()
    assert "5 of its 5 regular files" in said
    assert "left out: 2 symbolic links, 1 FIFO, 1 socket, 2 directories with no file" in said
    assert "1 hard-linked file (3 names) copied as separate files" in said
    if os.stat(tree / "sparse.img").st_blocks * 512 < 8 << 20:  # holes kept where it was made
        assert "1 sparse file written out in full" in said
    assert "100" not in said
    _, note = resolve_directory(spec, tmp_path / "cache")
    assert said.split(": ", 1)[1].split(";", 1)[1] in note, "the run says it too"
