"""The fault-injection matrix: every phase of every command under every stop signal.

Each case starts a real `fsarena` command on real loop devices (tests/integration/
stops.py), waits until a phase is under way (a line it prints, a helper it runs, a
FIFO it reads its input from) and sends SIGINT, SIGTERM, SIGHUP or SIGKILL. A stop it
can handle (INT, TERM, HUP) must end it with 128 + N and one `fsarena: error:` line
that says it was interrupted, what was kept and what was left, no traceback, and
nothing mounted, attached or running under its work directory. SIGKILL (`kill -9`, a
power cut) ends it with 137 and no word; `fsarena cleanup` must then leave nothing,
and what it removed is recorded.

FSARENA_MATRIX_OUT=FILE appends one JSON line per case (command, phase, signal, exit
code, the line, what was left, what cleanup removed): the table in the closing note of
issue 36 is made from it. FSARENA_CMD runs another build (see stops.py).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.integration import stops
from tests.integration.conftest import REPO
from tests.integration.stops import FIFO, Moment, Stopped, after, child, line, stop_at
from tests.integration.watch import saved_runs

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL]
SMALL = ["--fs", "ext4", "--scale", "0.01", "-n", "1", "--seed", "7"]


@dataclass
class Case:
    """One command at one phase: how to start it there, and the moment to stop it."""

    command: str
    phase: str
    argv: Callable[[Path, Path], list[str]]  # (work directory, results directory) -> args
    moment: Moment
    setup: Callable[[Path, Path], Iterator[None]] | None = None  # e.g. hold a lock
    kept: str = ""  # what the one line must say was kept (a substring), if anything
    extra: dict[str, str] = field(default_factory=dict)


def _run(*more: str) -> Callable[[Path, Path], list[str]]:
    return lambda w, r: ["run", *SMALL, *more, "--workdir", str(w), "--results-dir", str(r)]


def _fifo_suite(w: Path, r: Path) -> list[str]:
    fifo = r.parent / "suite.toml"
    os.mkfifo(fifo)
    return [
        "run",
        "--suite",
        str(fifo),
        "--fs",
        "ext4",
        "--workdir",
        str(w),
        "--results-dir",
        str(r),
    ]


def _tune(w: Path, r: Path) -> list[str]:
    return ["tune", "--fs", "ext4", "--options", "noatime,lazytime", "--suite", "quick",
            "--scale", "0.01", "-n", "1", "--seed", "7", "--no-race",
            "--workdir", str(w), "--results-dir", str(r)]  # fmt: skip


def _powerloss(w: Path, r: Path) -> list[str]:
    return ["powerloss", "--fs", "ext4", "--states", "6", "--workload", "create-fsync",
            "--seed", "7", "--workdir", str(w), "--results-dir", str(r)]  # fmt: skip


def _session(r: Path) -> Path:
    """A real session to read, copied from the fixtures (no run needed)."""
    r.mkdir(parents=True, exist_ok=True)
    path = r / "s.json"
    path.write_bytes((REPO / "tests" / "fixtures" / "three-filesystems.json").read_bytes())
    return path


def _fifo_session(w: Path, r: Path, command: str) -> list[str]:
    fifo = r.parent / "in.json"
    os.mkfifo(fifo)
    if command == "compare":
        return ["compare", str(_session(r)), str(fifo)]
    if command == "store":
        return ["store", "import", str(fifo), "--store", str(r / "s.sqlite")]
    return ["report", str(fifo), "--format", "html", "-o", str(r / "out.html")]


def _store_locked(w: Path, r: Path) -> Iterator[None]:
    """Another writer holds the store: the import waits on its lock, inside its write."""
    r.mkdir(parents=True, exist_ok=True)
    subprocess_store = r / "s.sqlite"
    from fsarena.store.db import open_store

    open_store(str(subprocess_store)).__exit__()
    conn = sqlite3.connect(subprocess_store, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


CASES = [
    Case("run", "plan (reading its suite)", _fifo_suite, FIFO),
    Case("run", "datasets", _run("--scale", "0.05"), line("== dataset tree:")),
    Case("run", "device ceiling (fio)", _run(), child("fio")),
    Case("run", "preflight (tool versions)", _run(), lambda w: _before_source(w)),
    Case("run", "mkfs", _run(), after("repetition 1: ext4", child("mkfs.ext4"))),
    Case("run", "a task", _run(), after("repetition 1: ext4", child("cp"))),
    Case("run", "reports", _run(), line("session saved:"), kept="measurements kept"),
    Case(
        "run", "aging probe", _run("--age", "fill", "--seed", "1"), line("probing the aging rate")
    ),
    Case("run", "aging", _run("--age", "fill", "--seed", "1"), line("== aging ext4")),
    Case("tune", "option probe", _tune, after("trying", child("mkfs", "mount"))),
    Case("tune", "race", _tune, after("== repetition 1:", child("cp"))),
    Case(
        "list options --probe",
        "option probe",
        lambda w, r: ["list", "options", "--fs", "ext4", "--probe", "--workdir", str(w)],
        child("mkfs", "mount"),
    ),
    Case("powerloss", "recording", _powerloss, child("fsarena-flogfs")),
    Case("powerloss", "crash states", _powerloss, line("testing 6")),
    Case("report", "reading the session", lambda w, r: _fifo_session(w, r, "report"), FIFO),
    Case("compare", "reading a session", lambda w, r: _fifo_session(w, r, "compare"), FIFO),
    Case("store import", "reading", lambda w, r: _fifo_session(w, r, "store"), FIFO),
    Case(
        "store import",
        "writing (the store locked)",
        lambda w, r: ["store", "import", str(_session(r)), "--store", str(r / "s.sqlite")],
        lambda w: _waiting_on_lock(w),
        setup=_store_locked,
    ),
]


def _before_source(w: stops.Watch) -> bool:
    """Between the run's time estimate and its source: its tools' versions read (a helper
    such as `mkfs.ext4 -V` running), the lock taken, leftovers looked for."""
    return "fsarena: time:" in w.text and "== source:" not in w.text and w.child("")


def _waiting_on_lock(w: stops.Watch) -> bool:
    """The import has opened the store and waits for its lock (sqlite's busy wait sleeps)."""
    try:
        fds = [os.readlink(f) for f in Path(f"/proc/{w.proc.pid}/fd").iterdir()]
    except OSError:
        return False
    return any(f.endswith("s.sqlite") for f in fds)


def _record(case: Case, signum: int, found: Stopped) -> None:
    out = os.environ.get("FSARENA_MATRIX_OUT")
    if not out:
        return
    row = {
        "command": case.command, "phase": case.phase, "signal": signal.Signals(signum).name,
        "exit": found.code, "line": found.line, "left": found.left,
        "cleanup_removed": found.cleanup_removed, "left_after_cleanup": found.left_after_cleanup,
    }  # fmt: skip
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.command}:{c.phase}")
def test_a_stop_in_every_phase(case: Case, signum: int, workdir: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    held = case.setup(workdir, results) if case.setup else None
    if held is not None:
        next(held)
    try:
        found = stop_at(case.argv(workdir, results), workdir, case.moment, signum)
    finally:
        if held is not None:
            next(held, None)
    _record(case, signum, found)
    assert found.reached, f"{case.phase} never came:\n{found.stderr}"
    assert "Traceback" not in found.stderr and "Aborted!" not in found.stderr, found.stderr
    if signum == signal.SIGKILL:
        assert found.code == 128 + signal.SIGKILL
        assert found.cleanup_code == 0, found
        assert found.left_after_cleanup == [], found
        return
    name = signal.Signals(signum).name
    assert found.code == 128 + signum, found.stderr
    assert len(found.error_lines) == 1, found.stderr
    assert f"interrupted by {name}" in found.line or f"interrupted ({name})" in found.line
    assert found.left == [], found
    assert "could not undo" not in found.stderr, found.stderr


def test_a_stop_kills_every_process_git_started(tmp_path: Path) -> None:
    """Issue 36, case 1 (git replay): a stop during `git pull` ends git's own helpers too.

    A SIGTERM during git-replay aging killed `git pull` alone: its fetch, upload-pack
    and index-pack wrote on into the aged filesystem, which stayed busy past the
    teardown's patience, and the run left a loop device attached to a deleted image.
    Here the pull runs in this process under the run's stop handler; the signal comes
    when git's helpers run; once the stop is raised, none of them may be left.
    """
    from fsarena.aging import gitreplay
    from fsarena.interrupt import Stop

    origin = tmp_path / "origin"
    _big_history(origin)
    marker = f"fsarena-test-{os.getpid()}-{tmp_path.name}"
    os.environ["FSARENA_TEST_GIT"] = marker
    stop = Stop()
    try:
        with stop.installed():
            sender = threading.Thread(target=_signal_when_git_helpers_run, args=(marker,))
            sender.start()
            with pytest.raises(KeyboardInterrupt):
                gitreplay.git("clone", "-q", "--no-local", str(origin), str(tmp_path / "copy"))
            sender.join()
            alive = _marked(marker)
    finally:
        os.environ.pop("FSARENA_TEST_GIT")
        for pid in _marked(marker):
            os.kill(pid, signal.SIGKILL)
    assert alive == [], f"git's helpers outlived the stop: {alive}"


def _big_history(origin: Path) -> None:
    """A repository whose clone takes a moment: 64 MB of incompressible blobs."""
    import subprocess

    subprocess.run(["git", "init", "-q", "-b", "main", str(origin)], check=True)
    for i in range(4):
        (origin / f"blob{i}").write_bytes(os.urandom(16 << 20))
    subprocess.run(["git", "-C", str(origin), "add", "."], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(origin),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ],
        check=True,
    )


