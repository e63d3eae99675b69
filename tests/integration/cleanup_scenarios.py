"""Scenarios of `fsarena cleanup`'s scope, each run inside a private mount namespace.

`python -m tests.integration.cleanup_scenarios NAME WORKDIR` is started by the tests
under `unshare --mount --propagation private`: a cleanup that unmounts too much can
then only unmount the namespace's copies, never the host's mounts. (Loop devices are
not namespaced: a scenario attaches its own and detaches exactly those.) It prints
one JSON object: what cleanup printed and exited with, and what was left.

FSARENA_CMD (a command line, default `python -m fsarena`) runs another build of
fsarena, to check that a test fails on older code; never point it at a build that
could clean up `/` (its loop devices are the machine's, not the namespace's).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fsarena.host.cleanup import mount_table, top_mount
from fsarena.host.ledger import Ledger

FSARENA = shlex.split(os.environ.get("FSARENA_CMD", "")) or [sys.executable, "-m", "fsarena"]


def sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


def cleanup(workdir: str) -> dict[str, Any]:
    out = subprocess.run(
        [*FSARENA, "cleanup", "--workdir", workdir], capture_output=True, text=True, check=False
    )
    return {"rc": out.returncode, "stdout": out.stdout, "stderr": out.stderr}


def digest(root: Path) -> dict[str, str]:
    """Every file under root and its content's hash (what "every byte" means)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in ("lock", "state.json")
    }


def mounted_from(target: Path) -> str:
    top = top_mount(str(target), mount_table())
    return f"{top.fstype} {top.source}" if top else ""


@contextlib.contextmanager
def fsarena_style_run(workdir: Path, hold_lock: bool) -> Iterator[dict[str, str]]:
    """A run's resources as fsarena makes them, with its ledger; its lock held if live.

    A loop image with ext4 at mnt/ext4 and a tmpfs source at source, each with a file.
    Undone on exit, whatever cleanup did (only this scenario's loop device is detached).
    """
    image, mnt, source = (
        workdir / "images" / "ext4-r1.img",  # the names a run gives them
        workdir / "mnt" / "ext4",
        workdir / "source",
    )
    for d in (image.parent, mnt, source):
        d.mkdir(parents=True)
    lock = open(workdir / "lock", "w")  # noqa: SIM115 (held for the scenario)
    if hold_lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as run/launch.py: workdir_lock
    ledger = Ledger(str(workdir))
    ledger.track("image", str(image))
    with open(image, "xb") as f:
        f.truncate(64 << 20)
    ledger.track("loop", str(image))
    device = sh("losetup", "--find", "--show", str(image))
    try:
        sh("mkfs.ext4", "-q", device)
        ledger.track("mount", str(mnt), device)
        sh("mount", device, str(mnt))
        (mnt / "data.txt").write_text("the live run's data\n" * 100)
        ledger.track("mount", str(source), "fsarena-source")
        sh("mount", "-t", "tmpfs", "-o", "size=8m", "fsarena-source", str(source))
        (source / "dataset.bin").write_bytes(os.urandom(4096))
        yield {"device": device, "image": str(image), "mnt": str(mnt), "source": str(source)}
    finally:
        for target in (source, mnt):
            while top_mount(str(target), mount_table()) is not None:
                if subprocess.run(["umount", str(target)], check=False).returncode != 0:
                    break
        backing = Path(f"/sys/class/block/{Path(device).name}/loop/backing_file")
        if backing.exists() and backing.read_text().strip().startswith(str(image)):
            subprocess.run(["losetup", "-d", device], check=False)
        lock.close()


def _run_state(run: dict[str, str]) -> dict[str, Any]:
    attached = sh("losetup", "-j", run["image"]) if os.path.exists(run["image"]) else ""
    return {
        "mnt": mounted_from(Path(run["mnt"])),
        "source": mounted_from(Path(run["source"])),
        "attached": run["device"] in attached,
        "image": os.path.exists(run["image"]),
        "files": digest(Path(run["mnt"])) | digest(Path(run["source"])),
    }


