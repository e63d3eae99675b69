"""The comparison key: equal when two results measured the same thing, whoever ran them where;
different when anything that changes the figure's meaning differs; incomplete, never equal,
where an older session could not tell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fsarena.plan.model import make_plan
from fsarena.run import cold
from fsarena.run.new_session import new_session
from fsarena.session.file import Session, load
from fsarena.session.key import MACHINE_DROP, keys, missing, parts, series
from fsarena.targets.device_class import for_target
from fsarena.tasks import TASKS

FIXTURES = Path(__file__).parent.parent / "fixtures"
V4 = FIXTURES / "session-v4.json"


def _raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(V4.read_text())
    return data


def _keys(raw: dict[str, Any]) -> dict[tuple[str, str], str]:
    return keys(Session.model_validate(raw))


def test_a_new_session_records_what_only_the_run_knows(tmp_path: Path) -> None:
    plan = make_plan("article-a-2006", ["ext4", "xfs"], 1, 0.01, 7, str(tmp_path / "w"))
    session = new_session(
        plan, {"kernel": "6.18.44-custom"}, {"mkfs.xfs": "mkfs.xfs version 6.1.0"}
    )
    c = session.comparison
    assert c.scheme == "fsarena-key-1"
    assert c.device.label == for_target(None, str(tmp_path / "w")).label
    assert c.device.label.startswith("loop image on ")
    assert set(c.tasks) == set(plan.tasks)
    assert all(t.version == TASKS[name].key_version() for name, t in c.tasks.items())


def test_every_key_of_a_new_session_is_complete() -> None:
    session = load(V4)
    found = parts(session)
    for task in found.tasks:
        for fs in found.filesystems:
            assert missing(found.fields(task, fs)) == [], (task, fs)


def test_what_says_where_and_by_whom_is_not_in_the_key() -> None:
    raw = _raw()
    before = _keys(raw)
    raw["host"].update(
        hostname="other-host", machine_id="f" * 32, workdir="/srv/elsewhere", cpus=64
    )
    raw["host"]["workdir_backing"] = {"device": "/dev/sdq", "mountpoint": "/srv"}
    raw["plan"].update(seed=99, workdir="/srv/elsewhere", repetitions=9)
    raw["created_at"] = "2031-01-01T00:00:00+00:00"
    raw["host"]["kernel"] = "6.18.99-another-build"  # same major.minor
    raw["tool_versions"]["mkfs.xfs"] = "mkfs.xfs version 6.1.11"  # same major.minor
    assert _keys(raw) == before


def _changed(change: Any) -> set[tuple[str, str]]:
    raw = _raw()
    before = _keys(raw)
    change(raw)
    after = _keys(raw)
    return {k for k in before if before[k] != after[k]}


def test_a_mount_option_changes_that_filesystems_keys_only() -> None:
    def remount(raw: dict[str, Any]) -> None:
        raw["profiles_as_run"]["xfs"]["mount_options"] = ["noatime"]

    changed = _changed(remount)
    assert changed and {fs for _, fs in changed} == {"xfs"}


@pytest.mark.parametrize(
    ("what", "change"),
    [
        ("kernel minor", lambda r: r["host"].update(kernel="6.19.1")),
        ("device class", lambda r: r["comparison"]["device"].update(label="NVMe SSD")),
        ("scale", lambda r: r["plan"].update(scale=0.02)),
        ("mkfs minor", lambda r: r["tool_versions"].update({"mkfs.xfs": "mkfs.xfs 6.2.0"})),
        ("mkfs option", lambda r: r["profiles_as_run"]["xfs"]["mkfs"].insert(1, "-m")),
        ("data source", lambda r: r["source"].update(kind="image")),
    ],
)
def test_what_changes_a_figures_meaning_changes_the_key(what: str, change: Any) -> None:
    assert _changed(change), what


def test_a_tasks_version_and_its_dataset_change_its_keys_only() -> None:
    def bump(raw: dict[str, Any]) -> None:
        raw["comparison"]["tasks"]["tree_copy_in"]["version"] = "2"

    assert {t for t, _ in _changed(bump)} == {"tree_copy_in"}

    def other_tree(raw: dict[str, Any]) -> None:
        raw["datasets"]["tree"]["manifest_digest"] = "0" * 64

    assert {t for t, _ in _changed(other_tree)} == {
        t for t in _raw()["plan"]["tasks"] if "tree" in _raw()["plan"]["task_info"][t]["datasets"]
    }


@pytest.mark.parametrize("name", ["session-v1.json", "session-v2.json", "session-v3.json"])
def test_an_older_sessions_key_is_computed_and_says_what_it_lacks(name: str) -> None:
    session = load(FIXTURES / name)
    found = parts(session)
    fields = found.fields(session.tasks()[0], session.filesystems()[0])
    assert {"device", "task_version", "task_tools"} <= set(missing(fields))
    assert fields["kernel"] == series(session.host.kernel) and fields["mkfs"]


def test_versions_keep_their_major_and_minor() -> None:
    assert series("mke2fs 1.47.0 (5-Feb-2023)") == "1.47"  # not the 2 of mke2fs
    assert series("btrfs-progs v6.2") == "6.2"
    assert series("6.18.44-fc-v657") == "6.18"
    assert series("dbench version 4") == "4"
    assert series("not reported") == "not reported"
    assert series("") is None


def test_the_machine_wide_drop_of_older_sessions_is_the_runs_own_words() -> None:
    """A session without cold_caches dropped the whole machine's caches: the key says so in
    the words a newer run records for the same method, so the two pool."""
    assert cold.MACHINE.split(":")[0] == MACHINE_DROP
