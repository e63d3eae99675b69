"""fsarena's figures agree with the tools a sysadmin checks them with, on real commands.

For each kind of command fsarena times (cp of a large file, cp -r of a tree,
tar x, find, rm -rf, mkfs), fsarena's measure_commands and GNU time
(`/usr/bin/time -f`) measure the same command in the same state, interleaved
(fsarena, time, fsarena, time, ...), and the medians must agree:

- wall, user, sys: within 5 %, or within ABS_TIME_S (one 10 ms scheduler tick
  plus GNU time's own rounding to 0.01 s) for short times;
- minor and major faults: within 5 %, or within FAULT_FLOOR faults (a tiny
  command's faults vary by a few dozen with the dynamic loader's and the page
  cache's state);
- max RSS: within 5 %, or within RSS_FLOOR_KIB (32 pages) for tiny commands.

Device bytes are checked against an independent reading of /proc/diskstats
around the same fsarena measurement, on a loop device with ext4 on it.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fsarena.measure import Command, Measurement, measure_commands
from tests.integration.conftest import leftovers

REPEATS = 3
REL = 0.05
ABS_TIME_S = 0.015
FAULT_FLOOR = 40
RSS_FLOOR_KIB = 128
BYTES_FLOOR = 1 << 20  # background writeback of the same device between two readings


@dataclass(frozen=True)
class Case:
    name: str
    argv: Callable[[Path], list[str]]
    reset: Callable[[Path], None]


def _sh(*argv: str) -> None:
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)


def _fresh_dir(path: Path) -> None:
    _sh("rm", "-rf", str(path))
    path.mkdir()


CASES = (
    Case("cp-large", lambda m: ["cp", str(m / "big"), str(m / "big.copy")], lambda m: None),
    Case(
        "cp-tree",
        lambda m: ["cp", "-r", str(m / "tree"), str(m / "copy")],
        lambda m: _sh("rm", "-rf", str(m / "copy")),
    ),
    Case(
        "tar-x",
        lambda m: ["tar", "-xf", str(m / "tree.tar"), "-C", str(m / "x")],
        lambda m: _fresh_dir(m / "x"),
    ),
    Case("find", lambda m: ["find", str(m / "tree"), "-name", "*7*"], lambda m: None),
    Case(
        "rm-rf",
        lambda m: ["rm", "-rf", str(m / "doomed")],
        lambda m: _sh("cp", "-r", str(m / "tree"), str(m / "doomed")),
    ),
    Case(
        "mkfs",
        lambda m: ["mkfs.ext4", "-F", "-q", str(m / "small.img")],
        lambda m: _sh("truncate", "-s", "64M", str(m / "small.img")),
    ),
)


def _make_tree(root: Path) -> None:
    for d in range(30):
        sub = root / f"d{d}"
        sub.mkdir(parents=True)
        for f in range(100):
            (sub / f"f{f}.c").write_bytes(os.urandom(4096))


@pytest.fixture(scope="module")
def mounted() -> Iterator[tuple[Path, str]]:
    """An ext4 filesystem on a real loop device, with a large file, a tree and its tarball."""
    base = Path("/var/tmp/fsarena-tests")
    base.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="peer-", dir=base))
    image, mnt = work / "fs.img", work / "mnt"
    mnt.mkdir()
    with open(image, "wb") as f:
        f.truncate(2 << 30)
    dev = subprocess.check_output(
        ["losetup", "--find", "--show", "--direct-io=on", str(image)], text=True
    ).strip()
    try:
        _sh("mkfs.ext4", "-F", "-q", dev)
        _sh("mount", dev, str(mnt))
        with open(mnt / "big", "wb") as f:
            for _ in range(256):
                f.write(os.urandom(1 << 20))
        _make_tree(mnt / "tree")
        _sh("tar", "-cf", str(mnt / "tree.tar"), "-C", str(mnt), "tree")
        _sh("sync")
        yield mnt, dev
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
        subprocess.run(["losetup", "-d", dev], check=False)
        left = leftovers(work)
        subprocess.run(["rm", "-rf", str(work)], check=False)
        assert not left, f"left behind: {left}"


def _gnu_time(argv: list[str]) -> dict[str, float]:
    with tempfile.NamedTemporaryFile("r") as out:
        fmt = "%e %U %S %R %F %M"
        subprocess.run(
            ["/usr/bin/time", "-f", fmt, "-o", out.name, *argv],
            check=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        fields = out.read().split()[-6:]
    names = ("wall_s", "user_s", "sys_s", "minor_faults", "major_faults", "max_rss_kib")
    return {n: float(v) for n, v in zip(names, fields, strict=True)}


def _fsarena(argv: list[str]) -> dict[str, float]:
    timed = measure_commands([Command(tuple(argv))], None, 300)
    m = timed.measurement
    assert m.exit_code == 0, timed.stderr
    names = ("wall_s", "user_s", "sys_s", "minor_faults", "major_faults", "max_rss_kib")
    return {n: float(getattr(m, n)) for n in names}


def _floor(name: str) -> float:
    if name.endswith("_s"):
        return ABS_TIME_S
    if name == "max_rss_kib":
        return RSS_FLOOR_KIB
    return FAULT_FLOOR


@pytest.mark.timeout(900)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fsarena_agrees_with_gnu_time(mounted: tuple[Path, str], case: Case) -> None:
    mnt, _ = mounted
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    for _ in range(REPEATS):  # interleaved: drift of the machine hits both alike
        for tool, out in ((_fsarena, ours), (_gnu_time, theirs)):
            case.reset(mnt)
            _sh("sync")
            out.append(tool(case.argv(mnt)))
    wrong = []
    for name in ours[0]:
        a = statistics.median(x[name] for x in ours)
        b = statistics.median(x[name] for x in theirs)
        if abs(a - b) > max(REL * b, _floor(name)):
            wrong.append(f"{name}: fsarena {a:g}, GNU time {b:g}")
    assert not wrong, f"{case.name}: " + "; ".join(wrong)


def _diskstats(dev: str) -> tuple[int, int]:
    """(read, written) bytes of a device from /proc/diskstats (sectors are 512 bytes)."""
    name = Path(dev).name
    for line in Path("/proc/diskstats").read_text().splitlines():
        f = line.split()
        if f[2] == name:
            return int(f[5]) * 512, int(f[9]) * 512
    raise AssertionError(f"{name} is not in /proc/diskstats")


@pytest.mark.parametrize("case", CASES[:3], ids=[c.name for c in CASES[:3]])
def test_device_bytes_agree_with_diskstats(mounted: tuple[Path, str], case: Case) -> None:
    mnt, dev = mounted
    case.reset(mnt)
    _sh("sync")
    Path("/proc/sys/vm/drop_caches").write_text("3\n")  # the reads reach the device
    r0, w0 = _diskstats(dev)
    sync = Command(("sync", "-f", str(mnt)))
    m: Measurement = measure_commands([Command(tuple(case.argv(mnt))), sync], dev, 300).measurement
    r1, w1 = _diskstats(dev)
    assert m.exit_code == 0
    assert m.device_write_bytes > 0  # every case writes, and sync -f sends it to the device
    for ours, theirs in ((m.device_read_bytes, r1 - r0), (m.device_write_bytes, w1 - w0)):
        assert abs(ours - theirs) <= max(REL * theirs, BYTES_FLOOR), (ours, theirs)
