"""Stopping on a signal: the first SIGINT, SIGTERM or SIGHUP stops a run, and is never lost.

The handler raises KeyboardInterrupt wherever the signal lands, so that a run
stops within the step it is in and tears down what it made. But Python drops an
exception raised inside a finaliser (a `__del__`, a weakref callback) with an
"Exception ignored in" line, and the run would then go on to its end as if no
signal had come (CI saw it: a SIGINT that landed in `Popen.__del__`). Two
defences: the handler does not raise inside a `__del__` (the stop is then
pending), and the run's loops call `checkpoint()` between their steps, which
raises any stop that has come. A loop that an interrupt has left is never
entered again, so teardown never meets a checkpoint.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType


class Stop:
    """SIGINT, SIGTERM, SIGHUP: the first stops the run; later ones are ignored until teardown ends.

    Installed explicitly, so that a run started with SIGINT ignored (a
    background job of a shell script) still stops cleanly on Ctrl-C.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.signum = 0

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum:
            return  # already stopping: let teardown finish
        self.signum = signum
        if not _in_finaliser(frame):  # there, the exception would be dropped: checkpoint()
            raise KeyboardInterrupt(self.name)

    @contextlib.contextmanager
    def installed(self) -> Iterator[Stop]:
        global _active
        previous = {s: signal.signal(s, self.handle) for s in self.SIGNALS}
        outer, _active = _active, self
        try:
            yield self
        finally:
            _active = outer
            for s, handler in previous.items():
                signal.signal(s, handler)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else "SIGINT"

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)


_active: Stop | None = None


def checkpoint() -> None:
    """Between two steps of a run: raise the stop a signal asked for, if it was not raised."""
    if _active is not None and _active.signum:
        raise KeyboardInterrupt(_active.name)


def _in_finaliser(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False
