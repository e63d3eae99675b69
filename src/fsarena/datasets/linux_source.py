"""The kernel source dataset: Debian's real linux-source tree, or a generated look-alike; tarballs.

Articles B and C timed real kernel trees (Linux 2.4.4 as a .tar; a compiled
2.6.29 tree as a .tar.bz2). fsarena uses the real Linux source from Debian's
`linux-source-*` package, fetched with `apt-get download` into fsarena's
cache at run time (Debian's apt is a registry fsarena may use), unpacked once,
and hashed into a manifest. Only regular files and directories are kept (the
tree's few symbolic links are left out, so every copy can be verified byte
for byte). A scale below 1 keeps an evenly spread subset of the files, so
the size histogram stays the real one.

Where the package cannot be had (no network, no apt, `origin = "generated"`
or FSARENA_KERNEL=generated, which CI uses), the dataset is a generated
text tree with the real tree's file count and size histogram
(KERNEL_LIKE, measured on linux-source-6.1: 78,579 files, 5,096 directories,
1.30 GB, median 3.9 kB, 43 % of the bytes in the 1.5 % of files above 100 kB).
The session records which one was used.

Tarballs (.tar, .tar.bz2) of a tree dataset are made on the source with
GNU tar in a deterministic form (sorted names, owner 0, mtime 0), so the same
tree gives the same archive; compressed ones are cached by the tree's digest.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from fsarena.datasets.manifest import FileEntry, Manifest, file_digest
from fsarena.datasets.realistic import TextTreeSpec
from fsarena.datasets.spec import DatasetSpec, Layout, NativeWriter, check_factor, require
from fsarena.errors import FsarenaError

ORIGINS = ("auto", "debian", "generated")
ENV_ORIGIN = "FSARENA_KERNEL"
_PACKAGE_RE = re.compile(r"^linux-source-(\d+(?:\.\d+)*)$")


@dataclass(frozen=True, kw_only=True)
class KernelSourceSpec(TextTreeSpec):
    """A Linux source tree: Debian's real one when it can be had, else generated alike.

    `fraction` (1 at scale 1) is the share of the real tree's files kept; the
    generated fallback scales its counts and bytes by the same factor.
    """

    kind: ClassVar[str] = "kernel_source"
    name: str = "kernel"
    origin: str = "auto"
    package: str = ""  # e.g. "linux-source-6.1"; empty: the newest apt knows
    fraction: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.origin in ORIGINS, f"origin must be one of {', '.join(ORIGINS)}")
        require(0 < self.fraction <= 1, f"fraction must be within (0, 1], got {self.fraction}")

    def scaled(self, factor: float) -> Self:
        return dataclasses.replace(
            super().scaled(factor), fraction=min(1.0, self.fraction * factor)
        )

    def generated(self) -> TextTreeSpec:
        """The generated look-alike with this spec's parameters."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(TextTreeSpec)}
        return TextTreeSpec(**fields)

    def description(self) -> str:
        return (
            f"Linux source ({self.origin}: Debian's {self.package or 'newest linux-source'} "
            f"package, {self.fraction:.0%} of its files, else generated alike): "
            + super().description()
        )


KERNEL_LIKE = KernelSourceSpec(
    files=78_579,
    directories=5_096,
    total_bytes_target=1_298_681_992,
    max_file_bytes=24_000_000,
    body_median_bytes=3_300,
    body_sigma=1.45,
    tail_fraction=0.013,
    tail_min_bytes=100_000,
    tail_alpha=1.22,
    max_depth=10,
    depth_mean=3.6,
    dir_weight_alpha=1.1,
    flavour="source",
    seed=2001,
)


@dataclass(frozen=True, kw_only=True)
class RealTreeSpec(DatasetSpec):
    """A subset (or all) of a real tree unpacked in the cache, with its manifest."""

    kind: ClassVar[str] = "real_tree"
    name: str
    label: str  # what it is, e.g. "linux-source-6.1 6.1.192-2"
    tree_root: str
    manifest_path: str
    tree_digest: str
    fraction: float = 1.0
    seed: int = 0

    def compressibility(self) -> str:
        return f"compressible: a real tree ({self.label}: the real Linux source is text)"

    def _full(self) -> Manifest:
        return Manifest.from_dict(json.loads(Path(self.manifest_path).read_text()))

    def _subset(self) -> tuple[FileEntry, ...]:
        files = self._full().files
        if self.fraction >= 1:
            return files
        # File i is kept when floor((i+1)·f) > floor(i·f): evenly spread, exactly ~f·n files.
        keep = [
            f for i, f in enumerate(files) if int((i + 1) * self.fraction) > int(i * self.fraction)
        ]
        return tuple(keep)

    @property
    def total_bytes(self) -> int:
        return sum(f.size_bytes for f in self._subset())

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return dataclasses.replace(self, fraction=min(1.0, self.fraction * factor))

    def plan(self) -> Layout:
        files = self._subset()
        dirs = {p for f in files for p in ancestors(f.path)}
        return Layout(tuple(sorted(dirs)), tuple((f.path, f.size_bytes) for f in files))

    def write_files(
        self, layout: Layout, root: Path, hashing: bool, native: NativeWriter | None = None
    ) -> list[str]:
        for directory in layout.directories:
            (root / directory).mkdir()
        for path, _ in layout.files:
            shutil.copyfile(f"{self.tree_root}/{path}", root / path)
        # The digests are the unpacked tree's, hashed once; copies are verified later.
        return [f.xxh128 for f in self._subset()] if hashing else []

    def description(self) -> str:
        return f"real tree {self.label}, {self.fraction:.1%} of its files (evenly spread)"


