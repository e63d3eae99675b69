"""The fleet report from real session fixtures turned into hosts: ratios, agreement, refusals."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fsarena.analysis.ranking import ratio_test
from fsarena.cli.commands import main
from fsarena.errors import FsarenaError
from fsarena.fleet.merge import FleetReport, build, load_hosts
from fsarena.fleet.render import render

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "session-v3.json"


def host_file(tmp: Path, name: str, xfs_factor: float = 1.0, **changes: Any) -> Path:
    """The real v3 session as if measured on another host, xfs's times scaled by a factor."""
    data = json.loads(FIXTURE.read_text())
    data["host"] = {**data["host"], "hostname": name, "machine_id": f"{name:0>32}"}
    for run in data["runs"]:
        if run["filesystem"] == "xfs" and run["measurement"]:
            run["measurement"]["wall_s"] *= xfs_factor
    data.update(changes)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_ratios_are_per_host_and_summarised_by_geometric_mean(tmp_path: Path) -> None:
    paths = [host_file(tmp_path, "a", 0.5), host_file(tmp_path, "b", 0.8),
             host_file(tmp_path, "c", 4.0)]  # fmt: skip
    report = report_of(paths)
    raw = json.loads(FIXTURE.read_text())["runs"]
    walls = {fs: [r["measurement"]["wall_s"] for r in raw if (r["filesystem"], r["task"],
             r["status"]) == (fs, "iso_copy_in", "ok")] for fs in ("ext4", "xfs")}  # fmt: skip
    expected = ratio_test([w * 0.5 for w in walls["xfs"]], walls["ext4"]).ratio
    assert report.cells[("iso_copy_in", "xfs", "a")].test.ratio == pytest.approx(expected)
    ratios = [report.cells[("iso_copy_in", "xfs", h)].test.ratio for h in "abc"]
    across = report.across[("iso_copy_in", "xfs")]
    assert across.geomean == pytest.approx(math.prod(ratios) ** (1 / 3))
    base = ratio_test(walls["xfs"], walls["ext4"]).ratio
    faster = sum(base * f < 1 for f in (0.5, 0.8, 4.0))
    assert (across.better, across.hosts) == (faster, 3)
    text = render(report, "text")
    assert "xfs " in text and f"on {max(faster, 3 - faster)} of 3 hosts, significant on" in text
    assert "Host facts" in text and "machine-id" in text


def report_of(paths: list[Path]) -> FleetReport:
    hosts, warnings = load_hosts(paths)
    return build(hosts, "ext4", "wall_s", warnings)


def test_every_format_renders(tmp_path: Path) -> None:
    paths = [host_file(tmp_path, "a", 0.5), host_file(tmp_path, "b", 2.0)]
    report = report_of(paths)
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert {r["host"] for r in rows} == {"a", "b"}
    data = json.loads(render(report, "json"))
    assert data["baseline"] == "ext4" and data["across"]
    assert '<table class="grid labels">' in render(report, "html")
    assert "| host | xfs |" in render(report, "markdown")


