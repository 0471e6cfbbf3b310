"""Low-bit weight formats of ``gemv_lowbit``, defined once: pack, unpack, float64 reference.

Both formats store W [N, K] row-major (N output channels, K the reduction axis) as integers q
with 16-bit float scales s (fp16; bf16 in bf16 cases, see below); the weight value is
w[n, k] = q[n, k]·s. Symmetric: no zero point.

``w4a16``
    q ∈ [−8, 7] (the full signed 4-bit range; −8 is a valid code, quantisers that stop at −7
    produce a subset). Stored offset-binary: the nibble is q + 8 ∈ [0, 15]. Two per byte along
    K: byte j of row n is ``(q[n, 2j] + 8) | (q[n, 2j + 1] + 8) << 4`` — element 2j in the LOW
    nibble, 2j+1 in the HIGH nibble. ``qweight`` uint8 [N, K/2]. One fp16 scale per group of
    ``GROUP`` = 128 consecutive k of a row: ``scales`` fp16 [N, K/128], w[n, k] = q[n, k]·
    scales[n, k // 128]. K must be a multiple of 128 (``pack`` rejects other K with a
    ValueError: no partial last group).
``w8a16``
    q ∈ [−128, 127], int8 two's complement, ``qweight`` int8 [N, K]; one fp16 scale per output
    channel: ``scales`` fp16 [N], w[n, k] = q[n, k]·scales[n]. K must be a multiple of 128 as
    well (one rule for both formats; the kernels' 16-byte loads rely on it).

The scales are fp16 in fp16 cases and bf16 (raw uint16 words, ``references.numerics``) in bf16
cases: the activation type names the scale type (``dtype`` below).

y[b, n] = Σ_k w[n, k]·x[b, k] for x [B, K]: ``reference`` in float64 (every product q·s·x of
16-bit floats s and x and |q| ≤ 128 is exact in float64; the float64 sum errs by ≤ K·2^-53
relative to Σ|w·x|, far below any fp32 kernel's rounding).
"""

from __future__ import annotations

import numpy as np

from references.numerics import decode

GROUP = 128
FORMATS = ("w4a16", "w8a16")
QRANGE = {"w4a16": (-8, 7), "w8a16": (-128, 127)}


def _check_k(fmt: str, k: int) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown low-bit format {fmt!r}; valid: {', '.join(FORMATS)}")
    if k <= 0 or k % GROUP:
        raise ValueError(f"{fmt}: K = {k} is not a multiple of {GROUP}; gemv_lowbit rejects it "
                         f"(no partial scale group; pad K with zero weights)")


def pack(fmt: str, q: np.ndarray) -> np.ndarray:
    """Integer weights q [N, K] (any int dtype, values in ``QRANGE[fmt]``) → stored ``qweight``."""
    q = np.asarray(q)
    _check_k(fmt, q.shape[1])
    lo, hi = QRANGE[fmt]
    if q.size and (q.min() < lo or q.max() > hi):
        raise ValueError(f"{fmt}: weights outside [{lo}, {hi}]")
    if fmt == "w8a16":
        return q.astype(np.int8)
    u = (q.astype(np.int16) + 8).astype(np.uint8)
    return (u[:, 0::2] | (u[:, 1::2] << 4)).astype(np.uint8)


def unpack(fmt: str, qweight: np.ndarray) -> np.ndarray:
    """Stored ``qweight`` → integer weights q [N, K] as int8."""
    if fmt == "w8a16":
        return np.asarray(qweight).view(np.int8)
    b = np.asarray(qweight, dtype=np.uint8)
    q = np.empty((b.shape[0], 2 * b.shape[1]), np.int8)
    q[:, 0::2] = (b & 0xF).astype(np.int8) - 8
    q[:, 1::2] = (b >> 4).astype(np.int8) - 8
    return q


def scale_shape(fmt: str, n: int, k: int) -> tuple[int, ...]:
    _check_k(fmt, k)
    return (n, k // GROUP) if fmt == "w4a16" else (n,)


def dequantize(fmt: str, qweight: np.ndarray, scales: np.ndarray, dtype: str = "fp16") -> np.ndarray:
    """W [N, K] in float64 (exact: q·s of a 16-bit float s and a small integer q); ``dtype``:
    the scales' storage, fp16 or bf16 (words)."""
    q = unpack(fmt, qweight).astype(np.float64)
    s = decode(np.asarray(scales), dtype).astype(np.float64)
    if fmt == "w4a16":
        return q * np.repeat(s, GROUP, axis=1)
    return q * s[:, None]


def reference(fmt: str, qweight: np.ndarray, scales: np.ndarray, x: np.ndarray,
              dtype: str = "fp16") -> dict[str, np.ndarray]:
    """y = x·Wᵀ [B, N] and Σ_k |w|·|x| [B, N] (bounds the accumulated rounding), float64;
    ``dtype``: storage of scales and x (fp16, or bf16 words)."""
    w = dequantize(fmt, qweight, scales, dtype)
    x = decode(np.asarray(x), dtype).astype(np.float64)
    return {"y": x @ w.T, "absy": np.abs(x) @ np.abs(w).T}
