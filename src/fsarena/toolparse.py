"""Parsers of real tools' output: bonnie++'s CSV line and du's totals.

Each parser is tested against output captured on a real machine
(tests/fixtures/tools/), never against text written by hand.
"""

from __future__ import annotations

from fsarena.errors import FsarenaError

BONNIE_CSV_VERSION = "1.98"  # the CSV format of bonnie++ 1.97 .. 2.00a
KIB = 1024

# (field index in the 1.98 CSV, fsarena metric, factor to its unit). Throughputs are
# printed in KiB/s; fsarena stores MB/s (10^6 bytes), as the articles did.
_BONNIE_FIELDS: tuple[tuple[int, str, float], ...] = (
    (9, "bonnie_putc_mb_s", KIB / 1e6),
    (10, "bonnie_putc_cpu_pct", 1.0),
    (11, "bonnie_seq_write_mb_s", KIB / 1e6),
    (12, "bonnie_seq_write_cpu_pct", 1.0),
    (13, "bonnie_rewrite_mb_s", KIB / 1e6),
    (14, "bonnie_rewrite_cpu_pct", 1.0),
    (15, "bonnie_getc_mb_s", KIB / 1e6),
    (16, "bonnie_getc_cpu_pct", 1.0),
    (17, "bonnie_seq_read_mb_s", KIB / 1e6),
    (18, "bonnie_seq_read_cpu_pct", 1.0),
    (19, "bonnie_random_seeks_per_s", 1.0),
    (20, "bonnie_random_seeks_cpu_pct", 1.0),
    (26, "bonnie_seq_create_per_s", 1.0),
    (27, "bonnie_seq_create_cpu_pct", 1.0),
    (28, "bonnie_seq_stat_per_s", 1.0),
    (29, "bonnie_seq_stat_cpu_pct", 1.0),
    (30, "bonnie_seq_delete_per_s", 1.0),
    (31, "bonnie_seq_delete_cpu_pct", 1.0),
    (32, "bonnie_random_create_per_s", 1.0),
    (33, "bonnie_random_create_cpu_pct", 1.0),
    (34, "bonnie_random_stat_per_s", 1.0),
    (35, "bonnie_random_stat_cpu_pct", 1.0),
    (36, "bonnie_random_delete_per_s", 1.0),
    (37, "bonnie_random_delete_cpu_pct", 1.0),
)


def parse_bonnie_csv(text: str) -> dict[str, float]:
    """fsarena metrics from bonnie++'s `-q` CSV line.

    A test bonnie++ ran too briefly to time (under 500 ms) prints "+++++"
    instead of a number ("I would rather display no result than a wrong
    result"); such values and skipped tests (empty fields) are left out, so
    nothing is made up. `bonnie_tests_too_fast` counts the "+++++" rates.
    """
    lines = [line for line in text.splitlines() if line.startswith(BONNIE_CSV_VERSION + ",")]
    if not lines:
        raise FsarenaError(
            f"bonnie++ printed no CSV line of format {BONNIE_CSV_VERSION}; "
            "is this bonnie++ 1.97 or newer?"
        )
    fields = lines[-1].split(",")
    if len(fields) < 38:
        raise FsarenaError(f"bonnie++ CSV line has {len(fields)} fields, expected at least 38")
    values: dict[str, float] = {}
    too_fast = 0
    for index, metric, factor in _BONNIE_FIELDS:
        raw = fields[index].strip()
        if raw.startswith("+"):
            too_fast += not metric.endswith("_cpu_pct")
            continue
        if raw:
            try:
                values[metric] = float(raw) * factor
            except ValueError:
                raise FsarenaError(f"bonnie++ CSV field {index} is {raw!r}, not a number") from None
    values["bonnie_tests_too_fast"] = float(too_fast)
    return values


def parse_du_total(text: str) -> int:
    """Bytes from `du -s -B1 [--apparent-size] PATH` (the number before the tab)."""
    try:
        first = text.strip().splitlines()[0]
        return int(first.split("\t", 1)[0])
    except (IndexError, ValueError):
        raise FsarenaError(f"unexpected du output: {text[:200]!r}") from None
