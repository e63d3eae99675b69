"""A read served from the page cache is flagged as faster than the device, on real loop devices.

The loop devices are throttled to a disk's speed; the cached read is made
deterministic by locking its pages in memory (see CachedReadIso).
"""

from __future__ import annotations

import mmap
import os
from pathlib import Path
from typing import ClassVar

import pytest

from fsarena.host.executor import RealExecutor
from fsarena.measure.collect import Command
from fsarena.plan.model import make_plan
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.tasks import TASKS, Check, Task, TaskContext
from fsarena.tasks.largefile import ISO_DIRS, _iso_file


class ReadIso(Task):
    """Read the ISO's first copy back (`cat FILE`), its bytes as the read payload."""

    name = "test_read_iso"
    kind = "large_files"
    datasets = ("iso",)
    payload = "read"

    def commands(self, ctx: TaskContext) -> list[Command]:
        return [Command(("cat", ctx.path(ISO_DIRS[0], _iso_file(ctx))))]

    def payload_bytes(self, ctx: TaskContext) -> int:
        return ctx.dataset("iso").manifest.total_bytes


MAP_LOCKED = 0x2000  # Linux x86-64 <asm-generic/mman.h>: fault in and lock the pages


class CachedReadIso(ReadIso):
    """The same read, deliberately served from the page cache.

    prepare() maps the file with MAP_LOCKED: its pages are read into the cache and
    locked there, so no drop_caches (ours or another process's on this shared
    machine) can evict them before the timed read; verify() releases them.
    """

    locked: ClassVar[list[mmap.mmap]] = []

    def prepare(self, ctx: TaskContext) -> None:
        with open(ctx.path(ISO_DIRS[0], _iso_file(ctx)), "rb") as f:
            flags = mmap.MAP_SHARED | MAP_LOCKED
            self.locked.append(mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ))

    def verify(self, ctx: TaskContext) -> list[Check]:
        while self.locked:
            self.locked.pop().close()
        return []


BLKIO = Path("/sys/fs/cgroup/blkio")
# blk-throttle enforces its limit over 100 ms slices and lets a burst through at the
# start: at 400 MB/s a 70 MB cold read (~85 ms) once ran at 826 MB/s. At 200 MB/s the
# read spans several slices and is held to the limit.
LIMIT_BYTES_PER_S = 200_000_000


class SlowDiskExecutor(RealExecutor):
    """Loop devices throttled to 200 MB/s (cgroup v1 blkio, root group): a disk slower than memory.

    This VM's virtual disk is served from the hypervisor's memory, as fast as the
    page cache under load; a real disk is not, and neither is this one.
    """

    def attach_loop(self, image: str) -> str:
        device = super().attach_loop(image)
        _throttle(device, LIMIT_BYTES_PER_S)
        return device

    def detach_loop(self, device: str) -> None:
        _throttle(device, 0)  # 0 removes the rule
        super().detach_loop(device)


def _throttle(device: str, bytes_per_s: int) -> None:
    rdev = os.stat(device).st_rdev
    for name in ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"):
        (BLKIO / name).write_text(f"{os.major(rdev)}:{os.minor(rdev)} {bytes_per_s}\n")


pytestmark = pytest.mark.skipif(
    not (BLKIO / "blkio.throttle.read_bps_device").exists(), reason="needs cgroup v1 blkio"
)


def _read_runs(  # type: ignore[no-untyped-def]
    workdir: Path,
    executor: RealExecutor,
    task: type[Task],
    monkeypatch: pytest.MonkeyPatch,
    repetitions: int = 1,
):
    monkeypatch.setitem(TASKS, ReadIso.name, task)
    suite = workdir / "suite.toml"
    suite.write_text(
        'name = "read-back"\nfilesystems = ["ext4"]\n'
        'tasks = ["mkfs", "mount", "iso_copy_in", "test_read_iso", "umount"]\n'
    )
    plan = make_plan(str(suite), None, repetitions, 0.1, 1, str(workdir / "w"))
    session = new_session(plan, {}, {})
    Runner(plan, executor, session, workdir / "s.json", "tmpfs").run()
    return [r for r in session.runs if r.task == ReadIso.name]


def test_cached_read_is_invalid(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Three rounds: the timed `cat` is one sample with its exec, and a CPU-starved one on
    # the loaded shared machine once read the cache below the flagging line (CI at
    # eb38114). A cached read can only look slower than it is, so one round must be
    # flagged, and no round may have failed.
    runs = _read_runs(workdir, SlowDiskExecutor(), CachedReadIso, monkeypatch, repetitions=3)
    assert len(runs) == 3 and "invalid" in [r.status for r in runs], [r.error for r in runs]
    assert all(r.status == "ok" or "read ceiling" in r.error for r in runs)


def test_cold_read_is_valid(workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _read_runs(workdir, SlowDiskExecutor(), ReadIso, monkeypatch)
    assert [r.status for r in runs] == ["ok"], [r.error for r in runs]
