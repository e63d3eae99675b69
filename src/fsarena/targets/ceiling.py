"""The device's own ceiling: raw sequential write and read throughput of the target, by fio.

Article C called the gap between a synthetic benchmark and a real copy
"theory vs practice". fsarena measures the theory on the very setup the
filesystems get: a fresh image of the same size behind the same
direct-I/O loop device, written then read sequentially by fio with O_DIRECT,
4 MiB blocks and 16 requests in flight (libaio). That was the fastest
configuration measured here (1 MiB blocks, or 32-64 in flight, were slower:
kernel readahead and writeback issue large requests with many in flight, and
a ceiling below what they reach would wrongly flag honest results). It is
measured twice per direction once per session, before the first round's
filesystems, in the directions the plan's tasks are judged in (a plan whose
tasks only write gets no read passes: nothing would be held against them;
a plan that judges none gets both, as the report's context). A round that
starts a minute or more after the last measurement (DRIFT_EVERY_S) runs one
short pass (DRIFT_BYTES) as a drift check, so a machine that slows down or
speeds up is seen alongside the filesystems at a fraction of the cost (four
fio runs per round were a sixth of a default run's time); rounds closer
together than that share the figure. The ceiling is the best sample so far.

A task whose logical throughput beats the ceiling by more than its noise
cannot have reached the device: its run is recorded as invalid (cache
contamination), never reported as a win. The margin, measured here (a VM
whose virtual disk is itself cached by the hypervisor, the hard case): fio's
samples of one configuration spread by about 30 %; cold buffered reads of a
70 MB file on ext4 reached 0.36-1.6 GB/s against best fio samples of
1.3-2.0 GB/s, while the same read from the page cache ran at 6.2-7.0 GB/s.
So only rates above 1.5x the ceiling are flagged; between 100 % and 150 % a
result is shown as it is, as a share of the ceiling above 100 %. Since that
ratio is the machine's, each session also reads the device through the page
cache (measure_ceiling's cache pass) and derives the tolerance of each
direction from it (measure/metrics.py, ceiling_tolerance): sqrt(page cache /
that direction's ceiling), at least 1.5. A figure served from memory, read or
written, runs at the page cache's speed, so the same cached speed stands
against the write ceiling and the read one. Where the page cache is not faster
than 1.5x the device (NVMe, or this VM under load), the report says cached
figures cannot be caught.
"""

from __future__ import annotations

import json
from contextlib import ExitStack
from typing import Literal

from fsarena.errors import FsarenaError
from fsarena.host.executor import Executor
from fsarena.interrupt import whole
from fsarena.measure.collect import Command
from fsarena.session.file import CeilingSample
from fsarena.targets import Target

Direction = Literal["write", "read"]
DIRECTIONS: tuple[Direction, ...] = ("write", "read")
MIB = 1 << 20
MIN_BYTES = 256 * MIB  # below this fio's start-up dominates
MAX_BYTES = 1024 * MIB  # beyond this the figure no longer changes, only the time spent
BLOCK = "4M"
IODEPTH = 16
PASSES = 2  # per direction and round: write, read, write, read
DRIFT_BYTES = 256 * MIB  # a drift check: one pass of this size
# A round starting this long after the last measurement of the ceiling gets a drift
# check; closer rounds share it. A minute: a default run's rounds (34-39 s here, five
# filesystems) get one every other round, four in a run of ten; a small run's rounds of
# ten seconds (two filesystems), which paid a fio pass apiece (0.4 s, 4 % of a round),
# share round 1's.
DRIFT_EVERY_S = 60.0
# fio times with clock_gettime (the vDSO's monotonic clock) instead of testing the
# CPU's counter first: that test cost every fio process 0.07 s here (0.51 -> 0.44 s
# for a 256 MiB write, five alternated pairs), and a clock read per I/O of 4 MiB costs
# nothing.
CLOCK = ("--clocksource=clock_gettime",)
CACHE_BYTES = 256 * MIB  # the page cache's read speed: this much read (dd, then fio), buffered


def ceiling_bytes(largest_file_bytes: int, device_bytes: int) -> int:
    """How much fio moves: the largest single file of the plan, within bounds and the device."""
    size = min(max(largest_file_bytes, MIN_BYTES), MAX_BYTES, device_bytes)
    return size // MIB * MIB


