"""A fake executor at the measurement seam: records every effect, measures nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fsarena.aging.runtime import plan_from
from fsarena.aging.workload import digest
from fsarena.datasets import verify
from fsarena.datasets.gitrepo import GitRepoSpec
from fsarena.datasets.linux_source import KernelSourceSpec, TarballSpec
from fsarena.datasets.making import Made, materialize
from fsarena.datasets.manifest import FileEntry, Manifest, VerifyResult
from fsarena.datasets.realistic import TextTreeSpec
from fsarena.datasets.spec import DatasetSpec
from fsarena.datasets.tree import TreeSpec
from fsarena.guest.agent import answer, operations
from fsarena.guest.host import GuestExecutor, _Channel
from fsarena.host.executor import Executor, Guest, GuestSpec, ImageCopy, SpaceInfo
from fsarena.measure.collect import Command, Measurement, Timed
from fsarena.run.scope import DatasetMaker
from fsarena.tasks.tree import FIND_PATTERN, LISTING

MIB = 1 << 20
FIO_FIXTURES = Path(__file__).parent / "fixtures" / "fio"  # real fio JSON captured here
MOUNTERS = ("mount", "fusefat", "ntfs-3g", "mount.exfat-fuse")  # commands that mount their last arg


def fake_manifest(spec: DatasetSpec) -> Manifest:
    """A manifest with the spec's layout and made-up checksums (no data written)."""
    if isinstance(spec, TreeSpec | TextTreeSpec):
        dirs, files = spec.plan()
        entries = tuple(FileEntry(p, s, "0" * 32) for p, s in files)
        return Manifest(
            spec.name, spec.spec_hash(), tuple(sorted(entries, key=lambda e: e.path)), tuple(dirs)
        )
    entry = FileEntry(spec.filename, spec.total_bytes, "0" * 32)  # type: ignore[attr-defined]
    return Manifest(spec.name, spec.spec_hash(), (entry,), ())


