"""Float64 reference of the row-wise, numerically stable softmax.

y[i, j] = exp(x[i, j] − max_j x[i, :]) / Σ_j exp(x[i, j] − max_j x[i, :]), every step in float64.
−inf entries give exactly 0 (exp(−inf) = 0); a row must hold at least one finite value (the
spec's inputs never give a whole row of −inf, whose softmax is undefined). Subtracting the row
maximum first makes every exponent ≤ 0, so nothing overflows for any finite input, and the
largest term is exactly 1, so the row sum is ≥ 1 (no division by a tiny number).
"""

from __future__ import annotations

import numpy as np


def softmax_rows(x: np.ndarray) -> np.ndarray:
    """Softmax of each row of a 2-D array (any float dtype), in float64."""
    e = np.array(x, dtype=np.float64)  # a copy, worked on in place (the same values, fewer passes)
    m = np.max(e, axis=1, keepdims=True)
    if not np.isfinite(m).all():
        raise ValueError("softmax reference: a row without a finite value (all −inf, or +inf/NaN)")
    e -= m
    np.exp(e, out=e)
    e /= np.sum(e, axis=1, keepdims=True)
    return e