def ancestors(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


# --------------------------------------------------------------------------- fetching


def resolve(spec: KernelSourceSpec, cache_dir: Path) -> tuple[DatasetSpec, str]:
    """The spec to generate and a note saying which kernel tree it is (and why)."""
    origin = os.environ.get(ENV_ORIGIN, spec.origin)
    if origin not in ORIGINS:
        raise FsarenaError(f"{ENV_ORIGIN}={origin!r}: use one of {', '.join(ORIGINS)}")
    if origin == "generated":
        return spec.generated(), "generated source-like tree (real kernel not requested)"
    try:
        tree, label = fetch_debian(cache_dir / "kernel", spec.package)
    except FsarenaError as exc:
        if origin == "debian":
            raise
        return spec.generated(), f"generated source-like tree (real kernel unavailable: {exc})"
    manifest_path = tree.parent / f"{tree.name}.manifest.json"
    manifest = tree_manifest(tree, spec.name, manifest_path)
    real = RealTreeSpec(
        name=spec.name,
        label=label,
        tree_root=str(tree),
        manifest_path=str(manifest_path),
        tree_digest=manifest.digest(),
        fraction=spec.fraction,
    )
    return real, f"real Linux source: Debian package {label}, {spec.fraction:.1%} of its files"


def newest_package(apt_cache_output: str) -> str:
    """The linux-source-X.Y package with the highest X.Y in `apt-cache search` output."""
    found = []
    for line in apt_cache_output.splitlines():
        name = line.split(" - ", 1)[0].strip()
        if m := _PACKAGE_RE.match(name):
            found.append((tuple(int(x) for x in m.group(1).split(".")), name))
    if not found:
        raise FsarenaError("apt knows no linux-source package (run apt-get update)")
    return max(found)[1]


def fetch_debian(kernel_dir: Path, package: str) -> tuple[Path, str]:
    """The unpacked tree of a linux-source package (downloaded once), and its label."""
    for done in sorted(kernel_dir.glob("*/.complete")):
        label = done.read_text().strip()
        if not package or label.split()[0] == package:
            return done.parent, label
    if shutil.which("apt-get") is None:
        raise FsarenaError("apt-get not found")
    if not package:
        package = newest_package(_run(["apt-cache", "search", "--names-only", "^linux-source-"]))
    download = kernel_dir / "download"
    shutil.rmtree(download, ignore_errors=True)
    download.mkdir(parents=True)
    try:
        _run(["apt-get", "download", package], cwd=download)
        (deb,) = download.glob("*.deb")
        version = _run(["dpkg-deb", "-f", str(deb), "Version"]).strip()
        _run(
            [
                "sh",
                "-c",
                'dpkg-deb --fsys-tarfile "$1" | tar -x --wildcards "*.tar.xz"',
                "sh",
                str(deb),
            ],
            cwd=download,
        )
        (xz,) = download.glob("usr/src/*.tar.xz")
        unpack = kernel_dir / f".{package}.unpacking"
        shutil.rmtree(unpack, ignore_errors=True)
        unpack.mkdir()
        _run(["tar", "-xJf", str(xz), "-C", str(unpack)])
        (top,) = [p for p in unpack.iterdir() if p.is_dir()]
        final = kernel_dir / package
        shutil.rmtree(final, ignore_errors=True)
        top.rename(final)
        shutil.rmtree(unpack)
    finally:
        shutil.rmtree(download, ignore_errors=True)
    label = f"{package} {version}"
    (final / ".complete").write_text(label + "\n")
    return final, label


def _run(argv: list[str], cwd: Path | None = None) -> str:
    try:
        out = subprocess.run(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
        )
    except OSError as exc:
        raise FsarenaError(f"{argv[0]}: {exc}") from exc
    if out.returncode != 0:
        tail = (out.stderr or out.stdout).strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        raise FsarenaError(f"`{' '.join(argv[:3])}` failed: {tail[0]}")
    return out.stdout


def tree_manifest(root: Path, name: str, cache: Path) -> Manifest:
    """Manifest of the regular files and directories under root (symlinks left out), cached."""
    if cache.exists():
        try:
            return Manifest.from_dict(json.loads(cache.read_text()))
        except (ValueError, FsarenaError):
            pass  # damaged, or of an older manifest version: hash the tree again
    files: list[tuple[str, int]] = []
    dirs: list[str] = []
    for current, subdirs, names in os.walk(root):
        rel = os.path.relpath(current, root)
        prefix = "" if rel == "." else rel + "/"
        dirs += [prefix + d for d in subdirs if not os.path.islink(os.path.join(current, d))]
        for n in names:
            path = os.path.join(current, n)
            if n != ".complete" and os.path.isfile(path) and not os.path.islink(path):
                files.append((prefix + n, os.path.getsize(path)))
    files.sort()

    def digest(rel: str) -> str:
        with open(root / rel, "rb") as f:
            return file_digest(f)

    with ThreadPoolExecutor(2) as pool:
        sums = list(pool.map(digest, [p for p, _ in files]))
    entries = tuple(FileEntry(p, s, d) for (p, s), d in zip(files, sums, strict=True))
    manifest = Manifest(name, "real-tree", entries, tuple(sorted(dirs)))
    cache.write_text(json.dumps(manifest.to_dict(), sort_keys=True))
    return manifest


# --------------------------------------------------------------------------- tarballs

COMPRESSIONS = {"none": ("", 1.02), "gzip": (".gz", 0.35), "bzip2": (".bz2", 0.25)}
_TAR_FLAGS = {"none": (), "gzip": ("--gzip",), "bzip2": ("--bzip2",)}
# Deterministic archives: the same tree always gives the same bytes.
DETERMINISTIC_TAR = (
    "--sort=name",
    "--owner=0",
    "--group=0",
    "--numeric-owner",
    "--mtime=@0",
    "--format=gnu",
)


@dataclass(frozen=True, kw_only=True)
class TarballSpec(DatasetSpec):
    """A tar archive of another dataset (its root directory inside), made on the source.

    `source_bytes` is the archived tree's size, set by the plan; total_bytes
    is an estimate from it (exact sizes are known once the archive is made).
    """

    kind: ClassVar[str] = "tarball"
    name: str
    of: str
    compression: str = "none"
    source_bytes: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        require(
            self.compression in COMPRESSIONS,
            f"compression must be one of {', '.join(COMPRESSIONS)}",
        )

    def compressibility(self) -> str:
        if self.compression != "none":
            return f"incompressible: already compressed ({self.compression})"
        return f"as the tree it archives (dataset {self.of!r}), in one file"

    @property
    def filename(self) -> str:
        return f"{self.of}.tar{COMPRESSIONS[self.compression][0]}"

    @property
    def total_bytes(self) -> int:
        return int(self.source_bytes * COMPRESSIONS[self.compression][1]) + (1 << 20)

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return self  # follows the tree it archives, which the plan scales

    def plan(self) -> Layout:
        return Layout((), ())

    def description(self) -> str:
        return f"deterministic tar archive ({self.compression}) of dataset {self.of!r}"


def make_tarball(
    spec: TarballSpec, tree_parent: Path, tree: Manifest, dest: Path, cache_dir: Path
) -> Manifest:
    """Write dest/spec.name/spec.filename, archiving tree_parent/spec.of; compressed ones cached."""
    out_dir = dest / spec.name
    out_dir.mkdir(parents=True, exist_ok=False)
    target = out_dir / spec.filename
    key = hashlib.sha256(f"{tree.digest()} {spec.compression} 1".encode()).hexdigest()[:32]
    cached = cache_dir / "tarballs" / f"{key}{COMPRESSIONS[spec.compression][0]}"
    meta = cached.with_name(cached.name + ".json")
    if spec.compression != "none" and cached.exists() and meta.exists():
        shutil.copyfile(cached, target)
        info = json.loads(meta.read_text())
        return Manifest(
            spec.name,
            spec.spec_hash(),
            (FileEntry(spec.filename, info["size_bytes"], info["xxh128"]),),
            (),
        )
    argv = [
        "tar",
        *DETERMINISTIC_TAR,
        *_TAR_FLAGS[spec.compression],
        "-cf",
        str(target),
        "-C",
        str(tree_parent),
        spec.of,
    ]
    _run(argv)
    with open(target, "rb") as f:
        sha = file_digest(f)
    entry = FileEntry(spec.filename, target.stat().st_size, sha)
    if spec.compression != "none":
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(target, cached)
        meta.write_text(json.dumps({"size_bytes": entry.size_bytes, "xxh128": sha}))
    return Manifest(spec.name, spec.spec_hash(), (entry,), ())
