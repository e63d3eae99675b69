"""The view merged from bundles: ratios pooled by key only, hosts weighed once, few hosts shown
as such, and a session of yours placed where it falls.

Bundles are made from a recorded session (tests/fixtures/session-v4.json) whose
tree_copy_in times are set so that each host's xfs/ext4 ratio is known, under other
machine ids (other hosts) and start times (other sessions). The figures below are
worked out by hand from those ratios. The view of real sessions recorded on this
machine is in docs/sharing.md (its screenshots) and tests/integration/test_share_real.py.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.session.file import Session
from fsarena.share.bundle import make
from fsarena.share.document import sentence
from fsarena.share.render import render
from fsarena.share.view import MIN_HOSTS, Group, Shared, View, build

FIXTURES = Path(__file__).parent.parent / "fixtures"
KEY = bytes(range(32))
TASK = "tree_copy_in"


def session(host: int, ratio: float, n: int = 0, **profile: Any) -> Session:
    """The recorded session as if host `host` measured xfs at `ratio` times ext4 on TASK
    (its n-th session); profile: xfs's profile changed (another key)."""
    raw: dict[str, Any] = json.loads((FIXTURES / "session-v4.json").read_text())
    raw["host"]["machine_id"] = f"{host:032x}"
    raw["created_at"] = f"2026-11-{n + 1:02d}T00:00:00+00:00"
    raw["profiles_as_run"]["xfs"].update(profile)
    for run in raw["runs"]:
        if run["measurement"]:  # each session its own runs (a session shared twice has one)
            run["measurement"]["minor_faults"] = host * 1000 + n
        if run["task"] == TASK and run["filesystem"] in ("ext4", "xfs"):
            run["measurement"]["wall_s"] = ratio if run["filesystem"] == "xfs" else 1.0
    return Session.model_validate(raw)


