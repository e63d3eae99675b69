"""Realistic datasets: Impressions-style text trees, small files, sizes, kernel tree, tarballs."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fsarena.datasets import distributions, realistic
from fsarena.datasets import generate as generate_module
from fsarena.datasets.generate import generate
from fsarena.datasets.linux_source import (
    KERNEL_LIKE,
    RealTreeSpec,
    TarballSpec,
    make_tarball,
    tree_manifest,
)
from fsarena.datasets.manifest import Manifest
from fsarena.datasets.realistic import SizeSpec, TextTreeSpec, histogram
from fsarena.datasets.spec import MIB
from fsarena.datasets.verify import verify
from fsarena.errors import FsarenaError
from fsarena.measure.native import native_tool
from fsarena.plan.catalog import PORTAGE, SMALL_FILES

SMALL_TEXT = dataclasses.replace(PORTAGE, name="text", seed=5).scaled(0.002)

# SHA-256 over (path, size, SHA-256 of the bytes written) of SMALL_TEXT's files: the
# generator's bytes are pinned, whatever digest the manifests record.
GOLDEN_TEXT = "59f0bbf7c6d96cb80d09faf7974ea39ce29ec91f64cd26fd46daac2b95f06de6"


def _content_digest(manifest: Manifest, root: Path) -> str:
    files = [
        [f.path, f.size_bytes, hashlib.sha256((root / f.path).read_bytes()).hexdigest()]
        for f in manifest.files
    ]
    return hashlib.sha256(json.dumps(files).encode()).hexdigest()


def test_ln_and_pareto_are_accurate() -> None:
    x = np.array([1e-300, 1e-9, 0.5, 0.999999, 1.0, 3.0, 1e6, 1e300])
    assert np.allclose(distributions._ln(x), np.log(x), rtol=1e-14, atol=1e-14)
    u = np.linspace(0, 0.999, 1000)
    assert np.allclose(distributions.pareto(u, 10.0, 1.5), 10.0 * (1 - u) ** (-1 / 1.5), rtol=1e-12)


def test_poisson_cdf() -> None:
    cdf = distributions.poisson_cdf(2.5, 20)
    assert cdf[0] == pytest.approx(math.exp(-2.5))
    assert cdf[3] == pytest.approx(
        sum(math.exp(-2.5) * 2.5**k / math.factorial(k) for k in range(4))
    )
    assert cdf[-1] == 1.0


def test_text_tree_is_deterministic_and_exact(tmp_path: Path) -> None:
    a = generate(SMALL_TEXT, tmp_path / "a", tmp_path / "ca")
    b = generate(SMALL_TEXT, tmp_path / "b", tmp_path / "cb")
    assert a == b
    assert a.total_bytes == SMALL_TEXT.total_bytes
    assert verify(a, tmp_path / "a" / "text").ok
    # A second generation with the cached manifest writes the same bytes without hashing.
    c = generate(SMALL_TEXT, tmp_path / "c", tmp_path / "ca")
    assert c == a and verify(c, tmp_path / "c" / "text").ok


def test_native_text_tree_writer_makes_the_python_ones_files(tmp_path: Path) -> None:
    python = generate(SMALL_TEXT, tmp_path / "py", tmp_path / "c-py")
    mkfiles = native_tool("mkfiles")
    native = generate(SMALL_TEXT, tmp_path / "n", tmp_path / "c-n", mkfiles=mkfiles)
    assert native == python  # the same digests, computed from the pool in memory
    assert _content_digest(native, tmp_path / "n" / "text") == _content_digest(
        python, tmp_path / "py" / "text"
    )
    # The pool is kept beside the manifest; a cached run writes the same bytes from it.
    assert (tmp_path / "c-n" / f"{SMALL_TEXT.spec_hash()}.pool").stat().st_size > 0
    again = generate(SMALL_TEXT, tmp_path / "n2", tmp_path / "c-n", mkfiles=mkfiles)
    assert again == python
    for tree in ("n", "n2"):
        assert verify(python, tmp_path / tree / "text", tool=native_tool("verify")).ok
        assert verify(python, tmp_path / tree / "text").ok


def _writer(pid: str, mkfiles: str) -> bool:
    """Whether a child of ours is fsarena-mkfiles, at any stage it can be seen in.

    Just exec'd: its argv is the new one, its comm may still be ours (the kernel lets
    the parent go on at close-on-exec, before it renames comm). Exiting: comm kept, argv
    gone. Exited and not yet reaped: a zombie.
    """
    argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    stat = Path(f"/proc/{pid}/stat").read_text()
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    state = stat.rsplit(")", 1)[1].split()[0]
    return argv0 == mkfiles.encode() or comm == Path(mkfiles).name[:15] or state == "Z"


def test_the_cached_manifest_is_read_while_fsarena_mkfiles_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reading overlaps the writer's process; a stale cache is written again, hashed."""
    mkfiles = native_tool("mkfiles")
    fresh = generate(SMALL_TEXT, tmp_path / "a", tmp_path / "cache", mkfiles=mkfiles)
    seen: list[bool] = []
    real = generate_module._load_cached

    def load(*args: Any) -> Any:
        children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text()
        # The writer is our child, not yet waited for: running (its argv, not its comm,
        # which the kernel renames after letting the parent go on), or already done and
        # not reaped (a zombie: a small tree is written faster than Python gets here).
        seen.append(any(_writer(pid, mkfiles) for pid in children.split()))
        return real(*args)

    monkeypatch.setattr(generate_module, "_load_cached", load)
    assert generate(SMALL_TEXT, tmp_path / "b", tmp_path / "cache", mkfiles=mkfiles) == fresh
    assert seen == [True]  # once, while the writer ran
    cache_file = tmp_path / "cache" / f"{SMALL_TEXT.spec_hash()}.manifest.json"
    stored = json.loads(cache_file.read_text())
    stored["files"][0]["size_bytes"] += 1  # stale: written again, with hashing
    cache_file.write_text(json.dumps(stored))
    again = generate(SMALL_TEXT, tmp_path / "c", tmp_path / "cache", mkfiles=mkfiles)
    assert again == fresh and verify(again, tmp_path / "c" / "text").ok
    assert json.loads(cache_file.read_text())["files"][0]["size_bytes"] == fresh.files[0].size_bytes


