"""Sessions built from constructed samples, for testing statistics, verdicts and reports."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fsarena.measure.collect import Measurement
from fsarena.session.file import CeilingSample, Run, Session

# Each task's kind, timed flag and whether it writes, as task_info records them.
TASKS: dict[str, tuple[str, bool, bool]] = {
    "mkfs": ("lifecycle", True, False),
    "iso_copy_in": ("large_files", True, True),
    "dd_read": ("large_files", True, False),
    "tree_copy_in": ("file_trees", True, True),
    "tree_find_pattern": ("listing_search", True, False),
    "portage_compress": ("archives", True, True),
    "capacity_initial": ("space", False, False),
}


PAYLOAD = {"iso_copy_in": "write", "dd_read": "read"}  # tasks that move a known payload
PAYLOAD_BYTES = 100_000_000


def measurement(wall_s: float, cpu_share: float = 0.4, **extra: float) -> Measurement:
    return Measurement(
        wall_s=wall_s,
        user_s=wall_s * cpu_share / 2,
        sys_s=wall_s * cpu_share / 2,
        minor_faults=100,
        major_faults=1,
        max_rss_kib=2048,
        device_read_bytes=1_000_000,
        device_write_bytes=100_000_000,
        system_busy_s=wall_s,
        system_iowait_s=0.1,
        exit_code=0,
        extra=dict(extra),
    )


def make_session(
    samples: Mapping[str, Mapping[str, Sequence[float]]],
    cpu_share: float = 0.4,
    drivers: Mapping[str, str] | None = None,
    ceilings: Mapping[str, float] | None = None,
) -> Session:
    """samples[filesystem][task] = the task's headline values, one per repetition.

    Timed tasks get a measurement whose wall time is the value (payload tasks move
    100 MB); probes (capacity_initial) get it as capacity_pct. ceilings maps a
    direction ("write", "read") to the device's bytes per second.
    """
    filesystems = list(samples)
    tasks = [t for t in TASKS if any(t in per_task for per_task in samples.values())]
    runs = []
    for fs, per_task in samples.items():
        for task, values in per_task.items():
            _, timed, _ = TASKS[task]
            for rep, value in enumerate(values, start=1):
                runs.append(
                    Run(
                        filesystem=fs,
                        task=task,
                        repetition=rep,
                        started_at="2026-01-01T00:00:00+00:00",
                        status="ok",
                        measurement=(
                            measurement(value, cpu_share, **_payload(task)) if timed else None
                        ),
                        values={} if timed else {"capacity_pct": value},
                    )
                )
    return Session(
        tool_version="0.0.test",
        created_at="2026-01-01T00:00:00+00:00",
        status="complete",
        host={"kernel": "6.0-test", "cpu_model": "test CPU", "cpus": 2},
        plan={
            "suite": "constructed",
            "filesystems": filesystems,
            "tasks": tasks,
            "repetitions": max(len(v) for p in samples.values() for v in p.values()),
            "scale": 1.0,
            "seed": 1,
            "task_info": {
                t: {
                    "kind": TASKS[t][0],
                    "timed": TASKS[t][1],
                    "writes": TASKS[t][2],
                    "payload": PAYLOAD.get(t),
                }
                for t in tasks
            },
        },
        profiles_as_run={
            fs: {"name": fs, "fstype": fs, "driver": (drivers or {}).get(fs, "kernel")}
            for fs in filesystems
        },
        runs=runs,
        ceilings=[
            CeilingSample(
                repetition=1,
                direction=direction,
                bytes_per_s=rate,
                size_bytes=256 << 20,
                argv=["fio"],
            )
            for direction, rate in (ceilings or {}).items()
        ],
    )


def _payload(task: str) -> dict[str, float]:
    return {"payload_bytes": PAYLOAD_BYTES} if task in PAYLOAD else {}
