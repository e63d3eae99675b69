"""fsarena's cgroup v2 code paths on a real cgroup2 hierarchy, on a cgroup v1 host.

This host binds every controller but hugetlb to cgroup v1, so no cgroup v2 here can
limit memory, CPU or I/O. What works without controllers is tested for real: in a
private mount namespace (so nothing outside this test sees it) cgroup2 is mounted over
/sys/fs/cgroup, which then looks as it does on a cgroup-v2-only machine (Debian 12),
and fsarena's own functions run with their defaults against it. Every cgroup made is
fsarena-PID-N (in the one, shared, v2 hierarchy) and removed; no file of a cgroup
fsarena did not make is written. What stays untested here is listed in
docs/machines.md ("cgroup v2 on a cgroup v1 host").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import REPO

SCRIPT = r"""
import json, resource, subprocess, sys
from pathlib import Path
from fsarena.errors import FsarenaError
from fsarena.machines.backends import CgroupV2, Changes, choose_backend
from fsarena.host import cgroups
from fsarena.plan.machines import Limits

MEMORY = Limits(1 << 30, None, None, None, None, None)
out = {}
root, offered = cgroups.v2_root()
out["root"], out["offered"] = str(root), sorted(offered)
out["task_hierarchy"] = str(cgroups.task_hierarchy())

# A task's cgroup: joined, and what its command left behind ends with it.
task = cgroups.create_task_cgroup()
argv = cgroups.enter_argv(task, ("sh", "-c", "sleep 60 >/dev/null 2>&1 & cat /proc/self/cgroup"))
out["joined"] = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
out["left_running"] = Path(task, "cgroup.procs").read_text().split()
cgroups.remove_cgroup(task)
out["task_removed"] = not Path(task).exists()

# A server's CPU: cpu.stat of a v2 cgroup without the cpu controller, against the
# kernel's rusage of the same process.
cpu = cgroups.create_cpu_cgroup("")
out["cpu_cgroup"] = cpu
start = cgroups.cpu_usage(cpu)
before = resource.getrusage(resource.RUSAGE_CHILDREN)
busy = "import os,time\nt=time.process_time()\nwhile time.process_time()-t<0.4: os.getpid()"
subprocess.run(cgroups.enter_argv(cpu, (sys.executable, "-c", busy)), check=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN)
used = cgroups.cpu_usage(cpu).since(start)
out["cgroup_cpu_s"] = [used.user_s, used.sys_s]
out["rusage_cpu_s"] = [after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime]
cgroups.remove_cgroup(cpu)
out["cpu_removed"] = not Path(cpu).exists()

# No memory controller in v2 and no v1 hierarchy: refused in one line.
for name, call in (
    ("memory", lambda: cgroups.memory_hierarchy()),
    ("machine", lambda: choose_backend(MEMORY)),
):
    try:
        call()
        out[name] = "accepted"
    except FsarenaError as exc:
        out[name] = str(exc)

# --machine's v2 backend asked for a controller the parent does not pass down, in a
# cgroup of fsarena's own: the error, and nothing left behind.
own = cgroups.create_task_cgroup()
changes = Changes(tracker=type("T", (), {"track": lambda *a: None,
                                         "untrack": lambda *a: None})())
backend = CgroupV2(Path(own))
try:
    backend.setup(MEMORY, changes)
    out["v2_setup"] = "accepted"
except (FsarenaError, OSError) as exc:
    out["v2_setup"] = f"{type(exc).__name__}: {exc}"
changes.revert_all()
out["v2_children_left"] = [p.name for p in Path(own).iterdir() if p.is_dir()]
out["v2_subtree_control"] = Path(own, "cgroup.subtree_control").read_text().strip()
cgroups.remove_cgroup(own)
print(json.dumps(out))
"""


def _cgroup2_available() -> bool:
    return "cgroup2" in Path("/proc/filesystems").read_text()


@pytest.mark.skipif(not _cgroup2_available(), reason="kernel without cgroup2")
def test_the_v2_paths_run_on_a_real_cgroup2_hierarchy_mounted_privately() -> None:
    shell = 'mount -t cgroup2 none /sys/fs/cgroup && exec "$@"'
    argv = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", shell,
            "sh", sys.executable, "-c", SCRIPT]  # fmt: skip
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["root"] == out["task_hierarchy"] == "/sys/fs/cgroup"
    # The task's cgroup: the command ran in it, its background child was ended with it.
    name = Path(out["cpu_cgroup"]).name
    assert name.startswith("fsarena-")
    assert any(line.startswith("0::/fsarena-") for line in out["joined"].splitlines())
    assert len(out["left_running"]) == 1 and out["task_removed"]
    # cpu.stat without the cpu controller agrees with rusage (microseconds on both sides;
    # the shell that joins and execs is the same process, so nothing else is in it).
    assert sum(out["cgroup_cpu_s"]) == pytest.approx(sum(out["rusage_cpu_s"]), abs=0.02)
    assert sum(out["cgroup_cpu_s"]) >= 0.4 and out["cpu_removed"]
    if "memory" not in out["offered"]:  # this host: every controller but hugetlb is v1's
        assert "no memory cgroup controller" in out["memory"]
        assert out["machine"].startswith("this host cannot limit memory: the cgroup v2 root")
        assert "no cgroup v1 hierarchy has memory" in out["machine"]
        # The v2 backend's failure to enable a controller is an error, its half-made
        # state undone: no child, the subtree_control as it was.
        assert out["v2_setup"].startswith("FsarenaError: cannot enable the memory controller")
        assert out["v2_children_left"] == [] and out["v2_subtree_control"] == ""
