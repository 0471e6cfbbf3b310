"""Exact references of the sum reduction and the inclusive prefix sum (scan).

Integer inputs are summed modulo 2^32 and read as two's-complement int32: the result an int32
accumulator gives in any order. Floating inputs are summed in
float64; for the specs' inputs (integers in ±[1, 100], or fp32/fp16 values in [0.5, 1.5), which
are multiples of 2^-24, n <= 2^28) every partial sum is an integer multiple of 2^-24 below 2^53,
so the float64 results are exact, not merely accurate.
"""

from __future__ import annotations

import numpy as np

from references.parallel import over_pieces

#: elements per piece of a float prefix sum computed on every core
CHUNK = 1 << 21


# Integer sums run in uint32, whose wrap-around modulo 2^32 is defined (signed overflow is not),
# and are read back as int32; float sums accumulate in float64 without a float64 copy of x
# (2^28 elements at bench size: each fresh 2 GiB array costs seconds of page faults on the host).


def sum_reference(x: np.ndarray) -> np.ndarray:
    """Σx as a (1,) array: the int32-wrapped sum (int64) for integer input, else float64."""
    if x.dtype.kind in "iu":
        s = np.array([x.view(np.uint32).sum(dtype=np.uint32)], dtype=np.uint32)
        return s.view(np.int32).astype(np.int64)
    return np.array([np.sum(x, dtype=np.float64)], dtype=np.float64)


def inclusive_scan_reference(x: np.ndarray) -> np.ndarray:
    """y[i] = Σ_{j<=i} x[j]: int32-wrapped prefixes (int32) for integer input, else float64."""
    if x.dtype.kind in "iu":
        return np.cumsum(x.view(np.uint32), dtype=np.uint32).view(np.int32)
    # pieces scanned on every core, then each piece offset by the sum of those before it: the
    # same result as one serial float64 cumsum, because every partial sum is exact (above)
    out = np.empty(x.size, np.float64)

    def scan(i: int) -> None:
        np.cumsum(x[i:i + CHUNK], dtype=np.float64, out=out[i:i + CHUNK])

    def shift(i: int) -> None:
        out[i:i + CHUNK] += offsets[i // CHUNK]

    over_pieces(scan, x.size, CHUNK)
    offsets = np.cumsum([0.0] + [out[i - 1] for i in range(CHUNK, x.size, CHUNK)])
    over_pieces(shift, x.size, CHUNK)
    return out
