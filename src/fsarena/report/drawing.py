"""A page's charts drawn on every core: matplotlib holds the GIL, so one process per core.

A report's charts took most of the time a run spends on its reports (18 charts,
2.5 s of 3.3 s on a quiet machine: a figure, its SVG and its PNG each), on one
core of two. `draw_all` forks workers that draw them and hand back the SVG and
PNG text, which the drawings then keep as if drawn here: the output is the
same bytes (fixed SVG ids, no dates), only sooner.

The workers are fsarena's own processes and end with the call, whatever
happens. A stop signal is fsarena's to act on: the workers are forked with the
stop signals held, then ignore Ctrl-C and SIGHUP (the parent stops them) and
end on SIGTERM without a word. Where a process cannot be forked, the charts are
drawn here, one after another.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Sequence
from functools import partial

from fsarena.report.charts import ChartDrawing

MIN_CHARTS = 4  # below this, forking costs more than it saves
_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_pending: Sequence[ChartDrawing] = ()  # what the forked workers draw, by index


def draw_all(drawings: Sequence[ChartDrawing], png: bool) -> None:
    """Draw every drawing's SVG (and PNG, if asked) now, one worker process per core."""
    todo = [d for d in drawings if not d.drawn(png)]
    workers = min(os.cpu_count() or 1, len(todo))
    if workers < 2 or len(todo) < MIN_CHARTS:
        _here(todo, png)
        return
    global _pending
    _pending = todo
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)  # the workers start with it
    try:
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_starts)
    except BaseException as exc:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        _pending = ()
        if not isinstance(exc, OSError):
            raise
        _here(todo, png)  # no fork here (a process limit, memory): drawn here instead
        return
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a stop held meanwhile: raised here
        drawn = pool.map(partial(_draw, png=png), range(len(todo)), chunksize=1)
    finally:
        pool.terminate()
        pool.join()
        _pending = ()
    for drawing, (svg, png_bytes) in zip(todo, drawn, strict=True):
        drawing.keep(svg, png_bytes)


def _here(todo: Sequence[ChartDrawing], png: bool) -> None:
    for drawing in todo:
        drawing.svg()
        if png:
            drawing.png()


def _worker_starts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)


def _draw(index: int, png: bool) -> tuple[str, bytes | None]:
    drawing = _pending[index]
    return drawing.svg(), drawing.png() if png else None
