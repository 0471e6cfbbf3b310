"""Float64 references of the element-wise operators."""

from __future__ import annotations

import numpy as np

#: ITU-R BT.601 luma weights.
LUMA = (0.299, 0.587, 0.114)


def vector_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a.astype(np.float64) + b.astype(np.float64)


def grayscale(img: np.ndarray) -> np.ndarray:
    """Unrounded luma of an (H, W, 3) RGB image, in float64 (the exact real value, up to 1e-13)."""
    x = img.astype(np.float64)
    return LUMA[0] * x[..., 0] + LUMA[1] * x[..., 1] + LUMA[2] * x[..., 2]
