"""Triton gemv_lowbit: y[b, n] = Σ_k w[n, k]·x[b, k], formats of ``references/lowbit.py``.

Pointers: qweight (uint8 [N, K/2] w4a16 / int8 [N, K] w8a16, or an int32 view of either for
MODE 2, or the dense W for MODE 0), scales, x [B, K], y [B, N] all fp16 or all bf16. K is a
multiple of BK = 128 = one scale group, so a K tile never straddles two groups. W_STRIDE: the
row stride of w_ptr in its own elements (K/2 bytes, K int8, K·BITS/32 int32 words, K fp16): a
multiple of 16 at every allowed K, which Triton's integer specialisation turns into 16-byte
vector loads of the word tiles. Bytes: packed W + scales + x + y; 2·N·K·B flops.

- ``gemv_lowbit``: program = BN consecutive rows × all B batch rows. Per 128-wide K tile it loads
  the [BB, BK] x tile (fp16 → fp32) and the rows' weights, forms the exact q·x products in fp32,
  sums them over the tile (``tl.sum``), multiplies by the group scale (w4a16) and adds to a
  [BB, BN] fp32 accumulator; w8a16 applies the row scale at the end; y is rounded once to fp16.
  Weight loads, by constexpr MODE: 0 dense fp16 W (dequant_then_gemv's second kernel); 1 packed
  bytes, each k's byte indexed and its nibble shifted out in registers (fused); 2 int32 words of
  packed weights ([BN, BK·BITS/32] tile: 16-byte vectors along a row), each word split into its
  8 nibbles / 4 bytes by a broadcast shift and reshaped to [BN, BK] (fused_vec).
- ``dequant_lowbit``: program = BN rows × one 128-wide K tile; writes W_dense = fp16(q·s).
"""

import triton
import triton.language as tl


@triton.jit
def _q_tile(w_ptr, rows, k0, ws, BITS: tl.constexpr, MODE: tl.constexpr, BK: tl.constexpr):
    """[BN, BK] weights of the rows at k0.. as fp32 (integers q, or dense fp16 values for MODE 0)."""
    if MODE == 0:
        ks = k0 + tl.arange(0, BK)
        return tl.load(w_ptr + rows[:, None] * ws + ks[None, :]).to(tl.float32)
    elif MODE == 1:
        ks = k0 + tl.arange(0, BK)
        if BITS == 4:
            byte = tl.load(w_ptr + rows[:, None] * ws + (ks // 2)[None, :]).to(tl.int32)
            q = ((byte >> ((ks & 1) * 4)[None, :]) & 15) - 8
        else:
            q = tl.load(w_ptr + rows[:, None] * ws + ks[None, :]).to(tl.int32)
        return q.to(tl.float32)
    else:
        VPW: tl.constexpr = 32 // BITS
        WPT: tl.constexpr = BK // VPW
        j = tl.arange(0, WPT)
        words = tl.load(w_ptr + rows[:, None] * ws + (k0 // VPW + j)[None, :])
        sh = (tl.arange(0, VPW) * BITS)[None, None, :]
        v = (words[:, :, None] >> sh) & ((1 << BITS) - 1)
        if BITS == 4:
            q = v - 8
        else:
            q = (v ^ 128) - 128
        return tl.reshape(q, (rows.shape[0], BK)).to(tl.float32)


@triton.jit
def _out(v, OUT_BF16: tl.constexpr):
    """v (fp32) for a 16-bit store: bf16 rounded to nearest even here in integer arithmetic (the
    interpreter's fp32 → bf16 cast truncates), so the store's cast is exact; fp16 as is (the
    store rounds to nearest even). NaN never occurs here (finite inputs)."""
    if OUT_BF16:
        u = v.to(tl.uint32, bitcast=True)
        u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
        v = u.to(tl.float32, bitcast=True)
    return v


@triton.jit
def gemv_lowbit(w_ptr, s_ptr, x_ptr, y_ptr, N, K, B, W_STRIDE, BITS: tl.constexpr, MODE: tl.constexpr,
                BN: tl.constexpr, BK: tl.constexpr, BB: tl.constexpr, OUT_BF16: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BN + tl.arange(0, BN)
    rmask = rows < N
    rows_ld = tl.minimum(rows, N - 1)  # rows past N reload row N-1, never stored
    bi = tl.arange(0, BB)
    bmask = bi < B
    acc = tl.zeros((BB, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        ks = k0 + tl.arange(0, BK)
        xv = tl.load(x_ptr + bi[:, None] * K + ks[None, :], mask=bmask[:, None], other=0.0).to(tl.float32)
        w = _q_tile(w_ptr, rows_ld, k0, W_STRIDE, BITS, MODE, BK)
        part = tl.sum(w[None, :, :] * xv[:, None, :], axis=2)
        if MODE != 0 and BITS == 4:
            s = tl.load(s_ptr + rows_ld * (K // BK) + k0 // BK).to(tl.float32)
            part = part * s[None, :]
        acc += part
    if MODE != 0 and BITS == 8:
        acc = acc * tl.load(s_ptr + rows_ld).to(tl.float32)[None, :]
    omask = bmask[:, None] & rmask[None, :]
    out = _out(acc, OUT_BF16).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + bi[:, None] * N + rows[None, :], out, mask=omask)


@triton.jit
def dequant_lowbit(w_ptr, s_ptr, wd_ptr, N, K, W_STRIDE, BITS: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr, OUT_BF16: tl.constexpr):
    rows = tl.program_id(0) * BN + tl.arange(0, BN)
    k0 = tl.program_id(1) * BK
    rmask = rows < N
    rows_ld = tl.minimum(rows, N - 1)
    q = _q_tile(w_ptr, rows_ld, k0, W_STRIDE, BITS, 1, BK)
    if BITS == 4:
        s = tl.load(s_ptr + rows_ld * (K // BK) + k0 // BK).to(tl.float32)
    else:
        s = tl.load(s_ptr + rows_ld).to(tl.float32)
    ks = k0 + tl.arange(0, BK)
    wv = _out(q * s[:, None], OUT_BF16).to(wd_ptr.dtype.element_ty)
    tl.store(wd_ptr + rows[:, None] * K + ks[None, :], wv, mask=rmask[:, None])
