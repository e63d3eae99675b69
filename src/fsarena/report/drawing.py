"""A page's charts drawn on every core: matplotlib holds the GIL, so one process per core.

A report's charts took most of the time a run spends on its reports (18 charts,
2.5 s of 3.3 s on a quiet machine: a figure, its SVG and its PNG each), on one
core of two. `draw_all` forks workers that draw them and hand back the SVG and
PNG text, which the drawings then keep as if drawn here: the output is the
same bytes (fixed SVG ids, no dates), only sooner.

The workers are fsarena's own processes and end with the call, whatever
happens. A stop signal is fsarena's to act on: the workers are forked with the
stop signals held, then ignore Ctrl-C and SIGHUP (the parent ends them) and end
on SIGTERM without a word. Where a process cannot be forked, or a worker was
killed, the charts are drawn here, one after another.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from fsarena.report.charts import ChartDrawing

MIN_CHARTS = 4  # below this, forking costs more than it saves
_STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_pending: Sequence[ChartDrawing] = ()  # what the forked workers draw, by index


def draw_all(drawings: Sequence[ChartDrawing], png: bool) -> None:
    """Draw every drawing's SVG (and PNG, if asked) now, one worker process per core."""
    todo = [d for d in drawings if not d.drawn(png)]
    workers = min(len(os.sched_getaffinity(0)), len(todo))  # the cores this process may use
    if workers < 2 or len(todo) < MIN_CHARTS:
        _here(todo, png)
        return
    global _pending
    _pending = todo
    fork = multiprocessing.get_context("fork")
    # The first submit forks every worker (fork: all at once), then starts the pool's
    # thread: both with the stop signals held, so a stop is the main thread's to take.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    pool: ProcessPoolExecutor | None = None
    drawn: list[tuple[str, bytes | None]] | None = None
    try:
        try:
            pool = ProcessPoolExecutor(workers, mp_context=fork, initializer=_worker_starts)
            futures = [pool.submit(_draw, i, png) for i in range(len(todo))]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a stop held meanwhile: here
        drawn = [f.result() for f in futures]
    except (OSError, BrokenProcessPool):
        pass  # no fork here (a process limit, memory), or a worker killed: drawn here
    finally:
        # A stop waits for the charts being drawn (one per worker, 0.1-0.3 s each); the
        # rest are cancelled, and every worker has ended when this returns.
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        _pending = ()
    if drawn is None:
        _here(todo, png)
        return
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
    """In a worker: one drawing, by its index in what the parent had pending at the fork."""
    drawing = _pending[index]
    return drawing.svg(), drawing.png() if png else None
