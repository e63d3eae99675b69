"""Machine profiles as data: the articles' machines with their sources, users' own, in the plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.plan.machines import (
    LIMIT_FIELDS,
    MIB,
    MachineProfile,
    builtin_machines,
    host_cpu_mhz,
    limits_for,
    load_machine_file,
    resolve_machine,
)
from fsarena.plan.model import make_plan
from fsarena.run.resume import plan_of
from fsarena.session.file import Session

ARTICLES = ("2001-desktop", "2006-fileserver", "2008-p3", "2009-phenom")


def test_the_articles_machines_are_built_in() -> None:
    assert list(builtin_machines()) == list(ARTICLES)


@pytest.mark.parametrize("name", ARTICLES)
def test_every_builtin_figure_states_its_source(name: str) -> None:
    machine = builtin_machines()[name]
    for field in LIMIT_FIELDS:
        value = getattr(machine, field)
        if value is not None:
            assert field in machine.sources, f"{name}.{field} has no source"
            assert f"{value:g}" in machine.sources[field], (
                f"{name}.{field} = {value:g}: its source should show the figure"
            )


def test_the_2006_fileserver_is_article_a() -> None:
    m = builtin_machines()["2006-fileserver"]
    assert (m.memory_mib, m.cpu_mhz) == (512, 533)
    # Derived from article A's fastest ISO copies (700 MB in 33.1 s and 34.8 s).
    assert m.disk_read_mib_s == pytest.approx(700 / 33.1, abs=0.01)
    assert m.disk_write_mib_s == pytest.approx(700 / 34.8, abs=0.01)


def test_cpu_clock_becomes_a_quota_by_clock_ratio() -> None:
    limits = limits_for(builtin_machines()["2006-fileserver"], host_mhz=2300.0, host_cpus=2)
    assert limits.cpu_cores == pytest.approx(533 / 2300)
    assert (limits.cpu_quota_us, limits.cpu_period_us) == (2317, 10_000)
    assert limits.memory_bytes == 512 * MIB
    assert limits.disk_write_bytes_per_s == int(20.11 * MIB)
    assert "clock ratio" in limits.notes[0]


def test_a_cpu_faster_than_the_host_is_not_limited() -> None:
    limits = limits_for(MachineProfile(name="big", cpu_cores=4), host_mhz=None, host_cpus=2)
    assert limits.cpu_cores is None and limits.cpu_quota_us is None
    assert any("CPU not limited" in n for n in limits.notes)


def test_a_tiny_quota_is_raised_to_the_kernels_minimum() -> None:
    limits = limits_for(MachineProfile(name="t", cpu_cores=0.01), None, 2)
    assert limits.cpu_quota_us == 1_000


def test_a_clock_needs_the_hosts_clock() -> None:
    with pytest.raises(FsarenaError, match="give the machine cpu_cores"):
        limits_for(MachineProfile(name="x", cpu_mhz=500), host_mhz=None, host_cpus=2)


def test_host_clock_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\ncpu MHz\t\t: 2300.000\n")
    assert host_cpu_mhz(cpuinfo) == 2300.0


def test_a_users_machine_file(tmp_path: Path) -> None:
    path = tmp_path / "nas.toml"
    path.write_text('memory_mib = 1024\ndisk_write_mib_s = 80\n[sources]\nmemory_mib = "spec"\n')
    machine = resolve_machine(str(path))
    assert (machine.name, machine.memory_mib, machine.disk_write_mib_s) == ("nas", 1024, 80)
    assert machine.disk_read_mib_s is None, "a figure left out is not limited"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("memory_mb = 512\n", "memory_mb: unknown key"),
        ("cpu_mhz = 500\ncpu_cores = 1\n", "cpu_mhz or cpu_cores, not both"),
        ('description = "nothing"\n', "a machine limits something"),
        ("memory_mib = -1\n", "memory_mib: Input should be greater than 0"),
        ("dirty_mib = 64\ndirty_background_mib = 64\n", "must be below dirty_mib"),
        ('memory_mib = 1\n[sources]\nram = "x"\n', "sources name unknown figures"),
        ("memory_mib = ", "is not valid TOML"),
    ],
)
def test_bad_machine_files_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(FsarenaError, match=message):
        load_machine_file(path)


def test_unknown_machine_names_the_known_ones() -> None:
    with pytest.raises(FsarenaError, match="known: 2001-desktop, 2006-fileserver"):
        resolve_machine("1999-laptop")


def _suite(tmp_path: Path, machines: str) -> str:
    path = tmp_path / "suite.toml"
    path.write_text(
        'name = "s"\nfilesystems = ["ext4"]\ntasks = ["mkfs", "mount", "umount"]\n' + machines
    )
    return str(path)


def test_a_suite_defines_machines_for_machine(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "[machines.nas]\nmemory_mib = 256\n")
    plan = make_plan(suite, None, 1, 0.01, 1, "/w", machine="nas")
    assert plan.machine is not None and plan.machine.name == "nas"
    assert plan.machine.memory_mib == 256
    assert make_plan(suite, None, 1, 0.01, 1, "/w").machine is None


def test_a_suites_bad_machine_table_is_named(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "[machines.nas]\nmemory_mbi = 256\n")
    with pytest.raises(FsarenaError, match=r"machines\.nas\.memory_mbi.*did you mean 'memory_mib'"):
        make_plan(suite, None, 1, 0.01, 1, "/w")


def test_the_machine_is_part_of_the_plan_a_session_resumes(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4"], 1, 0.01, 1, "/w", machine="2008-p3")
    session = Session(tool_version="t", created_at="now", plan=plan.summary())
    assert plan_of(session, tmp_path / "s.json") == plan


def test_disk_limits_apply_only_to_loop_images() -> None:
    with pytest.raises(FsarenaError, match="only to its own loop devices"):
        make_plan("article-a-2006", ["ext4"], 1, 0.01, 1, "/w", machine="2008-p3", device="/dev/x")
