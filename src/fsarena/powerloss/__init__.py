"""Power-loss (crash-consistency) testing: record a workload's writes and flushes, cut the power.

A filesystem runs on a loop device whose backing file sits on flogfs, a small
FUSE logger (native/flogfs.c) that logs every write and every flush in order,
plus markers the workload writes after each durability promise. Crash states
are rebuilt from the post-mkfs snapshot and the log (everything up to a flush,
plus prefixes and random subsets of the writes after it), then each is
mounted (recovery, timed), checked against the promises made before the cut,
unmounted and fsck'ed. The design and its measurements: shared/design/powerloss.md.

Modules: log (the log format and replay), workload (workloads as data and
running them), model (what each promise guarantees: the oracle), states (the
crash-state generator), record (recording through the logger), check (one
state: build, mount, oracle, fsck), records (the stored results and their
statistics, plain data for reports), engine (per filesystem and workload,
the negative control first).

This package's __init__ imports nothing, so reports can import
fsarena.powerloss.results without the machinery.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "engine": (
        "*",
        "ControlFailed",
        "DEFAULT_STATES",
        "Options",
        "Progress",
        "control_figures",
        "control_refusal",
        "run_control",
        "scratch",
        "test_filesystem",
        "testable",
    ),
    "recorder": ("image_size",),
    "results": (
        "PowerlossDetails",
        "UNSYNCED_OUTCOMES",
        "VALUE_METRICS",
        "WorkloadResult",
        "WorkloadStats",
        "filesystem_values",
        "parse_details",
        "summarize",
    ),
    "workload": ("select",),
}
