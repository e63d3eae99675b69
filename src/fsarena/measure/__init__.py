"""Measurement: the record and metric registry, the native launcher's rusage, the collector
(diskstats, /proc/stat), the tools' text, where the native helpers are, an image's room.

The collector is standard library only: a guest's agent imports it without numpy. What
fsarena does to the machine (executors, ledger, cgroups, settings) is fsarena.host's.
"""
