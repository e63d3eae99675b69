"""Rounds as blocks: every round measures every filesystem, so filesystems are compared
through their within-round differences, and a value that stalled is set aside. Pure numpy.

The data of one family (a kind of work, or the workload) is an array of log values,
lower is better, filesystems by rounds (NaN where a filesystem has no value: a failed
run, or a round after it was eliminated); every function here also takes any leading
axes (many simulated runs at once), so that the calibration (analysis.calibration)
runs the very code the answer runs.

- What a round shares cancels. This machine's rounds drift (the whole machine slower
  for minutes, every filesystem alike): filesystem f against g is judged on
  d_r = y_f,r - y_g,r over the rounds both have, a paired t on the logs (its ratio is
  exp of the mean difference; its standard error the differences' own, n - 1 degrees of
  freedom, so a filesystem with a wider spread than the others is judged with its own).
- A stall is set aside, said, and not a sample. This machine's timings are heavy-tailed
  (a value 4.5x its usual in about 2.6 % of runs: tests/decision_model.py, fit_noise). A
  stalled value is a gross outlier of the additive fit of the family (filesystem +
  round): it is set aside when its residual exceeds OUTLIER_SIGMAS times the larger of
  the family's robust spread and its own filesystem's (so a filesystem that is merely
  noisier keeps its values). The fit is robust itself (Huber's weights from a median
  polish), since with five filesystems one stall would pull its round's mean.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
# A value is set aside as a stall beyond this many robust standard deviations of the fit:
# on normal noise that is 6 values in 100,000; a 4.5x stall is 10-20 of them here.
OUTLIER_SIGMAS = 4.0
# The fewest residual degrees of freedom of the fit at which a stall is told (3 filesystems
# need 5 rounds, 5 need 3): below, the spread is too poorly known to call a value off it.
OUTLIER_DOF = 8
HUBER_K = 1.5  # Huber's constant of the robust fit (standard deviations)
FIT_STEPS = 6
MAD_SD = 1.4826  # a normal distribution's standard deviation per median absolute deviation


def _nanmedian(x: Array, axis: int | tuple[int, ...], keepdims: bool = True) -> Array:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if not np.isnan(x).any():
            return np.asarray(np.median(x, axis=axis, keepdims=keepdims))
        return np.asarray(np.nanmedian(x, axis=axis, keepdims=keepdims))


def _dof_factor(y: Array) -> Array:
    """sqrt(cells / residual degrees of freedom) of the additive fit, per family."""
    present = ~np.isnan(y)
    rows = present.any(-1).sum(-1)
    cols = present.any(-2).sum(-1)
    cells = present.sum((-1, -2))
    dof = np.maximum(cells - rows - cols + 1, 1)
    return np.asarray(np.sqrt(cells / dof))[..., None, None]


def robust_fit(y: Array) -> tuple[Array, Array, Array]:
    """The additive fit (filesystem + round) of y[..., F, R]: fitted values, residuals, and
    the family's robust standard deviation of the residuals ([..., 1, 1])."""
    present = ~np.isnan(y)
    zero = np.where(present, y, 0.0)
    cols = _nanmedian(y, -2)
    rows = _nanmedian(y - cols, -1)
    cols = _nanmedian(y - rows, -2)
    cols, rows = np.nan_to_num(cols), np.nan_to_num(rows)
    factor = _dof_factor(y)
    scale = np.ones_like(factor)
    for _ in range(FIT_STEPS):
        residual = np.where(present, y - rows - cols, 0.0)
        scale = _scale(np.where(present, residual, np.nan), factor)
        far = np.maximum(np.abs(residual), 1e-300)
        weight = np.where(present, np.minimum(1.0, HUBER_K * scale / far), 0.0)
        rows = ((zero - cols) * weight).sum(-1, keepdims=True) / np.maximum(
            weight.sum(-1, keepdims=True), 1e-300
        )
        cols = ((zero - rows) * weight).sum(-2, keepdims=True) / np.maximum(
            weight.sum(-2, keepdims=True), 1e-300
        )
    fitted = rows + cols
    residual = y - fitted
    return fitted, residual, _scale(residual, factor)


def _scale(residual: Array, factor: Array) -> Array:
    """MAD_SD x the median absolute residual x the fit's degrees-of-freedom factor."""
    mad = _nanmedian(np.abs(residual), (-1, -2))
    return np.maximum(np.nan_to_num(mad) * MAD_SD * factor, 1e-12)


def _stalls(y: Array) -> tuple[NDArray[np.bool_], Array]:
    """The cells of y[..., F, R] set aside as stalls (see the module's docstring), and the
    robust fit's values (what a stalled cell is replaced by in the workload)."""
    if (y.shape[-2] - 1) * (y.shape[-1] - 1) < OUTLIER_DOF:
        return np.zeros(y.shape, dtype=bool), y
    fitted, residual, scale = robust_fit(y)
    own = _nanmedian(np.abs(residual), -1) * MAD_SD * _dof_factor(y)  # each filesystem's
    limit = OUTLIER_SIGMAS * np.maximum(scale, np.nan_to_num(own))
    return np.nan_to_num(np.abs(residual)) > limit, fitted


@dataclass(frozen=True)
class Cleaned:
    """A family's values with the stalls set aside: `kept` has them as NaN (for the family's
    own comparisons), `filled` has them replaced by the fit (to combine kinds into the
    workload without losing the round), `set_aside` marks them."""

    kept: Array
    filled: Array
    set_aside: NDArray[np.bool_]


def clean(y: Array) -> Cleaned:
    """y[..., F, R] with its stalls set aside (replaced, in `filled`, by the robust fit,
    which a stall hardly moves: Huber's weights give it at most HUBER_K deviations)."""
    aside, fitted = _stalls(y)
    if not aside.any():
        return Cleaned(y, y, aside)
    return Cleaned(np.where(aside, np.nan, y), np.where(aside, fitted, y), aside)


@dataclass(frozen=True)
class Paired:
    """Every ordered pair (f, g) of a family: the mean of log(f) - log(g) over the rounds
    both have, its standard error and degrees of freedom, and that number of rounds."""

    diff: Array  # [..., F, F]: positive when f is slower (lower is better)
    se: Array
    df: Array
    n: NDArray[np.int64]


def paired(y: Array) -> Paired:
    """The within-round comparison of every pair of filesystems of y[..., F, R]."""
    d = y[..., :, None, :] - y[..., None, :, :]
    present = ~np.isnan(d)
    n = present.sum(-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.where(present, d, 0.0).sum(-1) / np.maximum(n, 1)
        dev = np.where(present, d - mean[..., None], 0.0)
        var = (dev**2).sum(-1) / np.maximum(n - 1, 1)
        se = np.sqrt(var / np.maximum(n, 1))
    mean = np.where(n > 0, mean, np.nan)
    se = np.where(n > 1, se, np.nan)
    return Paired(mean, se, np.maximum(n - 1, 1).astype(float), n)


def log_ratio(diff: float) -> float:
    """exp of a log difference, infinite past a float's range."""
    return math.exp(diff) if diff < 700 else math.inf
