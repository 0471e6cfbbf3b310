"""Exact references of the sum reduction and the inclusive prefix sum (scan).

Integer inputs are summed in int64 (exact: n·2^31 < 2^63) and wrapped to int32 modulo 2^32, the
two's-complement result an int32 accumulator gives in any order. Floating inputs are summed in
float64; for the specs' inputs (integers in ±[1, 100], or fp32/fp16 values in [0.5, 1.5), which
are multiples of 2^-24, n <= 2^28) every partial sum is an integer multiple of 2^-24 below 2^53,
so the float64 results are exact, not merely accurate.
"""

from __future__ import annotations

import numpy as np


def wrap_int32(v: np.ndarray) -> np.ndarray:
    """int64 values modulo 2^32 as two's-complement int32 values (kept in int64)."""
    return ((v.astype(np.int64) + 2**31) % 2**32) - 2**31


def sum_reference(x: np.ndarray) -> np.ndarray:
    """Σx as a (1,) array: int64 holding the int32-wrapped sum for integer input, else float64."""
    if x.dtype.kind in "iu":
        return wrap_int32(np.array([x.astype(np.int64).sum()], dtype=np.int64))
    return np.array([np.sum(x.astype(np.float64))], dtype=np.float64)


def inclusive_scan_reference(x: np.ndarray) -> np.ndarray:
    """y[i] = Σ_{j<=i} x[j]: int64 holding int32-wrapped prefixes for integer input, else float64."""
    if x.dtype.kind in "iu":
        return wrap_int32(np.cumsum(x.astype(np.int64)))
    return np.cumsum(x.astype(np.float64))