def _marked(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and int(proc.name) != os.getpid():
            try:
                env = (proc / "environ").read_bytes().split(b"\0")
                stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if f"FSARENA_TEST_GIT={marker}".encode() in env and stat[0] != "Z":
                found.append(int(proc.name))
    return found


def _signal_when_git_helpers_run(marker: str) -> None:
    import time

    deadline = time.monotonic() + 60
    while len(_marked(marker)) < 3 and time.monotonic() < deadline:
        time.sleep(0.002)
    os.kill(os.getpid(), signal.SIGTERM)


# ---------------------------------------------------------------- ENOSPC and EROFS


@pytest.fixture
def small_tmpfs(workdir: Path) -> Iterator[Path]:
    """A 900 MB tmpfs of the test's own, to fill or turn read-only under a run."""
    import subprocess

    mnt = workdir / "fs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=900M", "fsarena-test-full", str(mnt)],
                   check=True)  # fmt: skip
    try:
        yield mnt
    finally:
        stops.undo(mnt)
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def _runs_saved(results: Path) -> int:
    if not results.is_dir():  # made by the first save, which may not have come yet
        return 0
    for path in results.glob("*.json"):
        return len(saved_runs(path))  # the file and its journal, mid-run
    return 0


def _fault_after(results: Path, runs: int, fault: Callable[[], bool]) -> Moment:
    """A moment that is the fault itself: once `runs` are saved, `fault()` until it took."""

    def moment(w: stops.Watch) -> bool:
        return _runs_saved(results) >= runs and fault()

    return moment


