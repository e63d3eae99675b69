"""The view of real bundles: 23 sessions recorded on the development machine, a 24th held back.

tests/fixtures/recorded-bundles.tar.xz holds the bundles of real `fsarena run --fs
ext4,xfs,btrfs -n 3` sessions (docs/sharing.md, issue 39): 11 at scale 0.01 on loop
images on the virtio disk, 8 at scale 0.01 on a zram device (--device), 4 at scale
0.02 on loop images. One machine: they were shared by eight simulated users, each
with their own salt (XDG_CONFIG_HOME), so they stand for eight hosts, one of which
sent three sessions of a kind. The held-back bundle is a 12th loop session at 0.01,
shared by a ninth user. Its placement is checked against ratios computed here from
the bundles' raw runs, independently of share.view.
"""

from __future__ import annotations

import json
import math
import statistics
import tarfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from fsarena.share.bundle import read
from fsarena.share.view import MIN_HOSTS, Shared, View, build

ARCHIVE = Path(__file__).parent.parent / "fixtures" / "recorded-bundles.tar.xz"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("recorded")
    with tarfile.open(ARCHIVE) as archive:
        archive.extractall(top)  # our own fixture (Python 3.11.2 has no extraction filter)
    return top


@pytest.fixture(scope="module")
def view(recorded: Path) -> View:
    held_back = recorded / "held-back.bundle.json"
    return build([recorded / "bundles"], "ext4", Shared(str(held_back), read(held_back)))


def _context(body: dict[str, Any]) -> tuple[str, float]:
    return body["host"]["device"]["label"], body["session"]["scale"]


def test_twenty_three_sessions_from_eight_hosts_in_three_contexts(view: View) -> None:
    assert len(view.shared) == 23 and view.hosts == 8 and not view.left_out
    contexts = {_context(s.body) for s in view.shared}
    assert contexts == {
        ("loop image on virtual disk (virtio)", 0.01),
        ("zram (compressed RAM)", 0.01),
        ("loop image on virtual disk (virtio)", 0.02),
    }


def test_mismatched_keys_are_never_pooled(view: View) -> None:
    """Every key's ratios come from sessions of one context: the device class and the scale
    (its datasets) are in the key, so 26 keys per context, never a mixture."""
    by_session = {s.session: _context(s.body) for s in view.shared}
    counts: dict[tuple[str, float], int] = defaultdict(int)
    for group in view.groups:
        assert group.complete
        (context,) = {by_session[r.session] for r in group.ratios}
        counts[context] += 1
    assert set(counts.values()) == {26}  # 13 tasks x (xfs, btrfs) against ext4, per context


def test_percentiles_where_five_hosts_or_more_and_none_below(view: View) -> None:
    by_session = {s.session: _context(s.body) for s in view.shared}
    for group in view.groups:
        hosts = len(group.host_values())
        context = by_session[group.ratios[0].session]
        assert hosts == {0.01: 8 if "loop" in context[0] else 7, 0.02: 4}[context[1]]
        p = group.percentiles()
        if hosts >= MIN_HOSTS:
            assert set(p) == {25, 50, 75}  # 7 or 8 hosts: no 10th (under 10 hosts)
            values = sorted(group.host_values().values())
            low, high = values[0] * (1 - 1e-12), values[-1] * (1 + 1e-12)  # float rounding
            assert low <= p[25] <= p[50] <= p[75] <= high
        else:
            assert p == {}


def _value(run: dict[str, Any], metric: str) -> float | None:
    """A run's figure as fsarena reads it: a probed value, else the median of its timed
    executions (a sub-second task runs several), written here from the bundle's JSON alone."""
    if metric in run["values"]:
        return float(run["values"][metric])
    executions = [*run["repeats"], run["measurement"]]
    found = [m[metric] for m in executions if m and m.get(metric) is not None]
    return statistics.median(found) if found else None


def _ratios(body: dict[str, Any], task: str, fs: str) -> float:
    """fs/ext4 on the task's headline metric: the ratio of geometric means over the rounds."""
    info = body["tasks"][task]
    metric = (info["columns"] or ["wall_s" if info["timed"] else "capacity_pct"])[0]
    logs: dict[str, list[float]] = defaultdict(list)
    for run in body["runs"]:
        if run["task"] == task and run["status"] == "ok" and run["filesystem"] in (fs, "ext4"):
            value = _value(run, metric)
            if value is not None:
                logs[run["filesystem"]].append(math.log(value))
    return math.exp(statistics.fmean(logs[fs]) - statistics.fmean(logs["ext4"]))


def test_the_held_back_session_is_placed_where_its_ratios_fall(view: View, recorded: Path) -> None:
    mine = json.loads((recorded / "held-back.bundle.json").read_text())["bundle"]
    same = [s.body for s in view.shared if _context(s.body) == _context(mine)]
    assert len(view.placements) == 26 and all(p.rank_pct is not None for p in view.placements)
    for placed in view.placements:
        task, fs = placed.mine.task, placed.mine.filesystem
        ours = _ratios(mine, task, fs)
        assert placed.mine.value == pytest.approx(ours)
        hosts: dict[str, list[float]] = defaultdict(list)
        for body in same:
            hosts[body["host"]["id"]].append(math.log(_ratios(body, task, fs)))
        theirs = [math.exp(statistics.fmean(v)) for v in hosts.values()]
        assert sorted(placed.others.values()) == pytest.approx(sorted(theirs))
        below = sum(t < ours for t in theirs) + sum(t == ours for t in theirs) / 2
        assert placed.rank_pct == pytest.approx(100 * below / len(theirs)), (task, fs)
        assert placed.sessions == 11


def test_a_zram_session_is_not_placed_among_loop_images(recorded: Path) -> None:
    loops = sorted((recorded / "bundles").glob("*/loop-s*.bundle.json"))
    zram = recorded / "bundles" / "A" / "zram-s201.bundle.json"
    view = build(loops, "ext4", Shared(str(zram), read(zram)))
    assert view.placements and all(p.group is None for p in view.placements)
    assert all("device" in p.differs for p in view.placements)
