"""Float64 references of the element-wise operators."""

from __future__ import annotations

import numpy as np

from references.parallel import over_pieces

#: ITU-R BT.601 luma weights.
LUMA = (0.299, 0.587, 0.114)


#: elements per piece of a reference computed on every core
CHUNK = 1 << 21


def vector_add(a: np.ndarray, b: np.ndarray, out_dtype=np.float64) -> np.ndarray:
    """a + b in float64, rounded to ``out_dtype`` (overflow → ±inf); in ``CHUNK``-element pieces
    on every core (2^28 elements at bench size: 8 s single-threaded)."""
    a, b = a.ravel(), b.ravel()
    out = np.empty(a.size, out_dtype)

    def piece(i: int) -> None:
        with np.errstate(over="ignore"):
            out[i:i + CHUNK] = a[i:i + CHUNK].astype(np.float64) + b[i:i + CHUNK].astype(np.float64)

    over_pieces(piece, a.size, CHUNK)
    return out


def grayscale(img: np.ndarray) -> np.ndarray:
    """Unrounded luma of an (H, W, 3) RGB image, in float64 (the exact real value, up to 1e-13)."""
    x = img.astype(np.float64)
    return LUMA[0] * x[..., 0] + LUMA[1] * x[..., 1] + LUMA[2] * x[..., 2]
