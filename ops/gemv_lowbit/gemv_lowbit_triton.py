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
  bytes, each k's byte indexed and its nibble shifted out in registers (fused).
- ``gemv_lowbit_row`` (fused_vec at batch 1, both formats): 2-D int32 word tiles, x read as
  16-bit pairs in the words' layout, a shift-free 2^23-magic unpack (one LOP3 per value), a
  loop-carried prefetch of the next word tile; see its docstring.
- ``gemv_lowbit_vec`` (fused_vec w8a16 at batch > 1): the same with a batch axis (3-D tiles).
- ``gemv_lowbit_dot`` (fused_vec w4a16 at batch > 1): weights as exact 16-bit magic values, tl.dot against the
  batch padded to 16 columns (wgmma on sm_90), the magic offset removed through Σx per group.
- ``dequant_lowbit``: program = BN rows × one 128-wide K tile; writes W_dense = fp16(q·s).
"""

import triton
import triton.language as tl

from ops.common.triton_ptx import prefetch_l2

try:  # griddepcontrol (programmatic dependent launch, sm_90+); absent from some builds (ROCm)
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:  # pragma: no cover - only PDL (a probe option) needs them
    gdc_launch_dependents = gdc_wait = None


@triton.jit
def _program_rows(N, B, BN: tl.constexpr, BB: tl.constexpr):
    """This program's BN rows (their mask, and the rows to load: past N row N-1 again, never
    stored) and the BB batch columns with their mask."""
    rows = tl.program_id(0) * BN + tl.arange(0, BN)
    bi = tl.arange(0, BB)
    return rows, rows < N, tl.minimum(rows, N - 1), bi, bi < B


@triton.jit
def _fields8(xt, BB: tl.constexpr, BW: tl.constexpr):
    """The [BB, 8·BW] x tile as its 8 field tiles [BB, BW] (k = 8w + e, e = 0..7), split in
    registers: e = 4·e2 + 2·e1 + e0, each split takes the last axis of size 2."""
    x4 = tl.reshape(xt, (BB, BW, 2, 2, 2))
    xa, xb = tl.split(x4)  # e0 = 0, 1: [BB, BW, 2, 2] over (e2, e1)
    xaa, xab = tl.split(xa)  # e1 = 0, 1: [BB, BW, 2] over e2
    xba, xbb = tl.split(xb)
    x0, x4_ = tl.split(xaa)
    x2, x6 = tl.split(xab)
    x1, x5 = tl.split(xba)
    x3, x7 = tl.split(xbb)
    return x0, x1, x2, x3, x4_, x5, x6, x7


@triton.jit
def _fields4(xt, BB: tl.constexpr, BW: tl.constexpr):
    """The [BB, 4·BW] x tile as its 4 field tiles (k = 4w + e, e = 2·e1 + e0)."""
    xa, xb = tl.split(tl.reshape(xt, (BB, BW, 2, 2)))  # e0 = 0, 1: [BB, BW, 2] over e1
    x0, x2 = tl.split(xa)
    x1, x3 = tl.split(xb)
    return x0, x1, x2, x3


@triton.jit
def _q_tile(w_ptr, rows, k0, ws, BITS: tl.constexpr, MODE: tl.constexpr, BK: tl.constexpr):
    """[BN, BK] weights of the rows at k0.. as fp32 (integers q, or dense fp16 values for MODE 0)."""
    if MODE == 0:
        ks = k0 + tl.arange(0, BK)
        return tl.load(w_ptr + rows[:, None] * ws + ks[None, :]).to(tl.float32)
    else:
        ks = k0 + tl.arange(0, BK)
        if BITS == 4:
            byte = tl.load(w_ptr + rows[:, None] * ws + (ks // 2)[None, :]).to(tl.int32)
            q = ((byte >> ((ks & 1) * 4)[None, :]) & 15) - 8
        else:
            q = tl.load(w_ptr + rows[:, None] * ws + ks[None, :]).to(tl.int32)
        return q.to(tl.float32)


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
    rows, rmask, rows_ld, bi, bmask = _program_rows(N, B, BN, BB)
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


@triton.jit
def _term(src, xe, SH: tl.constexpr, MASK: tl.constexpr, HALF: tl.constexpr):
    """[BB, BN, BW] products of the offset-binary field (src >> SH) & MASK (offset HALF) with the
    [BB, BW] x values xe of that field: (src & (MASK << SH)) | 2^23 read as fp32 is
    2^23 + field·2^SH exactly (the field stays inside the 23-bit mantissa), so one subtraction
    gives (field − HALF)·2^SH = q·2^SH exactly, and x is pre-scaled by 2^-SH (exact: a power of
    two, far from fp32 underflow)."""
    q = ((src & (MASK << SH)) | 0x4B000000).to(tl.float32, bitcast=True) - (8388608.0 + HALF * (1 << SH))
    return q[None, :, :] * (xe * (1.0 / (1 << SH)))[:, None, :]


@triton.jit
def _words(wrow, k0, K, wi, VPW: tl.constexpr, UNMASKED):
    """The [BN, BW] int32 word tile of the rows at k0 (UNMASKED: the whole tile is inside K; else
    words at or past K read as 0)."""
    if UNMASKED:
        return tl.load(wrow + k0 // VPW)
    else:
        return tl.load(wrow + k0 // VPW, mask=(k0 + wi * VPW < K)[None, :], other=0)


@triton.jit
def _next_words(wrow, k1, K, wi, VPW: tl.constexpr, BN: tl.constexpr, BW: tl.constexpr, EVEN_K: tl.constexpr):
    """The loop-carried prefetch of gemv_lowbit_row / gemv_lowbit_dp4a: the word tile at k1 (the
    next one). EVEN_K: past the last tile nothing is loaded — one uniform predicate keeps the 16-byte
    loads (gemv_lowbit_vec reloads tile 0 instead, 1/(K/BK) more bytes: 1.5 points for
    gemv_lowbit_row); else words at or past K read as 0."""
    if EVEN_K:
        live = tl.full((BN, BW), 1, tl.int1) & (k1 < K)
        return tl.load(wrow + k1 // VPW, mask=live, other=0)
    else:
        return _words(wrow, k1, K, wi, VPW, False)


@triton.jit
def gemv_lowbit_vec(w_ptr, s_ptr, x_ptr, y_ptr, N, K, B, W_STRIDE, BN: tl.constexpr, BK: tl.constexpr,
                    BB: tl.constexpr, EVEN_K: tl.constexpr, OUT_BF16: tl.constexpr):
    """fused_vec w8a16 at batch > 1: program = BN rows × all B batch rows; per BK-wide K tile a
    [BN, BK/4] tile of int32 words (16-byte vectors along a row), never interleaved back to k
    order: byte e of every word (k = 4w + e) is its own [BN, BW] tile, multiplied by the matching
    x tile (the [BB, BK] x tile loaded once, contiguous, and split in registers; shared by the BN
    rows). Unpack without int→float conversion (_term): bytes 0, 1 from u = w ^ 0x80808080 (q + 128
    per byte), 2, 3 from u >> 16, x pre-scaled by 256^-(e%2). Products and sums fp32 in [BB, BN, BW]
    accumulators, the row scale and one tl.sum over the words at the end. (Its x split arrives in
    another layout than the words: Triton converts each field tile through shared memory, which
    gemv_lowbit_row avoids at batch 1.)"""
    rows, rmask, rows_ld, bi, bmask = _program_rows(N, B, BN, BB)
    BW: tl.constexpr = BK // 4  # words per tile
    wi = tl.arange(0, BW)
    acc = tl.zeros((BB, BN, BW), dtype=tl.float32)
    wrow = w_ptr + rows_ld[:, None] * W_STRIDE + wi[None, :]
    nxt = _words(wrow, 0, K, wi, 4, EVEN_K)
    for k0 in range(0, K, BK):
        # software pipeline: the next tile's words are loaded (a loop-carried value, so they stay
        # in flight across the compute below) before this tile is consumed
        words = nxt
        if EVEN_K:  # past the last tile: reload tile 0 (in bounds, unused), no masks; the product
            # keeps the offset's divisibility by BK visible (16-byte loads)
            nxt = _words(wrow, (k0 + BK) * (k0 + BK < K).to(tl.int32), K, wi, 4, True)
        else:
            nxt = _words(wrow, k0 + BK, K, wi, 4, False)
        # x once per tile, contiguous (16-byte loads), then split in registers into the 4 field
        # tiles [BB, BW] (k = 4w + e): strided per-field loads kept L1 91 % busy at 20 % of the
        # bandwidth (Nsight Compute, H200, the w4a16 form of this kernel)
        kt = k0 + tl.arange(0, BK)
        xt = tl.load(x_ptr + bi[:, None] * K + kt[None, :], mask=bmask[:, None] & (kt < K)[None, :],
                     other=0.0).to(tl.float32)
        u = words ^ -2139062144  # 0x80808080 as an int32: q + 128 per byte
        hi = u >> 16  # bytes 2, 3 at bits 0, 8
        x0, x1, x2, x3 = _fields4(xt, BB, BW)
        acc += _term(u, x0, 0, 255, 128.0)
        acc += _term(u, x1, 8, 255, 128.0)
        acc += _term(hi, x2, 0, 255, 128.0)
        acc += _term(hi, x3, 8, 255, 128.0)
    out = tl.sum(acc, axis=2) * tl.load(s_ptr + rows_ld).to(tl.float32)[None, :]
    omask = bmask[:, None] & rmask[None, :]
    o = _out(out, OUT_BF16).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + bi[:, None] * N + rows[None, :], o, mask=omask)


@triton.jit
def _field(src, SH: tl.constexpr, MASK: tl.constexpr, HALF: tl.constexpr, MAGIC):
    """The offset-binary field (src >> SH) & MASK (value q + HALF; SH + its width ≤ 23) of the
    int32 tile src as the exact fp32 q, without a shift: OR-ed into the mantissa of 2^(23 − SH)
    (exponent word MAGIC − SH·2^23, MAGIC = 0x4B000000 = 2^23) its bits weigh 2^0, so the float
    is 2^(23 − SH) + q + HALF exactly and one subtraction leaves q. Mask and OR are one LOP3
    because MAGIC arrives as a kernel argument: ptxas holds the exponent words in registers (two
    immediates cannot share one LOP3). (Folding w8a16's sign flip into the same LOP3 as an XOR
    made ptxas split it in two again: sm_90 SASS, Triton 3.6.)"""
    e = (src & (MASK << SH)) | (MAGIC - (SH << 23))
    return e.to(tl.float32, bitcast=True) - ((1 << (23 - SH)) + HALF)


@triton.jit
def _xhalf(v, HIGH: tl.constexpr, XBF16: tl.constexpr):
    """The low or high 16-bit half of the int32 tile v (two x values) as fp32 (exact), as a row."""
    if XBF16:
        f = (v & -65536).to(tl.float32, bitcast=True) if HIGH else (v << 16).to(tl.float32, bitcast=True)
    else:
        f = _bits16(v >> 16 if HIGH else v, tl.float16, True)
    return f[None, :]


@triton.jit
def gemv_lowbit_row(w_ptr, s_ptr, x_ptr, y_ptr, N, K, B, W_STRIDE, MAGIC, BITS: tl.constexpr,
                    BN: tl.constexpr, BK: tl.constexpr, EVEN_K: tl.constexpr, OUT_BF16: tl.constexpr):
    """fused_vec at batch 1 (both formats): gemv_lowbit_vec's word tiles and 2^23-magic unpack in
    2-D [BN, BW] tiles. gemv_lowbit_vec's batch axis makes its products 3-D, and its x tile, split
    in registers, arrives in another layout than the words: the sm_90 SASS converted every
    unpacked field tile through shared memory (32 barriers per 512 k at (16, 512, 4)). Here x is
    read as int32 pairs of 16-bit values straight into the word tile's column layout ([BW] tiles,
    pair VPW/2·w + j of word w; at 8 warps Triton loads them per thread, no conversion), each
    field is one LOP3 (runtime MAGIC, see _field; no shift, no scaling of x), one FADD and one
    FFMA into [BN, BW] fp32
    accumulators; w4a16's group scale multiplies each word's 8-field partial sum (one scale per
    16 words), w8a16's row scale the row sum; one tl.sum at the end."""
    rows = tl.program_id(0) * BN + tl.arange(0, BN)
    rmask = rows < N
    rows_ld = tl.minimum(rows, N - 1)
    VPW: tl.constexpr = 32 // BITS
    BW: tl.constexpr = BK // VPW
    wi = tl.arange(0, BW)
    XB: tl.constexpr = OUT_BF16
    acc = tl.zeros((BN, BW), dtype=tl.float32)
    wrow = w_ptr + rows_ld[:, None] * W_STRIDE + wi[None, :]
    xrow = x_ptr.to(tl.pointer_type(tl.int32), bitcast=True) + (VPW // 2) * wi
    nxt = _words(wrow, 0, K, wi, VPW, EVEN_K)
    for k0 in range(0, K, BK):
        words = nxt  # the next tile's loads are issued before this one is consumed (see gemv_lowbit_vec)
        nxt = _next_words(wrow, k0 + BK, K, wi, VPW, BN, BW, EVEN_K)
        xp = xrow + k0 // 2
        xm = k0 + VPW * wi < K
        if BITS == 4:
            xa = tl.load(xp, mask=xm, other=0)
            xb = tl.load(xp + 1, mask=xm, other=0)
            xc = tl.load(xp + 2, mask=xm, other=0)
            xd = tl.load(xp + 3, mask=xm, other=0)
            hi = words >> 12  # nibbles 5, 6, 7 at bits 8, 12, 16
            part = _field(words, 0, 15, 8, MAGIC) * _xhalf(xa, False, XB)
            part += _field(words, 4, 15, 8, MAGIC) * _xhalf(xa, True, XB)
            part += _field(words, 8, 15, 8, MAGIC) * _xhalf(xb, False, XB)
            part += _field(words, 12, 15, 8, MAGIC) * _xhalf(xb, True, XB)
            part += _field(words, 16, 15, 8, MAGIC) * _xhalf(xc, False, XB)
            part += _field(hi, 8, 15, 8, MAGIC) * _xhalf(xc, True, XB)
            part += _field(hi, 12, 15, 8, MAGIC) * _xhalf(xd, False, XB)
            part += _field(hi, 16, 15, 8, MAGIC) * _xhalf(xd, True, XB)
            GT: tl.constexpr = BK // 128  # one scale per 128 k = 16 words
            gi = k0 // 128 + tl.arange(0, GT)
            gs = tl.load(s_ptr + rows_ld[:, None] * (K // 128) + gi[None, :], mask=(gi < K // 128)[None, :],
                         other=0.0).to(tl.float32)
            acc += part * tl.reshape(tl.broadcast_to(gs[:, :, None], (BN, GT, 16)), (BN, BW))
        else:
            xa = tl.load(xp, mask=xm, other=0)
            xb = tl.load(xp + 1, mask=xm, other=0)
            u = words ^ -2139062144  # 0x80808080 as an int32: q + 128 per byte
            hi = u >> 16  # bytes 2, 3 at bits 0, 8
            acc += _field(u, 0, 255, 128, MAGIC) * _xhalf(xa, False, XB)
            acc += _field(u, 8, 255, 128, MAGIC) * _xhalf(xa, True, XB)
            acc += _field(hi, 0, 255, 128, MAGIC) * _xhalf(xb, False, XB)
            acc += _field(hi, 8, 255, 128, MAGIC) * _xhalf(xb, True, XB)
    out = tl.sum(acc, axis=1)
    if BITS == 8:
        out = out * tl.load(s_ptr + rows_ld).to(tl.float32)
    tl.store(y_ptr + rows, _out(out, OUT_BF16).to(y_ptr.dtype.element_ty), mask=rmask)


@triton.jit
def _bits16(t, dt: tl.constexpr, F32: tl.constexpr):
    """The low 16 bits of the int32 tile t read as dt (bf16 / fp16); F32: widened to fp32 (exact)."""
    v = t.to(tl.int16).to(dt, bitcast=True)
    return v.to(tl.float32) if F32 else v


@triton.jit
def _xdot(q, xe, d, F32: tl.constexpr):
    """d + q·xeᵀ, fp32 accumulation; F32 (the interpreter, whose bf16 dot is wrong): in fp32, exact
    products as on the tensor cores."""
    if F32:
        return tl.dot(q, tl.trans(xe.to(tl.float32)), d, input_precision="ieee")
    return tl.dot(q, tl.trans(xe), d)


@triton.jit
def _pair(d, t, xa, xb, dt: tl.constexpr, F32: tl.constexpr):
    """d + lo·xaᵀ + hi·xbᵀ: the two 16-bit halves of the int32 tile t against their x field tiles."""
    return _xdot(_bits16(t >> 16, dt, F32), xb, _xdot(_bits16(t, dt, F32), xa, d, F32), F32)


@triton.jit
def _w4_group(wrow, x_ptr, bi, bmask, K, g, BN: tl.constexpr, BB: tl.constexpr, BW: tl.constexpr,
              MAGIC: tl.constexpr, xdt: tl.constexpr, F32: tl.constexpr):
    """w4a16 group g: (Σ_k (q + OFF)·x over its 128 k as a [BN, BB] fp32 tile, Σ_k x per column)."""
    words = tl.load(wrow + g * BW)
    kt = g * 128 + tl.arange(0, 128)
    xt = tl.load(x_ptr + bi[:, None] * K + kt[None, :], mask=bmask[:, None], other=0.0)
    x0, x1, x2, x3, x4_, x5, x6, x7 = _fields8(xt, BB, BW)
    NIB: tl.constexpr = 0x000F000F
    d = tl.zeros((BN, BB), dtype=tl.float32)
    d = _pair(d, (words & NIB) | MAGIC, x0, x4_, xdt, F32)
    d = _pair(d, ((words >> 4) & NIB) | MAGIC, x1, x5, xdt, F32)
    d = _pair(d, ((words >> 8) & NIB) | MAGIC, x2, x6, xdt, F32)
    d = _pair(d, ((words >> 12) & NIB) | MAGIC, x3, x7, xdt, F32)
    return d, tl.sum(xt.to(tl.float32), axis=1)


@triton.jit
def gemv_lowbit_dot(w_ptr, s_ptr, x_ptr, y_ptr, N, K, B, W_STRIDE, BITS: tl.constexpr, BN: tl.constexpr,
                    BB: tl.constexpr, OUT_BF16: tl.constexpr, F32: tl.constexpr = False):
    """fused_vec's w4a16 kernel (for w8a16 a probe form: gemv_lowbit_vec is faster there), on tensor
    cores: program = BN rows × BB ≥ 16 batch columns (those past
    B are zeros, never stored); per 128-k group one [BN, 128·BITS/32] int32 word tile and the
    [BB, 128] x tile, split in registers into one tile per field position e of a word (k = VPW·w + e).
    Weights become exact 16-bit dot operands without int→float conversion: with M two 16-bit magic
    words (bf16 0x4300 = 128, fp16 0x6400 = 1024: one mantissa unit per integer), (v & F) | M
    holds OFF0 + f for a field f < 2^7 (bf16) / 2^10 (fp16) in each half — two weights per shift
    and LOP3. w4a16: nibbles e and e + 4 sit at bits 4e and 16 + 4e (F = 0x000F000F), f = q + 8.
    w8a16 (bytes two's complement: u = w ^ 0x80808080 holds q + 128): fp16 takes bytes e and e + 2
    whole (F = 0x00FF00FF); bf16's 8 bits hold 128 + f only for f < 128, so it takes the low and
    the high nibble of each byte as two operands, d = 16·d_hi + d_lo. fp32 accumulation: the
    group's d = Σ (q + OFF)·x; (d − OFF·Σ_k x) is the group's exact-product sum (Σ x in fp32 per
    batch column), times the group scale (w4a16; two groups' dots issued per loop iteration before
    either result was used: 28.1 against 27.6 %, within the spread, removed). w8a16 has one scale
    per row: its dot accumulators run over all of K, then (d − OFF·Σx)·s. The offset costs
    accuracy in proportion to OFF·|partial Σx| (2^-24 relative per addition): far below the
    output's 16-bit rounding at these K (spec.tolerance)."""
    rows, rmask, rows_ld, bi, bmask = _program_rows(N, B, BN, BB)
    BW: tl.constexpr = 128 * BITS // 32  # words per group
    wi = tl.arange(0, BW)
    wrow = w_ptr + rows_ld[:, None] * W_STRIDE + wi[None, :]
    xdt: tl.constexpr = x_ptr.dtype.element_ty
    MAGIC: tl.constexpr = 0x43004300 if OUT_BF16 else 0x64006400
    NIB: tl.constexpr = 0x000F000F
    if BITS == 4:
        OFF: tl.constexpr = 136.0 if OUT_BF16 else 1032.0  # 128 / 1024 + 8
    else:
        OFF: tl.constexpr = 2304.0 if OUT_BF16 else 1152.0  # 17·128 + 128 / 1024 + 128
    ng = K // 128
    acc = tl.zeros((BN, BB), dtype=tl.float32)
    if BITS == 4:  # a fresh accumulator per group (its scale)
        for g in range(0, ng):
            d, xs = _w4_group(wrow, x_ptr, bi, bmask, K, g, BN, BB, BW, MAGIC, xdt, F32)
            acc += (d - OFF * xs[None, :]) * tl.load(s_ptr + rows_ld * ng + g).to(tl.float32)[:, None]
    else:  # one scale per row: the dot accumulators run over all of K (Σx too), scaled at the end
        dh = tl.zeros((BN, BB), dtype=tl.float32)
        xs = tl.zeros((BB,), dtype=tl.float32)
        for g in range(0, ng):
            words = tl.load(wrow + g * BW)
            kt = g * 128 + tl.arange(0, 128)
            xt = tl.load(x_ptr + bi[:, None] * K + kt[None, :], mask=bmask[:, None], other=0.0)
            u = words ^ -2139062144  # 0x80808080 as an int32: q + 128 per byte
            x0, x1, x2, x3 = _fields4(xt, BB, BW)
            if OUT_BF16:
                acc = _pair(acc, (u & NIB) | MAGIC, x0, x2, xdt, F32)
                acc = _pair(acc, ((u >> 8) & NIB) | MAGIC, x1, x3, xdt, F32)
                dh = _pair(dh, ((u >> 4) & NIB) | MAGIC, x0, x2, xdt, F32)
                dh = _pair(dh, ((u >> 12) & NIB) | MAGIC, x1, x3, xdt, F32)
            else:
                acc = _pair(acc, (u & 0x00FF00FF) | MAGIC, x0, x2, xdt, F32)
                acc = _pair(acc, ((u >> 8) & 0x00FF00FF) | MAGIC, x1, x3, xdt, F32)
            xs += tl.sum(xt.to(tl.float32), axis=1)
        acc = (acc + 16.0 * dh - OFF * xs[None, :]) * tl.load(s_ptr + rows_ld).to(tl.float32)[:, None]
    omask = rmask[:, None] & bmask[None, :]
    o = _out(acc, OUT_BF16).to(y_ptr.dtype.element_ty)
    tl.store(y_ptr + bi[None, :] * N + rows[:, None], o, mask=omask)


# ---- fused_dp4a: w4a16 on integer dot products (gemv_lowbit.cu: gemv_lowbit_dp4a has the scheme) ----


@triton.jit
def gemv_x_planes(x_ptr, xp_ptr, sm_ptr, f_ptr, K, GB: tl.constexpr, PDL: tl.constexpr = False):
    """x [B, K] in fixed point per scale group: M = round(x·2^(148 − eb)), eb the fp32 biased
    exponent of the group's max |x| (at least 22), so |M| < 2^22. Program = GB groups of batch row
    program_id(1). Writes, per batch row: the byte planes of M as int32 words xp [3][2][K/8] (plane
    p, word w: [0] the bytes of k = 8w + 0, 2, 4, 6 — the low nibbles of weight word w — and [1] of
    8w + 1, 3, 5, 7), 8·Σ M per word sm [K/8], and the group factor 2^(eb − 148) f [K/128] (NaN
    where the group holds a NaN or Inf). PDL: the dependent launch (gemv_lowbit_dp4a with PDL) may
    start at once; it waits for this grid's writes itself (griddepcontrol)."""
    if PDL:
        gdc_launch_dependents()
    b = tl.program_id(1)
    G = K // 128
    g = tl.program_id(0) * GB + tl.arange(0, GB)
    gm = g < G
    k = g[:, None] * 128 + tl.arange(0, 128)[None, :]
    xv = tl.load(x_ptr + b * K + k, mask=gm[:, None], other=0.0).to(tl.float32)
    bits = xv.to(tl.int32, bitcast=True)
    nonfinite = tl.max(((bits & 0x7F800000) == 0x7F800000).to(tl.int32), axis=1) > 0
    amax = tl.max(tl.abs(xv), axis=1)
    eb = tl.maximum(amax.to(tl.int32, bitcast=True) >> 23, 22)
    cs = ((275 - eb) << 23).to(tl.float32, bitcast=True)  # 2^(148 − eb)
    m = tl.fma(xv, cs[:, None], 12582912.0).to(tl.int32, bitcast=True) - 0x4B400000  # round(x·cs)
    f = tl.where(nonfinite, float("nan"), ((eb - 21) << 23).to(tl.float32, bitcast=True))
    tl.store(f_ptr + b * G + g, f, mask=gm)
    w = g[:, None] * 16 + tl.arange(0, 16)[None, :]  # [GB, 16] word indices
    wm = gm[:, None]
    W = K // 8
    tl.store(sm_ptr + b * W + w, 8 * tl.sum(tl.reshape(m, (GB, 16, 8)), axis=2), mask=wm)
    m4 = tl.reshape(m, (GB, 16, 4, 2))  # k = 8w + 2j + o
    sh = (tl.arange(0, 4) * 8)[None, None, :, None]
    for p in tl.static_range(3):
        word = tl.sum(((m4 >> (8 * p)) & 255) << sh, axis=2)  # [GB, 16, 2]: disjoint bytes, sum = or
        lo, hi = tl.split(word)
        tl.store(xp_ptr + (b * 6 + 2 * p) * W + w, lo, mask=wm)
        tl.store(xp_ptr + (b * 6 + 2 * p + 1) * W + w, hi, mask=wm)


@triton.jit
def _dp4a(a, b, c, SIGNED: tl.constexpr, ASM: tl.constexpr):
    """c + Σ_i a_i·b_i over the 4 bytes of int32 tiles (a's bytes 0..15; b's unsigned, or signed
    with SIGNED): PTX dp4a (ASM), else the same integers in plain arithmetic (the interpreter)."""
    if ASM:
        op: tl.constexpr = "dp4a.s32.s32 $0, $1, $2, $3;" if SIGNED else "dp4a.u32.u32 $0, $1, $2, $3;"
        return tl.inline_asm_elementwise(op, "=r,r,r,r", [a, b, c], dtype=tl.int32, is_pure=True, pack=1)
    else:
        for i in tl.static_range(4):
            ai = (a >> (8 * i)) & 255
            if SIGNED:
                bi = (b << (24 - 8 * i)) >> 24
            else:
                bi = (b >> (8 * i)) & 255
            c += ai * bi
        return c


@triton.jit
def _plane(lo, hi, xq, W, wg, xm, BN: tl.constexpr, BW: tl.constexpr, SIGNED: tl.constexpr,
           ASM: tl.constexpr):
    """One byte plane's exact sum over each word's 8 k: dp4a of the low and the high nibbles
    against the plane's two words of x (xq: the plane's [2][K/8] int32 words)."""
    xl = tl.broadcast_to(tl.load(xq + wg, mask=xm, other=0)[None, :], (BN, BW))
    xh = tl.broadcast_to(tl.load(xq + W + wg, mask=xm, other=0)[None, :], (BN, BW))
    return _dp4a(hi, xh, _dp4a(lo, xl, tl.zeros((BN, BW), dtype=tl.int32), SIGNED, ASM), SIGNED, ASM)


@triton.jit
def _nibbles(w):
    """A word tile's low and high nibbles, each in its own byte: (k 0, 2, 4, 6), (k 1, 3, 5, 7)."""
    return w & 0x0F0F0F0F, (w >> 4) & 0x0F0F0F0F


@triton.jit
def _dp4a_tile(acc, words, k0, rows_ld, b, s_ptr, xp_ptr, sm_ptr, f_ptr, K, W, BN: tl.constexpr,
               BW: tl.constexpr, GT: tl.constexpr, ASM: tl.constexpr):
    """acc + the [BN, BW] word tile at k0 against x's planes: per word lo = w & 0x0F0F0F0F, hi = (w
    >> 4) & 0x0F0F0F0F, six dp4a into exact plane sums, one int→float and one FMA with the group
    scale × the group factor."""
    wi = tl.arange(0, BW)
    wg = k0 // 8 + wi
    xm = wg < W
    lo, hi = _nibbles(words)
    p0 = _plane(lo, hi, xp_ptr + (b * 6 + 0) * W, W, wg, xm, BN, BW, False, ASM)
    p1 = _plane(lo, hi, xp_ptr + (b * 6 + 2) * W, W, wg, xm, BN, BW, False, ASM)
    p2 = _plane(lo, hi, xp_ptr + (b * 6 + 4) * W, W, wg, xm, BN, BW, True, ASM)
    s8 = tl.load(sm_ptr + b * W + wg, mask=xm, other=0)
    t = p0 + (p1 << 8) + (p2 << 16) - s8[None, :]
    return _scaled(acc, t, k0, rows_ld, b, s_ptr, f_ptr, K, BN, GT, 16)


@triton.jit
def _scaled(acc, t, k0, rows_ld, b, s_ptr, f_ptr, K, BN: tl.constexpr, GT: tl.constexpr, PER: tl.constexpr):
    """acc + the exact integer sums t [BN, GT·PER] (PER per 128-k group: words or units) as floats,
    each times its group's scale × x's group factor: one int→float and one FMA each."""
    gi = k0 // 128 + tl.arange(0, GT)
    gmask = gi < K // 128
    fg = tl.load(f_ptr + b * (K // 128) + gi, mask=gmask, other=0.0)
    sf = tl.load(s_ptr + rows_ld[:, None] * (K // 128) + gi[None, :], mask=gmask[None, :],
                 other=0.0).to(tl.float32) * fg[None, :]
    return acc + t.to(tl.float32) * tl.reshape(tl.broadcast_to(sf[:, :, None], (BN, GT, PER)), (BN, GT * PER))


@triton.jit
def _split4(t, R: tl.constexpr, Q: tl.constexpr):
    """[R, 4·Q] → its words 4q, 4q + 1, 4q + 2, 4q + 3 as four [R, Q] tiles."""
    e, o = tl.split(tl.reshape(t, (R, Q, 2, 2)))
    w0, w2 = tl.split(e)
    w1, w3 = tl.split(o)
    return w0, w1, w2, w3


@triton.jit
def _unit_plane(c, l0, h0, l1, h1, l2, h2, l3, h3, xq, W, wg, xm, BN: tl.constexpr, Q: tl.constexpr,
                SIGNED: tl.constexpr, ASM: tl.constexpr):
    """c + one byte plane's sum over each 32-k unit: eight dp4a chained through the accumulator
    (the unit's four words' low and high nibbles against the plane's two words of x each)."""
    xa0, xa1, xa2, xa3 = _split4(tl.load(xq + wg, mask=xm, other=0)[None, :], 1, Q)
    xb0, xb1, xb2, xb3 = _split4(tl.load(xq + W + wg, mask=xm, other=0)[None, :], 1, Q)
    sh: tl.constexpr = (BN, Q)
    c = _dp4a(l0, tl.broadcast_to(xa0, sh), c, SIGNED, ASM)
    c = _dp4a(h0, tl.broadcast_to(xb0, sh), c, SIGNED, ASM)
    c = _dp4a(l1, tl.broadcast_to(xa1, sh), c, SIGNED, ASM)
    c = _dp4a(h1, tl.broadcast_to(xb1, sh), c, SIGNED, ASM)
    c = _dp4a(l2, tl.broadcast_to(xa2, sh), c, SIGNED, ASM)
    c = _dp4a(h2, tl.broadcast_to(xb2, sh), c, SIGNED, ASM)
    c = _dp4a(l3, tl.broadcast_to(xa3, sh), c, SIGNED, ASM)
    return _dp4a(h3, tl.broadcast_to(xb3, sh), c, SIGNED, ASM)


@triton.jit
def _dp4a_units(acc, words, k0, rows_ld, b, s_ptr, xp_ptr, sm_ptr, f_ptr, K, W, BN: tl.constexpr,
                BW: tl.constexpr, GT: tl.constexpr, ASM: tl.constexpr):
    """_dp4a_tile combined per 32-k unit, as CUDA's and WGSL's kernels do (UNIT 1): acc [BN, BW/4]
    + the word tile's four words per unit, each plane's eight dp4a chained through one
    accumulator (P0's starting at −8·ΣM of the unit), then P0 + 2^8·P1 + 2^16·P2 (|·| ≤ 2^30: exact
    in int32, wrapping on the way), one int→float and one FMA per unit and row — against one per
    word in _dp4a_tile."""
    Q: tl.constexpr = BW // 4
    wg = k0 // 8 + tl.arange(0, BW)
    xm = wg < W
    w0, w1, w2, w3 = _split4(words, BN, Q)
    l0, h0 = _nibbles(w0)
    l1, h1 = _nibbles(w1)
    l2, h2 = _nibbles(w2)
    l3, h3 = _nibbles(w3)
    s0, s1, s2, s3 = _split4(tl.load(sm_ptr + b * W + wg, mask=xm, other=0)[None, :], 1, Q)
    c0 = tl.broadcast_to(-(s0 + s1 + s2 + s3), (BN, Q))
    zero = tl.zeros((BN, Q), dtype=tl.int32)
    xq = xp_ptr + b * 6 * W  # plane p's two words of x: xq + 2·p·W
    p0 = _unit_plane(c0, l0, h0, l1, h1, l2, h2, l3, h3, xq, W, wg, xm, BN, Q, False, ASM)
    p1 = _unit_plane(zero, l0, h0, l1, h1, l2, h2, l3, h3, xq + 2 * W, W, wg, xm, BN, Q, False, ASM)
    p2 = _unit_plane(zero, l0, h0, l1, h1, l2, h2, l3, h3, xq + 4 * W, W, wg, xm, BN, Q, True, ASM)
    return _scaled(acc, p0 + (p1 << 8) + (p2 << 16), k0, rows_ld, b, s_ptr, f_ptr, K, BN, GT, 4)


@triton.jit
def _tile(acc, words, k0, rows_ld, b, s_ptr, xp_ptr, sm_ptr, f_ptr, K, W, BN: tl.constexpr, BW: tl.constexpr,
          GT: tl.constexpr, ASM: tl.constexpr, UNIT: tl.constexpr):
    """acc + one word tile: per 32-k unit (UNIT 1, _dp4a_units) or per word (_dp4a_tile)."""
    if UNIT:
        return _dp4a_units(acc, words, k0, rows_ld, b, s_ptr, xp_ptr, sm_ptr, f_ptr, K, W, BN, BW, GT, ASM)
    else:
        return _dp4a_tile(acc, words, k0, rows_ld, b, s_ptr, xp_ptr, sm_ptr, f_ptr, K, W, BN, BW, GT, ASM)


@triton.jit
def _prefetch_rows(w_ptr, rows, W_STRIDE, K, LINES: tl.constexpr):
    """The first LINES 128-byte lines (32 int32 words each) of each of the rows, at most the row's
    K/8 words, asked into L2 (prefetch.global.L2: nothing returns, nothing waits)."""
    li = tl.arange(0, LINES)
    live = (li * 256 < K)[None, :] & (rows >= 0)[:, None]
    prefetch_l2(w_ptr + rows[:, None] * W_STRIDE + tl.where(live, li[None, :] * 32, 0))


@triton.jit
def gemv_lowbit_dp4a(w_ptr, s_ptr, xp_ptr, sm_ptr, f_ptr, y_ptr, N, K, W_STRIDE, BN: tl.constexpr,
                     BK: tl.constexpr, EVEN_K: tl.constexpr, OUT_BF16: tl.constexpr, ASM: tl.constexpr,
                     STAGES: tl.constexpr = 1, PDL: tl.constexpr = False, PREF: tl.constexpr = 0,
                     UNIT: tl.constexpr = 0):
    """fused_dp4a (w4a16): program = BN rows of batch row program_id(1); [BN, BW] int32 word tiles
    and six dp4a per word against x's byte planes (gemv_x_planes) into exact int32 plane sums; Σ q·M
    over the word's 8 k = P0 + 2^8·P1 + 2^16·P2 − 8·ΣM (|·| ≤ 2^28, exact) (_dp4a_tile). STAGES 1:
    the next word tile loaded ahead into registers (as gemv_lowbit_row); STAGES > 1 (two of the
    registered configs, BK 1024): the loop as tl.range(num_stages=STAGES), which Triton 3.6 turns
    into a cp.async ring of STAGES tiles in shared memory (the kernel-level num_stages stages only
    loads that feed a tl.dot) — more bytes in flight per SM without holding them in registers. PDL
    (registered where the GPU has it; launched with launch_pdl after gemv_x_planes with PDL): the
    program starts while gemv_x_planes runs, loads its first word tile (STAGES 1), then waits for
    x's planes (griddepcontrol.wait). Tried and removed: the ring configs' first 1 or 2 tiles loaded
    before that wait (PEEL, commit 64ca980; s35a, H100, 100 interleaved rounds): 1.2–16 % slower.
    PREF (with PDL and ASM; session 37, kernels.TRITON_DP4A_PREF): before that wait, the first PREF
    word tiles of the program's rows are asked into L2 (prefetch.global.L2, one 128-byte line per
    element: no registers held, the loop unchanged), so DRAM streams while gemv_x_planes runs and
    the first tiles' loads hit L2 (1–2 % faster on an H100). Tried and removed: the ring filled by
    one TMA copy per [BN, BW] box of a [N, K/8] tensor descriptor instead of every thread's cp.async
    (session 40, commit dfc96ab: 80 registers against 94; H200, 60 interleaved rounds: 1.03–1.35 ×
    the registered ring's time at every ring shape, probes-20261207-session42/s40b); in every
    iteration the word tile 3 / 4 / 6 tiles ahead asked into L2 as PREF's are (LPF, session 43,
    commit 59dc36c; H100, 30 interleaved rounds at both rings: 1.07–1.33 × the time, s43p). UNIT 1
    (session 49; a config's 5th field, kernels.TRITON_DP4A_CONFIGS): the planes combined per 32-k
    unit instead of per word (_dp4a_units: acc [BN, BW/4]; fewer instructions and registers)."""
    rows = tl.program_id(0) * BN + tl.arange(0, BN)
    rmask = rows < N
    rows_ld = tl.minimum(rows, N - 1)
    b = tl.program_id(1)
    BW: tl.constexpr = BK // 8
    GT: tl.constexpr = BK // 128
    W = K // 8
    wi = tl.arange(0, BW)
    acc = tl.zeros((BN, BW // 4 if UNIT else BW), dtype=tl.float32)
    wrow = w_ptr + rows_ld[:, None] * W_STRIDE + wi[None, :]
    if PDL and ASM and PREF > 0:
        _prefetch_rows(w_ptr, rows_ld, W_STRIDE, K, PREF * BK // 256)
    if STAGES > 1:
        if PDL:
            gdc_wait()
        for k0 in tl.range(0, K, BK, num_stages=STAGES):
            words = _words(wrow, k0, K, wi, 8, EVEN_K)
            acc = _tile(acc, words, k0, rows_ld, b, s_ptr, xp_ptr, sm_ptr, f_ptr, K, W, BN, BW, GT, ASM, UNIT)
    else:
        nxt = _words(wrow, 0, K, wi, 8, EVEN_K)
        if PDL:
            gdc_wait()
        for k0 in range(0, K, BK):
            words = nxt
            nxt = _next_words(wrow, k0 + BK, K, wi, 8, BN, BW, EVEN_K)
            acc = _tile(acc, words, k0, rows_ld, b, s_ptr, xp_ptr, sm_ptr, f_ptr, K, W, BN, BW, GT, ASM, UNIT)
    out = tl.sum(acc, axis=1)
    tl.store(y_ptr + b * N + rows, _out(out, OUT_BF16).to(y_ptr.dtype.element_ty), mask=rmask)
