"""The file-server tree of article A: a seeded random recursive tree of incompressible files."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Self

from fsarena.datasets.numeric import fit_sizes, poly_exp, raw_words, uniforms
from fsarena.datasets.spec import (
    DEFAULT_SEED,
    STREAM_LAYOUT,
    STREAM_SIZES,
    DatasetSpec,
    Layout,
    check_tree_counts,
    require,
    scaled_tree_counts,
)

if TYPE_CHECKING:
    from fsarena.datasets.numeric import IntArray, WordArray

# Extensions of a small business's file server with fixed shares (per mille).
# `find -name '*.pdf'` therefore matches about 15 % of the tree's files.
EXTENSION_PERMILLE: tuple[tuple[str, int], ...] = (
    ("pdf", 150),
    ("doc", 120),
    ("odt", 50),
    ("xls", 80),
    ("ods", 20),
    ("ppt", 40),
    ("jpg", 160),
    ("png", 60),
    ("mp3", 80),
    ("zip", 60),
    ("txt", 100),
    ("html", 40),
    ("csv", 40),
)


@dataclass(frozen=True, kw_only=True)
class TreeSpec(DatasetSpec):
    """A tree of incompressible files as on a small business's file server.

    Layout. `directories` directories named dNNN form a random recursive tree:
    directory i picks its parent uniformly among the root and the directories
    made before it whose depth is below max_depth. Such trees are deep and
    narrow with many leaves, like a file server's department/project/year
    folders. ARTICLE_A_TREE (900 directories, max_depth 6) has 12 top-level
    directories; 12/41/105/187/253/302 directories at depths 1 to 6; 60 % of
    the directories are leaves; the others hold 2.5 subdirectories on average
    (at most 12). Each file picks its directory uniformly among the root and
    all directories (8.3 files per directory on average; the root may hold
    files too). Files are named fNNNNNN.EXT, the extension drawn from
    EXTENSION_PERMILLE (15 % pdf, 16 % jpg, 12 % doc, ...; article A's tree
    has 1,116 *.pdf files); the extension influences neither size nor content.

    Sizes. Log-normal, size = exp(mu + sigma·z) with sigma = lognormal_sigma
    (1.3 for article A) and mu = ln(mean) − sigma²/2, so that the unclipped
    mean is mean = total_bytes_target / files (253,333 bytes for article A;
    median exp(mu) = 109 KB). z is the Irwin–Hall sum of 12 uniforms minus 6
    (mean 0, variance 1, CDF within 0.003 of the normal's, tails cut at ±6σ,
    far beyond the clipping). Sizes are clipped to [min_file_bytes,
    max_file_bytes], then all multiplied by one factor (a Newton step on the
    files not at a bound), re-clipped and rounded down, repeatedly until the
    total stops improving; the few bytes still missing or in excess go to
    the first files (by file number) that have room within the bounds, so
    the total equals total_bytes_target exactly. For article A, 3.3 % of the
    files sit at 10 KB and 9 at 5 MB; the median is 111 KB.

    Scaling multiplies files, directories and total_bytes_target (files >= 10,
    directories >= 2); the file size bounds stay, except that max_file_bytes
    is lowered if needed so the target stays achievable.
    """

    kind: ClassVar[str] = "tree"
    name: str = "tree"
    files: int
    directories: int
    total_bytes_target: int
    min_file_bytes: int
    max_file_bytes: int
    lognormal_sigma: float = 1.3
    max_depth: int = 6
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        super().__post_init__()
        check_tree_counts(self)
        require(self.lognormal_sigma > 0, "lognormal_sigma must be > 0")

    @property
    def total_bytes(self) -> int:
        return self.total_bytes_target

    def scaled(self, factor: float) -> Self:
        return dataclasses.replace(self, **scaled_tree_counts(self, factor))

    def plan(self) -> Layout:
        import numpy as np

        layout = raw_words(self._stream(STREAM_LAYOUT), self.directories + 2 * self.files)
        dir_paths = _tree_directories(layout[: self.directories], self.max_depth)
        containers = ["", *(p + "/" for p in dir_paths)]
        where = layout[self.directories : self.directories + self.files] % np.uint64(
            len(containers)
        )
        extensions = _extensions(layout[self.directories + self.files :])
        sizes = self.file_sizes()
        width = max(6, len(str(self.files - 1)))
        files = [
            (f"{containers[int(w)]}f{i:0{width}d}.{ext}", int(size))
            for i, (w, ext, size) in enumerate(zip(where, extensions, sizes, strict=True))
        ]
        return Layout(tuple(sorted(dir_paths)), tuple(sorted(files)))

    def file_sizes(self) -> IntArray:
        """Sizes of files 0..files-1 (see the class docstring); they sum to total_bytes_target."""
        import numpy as np

        raw = raw_words(self._stream(STREAM_SIZES), 12 * self.files).reshape(12, self.files)
        z = uniforms(raw[0])
        for row in raw[1:]:
            z += uniforms(row)  # one add per row: a fixed, platform-independent order
        z -= 6.0
        sigma = self.lognormal_sigma
        mean = self.total_bytes_target / self.files
        weights = poly_exp(sigma * z) * (mean * float(poly_exp(np.array([-sigma * sigma / 2]))[0]))
        return fit_sizes(weights, self.min_file_bytes, self.max_file_bytes, self.total_bytes)

    def compressibility(self) -> str:
        return "incompressible: generated random bytes"

    def description(self) -> str:
        pdf = dict(EXTENSION_PERMILLE)["pdf"] / 10
        return (
            f"{self.files:,} incompressible files in {self.directories:,} directories "
            f"(random recursive tree, depth <= {self.max_depth}), {self.total_bytes_target:,} "
            f"bytes in total; sizes log-normal (sigma {self.lognormal_sigma}, mean "
            f"{self.total_bytes_target / self.files:,.0f} bytes) clipped to "
            f"{self.min_file_bytes:,}..{self.max_file_bytes:,} bytes and rescaled to the exact "
            f"total; file-server extensions ({pdf:g} % .pdf)"
        )


def _tree_directories(words: WordArray, max_depth: int) -> list[str]:
    """Paths of a random recursive tree; see TreeSpec. Parents always precede children."""
    width = max(3, len(str(len(words) - 1)))
    paths = [""]  # index 0 is the root
    depths = [0]
    eligible = [0]  # containers that may still receive a subdirectory
    for i, word in enumerate(words.tolist()):
        parent = eligible[word % len(eligible)]
        name = f"d{i:0{width}d}"
        paths.append(f"{paths[parent]}/{name}" if parent else name)
        depths.append(depths[parent] + 1)
        if depths[-1] < max_depth:
            eligible.append(i + 1)
    return paths[1:]


def _extensions(words: WordArray) -> list[str]:
    import numpy as np

    names = [ext for ext, _ in EXTENSION_PERMILLE]
    thresholds = np.cumsum([share for _, share in EXTENSION_PERMILLE])
    picks = np.searchsorted(thresholds, words % np.uint64(1000), side="right")
    return [names[int(i)] for i in picks]


ARTICLE_A_TREE = TreeSpec(
    files=7_500,
    directories=900,
    total_bytes_target=1_900_000_000,
    min_file_bytes=10_000,
    max_file_bytes=5_000_000,
)
