"""Measurement: the record and metric registry, the native launcher's rusage, the collector
(diskstats, /proc/stat), the tools' text, where the native helpers are, an image's room.

The collector is standard library only: a guest's agent imports it without numpy. What
fsarena does to the machine (executors, ledger, cgroups, settings) is fsarena.host's.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "collect": (
        "Command",
        "Measurement",
        "Timed",
        "measure_commands",
        "read_device_stat",
        "wait_group_gone",
    ),
    "metrics": (
        "CEILING_TOLERANCE",
        "METRICS",
        "Metric",
        "ceiling_catches",
        "ceiling_tolerance",
        "metric_value",
    ),
    "native": (
        "find_native_tool",
        "native_tool",
    ),
    "room": ("room_needed_bytes",),
    "tooltext": (
        "*",
        "brief",
    ),
}
