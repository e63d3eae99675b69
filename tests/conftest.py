"""How the tests are spread over pytest-xdist's workers (./run-tests runs them in parallel).

`--dist loadgroup` sends every test of one group to one worker. A test module is one
group, so its module-scoped fixtures (a built dataset, a git history, a booted guest)
are made once, as in a serial run. Integration tests are independent otherwise: each
has its own work directory, ledger, images and loop devices (tests/integration/conftest.py
`workdir`), and checks what is left by that directory alone.

The exception: tests that change a setting the whole machine shares (vm.dirty_bytes, the
root blkio cgroup's throttle rules, a cgroup v2 parent's controllers). fsarena restores
such a setting only while the file still holds what it wrote (measure/sysctls.py), so two
of them interleaved could leave the first one's value behind. They form one group and
run one after the other.
"""

from __future__ import annotations

import pytest

# Modules that change machine-wide settings: one worker runs them all, in turn.
MACHINE_WIDE = "machine-wide settings"
SHARE_THE_MACHINE = {
    "test_ceiling_real.py",  # the root blkio cgroup's throttle rules
    "test_machine_real.py",  # blkio rules, vm.dirty_bytes, memory and cpu cgroups
    "test_umount_dirty.py",  # vm.dirty_bytes
    "test_cgroup_v2.py",  # a cgroup v2 parent's subtree_control
    "test_cgroups_real.py",
}


def group_of(item: pytest.Item) -> str:
    """The xdist group of a test: its module, or the machine-wide group."""
    module = item.path.name
    if module in SHARE_THE_MACHINE:
        return MACHINE_WIDE
    return str(item.path)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.xdist_group(group_of(item)))
