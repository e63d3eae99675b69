"""The packages dataset: real Debian .debs fetched once with `apt-get download`, or look-alikes.

A realistic mix for dpkg_unpack: documentation and data packages of many
small files (man pages, iso-codes, Python and Perl modules) beside a few
large libraries (LLVM, ICU, SciPy). They are fetched once into the
dataset cache with `apt-get download` (Debian's apt is the one registry
fsarena fetches from, as for the kernel source) and only packages whose
control archive has no `preinst` are kept, so an unpack into a root on the
test filesystem runs no maintainer script (dpkg runs postinst only when
configuring, which the task never does). A scale below 1 keeps an evenly
spread share of the packages (at least two).

Where apt cannot fetch them (no network, `origin = "generated"` or
FSARENA_DEBS=generated, as CI runs), look-alike packages are built with
the real `dpkg-deb --build` from seeded text files of a similar size mix;
the session's origin says which were used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Self

from fsarena.datasets.linux_source import ORIGINS, RealTreeSpec, tree_manifest
from fsarena.datasets.spec import DatasetSpec, Layout, check_factor, require
from fsarena.errors import FsarenaError

ENV_ORIGIN = "FSARENA_DEBS"
PACKAGES = (
    "fonts-dejavu-core", "fonts-liberation2", "gcc-12", "git-man", "iso-codes",
    "libglib2.0-data", "libgtk-3-common", "libicu72", "libllvm15", "libperl5.36",
    "libpython3.11-stdlib", "libjs-sphinxdoc", "locales", "manpages", "manpages-dev",
    "perl-modules-5.36", "python3-babel", "python3-matplotlib", "python3-numpy",
    "python3-pygments", "python3-scipy",
)  # fmt: skip
# Measured on the Debian 12 packages above: 21 packages, 112 MB of .debs.
LOOKALIKE_PACKAGES = 21
LOOKALIKE_FILES = 180  # per package, median; sizes log-normal around 3 kB


@dataclass(frozen=True, kw_only=True)
class DebsSpec(DatasetSpec):
    """Debian packages to unpack (see the module docstring); `fraction` of them kept."""

    kind: ClassVar[str] = "debs"
    proportional: ClassVar[bool] = False  # a handful of real packages, never fewer
    name: str = "debs"
    packages: tuple[str, ...] = PACKAGES
    origin: str = "auto"
    fraction: float = 1.0
    seed: int = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.origin in ORIGINS, f"origin must be one of {', '.join(ORIGINS)}")
        require(0 < self.fraction <= 1, f"fraction must be within (0, 1], got {self.fraction}")
        require(len(self.packages) >= 2, "give at least two packages")

    @property
    def total_bytes(self) -> int:
        # Room on the test filesystem, for the image size: both variants' roots. Measured:
        # the 112 MB of .debs above unpack to about 500 MB each; one package can be 120 MB.
        share = len(self.packages) / len(PACKAGES) * self.fraction
        return max(300_000_000, int(2 * 500e6 * share))

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        return dataclasses.replace(self, fraction=min(1.0, self.fraction * factor))

    def plan(self) -> Layout:
        return Layout((), ())

    def description(self) -> str:
        return f"{self.fraction:.0%} of {len(self.packages)} Debian packages without preinst"


def resolve(spec: DebsSpec, cache_dir: Path) -> tuple[DatasetSpec, str]:
    """The .deb files as a real tree in the cache, and a note saying which packages they are."""
    origin = os.environ.get(ENV_ORIGIN, spec.origin)
    if origin not in ORIGINS:
        raise FsarenaError(f"{ENV_ORIGIN}={origin!r}: use one of {', '.join(ORIGINS)}")
    note = ""
    folder: Path | None = None
    if origin != "generated":
        try:
            folder, note = _fetched(spec, cache_dir / "debs"), "Debian packages"
        except FsarenaError as exc:
            if origin == "debian":
                raise
            note = f"generated look-alike packages (Debian's unavailable: {exc})"
    if folder is None:
        folder = _generated(spec, cache_dir / "debs")
        note = note or "generated look-alike packages (real packages not requested)"
    manifest_path = folder.parent / f"{folder.name}.manifest.json"
    manifest = tree_manifest(folder, spec.name, manifest_path)
    keep = max(2 / len(manifest.files), spec.fraction)
    real = RealTreeSpec(
        name=spec.name,
        label=note,
        tree_root=str(folder),
        manifest_path=str(manifest_path),
        tree_digest=manifest.digest(),
        fraction=min(1.0, keep),
    )
    count = len(real.plan().files)
    return real, f"{note}: {count} of {len(manifest.files)} .debs without preinst"


def _fetched(spec: DebsSpec, root: Path) -> Path:
    key = hashlib.sha256(" ".join(sorted(spec.packages)).encode()).hexdigest()[:16]
    folder = root / f"debian-{key}"
    if (folder / ".complete").exists():
        return folder
    if shutil.which("apt-get") is None:
        raise FsarenaError("apt-get not found")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    _run(["apt-get", "download", *spec.packages], folder)
    for deb in folder.glob("*.deb"):
        members = _run(["sh", "-c", 'dpkg-deb --ctrl-tarfile "$1" | tar -t', "sh", str(deb)])
        if "preinst" in members:
            deb.unlink()  # a preinst would have to run before the unpack: left out
    (folder / ".complete").write_text("apt-get download\n")
    return folder


def _generated(spec: DebsSpec, root: Path) -> Path:
    folder = root / f"generated-{spec.seed}"
    if (folder / ".complete").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(spec.seed)
    build = root / ".building"
    for i in range(LOOKALIKE_PACKAGES):
        shutil.rmtree(build, ignore_errors=True)
        _lookalike_tree(build, f"fsarena-lookalike-{i:02}", rng)
        _run(["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(build), str(folder)])
    shutil.rmtree(build, ignore_errors=True)
    (folder / ".complete").write_text("generated\n")
    return folder


def _lookalike_tree(build: Path, name: str, rng: random.Random) -> None:
    """A package tree: control, md5sums, and seeded text files under usr/share/NAME."""
    sums = []
    files = max(5, int(rng.lognormvariate(0, 1) * LOOKALIKE_FILES))
    for j in range(files):
        rel = f"usr/share/{name}/d{j % 12:02}/f{j:04}.txt"
        line = hashlib.sha256(f"{name}/{j}".encode()).hexdigest().encode() + b"\n"
        size = min(2_000_000, int(rng.lognormvariate(8, 1.4)))
        data = (line * (size // len(line) + 1))[:size]
        (build / rel).parent.mkdir(parents=True, exist_ok=True)
        (build / rel).write_bytes(data)
        sums.append(f"{hashlib.md5(data).hexdigest()}  {rel}\n")
    (build / "DEBIAN").mkdir()
    (build / "DEBIAN" / "md5sums").write_text("".join(sums))
    (build / "DEBIAN" / "control").write_text(
        f"Package: {name}\nVersion: 1.0\nArchitecture: all\n"
        "Maintainer: fsarena <fsarena@localhost>\n"
        "Description: generated look-alike package for fsarena's dpkg_unpack\n"
    )


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