def test_a_work_directory_that_fills_mid_run(small_tmpfs: Path, tmp_path: Path) -> None:
    """Issue 36, case 2: a work directory (a tmpfs) filled by `dd` after round 1 began ended
    in two chained tracebacks (ENOSPC from the ledger's write), a teardown that said it
    "could not undo" what it had undone, and a Fix line about --image-size. Now: one
    line naming the full work directory and what was kept, exit 2, nothing left, the
    session resumable, and the report's Fix is about the work directory."""
    import subprocess

    workdir, results = small_tmpfs / "w", tmp_path / "results"
    args = ["run", "--fs", "ext4,xfs", "--scale", "0.05", "-n", "2", "--seed", "7",
            "--workdir", str(workdir), "--results-dir", str(results)]  # fmt: skip

    def fill() -> bool:
        subprocess.run(["dd", "if=/dev/zero", f"of={small_tmpfs}/filler", "bs=1M"],
                       capture_output=True, check=False)  # fmt: skip
        return True

    found = stop_at(args, workdir, _fault_after(results, 3, fill), 0, timeout_s=600)
    assert found.reached, found.stderr
    assert "Traceback" not in found.stderr, found.stderr
    assert found.code == 2, found.stderr
    assert "is full" in found.line and "measurements kept in" in found.line, found.stderr
    assert "make room in" in found.line and "--resume" in found.line
    assert "could not undo" not in found.stderr
    assert found.left == [], found
    assert not list(workdir.glob(".state.*"))  # no temporary ledger left per failed write
    session = next(results.glob("*.json"))
    shown = subprocess.run([*stops.FSARENA, "report", str(session)], capture_output=True,
                           text=True, check=False, cwd=REPO).stdout  # fmt: skip
    said = " ".join(shown.split())
    assert f"Fix: make room in the work directory {workdir}" in said, shown
    assert "--image-size" not in said
    (small_tmpfs / "filler").unlink()
    resumed = subprocess.run([*stops.FSARENA, "run", "--resume", str(session), "--quiet"],
                             capture_output=True, text=True, check=False, cwd=REPO)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr


