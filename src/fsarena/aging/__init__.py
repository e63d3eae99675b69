"""Filesystem aging: profiles as data, the seeded workload, snapshots and the layout it leaves.

A run with `--age PROFILE` ages each filesystem once per seed (fill to a
fullness, then Geriatrix-like churn rounds bounded by bytes written and time),
snapshots the aged image, restores it for every repetition and runs the
suite's tasks on it beside the same tasks on a fresh filesystem.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "device": ("device_class",),
    "gitreplay": (
        "HOST_COPY",
        "reference",
    ),
    "layout": ("free_space",),
    "phase": ("age_mounted",),
    "profiles": (
        "AgeProfile",
        "resolve_age",
    ),
    "runtime": (
        "*",
        "guest_unsupported",
    ),
    "snapshot": ("snapshot",),
    "workload": (
        "AgingPlan",
        "MARK",
        "ROOT",
        "Writer",
        "mark_tree",
    ),
}
