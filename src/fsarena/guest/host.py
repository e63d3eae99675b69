"""The host side of a guest: boot it, forward every TaskExecutor call to its agent, stop it.

One guest runs one sequence (one filesystem, one repetition): it boots with
the target image as its first disk and the datasets' image as its second,
read-only; it is stopped, and killed by its process group if it does not stop,
when the sequence ends, on errors and on Ctrl-C. Everything it leaves (init
script, config, initramfs, console logs, UML's pid file, qemu's socket) is in
its run directory, which is removed with it; when a guest fails, the line of
its console that says why (guest.console) is quoted in the error first.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fsarena.errors import FsarenaError
from fsarena.guest.console import explain
from fsarena.guest.kernels import GUESTS, MEMORY_DIR, GuestDisk
from fsarena.host.executor import GuestSpec, SpaceInfo
from fsarena.measure.collect import Command, Measurement, Timed

if TYPE_CHECKING:
    from fsarena.host.executor import TaskExecutor

BOOT_TIMEOUT_S = 120.0  # an emulated boot takes seconds; minutes mean it hangs
CALL_TIMEOUT_S = 600.0  # untimed helpers (mkfs for _reach, verify of a large copy)
REPLY_GRACE_S = 120.0  # beyond a timed region's own timeout, which the agent enforces

# Nothing is mounted over the host's root here: the agent, its venv and the checkout may
# live anywhere in it (/tmp, /run); the agent makes its own scratch space (agent.set_up).
INIT = """#!/bin/sh
# fsarena guest init: the host's root, read-only and whole; the agent mounts what it writes to.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PYTHONDONTWRITEBYTECODE=1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
exec {python} -m fsarena.guest.agent {config}
"""
SCRATCH_DIR = "scratch"  # in the run directory: empty, where the guest makes its tmpfs


# The guest's serial line is a tty: more than its 4 KiB input buffer at once
# throttles it, and UML's line driver never reads again (measured: a 5,000-byte
# request hangs, 3,000 bytes pass). So long requests go in pieces, each
# acknowledged before the next is sent; "+" marks a piece that is not the last.
PIECE_BYTES = 1024


class _Channel:
    """JSON lines over a pair of pipes, with deadlines and acknowledged pieces."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd, self.write_fd = read_fd, write_fd
        self.buffer = b""

    def _write(self, data: bytes) -> None:
        while data:
            data = data[os.write(self.write_fd, data) :]

    def send(self, obj: dict[str, Any], timeout_s: float = 60.0) -> None:
        data = json.dumps(obj).encode()  # no newline inside: JSON escapes them
        while len(data) > PIECE_BYTES:
            self._write(b"+" + data[:PIECE_BYTES] + b"\n")
            data = data[PIECE_BYTES:]
            ack = self.receive(timeout_s)
            if ack is None or "ack" not in ack:
                raise FsarenaError(f"the guest did not acknowledge a request piece: {ack}")
        self._write(data + b"\n")

    def receive(self, timeout_s: float) -> dict[str, Any] | None:
        """The next JSON object, None at end of file; FsarenaError past the deadline."""
        deadline = time.monotonic() + timeout_s
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                if line.strip().startswith(b"{"):
                    reply: dict[str, Any] = json.loads(line)
                    return reply
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.read_fd], [], [], left)[0]:
                raise FsarenaError(f"the guest did not answer within {timeout_s:.0f} s")
            chunk = os.read(self.read_fd, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class Process(Protocol):
    """What a guest's executor needs of the emulator's process (a subprocess.Popen)."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class GuestExecutor:
    """A Guest: a TaskExecutor whose every effect happens inside a running guest kernel.

    The host's plumbing (images, loop devices, datasets) is not here: the runner
    does it on the host, before and after the sequence.
    """

    def __init__(
        self, spec: GuestSpec, host: TaskExecutor, proc: Process, channel: _Channel
    ) -> None:
        self.spec = spec
        self.host = host
        self.proc = proc
        self.channel = channel
        self.target_device = GUESTS[spec.kernel].device(0)
        self.boot_s = 0.0
        self.hello: dict[str, Any] = {}
        self._next_id = 0
        self._closed = False

    # ---------------------------------------------------------------- protocol

    def _ask(self, op: str, wait_s: float = CALL_TIMEOUT_S, **args: Any) -> Any:
        if self._closed:
            raise FsarenaError(f"the {self.spec.kernel} guest was already stopped")
        self._next_id += 1
        self.channel.send({"id": self._next_id, "op": op, "args": args})
        try:
            reply = self.channel.receive(wait_s)
        except FsarenaError as exc:
            said = self._cause()
            self.close()
            raise FsarenaError(f"{exc} (during {op}){said}") from None
        if reply is None:
            said = self._cause()  # before close() removes the logs
            self.close()
            raise FsarenaError(f"the {self.spec.kernel} guest died during {op}{said}")
        if "error" in reply:
            raise FsarenaError(str(reply["error"]))
        return reply.get("result")

    def _cause(self) -> str:
        """The line of its logs that says why the guest stopped (guest.console), quoted."""
        said = []
        for name in ("console.log", "kernel.log"):  # the kernel's console; qemu's own errors
            with contextlib.suppress(OSError):
                if line := explain(Path(self.spec.run_dir, name).read_text(errors="replace")):
                    said.append(line)
        return ": its console says: " + " | ".join(said) if said else ""

    def wait_ready(self) -> None:
        started = time.monotonic()
        hello = self.channel.receive(BOOT_TIMEOUT_S)
        if hello is None or not hello.get("ready"):
            why = (hello or {}).get("error", "it stopped before its agent started")
            raise FsarenaError(f"the {self.spec.kernel} guest did not boot: {why}{self._cause()}")
        self.boot_s = time.monotonic() - started
        self.hello = hello

    def close(self) -> None:
        """Ask the guest to power off; kill its process group if it does not."""
        if self._closed:
            return
        self._closed = True
        if self.proc.poll() is None:
            with contextlib.suppress(OSError, FsarenaError):
                self.channel.send({"id": 0, "op": "shutdown"})
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)  # its own group: see boot()
                self.proc.wait()
        self.channel.close()
        shutil.rmtree(self.spec.run_dir, ignore_errors=True)

    # ---------------------------------------------------------------- TaskExecutor

    def call(self, argv: Sequence[str]) -> None:
        if self._closed and list(argv[:1]) == ["umount"]:
            return  # a stopped guest has nothing mounted: the sequence's teardown goes on
        self._ask("call", argv=list(argv))

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        cmds = [asdict(c) for c in commands]
        result = self._ask(
            "measure", timeout_s + REPLY_GRACE_S, commands=cmds, device=device, timeout_s=timeout_s
        )
        return Timed(Measurement.from_dict(result["measurement"]), str(result["stderr"]))

    def drop_caches(self) -> None:
        # The guest's caches, then the host's: the guest's disks are host files
        # whose pages the host caches too.
        self._ask("drop_caches")
        self.host.drop_caches()

    def space(self, mountpoint: str) -> SpaceInfo:
        return SpaceInfo(**self._ask("space", mountpoint=mountpoint))

    def device_size(self, device: str) -> int:
        return int(self._ask("device_size", device=device))

    def make_dir(self, path: str) -> None:
        self._ask("make_dir", path=path)

    def remove_path(self, path: str) -> None:
        self._ask("remove_path", path=path)

    def is_mounted(self, mountpoint: str) -> bool:
        if self._closed:
            return False  # a stopped guest has nothing mounted
        return bool(self._ask("is_mounted", mountpoint=mountpoint))

    def exists(self, path: str) -> bool:
        return bool(self._ask("exists", path=path))

    def count_lines(self, path: str) -> int:
        return int(self._ask("count_lines", path=path))

    def read_text(self, path: str) -> str:
        return str(self._ask("read_text", path=path))

    def output(self, argv: Sequence[str]) -> str:
        return str(self._ask("output", argv=list(argv)))

    def write_file(self, path: str, data: bytes) -> None:
        # The serial line is slow for megabytes (a 16 MiB text pool): the data goes into
        # the run directory on the host, which the guest sees through its view of the
        # host's root, and the agent copies it into place.
        staged = Path(self.spec.run_dir, f"staged-{self._next_id + 1}")
        staged.write_bytes(data)
        try:
            self._ask("copy_file", staged=str(staged.relative_to(self.spec.workdir)), dest=path)
        finally:
            staged.unlink(missing_ok=True)

    def create_memory_cgroup(self, limit_bytes: int) -> str:
        return str(self._ask("create_memory_cgroup", limit_bytes=limit_bytes))

    def create_cpu_cgroup(self, beside: str) -> str:
        return str(self._ask("create_cpu_cgroup", beside=beside))

    def create_task_cgroup(self) -> str:
        return str(self._ask("create_task_cgroup"))

    def remove_cgroup(self, path: str) -> None:
        if not self._closed:  # a stopped guest's cgroups ended with it
            self._ask("remove_cgroup", path=path)

    def track(self, kind: str, ident: str, source: str = "") -> None:
        """Nothing to record: what a guest creates inside itself ends with it."""

    def untrack(self, kind: str, ident: str) -> None:
        """See track()."""

    def filesystems(self) -> list[str]:
        return [str(f) for f in self._ask("filesystems")]

    def job(self, module: str, name: str, args: dict[str, Any], timeout_s: float) -> Any:
        """Run a module's job inside the guest (agent._job): aging its filesystem, verifying a
        copy on it."""
        return self._ask("job", timeout_s, module=module, name=name, args=args)


def _config(spec: GuestSpec) -> dict[str, Any]:
    kernel = GUESTS[spec.kernel]
    config: dict[str, Any] = {
        "tty": kernel.agent_tty,
        "workdir": spec.workdir,
        "scratch": str(Path(spec.run_dir, SCRATCH_DIR)),
        "modules": list(spec.modules),
        "modules_dir": str(kernel.modules_dir() or ""),
    }
    if spec.source_image:
        config["source"] = {
            "device": kernel.device(1),
            "mountpoint": spec.source_mountpoint,
            "fstype": spec.source_fstype,
        }
    return config


def boot(spec: GuestSpec, host: TaskExecutor) -> GuestExecutor:
    """Start the guest and wait for its agent; on any failure nothing is left running."""
    kernel = GUESTS[spec.kernel]
    if missing := kernel.missing():
        raise FsarenaError(f"cannot boot the {spec.kernel} guest: {missing}")
    run_dir = Path(spec.run_dir)
    if not run_dir.resolve().is_relative_to(Path(spec.workdir).resolve()):
        raise FsarenaError(
            f"fsarena bug: the guest's run directory {run_dir} is not in its workdir"
        )
    (run_dir / SCRATCH_DIR).mkdir(parents=True, exist_ok=True)
    config = run_dir / "config.json"
    config.write_text(json.dumps(_config(spec)))
    init = run_dir / "init"
    init.write_text(INIT.format(python=spec.python, config=config))
    init.chmod(0o755)
    disks = [GuestDisk(spec.target_image)]
    if spec.source_image:
        disks.append(GuestDisk(spec.source_image, read_only=True))
    launch = kernel.launch(tuple(disks), str(init), run_dir)
    # The guest's memory is a host file in TMPDIR: keep it in RAM, not on the disk under test.
    env = {**os.environ, "TMPDIR": MEMORY_DIR, **launch.env}
    with open(run_dir / "kernel.log", "wb") as log:
        proc = subprocess.Popen(
            launch.argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            pass_fds=launch.pass_fds,
            start_new_session=True,  # its own process group: Ctrl-C is ours, killpg is exact
            env=env,
        )
    try:
        read_fd, write_fd = launch.connect(BOOT_TIMEOUT_S)
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        shutil.rmtree(run_dir, ignore_errors=True)
        raise
    guest = GuestExecutor(spec, host, proc, _Channel(read_fd, write_fd))
    try:
        guest.wait_ready()
    except BaseException:
        guest.close()
        raise
    return guest
