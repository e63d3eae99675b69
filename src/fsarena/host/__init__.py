"""The host: everything fsarena does to the machine, and the seam it does it through.

The executors (the seam the runner acts through: the protocols in seams.py, the real
executor in executor.py), the resource ledger and what cleanup may undo (ledger.py,
cleanup.py), cgroups, kernel settings (sysctls.py), mounts and servers. Standard library
only, as the measurement it stands on: a guest's agent imports it.
"""