@dataclass
class FakeExecutor:
    calls: list[tuple[str, ...]] = field(default_factory=list)
    content_checks: list[bool] = field(default_factory=list)  # verify(content=...) in order
    manifests: dict[str, Manifest] = field(default_factory=dict)
    fail_on: str | None = None  # argv[0] of a timed command that exits 1
    wall_s: float = 1.0
    mounted: set[str] = field(default_factory=set)
    loops: int = 0
    _last_fio_read: bool = False
    _last_fio_cached: bool = False  # the ceiling's page-cache read (--direct=0)
    page_cache_speedup: float = 4.0  # the page cache reads this many times the device
    direct_read_scale: float = 1.0  # fio's direct reads run this many times the fixture's
    files: dict[str, str] = field(default_factory=dict)  # what read_text returns
    tracked: list[tuple[str, str]] = field(default_factory=list)  # the ledger, in order
    copies: set[str] = field(default_factory=set)  # image files copy_image made (they exist)
    # create_cpu_cgroup's answer ("": no cgroup counts CPU here); its cpu.stat starts at
    # what a server's start-up used and grows by server_cpu_usec (user, system) per measure.
    cpu_cgroup: str = ""
    server_cpu_usec: tuple[int, int] = (0, 0)

    def track(self, kind: str, ident: str, source: str = "") -> None:
        self.tracked.append((kind, ident))

    def untrack(self, kind: str, ident: str) -> None:
        self.tracked.remove((kind, ident))

    def call(self, argv: Sequence[str]) -> None:
        self.calls.append(("call", *argv))
        self.call_effects(argv)

    def _cpu_stat(self, user_usec: int, system_usec: int) -> None:
        self.files[f"{self.cpu_cgroup}/cpu.stat"] = (
            f"usage_usec {user_usec + system_usec}\nuser_usec {user_usec}\n"
            f"system_usec {system_usec}\nnr_periods 0\n"
        )

    def measure(self, commands: Sequence[Command], device: str | None, timeout_s: float) -> Timed:
        code = 0
        if f"{self.cpu_cgroup}/cpu.stat" in self.files:  # the server is up
            stat = dict(
                line.split() for line in self.files[f"{self.cpu_cgroup}/cpu.stat"].splitlines()
            )
            user, system = self.server_cpu_usec
            self._cpu_stat(int(stat["user_usec"]) + user, int(stat["system_usec"]) + system)
        for cmd in commands:
            self.calls.append(("measure", *cmd.argv))
            if "fio" in cmd.argv[:6]:  # fio, or the page-cache read's shell running it
                self._last_fio_read = "--rw=read" in cmd.argv
                self._last_fio_cached = "--direct=0" in cmd.argv
            if self.fail_on in cmd.argv[:1]:
                code = 1
                break
            self.call_effects(cmd.argv)
        m = Measurement(
            wall_s=self.wall_s,
            user_s=0.2,
            sys_s=0.3,
            minor_faults=100,
            major_faults=1,
            max_rss_kib=2048,
            device_read_bytes=MIB,
            device_write_bytes=2 * MIB,
            system_busy_s=0.6,
            system_iowait_s=0.1,
            exit_code=code,
        )
        return Timed(m, "boom" if code else "")

    def call_effects(self, argv: Sequence[str]) -> None:
        if argv[0] in MOUNTERS:
            self.mounted.add(argv[-1])
        if argv[0] == "umount":
            self.mounted.discard(argv[-1])

    def output(self, argv: Sequence[str]) -> str:
        self.calls.append(("output", *argv))
        if argv[0] == "du":
            return f"{10 * MIB}\t{argv[-1]}\n"
        if tuple(argv[:2]) == ("tar", "-tzf"):  # the listing of a good archive of the tree
            name = argv[2].rsplit("/", 1)[-1].removesuffix(".tar.gz")
            m = self.manifests[name]
            lines = [f"{name}/", *(f"{name}/{d}/" for d in m.directories)]
            return "\n".join([*lines, *(f"{name}/{f.path}" for f in m.files)]) + "\n"
        return ""

    def write_file(self, path: str, data: bytes) -> None:
        self.calls.append(("write", path))

    def create_memory_cgroup(self, limit_bytes: int) -> str:
        self.calls.append(("cgroup", str(limit_bytes)))
        return "/sys/fs/cgroup/memory/fsarena-fake-0"

    def create_cpu_cgroup(self, beside: str) -> str:
        self.calls.append(("cgroup", "cpu", beside))
        if self.cpu_cgroup:
            self._cpu_stat(700_000, 300_000)  # the server's start-up, before any region
        return self.cpu_cgroup

    def create_task_cgroup(self) -> str:
        self.calls.append(("cgroup", "task"))
        return "/sys/fs/cgroup/pids/fsarena-fake-task"

    def remove_cgroup(self, path: str) -> None:
        self.calls.append(("cgroup_removed", path))

    def drop_caches(self) -> None:
        self.calls.append(("drop_caches",))

    def flush_device(self, device: str) -> bool:
        self.calls.append(("flush_device", device))
        return True

    def job(self, module: str, name: str, args: dict[str, Any], timeout_s: float = 0.0) -> Any:
        """A job, faked like measure: a copy's verification (fsarena.datasets.verify) recorded
        and passed, an aging job (fsarena.aging.runtime) recorded, nothing written; the age
        job's file set is the plan's own (AgingPlan.final(), pure)."""
        if (module, name) == (verify.__name__, "verify"):
            return self._verified(
                Manifest.from_dict(args["manifest"]), args["root"], args["content"]
            )
        self.calls.append(("job", name))
        if name == "layout":
            values = {"extents_per_file": 1.0, "fragmented_files_pct": 0.0, "layout_score": 1.0}
            return {"values": values, "block_bytes": 4096, "no_extents": ""}
        if name != "age":
            return True
        plan = plan_from(**args["plan"])
        live = plan.final()
        return {
            **{k: args["plan"][k] for k in ("profile", "seed")},
            "image_size_bytes": plan.image_bytes,
            "wall_s": self.wall_s,
            "bytes_written": plan.churn_bytes + sum(f.size for f in plan.fill()),
            "device_write_bytes": 2 * MIB,
            "stopped_by": "bytes",
            "files": len(live),
            "manifest_digest": digest(live, plan.seed),
            "on_disk_matches": True,
        }

    def _verified(self, manifest: Manifest, root: str, content: bool) -> dict[str, Any]:
        self.calls.append(("verify", manifest.name, root))
        self.manifests.setdefault(manifest.name, manifest)
        self.content_checks.append(content)
        return asdict(VerifyResult(True, len(manifest.files), manifest.total_bytes * content, ()))

    @property
    def datasets(self) -> FakeDatasets:
        """The run's datasets, faked beside this executor (Runner(..., datasets=...))."""
        return FakeDatasets(self)

    def space(self, mountpoint: str) -> SpaceInfo:
        return SpaceInfo(900 * MIB, 850 * MIB, 870 * MIB)

    def device_size(self, device: str) -> int:
        return 1000 * MIB

    def make_dir(self, path: str) -> None:
        self.calls.append(("mkdir", path))

    def remove_path(self, path: str) -> None:
        self.calls.append(("remove", path))
        self.copies.discard(path)

    def copy_image(self, source: str, dest: str) -> ImageCopy:
        self.calls.append(("copy_image", source, dest))
        self.copies.add(dest)
        return ImageCopy("sparse copy", 0)

    def create_image(self, path: str, size_bytes: int) -> None:
        self.calls.append(("create_image", path))

    def retire_image(self, path: str) -> None:
        self.calls.append(("retire", path))

    def remove_spare_image(self) -> None:
        self.calls.append(("remove_spare",))

    def attach_loop(self, image: str) -> str:
        self.loops += 1
        self.calls.append(("attach", image))
        return f"/dev/loop{self.loops}"

    def detach_loop(self, device: str) -> None:
        self.calls.append(("detach", device))

    def is_mounted(self, mountpoint: str) -> bool:
        return mountpoint in self.mounted

    def exists(self, path: str) -> bool:
        return path in self.copies

    def read_text(self, path: str) -> str:
        self.calls.append(("read_text", path))
        if path.endswith("fio.json"):
            direction = "read" if self._last_fio_read else "write"
            text = (FIO_FIXTURES / f"seq-{direction}-qd16.json").read_text()
            if self._last_fio_cached:
                data = json.loads(text)
                data["jobs"][0]["read"]["bw_bytes"] *= self.page_cache_speedup
                return json.dumps(data)
            if direction == "read" and self.direct_read_scale != 1.0:
                data = json.loads(text)
                data["jobs"][0]["read"]["bw_bytes"] *= self.direct_read_scale
                return json.dumps(data)
            return text
        if path in self.files:
            return self.files[path]
        raise FileNotFoundError(path)

    def count_lines(self, path: str) -> int:
        tree = self.manifests["tree"]
        if path.endswith(LISTING):
            return len(tree.files) + len(tree.directories) + 10
        return tree.count_matching(FIND_PATTERN)

    def start_guest(self, spec: GuestSpec) -> FakeGuest:
        self.calls.append(("start_guest", spec.kernel, spec.target_image, spec.source_image))
        return FakeGuest(self, spec)


