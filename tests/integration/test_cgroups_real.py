"""A real memory cgroup (v1 or v2, whichever this kernel offers): joined, limited, removed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fsarena.host import cgroups
from fsarena.run.faults import explain
from fsarena.tasks.base import memory_cgroup_failure


def test_command_runs_inside_a_limited_cgroup_which_is_then_removed() -> None:
    path = cgroups.create_memory_cgroup(32 << 20)
    try:
        h = cgroups.memory_hierarchy()
        limit = int(Path(path, h.limit_file).read_text())
        assert limit == 32 << 20
        argv = cgroups.enter_argv(path, ("cat", "/proc/self/cgroup"))
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        assert Path(path).name in out
    finally:
        cgroups.remove_cgroup(path)
    assert not Path(path).exists()


def test_an_out_of_memory_kill_in_the_cgroup_is_named() -> None:
    """A process over its cgroup's limit is SIGKILLed with no message of its own (bonnie++
    on xfs in an 8 MiB cgroup, CI of 7bf682b): the run names the kernel's OOM killer."""
    path = cgroups.create_memory_cgroup(16 << 20)
    try:
        assert cgroups.oom_kills(path) == (0, 16 << 20)
        assert memory_cgroup_failure(_read, path, "python") == ""
        hog = ("python3", "-c", "b = bytearray(256 << 20); b[::4096] = b'x' * (65536)")
        proc = subprocess.run(cgroups.enter_argv(path, hog), capture_output=True)
        assert proc.returncode == -9, proc.stderr
        counted = cgroups.oom_kills(path)
        assert counted is not None and counted[0] >= 1
        why = memory_cgroup_failure(_read, path, "python")
        assert why.startswith("python was killed by the kernel's out-of-memory killer")
        assert "of 16 MiB" in why
        assert explain(f"exit code -9: {why}")[0] == "oom"
    finally:
        cgroups.remove_cgroup(path)
    assert not Path(path).exists()


def _read(path: str) -> str:
    return Path(path).read_text()
