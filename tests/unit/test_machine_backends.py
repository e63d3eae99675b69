"""cgroup v1 and v2 backends on fake cgroup trees: what is written, joined, recorded and undone."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.host import sysctls as settings
from fsarena.host.executor import RealExecutor
from fsarena.machines.backends import CgroupV1, CgroupV2, choose_backend, device_number
from fsarena.machines.enforce import MachineExecutor, in_force
from fsarena.machines.run import images_dir
from fsarena.measure.collect import Command, Measurement, Timed
from fsarena.plan.machines import MIB, Limits, MachineProfile
from fsarena.plan.model import make_plan
from fsarena.targets import ceiling_target, make_target

DEV_NULL = "/dev/null"  # a device number that exists everywhere: 1:3


class Book:
    """The ledger as a list, in order."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []

    def track(self, kind: str, ident: str) -> None:
        self.entries.append((kind, ident))

    def untrack(self, kind: str, ident: str) -> None:
        self.entries.remove((kind, ident))


def _rmtree(path: str) -> str:
    # A fake cgroup is a directory with files; the kernel's rmdir takes a real one as is.
    shutil.rmtree(path)
    return f"removed {path}"


UNDO = {"cgroup": _rmtree, "setting": settings.undo}


def v1_tree(base: Path) -> Path:
    files = {
        "memory": ["memory.limit_in_bytes", "cgroup.procs"],
        "cpu,cpuacct": ["cpu.cfs_quota_us", "cpu.cfs_period_us", "cgroup.procs"],
        "blkio": [
            "blkio.throttle.read_bps_device",
            "blkio.throttle.write_bps_device",
            "cgroup.procs",
        ],
        "unified": ["cgroup.controllers"],
    }
    for hierarchy, names in files.items():
        (base / hierarchy).mkdir(parents=True)
        for name in names:
            (base / hierarchy / name).write_text("")
    (base / "unified" / "cgroup.controllers").write_text("hugetlb\n")  # as on this project's hosts
    return base


