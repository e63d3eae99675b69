"""Datasets make themselves: a planned dataset resolved (the real tree fetched), then made.

What the host's executor did for the runner before (the seam had a method for
each step), here beside the kinds it dispatches on: resolving a spec to the one
to make (Debian's kernel source or packages, the user's directory, fetched or
read into the cache), then writing it under the source's directory, a tarball
or a git repository from a tree made before it. The run asks through its
DatasetMaker (fsarena.run.scope), which tests fake as they fake the executor.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from fsarena.datasets import debs, linux_source, userdir
from fsarena.datasets.generate import generate
from fsarena.datasets.gitrepo import GitRepoSpec, make_repo
from fsarena.datasets.manifest import Manifest
from fsarena.datasets.spec import DatasetSpec
from fsarena.errors import FsarenaError
from fsarena.measure.native import find_native_tool


class Made(Protocol):
    """A dataset already made on the source: the directory holding it, and its manifest."""

    @property
    def root(self) -> str: ...

    @property
    def manifest(self) -> Manifest: ...


def resolve(spec: DatasetSpec, cache_dir: Path) -> tuple[DatasetSpec, str]:
    """The spec to make (e.g. the real kernel tree, fetched) and where it comes from."""
    if isinstance(spec, debs.DebsSpec):
        return debs.resolve(spec, cache_dir)
    if isinstance(spec, linux_source.KernelSourceSpec):
        return linux_source.resolve(spec, cache_dir)
    if isinstance(spec, userdir.DirectorySpec):
        return userdir.resolve_directory(spec, cache_dir)
    return spec, "generated"


def materialize(
    spec: DatasetSpec, dest: Path, cache_dir: Path, made: Mapping[str, Made]
) -> Manifest:
    """Write the dataset under dest/spec.name and return its manifest; one the task makes
    itself (not on the source), only what it will have made.

    A tarball archives, and a git repository commits, the tree dataset `spec.of`, which
    must be in `made` (made before it on the same source). Manifests, tarballs and
    repositories are cached in cache_dir.
    """
    if isinstance(spec, linux_source.TarballSpec):
        return linux_source.make_tarball(spec, dest, made[spec.of].manifest, dest, cache_dir)
    if isinstance(spec, GitRepoSpec):
        tree = made[spec.of]
        return make_repo(spec, Path(tree.root), tree.manifest, dest, cache_dir)
    if not spec.on_source:
        return spec.expected_manifest()
    try:
        return generate(spec, dest, cache_dir, find_native_tool("mkfiles"))
    except OSError as exc:
        raise FsarenaError(
            f"cannot write dataset {spec.name} into {dest}: {exc.strerror}; "
            "free space there, use --source image, or a smaller --scale"
        ) from exc