@dataclass
class FakeDatasets:
    """The run's dataset maker, faked: what it makes is recorded in its executor's calls,
    with made-up checksums and nothing written (a git repository is made for real)."""

    ex: FakeExecutor

    def resolve(self, spec: DatasetSpec, cache_dir: str) -> tuple[DatasetSpec, str]:
        if isinstance(spec, KernelSourceSpec):
            return spec.generated(), "generated (fake)"
        return spec, "generated"

    def materialize(
        self, spec: DatasetSpec, dest: str, cache_dir: str, made: Mapping[str, Made]
    ) -> Manifest:
        if isinstance(spec, TarballSpec):
            self.ex.calls.append(("tarball", spec.name))
            entry = FileEntry(spec.filename, spec.total_bytes, "0" * 32)
            return Manifest(spec.name, spec.spec_hash(), (entry,), ())
        if isinstance(spec, GitRepoSpec) or not spec.on_source:
            return materialize(spec, Path(dest), Path(cache_dir), made)
        self.ex.calls.append(("generate", spec.name, dest))
        self.ex.manifests[spec.name] = fake_manifest(spec)
        return self.ex.manifests[spec.name]


class FakeGuest(GuestExecutor):
    """The real GuestExecutor, its transport faked: requests go to the real agent's table of
    operations over a FakeExecutor standing for the guest's inside, which records into its
    host's call list, each call tagged with the guest. Nothing of the guest's policy (what
    drop_caches does on the host too, what a stopped guest answers) is copied here."""

    def __init__(self, host: FakeExecutor, spec: GuestSpec) -> None:
        inside = FakeExecutor(manifests=host.manifests, fail_on=host.fail_on, wall_s=host.wall_s)
        inside.calls = _Tagged(host.calls, spec.kernel)
        Path(spec.run_dir).mkdir(parents=True, exist_ok=True)  # as boot() makes it
        ops = operations(inside, spec.workdir)
        # A job is the agent running fsarena's code on the guest's filesystem: faked as the
        # inside's (FakeExecutor.job), as its timed commands are.
        ops["job"] = lambda module, name, args: inside.job(module, name, args)
        # The agent copies a staged file from its view of the host's root: here, from the host.
        ops["copy_file"] = lambda staged, dest: inside.write_file(
            dest, Path(spec.workdir, staged).read_bytes()
        )
        process = _FakeProcess()
        super().__init__(spec, host, process, _FakeChannel(ops, process, inside))
        self.inside = inside


