"""Number formats without a NumPy type: bfloat16 as raw 16-bit words.

bf16 is the top half of an IEEE fp32 word (8-bit exponent, 7-bit mantissa). ``to_bf16`` rounds
fp32/float64 values to nearest, ties to even (what torch, CUDA's ``__float2bfloat16_rn`` and
Triton do); NaN stays NaN. ``decode`` turns any stored output (bf16 words included) into float64
for comparison.
"""

from __future__ import annotations

import numpy as np


def to_bf16(x: np.ndarray) -> np.ndarray:
    """Round to bf16 (nearest, ties to even) and return the raw words as uint16."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16  # adds half an ulp (minus 1 at an odd tie)
    out = rounded.astype(np.uint16)
    out[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)  # quiet NaN, sign kept
    return out


def from_bf16(w: np.ndarray) -> np.ndarray:
    """bf16 words (uint16) → float32 values (exact)."""
    return (np.ascontiguousarray(w, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def round_to(x: np.ndarray, dtype: str) -> np.ndarray:
    """``x`` rounded to the storage format ``dtype``, as float64 (the value a kernel sees)."""
    if dtype == "bf16":
        return from_bf16(to_bf16(x)).astype(np.float64)
    return np.asarray(x).astype({"fp32": np.float32, "fp16": np.float16}.get(dtype, np.float64)) \
        .astype(np.float64)


def encode(x: np.ndarray, dtype: str) -> np.ndarray:
    """Values → the storage array of ``dtype`` (bf16 → uint16 words)."""
    if dtype == "bf16":
        return to_bf16(x)
    from suite.spec import np_dtype

    return np.asarray(x, dtype=np_dtype(dtype))  # no copy where x is already of it (inputs: GiBs)


def decode(arr: np.ndarray, dtype: str) -> np.ndarray:
    """A stored array of ``dtype`` as numbers (bf16 words → float32; others unchanged)."""
    return from_bf16(arr) if dtype == "bf16" else arr
