"""Realistic generated datasets: Impressions-style trees of text-like files, and sizes.

Article D copied a Portage tree and article B/C a kernel source tree: many
small text files, compressible, in deep directory trees. `TextTreeSpec`
generates such trees from a seed, following the generative models of
Impressions (Agrawal et al., FAST'09), with every parameter in the spec:

- Directories: each new directory picks its parent with probability
  proportional to (subdirectories of the parent + 2), Impressions' model of
  how trees grow; a parent already at max_depth hands the child to its own
  parent. This gives a few wide directories and many narrow ones.
- Files per directory and depth: each file draws the depth of its directory
  as 1 + Poisson(depth_mean - 1) (Impressions fits file depth with a
  Poisson; source trees keep almost no files at their root),
  then a directory at that depth with probability proportional to a
  Pareto(dir_weight_alpha) popularity drawn once per directory, so files per
  directory are heavy-tailed (many directories with few files, some with
  hundreds) as in real trees.
- Sizes: a log-normal body (median body_median_bytes, sigma body_sigma) and,
  for a tail_fraction of the files, a Pareto tail (from tail_min_bytes,
  shape tail_alpha): Impressions' hybrid model, whose tail holds a large
  share of the bytes (43 % of the Linux 6.1 tree's bytes are in its 1.5 % of
  files above 100 kB). Sizes are then clipped and rescaled to the exact
  total, as TreeSpec does.
- Content: text-like tokens (identifiers, keywords, punctuation, newlines and
  indentation) drawn with Zipf frequencies, so gzip and bzip2 compress it
  about as they compress source code (gzip -6: 4.3:1; Linux 6.1's
  drivers/net: 4.7:1, both measured), and compressing tasks mean something.
  A 16 MiB pool is drawn once; each file is the pool read cyclically from a
  seeded offset, written with one write per file (fast: no per-byte Python).

Every number comes from PCG64's raw output with IEEE-754 +, ×, ÷ and the
fixed-polynomial exp/ln below, so the same spec gives the same bytes anywhere.

`SmallFilesSpec` is the same model for article D's small-file generator,
whose files the native tool fsarena-mkfiles writes on the test filesystem
(`on_source` False). `SizeSpec` is only a size (dd's file, bonnie++'s file).
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Self

from fsarena.datasets import textwrite
from fsarena.datasets.distributions import normal_irwin_hall, pareto, poisson_cdf, text_pool
from fsarena.datasets.manifest import FileEntry, Manifest
from fsarena.datasets.numeric import fit_sizes, poly_exp, raw_words, uniforms
from fsarena.datasets.spec import (
    MIB,
    DatasetSpec,
    Layout,
    NativeWriter,
    check_factor,
    check_tree_counts,
    require,
    scaled_tree_counts,
)

if TYPE_CHECKING:
    from fsarena.datasets.numeric import IntArray, WordArray

POOL_BYTES = 16 * MIB
# Bump whenever a text tree's bytes or layout change for the same spec: it is part of
# spec_hash, so stale manifest caches are never trusted (GOLDEN_TEXT in the tests pins it).
TEXT_GENERATOR_VERSION = 2
_STREAM_DIRS, _STREAM_PLACE, STREAM_SIZES, _STREAM_POOL, _STREAM_OFFSETS = 11, 12, 13, 14, 15
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC

# File name extensions per flavour, in per mille (they influence neither size nor content).
FLAVOURS: dict[str, tuple[tuple[str, int], ...]] = {
    # Shares of linux-source-6.1's 78,579 files by extension (measured, per mille); "mk"
    # stands for the rest: Makefiles, Kconfigs and rarer extensions.
    "source": (
        ("c", 407),
        ("h", 298),
        ("rst", 41),
        ("yaml", 38),
        ("dts", 33),
        ("txt", 26),
        ("dtsi", 24),
        ("S", 17),
        ("sh", 10),
        ("json", 8),
        ("py", 2),
        ("mk", 96),
    ),
    # A Portage tree: ebuilds, Manifests, metadata.xml, ChangeLogs and patches (shares
    # estimated by fsarena: article D published only the tree's sizes).
    "portage": (
        ("ebuild", 430),
        ("xml", 130),
        ("manifest", 130),
        ("patch", 150),
        ("changelog", 90),
        ("conf", 40),
        ("eclass", 10),
        ("sh", 20),
    ),
    # Article D's generator of small files (its content and names were not published).
    "small": (("txt", 1000),),
}

# --------------------------------------------------------------------------- specs


# plan()'s layouts by spec hash: immutable tuples, shared safely.
_LAYOUTS: dict[str, Layout] = {}


@dataclass(frozen=True, kw_only=True)
class TextTreeSpec(DatasetSpec):
    """A tree of text-like files, Impressions-style (see the module docstring).

    Scaling multiplies files, directories and total_bytes_target (files >= 10,
    directories >= 2); max_file_bytes is lowered if the total needs it.
    """

    kind: ClassVar[str] = "text_tree"
    name: str = "text_tree"
    files: int
    directories: int
    total_bytes_target: int
    min_file_bytes: int = 0
    max_file_bytes: int
    body_median_bytes: float
    body_sigma: float
    tail_fraction: float
    tail_min_bytes: float
    tail_alpha: float
    max_depth: int
    depth_mean: float
    dir_weight_alpha: float = 1.2
    flavour: str = "source"
    pool_bytes: int = POOL_BYTES  # content pool; files are read from it cyclically
    seed: int = 2008

    def __post_init__(self) -> None:
        super().__post_init__()
        check_tree_counts(self)
        require(self.body_sigma > 0 and self.body_median_bytes > 0, "body must be positive")
        require(0 <= self.tail_fraction <= 1, "tail_fraction must be within 0..1")
        require(self.tail_alpha > 0 and self.tail_min_bytes > 0, "tail must be positive")
        require(self.depth_mean >= 0 and self.dir_weight_alpha > 0, "depth/dir weights > 0")
        require(self.flavour in FLAVOURS, f"flavour must be one of {', '.join(FLAVOURS)}")
        require(self.pool_bytes >= 4096, f"pool_bytes must be >= 4096, got {self.pool_bytes}")

    @property
    def total_bytes(self) -> int:
        return self.total_bytes_target

    def scaled(self, factor: float) -> Self:
        return dataclasses.replace(self, **scaled_tree_counts(self, factor))

    def compressibility(self) -> str:
        return "compressible: generated text-like files (source-code-like words)"

    def description(self) -> str:
        return (
            f"{self.files:,} text-like ({self.flavour}) files in {self.directories:,} "
            f"directories (Impressions model, depth <= {self.max_depth}, Poisson file depth "
            f"mean {self.depth_mean:g}), {self.total_bytes_target:,} bytes; sizes log-normal "
            f"(median {self.body_median_bytes:,.0f} B, sigma {self.body_sigma:g}) with a "
            f"Pareto tail ({self.tail_fraction:.1%} of files from {self.tail_min_bytes:,.0f} B, "
            f"alpha {self.tail_alpha:g}), clipped to {self.min_file_bytes:,}.."
            f"{self.max_file_bytes:,} B and rescaled to the exact total"
        )

    def extra_versions(self) -> dict[str, int]:
        return {"text_generator_version": TEXT_GENERATOR_VERSION}

    # ------------------------------------------------------------------ layout

    def plan(self) -> Layout:
        """The layout, computed once per process for each spec hash (equal hashes, equal
        layouts): 50 ms for a Portage tree, asked for by every generation and round."""
        key = self.spec_hash()
        layout = _LAYOUTS.get(key)
        if layout is None:
            layout = _LAYOUTS[key] = self._plan()
        return layout

    def _plan(self) -> Layout:
        dir_paths, dir_depths = self._directories()
        where = self._placement(dir_depths)
        containers = ["", *(p + "/" for p in dir_paths)]
        names = _extensions(self.flavour, raw_words(self._stream(_STREAM_PLACE), self.files))
        width = max(6, len(str(self.files - 1)))
        sizes = self.file_sizes()
        files = [
            (f"{containers[int(w)]}f{i:0{width}d}.{ext}", int(size))
            for i, (w, ext, size) in enumerate(zip(where, names, sizes, strict=True))
        ]
        return Layout(tuple(sorted(dir_paths)), tuple(sorted(files)))

    def _directories(self) -> tuple[list[str], list[int]]:
        words = raw_words(self._stream(_STREAM_DIRS), self.directories).tolist()
        width = max(4, len(str(self.directories - 1)))
        paths, depths, parents = [""], [0], [0]
        tickets = [0, 0]  # each directory holds (children + 2) tickets
        for i, word in enumerate(words, start=1):
            parent = tickets[word % len(tickets)]
            while depths[parent] >= self.max_depth:
                parent = parents[parent]
            name = f"d{i - 1:0{width}d}"
            paths.append(f"{paths[parent]}/{name}" if parent else name)
            depths.append(depths[parent] + 1)
            parents.append(parent)
            tickets.extend((parent, i, i))
        return paths[1:], depths

    def _placement(self, dir_depths: list[int]) -> IntArray:
        """Container index (0 = root) of every file: Poisson depth, Pareto popularity."""
        import numpy as np

        stream = self._stream(_STREAM_PLACE + 100)
        if len(dir_depths) == 1:
            return np.zeros(self.files, dtype=np.int64)
        depths = np.array(dir_depths)
        depths[0] = -1  # files sit in subdirectories, as in source trees
        popularity = pareto(uniforms(raw_words(stream, len(depths))), 1.0, self.dir_weight_alpha)
        cdf = poisson_cdf(max(self.depth_mean - 1.0, 0.0), int(depths.max()) - 1)
        wanted = 1 + np.searchsorted(cdf, uniforms(raw_words(stream, self.files)), side="right")
        present = sorted(set(dir_depths[1:]))
        # A depth with no directory falls back to the deepest present one above it.
        lookup = np.array(
            [max([d for d in present if d <= k], default=1) for k in range(len(cdf) + 2)]
        )
        chosen = lookup[np.minimum(wanted, len(lookup) - 1)]
        result = np.zeros(self.files, dtype=np.int64)
        picks = uniforms(raw_words(stream, self.files))
        for depth in present:
            members = np.flatnonzero(depths == depth)
            mine = np.flatnonzero(chosen == depth)
            cum = np.cumsum(popularity[members])
            idx = np.searchsorted(cum, picks[mine] * cum[-1], side="right")
            result[mine] = members[np.minimum(idx, len(members) - 1)]
        return result

    def file_sizes(self) -> IntArray:
        """Sizes of files 0..files-1: log-normal body, Pareto tail, fitted to the exact total."""
        import numpy as np

        stream = self._stream(STREAM_SIZES)
        z = normal_irwin_hall(stream, self.files)
        body = self.body_median_bytes * poly_exp(self.body_sigma * z)
        u_tail = uniforms(raw_words(stream, self.files))
        tail = pareto(uniforms(raw_words(stream, self.files)), self.tail_min_bytes, self.tail_alpha)
        weights = np.where(u_tail < self.tail_fraction, tail, body)
        weights = np.minimum(weights, float(self.max_file_bytes) * 4)  # keep the fit stable
        return fit_sizes(weights, self.min_file_bytes, self.max_file_bytes, self.total_bytes)

    # ------------------------------------------------------------------ content

    def pool(self) -> bytes:
        """The text pool (16 MiB by default) every file of this dataset is cut from."""
        return text_pool(self._stream(_STREAM_POOL), self.pool_bytes)

    def offsets(self, count: int) -> list[int]:
        """Pool offset of files 0..count-1 in layout (sorted path) order."""
        import numpy as np

        words = raw_words(self._stream(_STREAM_OFFSETS), count)
        result: list[int] = (words % np.uint64(self.pool_bytes)).tolist()
        return result

    def write_files(
        self, layout: Layout, root: Path, hashing: bool, native: NativeWriter | None = None
    ) -> list[str]:
        offsets = self.offsets(len(layout.files))
        if native is None:
            return textwrite.write_in_python(layout, root, self.pool(), offsets, hashing)
        pool = textwrite.pool_file(native, self.spec_hash(), self.pool_bytes, self.pool)
        return textwrite.write_natively(native, layout, root, pool, offsets, hashing)

    def expected_manifest(self) -> Manifest:
        """The manifest of the files, computed without writing them (for on-target generators)."""
        layout = self.plan()
        digests = textwrite.digests(layout, self.pool(), self.offsets(len(layout.files)))
        entries = [FileEntry(p, s, d) for (p, s), d in zip(layout.files, digests, strict=True)]
        return Manifest(self.name, self.spec_hash(), tuple(entries), layout.directories)


def _extensions(flavour: str, words: WordArray) -> list[str]:
    import numpy as np

    table = FLAVOURS[flavour]
    names = [ext for ext, _ in table]
    thresholds = np.cumsum([share for _, share in table])
    picks = np.searchsorted(thresholds, words % np.uint64(int(thresholds[-1])), side="right")
    return [names[int(i)] for i in picks]


@dataclass(frozen=True, kw_only=True)
class SmallFilesSpec(TextTreeSpec):
    """Article D's small files, made on the test filesystem by the native fsarena-mkfiles.

    The article did not publish its generator's parameters; fsarena's defaults
    are 60,000 files in 1,200 directories, 300 MB, median 2 kB: enough for the
    create/compress/decompress/move/delete timings to be dominated by
    per-file work, as the article's were.
    """

    kind: ClassVar[str] = "small_files"
    on_source: ClassVar[bool] = False
    name: str = "smallfiles"
    flavour: str = "small"

    def layout_text(self) -> str:
        """What fsarena-mkfiles reads: "d PATH" per directory, "f OFFSET SIZE PATH" per file."""
        layout = self.plan()
        lines = [f"d {d}" for d in layout.directories]
        offsets = self.offsets(len(layout.files))
        lines += [f"f {o} {s} {p}" for (p, s), o in zip(layout.files, offsets, strict=True)]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True, kw_only=True)
class SizeSpec(DatasetSpec):
    """Only a size: a file a task writes itself (dd from /dev/zero, bonnie++'s test file).

    Scaling multiplies the size, rounded to whole MiB and at least min_bytes.
    """

    kind: ClassVar[str] = "size"
    on_source: ClassVar[bool] = False
    name: str = "size"
    size_bytes: int
    min_bytes: int = MIB
    seed: int = 0

    def __post_init__(self) -> None:
        super().__post_init__()
        require(self.size_bytes >= MIB, f"size_bytes must be >= 1 MiB, got {self.size_bytes}")

    def compressibility(self) -> str:
        # A size only: the task writes the bytes (catalog: "dd" and "bonnie").
        if self.name == "dd":
            return "written by the task itself: dd's zeros (/dev/zero), the most compressible"
        return "written by the task itself (its own fill): not stated"

    @property
    def total_bytes(self) -> int:
        return self.size_bytes

    @property
    def size_mib(self) -> int:
        return self.size_bytes // MIB

    def scaled(self, factor: float) -> Self:
        check_factor(factor)
        size = max(self.min_bytes, round(self.size_bytes * factor / MIB) * MIB)
        return dataclasses.replace(self, size_bytes=size)

    def plan(self) -> Layout:
        return Layout((), ())

    def description(self) -> str:
        return f"a size only: {self.size_bytes:,} bytes ({self.size_bytes / MIB:,.0f} MiB)"


def histogram(sizes: list[int]) -> dict[str, int]:
    """Files per size class (powers of 4 from 1 kB), for documenting a tree's shape."""
    bounds = [0, 1024, 4096, 16384, 65536, 262144, 1048576, math.inf]
    labels = ["<1k", "1k-4k", "4k-16k", "16k-64k", "64k-256k", "256k-1M", ">=1M"]
    counts = dict.fromkeys(labels, 0)
    for s in sizes:
        for label, lo, hi in zip(labels, bounds, bounds[1:], strict=False):
            if lo <= s < hi:
                counts[label] += 1
                break
    return counts
