"""The agent inside a guest kernel: sets the guest up, then executes the host's requests.

It runs as the guest's init (through a tiny shell script that mounts /proc
and /sys, nothing else: the host's root stays whole in view, so the agent, its
venv and the checkout are found wherever they live, /tmp and /run included),
reads one JSON request per line from its serial line and answers one JSON
line each. It uses the standard library and fsarena's stdlib-only modules
(measure, host), so the same measurement code runs inside the guest as on
the host; a job's module (the "job" request: aging inside the guest,
fsarena.aging.runtime; verifying a copy, fsarena.datasets.verify) only when the
host asks for one of its jobs.
Timed commands start through the same native launcher (fsarena-timeit, beside
the host's interpreter, which the guest sees through hostfs or 9p), so their max
RSS is theirs, not this agent's; a guest that cannot run it reports max RSS as
unavailable (None), never the agent's.

Set-up, from the JSON config file the host wrote: load the filesystem's
modules (finit_module(2) through ctypes: the host has no kmod), mount a tmpfs
over the work directory (the host's, seen read-only through hostfs) so the
same paths exist and are writable, with the host's work directory still in
view inside it (HOST_VIEW) and whatever the agent runs from bound back where it
was, and mount the datasets' disk read-only where the host has them. That tmpfs
is the guest's only scratch space (HOME, TMPDIR): it covers nothing but the
work directory, which the host made for fsarena.
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import shutil
import subprocess
import sys
import traceback
import tty
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fsarena.errors import FsarenaError
from fsarena.host.executor import RealExecutor, TaskExecutor
from fsarena.measure.collect import Command

# Inside the guest's tmpfs over the work directory: the host's work directory as the host
# has it (files staged there by host.write_file), and the agent's HOME and TMPDIR.
HOST_VIEW = ".guest-host-view"
SCRATCH = (".guest-home", ".guest-tmp")
SYS_FINIT_MODULE = 313  # x86_64; the guest kernel runs the host's x86_64 binaries
EEXIST = 17


def _load_module(path: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.syscall(SYS_FINIT_MODULE, fd, b"", 0) != 0:
            errno = ctypes.get_errno()
            if errno != EEXIST:
                raise FsarenaError(f"cannot load {path.name}: {os.strerror(errno)}")
    finally:
        os.close(fd)


def load_modules(modules_dir: str, names: list[str]) -> None:
    """Load modules and their dependencies (from modules.dep); built-in ones are skipped."""
    root = Path(modules_dir)

    def canon(path: str) -> str:
        return Path(path).name.removesuffix(".ko").replace("-", "_")

    builtin = {canon(x) for x in (root / "modules.builtin").read_text().split()}
    deps: dict[str, tuple[str, list[str]]] = {}
    for line in (root / "modules.dep").read_text().splitlines():
        path, _, rest = line.partition(":")
        deps[canon(path)] = (path, rest.split())
    loaded: set[str] = set()

    def load(name: str) -> None:
        if name in loaded or name in builtin:
            return
        if name not in deps:
            raise FsarenaError(f"the guest kernel has no module {name}")
        path, needs = deps[name]
        for dep in reversed(needs):  # modules.dep lists the deepest dependency last
            load(canon(dep))
        _load_module(root / path)
        loaded.add(name)

    for name in names:
        load(canon(name))


def _run(argv: list[str]) -> None:
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise FsarenaError(f"guest set-up: `{' '.join(argv)}` failed: {result.stderr.strip()}")


def _cover_workdir(workdir: str, scratch: str, keep: list[str]) -> None:
    """A tmpfs over the work directory, the host's view of it inside, the paths in keep bound back.

    The tmpfs is made on scratch, an empty directory the host made in the run
    directory (covering it hides nothing), then moved over the work directory with
    the host's view inside it: once the tmpfs covers the work directory, the host's
    copy could no longer be reached to bind it.
    """
    # -n: libmount's table (/run/mount/utab) is on the read-only root until LIBMOUNT_UTAB below.
    _run(["mount", "-n", "-t", "tmpfs", "-o", "mode=0755", "fsarena-guest", scratch])
    os.makedirs(Path(scratch, HOST_VIEW))
    _run(["mount", "-n", "--bind", workdir, str(Path(scratch, HOST_VIEW))])
    _run(["mount", "-n", "--move", scratch, workdir])
    bound: list[str] = []
    for path in sorted(keep, key=len):  # a venv or checkout inside the work directory, now covered
        rel = os.path.relpath(path, workdir)
        if rel == "." or rel.startswith("..") or any(Path(rel).is_relative_to(b) for b in bound):
            continue
        bound.append(rel)
        os.makedirs(Path(workdir, rel), exist_ok=True)
        _run(["mount", "-n", "--bind", str(Path(workdir, HOST_VIEW, rel)), str(Path(workdir, rel))])
    for name, var in zip(SCRATCH, ("HOME", "TMPDIR"), strict=True):
        os.makedirs(Path(workdir, name), exist_ok=True)
        os.environ[var] = str(Path(workdir, name))
    os.environ["LIBMOUNT_UTAB"] = str(Path(workdir, SCRATCH[1], "utab"))


def set_up(config: dict[str, Any]) -> None:
    if config.get("modules"):
        load_modules(config["modules_dir"], config["modules"])
    # What this agent runs from (its interpreter, venv, every import path, the checkout's
    # src for an editable install): bound back if the work directory holds it.
    keep = [sys.prefix, os.path.dirname(sys.executable), *(p for p in sys.path if p)]
    _cover_workdir(config["workdir"], config["scratch"], keep)
    # Memory cgroups (bonnie++ runs in one); the guest kernels have cgroup v2.
    _run(["mount", "-t", "cgroup2", "cgroup2", "/sys/fs/cgroup"])
    source = config.get("source")
    if source:
        os.makedirs(source["mountpoint"], exist_ok=True)
        argv = ["mount", "-t", source["fstype"], "-o", "ro", source["device"]]
        _run([*argv, source["mountpoint"]])


def _measure(ex: TaskExecutor, commands: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    timed = ex.measure(
        [Command(tuple(c["argv"]), c.get("stdout_path"), c.get("cwd")) for c in commands], **kw
    )
    return {"measurement": timed.measurement.to_dict(), "stderr": timed.stderr}


def _copy_file(workdir: str, staged: str, dest: str) -> None:
    """Copy a file the host staged in its work directory (staged: relative to it) into place."""
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(workdir, HOST_VIEW, staged), dest)


def _job(ex: TaskExecutor, module: str, name: str, args: dict[str, Any]) -> Any:
    """A job of an fsarena module's JOBS table (fsarena.aging.runtime, .datasets.verify), run here.

    The host names the module: this package does not depend on what its jobs
    do (aging), only on the convention, a JOBS mapping of functions that take
    the executor and JSON arguments and return JSON.
    """
    if not module.startswith("fsarena."):
        raise FsarenaError(f"guest agent: no jobs outside fsarena ({module})")
    jobs = getattr(importlib.import_module(module), "JOBS", {})
    if name not in jobs:
        raise FsarenaError(f"guest agent: {module} has no job {name!r}")
    return jobs[name](ex, **args)


def _filesystems() -> list[str]:
    return [line.split()[-1] for line in Path("/proc/filesystems").read_text().splitlines()]


def _power_off() -> None:
    os.sync()
    Path("/proc/sysrq-trigger").write_text("o")


def operations(ex: TaskExecutor, workdir: str = "") -> dict[str, Callable[..., Any]]:
    """What the host may ask for: the TaskExecutor's methods, with JSON-friendly results."""
    return {
        "call": ex.call,
        "measure": lambda **kw: _measure(ex, **kw),
        "drop_caches": ex.drop_caches,
        "space": lambda **kw: asdict(ex.space(**kw)),
        "device_size": ex.device_size,
        "make_dir": ex.make_dir,
        "remove_path": ex.remove_path,
        "is_mounted": ex.is_mounted,
        "exists": ex.exists,
        "count_lines": ex.count_lines,
        "read_text": ex.read_text,
        "output": ex.output,
        "copy_file": lambda **kw: _copy_file(workdir, **kw),
        "create_memory_cgroup": ex.create_memory_cgroup,
        "create_cpu_cgroup": ex.create_cpu_cgroup,
        "create_task_cgroup": ex.create_task_cgroup,
        "remove_cgroup": ex.remove_cgroup,
        "filesystems": _filesystems,
        "load_modules": load_modules,
        "job": lambda **kw: _job(ex, **kw),
    }


