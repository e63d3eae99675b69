"""Sharing a session `fsarena run` records here: no byte of this host, its paths or devices in
the bundle; the device class read from this machine's real devices (loop, zram, its disk)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from fsarena.session.file import load
from fsarena.targets.device_class import classify, for_block_device, for_path
from tests import zram
from tests.integration.conftest import fsarena

SECRET = "zq-share-secret-9911"  # in the work directory's path: must not travel


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """A real run on ext4 and xfs at a small scale, and its bundle (one run for the module)."""
    from tests.integration.conftest import leftovers, new_workdir

    top = new_workdir()
    work = top / SECRET / "w"
    results = tmp_path_factory.mktemp("results")
    env = {**os.environ, "XDG_CONFIG_HOME": str(results / "config")}
    try:
        fsarena("run", "--fs", "ext4,xfs", "--scale", "0.01", "-n", "2", "--no-warmup",
                "--quiet", "--workdir", str(work), "--results-dir", str(results),
                "--output", str(results / "s.json"))  # fmt: skip
        bundle = results / "s.bundle.json"
        fsarena("share", str(results / "s.json"), "-o", str(bundle), env=env)
        assert not leftovers(top)
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)
    return results / "s.json", bundle, env


def test_no_byte_of_this_host_travels(shared: tuple[Path, Path, dict[str, str]]) -> None:
    session_path, bundle, _ = shared
    session = load(session_path)
    text = bundle.read_text()
    h, b = session.host, session.host.workdir_backing
    assert session.comparison.device.label.startswith("loop image on ")
    for value in (h.machine_id, h.workdir, SECRET, h.kernel, h.kernel_build, b.device,
                  session.plan.workdir, str(session_path.parent)):  # fmt: skip
        assert value and value not in text, value
    if b.model:
        assert b.model not in text
    # the host name as a word (this machine's may be as short as "vm")
    assert not re.search(rf"(?<![A-Za-z0-9]){re.escape(h.hostname)}(?![A-Za-z0-9])", text)
    loops = {d for c in session.ceilings for a in c.argv for d in re.findall(r"/dev/\w+", a)}
    assert loops and not any(loop in text for loop in loops)
    assert "/dev/" not in text and "/var/" not in text and not re.search(r'"/', text)
    for user in {os.environ.get("SUDO_USER", ""), os.environ.get("USER", "")} - {"", "root"}:
        assert user not in text


def test_the_real_bundle_verifies_and_a_changed_figure_does_not(
    shared: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    _, bundle, env = shared
    ok = fsarena("share", "--verify", str(bundle), env=env)
    assert "verifies" in ok.stdout
    data = json.loads(bundle.read_text())
    run = next(r for r in data["bundle"]["runs"] if r["measurement"])
    run["measurement"]["wall_s"] *= 0.5
    changed = tmp_path / "changed.bundle.json"
    changed.write_text(json.dumps(data, indent=1))
    bad = fsarena("share", "--verify", str(changed), check=False, env=env)
    assert bad.returncode == 2 and "does not verify" in bad.stderr


def test_a_view_of_one_host_places_nothing_and_says_why(
    shared: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    session_path, bundle, env = shared
    page = tmp_path / "view.html"
    fsarena("share", "view", str(bundle), "--mine", str(session_path), "-o", str(page), env=env)
    html = page.read_text()
    assert "<svg" in html and "too few" in html and "<script" not in html


def test_this_machines_devices_are_classed_from_sysfs(tmp_path: Path) -> None:
    root = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "-T", "/var/tmp"], capture_output=True,
                          text=True, check=True).stdout.split("[")[0].strip()  # fmt: skip
    disk = for_path("/var/tmp")
    assert disk == for_block_device(root) and disk.kind == "disk"
    image = Path("/var/tmp") / f"fsarena-class-{os.getpid()}.img"
    image.write_bytes(b"\0" * (1 << 20))
    try:
        loop = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
        try:
            found = classify(Path("/sys/class/block", Path(loop).name))
            assert found.label == f"loop image on {disk.label}" and found.kind == "loop"
        finally:
            subprocess.run(["losetup", "-d", loop], check=True)
    finally:
        image.unlink()
    if zram.available():
        with zram.zram_device(64 << 20) as device:
            assert for_block_device(device).label == "zram (compressed RAM)"
