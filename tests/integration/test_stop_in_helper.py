"""A stop signal that lands while a helper runs: the helper ends with fsarena, never after it.

CI (the fleet SIGTERM test) once found an xfs still mounted on a loop device whose image
read "(deleted)": the KeyboardInterrupt had been raised inside subprocess.Popen, after
the fork, so nobody waited for the `mount` it had started; teardown looked, saw nothing
mounted (or umount said "not mounted"), detached and deleted the image, and then the
orphaned mount landed. bench/signal_stress.py --at fork reproduced it end to end.

Here the real handler (fsarena.interrupt.Stop) receives a real signal inside Popen, right
after the fork of a real mount(8) of a real ext4 on a loop device (with a mount option:
a plain one is made as its syscall, with no fork), or right after a real
losetup attached an image; then teardown does what the runner's does (umount if
mounted, LoopTarget.teardown).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from fsarena.host import executor
from fsarena.host.executor import RealExecutor
from fsarena.host.ledger import Ledger
from fsarena.interrupt import Stop
from fsarena.targets.loop import LoopTarget
from tests.integration.conftest import leftovers


def _signal_after_fork(monkeypatch: pytest.MonkeyPatch, program: str, pids: list[int]) -> None:
    """SIGINT to this process the moment Popen has forked `program`, still inside Popen."""
    fork: Callable[..., Any] = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def forked(self: subprocess.Popen[bytes], args: Sequence[str], *rest: Any) -> None:
        fork(self, args, *rest)
        if os.path.basename(args[0]) == program:
            pids.append(self.pid)
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(10_000):  # bytecodes: the handler runs here, inside Popen
                pass

    monkeypatch.setattr(subprocess.Popen, "_execute_child", forked)


def _waited_for(pid: int) -> bool:
    """Whether the child was reaped (its parent waited for it), not running or a zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_stop_inside_popen_of_mount_leaves_nothing_mounted(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex = RealExecutor(ledger=Ledger(str(workdir)))
    target = LoopTarget(str(workdir / "images" / "ext4-r1.img"), 64 << 20, recycle=True)
    device = target.setup(ex)
    subprocess.run(["mkfs.ext4", "-q", device], check=True)
    mnt = workdir / "mnt" / "ext4"
    mnt.mkdir(parents=True)
    ex.track("mount", str(mnt), device)
    pids: list[int] = []
    _signal_after_fork(monkeypatch, "mount", pids)
    stop = Stop()
    with stop.installed():
        with pytest.raises(KeyboardInterrupt):
            # With an option, as a profile's mount options make it: mount(8) runs (a plain
            # untimed mount is one syscall, host/mounts.py, and forks nothing).
            ex.call(["mount", "-t", "ext4", "-o", "noatime", device, str(mnt)])
        monkeypatch.undo()
        waited = _waited_for(pids[0])
        # Teardown, as the runner's: umount whatever is mounted, then release the target.
        if ex.is_mounted(str(mnt)):
            ex.call(["umount", str(mnt)])
        ex.untrack("mount", str(mnt))
        target.teardown(ex)
        ex.remove_spare_image()
    time.sleep(1.0)  # an orphaned mount would have landed by now
    assert waited, "the mount helper was left running, unwaited for"
    assert leftovers(workdir) == []
    assert stop.exit_code == 130


def test_a_stop_after_losetup_attached_leaves_no_loop_device(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """losetup attached the image, and the stop came before its device's name reached us."""
    waited = executor.wait_exited

    def attached_then_stopped(proc: subprocess.Popen[bytes], timeout_s: float | None) -> int:
        code = waited(proc, timeout_s)
        argv = proc.args if isinstance(proc.args, list) else []
        if argv[:2] == ["losetup", "--find"]:
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(10_000):  # bytecodes: the handler runs here
                pass
        return code

    monkeypatch.setattr(executor, "wait_exited", attached_then_stopped)
    ex = RealExecutor(ledger=Ledger(str(workdir)))
    target = LoopTarget(str(workdir / "images" / "xfs-r1.img"), 64 << 20, recycle=True)
    stop = Stop()
    with stop.installed():
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            target.setup(ex)
        monkeypatch.undo()
        target.teardown(ex)  # as the runner's teardown: the device was never known
        ex.remove_spare_image()
    assert leftovers(workdir) == []
    assert Ledger(str(workdir)).entries() == []
