"""A real memory cgroup (v1 or v2, whichever this kernel offers): joined, limited, removed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fsarena.measure import cgroups


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
