"""The run's dataset source: the datasets resolved, made once on the source, the guests' disk.

Trees first: tarballs archive them and git repositories commit them. A
resumed session checks that every dataset is still the one it measured.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, replace

from fsarena.datasets.gitrepo import GitRepoSpec
from fsarena.datasets.linux_source import TarballSpec
from fsarena.datasets.realistic import histogram
from fsarena.datasets.spec import DatasetSpec
from fsarena.host.executor import Executor
from fsarena.interrupt import whole
from fsarena.run.events import Event
from fsarena.run.resume import check_same_dataset
from fsarena.run.scope import RunScope
from fsarena.session.records import DatasetRecord, DatasetSpecRecord, SourceRecord
from fsarena.targets import GuestSourceDisk, Source
from fsarena.targets.source import source_size_bytes
from fsarena.tasks import SourceDataset

_OF_A_TREE = (TarballSpec, GitRepoSpec)  # datasets made from a tree dataset, after it


def source_bytes(specs: dict[str, DatasetSpec]) -> int:
    """Bytes the datasets take on the source (tasks make the others on the test filesystem)."""
    return sum(s.total_bytes for s in specs.values() if s.on_source)


@dataclass(frozen=True)
class PreparedSource:
    """What preparing the source made: the datasets on it, and the guests' disk of them."""

    datasets: dict[str, SourceDataset]
    guest_disk: GuestSourceDisk | None  # None when no filesystem of the plan runs in a guest


def resolved_specs(scope: RunScope) -> tuple[dict[str, DatasetSpec], dict[str, str]]:
    """The plan's datasets as they will be made (e.g. the real kernel tree), and origins."""
    specs, origins = {}, {}
    for name, planned in scope.plan.dataset_specs().items():
        specs[name], origins[name] = scope.datasets.resolve(planned, scope.workdir("cache"))
    for name, spec in specs.items():  # a tarball is as big as the tree it archives
        if isinstance(spec, TarballSpec | GitRepoSpec):
            specs[name] = replace(spec, source_bytes=specs[spec.of].total_bytes)
        if isinstance(spec, GitRepoSpec):
            origins[name] = (
                f"the git repository {spec.repo}: its newest {spec.commits} commits on HEAD's "
                "first-parent line (real history)"
                if spec.repo
                else f"git history built from dataset {spec.of} ({origins[spec.of]})"
            )
    return specs, origins


def prepare_source(scope: RunScope, stack: ExitStack) -> PreparedSource:
    """Mount the source and make every dataset on it (their teardown goes on the stack)."""
    specs, origins = resolved_specs(scope)
    data_bytes = source_bytes(specs)
    files = sum(len(s.plan().files) for s in specs.values() if s.on_source)
    size = source_size_bytes(data_bytes, files)
    source = Source(scope.source_kind, scope.workdir("source"), size, scope.workdir("source.img"))
    stack.callback(scope.undo, "remove the dataset source", lambda: source.teardown(scope.executor))
    scope.say(Event("setup", f"source: {source.kind}, {data_bytes / 1e6:.0f} MB of datasets"))
    source.setup(scope.executor)
    scope.session.source = SourceRecord.model_validate(source.describe())
    guest_disk = prepare_guest_source(scope, stack, source)
    found: dict[str, SourceDataset] = {}
    # Trees first: tarballs archive them, git repositories commit them.
    for name, spec in sorted(specs.items(), key=lambda kv: isinstance(kv[1], _OF_A_TREE)):
        origin = origins[name]
        scope.say(Event("setup", f"dataset {name}: {origin} ({spec.total_bytes / 1e6:.0f} MB)"))
        cache = scope.workdir("cache")
        manifest = scope.datasets.materialize(spec, source.mountpoint, cache, found)
        found[name] = SourceDataset(f"{source.mountpoint}/{spec.name}", manifest, spec)
        check_same_dataset(scope.session.datasets.get(name), name, manifest.digest())
        scope.session.datasets[name] = DatasetRecord(
            spec=DatasetSpecRecord.model_validate(spec.to_dict()),
            spec_hash=spec.spec_hash(),
            manifest_digest=manifest.digest(),
            files=len(manifest.files),
            directories=len(manifest.directories),
            total_bytes=manifest.total_bytes,
            origin=origin,
            size_histogram=histogram([f.size_bytes for f in manifest.files]),
        )
    scope.save()
    if guest_disk is not None:
        scope.say(Event("setup", "datasets disk for guests"))
        guest_disk.setup(scope.executor)
    return PreparedSource(found, guest_disk)


def prepare_guest_source(
    scope: RunScope, stack: ExitStack, source: Source
) -> GuestSourceDisk | None:
    """Guests read the datasets from a disk image of their own; none if no guest runs."""
    if not any(p.guest for p in scope.plan.profiles()):
        return None
    disk = GuestSourceDisk(scope.workdir("guest-source.img"), source.mountpoint, source.size_bytes)
    stack.callback(_remove_disk, disk, scope.executor)
    return disk


def _remove_disk(disk: GuestSourceDisk, executor: Executor) -> None:
    with whole():  # never cut short by a stop signal: raised once the disk is gone
        disk.teardown(executor)
