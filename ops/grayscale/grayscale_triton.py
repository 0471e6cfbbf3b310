"""grayscale in Triton: out[p] = 0.299 R + 0.587 G + 0.114 B of interleaved RGB img[3p .. 3p+2],
0 <= p < n_pixels = H·W (contiguous image). uint8 output is rounded to nearest (y + 0.5, then
truncated: y >= 0), float32 output is the fp32 value. The element type comes from the pointers.

``grayscale_naive``: program → BLOCK pixels; three stride-3 gathers (one per channel), one
contiguous store. grid = ceil(n_pixels / BLOCK).
``grayscale_vec4_split``: program → BLOCK quads of 4 pixels. A quad is 12 contiguous channel
values = three 4-element vectors [R0 G0 B0 R1] [G1 B1 R2 G2] [B2 R3 G3 B3]; each is loaded as one
aligned vector (16 B for fp32, 4 B for u8) and split into its 4 lanes in registers
(reshape + split); the 4 lumas are joined into one vector store. grid = ceil(n_pixels / 4 / BLOCK).
Bytes: read 3·n_pixels, write n_pixels (times the itemsize). Flops: 5 per pixel.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _luma(r, g, b):
    return 0.299 * r.to(tl.float32) + 0.587 * g.to(tl.float32) + 0.114 * b.to(tl.float32)


@triton.jit
def _to_pixel(y, out_ptr):
    if out_ptr.dtype.element_ty == tl.uint8:
        # y <= 255·(sum of fp32 weights) < 255.5: the rounded value fits a byte
        return (y + 0.5).to(tl.uint8)
    else:
        return y.to(out_ptr.dtype.element_ty)


@triton.jit
def grayscale_naive(img_ptr, out_ptr, n_pixels, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # 64-bit offsets: 3·n_pixels may exceed 2^31
    p = pid * BLOCK + tl.arange(0, BLOCK)
    m = p < n_pixels
    r = tl.load(img_ptr + 3 * p, mask=m)  # read 3·BLOCK values, stride 3 per channel
    g = tl.load(img_ptr + 3 * p + 1, mask=m)
    b = tl.load(img_ptr + 3 * p + 2, mask=m)
    tl.store(out_ptr + p, _to_pixel(_luma(r, g, b), out_ptr), mask=m)  # write BLOCK values


@triton.jit
def _lanes(v, BLOCK: tl.constexpr):
    """[BLOCK, 4] → its four columns, each [BLOCK] (register-only reshape/split)."""
    even, odd = tl.split(tl.reshape(v, (BLOCK, 2, 2)))  # even: columns 0, 2; odd: 1, 3
    x0, x2 = tl.split(even)
    x1, x3 = tl.split(odd)
    return x0, x1, x2, x3


@triton.jit
def grayscale_vec4_split(img_ptr, out_ptr, n_pixels, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    q = pid * BLOCK + tl.arange(0, BLOCK)  # quad index
    k = tl.arange(0, 4)
    n_values = 3 * n_pixels
    v = 12 * q[:, None] + k[None, :]  # [BLOCK, 4]: first vector of each quad (aligned to 4 values)
    r0, g0, b0, r1 = _lanes(tl.load(img_ptr + v, mask=v < n_values, other=0), BLOCK)  # read 12 values
    g1, b1, r2, g2 = _lanes(tl.load(img_ptr + v + 4, mask=v + 4 < n_values, other=0), BLOCK)
    b2, r3, g3, b3 = _lanes(tl.load(img_ptr + v + 8, mask=v + 8 < n_values, other=0), BLOCK)
    y0 = _to_pixel(_luma(r0, g0, b0), out_ptr)
    y1 = _to_pixel(_luma(r1, g1, b1), out_ptr)
    y2 = _to_pixel(_luma(r2, g2, b2), out_ptr)
    y3 = _to_pixel(_luma(r3, g3, b3), out_ptr)
    # join(join(y0, y2), join(y1, y3))[b, i, j] = y[2i + j] → reshape to [BLOCK, 4] = (y0 y1 y2 y3)
    y = tl.reshape(tl.join(tl.join(y0, y2), tl.join(y1, y3)), (BLOCK, 4))
    o = 4 * q[:, None] + k[None, :]
    tl.store(out_ptr + o, y, mask=o < n_pixels)  # write 4 pixels per quad
