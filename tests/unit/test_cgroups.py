"""Memory cgroups: which hierarchy is used, and how a command joins one."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.host import cgroups


def test_v2_with_memory_is_preferred(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("max\n")
    h = cgroups.memory_hierarchy(tmp_path)
    assert (h.root, h.version, h.limit_file) == (tmp_path, 2, "memory.max")


def test_hybrid_unified_without_memory_falls_back_to_v1(tmp_path: Path) -> None:
    (tmp_path / "unified").mkdir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("\n")  # as on this machine
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    h = cgroups.memory_hierarchy(tmp_path)
    assert (h.root, h.version, h.limit_file) == (tmp_path / "memory", 1, "memory.limit_in_bytes")
    assert h.peak_file == "memory.max_usage_in_bytes"


def test_no_memory_controller_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(FsarenaError, match="no memory cgroup controller"):
        cgroups.memory_hierarchy(tmp_path)


def test_created_cgroups_are_fsarenas_and_limited(tmp_path: Path) -> None:
    (tmp_path / "memory.limit_in_bytes").write_text("max\n")
    path = Path(cgroups.create_memory_cgroup(64 << 20, cgroups.Hierarchy(tmp_path, 1)))
    assert path.parent == tmp_path and path.name.startswith("fsarena-")
    assert (path / "memory.limit_in_bytes").read_text() == f"{64 << 20}\n"


def test_enter_argv_execs_the_command_in_the_cgroup() -> None:
    argv = cgroups.enter_argv("/sys/fs/cgroup/memory/fsarena-1-0", ("bonnie++", "-q"))
    assert argv[:2] == ("sh", "-c") and argv[3] == "/sys/fs/cgroup/memory/fsarena-1-0"
    assert "exec" in argv[2] and argv[-2:] == ("bonnie++", "-q")


def test_remove_touches_only_fsarenas_cgroups(tmp_path: Path) -> None:
    other = tmp_path / "system.slice"
    other.mkdir()
    cgroups.remove_cgroup(str(other))
    assert other.exists()


def test_oom_kills_read_from_v2_memory_events_where_v1_files_are_absent() -> None:
    files = {
        "/cg/memory.events": "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n",
        "/cg/memory.max": "33554432\n",
    }

    def read(path: str) -> str:
        if path not in files:
            raise OSError(2, "No such file", path)
        return files[path]

    assert cgroups.oom_kills("/cg", read) == (2, 32 << 20)
    files["/cg/memory.max"] = "max\n"
    assert cgroups.oom_kills("/cg", read) == (2, None)
    assert cgroups.oom_kills("/elsewhere", read) is None
