"""The package map: what each package of src/fsarena may import, and the leaves.

Data, read by tests/unit/test_layers.py (which enforces it on every import) and by
scripts/gen_docs.py (which writes it into docs/development.md), so the two cannot drift.
"""

from __future__ import annotations

# package -> the packages it may import directly (itself and the leaves always allowed).
# Lower rows never import higher ones; the table has no cycle (checked below).
ALLOWED: dict[str, set[str]] = {
    # measurement: the record, the metric registry, the collector, the native launcher;
    # the standard library only (a guest's agent imports it)
    "measure": set(),
    # the machine: the executors' seam, the ledger and cleanup, cgroups, settings, mounts,
    # servers; the standard library only, as measure (a guest's agent imports it)
    "host": {"measure"},
    # recording a service's calls on a production machine: stdlib only, as the ledger
    "capture": {"datasets", "host"},
    "session": {"measure"},
    "analysis": {"measure", "session"},
    # specs, generators, manifests and verification; native helpers' paths (measure),
    # the seam's Runtime (host: a copy verified inside a guest, as its job)
    "datasets": {"host", "measure"},
    "guest": {"datasets", "host", "measure"},
    "filesystems": {"guest", "measure"},
    "aging": {"datasets", "filesystems", "host", "measure"},
    "powerloss": {"filesystems", "host", "measure", "session"},
    "tasks": {"aging", "capture", "datasets", "filesystems", "host", "measure", "powerloss"},
    "plan": {"aging", "capture", "datasets", "filesystems", "measure", "tasks"},
    "targets": {"aging", "datasets", "filesystems", "guest", "host", "measure", "plan", "session"},
    "machines": {"guest", "host", "measure", "plan", "session", "targets"},
    "report": {"analysis", "measure", "powerloss", "session"},
    # many sessions: the fleet's merge and report, the results store's history; each says
    # what it found as the report's blocks, laid out by the report's renderers
    "store": {"analysis", "measure", "report", "session"},
    "fleet": {"analysis", "measure", "report", "session"},
    # results that travel: bundles of sessions and the view merged from many
    "share": {"analysis", "measure", "report", "session"},
    "run": {
        "aging", "analysis", "datasets", "filesystems", "guest", "host", "machines", "measure",
        "plan", "powerloss", "session", "targets", "tasks",
    },
    "cli": {
        "aging", "analysis", "capture", "datasets", "filesystems", "fleet", "guest", "host",
        "machines", "measure", "plan", "powerloss", "report", "run", "session", "share",
        "store", "targets", "tasks",
    },
}  # fmt: skip
# Leaves every package may import: they import nothing of fsarena but each other (checked
# below).
LEAVES = {"errors", "interrupt", "kinds", "stopping"}