def answer(ops: dict[str, Callable[..., Any]], request: dict[str, Any]) -> dict[str, Any]:
    """One request -> one reply; a user-fixable problem is an error, anything else a bug."""
    reply: dict[str, Any] = {"id": request.get("id")}
    try:
        reply["result"] = ops[request["op"]](**request.get("args", {}))
    except FsarenaError as exc:
        reply["error"] = str(exc)
    except Exception as exc:
        reply["error"] = f"guest agent bug: {exc!r}"
        reply["traceback"] = traceback.format_exc()
    return reply


def serve(
    read_fd: int,
    write_fd: int,
    ops: dict[str, Callable[..., Any]],
    hello: dict[str, Any],
    on_shutdown: Callable[[], None],
) -> None:
    """Answer requests, one JSON line each, until end of file or a shutdown request."""

    def send(obj: dict[str, Any]) -> None:
        data = json.dumps(obj).encode() + b"\n"
        while data:
            data = data[os.write(write_fd, data) :]

    send(hello)
    buf = pending = b""
    while True:
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            return
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if line.startswith(b"+"):  # a piece of a long request (see host.PIECE_BYTES)
                pending += line[1:]
                send({"ack": len(pending)})
                continue
            line, pending = pending + line, b""
            if not line.strip().startswith(b"{"):
                continue
            request = json.loads(line)
            if request.get("op") == "shutdown":
                send({"id": request.get("id"), "result": None})
                on_shutdown()
                return
            send(answer(ops, request))


def main(config_path: str) -> None:
    config = json.loads(Path(config_path).read_text())
    hello: dict[str, Any] = {"ready": True}
    try:
        set_up(config)
        hello["uptime_s"] = float(Path("/proc/uptime").read_text().split()[0])
        hello["kernel"] = os.uname().release
    except Exception as exc:
        hello = {"ready": False, "error": f"guest set-up failed: {exc}"}
    fd = os.open(config["tty"], os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)  # no echo, no line editing, no newline translation
    serve(fd, fd, operations(RealExecutor(), config["workdir"]), hello, _power_off)
    _power_off()


if __name__ == "__main__":
    main(sys.argv[1])
