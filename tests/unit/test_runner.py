"""The runner's order of operations, with a fake executor (no root needed)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.interrupt import Stop
from fsarena.measure.collect import Command, Timed
from fsarena.plan.model import make_plan
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner, shuffled_orders
from fsarena.session.file import Session, load
from tests.fakes import FakeExecutor

ARTICLE_A = [
    "mkfs",
    "mount",
    "capacity_initial",
    "iso_copy_in",
    "iso_copy_within",
    "iso_delete",
    "tree_copy_in",
    "tree_copy_within",
    "tree_list_recursive",
    "tree_find_pattern",
    "tree_delete",
    "capacity_residual",
    "umount",
]


def _run(
    tmp_path: Path, fs: list[str], reps: int = 1, fail_on: str | None = None
) -> tuple[FakeExecutor, Session]:
    plan = make_plan("article-a-2006", fs, reps, 0.001, 7, str(tmp_path / "work"))
    ex = FakeExecutor(fail_on=fail_on)
    session = new_session(plan, {"kernel": "test"}, {})
    path = tmp_path / "session.json"
    Runner(plan, ex, session, path, "tmpfs", datasets=ex.datasets).run()
    return ex, load(path)


def _kinds(calls: list[tuple[str, ...]]) -> list[str]:
    return [c[0] if c[0] not in ("call", "measure") else f"{c[0]}:{c[1]}" for c in calls]


def test_sequence_order_for_one_filesystem(tmp_path: Path) -> None:
    # The whole sequence of calls, stated once (as hyperfine's execution_order_tests do):
    # a call added, dropped or moved fails here, whichever index it lands at.
    ex, session = _run(tmp_path, ["ext4"])
    assert _kinds(ex.calls) == [
        "mkdir", "call:mount", "generate", "generate",  # the source: tmpfs, the ISO, the tree
        *CEILING,  # the device's ceiling on its own fresh image: fio writes twice
        "create_image", "attach", "mkdir",  # the filesystem's image and loop device, scratch
        "flush_device", *["measure:mkfs.ext4"] * 5,  # an unmounted device: its cache only
        "mkdir", "flush_device", *MOUNT_5,
        # capacity_initial: a probe, nothing timed, nothing made cold
        # A writing task's timed region ends durable: the filesystem's sync, then one
        # flush of the device (TaskContext.durable): two timed `sync` commands.
        "mkdir", *COLD_MOUNTED, "measure:cp", *DURABLE, "verify",  # iso_copy_in
        "mkdir", *COLD_MOUNTED, "measure:cp", *DURABLE, "verify",  # iso_copy_within
        *COLD_MOUNTED, "measure:rm", *DURABLE,  # iso_delete
        *COLD_MOUNTED, "measure:cp", *DURABLE, "verify",  # tree_copy_in
        *COLD_MOUNTED, "measure:cp", *DURABLE, "verify",  # tree_copy_within
        *COLD_MOUNTED, "measure:ls", *DURABLE,  # tree_list_recursive
        *[*COLD_MOUNTED, "measure:find"] * 3, "remove",  # tree_find_pattern: 3 cold samples
        *COLD_MOUNTED, "measure:rm", *DURABLE,  # tree_delete
        # capacity_residual: a probe
        *COLD_MOUNTED, *UMOUNT_5,
        "detach", "retire",  # the filesystem's loop device, its image kept as the spare
        "call:umount",  # the source: a tmpfs, no image of its own to remove
        "remove_spare",  # the spare image, last
    ]  # fmt: skip
    # Article A's tasks all write: the read ceiling would judge nothing, so it is not
    # measured (judged_directions); the page cache's read stands against the write one.
    directions = [c[4] for c in ex.calls if c[:2] == ("measure", "fio")]
    assert directions == ["--rw=write"] * 2
    assert [c.direction for c in session.ceilings] == ["write", "write", "read"]
    assert [c.kind for c in session.ceilings] == ["full", "full", "cache"]
    # Writing tasks end with syncfs of the test filesystem, then a flush of its device,
    # inside the timed region: in pairs, always in that order.
    syncs = [c[2:] for c in ex.calls if c[:2] == ("measure", "sync")]
    assert len(syncs) == 2 * 7 and syncs[1::2] == [syncs[1]] * 7
    assert all(fs[0] == "-f" and fs[1].endswith("/mnt/ext4") for fs in syncs[0::2])
    assert syncs[1][0].startswith("/dev/loop")
    assert [r.task for r in session.runs] == ARTICLE_A
    assert all(r.status == "ok" for r in session.runs)
    assert session.status == "complete"


def test_copies_are_verified(tmp_path: Path) -> None:
    ex, _ = _run(tmp_path, ["xfs"])
    verified = [c[1:] for c in ex.calls if c[0] == "verify"]
    assert [v[0] for v in verified] == ["iso", "iso", "tree", "tree"]
    assert verified[0][1].endswith("/iso1") and verified[1][1].endswith("/iso2")


def test_copies_are_hashed_in_the_first_round_only(tmp_path: Path) -> None:
    # Every copy of every round is checked; its bytes are read and hashed in round 1,
    # later rounds check names, kinds and sizes (fsarena's own time, issue 14).
    ex, session = _run(tmp_path, ["ext4", "xfs"], reps=3)
    assert len(ex.content_checks) == 2 * 3 * 4
    assert ex.content_checks.count(True) == 2 * 4
    for run in session.runs:
        for check in run.checks:
            if check.name.startswith("copy of"):
                hashed = "bytes checked" in check.detail
                assert hashed == (run.repetition == 1), (run.repetition, check.detail)


def test_fresh_mkfs_every_repetition_in_shuffled_order(tmp_path: Path) -> None:
    ex, session = _run(tmp_path, ["ext2", "ext4", "xfs"], reps=3)
    mkfs = [c[1] for c in ex.calls if c[0] == "measure" and c[1].startswith("mkfs")]
    assert len(mkfs) == 9 * 5  # 5 timed mkfs per sequence (Task.samples)
    assert session.order == shuffled_orders(["ext2", "ext4", "xfs"], 3, 7)
    attaches = sum(c[0] == "attach" for c in ex.calls)
    detaches = sum(c[0] == "detach" for c in ex.calls)
    # A sequence per filesystem and repetition, and the ceiling's once: rounds a moment
    # apart share it (no drift check within DRIFT_EVERY_S).
    assert attaches == detaches == 9 + 1


def test_failed_task_skips_rest_of_sequence_and_goes_on(tmp_path: Path) -> None:
    ex, session = _run(tmp_path, ["ext4", "xfs"], fail_on="cp")
    for fs in ("ext4", "xfs"):
        runs = {r.task: r for r in session.runs if r.filesystem == fs}
        assert runs["iso_copy_in"].status == "failed"
        assert "exit code 1" in runs["iso_copy_in"].error
        assert runs["tree_copy_in"].status == "skipped"
        assert runs["mkfs"].status == "ok"
    # Still unmounted and detached afterwards.
    assert not ex.mounted
    assert sum(c[0] == "attach" for c in ex.calls) == sum(c[0] == "detach" for c in ex.calls)


def test_shuffle_is_reproducible_and_varies() -> None:
    fs = ["a", "b", "c", "d", "e"]
    assert shuffled_orders(fs, 5, 1) == shuffled_orders(fs, 5, 1)
    orders = shuffled_orders(fs, 5, 1)
    assert len({tuple(o) for o in orders}) > 1
    assert all(sorted(o) == fs for o in orders)


def test_interrupt_saves_and_tears_down(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "work"))

    class Interrupting(FakeExecutor):
        def measure(
            self, commands: Sequence[Command], device: str | None, timeout_s: float
        ) -> Timed:
            if commands[0].argv[0] == "cp":
                raise KeyboardInterrupt
            return super().measure(commands, device, timeout_s)

    ex = Interrupting()
    path = tmp_path / "s.json"
    with pytest.raises(KeyboardInterrupt):
        Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    saved = load(path)
    assert saved.status == "interrupted"
    assert [r.task for r in saved.runs] == ["mkfs", "mount", "capacity_initial"]
    assert not ex.mounted
    assert [c[0] for c in ex.calls].count("detach") == 2  # the ceiling's and the sequence's


def test_interrupted_teardown_waits_for_a_busy_mount(tmp_path: Path) -> None:
    # A command killed by the interrupt can hold the filesystem for a moment: the
    # teardown's umount is retried while the mount is busy, not given up at once.
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "work"))

    class BusyOnce(FakeExecutor):
        busy = 0  # after the interrupt, the first two umounts find the mount busy
        interrupted_at = 0

        def measure(
            self, commands: Sequence[Command], device: str | None, timeout_s: float
        ) -> Timed:
            if commands[0].argv[0] == "cp":
                self.busy, self.interrupted_at = 2, len(self.calls)
                raise KeyboardInterrupt
            return super().measure(commands, device, timeout_s)

        def call(self, argv: Sequence[str]) -> None:
            if argv[0] == "umount" and self.busy:
                self.busy -= 1
                self.calls.append(("call", *argv))
                raise FsarenaError(f"`umount {argv[-1]}` failed: umount: target is busy.")
            super().call(argv)

    ex = BusyOnce()
    with pytest.raises(KeyboardInterrupt):
        Runner(
            plan, ex, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs", datasets=ex.datasets
        ).run()
    assert not ex.mounted
    after = ex.calls[ex.interrupted_at :]
    umounts = [c[2] for c in after if c[:2] == ("call", "umount") and c[2].endswith("mnt/ext4")]
    assert len(umounts) == 3  # the test filesystem: twice busy, then unmounted


def test_a_stop_in_a_teardown_step_lets_the_step_finish(tmp_path: Path) -> None:
    """A signal that lands in a teardown step (here the source's umount, after the last round).

    Raised there, it cut the step short: a sequence's umount killed half way left its
    filesystem mounted, and the next step detached the loop device (a busy one only
    gets autoclear) and deleted the image under it. The stop is raised once the step
    is done, and the run ends interrupted.
    """
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.001, 7, str(tmp_path / "work"))

    class SignalledInTeardown(FakeExecutor):
        def call(self, argv: Sequence[str]) -> None:
            if tuple(argv[:1]) == ("umount",) and argv[-1].endswith("/source"):
                os.kill(os.getpid(), signal.SIGTERM)
                deadline = time.monotonic() + 0.1
                while time.monotonic() < deadline:  # bytecodes: the handler runs in here
                    pass
            super().call(argv)

    ex = SignalledInTeardown()
    stop = Stop()
    with stop.installed(), pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        Runner(
            plan, ex, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs", datasets=ex.datasets
        ).run()
    assert not ex.mounted  # the source's umount ran to its end
    assert ex.calls[-1] == ("remove_spare",)  # and the steps after it ran
    assert load(tmp_path / "s.json").status == "interrupted"


TOOLS = Path(__file__).resolve().parents[1] / "fixtures" / "tools"


def _suite_run(tmp_path: Path, suite: str, ex: FakeExecutor, scale: float = 0.001):  # type: ignore[no-untyped-def]
    plan = make_plan(suite, ["ext4", "xfs"], 1, scale, 7, str(tmp_path / "work"))
    path = tmp_path / "session.json"
    Runner(plan, ex, new_session(plan, {}, {}), path, "tmpfs", datasets=ex.datasets).run()
    return load(path)


@pytest.mark.parametrize(("scale", "size", "limit"), [(0.001, 16, 32), (0.1, 200, 100)])
def test_bonnie_runs_in_a_memory_cgroup_of_half_its_file_and_at_least_32_mib(
    tmp_path: Path, scale: float, size: int, limit: int
) -> None:
    ex = FakeExecutor()
    csv = (TOOLS / "bonnie-2.00a-ext4-1g.csv").read_text()
    ex.files[str(tmp_path / "work" / "scratch" / "bonnie.csv")] = csv
    session = _suite_run(tmp_path, "article-c-2009", ex, scale)
    assert all(r.status == "ok" for r in session.runs), [r.error for r in session.runs]
    bonnie = [c for c in ex.calls if c[0] == "measure" and "bonnie++" in c]
    assert len(bonnie) == 2
    argv = bonnie[0]
    assert argv[1:3] == ("sh", "-c") and "cgroup.procs" in argv[3]  # joins the cgroup, then exec
    file_mib, ram = int(argv[argv.index("-s") + 1]), int(argv[argv.index("-r") + 1])
    assert file_mib == size and ram == size // 2  # bonnie++'s file is twice the RAM it is told
    made = [c for c in ex.calls if c[0] == "cgroup"]
    removed = [c for c in ex.calls if c[0] == "cgroup_removed"]
    # The cgroup: half the file, but never so small that bonnie++ itself leaves no page
    # cache to reclaim (the OOM killer's -9 at 8 MiB).
    assert made == [("cgroup", str(limit << 20))] * 2 and len(removed) == 2
    run = next(r for r in session.runs if r.task == "bonnie")
    assert run.measurement is not None
    extra = run.measurement.extra
    assert extra["bonnie_seq_write_mb_s"] > 1000
    assert extra["bonnie_ram_mib"] == size // 2
    assert extra["cgroup_memory_limit_bytes"] == limit << 20
    fits = size <= limit  # then it measures memory, and the run says so
    assert extra["fits_page_cache"] == float(fits)
    warned = [w for w in session.warnings if w.code == "fits_page_cache"]
    assert bool(warned) == fits and (not fits or "bonnie" in warned[0].message)
    iso = next(r for r in session.runs if r.task == "bigiso_copy_there")
    assert iso.measurement is not None and iso.measurement.extra["payload_bytes"] > 0


def test_bonnie_killed_in_its_memory_cgroup_is_told_as_the_oom_killer(tmp_path: Path) -> None:
    ex = FakeExecutor(fail_on="sh")
    cg = "/sys/fs/cgroup/memory/fsarena-fake-0"
    ex.files[f"{cg}/memory.oom_control"] = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"
    ex.files[f"{cg}/memory.limit_in_bytes"] = str(32 << 20)
    session = _suite_run(tmp_path, "article-c-2009", ex)
    run = next(r for r in session.runs if r.task == "bonnie")
    assert run.status == "failed" and run.fault == "oom", run.error
    assert (
        "bonnie++ was killed by the kernel's out-of-memory killer in its memory cgroup of 32 MiB"
        in (run.error or "")
    )
    assert "run with a larger --scale" in (run.error or "")


def test_cgroup_is_removed_when_bonnie_fails(tmp_path: Path) -> None:
    ex = FakeExecutor(fail_on="sh")
    session = _suite_run(tmp_path, "article-c-2009", ex)
    assert next(r for r in session.runs if r.task == "bonnie").status == "failed"
    assert sum(c[0] == "cgroup" for c in ex.calls) == sum(
        c[0] == "cgroup_removed" for c in ex.calls
    )


def test_article_suites_record_columns_and_dataset_origins(tmp_path: Path) -> None:
    session = _suite_run(tmp_path, "article-b-2001", FakeExecutor())
    info = session.plan.task_info
    assert info["dd_write_synced"].columns[:3] == ["wall_s", "user_s", "sys_s"]
    assert info["dd_write_synced"].writes and not info["dd_write_unsynced"].writes
    assert (session.datasets["kernel"].origin or "").startswith("generated")
    assert {"kernel", "kernel_tar", "dd"} <= set(session.datasets)
    synced = [c for c in session.runs if c.task == "dd_write_synced"]
    assert synced and all(r.status == "ok" for r in session.runs)


def test_article_d_runs_every_task_with_its_generator(tmp_path: Path) -> None:
    ex = FakeExecutor()
    session = _suite_run(tmp_path, "article-d-2008", ex)
    assert all(r.status == "ok" for r in session.runs), [r.error for r in session.runs]
    mkfiles = [c for c in ex.calls if c[0] == "measure" and c[1].endswith("fsarena-mkfiles")]
    assert len(mkfiles) == 2
    space = next(r for r in session.runs if r.task == "portage_space")
    assert space.values["du_bytes"] == 10 << 20
    assert space.values["space_overhead_bytes"] == (
        space.values["df_used_difference_bytes"] - space.values["du_apparent_bytes"]
    )


# Execution order, stated whole: one small plan (mkfs, mount, one copy, umount), every
# call the runner makes through the executor, in order. A call added, dropped or moved
# (a cache drop after the task instead of before, a verify outside the sequence, cleanup
# skipped after a failure) fails these, whichever index it lands at.
# The plans below only write: fio writes twice (no read is judged, none is measured).
CEILING = [
    "mkdir", "create_image", "attach",  # O_DIRECT on a fresh device: only its cache flushed
    "flush_device", "measure:fio", "read_text", "flush_device", "measure:fio", "read_text",
    "measure:sh", "read_text",  # the page cache's read: dd then fio, the device held open
    "detach", "retire",  # its image reset and kept for the next target (retire_image)
]  # fmt: skip
# Cold caches per filesystem (run/cold.py): a mounted one is unmounted, its device flushed,
# mounted again; an unmounted one (before mkfs, mount) has only its device's cache.
DURABLE = ["measure:sync", "measure:sync"]  # syncfs, then the device's flush
COLD_MOUNTED = ["call:umount", "flush_device", "call:mount"]
SOURCE = ["mkdir", "call:mount", "generate"]  # tmpfs mounted, the ISO generated into it
MOUNT_5 = [
    "measure:mount",
    "call:umount",
    "measure:mount",
    "call:umount",
    "measure:mount",
    "call:umount",
    "measure:mount",
    "call:umount",
    "measure:mount",
]  # fmt: skip  (a sub-second task is timed 5 times, undone untimed in between)
UMOUNT_5 = [
    "measure:umount", "call:mount", "measure:umount", "call:mount", "measure:umount",
    "call:mount", "measure:umount", "call:mount", "measure:umount",
]  # fmt: skip


def _small(tmp_path: Path, fs: str, fail_on: str | None = None) -> tuple[list[str], Session]:
    suite = tmp_path / "small.toml"
    suite.write_text('name = "small"\ntasks = ["mkfs", "mount", "iso_copy_in", "umount"]\n')
    plan = make_plan(str(suite), [fs], 1, 0.001, 7, str(tmp_path / "w"))
    ex = FakeExecutor(fail_on=fail_on)
    Runner(
        plan, ex, new_session(plan, {}, {}), tmp_path / "s.json", "tmpfs", datasets=ex.datasets
    ).run()
    timed = ("call", "measure", "uml:call", "uml:measure")
    return [f"{c[0]}:{c[1]}" if c[0] in timed else c[0] for c in ex.calls], load(
        tmp_path / "s.json"
    )


def test_execution_order_of_a_plain_run(tmp_path: Path) -> None:
    kinds, session = _small(tmp_path, "ext4")
    assert kinds == [
        *SOURCE,
        *CEILING,
        "create_image", "attach", "mkdir",
        "flush_device", *["measure:mkfs.ext4"] * 5,
        "mkdir", "flush_device", *MOUNT_5,
        "mkdir", *COLD_MOUNTED, "measure:cp", "measure:sync", "measure:sync", "verify",
        *COLD_MOUNTED, *UMOUNT_5,
        "detach", "retire",  # the filesystem's loop device and image
        "call:umount",  # the source (a tmpfs: no image)
        "remove_spare",  # the image the last target retired, last
    ]  # fmt: skip
    assert [(r.task, r.status) for r in session.runs] == [
        ("mkfs", "ok"), ("mount", "ok"), ("iso_copy_in", "ok"), ("umount", "ok")
    ]  # fmt: skip


def test_execution_order_of_a_failed_task_and_its_cleanup(tmp_path: Path) -> None:
    kinds, session = _small(tmp_path, "ext4", fail_on="cp")
    assert kinds == [
        *SOURCE,
        *CEILING,
        "create_image", "attach", "mkdir",
        "flush_device", *["measure:mkfs.ext4"] * 5,
        "mkdir", "flush_device", *MOUNT_5,
        "mkdir", *COLD_MOUNTED, "measure:cp",  # exits 1: no sync, no verify, no timed umount
        "call:umount", "detach", "retire",  # cleanup: unmounted, detached, retired
        "call:umount", "remove_spare",
    ]  # fmt: skip
    assert [(r.task, r.status) for r in session.runs] == [
        ("mkfs", "ok"), ("mount", "ok"), ("iso_copy_in", "failed"), ("umount", "skipped")
    ]  # fmt: skip


def test_execution_order_of_a_run_in_a_guest(tmp_path: Path) -> None:
    kinds, session = _small(tmp_path, "jfs@uml")
    # Every task's call goes into the guest (uml:...); each cache drop in the guest is
    # followed by one on the host, whose page cache holds the guest's disk files.
    assert kinds == [
        *SOURCE,
        "create_image", "call:mkfs.ext4",  # the datasets' disk, made once from the source
        *CEILING,  # the host's device, through a loop device as always
        "create_image", "start_guest",  # the image is the guest's disk: no loop device
        "uml:mkdir", "uml:drop_caches", "drop_caches", *["uml:measure:mkfs.jfs"] * 5,
        "uml:mkdir", "uml:drop_caches", "drop_caches", *[f"uml:{k}" for k in MOUNT_5],
        "uml:mkdir", "uml:drop_caches", "drop_caches",
        "uml:measure:cp", "uml:measure:sync", "uml:measure:sync", "uml:verify",
        "uml:drop_caches", "drop_caches", *[f"uml:{k}" for k in UMOUNT_5],
        "uml:close", "remove",  # the guest stopped, then its image removed
        "remove",  # the datasets' disk
        "call:umount", "remove_spare",  # the ceiling's image, retired, removed last
    ]  # fmt: skip
    assert all(r.status == "ok" for r in session.runs) and len(session.runs) == 4
