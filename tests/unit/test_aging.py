"""Aging: profiles as data, a seeded workload that is the same everywhere, aged-vs-fresh reports."""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from fsarena.aging import runtime
from fsarena.aging.layout import tree_layout
from fsarena.aging.profiles import builtin_profiles, resolve_age
from fsarena.aging.workload import AgingPlan, NewFile, Writer, digest, scan
from fsarena.errors import FsarenaError
from fsarena.measure.collect import Measurement
from fsarena.plan.model import make_plan
from fsarena.report import aging, render
from fsarena.session.file import Run, Session
from tests.fakes import FakeExecutor

TINY = resolve_age(
    {
        "name": "tiny",
        "source": "unit test",
        "fullness": 0.5,
        "written_factor": 1.0,
        "mean_file_bytes": 8192,
        "max_file_bytes": 1 << 20,
        "tail_min_bytes": 65536.0,
    }
)
IMAGE = 4 << 20


def test_builtin_profiles_name_their_source_and_the_issue_levels() -> None:
    profiles = builtin_profiles()
    assert {"fill", "fill-50", "fill-95", "churn"} <= set(profiles)
    assert [profiles[n].fullness for n in ("fill", "fill-50", "fill-95")] == [0.8, 0.5, 0.95]
    assert profiles["churn"].written_factor > 0 and profiles["fill"].written_factor == 0
    assert all(p.source for p in profiles.values())


def test_a_user_profile_file_is_validated_with_a_message_naming_the_key(tmp_path: Path) -> None:
    good = tmp_path / "mine.toml"
    good.write_text('source = "me"\nfullness = 0.3\n')
    assert resolve_age(str(good)).name == "mine"
    bad = tmp_path / "bad.toml"
    bad.write_text('source = "me"\nfulness = 0.3\n')
    with pytest.raises(FsarenaError, match="fulness"):
        resolve_age(str(bad))
    with pytest.raises(FsarenaError, match="unknown aging profile 'nope'"):
        resolve_age("nope")


def test_the_same_seed_gives_the_same_operations_and_file_set() -> None:
    one, two = AgingPlan(TINY, IMAGE, 7), AgingPlan(TINY, IMAGE, 7)
    assert one.fill() == two.fill()
    assert digest(one.final(), 7) == digest(two.final(), 7)
    other = AgingPlan(TINY, IMAGE, 8)
    assert digest(other.final(), 8) != digest(one.final(), 7)


def test_churn_keeps_fullness_and_writes_its_bound() -> None:
    plan = AgingPlan(TINY, IMAGE, 3)
    filled = sum(f.size for f in plan.fill())
    assert filled == int(TINY.fullness * IMAGE)
    live = {f.path: f for f in plan.fill()}
    written = 0
    for ops in plan.rounds(live):
        written += sum(op.size for op in ops if isinstance(op, NewFile))
        for op in ops:
            if isinstance(op, NewFile):
                live[op.path] = op
            else:
                del live[op]
        assert sum(f.size for f in live.values()) == filled  # bytes deleted = bytes created
    assert written >= plan.churn_bytes
    assert any(op.fsync for op in plan.churn_round(1, {f.path: f for f in plan.fill()})
               if isinstance(op, NewFile))  # fmt: skip


def test_the_writer_leaves_exactly_the_planned_files(tmp_path: Path) -> None:
    plan = AgingPlan(TINY, IMAGE, 11)
    tally = Writer(plan, str(tmp_path / "aged")).run()
    assert tally.stopped_by == "bytes" and tally.rounds > 0 and tally.deleted > 0
    assert scan(str(tmp_path / "aged")) == {p: f.size for p, f in plan.final().items()}
    assert digest(tally.live, 11) == digest(plan.final(), 11)
    first = sorted(plan.final())[0]
    data = (tmp_path / "aged" / first).read_bytes()
    assert len(data) == plan.final()[first].size


def test_the_writer_stops_at_its_time_cap(tmp_path: Path) -> None:
    ticks = iter(range(0, 10_000, 1000))
    capped = TINY.model_copy(update={"time_cap_s": 1.0})
    tally = Writer(AgingPlan(capped, IMAGE, 2), str(tmp_path / "a"), lambda: next(ticks)).run()
    assert tally.stopped_by == "time" and tally.rounds == 0


