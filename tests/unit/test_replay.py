"""`fsarena run --replay`: the plan it makes, the trace as a dataset, the replay error and its
telling (the replayer itself runs in tests/integration/test_capture.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fsarena.analysis.replay import replay_error, resolution_floor, resolution_floors
from fsarena.capture import trace
from fsarena.errors import FsarenaError
from fsarena.kinds import KINDS
from fsarena.measure.collect import Measurement
from fsarena.plan.model import make_plan
from fsarena.plan.suite import parse_suite
from fsarena.plan.yours import user_suite
from fsarena.report.replay import fact_lines, sections
from fsarena.session.file import Run, Session
from fsarena.session.records import DatasetRecord, DatasetSpecRecord, PlanRecord, TaskInfo
from fsarena.tasks import TASKS


def _trace(tmp_path: Path, name: str = "t.fstrace.gz") -> Path:
    t = trace.Trace(
        {"duration_s": 3.0, "own_filesystem": {"fstype": "ext4", "device_class": "loop"},
         "captured": {"calls": 2, "fs_call_s": 0.25, "bytes_written": 4096,
                      "per_call": {"fsync": {"count": 2, "total_s": 0.25, "p50_us": 100.0,
                                             "p99_us": 150.0, "p999_us": 150.0}}},
         "tree_bytes": 1 << 20, "compressibility": {"ratio": 0.5}},
        tree=[["d", "/srv"], ["f", "/srv/db", 1 << 20]],
        events=[[0, 100_000, 1, 1, "fsync", 0, 3, 0, 0], [200, 150_000, 1, 1, "fsync", 0, 3, 0, 0]],
    )  # fmt: skip
    path = tmp_path / name
    trace.write(t, path)
    return path


def test_replay_alone_plans_both_timing_models(tmp_path: Path) -> None:
    path = _trace(tmp_path)
    suite = user_suite(None, (), None, None, str(path))
    assert not isinstance(suite, str)
    assert suite.tasks == ["replay", "replay_paced"]
    assert suite.datasets["trace"] == {"kind": "trace", "path": str(path)}


def test_replay_beside_a_command_goes_first_on_the_fresh_filesystem(tmp_path: Path) -> None:
    suite = user_suite(None, ("make",), None, None, str(_trace(tmp_path)), "paced")
    assert not isinstance(suite, str)
    assert suite.tasks == ["replay_paced", "command"]


def test_replay_in_a_suite_runs_before_its_final_umount(tmp_path: Path) -> None:
    suite = user_suite("article-a-2006", (), None, None, str(_trace(tmp_path)), "fast")
    assert not isinstance(suite, str)
    assert suite.tasks[-2:] == ["replay", "umount"]


def test_replay_timing_without_a_trace_is_refused() -> None:
    with pytest.raises(FsarenaError, match="--replay-timing"):
        user_suite(None, (), None, None, None, "fast")


def test_a_suite_file_names_the_trace_it_replays(tmp_path: Path) -> None:
    path = _trace(tmp_path)
    text = f'name = "mine"\ntasks = ["replay"]\n[datasets.trace]\nkind = "trace"\npath = "{path}"\n'
    plan = make_plan(parse_suite(text, "mine.toml"), ["ext4"], 1, None, 1, str(tmp_path))
    spec = plan.dataset_specs()["trace"]
    assert spec.total_bytes == (1 << 20) + 4096  # the tree and what the calls wrote
    assert spec.to_dict()["captured"]["fstype"] == "ext4"  # type: ignore[index]


def test_a_replay_task_without_a_trace_says_how_to_give_one(tmp_path: Path) -> None:
    with pytest.raises(FsarenaError) as caught:
        parse_suite('name = "mine"\ntasks = ["replay"]\n', "mine.toml")
    assert "fsarena run --replay TRACE" in str(caught.value)


def test_a_truncated_trace_stops_the_plan_in_one_line(tmp_path: Path) -> None:
    path = _trace(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 20])
    with pytest.raises(FsarenaError) as caught:  # checked as the suite is made, before a plan
        user_suite(None, (), None, None, str(path))
    assert "cut short" in str(caught.value) and "\n" not in str(caught.value)


def test_the_replay_tasks_and_kinds_are_registered() -> None:
    assert (
        TASKS["replay"].kind == "replay_capacity" and TASKS["replay_paced"].kind == "replay_paced"
    )
    assert {"replay_capacity", "replay_paced"} <= set(KINDS)


# ---------------------------------------------------------------- the replay error


def _run(fs: str, task: str, rep: int, fs_s: float, error: float | None) -> Run:
    extra = {"replay_fs_s": fs_s, **({"replay_error_pct": error} if error is not None else {})}
    m = Measurement(1.0, 0.1, 0.1, 0, 0, None, 0, 0, 0.2, 0.0, 0, extra=extra)
    calls = {"fsync": {"count": 2, "p50_ns": 110_000, "p99_ns": 180_000}}
    return Run(filesystem=fs, task=task, repetition=rep, started_at="", status="ok",
               measurement=m, details={"replay": {"calls": calls}})  # fmt: skip


def _session(errors: list[float | None]) -> Session:
    runs = [_run("ext4", "replay_paced", i + 1, 0.25 * (1 + (e or 0) / 100), e)
            for i, e in enumerate(errors)]  # fmt: skip
    runs += [_run("xfs", "replay_paced", i + 1, 0.3, None) for i in range(len(errors))]
    captured = {"fstype": "ext4", "device_class": "loop", "fs_call_s": 0.25,
                "per_call": {"fsync": {"count": 2, "total_s": 0.25, "p50_us": 100.0,
                                       "p99_us": 150.0}}}  # fmt: skip
    return Session(
        tool_version="t", created_at="", status="complete", runs=runs,
        plan=PlanRecord(filesystems=["ext4", "xfs"], tasks=["replay_paced"],
                        task_info={"replay_paced": TaskInfo(kind="replay_paced",
                                                            datasets=["trace"])}),
        datasets={"trace": DatasetRecord(spec=DatasetSpecRecord(
            name="trace", kind="trace", description="your trace", captured=captured))},
    )  # fmt: skip


def test_the_replay_error_is_the_median_of_the_runs_on_the_captures_own_filesystem() -> None:
    session = _session([4.0, 12.0, 6.0])
    found = replay_error(session, "replay_paced")
    assert found is not None
    assert found.error_pct == 6.0 and found.runs == 3
    assert resolution_floor(session, "replay_paced") == pytest.approx(0.06)
    assert resolution_floors(session) == {"replay_paced": pytest.approx(0.06)}
    assert found.top_call is not None and found.top_call.replay_p50_us == 110.0


def test_no_run_on_the_captures_filesystem_leaves_no_floor_and_says_so() -> None:
    session = _session([None, None])
    assert resolution_floor(session, "replay_paced") is None
    (line,) = fact_lines(session)
    assert "not measured" in line and "ext4 (loop)" in line


def test_the_fact_line_says_smaller_differences_are_no_win() -> None:
    (line,) = fact_lines(_session([5.0, 7.0]))
    assert "6.0 %" in line and "never a win" in line and "fsync" in line


def test_the_fact_line_gives_the_runs_own_spread_beside_the_capture() -> None:
    """0.25 s captured; the runs 4 %, 12 % and 6 % above it: 0.260-0.280 s, median 0.265."""
    (line,) = fact_lines(_session([4.0, 12.0, 6.0]))
    assert "0.265 s inside file-system calls against the capture's 0.250 s" in line
    assert "(median of 3 runs, 0.260–0.280 s)" in line
    (one,) = fact_lines(_session([4.0]))
    assert "(median of 1 run)" in one


def test_the_replay_section_names_the_timing_models_and_latencies() -> None:
    (section,) = sections(_session([5.0]))
    text = repr(section)
    assert "at the traced pace" in text and "100.0 / 150.0" in text and "110.0 / 180.0" in text


def test_a_difference_under_the_replay_error_is_never_a_win() -> None:
    """ext4's replay 20 % faster than xfs's, six quiet rounds: a win where the replay's own
    error is not measured, none where it is 40 % (the answer's claims need their interval
    beyond the floor; analysis.selection.judge)."""
    from fsarena.report.comparison import build

    def timed(session: Session, walls: dict[str, float]) -> Session:
        runs = []
        for r in session.runs:
            assert r.measurement is not None
            wobble = 1 + 0.003 * ((r.repetition * 7) % 5 - 2)
            m = dataclasses.replace(r.measurement, wall_s=walls[r.filesystem] * wobble)
            runs.append(r.model_copy(update={"measurement": m}))
        order = [["ext4", "xfs"] for _ in range(6)]
        return session.model_copy(update={"runs": runs, "order": order})

    walls = {"ext4": 1.0, "xfs": 1.2}
    plain = build(timed(_session([None] * 6), walls)).verdicts.answer  # type: ignore[union-attr]
    assert plain.recommended == ("ext4",)
    floored = build(timed(_session([40.0] * 6), walls)).verdicts.answer  # type: ignore[union-attr]
    assert floored.recommended != ("ext4",) and floored.status != "win"
