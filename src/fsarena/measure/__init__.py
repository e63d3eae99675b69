"""Measurement: the record and metric registry, the native launcher's rusage, executors (the
seam the runner acts through), the resource ledger, cgroups and kernel settings.

The collector is standard library only: a guest's agent imports it without numpy.
"""
