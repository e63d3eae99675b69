"""Articles B, C, D and the quick suite on ext4 and xfs, at a tiny scale, as root.

The kernel tree is the generated look-alike (FSARENA_KERNEL=generated): CI
never downloads. test_real_kernel_if_cached runs the real Debian tree when a
previous run left it in the cache named by FSARENA_KERNEL_CACHE (opt-in).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fsarena.report import build
from fsarena.session.file import load
from fsarena.tasks import TASKS
from tests.integration.conftest import REPO, leftovers, measured

SCALE = "0.005"


def _run(work: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str, int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fsarena", "run", *args, "--workdir", str(work / "w"),
         "--results-dir", str(work / "results"), "--output", str(work / "session.json")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "FSARENA_KERNEL": "generated", **(env or {})},
    )  # fmt: skip
    out, err = proc.communicate(timeout=600)
    return proc.returncode, out, err, proc.pid


@pytest.mark.parametrize("suite", ["article-b-2001", "article-c-2009", "article-d-2008", "quick"])
def test_suite_completes_with_every_task_verified(suite: str, workdir: Path) -> None:
    fs = "ext4,xfs"
    code, out, err, pid = _run(workdir, "--suite", suite, "--fs", fs, "--scale", SCALE, "-n", "1")
    assert code == 0, err[-3000:]
    session = load(workdir / "session.json")
    assert session.status == "complete"
    tables = {t.task: t for t in build(session).tables}
    assert set(tables) == set(session.plan.tasks), "every task of the suite has a table"
    for run in session.runs:
        assert measured(run), (run.filesystem, run.task, run.error)
        assert all(c.ok for c in run.checks), (run.task, run.checks)
        if TASKS[run.task].timed and TASKS[run.task].kind != "lifecycle":
            assert run.checks, f"{run.task} verified nothing"
    for task in session.plan.tasks:
        assert task in out, f"{task} missing from the printed tables"
    assert "dataset kernel: generated" in out or "kernel" not in session.datasets
    assert not leftovers(workdir)
    assert not list(Path("/sys/fs/cgroup").glob(f"*/fsarena-{pid}-*")), "cgroup left behind"


def test_bonnie_and_article_figures_in_the_c_report(workdir: Path) -> None:
    code, out, err, _ = _run(workdir, "--suite", "article-c-2009", "--fs", "ext4,xfs,btrfs",
                             "--scale", "0.01", "-n", "1")  # fmt: skip
    assert code == 0, err[-3000:]
    session = load(workdir / "session.json")
    bonnie = [r for r in session.runs if r.task == "bonnie"]
    for run in bonnie:
        assert run.measurement is not None
        extra = run.measurement.extra
        assert extra["bonnie_size_mib"] == 2 * extra["bonnie_ram_mib"]
        # Half the file, at least 32 MiB; then the file fits in it, and the run says so.
        limit = max(extra["bonnie_ram_mib"], 32) * (1 << 20)
        assert extra["cgroup_memory_limit_bytes"] == limit
        assert extra["fits_page_cache"] == float(extra["bonnie_size_mib"] * (1 << 20) <= limit)
    assert any(w.code == "fits_page_cache" and "bonnie" in w.message for w in session.warnings)
    flat = " ".join(out.split())  # the report wraps to the terminal's width
    assert "AGAINST THE ARTICLES" in out and "theory_vs_practice" not in out
    # The theory-vs-practice row needs bonnie++'s block write figure, which bonnie++
    # withholds ("+++++") when its test is too short to time: no figure, no row.
    timed = any(r.value("bonnie_seq_write_mb_s") is not None for r in bonnie)
    assert ("bonnie - bigiso: bonnie++ block write − ISO copy, MB/s" in flat) == timed
    assert "kernel_bz2_extract: throughput MB/s" in flat


def test_real_kernel_if_cached(workdir: Path) -> None:
    cache = os.environ.get("FSARENA_KERNEL_CACHE")
    if not cache or not list(Path(cache).glob("kernel/*/.complete")):
        pytest.skip("opt-in: set FSARENA_KERNEL_CACHE to a workdir cache holding the real kernel")
    (workdir / "w").mkdir()
    (workdir / "w" / "cache").symlink_to(cache)
    code, out, err, _ = _run(workdir, "--suite", "article-b-2001", "--fs", "ext4", "--scale",
                             "0.01", "-n", "1", env={"FSARENA_KERNEL": "debian"})  # fmt: skip
    assert code == 0, err[-3000:]
    assert "dataset kernel: real Linux source: Debian package linux-source-" in out