def users_tmpfs(workdir: Path) -> dict[str, Any]:
    """The user's own tmpfs is the work directory; a run once used it (its lock file is there)."""
    workdir.mkdir(parents=True)
    sh("mount", "-t", "tmpfs", "-o", "size=16m", "mydata", str(workdir))
    (workdir / "precious.txt").write_text("the user's own file\n" * 1000)
    (workdir / "notes").mkdir()
    (workdir / "notes" / "todo.md").write_text("- keep this\n")
    (workdir / "lock").write_text("")
    before = digest(workdir)
    result = cleanup(str(workdir))
    return result | {
        "files_kept": digest(workdir) == before and len(before) == 2,
        "mounted": mounted_from(workdir),
    }


def live_parent(workdir: Path) -> dict[str, Any]:
    """A live run's work directory is workdir/b; cleanup is asked for workdir."""
    with fsarena_style_run(workdir / "b", hold_lock=True) as run:
        before = _run_state(run)
        parent = cleanup(str(workdir))
        itself = cleanup(str(workdir / "b"))
        after = _run_state(run)
    return {"parent": parent, "itself": itself, "before": before, "after": after}


def killed_in_a_subdirectory(workdir: Path) -> dict[str, Any]:
    """A killed run in workdir/b: cleanup of workdir leaves it; of workdir/b removes it."""
    with fsarena_style_run(workdir / "b", hold_lock=False) as run:
        before = _run_state(run)
        parent = cleanup(str(workdir))
        kept = _run_state(run)
        itself = cleanup(str(workdir / "b"))
        after = _run_state(run)
    return {"parent": parent, "itself": itself, "before": before, "kept": kept, "after": after}


def rerun_over_leftovers(workdir: Path) -> dict[str, Any]:
    """A run killed with -9 left its resources; the user runs again without cleanup."""
    with fsarena_style_run(workdir / "w", hold_lock=False) as run:
        before = _run_state(run)
        argv = [*FSARENA, "run", "--workdir", str(workdir / "w"), "--fs", "ext4", "--scale",
                "0.01", "-n", "1", "--output", str(workdir / "s.json"),
                "--results-dir", str(workdir / "results")]  # fmt: skip
        out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
        after = _run_state(run)
    return {"rc": out.returncode, "stderr": out.stderr, "before": before, "after": after}


def hint_beside_a_live_run(workdir: Path) -> dict[str, Any]:
    """`run --dry-run` in a directory that holds a live run's work directory (workdir/b)."""
    with fsarena_style_run(workdir / "b", hold_lock=True) as run:
        before = _run_state(run)
        argv = [*FSARENA, "run", "--dry-run", "--workdir", str(workdir), "--fs", "ext4",
                "--scale", "0.01", "--results-dir", str(workdir / "results")]  # fmt: skip
        out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
        after = _run_state(run)
    notes = [line for line in out.stdout.splitlines() if line.startswith("note:")]
    return {"rc": out.returncode, "notes": notes, "before": before, "after": after}


def root(workdir: Path) -> dict[str, Any]:
    """`fsarena cleanup --workdir /`, scanned only: refused, and no mount changes."""
    before = sorted((m.mount_id, m.target) for m in mount_table())
    result = cleanup("/")
    after = sorted((m.mount_id, m.target) for m in mount_table())
    return result | {"mounts_unchanged": before == after, "mounts": len(before)}


ALL = (users_tmpfs, live_parent, killed_in_a_subdirectory, rerun_over_leftovers)
SCENARIOS: dict[str, Callable[[Path], dict[str, Any]]] = {
    f.__name__: f for f in (*ALL, hint_beside_a_live_run, root)
}

if __name__ == "__main__":
    print(json.dumps(SCENARIOS[sys.argv[1]](Path(sys.argv[2]))))
