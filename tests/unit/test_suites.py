"""The built-in suites, suite files with datasets and filesystem variants, validated up front."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena import kinds
from fsarena.errors import FsarenaError
from fsarena.plan.catalog import DATASETS, WITHOUT_DEFAULT, customized
from fsarena.plan.model import make_plan
from fsarena.plan.suite import builtin_suites, load_suite, parse_suite
from fsarena.tasks import TASKS

VOCABULARY = {  # the task names every branch agreed on, per article
    "article-a-2006": "mkfs mount capacity_initial iso_copy_in iso_copy_within iso_delete "
    "tree_copy_in tree_copy_within tree_list_recursive tree_find_pattern tree_delete "
    "capacity_residual umount",
    "article-b-2001": "dd_write_synced dd_write_unsynced dd_read dd_delete kernel_tar_copy "
    "kernel_tar_extract kernel_tar_delete kernel_tree_delete",
    "article-c-2009": "bonnie bigiso_copy_there bigiso_copy_back kernel_bz2_copy "
    "kernel_bz2_extract",
    "article-d-2008": "portage_copy portage_compress portage_decompress portage_move "
    "portage_delete portage_space smallfiles_create smallfiles_compress smallfiles_decompress "
    "smallfiles_move smallfiles_delete film1_copy film2_copy film1_delete film2_delete",
}
# Today's server workloads (server-2026): kinds of work of their own. The suite is pinned by
# these kinds, not by task names, as workstation-2026 is not: a new family of a server kind
# is added in its module and the suite files, not here as well.
SERVER_KINDS = {"databases", "small_synced_files", "file_serving", "random_io"}
# The kinds the built-in tasks cover: every kind of the one table but the CPU verdict
# (over other kinds' tasks) and the user's own commands (`fsarena run --command`).
TASK_KINDS = set(kinds.KINDS) - {"cpu", "your_workload"}
AGED_KINDS = {"aged_reads", "layout"}  # tasks that need --age (a tree aged before them)
# Today's workloads (issue 16): in workstation-2026 and in all, beside the articles'.
WORKSTATION_KINDS = {"development", "packages_containers", "backups"}
# A captured service replayed (`fsarena run --replay TRACE`): it needs the user's trace,
# so no built-in suite has it, as none has the user's commands.
REPLAY_KINDS = {"replay_capacity", "replay_paced"}


def test_the_article_suites_quick_all_and_powerloss_each_say_what_they_reproduce() -> None:
    suites = builtin_suites()
    assert set(suites) == {
        *VOCABULARY, "server-2026", "quick", "all", "powerloss", "workstation-2026",
    }  # fmt: skip
    for suite in suites.values():
        assert suite.article and suite.description


@pytest.mark.parametrize("name", sorted(VOCABULARY))
def test_article_suites_have_every_task_of_their_article(name: str) -> None:
    assert set(builtin_suites()[name].tasks) == set(VOCABULARY[name].split())


def test_server_2026_has_every_task_of_the_server_kinds_and_only_those() -> None:
    server = {name for name, task in TASKS.items() if task.kind in SERVER_KINDS}
    assert set(builtin_suites()["server-2026"].tasks) == {"mkfs", "mount", "umount"} | server


def test_all_has_every_article_task_and_quick_every_kind() -> None:
    suites = builtin_suites()
    every = {t for tasks in VOCABULARY.values() for t in tasks.split()}
    server = set(suites["server-2026"].tasks)
    today = set(suites["workstation-2026"].tasks)
    assert set(suites["all"].tasks) == every | server | today
    assert {TASKS[t].kind for t in today} <= WORKSTATION_KINDS
    # Power-loss safety is a test of its own (minutes per filesystem), not a kind of work;
    # the server workloads start real servers and run for seconds each: server-2026 has them;
    # the aged-tree reads need --age; today's workstation tasks are in workstation-2026.
    quick = {TASKS[t].kind for t in suites["quick"].tasks}
    assert quick == (
        TASK_KINDS - {"safety"} - SERVER_KINDS - AGED_KINDS - WORKSTATION_KINDS - REPLAY_KINDS
    )


def test_every_task_declares_a_known_kind_and_datasets() -> None:
    # Every kind of work is in fsarena.kinds, and every kind there has its tasks.
    assert {task.kind for task in TASKS.values()} == TASK_KINDS
    for task in TASKS.values():
        assert task.kind in TASK_KINDS, task.name
        assert set(task.datasets) <= set(DATASETS) | set(WITHOUT_DEFAULT), task.name
        assert task.describe(), task.name


def test_article_sizes_at_scale_one() -> None:
    mib = 1 << 20
    assert DATASETS["dd"].total_bytes == 256 * mib
    assert DATASETS["bonnie"].total_bytes == 2000 * mib
    assert DATASETS["film1"].total_bytes == 815 * mib
    assert DATASETS["film2"].total_bytes == 692 * mib
    assert DATASETS["portage"].total_bytes == 354 * mib
    assert DATASETS["kernel"].total_bytes == 1_298_681_992


SUITE = """
name = "mine"
tasks = ["mkfs", "mount", "iso_copy_in", "portage_copy", "umount"]
repetitions = 2
[filesystems.ext4]
[filesystems.btrfs-zstd]
base = "btrfs"
mount_options = ["compress=zstd"]
notes = "zstd compression"
[datasets.iso]
size_bytes = 10485760
[datasets.portage]
files = 500
directories = 50
total_bytes_target = 2000000
"""


def test_user_suite_with_variant_and_dataset_sizes(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(SUITE)
    plan = make_plan(str(path), None, None, 0.5, 1, "/tmp/w")
    assert plan.filesystems == ["ext4", "btrfs-zstd"]
    zstd = plan.profile("btrfs-zstd")
    assert zstd.fstype == "btrfs" and zstd.mount_options == ("compress=zstd",)
    assert zstd.mount_argv("/dev/loop9", "/m") == (
        "mount", "-t", "btrfs", "-o", "compress=zstd", "/dev/loop9", "/m",
    )  # fmt: skip
    specs = plan.dataset_specs()
    assert specs["iso"].total_bytes == 5 * (1 << 20)
    assert specs["portage"].files == 250  # type: ignore[attr-defined]
    # The plan alone says it all: the variant and the overrides are in its summary.
    summary = plan.summary()
    assert summary["variants"]["btrfs-zstd"]["mount_options"] == ["compress=zstd"]
    assert summary["datasets"]["portage"]["files"] == 500
    # --fs may name the suite's variant.
    assert make_plan(str(path), ["btrfs-zstd"], 1, 0.5, 1, "/w").filesystems == ["btrfs-zstd"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("repetitions = 2", "repetitons = 2"), r"mine.toml: repetitons: unknown key"),
        (('mount_options = ["compress=zstd"]', 'mount_option = ["x"]'),
         r"filesystems.btrfs-zstd.mount_option: unknown key .*did you mean .mount_options."),
        (('base = "btrfs"', 'base = "btrfz"'), r"filesystems.btrfs-zstd.base: unknown filesystem"),
        (("files = 500", "fles = 500"), r"datasets.portage.fles: unknown key"),
        (("files = 500", 'files = "many"'), r"datasets.portage.files: expected int"),
        (("[datasets.iso]", "[datasets.isso]"), r"datasets.isso: no task of this suite uses it"),
        (("files = 500", "files = 500\nmax_file_bytes = 10"), r"datasets.portage: .*not reachable"),
        (("[filesystems.ext4]", "[filesystems.ext4]\nmount_options = []"),
         r"filesystems.ext4: a built-in name"),
    ],
)  # fmt: skip
def test_suite_file_errors_name_the_offending_key(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(SUITE.replace(*change))
    with pytest.raises(FsarenaError, match=message):
        load_suite(str(path))


def test_dataset_kind_can_be_replaced() -> None:
    spec = customized("iso", {"kind": "size", "size_bytes": 1 << 20})
    assert spec.kind == "size" and spec.total_bytes == 1 << 20
    with pytest.raises(FsarenaError, match=r"datasets.iso.kind: give one of"):
        customized("iso", {"kind": "nope"})


def test_builtin_suites_validate() -> None:
    for name in builtin_suites():
        plan = make_plan(name, ["ext4"], 1, 0.01, 1, "/tmp/w")
        # Every dataset a task reads is specified, and nothing else.
        wanted = {d for t in plan.tasks for d in plan.task_class(t).datasets}
        specs = plan.dataset_specs()
        assert set(specs) == wanted, name
        # The image holds what the tasks keep at once, is never below what mkfs accepts,
        # and is whole MiB.
        ext4 = plan.profile("ext4")
        size = plan.image_size_for(ext4)
        assert size >= max(plan.needed_bytes(), ext4.min_size_bytes), name
        assert size % (1 << 20) == 0, name


def test_parse_error_of_a_builtin_would_name_the_file() -> None:
    with pytest.raises(FsarenaError, match=r"built-in suite x\.toml"):
        parse_suite('name = "x"\nfilesystems = ["ext4"]\n', "built-in suite x.toml")
