"""A user's command cannot leave processes behind that hold the test filesystem (issue 24, 5).

On a real tmpfs, with the real executor: the command starts a background child and a
daemon that leaves its session (setsid); the task's cleanup ends both (they are in its
cgroup), and only them, so the filesystem then unmounts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

from fsarena.filesystems.profiles import PROFILES
from fsarena.host.executor import RealExecutor
from fsarena.tasks.base import TaskContext
from fsarena.tasks.command import UserCommand, command_task


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_user_commands_background_processes_end_before_unmount(workdir: Path) -> None:
    mnt = workdir / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "fsarena-t", str(mnt)], check=True)
    bystander = subprocess.Popen(["sleep", "600"], cwd=mnt)  # not the task's: must survive
    pids: list[int] = []
    try:
        script = "sleep 600 & echo $! > child; setsid sh -c 'echo $$ > daemon; exec sleep 601' &"
        task = command_task("bg", UserCommand(command=script, cwd="job"))()
        ctx = TaskContext(
            profile=PROFILES["ext4"], device="", mountpoint=str(mnt),
            scratch=str(workdir), datasets={}, executor=RealExecutor(),
        )  # fmt: skip
        task.prepare(ctx)
        timed = ctx.executor.measure(task.commands(ctx), None, 30)
        assert timed.measurement.exit_code == 0, timed.stderr
        deadline = time.monotonic() + 5
        while not (mnt / "job" / "daemon").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        pids = [int((mnt / "job" / f).read_text()) for f in ("child", "daemon")]
        assert all(_alive(p) for p in pids), "the command left them running (else: no test)"
        task.cleanup(ctx)
        assert not any(_alive(p) for p in pids), "the task's processes were ended"
        assert bystander.poll() is None, "a process the task did not start is left alone"
        bystander.kill()
        bystander.wait()
        umount = subprocess.run(["umount", str(mnt)], capture_output=True, text=True)
        assert umount.returncode == 0, umount.stderr
    finally:
        for pid in pids:  # this test's own processes, by the pids they wrote
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        bystander.kill()
        bystander.wait()
        time.sleep(0.1)
        subprocess.run(["umount", str(mnt)], capture_output=True, check=False)