def _remount_read_only(target: Path, seconds: float) -> int:
    """mount(2) MS_REMOUNT|MS_RDONLY tried in a tight loop for a while: 0, or the errno of
    the last refusal (EBUSY while a file there is open for writing)."""
    import ctypes
    import time

    libc = ctypes.CDLL(None, use_errno=True)
    ms_remount, ms_rdonly = 32, 1
    deadline = time.monotonic() + seconds
    error = 0
    while time.monotonic() < deadline:
        if libc.mount(b"none", str(target).encode(), None, ms_remount | ms_rdonly, None) == 0:
            return 0
        error = ctypes.get_errno()
    return error


def test_a_work_directory_never_turns_read_only_under_a_run(
    small_tmpfs: Path, tmp_path: Path
) -> None:
    """EROFS in the work directory: the kernel refuses to remount a filesystem read-only
    while a file on it is open for writing, and a run holds its lock file (WORKDIR/lock)
    open for writing from its start to its end: the work directory cannot turn read-only
    under a run (tried in a tight loop for 2 s mid-run: EBUSY every time). Read-only
    before a run, it is refused in one line, exit 2, before anything is made."""
    import errno
    import subprocess

    workdir, results = small_tmpfs / "w", tmp_path / "results"
    args = ["run", "--fs", "ext4,xfs", "--scale", "0.01", "-n", "2", "--seed", "7",
            "--workdir", str(workdir), "--results-dir", str(results)]  # fmt: skip
    tried: list[int] = []

    def read_only() -> bool:
        tried.append(_remount_read_only(small_tmpfs, 2.0))
        return True

    found = stop_at(args, workdir, _fault_after(results, 1, read_only), 0, timeout_s=600)
    assert tried == [errno.EBUSY], tried
    assert found.code == 0 and found.left == [], found
    assert _remount_read_only(small_tmpfs, 1.0) == 0  # the run over: now it can
    refused = subprocess.run([*stops.FSARENA, *args], capture_output=True, text=True,
                             check=False, cwd=REPO)  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    errors = [x for x in refused.stderr.splitlines() if x.startswith("fsarena: error:")]
    assert len(errors) == 1 and "read-only" in errors[0], refused.stderr
    assert "Traceback" not in refused.stderr and stops.leftovers(workdir) == []
    subprocess.run(["mount", "-o", "remount,rw", str(small_tmpfs)], check=True)


