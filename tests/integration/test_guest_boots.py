"""A guest kernel is available only once it has booted here: one that panics at once is
"not available" in `check`, with its console's line, a run moves on to the next guest that
boots (installing the qemu guest when none is installed), and the same guest named
explicitly is refused before anything is made."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from fsarena.guest.kernels import GUESTS
from fsarena.session.file import load
from tests.integration.conftest import fsarena, leftovers, processes_using

PANIC = "Kernel panic - not syncing: fsarena test: this kernel panics at once"
SHORT = (
    'name = "short"\nfilesystems = ["jfs"]\n'
    'tasks = ["mkfs", "mount", "capacity_initial", "iso_copy_in", "umount"]\n'
)


@pytest.fixture
def panicking_uml(tmp_path: Path) -> dict[str, str]:
    """An environment whose linux.uml is a kernel that panics as it starts, whose boots are
    kept apart from this machine's, and whose qemu guest kernel must be installed anew."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / GUESTS["uml"].binary
    fake.write_text(f"#!/bin/sh\necho '{PANIC}'\nexit 1\n")
    fake.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FSARENA_GUEST_BOOTS": str(tmp_path / "boots.json"),
        "FSARENA_QEMU_GUEST_DIR": str(tmp_path / "qemu-guest"),
    }


def test_a_guest_that_panics_is_not_available_and_a_run_moves_on(
    workdir: Path, panicking_uml: dict[str, str]
) -> None:
    env = panicking_uml
    check = fsarena("check", "--fs", "jfs", "--workdir", str(workdir / "w"), check=False, env=env)
    line = next(x for x in check.stdout.splitlines() if x.startswith("[FAIL] guest kernel uml"))
    assert re.search(r"not available: does not boot here \(tried \d{4}-\d\d-\d\d\): ", line)
    assert PANIC in line and check.returncode == 1, check.stdout
    kept = json.loads(Path(env["FSARENA_GUEST_BOOTS"]).read_text())
    assert [r["booted"] for r in kept["uml"].values()] == [False]

    suite = workdir / "short.toml"
    suite.write_text(SHORT)
    out = workdir / "session.json"
    run = fsarena(
        "run", "--suite", str(suite), "--fs", "jfs", "--scale", "0.01", "-n", "1",
        "--workdir", str(workdir / "w"), "--output", str(out), env=env,
    )  # fmt: skip
    # No guest booted (uml panics; qemu's kernel is not in its directory): the qemu guest
    # is installed, each step with its size, then booted, and jfs runs there.
    err = run.stderr
    assert "installing the qemu guest" in err, err
    assert re.search(r"downloading Debian's kernel package linux-image-\S+ \(\d+ MB\)", err), err
    assert "the qemu guest is ready: its agent answered in" in err, err
    assert re.search(r"jfs runs in qemu \(TCG, an emulated CPU\) \(jfs@qemu\), not: .*"
                     r"jfs@uml: does not boot here: " + re.escape(PANIC), err), err  # fmt: skip
    session = load(out)
    assert set(session.filesystems()) == {"jfs@qemu", "ext4@qemu"}
    assert all(r.status == "ok" for r in session.runs), [r.error for r in session.runs]

    named = fsarena(
        "run", "--suite", str(suite), "--fs", "jfs@uml", "--scale", "0.01", "-n", "1",
        "--workdir", str(workdir / "w"), "--output", str(workdir / "refused.json"),
        check=False, env=env,
    )  # fmt: skip
    assert named.returncode == 2, named.stderr
    assert "jfs@uml cannot run here: User-Mode Linux (uml) does not boot here: " in named.stderr
    assert "--fs jfs@qemu would run it" in named.stderr
    assert not (workdir / "refused.json").exists()
    assert not processes_using(workdir)
    assert not leftovers(workdir)
