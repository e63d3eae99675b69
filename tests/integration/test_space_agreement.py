"""Space figures agree with df and du on real filesystems (ext4, xfs on loop devices).

- capacity_initial/residual: available bytes and device bytes against
  `df -B1` (Avail) and `blockdev --getsize64`;
- portage_space: df used (total - free) against `df -B1` (Used); du figures
  (fsarena runs du itself and parses it) against an independent sum over
  lstat: st_blocks x 512 for `du -B1`, st_size for `du --apparent-size`
  (hard links counted once, as du does).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsarena.host.executor import RealExecutor
from fsarena.tasks.portage import parse_du_total

MKFS = {"ext4": ("mkfs.ext4", "-F", "-q"), "xfs": ("mkfs.xfs", "-f", "-q")}


@pytest.fixture(params=sorted(MKFS))
def mounted(request: pytest.FixtureRequest, workdir: Path) -> Iterator[tuple[str, str]]:
    image, mnt = workdir / "fs.img", workdir / "mnt"
    mnt.mkdir()
    with open(image, "wb") as f:
        f.truncate(512 << 20)
    dev = subprocess.check_output(["losetup", "--find", "--show", str(image)], text=True).strip()
    try:
        subprocess.run([*MKFS[request.param], dev], check=True, capture_output=True)
        subprocess.run(["mount", dev, str(mnt)], check=True)
        tree = mnt / "tree"
        for d in range(20):
            (tree / f"d{d}").mkdir(parents=True)
            for i in range(50):
                (tree / f"d{d}" / f"f{i}").write_bytes(os.urandom(100 * i + 1))
        (tree / "sparse").open("wb").truncate(10 << 20)  # apparent size far above blocks
        os.link(tree / "d0" / "f49", tree / "hardlink")  # counted once by du
        subprocess.run(["sync", "-f", str(mnt)], check=True)
        yield str(mnt), dev
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)


def _df(mnt: str) -> dict[str, int]:
    out = subprocess.check_output(["df", "-B1", "--output=size,used,avail", mnt], text=True)
    size, used, avail = (int(x) for x in out.splitlines()[1].split())
    return {"size": size, "used": used, "avail": avail}


def test_available_and_used_bytes_agree_with_df(mounted: tuple[str, str]) -> None:
    mnt, dev = mounted
    space = RealExecutor().space(mnt)
    df = _df(mnt)
    assert space.total_bytes == df["size"]
    assert space.available_bytes == df["avail"]
    assert space.total_bytes - space.free_bytes == df["used"]  # portage_space's "df used"
    device = subprocess.check_output(["blockdev", "--getsize64", dev], text=True)
    assert RealExecutor().device_size(dev) == int(device)


def _lstat_sums(root: Path) -> tuple[int, int]:
    seen: set[tuple[int, int]] = set()
    blocks = apparent = 0
    for path in [root, *root.rglob("*")]:
        st = path.lstat()
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        blocks += st.st_blocks * 512
        apparent += st.st_size
    return blocks, apparent


def test_du_figures_agree_with_lstat(mounted: tuple[str, str]) -> None:
    mnt, _ = mounted
    ex = RealExecutor()
    where = f"{mnt}/tree"
    du = parse_du_total(ex.output(("du", "-s", "-B1", where)))
    apparent = parse_du_total(ex.output(("du", "-s", "-B1", "--apparent-size", where)))
    blocks, size = _lstat_sums(Path(where))
    assert du == blocks
    assert apparent == size
    assert apparent > du  # the sparse file: the two figures measure different things
