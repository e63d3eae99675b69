"""Seeded arithmetic shared by the generators: PCG64 words, uniforms, exp, sizes fitted to a total.

Integer and IEEE-754 arithmetic only, so results are bit-identical on any machine
and numpy version. numpy is imported inside each function: the specs that use
these helpers are read at plan time (CLI, tasks) without loading it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]
    WordArray = npt.NDArray[np.uint64]

# exp by range reduction and Taylor polynomial: only IEEE-754 +, ×, floor and
# ldexp, so results are bit-identical everywhere (|error| < 1e-15 relative).
_LN2 = 0.6931471805599453
_INV_LN2 = 1.4426950408889634
_EXP_COEFFS = tuple(1.0 / math.factorial(k) for k in range(14))


def raw_words(stream: np.random.PCG64, count: int) -> WordArray:
    words: WordArray = stream.random_raw(count)
    return words


def uniforms(words: WordArray) -> FloatArray:
    """Uniform floats in [0, 1) from the top 53 bits (exact conversion)."""
    import numpy as np

    return (words >> np.uint64(11)).astype(np.float64) * 2.0**-53


def poly_exp(x: FloatArray) -> FloatArray:
    import numpy as np

    n = np.floor(x * _INV_LN2 + 0.5)
    r = x - n * _LN2
    result = np.full_like(r, _EXP_COEFFS[-1])
    for coeff in reversed(_EXP_COEFFS[:-1]):
        result = result * r + coeff
    return np.ldexp(result, n.astype(np.int32))


def fit_sizes(weights: FloatArray, lo: int, hi: int, total: int) -> IntArray:
    """Scale, clip and round weights to integers in [lo, hi] summing exactly to total."""
    import numpy as np

    scale = 1.0
    best = np.clip(np.floor(weights), lo, hi).astype(np.int64)
    for _ in range(50):
        sizes = np.clip(np.floor(weights * scale), lo, hi).astype(np.int64)
        diff = total - int(sizes.sum())
        if abs(diff) < abs(total - int(best.sum())):
            best = sizes
        free = (sizes > lo) & (sizes < hi)
        free_bytes = int(sizes[free].sum())
        if diff == 0 or free_bytes == 0:
            break
        # Newton step on the piecewise-linear total: only unclipped files move.
        new_scale = scale * (free_bytes + diff) / free_bytes
        if new_scale == scale:
            break
        scale = max(new_scale, scale / 16)
    return _spread_remainder(best, lo, hi, total)


def _spread_remainder(sizes: IntArray, lo: int, hi: int, total: int) -> IntArray:
    import numpy as np

    diff = total - int(sizes.sum())
    room = (hi - sizes) if diff > 0 else (sizes - lo)
    taken = np.minimum(room, np.maximum(abs(diff) - (np.cumsum(room) - room), 0))
    result: IntArray = sizes + np.sign(diff) * taken
    return result
