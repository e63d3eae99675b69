"""The fleet: one comparison on many hosts through Ansible, and the merge of their sessions.

fleet.merge checks that sessions may be merged and computes the per-host ratios;
fleet.render says the fleet report as the report's blocks (every document format
lays them out) or exports its cells as CSV and JSON; fleet.run drives ansible-runner with the
playbook shipped in fleet/playbook.yml. Heavy libraries (ansible_runner) are
imported only by `fsarena fleet run`.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "host": (
        "run_recorded",
        "stop_recorded",
    ),
    "merge": (
        "build",
        "load_hosts",
    ),
    "render": ("render",),
    "run": (
        "FleetRun",
        "StopRequests",
        "execute",
    ),
}
