"""A synthetic history shaped like a real one: what each commit touches, drawn from measurement.

Real commits mostly rewrite a few lines of one to a few files, in one
directory, now and then add a file and rarely delete one; a few touch
hundreds. REAL_SHAPE holds those distributions as measured from
`git log --no-merges --numstat --summary` of a real repository with
bench/history_shape.py: e2fsprogs (github.com/tytso/e2fsprogs, 7,302
non-merge commits from 1997-04-26 to 2026-03-12, head a9f482e5), a C
filesystem project with kernel-style patches. Measured: a mean of 3.74 files
per commit (median 2, 95th percentile 12, 99th 32, at most 268); of the files
touched 87.4 % modified, 10.6 % added, 2.0 % deleted; per modified file a
median of 4 lines added and 1 deleted (95th percentile 117 and 76); in the
median commit every file is in one directory.

Each distribution is a list of values at the cumulative probabilities
POINTS (min, 5 %..95 %, 99 %, max); a draw is the inverse CDF, linear in
log(1 + value) between points (the tails are long: linear, the 1 % of commits
between the 99th percentile and the largest would raise the mean files per
commit to 4.8; log-linear gives 4.3 against the measured 3.74). A modified
file gets a hunk: `deleted` lines removed at a random line and `added` new
lines put in their place, as a patch does.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass

POINTS = (0.0, *(k / 20 for k in range(1, 20)), 0.99, 1.0)

SOURCE = (
    "git log --numstat of e2fsprogs (github.com/tytso/e2fsprogs, 7,302 non-merge commits "
    "1997-2026, head a9f482e5; bench/history_shape.py)"
)


@dataclass(frozen=True)
class HistoryShape:
    """Distributions of a real history's commits (values at POINTS), and the kinds' shares."""

    files_touched: tuple[float, ...]
    lines_added: tuple[float, ...]
    lines_deleted: tuple[float, ...]
    same_directory: tuple[float, ...]  # share of a commit's files in its main directory
    added_share: float
    deleted_share: float
    source: str


REAL_SHAPE = HistoryShape(
    files_touched=(1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 4, 5, 7, 12, 32, 268),
    lines_added=(0, 1, 1, 1, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6, 8, 10, 15, 22, 38, 117, 901, 12318),
    lines_deleted=(0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 4, 6, 9, 18, 76, 774, 12919),
    same_directory=(0.009, 0.333, 0.5, 0.571, 0.667, *(1.0,) * 17),
    added_share=0.1056,
    deleted_share=0.0201,
    source=SOURCE,
)


def draw(values: tuple[float, ...], rng: random.Random) -> float:
    """One value from the distribution given at POINTS (inverse CDF, linear between points)."""
    u = rng.random()
    i = min(bisect.bisect_right(POINTS, u), len(POINTS) - 1)
    p0, p1 = POINTS[i - 1], POINTS[i]
    low, high = math.log1p(values[i - 1]), math.log1p(values[i])
    return math.expm1(low + (high - low) * (u - p0) / (p1 - p0))


@dataclass(frozen=True)
class Commit:
    """One planned commit: how many files it modifies, adds and deletes, and its spread."""

    modified: int
    added: int
    deleted: int
    same_directory: float


def plan_commits(count: int, shape: HistoryShape, rng: random.Random) -> list[Commit]:
    """`count` commits drawn from the shape (the number of files each touches, their kinds)."""
    found = []
    for _ in range(count):
        touched = max(1, round(draw(shape.files_touched, rng)))
        kinds = [rng.random() for _ in range(touched)]
        added = sum(k < shape.added_share for k in kinds)
        deleted = sum(
            shape.added_share <= k < shape.added_share + shape.deleted_share for k in kinds
        )
        found.append(
            Commit(touched - added - deleted, added, deleted, draw(shape.same_directory, rng))
        )
    return found


def patched(text: bytes, shape: HistoryShape, rng: random.Random, tag: str) -> bytes:
    """The file after one hunk: some lines removed at a random place, new ones put there."""
    lines = text.splitlines(keepends=True)
    removed = min(round(draw(shape.lines_deleted, rng)), len(lines))
    added = round(draw(shape.lines_added, rng))
    if removed == added == 0:
        added = 1  # a file a commit touches changes
    at = rng.randint(0, len(lines) - removed)
    new = [f"\tfsarena_{tag}_{k}(); /* a changed line of the shaped history */\n".encode()
           for k in range(added)]  # fmt: skip
    return b"".join([*lines[:at], *new, *lines[at + removed :]])
