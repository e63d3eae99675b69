"""The host: everything fsarena does to the machine, and the seam it does it through.

The executors (the seam the runner acts through: the protocols in seams.py, the real
executor in executor.py), the resource ledger and what cleanup may undo (ledger.py,
cleanup.py), cgroups, kernel settings (sysctls.py), mounts and servers. Standard library
only, as the measurement it stands on: a guest's agent imports it.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "cgroups": ("*",),
    "cleanup": (
        "Claims",
        "Foreign",
        "LOCK_FILE",
        "claims",
        "cleanup",
        "has_record",
        "in_the_way",
        "refusal",
    ),
    "executor": (
        "Executor",
        "Guest",
        "GuestSpec",
        "Host",
        "RealExecutor",
        "Runtime",
        "SpaceInfo",
        "TaskExecutor",
        "run_helper_group",
    ),
    "ledger": (
        "Ledger",
        "UNDO",
        "WorkdirUnwritable",
        "exited",
        "json_items",
        "release_under",
        "unwritable",
        "workdir_trouble",
    ),
    "seams": (
        "Runtime",
        "TaskExecutor",
    ),
    "servers": (
        "stop_tracer",
        "tracer_identity",
    ),
    "sysctls": ("*",),
}