def fio_argv(device: str, direction: Direction, size_bytes: int) -> tuple[str, ...]:
    return (
        "fio",
        "--name=fsarena-ceiling",
        f"--filename={device}",
        f"--rw={direction}",
        f"--bs={BLOCK}",
        "--direct=1",
        "--ioengine=libaio",
        f"--iodepth={IODEPTH}",
        f"--size={size_bytes}",
        *CLOCK,
        "--output-format=json",
    )


def parse_fio(text: str, direction: Direction) -> tuple[float, int]:
    """(bytes per second, bytes moved) of the one job in fio's JSON output."""
    try:
        job = json.loads(text)["jobs"][0][direction]
        return float(job["bw_bytes"]), int(job["io_bytes"])
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise FsarenaError(
            f"fio's output could not be read ({exc!r}); is fio installed (apt-get install fio)?"
        ) from exc


def cache_argv(device: str, size_bytes: int) -> tuple[str, ...]:
    """fio reading the device through the page cache (buffered, one job, psync)."""
    return ("fio", "--name=fsarena-page-cache", f"--filename={device}", "--rw=read",
            f"--bs={BLOCK}", "--direct=0", "--ioengine=psync", f"--size={size_bytes}",
            "--invalidate=0", *CLOCK, "--output-format=json")  # fmt: skip


def measure_ceiling(
    executor: Executor,
    target: Target,
    nbytes: int,
    output: str,
    timeout_s: float,
    repetition: int,
    drift: bool = False,
    cache: bool = False,
    directions: tuple[Direction, ...] = DIRECTIONS,
) -> list[CeilingSample]:
    """Set the target up, let fio write then read it with cold caches, tear it down.

    directions: the passes, PASSES times each in turn ("write" first: a read needs
    data written). drift: one pass of at most DRIFT_BYTES in the first direction
    instead (a later round's check). cache: then read CACHE_BYTES of it through the
    page cache (buffered; dd fills the cache, then fio reads it from there): the
    speed a cached figure would show on this machine, from which the contamination
    tolerance of each direction is derived.
    """
    samples = []
    if "read" in directions and "write" not in directions:
        directions = DIRECTIONS  # a fresh image reads as holes: write before reading
    passes = directions[:1] if drift else directions * PASSES
    if drift:
        nbytes = min(nbytes, DRIFT_BYTES)
    with ExitStack() as stack:
        stack.callback(_release, target, executor)
        device = target.setup(executor)
        for direction in passes:
            argv = fio_argv(device, direction, nbytes)
            # O_DIRECT on a fresh device: only the device's own cache could matter, and
            # flushing it costs nothing, where a machine-wide drop cost 0.1-0.3 s.
            if not executor.flush_device(device):
                executor.drop_caches()
            timed = executor.measure([Command(argv, stdout_path=output)], device, timeout_s)
            if timed.measurement.exit_code != 0:
                raise FsarenaError(f"fio could not measure {device}: {timed.stderr}")
            rate, moved = parse_fio(executor.read_text(output), direction)
            samples.append(
                CeilingSample(
                    repetition=repetition,
                    direction=direction,
                    bytes_per_s=rate,
                    size_bytes=moved,
                    argv=list(argv),
                    kind="drift" if drift else "full",
                )
            )
        if cache and not drift:
            samples.append(_page_cache(executor, device, nbytes, output, timeout_s, repetition))
    return samples


def _release(target: Target, executor: Executor) -> None:
    with whole():  # never cut short by a stop signal (a detach killed half way): raised after
        target.teardown(executor)


def _page_cache(
    executor: Executor, device: str, nbytes: int, output: str, timeout_s: float, repetition: int
) -> CeilingSample:
    size = min(nbytes, CACHE_BYTES)
    argv = cache_argv(device, size)
    # dd fills the page cache (the same sequential buffered reads; a first fio pass
    # cost 0.3-0.7 s more, fio's fixed start-up), then fio reads from it. A block
    # device's page cache is dropped when its last opener closes it, so a shell holds
    # it open across both (measured without that: the "cached" pass ran at disk speed).
    script = (
        'exec 3<"$0"; dd if="$0" of=/dev/null bs=1M count="$1" status=none && shift && exec "$@"'
    )
    both = Command(("sh", "-c", script, device, str(size // MIB), *argv), stdout_path=output)
    timed = executor.measure([both], device, timeout_s)
    if timed.measurement.exit_code != 0:
        raise FsarenaError(f"fio could not read {device} through the page cache: {timed.stderr}")
    rate, moved = parse_fio(executor.read_text(output), "read")
    return CeilingSample(repetition=repetition, direction="read", bytes_per_s=rate,
                         size_bytes=moved, argv=list(argv), kind="cache")  # fmt: skip
