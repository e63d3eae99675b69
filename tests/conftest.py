"""How the tests are spread over pytest-xdist's workers (./run-tests runs them in parallel).

Every test of one group runs on one worker. A test module is one group, so its
module-scoped fixtures (a built dataset, a git history, an aged guest) are made once,
as in a serial run. Integration tests are independent otherwise: each has its own work
directory, ledger, images and loop devices (tests/integration/conftest.py `workdir`),
and checks what is left by that directory alone.

The exceptions share something of the machine and form one group each, run one after
the other by one worker:
- tests that change a setting the whole machine shares (vm.dirty_bytes, the root blkio
  cgroup's throttle rules, a cgroup v2 parent's controllers). fsarena restores such a
  setting only while the file still holds what it wrote (host/sysctls.py), so two of
  them interleaved could leave the first one's value behind;
- the fleet's tests: loopback sshd hosts at the same addresses, Ansible's state.

The groups are made by the scheduler below (xdist's own `xdist_group` marks do not
group under pytest 9: its suffix on the node id no longer reaches the scheduler), and
the slowest modules start first, so that no long one is left to run alone at the end.
"""

from __future__ import annotations

from typing import Any

import pytest

GROUPS = {
    "machine-wide settings": {
        "test_ceiling_real.py",  # the root blkio cgroup's throttle rules
        "test_machine_real.py",  # blkio rules, vm.dirty_bytes, memory and cpu cgroups
        "test_umount_dirty.py",  # vm.dirty_bytes
        "test_cgroup_v2.py",  # a cgroup v2 parent's subtree_control
        "test_cgroups_real.py",
    },
    "fleet": {"test_fleet_build.py", "test_fleet_hosts.py", "test_fleet_run.py",
              "test_fleet_stop.py"},
}  # fmt: skip
# The modules that take longest (CI's --durations), started first.
SLOW_FIRST = (
    "test_gitrepo_build.py",
    "test_aging_guest.py",
    "test_guest_boots.py",
    "test_drivers.py",
    "test_fleet_run.py",
    "test_fleet_stop.py",
    "test_article_a.py",
    "test_aging_real.py",
    "test_git_replay_real.py",
    "test_fault_matrix.py",
    "test_article_suites.py",
)


def group_of(nodeid: str) -> str:
    """The group of a test, from its node id: its module, or the shared group it is in."""
    path = nodeid.split("::", 1)[0]
    module = path.rsplit("/", 1)[-1]
    return next((group for group, modules in GROUPS.items() if module in modules), path)


def _rank(item: pytest.Item) -> int:
    name = item.path.name
    return SLOW_FIRST.index(name) if name in SLOW_FIRST else len(SLOW_FIRST)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest modules first (a stable sort: every other test keeps its order)."""
    items.sort(key=_rank)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's scope scheduler, its scopes the groups above."""
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return ByGroup(config, log)
