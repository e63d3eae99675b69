"""The power-loss test of one filesystem: every workload recorded, its states generated and checked.

Order per workload: record through the logger; self-check (full replay ==
final image, else the recording is invalid and nothing of it is judged);
generate the crash states; time clean mounts of the final image; check each
state. The negative control (POWERLOSS_CONTROL: no cache flushes) runs first,
on one workload, and must lose fsync'ed data; otherwise the harness could not
see losses and no result may be reported (ControlFailed).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from fsarena.errors import FsarenaError
from fsarena.filesystems.drivers import probe
from fsarena.filesystems.profiles import POWERLOSS_CONTROL, FilesystemProfile
from fsarena.interrupt import checkpoint
from fsarena.powerloss.check import Checker
from fsarena.powerloss.log import FlogLog
from fsarena.powerloss.model import Model
from fsarena.powerloss.recorder import clean_mount_ms, discard, image_size, record, replay_matches
from fsarena.powerloss.results import (
    LogFacts,
    PowerlossDetails,
    WorkloadResult,
    summarize,
)
from fsarena.powerloss.scratch import require_fuse, tmpfs
from fsarena.powerloss.states import generate
from fsarena.powerloss.workload import Workload, select

GIB = 1 << 30
DEFAULT_STATES = 300  # per filesystem and workload: all distinct states of most workloads
CONTROL_STATES = 40
CONTROL_WORKLOAD = "create-fsync"
SAVE_LIMIT = 3  # crash states kept for inspection per filesystem and workload
TMPFS_BYTES = 8 * GIB  # an upper bound: a tmpfs takes only what is written (~0.2 GB here)

Progress = Callable[[str], None]


class ControlFailed(FsarenaError):
    """The negative control lost nothing: the harness cannot see losses."""


@dataclass(frozen=True)
class Options:
    states_cap: int
    seed: int
    workloads: tuple[Workload, ...]
    save_to: Path | None = None  # where states that lost fsync'ed data are kept


def testable(profile: FilesystemProfile) -> str:
    """Empty when the power-loss test can run this filesystem here, else why not."""
    if profile.driver != "kernel":  # it records and replays writes under the host's kernel
        return f"the power-loss test runs host kernel drivers only, not the {profile.driver_label}"
    support = probe(profile)
    if not support.available:
        return support.reason
    if not profile.fsck:
        return "no read-only fsck is known for it (FilesystemProfile.fsck)"
    return ""


@contextlib.contextmanager
def scratch(workdir: Path) -> Iterator[Path]:
    """The private tmpfs every recording and crash state lives in; unmounted on exit."""
    require_fuse()
    with tmpfs(workdir / "crash-tmpfs", TMPFS_BYTES) as path:
        yield path


def test_workload(
    profile: FilesystemProfile,
    workload: Workload,
    area: Path,
    options: Options,
    progress: Progress,
    control: bool = False,
) -> WorkloadResult:
    cap = min(options.states_cap, CONTROL_STATES) if control else options.states_cap
    model = Model(workload)  # validates the script before anything is made
    result = WorkloadResult(
        filesystem=profile.name,
        workload=workload.name,
        control=control,
        seed=options.seed,
        states_cap=cap,
        image_bytes=image_size(profile),
    )
    directory = area / f"{profile.name}-{workload.name}"
    try:
        rec, result.record_s = record(profile, workload, directory)
        with FlogLog(rec.log) as log:
            facts = log.summary()
            result.log = LogFacts(**asdict(facts))
            result.replay_identical = replay_matches(rec, log)
            if not result.replay_identical:
                result.status = "invalid"
                result.error = (
                    "the log replayed onto the post-mkfs snapshot differs from the final "
                    "image: the logger missed writes, so no state of this recording is judged"
                )
                return result
            selection = generate(log, rec.snapshot, f"{options.seed}:{workload.name}", cap)
            result.states_generated, result.states_unique = selection.generated, selection.unique
            progress(
                f"{profile.name} {workload.name}: {facts.writes} writes "
                f"({facts.write_bytes / 1e6:.1f} MB), {facts.flushes} flushes, "
                f"replay identical; {selection.unique} distinct states, "
                f"testing {len(selection.states)}"
            )
            result.clean_mount_ms = clean_mount_ms(profile, rec.final, directory)
            start = time.perf_counter()
            save_limit = 1 if control else SAVE_LIMIT
            checker = Checker(profile, log, model, rec, options.save_to, save_limit)
            for state in selection.states:
                checkpoint()
                result.states.append(checker.check(state))
            result.check_s = time.perf_counter() - start
    except FsarenaError as exc:
        result.status, result.error = "failed", str(exc)
    finally:
        discard(directory)
    progress(_summary_line(result))
    return result


def _summary_line(result: WorkloadResult) -> str:
    head = f"{result.filesystem} {result.workload}:"
    if result.status != "ok":
        return f"{head} {result.status}: {result.error}"
    s = summarize(result)
    return (
        f"{head} {s.states} states in {result.check_s:.0f} s: {s.mounted} mounted, "
        f"{s.fsck_clean} fsck clean, {s.states_losing_data} losing fsync'ed data"
    )


def test_filesystem(
    profile: FilesystemProfile, area: Path, options: Options, progress: Progress
) -> PowerlossDetails:
    details = PowerlossDetails(
        filesystem=profile.name, seed=options.seed, states_cap=options.states_cap
    )
    for workload in options.workloads:
        checkpoint()
        details.workloads.append(test_workload(profile, workload, area, options, progress))
    return details


def run_control(area: Path, options: Options, progress: Progress) -> WorkloadResult:
    """The negative control on one workload (control_refusal says whether it lost data)."""
    (workload,) = select([CONTROL_WORKLOAD])
    reason = testable(POWERLOSS_CONTROL)
    if reason:
        raise FsarenaError(f"the negative control {POWERLOSS_CONTROL.name} cannot run: {reason}")
    return test_workload(POWERLOSS_CONTROL, workload, area, options, progress, control=True)


def control_figures(result: WorkloadResult) -> dict[str, float]:
    s = summarize(result)
    return {
        "states": float(s.states),
        "states_losing_data": float(s.states_losing_data),
        "files_lost": float(len(s.files_lost)),
        "fsck_clean": float(s.fsck_clean),
    }


def control_refusal(result: WorkloadResult) -> str:
    """Why results must not be reported, or empty when the control showed losses."""
    if result.status != "ok":
        return f"the negative control {result.filesystem} did not complete: {result.error}"
    s = summarize(result)
    if s.states_losing_data == 0:
        return (
            f"the negative control {result.filesystem} lost no fsync'ed data in {s.states} "
            "crash states: this harness cannot see losses here, so no result is reported"
        )
    return ""
