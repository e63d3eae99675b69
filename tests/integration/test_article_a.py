"""Article A's whole sequence on every filesystem this kernel has, at a tiny scale, as root."""

from __future__ import annotations

import csv
import io
import json

import pytest

from fsarena.filesystems.drivers import probe
from fsarena.filesystems.profiles import PROFILES
from fsarena.session.file import load
from tests.integration.conftest import fsarena, leftovers, measured, new_workdir

SUPPORTED = [name for name, p in PROFILES.items() if probe(p).available]
SCALE = "0.01"


@pytest.fixture(scope="module")
def session_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    import subprocess

    work = new_workdir()
    out = work / "session.json"
    result = fsarena(
        "run",
        "--fs",
        ",".join(SUPPORTED),
        "--scale",
        SCALE,
        "--repetitions",
        "1",
        "--seed",
        "3",
        "--workdir",
        str(work / "w"),
        "--output",
        str(out),
        check=False,
    )
    yield result, out, work
    subprocess.run(["rm", "-rf", str(work)], check=False)


def test_every_filesystem_completes(session_run) -> None:  # type: ignore[no-untyped-def]
    result, out, work = session_run
    assert result.returncode == 0, result.stderr
    session = load(out)
    assert session.status == "complete"
    assert set(session.filesystems()) == set(SUPPORTED)
    assert {"ext4", "xfs", "btrfs"} <= set(SUPPORTED), "this machine has these built in"
    for run in session.runs:
        assert measured(run), (run.filesystem, run.task, run.error)
        if run.measurement is not None:
            assert run.measurement.wall_s > 0
        assert all(c.ok for c in run.checks)
    assert not leftovers(work)


def test_device_bytes_cover_the_data_copied(session_run) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = session_run
    session = load(out)
    iso = session.datasets["iso"].total_bytes
    tree = session.datasets["tree"].total_bytes
    for run in session.runs:
        m = run.measurement
        if not PROFILES[run.filesystem].on_device:
            continue  # tmpfs: the data stays in memory
        if run.task in ("iso_copy_in", "iso_copy_within"):
            assert m is not None and m.device_write_bytes >= iso, run.filesystem
        if run.task in ("tree_copy_in", "tree_copy_within"):
            assert m is not None and m.device_write_bytes >= tree, run.filesystem
        if run.task == "iso_copy_within":
            # Caches were dropped: the source copy is read back from the device.
            assert m is not None and m.device_read_bytes >= iso * 0.9, run.filesystem


def test_copies_were_verified(session_run) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = session_run
    session = load(out)
    copies = [r for r in session.runs if "copy" in r.task]
    assert copies
    for run in copies:
        assert any("intact" in c.name and c.ok for c in run.checks), (run.filesystem, run.task)


def test_capacity_is_plausible(session_run) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = session_run
    for run in load(out).runs:
        if run.task.startswith("capacity_"):
            assert 50 < run.values["capacity_pct"] <= 100, (run.filesystem, run.values)


def test_report_reproduces_the_tables(session_run) -> None:  # type: ignore[no-untyped-def]
    result, out, _ = session_run
    again = fsarena("report", str(out))
    assert again.stdout == result.stdout
    assert "iso_copy_in" in again.stdout and "tree_find_pattern" in again.stdout


def test_csv_has_one_row_per_run_and_metric(session_run) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = session_run
    rows = list(csv.DictReader(io.StringIO(fsarena("report", str(out), "--format", "csv").stdout)))
    session = load(out)
    keys = {(r["filesystem"], r["task"], r["repetition"], r["metric"]) for r in rows}
    assert len(keys) == len(rows), "no duplicated (run, metric)"
    assert {(r.filesystem, r.task, str(r.repetition)) for r in session.runs} == {
        k[:3] for k in keys
    }
    walls = [r for r in rows if r["metric"] == "wall_s"]
    assert len(walls) == sum(r.measurement is not None for r in session.runs)


def test_json_and_markdown_render(session_run) -> None:  # type: ignore[no-untyped-def]
    _, out, _ = session_run
    doc = json.loads(fsarena("report", str(out), "--format", "json").stdout)
    assert {t["task"] for t in doc["tasks"]} >= {"mkfs", "umount", "capacity_initial"}
    md = fsarena("report", str(out), "--format", "markdown").stdout
    assert md.startswith("# fsarena results") and "| filesystem |" in md


def test_run_writes_the_html_report(session_run) -> None:  # type: ignore[no-untyped-def]
    result, out, _ = session_run
    html = out.with_suffix(".html")
    assert f"HTML report: {html}" in result.stderr
    assert '<section id="answer">' in html.read_text()  # the answer opens the report
    assert (out.parent / f"{out.stem}-charts" / "heatmap.png").exists()
