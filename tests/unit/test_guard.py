"""The device guard's decisions, on recorded facts (no disk is touched here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fsarena.errors import FsarenaError
from fsarena.targets import guard
from fsarena.targets.guard import Facts, Node, Signature, losses, refusals

# lsblk -J -b -o NAME,PATH,TYPE,SIZE,MODEL,SERIAL,MOUNTPOINTS,MAJ:MIN of a disk
# with two partitions, the second holding an LVM volume.
LSBLK_DISK = {
    "name": "sdb",
    "path": "/dev/sdb",
    "type": "disk",
    "size": 500107862016,
    "model": "Samsung SSD 860 ",
    "serial": "S3Z9NB0K",
    "mountpoints": [None],
    "maj:min": "8:16",
    "children": [
        {"name": "sdb1", "path": "/dev/sdb1", "type": "part", "size": 1 << 30,
         "mountpoints": ["/boot/efi"], "maj:min": "8:17"},
        {"name": "sdb2", "path": "/dev/sdb2", "type": "part", "size": 2 << 30,
         "mountpoints": [None], "maj:min": "8:18",
         "children": [{"name": "vg-home", "path": "/dev/mapper/vg-home", "type": "lvm",
                       "size": 2 << 30, "mountpoints": ["/home"], "maj:min": "254:1"}]},
    ],
}  # fmt: skip


def _blank(kind: str = "part") -> Node:
    return Node("sdc1", "/dev/sdc1", kind, 8 << 30, "8:33", "WDC", "WX1")


def test_lsblk_tree_is_read_with_partitions_and_holders() -> None:
    disk = Node.from_lsblk(LSBLK_DISK)
    assert disk.model == "Samsung SSD 860" and disk.serial == "S3Z9NB0K"
    assert [n.name for n in disk.walk()] == ["sdb", "sdb1", "sdb2", "vg-home"]
    facts = Facts("/dev/sdb", disk)
    assert [p.path for p in facts.partitions] == ["/dev/sdb1", "/dev/sdb2"]
    assert [h.path for h in facts.holders] == ["/dev/mapper/vg-home"]
    assert any("holders" in r and "vg-home (lvm)" in r for r in refusals(facts))
    assert any("whole disk with partitions" in x for x in losses(facts))


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (Facts("/dev/sdc1", _blank(), mounts=(("/dev/sdc1", "/mnt/data"),)), "mounted"),
        (Facts("/dev/sdc1", _blank(), holds_root=True), "holds the root filesystem"),
        (Facts("/dev/sdc1", _blank(), root_disks=("/dev/sdc",)), "disk that holds the root"),
        (Facts("/dev/sdc1", _blank(), swaps=("/dev/sdc1",)), "active swap"),
        (Facts("/dev/sdc1", _blank(), kept_paths_on_it=("/srv/work",)), "/srv/work is on it"),
        (Facts("/dev/sdc1", _blank(), busy="exclusive open: busy"), "in use"),
    ],
)
def test_refusals(facts: Facts, expected: str) -> None:
    found = refusals(facts)
    assert len(found) == 1 and expected in found[0]


def test_clean_device_is_refused_for_nothing_but_still_needs_confirming() -> None:
    facts = Facts("/dev/sdc1", _blank())
    assert refusals(facts) == []
    assert "no signature was found" in losses(facts)[0]


def test_signatures_are_what_would_be_lost() -> None:
    facts = Facts("/dev/sdc1", _blank(), signatures=(Signature("ext4", "0x438", "home", "u-1"),))
    assert losses(facts) == ["it carries ext4 at 0x438 (label 'home', uuid u-1)"]
    assert "8.00 GiB" in facts.describe() and "WDC" in facts.describe()
    assert "serial WX1" in facts.describe() and "ext4 at 0x438" in facts.describe()


def _inspected(facts: Facts):  # type: ignore[no-untyped-def]
    return lambda device, kept, probe_signatures=True: facts


def test_confirmation_must_name_the_same_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    device = tmp_path / "dev-node"
    device.write_text("")
    alias = tmp_path / "by-id-link"
    alias.symlink_to(device)
    facts = Facts(str(device), _blank(), signatures=(Signature("ext4"),))
    monkeypatch.setattr(guard, "inspect", _inspected(facts))
    with pytest.raises(FsarenaError, match=r"would be destroyed.*carries ext4.*name it twice"):
        guard.check(str(device), None, [])
    with pytest.raises(FsarenaError, match="--destroy-data names /other, not this device"):
        guard.check(str(device), "/other", [])
    assert guard.check(str(alias), str(device), []) is facts, "compared after resolving links"


def test_refusals_win_over_confirmation(monkeypatch: pytest.MonkeyPatch) -> None:
    facts = Facts("/dev/sdc1", _blank(), mounts=(("/dev/sdc1", "/data"),))
    monkeypatch.setattr(guard, "inspect", _inspected(facts))
    with pytest.raises(FsarenaError, match=r"refusing.*mounted.*No option overrides"):
        guard.check("/dev/sdc1", "/dev/sdc1", [])
    with pytest.raises(FsarenaError, match="refusing to make a filesystem"):
        guard.recheck("/dev/sdc1", [])


def test_not_a_block_device(tmp_path: Path) -> None:
    with pytest.raises(FsarenaError, match="is not a block device"):
        guard.check(str(tmp_path), str(tmp_path), [])
