"""Analysis: statistics over raw samples, evidence, verdicts per kind of work, adaptive stopping.

Reads session records and the metric registry only; never runs anything.
"""