def v2_tree(base: Path, enabled: str) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    (base / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (base / "cgroup.subtree_control").write_text(enabled + "\n")
    return base


PROFILE = MachineProfile(
    name="t", memory_mib=64, cpu_cores=0.25, disk_read_mib_s=20, disk_write_mib_s=10
)


def test_v1_is_chosen_when_v2_lacks_the_controllers(tmp_path: Path) -> None:
    limits = Limits(64 * MIB, 0.25, 20 * MIB, 10 * MIB, None, None)
    backend = choose_backend(limits, v1_tree(tmp_path))
    assert isinstance(backend, CgroupV1)
    assert backend.cpu_root == tmp_path / "cpu,cpuacct", "co-mounted hierarchies are found"


def test_v1_limits_are_set_joined_and_undone(tmp_path: Path) -> None:
    base = v1_tree(tmp_path)
    blkio = base / "blkio"
    (blkio / "blkio.throttle.write_bps_device").write_text("7:1 200000000\n")
    book = Book()
    with in_force(PROFILE, book, base, tmp_path / "vm", UNDO) as machine:
        memory_group, cpu_group = machine.backend.join_paths()[:2]
        assert Path(memory_group).parent == base / "memory"
        assert Path(memory_group).name.startswith("fsarena-")
        assert (Path(memory_group) / "memory.limit_in_bytes").read_text() == f"{64 * MIB}\n"
        assert (Path(cpu_group) / "cpu.cfs_period_us").read_text() == "10000\n"
        assert (Path(cpu_group) / "cpu.cfs_quota_us").read_text() == "2500\n"
        assert machine.backend.join_paths()[2] == str(blkio), "tasks join the root blkio group"
        assert book.entries == [("cgroup", memory_group), ("cgroup", cpu_group)]
        machine.throttle(DEV_NULL)
        assert (blkio / "blkio.throttle.read_bps_device").read_text() == f"1:3 {20 * MIB}\n"
        assert (blkio / "blkio.throttle.write_bps_device").read_text() == f"1:3 {10 * MIB}\n"
        assert [kind for kind, _ in book.entries] == ["cgroup", "cgroup", "setting", "setting"]
        machine.unthrottle(DEV_NULL)
        assert (blkio / "blkio.throttle.write_bps_device").read_text() == "1:3 0\n"
        assert len(book.entries) == 2
        machine.throttle(DEV_NULL)  # left throttled: undone on the way out
        wrapped = machine.wrap(("cp", "a", "b"))
        assert wrapped[:2] == ("sh", "-c") and wrapped[-3:] == ("cp", "a", "b")
        assert wrapped[4:8] == ("3", memory_group, cpu_group, str(blkio))
    assert book.entries == []
    assert not Path(memory_group).exists() and not Path(cpu_group).exists()
    assert (blkio / "blkio.throttle.read_bps_device").read_text() == "1:3 0\n"


def test_v2_is_preferred_when_it_has_the_controllers(tmp_path: Path) -> None:
    base = v2_tree(tmp_path, "cpu io memory")
    book = Book()
    with in_force(PROFILE, book, base, tmp_path / "vm", UNDO) as machine:
        assert isinstance(machine.backend, CgroupV2)
        (group,) = machine.backend.join_paths()
        assert (Path(group) / "memory.max").read_text() == f"{64 * MIB}\n"
        assert (Path(group) / "cpu.max").read_text() == "2500 10000\n"
        machine.throttle(DEV_NULL)
        assert (Path(group) / "io.max").read_text() == f"1:3 rbps={20 * MIB} wbps={10 * MIB}\n"
        machine.unthrottle(DEV_NULL)
        assert (Path(group) / "io.max").read_text() == "1:3 rbps=max wbps=max\n"
        assert book.entries == [("cgroup", group)], "nothing shared was changed"
    assert not Path(group).exists() and book.entries == []


def test_v2_enables_a_missing_controller_and_disables_it_after(tmp_path: Path) -> None:
    base = v2_tree(tmp_path, "cpu memory")
    control = base / "cgroup.subtree_control"
    book = Book()
    with in_force(PROFILE, book, base, tmp_path / "vm", UNDO):
        assert settings.read_value(str(control), "io", "controller") == "+io"
        assert book.entries[0][0] == "setting"
    assert settings.read_value(str(control), "io", "controller") == "-io"
    assert book.entries == []


def test_a_host_without_the_controllers_is_told_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("")
    limits = Limits(64 * MIB, 0.5, 20 * MIB, None, None, None)
    with pytest.raises(FsarenaError, match="cannot limit cpu, io"):
        choose_backend(limits, tmp_path)


def test_dirty_thresholds_are_restored_to_their_ratios(tmp_path: Path) -> None:
    vm = tmp_path / "vm"
    vm.mkdir()
    for name, value in {
        "dirty_bytes": "0",
        "dirty_ratio": "20",
        "dirty_background_bytes": "0",
        "dirty_background_ratio": "10",
    }.items():
        (vm / name).write_text(value + "\n")
    profile = MachineProfile(name="d", dirty_mib=64, dirty_background_mib=16)
    book = Book()
    with in_force(profile, book, v1_tree(tmp_path / "cg"), vm, UNDO):
        assert (vm / "dirty_bytes").read_text() == f"{64 * MIB}\n"
        assert (vm / "dirty_background_bytes").read_text() == f"{16 * MIB}\n"
        # The kernel zeroes dirty_ratio when dirty_bytes is written; this fake does not,
        # so the restore below is seen in the ratio files.
        (vm / "dirty_ratio").write_text("0\n")
    assert (vm / "dirty_ratio").read_text() == "20\n"
    assert (vm / "dirty_background_ratio").read_text() == "10\n"
    assert book.entries == []


def test_an_exception_inside_still_undoes_everything(tmp_path: Path) -> None:
    book = Book()
    with (
        pytest.raises(KeyboardInterrupt),
        in_force(PROFILE, book, v1_tree(tmp_path), tmp_path / "vm", UNDO) as machine,
    ):
        machine.throttle(DEV_NULL)
        raise KeyboardInterrupt("SIGTERM")
    assert book.entries == []


def test_device_numbers_key_cgroup_files() -> None:
    assert device_number(DEV_NULL) == "1:3"


# ---------------------------------------------------------------- the executor


def test_images_dir_is_where_targets_put_test_images() -> None:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.01, 1, "/w")
    target = make_target(plan, plan.profiles()[0], 1)
    ceiling = ceiling_target(plan, 0, 1 << 30)
    for t in (target, ceiling):
        assert str(Path(t.image).parent) == images_dir(plan)  # type: ignore[attr-defined]


def test_only_test_images_are_throttled_and_commands_join_the_cgroups(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attached: list[str] = []
    measured: list[Command] = []
    monkeypatch.setattr(RealExecutor, "attach_loop", lambda self, image: DEV_NULL)
    monkeypatch.setattr(RealExecutor, "detach_loop", lambda self, device: attached.append(device))

    def fake_measure(commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        measured.extend(commands)
        return Timed(Measurement(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), "")

    monkeypatch.setattr("fsarena.host.executor.measure_commands", fake_measure)
    book = Book()
    with in_force(PROFILE, book, v1_tree(tmp_path / "cg"), tmp_path / "vm", UNDO) as machine:
        ex = MachineExecutor(machine=machine, throttle_under=str(tmp_path / "images"))
        ex.attach_loop(str(tmp_path / "source.img"))  # the datasets' "second disk"
        assert machine.throttled == {}
        ex.attach_loop(str(tmp_path / "images" / "ext4-r1.img"))
        assert list(machine.throttled) == [DEV_NULL]
        ex.measure([Command(("cp", "a", "b"), cwd="/x")], None, 10)
        ex.detach_loop(DEV_NULL)
        assert machine.throttled == {} and attached == [DEV_NULL]
    (cmd,) = measured
    assert cmd.argv[0] == "sh" and cmd.argv[-3:] == ("cp", "a", "b") and cmd.cwd == "/x"
