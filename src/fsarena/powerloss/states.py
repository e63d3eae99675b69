"""The crash-state generator: which images a power cut could leave, from one recorded log.

Model (shared/design/powerloss.md, section 3): a device with a volatile write
cache keeps every write completed before a flush; of the writes after the
last flush before the cut, any subset may have reached the medium. A state is
therefore (interval i, kept writes of interval i) on top of everything before
interval i's opening flush. Its cut is placed as late as the state allows,
just before the flush closing the interval (the strongest oracle): no
promise marked before that flush can depend on it, since an application's
fsync returns only after its flush was logged.

Enumerated per flush interval: the state right after the flush (nothing of
the interval kept), mid-interval prefixes (as dm-log-writes replay would
give), K random subsets (each write kept with p = 0.5, seeded; K = 2 + n/4
for n writes, at most 16: volatile-cache reordering, as CrashMonkey does), and the final
state. Identical images are de-duplicated, keeping the latest cut, by a
multiset hash of (sector, content) over every sector the log touches. Above
the cap, states are sampled with the seed (the final state always kept).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from fsarena.powerloss.log import FSYNC, MARK, FlogLog, Record

SECTOR = 512
MODULUS = 1 << 128
# What a state keeps of its interval: cut at the flush, a prefix of the writes, a random
# subset of them, or everything (the log's end).
StateKind = Literal["flush", "prefix", "subset", "final"]
MAX_SUBSETS = 16  # random subsets per interval: 2 + n // 4 for n writes, at most this


@dataclass(frozen=True)
class Interval:
    """The writes between two flushes; `end` is the closing flush's position (or the log's end)."""

    index: int
    durable: tuple[int, ...]  # positions of mutations before the opening flush
    writes: tuple[int, ...]  # positions of the interval's mutations
    end: int
    marks: tuple[str, ...]  # markers logged before `end`


@dataclass(frozen=True)
class CrashState:
    interval: int
    kind: StateKind
    kept: tuple[int, ...]  # positions of the interval's writes that reached the medium
    dropped: int  # how many of the interval's writes did not
    marks: tuple[str, ...]  # markers before the cut
    durable_writes: int

    @property
    def name(self) -> str:
        return f"i{self.interval}-{self.kind}-{len(self.kept)}of{len(self.kept) + self.dropped}"


def intervals(records: list[Record]) -> list[Interval]:
    found: list[Interval] = []
    durable: list[int] = []
    writes: list[int] = []
    marks: list[str] = []
    for pos, record in enumerate([*records, None]):
        if record is None or record.type == FSYNC:
            found.append(Interval(len(found), tuple(durable), tuple(writes), pos, tuple(marks)))
            durable += writes
            writes = []
        elif record.is_mutation:
            writes.append(pos)
        elif record.type == MARK:
            marks.append(record.text)
    return found


def candidates(span: Interval, rng: random.Random, last: bool) -> Iterator[CrashState]:
    """The states one interval proposes, before de-duplication."""
    n = len(span.writes)
    picks: list[tuple[StateKind, tuple[int, ...]]] = [("flush", ())]
    for cut in sorted({n // 2, *((n // 4, 3 * n // 4) if n >= 8 else ())} - {0, n}):
        picks.append(("prefix", span.writes[:cut]))
    if n >= 2:
        for _ in range(min(MAX_SUBSETS, 2 + n // 4)):
            picks.append(("subset", tuple(w for w in span.writes if rng.random() < 0.5)))
    if last:
        picks.append(("final", span.writes))
    for kind, kept in picks:
        yield CrashState(span.index, kind, kept, n - len(kept), span.marks, len(span.durable))


class ImageDigest:
    """Multiset hash of an image's sectors that the log touches, updated write by write."""

    def __init__(self, log: FlogLog, snapshot: Path) -> None:
        self.log = log
        self.base: dict[int, bytes] = {}
        with open(snapshot, "rb") as f:
            for sector in sorted(self._touched(log.records)):
                f.seek(sector * SECTOR)
                self.base[sector] = f.read(SECTOR).ljust(SECTOR, b"\0")
        self.value = sum(_h(s, c) for s, c in self.base.items()) % MODULUS

    @staticmethod
    def _touched(records: Iterable[Record]) -> set[int]:
        found: set[int] = set()
        for r in records:
            if r.is_mutation and r.len:
                found.update(range(r.off // SECTOR, (r.off + r.len - 1) // SECTOR + 1))
        return found

    def overlay(self, positions: Iterable[int]) -> dict[int, bytes]:
        """Sector contents the given writes produce on top of self.base."""
        changed: dict[int, bytes] = {}
        for pos in positions:
            record = self.log.records[pos]
            data = bytes(self.log.data(record))
            first = record.off // SECTOR
            for sector in range(first, (record.off + record.len - 1) // SECTOR + 1):
                start = sector * SECTOR - record.off
                if start >= 0 and start + SECTOR <= len(data):
                    changed[sector] = data[start : start + SECTOR]
                else:  # a write not aligned to sectors: patch the sector
                    old = bytearray(changed.get(sector, self.base[sector]))
                    lo, hi = max(start, 0), min(start + SECTOR, len(data))
                    old[lo - start : hi - start] = data[lo:hi]
                    changed[sector] = bytes(old)
        return changed

    def with_writes(self, positions: Iterable[int]) -> int:
        """The digest of the image with these writes applied (self is unchanged)."""
        value = self.value
        for sector, content in self.overlay(positions).items():
            value += _h(sector, content) - _h(sector, self.base[sector])
        return value % MODULUS

    def advance(self, positions: Iterable[int]) -> None:
        """Make these writes part of the base."""
        changed = self.overlay(positions)
        self.value = self.with_writes(positions)
        self.base.update(changed)


def _h(sector: int, content: bytes) -> int:
    digest = hashlib.blake2b(sector.to_bytes(8, "little") + content, digest_size=16).digest()
    return int.from_bytes(digest, "little")


@dataclass(frozen=True)
class Selection:
    states: list[CrashState]  # to test, in log order
    generated: int  # proposed by the enumeration
    unique: int  # after de-duplication


def generate(log: FlogLog, snapshot: Path, seed: int | str, cap: int) -> Selection:
    """Enumerate, de-duplicate (latest cut wins) and sample down to the cap."""
    spans = intervals(log.records)
    rng = random.Random(seed)
    digest = ImageDigest(log, snapshot)
    by_image: dict[int, CrashState] = {}
    generated = 0
    for span in spans:
        for state in candidates(span, rng, last=span is spans[-1]):
            generated += 1
            by_image.pop(key := digest.with_writes(state.kept), None)
            by_image[key] = state  # later states replace earlier ones with the same image
        digest.advance(span.writes)
    unique = list(by_image.values())
    chosen = _sample(unique, cap, rng)
    order = {id(s): i for i, s in enumerate(unique)}
    chosen.sort(key=lambda s: (s.interval, order[id(s)]))
    return Selection(chosen, generated, len(unique))


def _sample(states: list[CrashState], cap: int, rng: random.Random) -> list[CrashState]:
    if len(states) <= cap:
        return list(states)
    final = [s for s in states if s.kind == "final"]
    rest = [s for s in states if s.kind != "final"]
    return final + rng.sample(rest, max(0, cap - len(final)))
