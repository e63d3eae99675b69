"""A real `fsarena` process stopped at a named moment by a real signal, and what it left.

The fault-injection matrix (test_fault_matrix.py) starts a command, waits for the moment
a phase is under way, as a user would see it: a line on stderr, a helper process of the
run (fio, mkfs, fsarena-mkfiles), or fsarena blocked reading a FIFO it was given as its
suite or session. Then it sends one signal. SIGKILL stands for `kill -9` (and a power
cut): the run can say nothing, so `fsarena cleanup` is run after it and what it removed
is recorded. Everything is read from the machine itself: mounts and loop devices under
the work directory, and processes that carry its FSARENA_WORKDIR.

FSARENA_CMD (a command line, default `python -m fsarena`) runs another build of fsarena,
to check that a test fails on older code (e.g. a `git archive` of an older commit:
`FSARENA_CMD="env PYTHONPATH=/tmp/old/src python -m fsarena"`).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.integration.conftest import REPO

FSARENA = shlex.split(os.environ.get("FSARENA_CMD", "")) or [sys.executable, "-m", "fsarena"]


def under(path: str, root: Path) -> bool:
    return path == str(root) or path.startswith(f"{root}/")


def leftovers(workdir: Path) -> list[str]:
    """Mounts, loop devices and marked processes of one work directory."""
    import json

    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        target = line.split()[4]
        if under(target, workdir):
            found.append(f"mount {target}")
    out = subprocess.run(["losetup", "-J", "-l"], capture_output=True, text=True, check=False)
    for dev in json.loads(out.stdout or "{}").get("loopdevices", []):
        back = str(dev.get("back-file") or "")
        if under(back.removesuffix(" (deleted)"), workdir):
            found.append(f"loop {dev['name']} ({back})")
    try:  # what the work directory's ledger still names (an image file, a cgroup)
        state = json.loads((workdir / "state.json").read_text())
        found += [f"recorded {r['kind']} {r['ident']}" for r in state.get("resources", [])]
    except (OSError, ValueError):
        pass
    marker = f"FSARENA_WORKDIR={workdir}".encode()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and proc.name != str(os.getpid()):
            try:
                if marker in (proc / "environ").read_bytes().split(b"\0"):
                    found.append(f"process {proc.name} ({_comm(int(proc.name))})")
            except OSError:
                continue
    return found


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def descendants(pid: int) -> list[int]:
    """Every process below pid (children of children too)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            kids = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        found += [int(k) for k in kids]
        todo += [int(k) for k in kids]
    return found


@dataclass
class Watch:
    """A command's stderr, read as it comes, and its processes, for a moment to arrive."""

    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def drained(self, timeout_s: float = 30.0) -> None:
        """Until the pipe is read to its end (every holder of it exited), or timeout_s:
        after the command exited, what it wrote last is then in `lines`."""
        assert self.reader is not None
        self.reader.join(timeout_s)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def child(self, *names: str) -> bool:
        """A helper process of the command runs now (by its comm: fio, mkfs.ext4, ...)."""
        return any(_comm(p).startswith(names) for p in descendants(self.proc.pid))

    def blocked_on_fifo(self) -> bool:
        """The command waits in open(2) or read(2) on a FIFO (its suite or session)."""
        try:
            fds = list(Path(f"/proc/{self.proc.pid}/fd").iterdir())
        except OSError:
            return False
        wchan = Path(f"/proc/{self.proc.pid}/wchan").read_text() if fds else ""
        return wchan in ("wait_for_partner", "anon_pipe_read", "pipe_read", "pipe_wait_readable")


Moment = Callable[[Watch], bool]


def line(text: str) -> Moment:
    return lambda w: text in w.text


def child(*names: str) -> Moment:
    return lambda w: w.child(*names)


def after(text: str, then: Moment) -> Moment:
    """`then`, once the command has printed `text` (stderr is kept whole: no state here,
    so one moment serves every test that uses it)."""
    return lambda w: text in w.text and then(w)


FIFO: Moment = lambda w: w.blocked_on_fifo()  # noqa: E731


@dataclass
class Stopped:
    """What one stop did: the exit, the one line, what was left, what cleanup removed."""

    code: int
    error_lines: list[str]  # "fsarena: error: ..." lines
    stderr: str
    left: list[str]  # on the machine, at the exit
    cleanup_removed: list[str] = field(default_factory=list)  # kill -9: cleanup's "removed:"
    cleanup_code: int | None = None
    left_after_cleanup: list[str] = field(default_factory=list)
    reached: bool = True  # the moment came before the command ended

    @property
    def line(self) -> str:
        return self.error_lines[-1].removeprefix("fsarena: error: ") if self.error_lines else ""


def stop_at(
    args: list[str],
    workdir: Path,
    moment: Moment,
    signum: int,
    *,
    timeout_s: float = 180,
    stdin: int | None = subprocess.DEVNULL,
    feed: Callable[[], None] | None = None,
) -> Stopped:
    """Run `fsarena ARGS`, send signum at the moment, and gather what it did and left.

    feed: what unblocks the command after the signal if it waits on a FIFO (it reads on
    once its handler returned: a FIFO's writer must come, or the read waits forever).
    """
    proc = subprocess.Popen(
        [*FSARENA, *args], cwd=REPO, stdin=stdin, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    watch = Watch(proc)
    deadline = time.monotonic() + timeout_s
    reached = False
    while proc.poll() is None and time.monotonic() < deadline:
        if moment(watch):
            reached = True
            break
        time.sleep(0.005)
    if proc.poll() is None:
        proc.send_signal(signum)
    if feed is not None and signum != signal.SIGKILL:
        feed()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(
            f"still running {timeout_s} s after the signal:\n{watch.text}"
        ) from None
    # After a kill -9, a child of the command may still hold the pipe: what it had printed
    # is read by then, and its end is not waited for.
    watch.drained(0.3 if signum == signal.SIGKILL else 30.0)
    code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    errors = [x.rstrip("\n") for x in watch.lines if x.startswith("fsarena: error:")]
    result = Stopped(code, errors, watch.text, leftovers(workdir), reached=reached)
    if signum == signal.SIGKILL:
        _clean_up(result, workdir)
    return result


def _clean_up(result: Stopped, workdir: Path) -> None:
    """After kill -9: `fsarena cleanup`, and what it removed and left."""
    done = subprocess.run(
        [*FSARENA, "cleanup", "--workdir", str(workdir)],
        cwd=REPO, capture_output=True, text=True, check=False,
    )  # fmt: skip
    result.cleanup_code = done.returncode
    result.cleanup_removed = [
        x.removeprefix("removed: ") for x in done.stdout.splitlines() if x.startswith("removed: ")
    ]
    result.left_after_cleanup = leftovers(workdir)


def undo(workdir: Path) -> None:
    """What a failed stop left in its own work directory (the test's own), undone."""
    for item in leftovers(workdir):
        kind, _, rest = item.partition(" ")
        if kind == "process":
            subprocess.run(["kill", "-9", rest.split()[0]], check=False)
    time.sleep(0.2)
    for item in sorted(leftovers(workdir), key=len, reverse=True):
        kind, _, rest = item.partition(" ")
        if kind == "mount":
            subprocess.run(["umount", "-l", rest], check=False, capture_output=True)
    for item in leftovers(workdir):
        kind, _, rest = item.partition(" ")
        if kind == "loop":
            subprocess.run(["losetup", "-d", rest.split()[0]], check=False, capture_output=True)