def test_layout_of_a_tree_has_extents_and_a_score(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    for i in range(5):
        (tmp_path / "t" / f"f{i}").write_bytes(os.urandom(20000))
    try:
        layout = tree_layout(str(tmp_path / "t"))
    except OSError as exc:
        pytest.skip(f"no FIEMAP on this filesystem: {exc}")
    assert layout.files == 5 and layout.extents >= 5
    assert 0 < layout.values()["layout_score"] <= 1


def test_a_plan_with_age_runs_every_filesystem_fresh_and_aged() -> None:
    plan = make_plan("quick", ["ext4", "xfs"], 1, 0.02, 1, "/tmp/w", age="churn")
    assert plan.sequences() == ["ext4", "xfs", "ext4+churn", "xfs+churn"]
    assert plan.profile("xfs+churn").name == "xfs"
    assert plan.tasks[-1] == "umount" and "aged_grep" in plan.tasks
    fresh = make_plan("quick", ["ext4"], 1, 0.02, 1, "/tmp/w")
    ext4 = plan.profile("ext4")
    # The tasks keep the free space a fresh image gives them; the tree takes the rest.
    assert plan.image_size_for(ext4) >= fresh.image_size_for(ext4) / (1 - 0.5) - (1 << 20)
    # --device: aged again every repetition (no image to snapshot), so the plan is accepted.
    on_device = make_plan("quick", ["ext4"], 1, 0.02, 1, "/tmp/w", age="churn", device="/dev/x")
    assert on_device.sequences() == ["ext4", "ext4+churn"]


def _run(fs: str, task: str, rep: int, wall: float) -> Run:
    m = Measurement(
        wall_s=wall, user_s=0.1, sys_s=0.1, minor_faults=0, major_faults=0, max_rss_kib=1,
        device_read_bytes=0, device_write_bytes=0, system_busy_s=0.0, system_iowait_s=0.0,
        exit_code=0,
    )  # fmt: skip
    return Run(filesystem=fs, task=task, repetition=rep, started_at="t", status="ok", measurement=m)


def _aged_session(flip: bool, more: dict[str, float] | None = None) -> Session:
    """ext4 and xfs fresh and aged; `more`: guests (NAME@uml) and their aged twins."""
    walls = {"ext4": 1.0, "xfs": 2.0, "ext4+churn": 4.0 if flip else 1.5, "xfs+churn": 2.5}
    walls |= more or {}
    runs = [
        _run(fs, "aged_grep", rep, base * (1 + 0.01 * rep))
        for fs, base in walls.items()
        for rep in (1, 2, 3)
    ]
    profiles = {
        "ext4": {"group": "kernel"},
        "xfs": {"group": "kernel"},
        "ext4+churn": {"group": "aged:kernel", "fresh": "ext4", "aged": "churn"},
        "xfs+churn": {"group": "aged:kernel", "fresh": "xfs", "aged": "churn"},
    }
    for name in more or {}:
        fresh = name.removesuffix("+churn")
        twin = {"fresh": fresh, "aged": "churn"} if name != fresh else {}
        profiles[name] = {"group": f"{'aged:' if twin else ''}guest:uml", **twin}
    record = {"manifest_digest": "abc", "wall_s": 10.0, "bytes_written": 1e9, "files": 5}
    return Session(
        tool_version="t",
        created_at="t",
        plan={"filesystems": ["ext4", "xfs"], "tasks": ["aged_grep"], "age": {"name": "churn"},
              "task_info": {"aged_grep": {"kind": "aged_reads", "timed": True}}},
        profiles_as_run=profiles,
        runs=runs,
        aging={"ext4": record, "xfs": record},
    )  # fmt: skip


def test_the_report_shows_fresh_aged_and_their_ratio_with_an_interval() -> None:
    first = aging.sections(_aged_session(flip=False))[0]
    row = next(r for r in first.rows if r[1] == "ext4")
    assert row[4] == "1.5"  # aged / fresh
    low, high = (float(x) for x in row[5].split("–"))
    assert low < 1.5 < high and low > 1  # slower aged, surely
    assert "the same order" in aging.verdict(_aged_session(flip=False))


def test_an_interval_too_wide_to_say_anything_is_not_printed_as_bounds() -> None:
    session = _aged_session(flip=False)
    # Two runs of xfs aged, far apart: the ratio's interval spans more than 100x.
    session.runs = [
        r for r in session.runs if not (r.filesystem == "xfs+churn" and r.repetition == 3)
    ]
    for run in session.runs:
        if run.filesystem == "xfs+churn" and run.measurement is not None:
            wall = 0.5 if run.repetition == 1 else 12.0
            run.measurement = dataclasses.replace(run.measurement, wall_s=wall)
    row = next(r for r in aging.sections(session)[0].rows if r[1] == "xfs")
    assert row[5] == "over 100× wide: too few runs"


def test_a_flipped_ranking_is_named_and_judged_against_noise() -> None:
    session = _aged_session(flip=True)
    line = aging.verdict(session)
    assert "changed in 1 of 1" in line and "significantly (95 %, both fresh and aged) in 1" in line
    text = render(session, "text")
    assert "aged_grep: the ranking changed with age: fresh ext4 < xfs; aged xfs < ext4" in text
    assert "significant both ways" in text
    assert "the same file set on every filesystem" in text


def test_guests_are_ranked_with_age_only_within_their_group() -> None:
    # ext4 and xfs flip with age on the host kernel; in a guest, 10x slower than the
    # host, ext4@uml and jfs@uml flip too: each pair is ranked within its own group.
    guests = {"ext4@uml": 10.0, "jfs@uml": 12.0, "ext4@uml+churn": 15.0, "jfs@uml+churn": 13.0}
    session = _aged_session(flip=True, more=guests)
    lines = aging.rankings(session)
    assert lines[0].startswith("Ranking with age: the order changed in 2 of 2 timed tasks")
    assert "aged_grep (kernel): the ranking changed with age: fresh ext4 < xfs;" in lines[1]
    assert (
        "aged_grep (guest:uml): the ranking changed with age: fresh ext4@uml < jfs@uml;"
        in (lines[2])
    )
    note = next(n for n in aging.sections(session)[0].notes if n.startswith("Groups"))
    assert "kernel: ext4, xfs; guest:uml: ext4@uml, jfs@uml." in note


def test_a_session_without_age_has_no_aged_section() -> None:
    session = _aged_session(flip=False)
    session.profiles_as_run = {k: v for k, v in session.profiles_as_run.items() if "+" not in k}
    assert aging.sections(session) == [] and aging.verdict(session) == ""


def test_a_suite_may_age_by_name_or_table_and_a_typo_is_named(tmp_path: Path) -> None:
    base = 'name = "s"\nfilesystems = ["ext4"]\ntasks = ["mkfs", "mount", "umount"]\n'
    by_name = tmp_path / "a.toml"
    by_name.write_text(base + 'age = "fill-50"\n')
    plan = make_plan(str(by_name), None, 1, 0.02, 1, "/tmp/w")
    assert plan.age is not None and plan.age.fullness == 0.5
    assert plan.tasks == ["mkfs", "mount", *AGED, "umount"]
    table = tmp_path / "b.toml"
    table.write_text(base + '[age]\nname = "mine"\nsource = "me"\nfullness = 0.4\n')
    assert make_plan(str(table), None, 1, 0.02, 1, "/tmp/w").sequences() == ["ext4", "ext4+mine"]
    typo = tmp_path / "c.toml"
    typo.write_text(base + 'age = "chrun"\n')
    with pytest.raises(FsarenaError, match="unknown aging profile 'chrun'"):
        make_plan(str(typo), None, 1, 0.02, 1, "/tmp/w")


AGED = ["aged_layout", "aged_grep", "aged_tar", "aged_cat"]


def test_a_filesystem_without_fiemap_gives_no_extent_figures_and_says_why() -> None:
    # tmpfs answers FIEMAP as jfs and FUSE drivers do: not supported. That was a failed
    # aged_layout, which ended the sequence before the aged reads.
    shm = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        ex = FakeExecutor()
        args = runtime.plan_args(AgingPlan(TINY, IMAGE, 3))
        assert runtime.JOBS["clean_tree"](ex, args, str(shm), ["sync"]) is True
        assert runtime.JOBS["clean_tree"](ex, args, str(shm), ["sync"]) is False  # written once
        found = runtime.JOBS["layout"](ex, str(shm), ["sync"])
    finally:
        shutil.rmtree(shm)
    assert found["values"] == {} and found["block_bytes"] > 0
    assert found["no_extents"] == (
        "the filesystem does not report extents (FIEMAP: Operation not supported)"
    )
    assert ex.calls == [("call", "sync")] * 2


def test_the_host_copies_an_image_sparse_or_by_reflink(tmp_path: Path) -> None:
    from fsarena.host.executor import RealExecutor

    image = tmp_path / "a.img"
    with open(image, "wb") as f:
        f.truncate(64 << 20)  # 64 MiB, with one written MiB in the middle
        f.seek(32 << 20)
        f.write(b"x" * (1 << 20))
    copy = RealExecutor().copy_image(str(image), str(tmp_path / "b.img"))
    assert copy.method in ("reflink", "sparse copy")
    assert (tmp_path / "b.img").read_bytes() == image.read_bytes()
    assert copy.allocated_bytes == (tmp_path / "b.img").stat().st_blocks * 512 < 8 << 20