# ---------------------------------------------------------------- tune's option probe


def test_tune_refuses_a_bad_suite_before_it_probes(workdir: Path, tmp_path: Path) -> None:
    """Issue 36, case 1: the probe ran before the suite and flags were checked: an invalid
    suite was refused after 6 mkfs/mount steps. Now it is refused first: no option is
    tried, nothing is made in the work directory."""
    import subprocess

    bad = tmp_path / "bad.toml"
    bad.write_text('name = "bad"\ntasks = ["no_such_task"]\n')
    found = subprocess.run(
        [*stops.FSARENA, "tune", "--fs", "ext4", "--suite", str(bad), "--workdir", str(workdir),
         "--results-dir", str(tmp_path / "r")],
        capture_output=True, text=True, check=False, cwd=REPO,
    )  # fmt: skip
    assert found.returncode == 2, found.stderr
    assert "trying" not in found.stderr and "option-probe" not in found.stderr
    assert not (workdir / "option-probe").exists() and not (tmp_path / "r").exists()
    errors = [x for x in found.stderr.splitlines() if x.startswith("fsarena: error:")]
    assert len(errors) == 1, found.stderr


def test_a_tune_started_with_sigint_ignored_still_stops_in_its_probe(
    workdir: Path, tmp_path: Path
) -> None:
    """Issue 36, case 1: a SIGINT sent by a script (a background job starts with SIGINT
    ignored) was ignored during the probe, and the whole sweep ran on to exit 0."""
    import subprocess
    import time

    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    proc = subprocess.Popen(
        [*stops.FSARENA, *_tune(workdir, tmp_path / "r")], cwd=REPO, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, preexec_fn=ignore, start_new_session=True,
    )  # fmt: skip
    watch = stops.Watch(proc)
    moment = after("trying", child("mkfs", "mount"))
    deadline = time.monotonic() + 120
    while not moment(watch) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 128 + signal.SIGINT, watch.text
    watch.drained()
    assert "interrupted by SIGINT" in watch.text and "Traceback" not in watch.text
    assert stops.leftovers(workdir) == []


def test_a_full_disk_under_the_store_or_a_report_is_one_line(workdir: Path) -> None:
    """ENOSPC in the results directory, after the run: `store import` into a store whose
    disk fills, and `report -o` onto a full disk, each end in one line, exit 2, with the
    store as it was and no half-written report (nor charts)."""
    import subprocess

    tiny = workdir / "tiny"
    tiny.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "fsarena-test-tiny", str(tiny)],
                   check=True)  # fmt: skip
    fixtures = REPO / "tests" / "fixtures"
    try:
        for args in (
            ["store", "import", str(fixtures / "full-v2.json"),
             str(fixtures / "three-filesystems.json"), "--store", str(tiny / "s.sqlite")],
            ["report", str(fixtures / "full-v2.json"), "--format", "html", "-o",
             str(tiny / "r.html")],
        ):  # fmt: skip
            found = subprocess.run([*stops.FSARENA, *args], capture_output=True, text=True,
                                   check=False, cwd=REPO)  # fmt: skip
            assert found.returncode == 2, found.stderr
            assert "Traceback" not in found.stderr, found.stderr
            errors = [x for x in found.stderr.splitlines() if x.startswith("fsarena: error:")]
            assert len(errors) == 1, found.stderr
        assert sorted(p.name for p in tiny.iterdir()) == ["s.sqlite"]  # no report, no charts
    finally:
        subprocess.run(["umount", "-l", str(tiny)], check=False)
