"""Parsers of real tools' output: bonnie++'s CSV, du, fs_mark, dbench, fio JSON, pgbench.

Each parser is tested against output captured on a real machine
(tests/fixtures/tools/), never against text written by hand.
"""

from __future__ import annotations

import json
import math
import re

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


# ---------------------------------------------------------------- today's server tools


def _number(pattern: str, text: str, what: str) -> float:
    match = re.search(pattern, text, re.MULTILINE)
    if not match:
        raise FsarenaError(f"{what} not found in the tool's output: {text[-300:]!r}")
    return float(match[1])


def parse_fsmark(text: str) -> float:
    """Files/s from fs_mark 3.3's table (the last row's fourth column)."""
    rows = [
        line.split()
        for line in text.splitlines()
        if re.fullmatch(r"\s*\d+\s+\d+\s+\d+\s+[\d.]+\s+\d+\s*", line)
    ]
    if not rows:
        raise FsarenaError(f"fs_mark printed no result row: {text[-300:]!r}")
    return float(rows[-1][3])


def parse_dbench(text: str) -> tuple[float, float]:
    """(MB/s, max latency ms) from dbench 4.0's "Throughput X MB/sec ... max_latency=Y ms"."""
    mb_s = _number(r"^Throughput ([\d.]+) MB/sec", text, "dbench's Throughput line")
    latency = _number(r"max_latency=([\d.]+) ms", text, "dbench's max_latency")
    return mb_s, latency


def parse_fio(text: str, direction: str) -> dict[str, float]:
    """IOPS, mean and p99 completion latency (ms), and fsync p99, from fio's JSON output."""
    try:
        job = json.loads(text[text.index("{") :])["jobs"][0]
        side = job[direction]
        values = {
            "fio_iops": float(side["iops"]),
            "fio_lat_mean_ms": float(side["clat_ns"]["mean"]) / 1e6,
            "fio_lat_p99_ms": float(side["clat_ns"]["percentile"]["99.000000"]) / 1e6,
        }
        if "total_ios" in side:  # the work done in the fixed time (CPU per I/O)
            values["fio_ios"] = float(side["total_ios"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise FsarenaError(f"fio's JSON output lacks {exc}: is fio >= 3.0 installed?") from None
    sync = job.get("sync", {}).get("lat_ns", {}).get("percentile", {})
    if "99.000000" in sync and job["sync"].get("total_ios"):
        values["fio_sync_p99_ms"] = float(sync["99.000000"]) / 1e6
    return values


def parse_pgbench(text: str) -> dict[str, float]:
    """TPS, average latency, transactions and failures from pgbench 15's summary."""
    done = _number(r"^number of transactions actually processed: (\d+)", text, "transactions")
    if done == 0:
        # pgbench prints no tps or latency then (seen in a User-Mode Linux guest).
        raise FsarenaError("pgbench completed no transaction in its run: see the server's log")
    return {
        "pgbench_tps": _number(r"^tps = ([\d.]+)", text, "pgbench's tps"),
        "pgbench_latency_avg_ms": _number(r"^latency average = ([\d.]+) ms", text, "latency"),
        "pgbench_transactions": _number(
            r"^number of transactions actually processed: (\d+)", text, "transactions"
        ),
        "pgbench_failed": _number(r"^number of failed transactions: (\d+)", text, "failures"),
    }


def percentile_from_pgbench_log(lines: list[str], pct: float) -> float:
    """The pct-th percentile (nearest rank) of the latencies, in ms, of pgbench --log lines.

    Each line is "client_id transaction_no time_us script_no epoch epoch_us"
    (pgbench 15 documentation, "Per-Transaction Logging"); failed or skipped
    transactions print a word instead of time_us and are left out.
    """
    latencies = sorted(
        int(fields[2]) for line in lines if len(fields := line.split()) >= 3 and fields[2].isdigit()
    )
    if not latencies:
        raise FsarenaError("pgbench's transaction log holds no completed transaction")
    rank = max(1, math.ceil(pct / 100 * len(latencies)))
    return latencies[rank - 1] / 1000.0
