"""A task declares the tools it runs, once: version capture and the apt list read that."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fsarena.filesystems.profiles import PROFILES, FilesystemProfile
from fsarena.run.preflight import BASE_TOOLS, tool_version, tool_versions, tools_of
from fsarena.tasks import TASKS
from fsarena.tasks.base import Tool
from fsarena.tasks.dbench import Dbench1
from fsarena.tasks.synthetic import Bonnie

APT_LIST = Path(__file__).resolve().parents[2] / "scripts" / "apt-packages.txt"
# Debian's Essential packages: always installed, so the apt list need not name them.
ESSENTIAL = {"dpkg"}


def _apt_packages() -> set[str]:
    lines = (line.split("#")[0].strip() for line in APT_LIST.read_text().splitlines())
    return {line for line in lines if line} | ESSENTIAL


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_tool_a_task_declares_is_installed_by_setup(name: str) -> None:
    missing = {t.package for t in TASKS[name].tools} - _apt_packages()
    assert not missing, f"{name}: add {', '.join(sorted(missing))} to {APT_LIST.name}"


def test_the_base_tools_are_installed_by_setup() -> None:
    assert {t.package for t in BASE_TOOLS} <= _apt_packages()


def _runnable(p: FilesystemProfile) -> bool:
    return not p.never  # reiser4: no kernel fsarena boots has it, so nothing to install


def test_every_filesystems_and_drivers_packages_are_installed_by_setup() -> None:
    wanted = {pkg for p in PROFILES.values() if _runnable(p) for pkg in p.packages}
    wanted |= {p.fuse.package for p in PROFILES.values() if p.fuse is not None}
    wanted |= {p.space_usage_package for p in PROFILES.values() if p.space_usage}
    assert wanted - _apt_packages() == set()


def test_a_compressing_configuration_declares_its_space_tool() -> None:
    from fsarena.filesystems.variants import derive

    zstd = derive("btrfs-zstd", PROFILES["btrfs"], ["compress=zstd:1"])
    assert zstd.compresses and not PROFILES["btrfs"].compresses
    tools = {t.name: t for t in tools_of([zstd], [])}
    assert tools["compsize"].package == "btrfs-compsize"
    assert "compsize" not in {t.name for t in tools_of([PROFILES["btrfs"]], [])}


def test_version_capture_reads_the_tasks_declarations() -> None:
    ext4 = PROFILES["ext4"]
    tools = {t.name: t for t in tools_of([ext4], [Dbench1, Bonnie])}
    assert tools["dbench"].version_argv == ("--help",)  # dbench has no --version
    assert tools["bonnie++"].version_marker == "Version"
    assert tools["mkfs.ext4"].version_argv == ("-V",)
    assert list(tools)[: len(BASE_TOOLS)] == [t.name for t in BASE_TOOLS]
    # A plan without server tasks records no server tool.
    assert "dbench" not in tool_versions([ext4], [TASKS["mkfs"]])


def _on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, script: str) -> None:
    tool = tmp_path / name
    tool.write_text(f"#!/bin/sh\n{script}\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")


def test_a_tools_version_is_asked_the_way_it_declares(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Usage text on stderr, the version on its last line (as bonnie++ -h prints it).
    _on_path(
        tmp_path, monkeypatch, "fakebench", 'echo "usage: fakebench" >&2; echo "Version: 2.00a" >&2'
    )
    assert tool_version(Tool("fakebench", "x", ("-h",), "Version")) == "Version: 2.00a"
    assert tool_version(Tool("fakebench", "x", ("-h",))) == "usage: fakebench"
    assert tool_version(Tool("fakebench", "x", None)) == "not reported"
    assert tool_version(Tool("fsarena-no-such-tool", "x")) == "not found"
