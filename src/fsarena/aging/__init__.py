"""Filesystem aging: profiles as data, the seeded workload, snapshots and the layout it leaves.

A run with `--age PROFILE` ages each filesystem once per seed (fill to a
fullness, then Geriatrix-like churn rounds bounded by bytes written and time),
snapshots the aged image, restores it for every repetition and runs the
suite's tasks on it beside the same tasks on a fresh filesystem.
"""
