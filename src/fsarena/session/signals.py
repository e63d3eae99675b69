"""Stop signals held for the length of a block that must not be cut in half (a session save)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

_STOP = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def stop_signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is done, then act as they would have.

    One landing inside pydantic's encoder, which calls back into Python (each
    record's serializer), came out as a PydanticSerializationError: a "failed"
    run instead of an interrupted one; one landing just after mkstemp left the
    temporary file. Python runs signal handlers in the main thread whichever
    thread the kernel picked, so the handlers are swapped, not the mask: the
    first signal is noted and its own handler called once the save is done.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread can swap handlers (and only it runs them)
        return
    caught: list[int] = []
    previous = {s: signal.signal(s, lambda signum, _: caught.append(signum)) for s in _STOP}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        if caught:
            handler = previous[signal.Signals(caught[0])]
            if callable(handler):
                handler(caught[0], None)
            elif handler == signal.SIG_DFL:
                signal.raise_signal(caught[0])
