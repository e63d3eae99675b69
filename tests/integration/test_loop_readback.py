"""What the report says about the loop images is read back: direct I/O, allocation.

A loop device forced buffered (losetup --direct-io=off after attaching) must make
the session's header say "buffered" and warn; a normal run must read direct I/O
and a fully allocated image before every timed run, mkfs's discards included
(discard is off on fsarena's loop devices, so nothing punches holes in the image).
"""

from __future__ import annotations

from pathlib import Path

from fsarena.host.executor import RealExecutor
from fsarena.plan.model import make_plan
from fsarena.report.comparison import header_lines
from fsarena.run.new_session import new_session
from fsarena.run.runner import Runner
from fsarena.session.file import Session


class BufferedLoopExecutor(RealExecutor):
    """Loop devices switched to buffered I/O after attaching: what a refusing kernel leaves."""

    def attach_loop(self, image: str) -> str:
        device = super().attach_loop(image)
        self.call(("losetup", "--direct-io=off", device))
        return device


def _run(workdir: Path, executor: RealExecutor) -> Session:
    suite = workdir / "suite.toml"
    suite.write_text(
        'name = "read-back"\nfilesystems = ["ext4"]\n'
        'tasks = ["mkfs", "mount", "iso_copy_in", "umount"]\n'
    )
    plan = make_plan(str(suite), None, 1, 0.01, 1, str(workdir / "w"))
    session = new_session(plan, {}, {})
    Runner(plan, executor, session, workdir / "s.json", "tmpfs").run()
    return session


def test_a_buffered_loop_device_is_said_buffered(workdir: Path) -> None:
    session = _run(workdir, BufferedLoopExecutor())
    timed = [r for r in session.runs if r.measurement is not None]
    assert timed and all(r.measurement.loop_direct_io == 0 for r in timed if r.measurement)
    target = next(line for line in header_lines(session) if line.startswith("target:"))
    assert "buffered" in target and "(direct I/O" not in target, target
    assert any(w.code == "buffered_loop" for w in session.warnings)


def test_a_direct_loop_device_is_read_direct_and_allocated(workdir: Path) -> None:
    session = _run(workdir, RealExecutor())
    timed = [r.measurement for r in session.runs if r.measurement is not None]
    assert timed and all(m.loop_direct_io == 1 for m in timed)
    # Preallocated, and mkfs (timed 5 times) punched no holes: every run read it whole.
    assert all(m.loop_allocated_pct is not None and m.loop_allocated_pct > 99.9 for m in timed)
    target = next(line for line in header_lines(session) if line.startswith("target:"))
    assert "loop images (direct I/O" in target, target
    assert not any(w.code == "buffered_loop" for w in session.warnings)
    # Writing runs ended with the device flush, counted by the device.
    copy = next(r for r in session.runs if r.task == "iso_copy_in" and r.measurement)
    assert copy.measurement is not None and (copy.measurement.device_flushes or 0) >= 1
