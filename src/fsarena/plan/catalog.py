"""The datasets tasks ask for by name, at the articles' sizes, and how a suite changes them.

Each entry is the dataset at scale 1, as the article used it (or, where the
article did not say, a documented choice). A task family that runs its own tool
(dbench, fio, ...) declares its parameters' default on its task class
(Task.parameters, beside the task): the catalog collects those defaults and their
kinds from the task registry instead of listing them. A suite's `[datasets.NAME]` table
overrides any parameter (sizes, counts, seed, distribution) or, with `kind`,
replaces the dataset by another kind; `--scale` then scales the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from fsarena.capture.dataset import TraceSpec
from fsarena.datasets.debs import DebsSpec
from fsarena.datasets.gitrepo import GitRepoSpec
from fsarena.datasets.linux_source import KERNEL_LIKE, KernelSourceSpec, TarballSpec
from fsarena.datasets.pglog import PgLogSpec
from fsarena.datasets.realistic import SizeSpec, SmallFilesSpec, TextTreeSpec
from fsarena.datasets.spec import ARTICLE_A_ISO, MIB, DatasetSpec, LargeFileSpec, WorkloadSpec
from fsarena.datasets.tree import ARTICLE_A_TREE, TreeSpec
from fsarena.datasets.userdir import DirectorySpec
from fsarena.errors import FsarenaError
from fsarena.tasks import TASKS

# Article D's Portage tree: 354 MiB apparent (667 MiB by du on 4 KiB blocks), many
# small ebuilds, Manifests and metadata.xml files in category/package[/files]
# directories. The file and directory counts (110,000 and 24,000) are fsarena's
# estimate of a 2008 Portage tree: the article published only the sizes.
# At scale 1: 110,000 files in 24,000 directories, median 1,790 bytes; files per size
# class <1k 32,254, 1k-4k 54,222, 4k-16k 21,216, 16k-64k 2,154, 64k-256k 140, 256k-1M
# 11, >=1M 3 (from the generator's layout; tests/unit/test_realistic.py checks it).
PORTAGE = TextTreeSpec(
    name="portage",
    files=110_000,
    directories=24_000,
    total_bytes_target=354 * MIB,
    max_file_bytes=2_000_000,
    body_median_bytes=1_500,
    body_sigma=1.0,
    tail_fraction=0.02,
    tail_min_bytes=8_000,
    tail_alpha=1.4,
    max_depth=3,
    depth_mean=2.2,
    dir_weight_alpha=1.5,
    flavour="portage",
    seed=2008,
)

# At scale 1: 60,000 files in 1,200 directories, median 1,768 bytes; <1k 19,841,
# 1k-4k 24,494, 4k-16k 11,969, 16k-64k 3,385, 64k-256k 271, 256k-1M 40.
SMALL_FILES = SmallFilesSpec(
    files=60_000,
    directories=1_200,
    total_bytes_target=300_000_000,
    max_file_bytes=1_000_000,
    body_median_bytes=2_000,
    body_sigma=1.2,
    tail_fraction=0.05,
    tail_min_bytes=16_000,
    tail_alpha=1.5,
    max_depth=3,
    depth_mean=2.0,
    # A 1 MiB pool (files are at most 1 MB): fsarena-mkfiles loads it in no time.
    pool_bytes=1 << 20,
    seed=2008,
)


def _declared() -> tuple[WorkloadSpec, ...]:
    """The task families' parameters (Task.parameters), once each, in the registry's order."""
    found: dict[str, WorkloadSpec] = {}
    for task in TASKS.values():
        spec = task.parameters
        if spec is None:
            continue
        if found.setdefault(spec.name, spec) != spec:
            raise AssertionError(f"two tasks declare different parameters named {spec.name!r}")
        if spec.name not in task.datasets:
            raise AssertionError(f"{task.name} declares parameters {spec.name!r} it does not use")
    return tuple(found.values())


WORKLOADS = _declared()
WORKLOAD_KINDS: tuple[type[DatasetSpec], ...] = tuple(type(spec) for spec in WORKLOADS)

DATASETS: dict[str, DatasetSpec] = {
    s.name: s
    for s in (
        ARTICLE_A_ISO,
        ARTICLE_A_TREE,
        SizeSpec(name="dd", size_bytes=256 * MIB),  # B: dd bs=1M count=256
        KERNEL_LIKE,
        TarballSpec(name="kernel_tar", of="kernel", compression="none"),
        TarballSpec(name="kernel_tbz", of="kernel", compression="bzip2"),
        SizeSpec(name="bonnie", size_bytes=2000 * MIB, min_bytes=16 * MIB),  # C: -s 2000
        LargeFileSpec(name="bigiso", size_bytes=2000 * MIB, filename="bigfile.iso", seed=2009),
        PORTAGE,
        SMALL_FILES,
        LargeFileSpec(name="film1", size_bytes=815 * MIB, filename="elephants-dream.avi", seed=1),
        LargeFileSpec(name="film2", size_bytes=692 * MIB, filename="big-buck-bunny.avi", seed=2),
        # Today's server workloads (issue 15): parameters only, declared on their tasks.
        *WORKLOADS,
        GitRepoSpec(name="gitrepo", of="kernel"),  # issue 16: the kernel tree with history
        # issue 17: the history the git-replay aging profile pulls, commit by commit
        GitRepoSpec(name="agingrepo", of="kernel", commits=300, history="shaped"),
        DebsSpec(name="debs"),  # issue 16: Debian packages for dpkg_unpack
    )
}

_KINDS: tuple[type[DatasetSpec], ...] = (
    LargeFileSpec,
    TreeSpec,
    TextTreeSpec,
    SmallFilesSpec,
    SizeSpec,
    KernelSourceSpec,
    TarballSpec,
    *WORKLOAD_KINDS,
    DirectorySpec,
    GitRepoSpec,
    DebsSpec,
    TraceSpec,
    PgLogSpec,
)
DATASET_KINDS: dict[str, type[DatasetSpec]] = {cls.kind: cls for cls in _KINDS}

# Datasets that have no default: what to write to give one.
WITHOUT_DEFAULT = {
    "trace": '[datasets.trace] kind = "trace"  path = "/path/to/x.fstrace.gz" (a trace '
    "`fsarena capture` wrote), or `fsarena run --replay TRACE`",
    "pglog": '[datasets.pglog] kind = "pglog"  log = "/path/to/statements.log"  base = '
    '"/path/to/base" (docs/replay.md, PostgreSQL), or `fsarena run --pg-replay LOG --pg-base DIR`',
}


def customized(name: str, overrides: Mapping[str, Any]) -> DatasetSpec:
    """The dataset `name` with a suite's overrides; FsarenaError naming the offending key."""
    where = f"datasets.{name}"
    base = DATASETS.get(name)
    kind = overrides.get("kind", base.kind if base else None)
    if kind is None and name in WITHOUT_DEFAULT:
        raise FsarenaError(f"{where}: this dataset has no default: give {WITHOUT_DEFAULT[name]}")
    if kind not in DATASET_KINDS:
        raise FsarenaError(f"{where}.kind: give one of {', '.join(DATASET_KINDS)} (got {kind!r})")
    cls = DATASET_KINDS[kind]
    allowed = {f.name: f for f in dataclasses.fields(cls) if f.init}
    values: dict[str, Any] = {}
    if base is not None and base.kind == kind:
        values = {n: getattr(base, n) for n in allowed}
    for key, value in overrides.items():
        if key == "kind":
            continue
        if key not in allowed or key == "name":
            known = ", ".join(sorted(set(allowed) - {"name"}))
            raise FsarenaError(f"{where}.{key}: unknown key (misspelled?); known: {known}")
        _check_type(f"{where}.{key}", value, values.get(key))
        values[key] = value
    values["name"] = name
    try:
        return cls(**values)
    except TypeError as exc:
        raise FsarenaError(f"{where}: {exc}") from None
    except FsarenaError as exc:
        raise FsarenaError(f"{where}: {exc}") from None


def _check_type(where: str, value: object, default: object) -> None:
    if default is None:
        return
    if isinstance(default, bool) or isinstance(value, bool):
        ok = type(value) is type(default)
    elif isinstance(default, float):
        ok = isinstance(value, int | float)
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise FsarenaError(f"{where}: expected {type(default).__name__}, got {value!r}")


def scaled_specs(
    names: list[str], overrides: Mapping[str, Mapping[str, Any]], scale: float
) -> dict[str, DatasetSpec]:
    """The named datasets with overrides, scaled; tarballs learn the size of what they archive."""
    specs = {n: customized(n, overrides.get(n, {})).scaled(scale) for n in sorted(names)}
    for name, spec in specs.items():
        if isinstance(spec, TarballSpec | GitRepoSpec):
            if spec.of not in specs:
                raise FsarenaError(
                    f"datasets.{name}: archives dataset {spec.of!r}, which no task uses"
                )
            specs[name] = dataclasses.replace(spec, source_bytes=specs[spec.of].total_bytes)
    return specs
