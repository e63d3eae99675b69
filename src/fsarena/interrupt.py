"""Stopping on a signal: the first SIGINT, SIGTERM or SIGHUP stops a run, and is never lost.

The handler raises KeyboardInterrupt wherever the signal lands, so that a run
stops within the step it is in and tears down what it made. Three places must not
see it raised:

- a finaliser (a `__del__`, a weakref callback): Python drops an exception raised
  there with an "Exception ignored in" line, and the run would go on to its end as
  if no signal had come (CI saw it: a SIGINT that landed in `Popen.__del__`). The
  handler does not raise inside a `__del__`: it holds the stop and signals the main
  thread again every REDELIVER_S until the handler runs outside the finaliser and
  raises it there. As a last defence, the run's loops call `checkpoint()` between
  their steps, which raises any stop that has come (also one raised where it was
  dropped: a weakref callback). A loop that an interrupt has left is never entered
  again, so teardown never meets a checkpoint.
- the start of a child process (`deferred()`): raised inside `subprocess.Popen`,
  after the fork, the exception leaves the child running with nobody to wait for it
  or stop it. A `mount` orphaned so finished after the run's teardown had looked
  (CI, the fleet SIGTERM test: an xfs left mounted on a deleted image). The stop is
  held there and raised by `Held.check()` once the caller holds the process and can
  kill it.
- a teardown step (`whole()`): an umount killed half way left the filesystem
  mounted, and the next step deleted its image under it. The stop is raised once
  the step is done.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType


class Stop:
    """SIGINT, SIGTERM, SIGHUP: the first stops the run; later ones are ignored until teardown ends.

    Installed explicitly, so that a run started with SIGINT ignored (a
    background job of a shell script) still stops cleanly on Ctrl-C.
    """

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.signum = 0
        self.held = False  # received, not yet raised (it came in a finaliser)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum and not self.held:
            return  # already stopping: let teardown finish
        if _deferring:  # Held.check() raises it, where the caller can stop its child
            self.signum = self.signum or signum
            return
        if _in_finaliser(frame):
            if not self.held:  # once out of the finaliser, the handler raises it (below)
                self.signum, self.held = signum, True
                _after(REDELIVER_S, self._redeliver)
            return
        self.signum, self.held = self.signum or signum, False
        raise KeyboardInterrupt(self.name)

    def _redeliver(self) -> None:
        """The held stop's signal again, to the main thread, until the handler could raise it."""
        if self.held and _active is self:
            signal.pthread_kill(threading.main_thread().ident or 0, self.signum)
            _after(REDELIVER_S, self._redeliver)

    @contextlib.contextmanager
    def installed(self) -> Iterator[Stop]:
        """The handler, until the block ends; only the main thread can install one (a
        command invoked in another thread, as a test may do, keeps the handlers it has)."""
        global _active
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
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
_deferring = 0  # how deep the main thread is in deferred()
REDELIVER_S = 0.01  # a stop held in a finaliser is signalled again this often until raised


def checkpoint() -> None:
    """Between two steps of a run: raise the stop a signal asked for, if it was not raised.

    Also one that was raised and lost (dropped in a weakref callback, or replaced by
    another exception raised while it unwound).
    """
    if _active is not None and _active.signum:
        _active.held = False
        raise KeyboardInterrupt(_active.name)


@dataclass
class Held:
    """A stop that came inside `deferred()`; `check()` raises it (0: none came)."""

    signum: int = 0

    def check(self) -> None:
        if self.signum:
            raise KeyboardInterrupt(signal.Signals(self.signum).name)


@contextlib.contextmanager
def deferred() -> Iterator[Held]:
    """A stop that comes in here is held, not raised: for starting a child process.

    The caller calls `check()` on what this yields once it holds the child, inside the
    try that kills the child on KeyboardInterrupt. Only a stop that came in here is
    raised then: a stop raised before (a teardown starting helpers) stays raised once,
    and inside another deferred() (a `whole()` teardown step) the outer one raises it.
    Other threads never receive the handler's exception: for them this does nothing.
    """
    global _deferring
    held = Held()
    stop = _active
    if stop is None or threading.current_thread() is not threading.main_thread():
        yield held
        return
    before = stop.signum
    outer = _deferring == 0  # a nested one leaves the stop to the outermost to raise
    _deferring += 1
    try:
        yield held
    finally:
        _deferring -= 1
        if outer and not before and stop.signum:
            held.signum = stop.signum


@contextlib.contextmanager
def whole() -> Iterator[None]:
    """A step that runs whole (a teardown step): a stop that comes in it is raised as it ends.

    Cut short by the KeyboardInterrupt, an umount killed half way left the filesystem
    mounted, and the next step then detached its loop device and deleted its image
    under it. Raised when the step ends, also when it failed (the stop then supersedes
    the step's error: a caller records that error inside the step).
    """
    held = Held()
    try:
        with deferred() as held:
            yield
    finally:
        held.check()


def _after(seconds: float, action: Callable[[], None]) -> None:
    timer = threading.Timer(seconds, action)
    timer.daemon = True  # never keeps the process alive
    timer.start()


def _in_finaliser(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False
