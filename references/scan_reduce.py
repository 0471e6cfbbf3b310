"""Exact references of the sum reduction and the inclusive prefix sum (scan).

Integer inputs are summed in int64 and must fit the int32 output (the spec draws values that
cannot overflow; an overflowing case is a spec bug and raises). Floating inputs are summed in
float64; for the specs' inputs (fp32/fp16 values in [0.5, 1.5), multiples of 2^-24, n <= 2^28)
every partial sum is a multiple of 2^-24 below 1.5·2^28, i.e. an integer multiple of 2^-24 below
2^53, so the float64 results are exact, not merely accurate.
"""

from __future__ import annotations

import numpy as np

_I32 = np.iinfo(np.int32)


def _fits_int32(v: np.ndarray, what: str) -> None:
    if v.size and (v.min() < _I32.min or v.max() > _I32.max):
        raise OverflowError(f"{what}: exact result leaves int32 (min {v.min()}, max {v.max()})")


def sum_reference(x: np.ndarray) -> np.ndarray:
    """Σx as a (1,) array: int64 for integer input (checked to fit int32), float64 otherwise."""
    if x.dtype.kind in "iu":
        s = np.array([x.astype(np.int64).sum()], dtype=np.int64)
        _fits_int32(s, "sum")
        return s
    return np.array([np.sum(x.astype(np.float64))], dtype=np.float64)


def inclusive_scan_reference(x: np.ndarray) -> np.ndarray:
    """y[i] = Σ_{j<=i} x[j]: int64 for integer input (checked to fit int32), float64 otherwise."""
    if x.dtype.kind in "iu":
        y = np.cumsum(x.astype(np.int64))
        _fits_int32(y, "scan")
        return y
    return np.cumsum(x.astype(np.float64))