def test_incomplete_host_is_shown_never_averaged(tmp_path: Path) -> None:
    paths = [host_file(tmp_path, "a", 0.5), host_file(tmp_path, "b", 0.5),
             host_file(tmp_path, "c", 9.0, status="interrupted")]  # fmt: skip
    report = report_of(paths)
    assert report.across[("iso_copy_in", "xfs")].hosts == 2
    text = render(report, "text")
    assert "interrupted: not averaged in" in text
    said = " ".join(text.split())  # the warning wrapped to the terminal's width
    assert "warning: c (" in said and "is interrupted, not complete" in said


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tool_version": "9.9.9"}, "different fsarena versions"),
        (
            {"plan": {**json.loads(FIXTURE.read_text())["plan"], "seed": 1}},
            r"different plans .*seed",
        ),
    ],
)
def test_bad_merges_are_refused(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    paths = [host_file(tmp_path, "a"), host_file(tmp_path, "b", **change)]
    with pytest.raises(FsarenaError, match=message):
        load_hosts(paths)


def test_workdir_may_differ_between_hosts(tmp_path: Path) -> None:
    plan = {**json.loads(FIXTURE.read_text())["plan"], "workdir": "/srv/elsewhere"}
    load_hosts([host_file(tmp_path, "a"), host_file(tmp_path, "b", plan=plan)])


def test_cloned_machine_id_is_refused_unless_allowed(tmp_path: Path) -> None:
    a = host_file(tmp_path, "a")
    clone = json.loads(a.read_text())
    clone["host"]["hostname"] = "b"
    b = tmp_path / "b.json"
    b.write_text(json.dumps(clone))
    out = CliRunner().invoke(main, ["fleet", "report", str(a), str(b)])
    assert out.exit_code == 2
    assert "refusing to merge" in out.output and "one machine identity" in out.output
    allowed = CliRunner().invoke(main, ["fleet", "report", str(a), str(b), "--allow-same-machine"])
    assert allowed.exit_code == 0, allowed.output
    assert "not independent" in allowed.output


def test_one_session_is_not_a_fleet(tmp_path: Path) -> None:
    with pytest.raises(FsarenaError, match="at least two hosts"):
        load_hosts([host_file(tmp_path, "a")])


def test_default_baseline_is_the_plans_first_filesystem(tmp_path: Path) -> None:
    hosts, warnings = load_hosts([host_file(tmp_path, "a"), host_file(tmp_path, "b")])
    first = json.loads(FIXTURE.read_text())["plan"]["filesystems"][0]
    assert build(hosts, None, "wall_s", warnings).baseline == first


def test_host_facts_show_the_disk_scheduler(tmp_path: Path) -> None:
    data = json.loads(host_file(tmp_path, "a").read_text())
    data["host"]["workdir_backing"] |= {"scheduler": "bfq", "model": "Samsung SSD 870"}
    (tmp_path / "a.json").write_text(json.dumps(data))
    hosts, _ = load_hosts([tmp_path / "a.json", host_file(tmp_path, "b")])
    facts = [h.facts() for h in hosts]
    assert facts[0]["scheduler"] == "bfq" and facts[1]["scheduler"] == "not recorded"
    assert facts[0]["device"].endswith("Samsung SSD 870")


def test_host_facts_record_machine_id_and_the_disks_scheduler() -> None:
    """Fleet merges refuse cloned machine-ids; the scheduler explains hosts that disagree."""
    from fsarena.run.preflight import host_facts

    facts = host_facts("/")
    machine_id = Path("/etc/machine-id")
    assert facts["machine_id"] == (machine_id.read_text().strip() if machine_id.exists() else "")
    backing = facts["workdir_backing"]
    assert isinstance(backing, dict)
    node = Path("/sys/class/block", Path(str(backing.get("device", ""))).name)
    if node.exists() and (node.resolve() / "queue" / "scheduler").exists():
        assert backing["scheduler"] in (node.resolve() / "queue" / "scheduler").read_text()


def test_sessions_of_two_builds_are_refused_naming_hosts_and_builds(tmp_path: Path) -> None:
    host = json.loads(FIXTURE.read_text())["host"]
    a = host_file(tmp_path, "a", host={**host, "hostname": "a", "fsarena_build": "0.1.0+git.aaa"})
    b = host_file(tmp_path, "b", host={**host, "hostname": "b", "fsarena_build": "0.1.0+git.bbb"})
    with pytest.raises(FsarenaError) as err:
        load_hosts([a, b])
    message = str(err.value)
    assert "\n" not in message
    assert f"a ({a}) ran fsarena 0.1.0+git.aaa but b ({b}) ran 0.1.0+git.bbb" in message
    # One build (and sessions older than the record, which have none) still merge.
    c = host_file(tmp_path, "c", host={**host, "hostname": "c", "fsarena_build": "0.1.0+git.aaa"})
    assert [h.label for h in load_hosts([a, c])[0]] == ["a", "c"]


def test_an_interval_too_wide_to_say_anything_is_not_printed() -> None:
    from fsarena.fleet.render import _interval

    assert _interval(0.5, 2.0) == " [0.500, 2.000]"
    # Two runs of a noisy task on a real loopback fleet gave [0.000, 16416.883].
    assert _interval(0.00015, 16416.9) == " [interval over 100x wide: too few runs]"
    assert _interval(float("nan"), float("nan")) == ""


def test_html_answers_first_and_markdown_lists_warnings(tmp_path: Path) -> None:
    hosts, _ = load_hosts([host_file(tmp_path, "a"), host_file(tmp_path, "b", 0.5)])
    report = build(hosts, None, "wall_s", ["one warning"])
    page = render(report, "html")
    first = f"<h2>{report.tasks[0]} (wall_s / {report.baseline})</h2>"
    assert page.index("<h2>Across hosts</h2>") < page.index(first)
    assert page.index("<li>warning: one warning</li>") < page.index("<h2>Across hosts</h2>")
    assert "\n- warning: one warning\n" in render(report, "markdown")
    # Text and Markdown, read top to bottom, leave the summary to the tasks' own tables.
    assert "Across hosts" not in render(report, "text") + render(report, "markdown")
