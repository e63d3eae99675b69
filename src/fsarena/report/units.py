"""Units for people: each column of figures gets the unit its magnitude calls for.

A metric declares one unit (measure.METRICS: "s", "MB", "MiB", "MB/s", ...);
a column of mount times in seconds reads "0.0147", the same in milliseconds
"14.7". So each column picks, from the family of its metric's unit, the
largest unit in which its typical (median) value is at least 1: µs, ms or s
for times; B, KB, MB, GB (powers of 1000) or B, KiB, MiB, GiB (powers of
1024, kept where the metric is binary) for sizes; B/s to GB/s for rates.
Counts and percentages keep their unit. Every figure then has three
significant digits (phrases.number): no exponent, one thousands separator.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from fsarena.analysis.phrases import number
from fsarena.measure.metrics import Metric

# A family: (unit, size of one unit in the family's base: seconds, bytes, bytes/s).
_TIME = (("µs", 1e-6), ("ms", 1e-3), ("s", 1.0))
_DECIMAL = (("B", 1.0), ("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("TB", 1e12))
_BINARY = (("B", 1.0), ("KiB", 2.0**10), ("MiB", 2.0**20), ("GiB", 2.0**30), ("TiB", 2.0**40))
_RATE = (("B/s", 1.0), ("KB/s", 1e3), ("MB/s", 1e6), ("GB/s", 1e9))
# A metric's declared unit: its family and the size of that unit in the family's base.
_FAMILIES: dict[str, tuple[tuple[tuple[str, float], ...], float]] = {
    "s": (_TIME, 1.0),
    "ms": (_TIME, 1e-3),
    "MB": (_DECIMAL, 1e6),
    "MiB": (_BINARY, 2.0**20),
    "MB/s": (_RATE, 1e6),
}


@dataclass(frozen=True)
class Unit:
    """How a column shows a metric's raw values: shown = raw * factor, in `label`."""

    label: str
    factor: float

    def text(self, raw: float) -> str:
        return number(raw * self.factor)

    def with_label(self, raw: float) -> str:
        """'14.7 ms'; a bare number for counts."""
        return f"{self.text(raw)} {self.label}".rstrip()


def column_unit(metric: Metric, raw_values: Iterable[float]) -> Unit:
    """The unit for a column of a metric's raw values, chosen by their median magnitude."""
    declared = Unit(metric.unit, metric.scale)
    family = _FAMILIES.get(metric.unit)
    values = [abs(v) for v in raw_values if v == v and v != 0]
    if family is None or not values:
        return declared
    units, size = family
    base = statistics.median(values) * metric.scale * size  # in seconds, bytes or bytes/s
    label, unit_size = units[0]
    for candidate, candidate_size in units:
        if base >= candidate_size:
            label, unit_size = candidate, candidate_size
    return Unit(label, metric.scale * size / unit_size)


def value_text(metric: Metric, raw: float) -> str:
    """One figure on its own, in the unit its own magnitude calls for: '14.7 ms'."""
    return column_unit(metric, [raw]).with_label(raw)


def bytes_text(raw: float) -> str:
    """A byte count that is no registered metric, on its own: '2.74 GB'."""
    label, size = _DECIMAL[0]
    for candidate, candidate_size in _DECIMAL:
        if abs(raw) >= candidate_size:
            label, size = candidate, candidate_size
    return f"{number(raw / size)} {label}"


# A number and its unit ("95 %", "1.2 s", "3,499 MB/s") and "% CI" never break across
# lines: on a phone or in a wrapped terminal line, "95 %" split as "95" / "% CI"
# reads as a different figure.
_GLUE = re.compile(r"(?<=\d) (?=%|×|[kKMGT]i?B\b|[µm]?s\b)|(?<=%) (?=CI\b)")
NBSP = "\u00a0"


def glued(text: str) -> str:
    """The text with non-breaking spaces between numbers and their units."""
    return _GLUE.sub(NBSP, text)