def test_native_text_tree_writer_failure_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "text").mkdir()
    with pytest.raises(FsarenaError, match="cannot write the dataset"):
        generate(SMALL_TEXT, tmp_path, tmp_path / "cache", mkfiles="/bin/false")
    assert not (tmp_path / "text").exists() or not any((tmp_path / "text").iterdir())


def test_golden_text_tree(tmp_path: Path) -> None:
    manifest = generate(SMALL_TEXT, tmp_path, tmp_path / "cache")
    assert (realistic.TEXT_GENERATOR_VERSION, _content_digest(manifest, tmp_path / "text")) == (
        2,
        GOLDEN_TEXT,
    ), "text-tree bytes changed: bump realistic.TEXT_GENERATOR_VERSION and update both"


def test_text_is_compressible_like_source() -> None:
    pool = TextTreeSpec.pool(SMALL_TEXT)
    ratio = len(pool) / len(gzip.compress(pool[: 4 * MIB], 6)) * (4 * MIB / len(pool))
    assert 2.5 < ratio < 12, ratio
    assert pool.count(b"\n") > len(pool) / 200  # lines, like source code


def test_kernel_like_shape_matches_linux_6_1() -> None:
    """The generated fallback keeps the real tree's count, total and histogram shape."""
    layout = KERNEL_LIKE.generated().plan()
    sizes = sorted(s for _, s in layout.files)
    assert len(sizes) == 78_579 and sum(sizes) == 1_298_681_992
    median = sizes[len(sizes) // 2]
    assert 3_000 < median < 4_800  # real: 3,874
    big = sum(s for s in sizes if s > 100_000) / sum(sizes)
    assert 0.3 < big < 0.6  # real: 0.43
    hist = histogram(sizes)
    assert hist["1k-4k"] > hist["<1k"] and hist["4k-16k"] > hist["64k-256k"]
    depths = [p.count("/") for p, _ in layout.files]
    assert min(depths) >= 1 and 3 <= sorted(depths)[len(depths) // 2] <= 4


def test_files_per_directory_are_heavy_tailed() -> None:
    layout = PORTAGE.scaled(0.1).plan()
    per_dir: dict[str, int] = {}
    for path, _ in layout.files:
        d = path.rsplit("/", 1)[0]
        per_dir[d] = per_dir.get(d, 0) + 1
    counts = sorted(per_dir.values())
    assert counts[-1] > 8 * counts[len(counts) // 2]


def test_scaling_keeps_the_distribution() -> None:
    small = PORTAGE.scaled(0.01)
    assert small.files == 1_100 and small.total_bytes == round(354 * MIB * 0.01)
    assert SizeSpec(name="dd", size_bytes=256 * MIB).scaled(0.01).size_bytes == 3 * MIB
    assert SizeSpec(name="b", size_bytes=2000 * MIB, min_bytes=16 * MIB).scaled(1e-4).size_mib == 16


def test_native_generator_writes_the_expected_manifest(tmp_path: Path) -> None:
    spec = SMALL_FILES.scaled(0.005)
    (tmp_path / "layout").write_text(spec.layout_text())
    (tmp_path / "pool").write_bytes(spec.pool())
    tool = native_tool("mkfiles")
    subprocess.run([tool, tmp_path / "layout", tmp_path / "pool", tmp_path / "out"], check=True)
    result = verify(spec.expected_manifest(), tmp_path / "out")
    assert result.ok, result.problems
    assert result.files_checked == spec.files
    # An existing root is refused: creation is always of new files.
    again = subprocess.run([tool, tmp_path / "layout", tmp_path / "pool", tmp_path / "out"])
    assert again.returncode == 1


def test_real_tree_subset_and_tarballs(tmp_path: Path) -> None:
    src = tmp_path / "unpacked"
    generate(SMALL_TEXT, tmp_path, tmp_path / "cache")
    (tmp_path / "text").rename(src)
    (src / "link").symlink_to("nowhere")  # symbolic links are left out
    manifest = tree_manifest(src, "kernel", tmp_path / "full.json")
    assert "link" not in {f.path for f in manifest.files}
    real = RealTreeSpec(
        name="kernel",
        label="test",
        tree_root=str(src),
        manifest_path=str(tmp_path / "full.json"),
        tree_digest=manifest.digest(),
    ).scaled(0.5)
    kept = real.plan().files
    assert abs(len(kept) - len(manifest.files) / 2) <= 1
    subset = generate(real, tmp_path / "source", tmp_path / "cache")
    assert verify(subset, tmp_path / "source" / "kernel").ok
    tbz = TarballSpec(name="tbz", of="kernel", compression="bzip2")
    first = make_tarball(tbz, tmp_path / "source", subset, tmp_path / "t1", tmp_path / "cache")
    tar = TarballSpec(name="tar", of="kernel")
    plain = make_tarball(tar, tmp_path / "source", subset, tmp_path / "t2", tmp_path / "cache")
    # Deterministic: a second archive of the same tree is byte-identical (cached or not).
    again = make_tarball(tbz, tmp_path / "source", subset, tmp_path / "t3", tmp_path / "cache")
    assert first == again
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["tar", "-xf", tmp_path / "t2" / "tar" / "kernel.tar", "-C", out], check=True)
    assert verify(subset, out / "kernel").ok
    assert plain.files[0].size_bytes > first.files[0].size_bytes


def test_documented_histograms() -> None:
    """The size histograms stated in fsarena.plan.catalog's comments are the generators' own."""
    portage = histogram([s for _, s in PORTAGE.plan().files])
    assert portage == {"<1k": 32254, "1k-4k": 54222, "4k-16k": 21216, "16k-64k": 2154,
                       "64k-256k": 140, "256k-1M": 11, ">=1M": 3}  # fmt: skip
    small = histogram([s for _, s in SMALL_FILES.plan().files])
    assert small == {"<1k": 19841, "1k-4k": 24494, "4k-16k": 11969, "16k-64k": 3385,
                     "64k-256k": 271, "256k-1M": 40, ">=1M": 0}  # fmt: skip
