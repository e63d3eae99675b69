"""fsarena's own time, phase by phase: where a round's wall time went outside its timed tasks.

The session's timing record says how much of a round was timed; this says what
the rest was spent on, so that `bench/own_time.py` can show which step to cut.
The runner and a sequence wrap each untimed step in `phase(name)`; phases nest
(the cold caches a task takes between its samples), and a nested phase's time
is charged to it alone, never to the phase around it too, so the phases of a
round add up to at most its own time (the rest, not inside any phase, is
"other": the runner's own bookkeeping).

The runner gives it its own clock (time.monotonic, or a test's simulated one), so
a round's phases and its wall time are read from one clock and add up.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# What each phase is, in the order bench/own_time.py shows them.
PHASES: dict[str, str] = {
    "ceiling": "the device's ceiling (fio on a fresh image: full once, a drift check a minute)",
    "target": "image and loop device: made, attached, detached and retired",
    "reach": "untimed mkfs, mount or umount to the state a task needs",
    "prepare": "a task's untimed preparation",
    "probe": "untimed probes (capacity)",
    "cold": "cold caches before a timed task (and between samples where a task needs them)",
    "launch": "starting and collecting the timed commands, outside their own times",
    "samples": "undoing a sub-second task between its timed samples",
    "verify": "verifying what a task wrote (copies against their manifests)",
    "after": "figures read after a task (payload, space, extras)",
    "cleanup": "a task's cleanup",
    "save": "saving the session after every run",
}


@dataclass
class OwnTime:
    """A stopwatch of named, nestable phases; `take()` hands over what was spent and resets."""

    clock: Callable[[], float] = time.monotonic
    spent: dict[str, float] = field(default_factory=dict)
    _open: list[str] = field(default_factory=list)
    _mark: float = 0.0

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Charge the time inside to `name` (less what nested phases take)."""
        start = self.clock()
        if self._open:
            self._charge(self._open[-1], start - self._mark)
        self._open.append(name)
        self._mark = start
        try:
            yield
        finally:
            end = self.clock()
            self._charge(self._open.pop(), end - self._mark)
            self._mark = end

    def move(self, source: str, target: str, seconds: float) -> None:
        """Move seconds from one phase to another (a timed region out of "launch")."""
        self._charge(source, -seconds)
        self._charge(target, seconds)

    def take(self) -> dict[str, float]:
        """What was spent since the last take, per phase; the stopwatch starts again."""
        spent, self.spent = self.spent, {}
        return spent

    def _charge(self, name: str, seconds: float) -> None:
        self.spent[name] = self.spent.get(name, 0.0) + seconds