@dataclass
class _FakeProcess:
    """The emulator's process: running until the agent is asked to shut down."""

    pid: int = -1  # never signalled: it stops when asked
    returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self.returncode = 0
        return 0


class _FakeChannel(_Channel):
    """Each request answered at once by the real agent's answer(), through JSON as on the line."""

    def __init__(
        self, ops: dict[str, Callable[..., Any]], process: _FakeProcess, inside: FakeExecutor
    ) -> None:
        super().__init__(-1, -1)
        self.ops, self.process, self.inside = ops, process, inside
        self.replies: list[dict[str, Any]] = []

    def send(self, obj: dict[str, Any], timeout_s: float = 60.0) -> None:
        request = json.loads(json.dumps(obj))
        if request["op"] == "shutdown":
            self.inside.calls.append(("close",))
            self.process.returncode = 0
            return
        self.replies.append(json.loads(json.dumps(answer(self.ops, request))))

    def receive(self, timeout_s: float) -> dict[str, Any] | None:
        return self.replies.pop(0) if self.replies else None

    def close(self) -> None:
        """No descriptors to close."""


class _Tagged(list[tuple[str, ...]]):
    """Appends to another list, prefixing each entry's first element with a tag."""

    def __init__(self, target: list[tuple[str, ...]], tag: str) -> None:
        super().__init__()
        self.target, self.tag = target, tag

    def append(self, item: tuple[str, ...]) -> None:
        self.target.append((f"{self.tag}:{item[0]}", *item[1:]))


# Declared against the protocols: a signature that drifts from the seam is a type error.
_host: Executor = FakeExecutor()
_datasets: DatasetMaker = FakeDatasets(FakeExecutor())
if TYPE_CHECKING:
    _guest: Guest = FakeGuest(FakeExecutor(), GuestSpec("uml", "", "", ""))


@dataclass
class TickingClock:
    """A runner's clock that moves step_s at every reading, so that the rounds of a fake
    run (milliseconds apart in fact) are minutes apart: each gets its drift check."""

    step_s: float = 10.0
    now_s: float = 0.0

    def __call__(self) -> float:
        self.now_s += self.step_s
        return self.now_s