def write(directory: Path, sessions: list[Session]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for s in sessions:
        path = directory / f"{s.host.machine_id[-4:]}-{s.created_at[:10]}.bundle.json"
        path.write_text(make(s, KEY))
        paths.append(path)
    return paths


def group(view: View, task: str = TASK, fs: str = "xfs") -> list[Group]:
    return [g for g in view.groups if (g.task, g.filesystem) == (task, fs)]


HOSTS = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def test_hosts_count_once_and_percentiles_come_from_hosts(tmp_path: Path) -> None:
    sessions = [session(i + 1, r) for i, r in enumerate(HOSTS)]
    # host 1 sends two more sessions: its value is the geometric mean of its three
    sessions += [session(1, 0.5, n=1), session(1, 2.0, n=2)]
    write(tmp_path, sessions)
    (g,) = group(build([tmp_path], "ext4"))
    values = g.host_values()
    assert len(values) == 6 and g.sessions() == 8
    expected = sorted([0.6, 0.7, 0.8, 0.9, 1.0, (0.5 * 0.5 * 2.0) ** (1 / 3)])
    assert sorted(values.values()) == pytest.approx(expected)
    p = g.percentiles()
    assert math.isclose(p[50], (expected[2] + expected[3]) / 2)
    assert math.isclose(p[25], expected[1] + 0.25 * (expected[2] - expected[1]))
    assert set(p) == {25, 50, 75}  # 6 hosts: no 10th or 5th (none beyond them)


def test_fewer_than_five_hosts_are_shown_as_such(tmp_path: Path) -> None:
    write(tmp_path, [session(i + 1, r) for i, r in enumerate(HOSTS[: MIN_HOSTS - 1])])
    view = build([tmp_path], "ext4")
    (g,) = group(view)
    assert g.percentiles() == {}
    assert "| tree_copy_in · xfs | time | 4 (4) | 0.5×, 0.6×, 0.7×, 0.8× |" in (
        render(view, "markdown")
    )
    assert "4 hosts: too few" in render(view, "text")


def test_mismatched_keys_are_never_pooled(tmp_path: Path) -> None:
    write(tmp_path, [session(i + 1, r) for i, r in enumerate(HOSTS)])
    write(tmp_path, [session(i + 11, 0.1, mount_options=["noatime"]) for i in range(6)])
    groups = group(build([tmp_path], "ext4"))
    assert len(groups) == 2
    assert sorted(len(g.host_values()) for g in groups) == [6, 6]
    for g in groups:  # each holds one kind: never a mix
        assert len({round(v, 6) for v in g.host_values().values()}) in (1, 6)


def _mine(s: Session) -> Shared:
    from fsarena.share.bundle import build as bundle

    return Shared("yours.json", bundle(s, KEY))


def test_a_held_back_session_is_placed_among_the_other_hosts(tmp_path: Path) -> None:
    write(tmp_path, [session(i + 1, r) for i, r in enumerate(HOSTS)])
    write(tmp_path, [session(1, 0.5, n=1)])  # a second session of host 1
    view = build([tmp_path], "ext4", _mine(session(99, 0.75)))
    (placed,) = [p for p in view.placements if (p.mine.task, p.mine.filesystem) == (TASK, "xfs")]
    assert placed.rank_pct == 50.0  # 0.5, 0.6, 0.7 of the 6 other hosts are below 0.75
    assert len(placed.others) == 6 and placed.sessions == 7
    said = (
        "your xfs/ext4 time ratio on tree_copy_in (0.75×) is at the 50th percentile of 7 "
        "sessions from 6 other hosts with the same key on loop image on virtual disk (virtio), "
        "Linux 6.18: 50 % of those hosts measured a lower ratio (lower: xfs faster relative to "
        "ext4)"
    )
    assert sentence(placed) == said
    assert said in " ".join(render(view, "html").split())  # each result in words, on a page
    row = "| tree_copy_in · xfs | 0.75×, 50th percentile | 6 (7 sessions), median 0.75× |"
    assert row in render(view, "markdown")


def test_your_own_hosts_sessions_are_not_among_the_others(tmp_path: Path) -> None:
    write(tmp_path, [session(i + 1, r) for i, r in enumerate(HOSTS)])
    view = build([tmp_path], "ext4", _mine(session(1, 0.55, n=5)))  # host 1 is yours
    (placed,) = [p for p in view.placements if (p.mine.task, p.mine.filesystem) == (TASK, "xfs")]
    assert len(placed.others) == 5 and placed.rank_pct == 0.0


def test_yours_with_another_key_is_not_placed_and_says_what_differs(tmp_path: Path) -> None:
    write(tmp_path, [session(i + 1, r) for i, r in enumerate(HOSTS)])
    view = build([tmp_path], "ext4", _mine(session(99, 0.75, mount_options=["noatime"])))
    (placed,) = [p for p in view.placements if (p.mine.task, p.mine.filesystem) == (TASK, "xfs")]
    assert placed.group is None and placed.rank_pct is None
    assert placed.differs == ("mount_options",)
    text = " ".join(render(view, "text").split())
    assert "no bundle has its key, so it is not pooled" in text
    assert "mount_options (yours: noatime; theirs: none)" in text


def test_keys_an_older_session_could_not_complete_are_pooled_with_none(tmp_path: Path) -> None:
    raw = json.loads((FIXTURES / "session-v3.json").read_text())
    for host in (1, 2):
        raw["host"]["machine_id"] = f"{host:032x}"
        raw["runs"][0]["measurement"]["minor_faults"] = host  # two sessions, not one twice
        (tmp_path / f"v3-{host}.bundle.json").write_text(make(Session.model_validate(raw), KEY))
    view = build([tmp_path], "ext4")
    mkfs = group(view, "mkfs")
    assert len(mkfs) == 2 and not any(g.complete for g in mkfs)
    text = render(view, "text")
    assert "NOT POOLED: KEYS NOT COMPLETE" in text and "device, task_tools, task_version" in text


def test_a_bundle_that_does_not_verify_is_left_out_and_said(tmp_path: Path) -> None:
    _, b = write(tmp_path / "b", [session(1, 0.5), session(2, 0.6)])
    b.write_text(b.read_text().replace('"wall_s": 0.6', '"wall_s": 0.06'))
    (tmp_path / "b" / "notes.json").write_text("{}")
    view = build([tmp_path / "b"], "ext4")
    assert len(view.shared) == 1 and len(view.left_out) == 2
    assert any("does not verify" in why for why in view.left_out)
    done = CliRunner().invoke(main, ["share", "view", str(tmp_path / "b"), "--format", "json"])
    assert done.exit_code == 1
    assert json.loads(done.stdout)["bundles"] == 1


def test_a_session_sent_twice_counts_once(tmp_path: Path) -> None:
    (path,) = write(tmp_path / "a", [session(1, 0.5)])
    (tmp_path / "copy.bundle.json").write_text(path.read_text())
    view = build([tmp_path / "a", tmp_path / "copy.bundle.json"], "ext4")
    assert len(view.shared) == 1 and "counted once" in view.left_out[0]


def test_a_git_repository_is_read_as_published(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    paths = write(repo / "hosts", [session(i + 1, r) for i, r in enumerate(HOSTS)])
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", *map(str, paths[:5])], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "bundles"], check=True)
    view = build([repo], "ext4")
    assert len(view.shared) == 5  # the sixth is in the work tree, not published


def test_every_format_renders_a_static_page_and_the_json_holds_the_hosts(tmp_path: Path) -> None:
    write(tmp_path, [session(i + 1, r) for i, r in enumerate(HOSTS)])
    view = build([tmp_path], "ext4", _mine(session(99, 0.75)))
    page = render(view, "html")
    assert "<svg" in page and "<script" not in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page
    data = json.loads(render(view, "json"))
    (key,) = [k for k in data["keys"] if (k["task"], k["filesystem"]) == (TASK, "xfs")]
    assert sorted(key["host_ratios"].values()) == pytest.approx(HOSTS)
    assert key["percentiles"]["50"] == pytest.approx(0.75)
    (yours,) = [
        y for y in data["yours"]["results"] if (y["task"], y["filesystem"]) == (TASK, "xfs")
    ]
    assert yours["percentile"] == 50.0 and yours["pooled"]
    assert "## Where your session falls" in render(view, "markdown")


def test_a_baseline_no_session_ran_is_refused(tmp_path: Path) -> None:
    write(tmp_path, [session(1, 0.5)])
    with pytest.raises(FsarenaError, match="none of the 1 bundles has btrfs"):
        build([tmp_path], "btrfs")
    with pytest.raises(FsarenaError, match="no bundle or directory"):
        build([tmp_path / "none"], "ext4")


def test_one_session_shared_under_two_salts_counts_once_and_never_among_the_others(
    tmp_path: Path,
) -> None:
    """Two users (two salts) sharing the same session: other pseudonyms, the same runs."""
    from fsarena.share.bundle import build as bundle

    sessions = [session(i + 1, r) for i, r in enumerate(HOSTS)]
    write(tmp_path, sessions)
    (tmp_path / "again.bundle.json").write_text(make(sessions[0], bytes(32)))
    view = build([tmp_path], "ext4", Shared("yours", bundle(sessions[1], bytes(32))))
    assert len(view.shared) == 6 and "the same session as" in view.left_out[0]
    (placed,) = [p for p in view.placements if (p.mine.task, p.mine.filesystem) == (TASK, "xfs")]
    assert sorted(placed.others.values()) == pytest.approx([0.5, 0.7, 0.8, 0.9, 1.0])
