"""A page's charts drawn by forked workers: the same bytes as drawn here, no worker left."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

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


def test_svg_only_leaves_the_png_undrawn() -> None:
    drawings = _drawings()
    draw_all(drawings, png=False)
    assert all(d.drawn(png=False) and not d.drawn(png=True) for d in drawings)


STOPPED = r"""
import sys
from pathlib import Path
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
