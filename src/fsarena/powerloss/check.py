"""Checking one crash state: build its image, mount it (recovery, timed), judge it, fsck it.

Per state (shared/design/powerloss.md, section 3): copy the durable image
(advanced along the log as the states go forward) and apply the state's kept
writes; attach it; mount it, timed: this is the journal or log replay; judge
the files against the promises made before the cut; unmount (btrfs: forget
the device); fsck read-only; detach. fsck runs after the mount and umount
because `xfs_repair -n` refuses a dirty log and `e2fsck -n` skips journal
replay: it checks the recovered filesystem. A state that does not mount is
fsck'ed as it is. A state that lost fsync'ed data is saved for inspection.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from fsarena.filesystems.profiles import FilesystemProfile
from fsarena.powerloss import scratch
from fsarena.powerloss.log import FlogLog, apply
from fsarena.powerloss.model import Model, Verdict
from fsarena.powerloss.recorder import Recording, sparse_copy
from fsarena.powerloss.results import StateOutcome, ViolationRecord
from fsarena.powerloss.states import CrashState

FSCK_TIMEOUT_S = 300.0


class Checker:
    """Checks the states of one recording, in log order."""

    def __init__(
        self,
        profile: FilesystemProfile,
        log: FlogLog,
        model: Model,
        rec: Recording,
        save_to: Path | None,
        save_limit: int,
    ) -> None:
        self.profile, self.log, self.model = profile, log, model
        self.work = rec.directory
        self.durable = rec.directory / "durable.img"
        sparse_copy(rec.snapshot, self.durable)
        self.mutations = [i for i, r in enumerate(log.records) if r.is_mutation]
        self.applied = 0  # mutations already in the durable image
        self.save_to, self.save_limit, self.saved = save_to, save_limit, 0

    def _build(self, state: CrashState, image: Path) -> None:
        if state.durable_writes < self.applied:
            raise AssertionError("crash states must come in log order")
        todo = self.mutations[self.applied : state.durable_writes]
        apply(self.log, (self.log.records[p] for p in todo), self.durable)
        self.applied = state.durable_writes
        sparse_copy(self.durable, image)
        apply(self.log, (self.log.records[p] for p in state.kept), image)

    def ops_returned(self, state: CrashState) -> int:
        found = [t for m in state.marks if (t := self.model.completed(m)) is not None]
        return max(found, default=0)

    def check(self, state: CrashState) -> StateOutcome:
        image = self.work / "state.img"
        self._build(state, image)
        t = self.ops_returned(state)
        try:
            outcome = self._examine(image, t, state)
        finally:
            image.unlink(missing_ok=True)
        if outcome.lost and self.save_to is not None and self.saved < self.save_limit:
            outcome.saved_image = str(self._save(state))
        return outcome

    def _examine(self, image: Path, t: int, state: CrashState) -> StateOutcome:
        mountpoint = self.work / "state-mnt"
        verdict = Verdict((), {})
        with scratch.loop_device(image, direct_io=False) as device:
            try:
                argv = self.profile.mount_argv(device, str(mountpoint))
                mounted, mount_ms, error = scratch.mount(argv, mountpoint)
                if mounted:
                    verdict = self.model.judge(mountpoint, t)
            finally:
                scratch.unmount(self.profile, device, mountpoint)
            fsck_exit, fsck_ms, fsck_detail = self._fsck(device)
        return StateOutcome(
            state=state.name,
            kind=state.kind,
            interval=state.interval,
            writes_durable=state.durable_writes,
            writes_kept=len(state.kept),
            writes_dropped=state.dropped,
            ops_returned=t,
            mounted=mounted,
            mount_ms=mount_ms if mounted else None,
            mount_error=error,
            fsck_clean=fsck_exit == 0,
            fsck_exit=fsck_exit,
            fsck_ms=fsck_ms,
            fsck_detail=fsck_detail,
            violations=[
                ViolationRecord(path=v.path, kind=v.kind, detail=v.detail)
                for v in verdict.violations
            ],
            unsynced=dict(verdict.unsynced),
        )

    def _fsck(self, device: str) -> tuple[int, float, str]:
        """(exit code, ms, what it complained about) of the profile's read-only check."""
        start = time.perf_counter()
        try:
            result = scratch.run(self.profile.fsck_argv(device), timeout_s=FSCK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return -1, FSCK_TIMEOUT_S * 1000, f"timed out after {FSCK_TIMEOUT_S:.0f} s"
        elapsed_ms = (time.perf_counter() - start) * 1000
        if result.returncode == 0:
            return 0, elapsed_ms, ""
        return result.returncode, elapsed_ms, _complaints(result.stdout + "\n" + result.stderr)

    def _save(self, state: CrashState) -> Path:
        """Keep the state's image (sparse) for inspection: rebuilt, since mounting changed it."""
        assert self.save_to is not None
        self.save_to.mkdir(parents=True, exist_ok=True)
        path = self.save_to / f"{self.profile.name}-{self.model.workload.name}-{state.name}.img"
        sparse_copy(self.durable, path)
        apply(self.log, (self.log.records[p] for p in state.kept), path)
        self.saved += 1
        return path


def _complaints(output: str, keep: int = 6) -> str:
    """The lines of fsck's output that say what is wrong (not its progress lines)."""
    noise = ("Pass ", "Phase ", "        - ", "Opening ", "Checking ", "[", "No modify flag")
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    wrong = [ln for ln in lines if not ln.startswith(noise)]
    return " | ".join((wrong or lines)[:keep])[:500]
