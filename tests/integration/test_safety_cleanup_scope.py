"""`fsarena cleanup` touches only what fsarena's ledger recorded (issue 24, finding 1).

Each scenario (cleanup_scenarios.py) runs in a private mount namespace, so a cleanup
that reaches too far cannot unmount the host's mounts; loop devices are the machine's,
and each scenario detaches exactly the one it attached.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.conftest import REPO


def _in_private_namespace(scenario: str, workdir: Path) -> dict[str, Any]:
    argv = [sys.executable, "-m", "tests.integration.cleanup_scenarios", scenario, str(workdir)]
    out = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", *argv],
        cwd=REPO, capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_a_users_tmpfs_as_the_work_directory_keeps_every_byte(workdir: Path) -> None:
    d = workdir / "w"
    found = _in_private_namespace("users_tmpfs", d)
    assert found["rc"] == 0, found
    assert found["files_kept"] and found["mounted"] == "tmpfs mydata", found
    assert "unmounted" not in found["stdout"]
    assert f"left alone, not fsarena's: mount {d} (tmpfs from mydata)" in found["stdout"]


def test_a_parent_of_a_live_runs_work_directory_is_refused(workdir: Path) -> None:
    found = _in_private_namespace("live_parent", workdir)
    parent, itself = found["parent"], found["itself"]
    assert parent["rc"] == 2 and "refusing to clean up" in parent["stderr"], parent
    assert f"holds the work directory {workdir}/b of a live run" in parent["stderr"]
    assert itself["rc"] == 2 and ") is using" in itself["stderr"], itself
    assert found["after"] == found["before"], "the live run's mounts, loop and files untouched"
    assert found["before"]["attached"] and found["before"]["mnt"].startswith("ext4 /dev/loop")


def test_a_killed_run_in_a_subdirectory_is_left_to_its_own_cleanup(workdir: Path) -> None:
    found = _in_private_namespace("killed_in_a_subdirectory", workdir)
    parent, itself = found["parent"], found["itself"]
    assert parent["rc"] == 0 and found["kept"] == found["before"], parent
    assert f"recorded by the run in {workdir}/b" in parent["stdout"]
    assert itself["rc"] == 0, itself
    assert "unmounted" in itself["stdout"] and "detached" in itself["stdout"], itself
    after = found["after"]
    assert not after["mnt"] and not after["source"] and not after["attached"]
    assert not after["image"]


def test_a_run_over_a_killed_runs_leftovers_refuses_and_touches_nothing(workdir: Path) -> None:
    found = _in_private_namespace("rerun_over_leftovers", workdir)
    assert found["rc"] == 2, found["stderr"]
    lines = [line for line in found["stderr"].splitlines() if line.strip()]
    assert len(lines) == 1 and "an earlier run left mount" in lines[0], lines
    assert f"`fsarena cleanup --workdir {workdir}/w`" in lines[0]
    assert found["after"] == found["before"] and found["after"]["image"], "nothing touched"
    assert not (workdir / "s.json").exists(), "no session for a run that never started"


def test_the_dry_runs_hint_names_no_live_runs_mount_for_cleanup(workdir: Path) -> None:
    found = _in_private_namespace("hint_beside_a_live_run", workdir)
    assert found["rc"] == 0 and found["after"] == found["before"], found
    assert not any("an earlier run left" in n for n in found["notes"]), found["notes"]
    live = [n for n in found["notes"] if "not fsarena's, left alone" in n]
    assert any(f"mount {workdir}/b/mnt/ext4" in n and "held by the live run" in n for n in live)


def test_cleanup_of_root_is_refused_and_unmounts_nothing(workdir: Path) -> None:
    found = _in_private_namespace("root", workdir)
    assert found["rc"] == 2 and "/ is a system directory" in found["stderr"], found
    assert found["mounts_unchanged"] and found["mounts"] > 1
