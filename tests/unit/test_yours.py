"""Your command and your data in a plan: [tasks.NAME] tables, --command, --data, validated first."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from fsarena.datasets.userdir import DirectorySpec
from fsarena.errors import FsarenaError
from fsarena.plan.model import make_plan
from fsarena.plan.suite import parse_suite
from fsarena.plan.yours import user_suite
from fsarena.tasks import TaskContext

TABLE = """
name = "mine"
filesystems = ["ext4"]
[tasks.mkfs]
[tasks.mount]
[tasks.build]
command = "make -j2"
prepare = "cp -r /src/. ."
writes = false
kind = "development"
cwd = "b/"
[tasks.umount]
"""


def test_a_task_table_keeps_order_and_defines_commands() -> None:
    suite = parse_suite(TABLE, "mine.toml")
    assert suite.tasks == ["mkfs", "mount", "build", "umount"]
    build = suite.commands["build"]
    assert (build.command, build.writes, build.kind, build.cwd) == (
        "make -j2",
        False,
        "development",
        "b",
    )
    plan = make_plan(suite, None, 1, 1.0, 1, "/var/tmp/x")
    cls = plan.task_class("build")
    assert (cls.name, cls.kind, cls.writes) == ("build", "development", False)
    assert "make -j2" in cls.describe()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[tasks.build]\ncomand = "make"', "did you mean 'command'"),
        ('[tasks.mkfs]\ncommand = "make"', "a built-in task's name"),
        ('[tasks.b]\ncommand = "make"\ncwd = "../up"', "relative to the test filesystem"),
        ("[tasks.nosuch]\n", "command"),
        ('[tasks."bad name"]\ncommand = "x"', "task name 'bad name'"),
    ],
)
def test_bad_command_tasks_are_named(body: str, message: str) -> None:
    with pytest.raises(FsarenaError, match=r"mine\.toml") as info:
        parse_suite(f'name = "mine"\nfilesystems = ["ext4"]\n{body}\n', "mine.toml")
    assert message in str(info.value)


def test_command_line_commands_become_tasks() -> None:
    suite = user_suite(None, ("make", "make test"), "true", None)
    assert not isinstance(suite, str)
    assert suite.tasks == ["command-1", "command-2"]
    assert suite.commands["command-2"].prepare == "true"
    appended = user_suite("article-a-2006", ("make",), None, None)
    assert not isinstance(appended, str)
    assert appended.tasks[-2:] == ["command", "umount"]
    # Independent, as hyperfine's: each on a filesystem made for it (Task.fresh).
    assert all(c.fresh for c in [*suite.commands.values(), *appended.commands.values()])
    with pytest.raises(FsarenaError, match="--prepare prepares a --command"):
        user_suite(None, (), "true", None)


def test_data_replaces_the_suites_trees(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f.txt").write_text("x" * 1000)
    suite = user_suite("article-a-2006", (), None, str(tmp_path))
    assert not isinstance(suite, str)
    assert suite.datasets["tree"] == {"kind": "directory", "path": str(tmp_path)}
    with pytest.raises(FsarenaError, match="no task of suite powerloss copies a tree"):
        user_suite("powerloss", (), None, str(tmp_path))


def test_directory_selection_is_an_even_share_under_the_cap(tmp_path: Path) -> None:
    for i in range(100):
        (tmp_path / f"f{i:03}").write_bytes(b"x" * 100)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "link").symlink_to("../f000")
    spec = DirectorySpec(name="tree", path=str(tmp_path))
    assert spec.total_bytes == 10_000 and len(spec.plan().files) == 100
    assert len(spec.scaled(0.1).plan().files) == 10
    capped = DirectorySpec(name="tree", path=str(tmp_path), max_bytes=2_550)
    paths = [p for p, _ in capped.plan().files]
    assert capped.total_bytes <= 2_550 and len(paths) == 25
    assert paths[-1] > "f090", "spread over the whole directory, not its first files"
    with pytest.raises(FsarenaError, match="not a directory"):
        DirectorySpec(name="tree", path=str(tmp_path / "f000"))


def test_container_tasks_skip_what_overlayfs_cannot_use_as_upper_layer() -> None:
    from fsarena.filesystems.profiles import PROFILES
    from fsarena.filesystems.variants import variant
    from fsarena.tasks.container import ContainerLoad

    def why(name: str, driver: str = "kernel") -> str:
        profile = variant(PROFILES[name], driver)
        ctx = TaskContext(profile, "/dev/loop9", "/mnt", "/tmp", {}, executor=None)  # type: ignore[arg-type]
        return ContainerLoad().unsupported(ctx)

    assert why("ext4") == why("xfs") == why("btrfs") == ""
    assert "no xattrs" in why("vfat") and "no xattrs" in why("exfat")
    assert "RENAME_WHITEOUT" in why("ntfs")
    assert "FUSE" in why("ntfs", "fuse")
    assert "guest" in why("ext4", "uml")


def test_copy_in_needs_a_cwd_of_its_own_and_is_a_dataset_the_command_uses() -> None:
    from fsarena.tasks import UserCommand

    with pytest.raises(ValidationError, match="set cwd to a directory of its own"):
        UserCommand(command="make", copy_in="tree")
    spec = UserCommand(command="make", copy_in="tree", cwd="src")
    assert spec.datasets == ["tree"]


def test_data_with_a_command_and_no_suite_is_copied_in_as_the_cwd() -> None:
    suite = user_suite(None, ("make -j2",), None, "/usr/share/doc")
    assert not isinstance(suite, str)
    spec = suite.commands["command"]
    assert (spec.copy_in, spec.cwd, spec.datasets) == ("tree", "data", ["tree"])
