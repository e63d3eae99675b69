"""A page's charts drawn by forked workers: the same bytes as drawn here, no worker left."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from matplotlib.figure import Figure

from fsarena.report import build, contents
from fsarena.report.charts import ChartDrawing
from fsarena.report.drawing import MIN_CHARTS, draw_all
from fsarena.report.html import figures
from fsarena.session.file import load

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
REPO = Path(__file__).resolve().parents[2]


def _drawings() -> list[ChartDrawing]:
    blocks = contents.document(build(load(FIXTURES / "three-filesystems.json")))
    return [d for f in figures(blocks) if isinstance(d := f.drawing, ChartDrawing)]


def test_workers_draw_the_same_bytes_as_one_process_and_are_gone_after() -> None:
    here, forked = _drawings(), _drawings()
    assert len(forked) >= MIN_CHARTS
    for d in here:
        d.svg(), d.png()
    draw_all(forked, png=True)
    assert all(d.drawn(png=True) for d in forked)
    assert [d.svg() for d in forked] == [d.svg() for d in here]
    assert [d.png() for d in forked] == [d.png() for d in here]
    assert multiprocessing.active_children() == []


class _Killed(ChartDrawing):
    """A drawing whose worker is killed while drawing it (the OOM killer, or anyone)."""

    def __init__(self, like: ChartDrawing, parent: int) -> None:
        super().__init__(lambda: like._figure)
        self.parent = parent

    def svg(self) -> str:
        if os.getpid() != self.parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().svg()


def test_a_worker_killed_while_drawing_leaves_the_charts_to_this_process() -> None:
    here, forked = _drawings(), _drawings()
    for d in here:
        d.svg(), d.png()
    forked[1] = _Killed(forked[1], os.getpid())
    started = time.monotonic()
    draw_all(forked, png=True)
    assert time.monotonic() - started < 60  # no wait for a worker that is gone
    assert [d.svg() for d in forked] == [d.svg() for d in here]
    assert [d.png() for d in forked] == [d.png() for d in here]
    assert multiprocessing.active_children() == []


class _Broken(ChartDrawing):
    """A drawing that fails as matplotlib might: in a worker, as it would here."""

    def __init__(self) -> None:
        super().__init__(lambda: Figure())

    def svg(self) -> str:
        raise ValueError("no such chart")


def test_an_error_while_drawing_is_raised_here_and_leaves_no_worker() -> None:
    drawings: list[ChartDrawing] = [*_drawings(), _Broken()]
    with pytest.raises(ValueError, match="no such chart"):
        draw_all(drawings, png=False)
    assert multiprocessing.active_children() == []


def test_svg_only_leaves_the_png_undrawn() -> None:
    drawings = _drawings()
    draw_all(drawings, png=False)
    assert all(d.drawn(png=False) and not d.drawn(png=True) for d in drawings)


STOPPED = r"""
import signal
import sys
# As from a terminal, Ctrl-C raises KeyboardInterrupt: a test runner's worker may ignore
# SIGINT, and a child inherits that (Python then installs no handler of its own).
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
import pytest
from matplotlib.figure import Figure

from fsarena.report import build, contents
from fsarena.report.charts import ChartDrawing
from fsarena.report.drawing import draw_all
from fsarena.report.html import figures
from fsarena.session.file import load

blocks = contents.document(build(load(Path(sys.argv[1]))))
drawings = [d for f in figures(blocks) if isinstance(d := f.drawing, ChartDrawing)]
print("drawing", flush=True)
try:
    draw_all(drawings * 20, png=True)  # long enough to be stopped inside
except KeyboardInterrupt:
    print("stopped", flush=True)
    sys.exit(130)
"""


def test_a_ctrl_c_while_drawing_stops_every_worker_without_a_traceback() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", STOPPED, str(FIXTURES / "three-filesystems.json")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own group: the Ctrl-C reaches it and its workers only
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "drawing"
    time.sleep(1.0)  # the workers are forked and drawing
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the whole group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "stopped" in out, err
    assert "Traceback" not in err, err
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True)
    assert left.stdout == "", f"workers left running: {left.stdout}"
