"""The power-loss test on real loops, FUSE and mounts: the logger, the oracle, the command."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.filesystems.profiles import POWERLOSS_CONTROL, PROFILES
from fsarena.powerloss import engine, scratch
from fsarena.powerloss.log import FSYNC, WRITE, FlogLog, apply
from fsarena.powerloss.model import Model
from fsarena.powerloss.recorder import Recording, record, replay_matches, sparse_copy
from fsarena.powerloss.results import parse_details, summarize
from fsarena.powerloss.workload import parse_workload
from fsarena.session.file import load
from tests.integration.conftest import FSARENA, REPO, fsarena, leftovers

FS = "ext4"
TINY = parse_workload(
    """
name = "tiny"
script = '''
mkdir d
fsync d
fsync .
repeat 3: write d/f{i} 8K; fsync d/f{i}
write loose 4K
'''
""",
    "test workload",
)


def flogfs_processes(workdir: Path) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if "fsarena-flogfs" in line and str(workdir) in line]


def all_leftovers(workdir: Path) -> list[str]:
    return leftovers(workdir) + flogfs_processes(workdir)


@pytest.fixture
def recorded(workdir: Path) -> Iterator[tuple[Recording, FlogLog, Path]]:
    with engine.scratch(workdir) as area:
        rec, _ = record(PROFILES[FS], TINY, area / "rec")
        with FlogLog(rec.log) as log:
            yield rec, log, area
    assert not all_leftovers(workdir)


def test_replaying_the_log_gives_the_final_image(recorded) -> None:  # type: ignore[no-untyped-def]
    rec, log, _ = recorded
    facts = log.summary()
    assert facts.writes > 0 and facts.flushes > 0
    assert facts.marks == len(TINY.ops) + 1  # "op N" after each operation, then "umount"
    assert replay_matches(rec, log)
    # The self-check can fail: without one of its writes the replay differs.
    data_writes = [r for r in log.records if r.type == WRITE]
    broken = rec.directory / "broken.img"
    sparse_copy(rec.snapshot, broken)
    apply(log, [r for r in log.records if r.is_mutation and r is not data_writes[-1]], broken)
    assert broken.read_bytes() != rec.final.read_bytes()


def _judge(image: Path, area: Path, model: Model) -> list[str]:
    mnt = area / "judge-mnt"
    with scratch.loop_device(image, direct_io=False) as device:
        try:
            mounted, _, error = scratch.mount(PROFILES[FS].mount_argv(device, str(mnt)), mnt)
            assert mounted, error
            verdict = model.judge(mnt, model.final)
        finally:
            scratch.unmount(PROFILES[FS], device, mnt)
    return [f"{v.path}:{v.kind}" for v in verdict.violations]


def test_oracle_sees_a_dropped_flushed_write(recorded) -> None:  # type: ignore[no-untyped-def]
    rec, log, area = recorded
    model = Model(TINY)
    content = TINY.data(next(i for i, op in enumerate(TINY.ops) if op.path == "d/f2"))
    # The write that carried d/f2's data reached the device before its fsync's flush.
    (dropped,) = [r for r in log.records if r.type == WRITE and content[:512] in bytes(log.data(r))]
    assert any(r.type == FSYNC for r in log.records[log.records.index(dropped) :])
    whole, holed = area / "whole.img", area / "holed.img"
    for image, skip in ((whole, None), (holed, dropped)):
        sparse_copy(rec.snapshot, image)
        apply(log, [r for r in log.records if r.is_mutation and r is not skip], image)
    assert _judge(whole, area, model) == []
    assert _judge(holed, area, model) == ["d/f2:lost"]


def test_powerloss_command(workdir: Path) -> None:
    out = workdir / "powerloss.json"
    result = fsarena(
        "powerloss", "--fs", FS, "--workload", "create-fsync", "--states", "25", "--seed", "3",
        "--workdir", str(workdir / "w"), "--output", str(out),
    )  # fmt: skip
    assert "Power loss: crash states per filesystem and workload" in result.stdout
    session = load(out)
    assert session.status == "complete"
    assert [r.filesystem for r in session.runs] == [POWERLOSS_CONTROL.name, FS]
    control, tested = (parse_details(r.details) for r in session.runs)
    assert control is not None and tested is not None
    assert summarize(control.workloads[0]).states_losing_data > 0
    stats = summarize(tested.workloads[0])
    assert tested.workloads[0].replay_identical
    assert 0 < stats.states <= 25
    assert stats.mounted == stats.states and stats.states_losing_data == 0
    assert session.runs[1].values["crash_files_lost"] == 0
    assert "big.bin" in stats.unsynced
    assert not all_leftovers(workdir)


def test_scratch_releases_a_loop_device_it_never_learned_of(workdir: Path) -> None:
    """A Ctrl-C between `losetup --show` attaching and printing: the tmpfs must still go."""
    with engine.scratch(workdir) as area:
        image = area / "lost.img"
        with open(image, "wb") as f:
            f.truncate(16 << 20)
        device = subprocess.check_output(["losetup", "-f", "--show", str(image)], text=True)
        subprocess.run(["mkfs.ext2", "-q", device.strip()], check=True)
        (area / "mnt").mkdir()
        subprocess.run(["mount", device.strip(), str(area / "mnt")], check=True)
    assert not all_leftovers(workdir)


def _powerloss_checking_states(workdir: Path, out: Path) -> subprocess.Popen[str]:
    """A power-loss test started and caught in the middle of checking ext4's crash states."""
    proc = subprocess.Popen(
        [*FSARENA, "powerloss", "--fs", "ext4,xfs", "--states", "400",
         "--workdir", str(workdir / "w"), "--output", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    for line in proc.stderr:
        if ("testing" in line and "ext4 " in line) or time.monotonic() > deadline:
            break
    time.sleep(1.5)
    return proc


def test_kill_9_then_cleanup_leaves_nothing_behind(workdir: Path) -> None:
    proc = _powerloss_checking_states(workdir, workdir / "powerloss.json")
    proc.kill()
    proc.communicate(timeout=60)
    left = leftovers(workdir)
    assert left  # the tmpfs, and mostly a crash state's loop device backed by a file in it
    done = fsarena("cleanup", "--workdir", str(workdir / "w"))
    assert "removed" in done.stdout + done.stderr
    assert not all_leftovers(workdir)
    # A loop device outliving a lazily unmounted tmpfs no longer names the work directory.
    # Read from sysfs, not the device's presence: on a shared machine another run may
    # attach the same /dev/loopN the moment cleanup detached it.
    for device in [x for x in left if x.startswith("/dev/loop")]:
        backing = Path(f"/sys/block/{Path(device).name}/loop/backing_file")
        with contextlib.suppress(FileNotFoundError):
            assert str(workdir) not in backing.read_text(), device


def test_ctrl_c_leaves_nothing_behind(workdir: Path) -> None:
    out = workdir / "powerloss.json"
    proc = _powerloss_checking_states(workdir, out)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert load(out).status == "interrupted"
    assert not all_leftovers(workdir)
