"""A PostgreSQL server's CPU read from its cgroup agrees with the kernel's per-process view.

The server is started as pgbench's task starts it (its memory cgroup and the cgroup
that counts its CPU: cpuacct on cgroup v1, the same cgroup on v2), a few seconds of
pgbench run against it, and the cgroup's CPU over that region is compared with the
sum of /proc/PID/stat over the server's processes: utime + stime of each, and the
postmaster's cutime + cstime, which hold the backends it reaped when their clients
left. Nothing here is fsarena's arithmetic on both sides: one side is the cgroup's
counter, the other the scheduler's per-task times.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.host import cgroups
from tests.integration.conftest import new_workdir

TICK = os.sysconf("SC_CLK_TCK")
BINDIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: int(p.parent.name))


def _as_postgres(*argv: str) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *argv]


def _settled(postmaster: int, timeout_s: float = 10.0) -> None:
    """Wait until every client's backend has exited and been reaped by the postmaster.

    A backend whose client left is still exiting for a moment (its memory, and so its
    command line, already gone), then a zombie until the postmaster waits for it: only
    then are its times in the postmaster's cutime. Reading the processes meanwhile can
    miss a backend's CPU that the cgroup counted (seen: 1.05 s against 0.79 s).
    """
    deadline = time.monotonic() + timeout_s
    busy: list[str] = []
    while time.monotonic() < deadline:
        busy = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) != postmaster:
                    continue
                cmdline = (stat.parent / "cmdline").read_bytes()
                # a zombie, an exiting process (no command line) or a client's backend
                # ("postgres: USER DB [local] idle")
                if fields[0] == "Z" or not cmdline or b"[local]" in cmdline:
                    busy.append(stat.parent.name)
        if not busy:
            return
        time.sleep(0.05)
    raise AssertionError(f"the clients' backends still there after {timeout_s:.0f} s: {busy}")


def _proc_cpu_s(cpu: str, postmaster: int) -> float:
    """utime + stime of every process in the cgroup, plus the postmaster's reaped
    children's: the postmaster first, so a child read afterwards was not yet in its
    cutime, and all again if one left between the list and its stat."""
    while True:
        pids = [int(p) for p in Path(cpu, "cgroup.procs").read_text().split()]
        pids.sort(key=lambda pid: pid != postmaster)
        total, vanished = 0, False
        for pid in pids:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                vanished = True  # reaped since the postmaster was read: read all again
                break
            # fields[0] is field 3 (state): utime is field 14, stime 15, cutime 16, cstime 17.
            total += int(fields[11]) + int(fields[12])
            if pid == postmaster:
                total += int(fields[13]) + int(fields[14])
        if not vanished:
            return total / TICK


@pytest.fixture
def server() -> Iterator[tuple[Path, str, str]]:
    if not BINDIRS:
        pytest.skip("no PostgreSQL server in /usr/lib/postgresql")
    bindir = BINDIRS[-1]
    work = new_workdir()
    work.chmod(0o755)
    data, sock = work / "data", work / "socket"
    sock.mkdir()
    subprocess.run(["chown", "-R", "postgres:postgres", str(work)], check=True)
    subprocess.run(_as_postgres(str(bindir / "initdb"), "-D", str(data), "--auth=trust",
                                "--no-sync", "-E", "SQL_ASCII", "--locale=C"),
                   check=True, capture_output=True)  # fmt: skip
    with (data / "postgresql.conf").open("a") as f:
        f.write(f"listen_addresses = ''\nunix_socket_directories = '{sock}'\n")
    memory = cgroups.create_memory_cgroup(512 << 20)
    cpu = cgroups.create_cpu_cgroup(memory)
    joined = tuple(dict.fromkeys(p for p in (memory, cpu) if p))
    start = _as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(work / "log"),
                         "-w", "start")  # fmt: skip
    try:
        subprocess.run(cgroups.enter_all_argv(joined, tuple(start)), check=True,
                       capture_output=True)  # fmt: skip
        yield work, memory, cpu
    finally:
        stop = _as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop")
        subprocess.run(stop, check=False, capture_output=True)
        for path in dict.fromkeys((cpu, memory)):
            if path:
                cgroups.remove_cgroup(path)
        subprocess.run(["rm", "-rf", str(work)], check=False)


def test_the_servers_cpu_from_its_cgroup_matches_its_processes_own_times(
    server: tuple[Path, str, str],
) -> None:
    work, memory, cpu = server
    assert cpu, "no cgroup here counts CPU (neither v1 cpuacct nor v2)"
    found = cgroups.cpu_hierarchy()
    if found is not None and found[1] == 1:
        assert cpu != memory and Path(cpu, "cpuacct.usage").exists()  # v1: its own cpuacct
    client = [str(BINDIRS[-1] / "pgbench"), "-h", str(work / "socket"), "-U", "postgres"]
    subprocess.run([*client, "-i", "-q", "-s", "1", "postgres"], check=True, capture_output=True)
    postmaster = int((work / "data" / "postmaster.pid").read_text().split()[0])
    assert postmaster in [int(p) for p in Path(cpu, "cgroup.procs").read_text().split()]
    _settled(postmaster)
    before_cg, before_proc = cgroups.cpu_usage(cpu), _proc_cpu_s(cpu, postmaster)
    # A fixed number of transactions, not a time: a loaded machine runs them slower, but
    # the server's CPU for them stays about the same.
    subprocess.run([*client, "-c", "4", "-j", "2", "-t", "500", "-n", "postgres"], check=True,
                   capture_output=True)  # fmt: skip
    _settled(postmaster)
    # Backends are gone by now, reaped into the postmaster's cutime; new helpers
    # (autovacuum workers) started in the region are read from the cgroup's list again.
    after_cg, after_proc = cgroups.cpu_usage(cpu), _proc_cpu_s(cpu, postmaster)
    assert before_cg is not None and after_cg is not None
    from_cgroup = after_cg.since(before_cg)
    from_proc = after_proc - before_proc
    assert from_cgroup.total_s > 0.2, from_cgroup  # 2,000 transactions keep a server busy
    assert from_cgroup.user_s > 0 and from_cgroup.sys_s > 0
    # /proc counts in ticks per process (10 ms each, a dozen processes): within 10 %,
    # or 0.1 s when the region used little CPU. Measured here at load 17: 0.538 s from
    # the cgroup against 0.53 s from /proc, 0.262 against 0.25, 0.567 against 0.56.
    assert abs(from_cgroup.total_s - from_proc) <= max(0.1, 0.1 * from_proc), (
        from_cgroup,
        from_proc,
    )
