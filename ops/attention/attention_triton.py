"""attention in Triton: O = softmax(Q·Kᵀ·scale)·V per (batch, head), [B, H, S, HEAD_DIM] contiguous.

``attention_flash``: program (m, bh) → BLOCK_M query rows of head bh; Q tile loaded once; K/V tiles
of BLOCK_N keys streamed with an online softmax (running max m, running sum l, accumulator
rescaled by exp2(m_old − m_new)); scores in the log2 domain (qk_scale = log2(e)/√D, applied inside
the exp2's argument: one FMA per score, qk·s − m), P cast to the input type for the P·V tl.dot
(tensor cores for fp16/bf16; fp32 keeps "ieee" precision). Reads Q, K, V once per program's rows
and writes O: 4·B·H·S·D·itemsize bytes when K/V stay in L2; 4·B·H·S²·D flops (half causal).

The key range is split in two loops so that only blocks that need a mask pay for it: causal —
blocks left of the diagonal (keys < m·BLOCK_M, every row sees them) unmasked, then the diagonal
block(s) with the causal mask (BLOCK_M is a multiple of BLOCK_N); non-causal — whole BLOCK_N
blocks unmasked, then the ragged tail (S % BLOCK_N keys) with the key mask. "No score yet" is
−FLT_MAX (never −inf), so a row with every key masked in a block keeps its state (no NaN).

``UPCAST`` (interpreter only; see ops/matmul/matmul_triton.py): tiles are converted to fp32 before
tl.dot (the interpreter's bf16 dot is wrong) and bf16 outputs are rounded to nearest even by hand
(the interpreter truncates); P then stays fp32, which only makes it more exact. Compiled kernels
never take these paths.

``attention_flash_tma`` (probes; scripts/probe.py): the same kernel in the Hopper form of Triton's
fused-attention tutorial: K loaded in its natural [BN, D] layout and transposed in the dot, and
(``TMA``) Q, K, V and O through tensor descriptors made in the kernel over each head's [S, D]
(TMA on sm_90: zero-filled loads past S, clipped stores; needs ``triton.set_allocator``).
``WS`` (tl.range warp_specialize) stays off: Triton documents it for Blackwell; for sm_90 it
changes nothing or fails to compile (D64 causal, 4 warps: an MLIR dominance assertion).
"""

from __future__ import annotations

import triton
import triton.language as tl

from ops.matmul.matmul_triton import _epilogue

NEG = tl.constexpr(-3.4028234663852886e38)


@triton.jit
def _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, lo, hi, S, qk_scale,
            HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr, CAUSAL: tl.constexpr,
            PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """Keys [lo, hi) in BLOCK_N steps; MASK: the key < S mask, and the causal one when CAUSAL."""
    for start in tl.range(lo, hi, BLOCK_N):
        keys = start + offs_n
        if MASK:
            k = tl.load(k_ptrs + start * HEAD_DIM, mask=keys[None, :] < S, other=0.0)  # read K block [D, BN]
        else:
            k = tl.load(k_ptrs + start * HEAD_DIM)
        if UPCAST:
            k = k.to(tl.float32)
        qk = tl.dot(q, k, input_precision=PRECISION)  # unscaled: the scale joins the exp2's FMA
        if MASK:
            ok = keys[None, :] < S
            if CAUSAL:
                ok = ok & (keys[None, :] <= offs_m[:, None])
            qk = tl.where(ok, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)  # qk_scale > 0: max(qk)·s = max(qk·s)
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk * qk_scale - m_new[:, None])  # one FMA per score
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if MASK:
            v = tl.load(v_ptrs + start * HEAD_DIM, mask=keys[:, None] < S, other=0.0)  # read V block [BN, D]
        else:
            v = tl.load(v_ptrs + start * HEAD_DIM)
        if UPCAST:
            acc = tl.dot(p, v.to(tl.float32), acc, input_precision=PRECISION)
        else:
            acc = tl.dot(p.to(v.dtype), v, acc, input_precision=PRECISION)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention_flash(Q, K, V, Out, S, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                    UPCAST: tl.constexpr = False):
    pid_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64) * S * HEAD_DIM
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < S,
                other=0.0)  # read Q tile once
    if UPCAST:
        q = q.to(tl.float32)
    k_ptrs = K + head + offs_n[None, :] * HEAD_DIM + offs_d[:, None]  # Kᵀ block [D, BN] at key 0
    v_ptrs = V + head + offs_n[:, None] * HEAD_DIM + offs_d[None, :]  # V block [BN, D] at key 0
    m_i = tl.full((BLOCK_M,), NEG, tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    if CAUSAL:
        diag = pid_m * BLOCK_M  # keys below the block's first row: unmasked for every row
        acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, 0, diag, S, qk_scale,
                                HEAD_DIM, BLOCK_N, False, True, PRECISION, UPCAST)
        acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, diag,
                                tl.minimum(diag + BLOCK_M, S), S, qk_scale, HEAD_DIM, BLOCK_N, True, True,
                                PRECISION, UPCAST)
    else:
        full = (S // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, 0, full, S, qk_scale,
                                HEAD_DIM, BLOCK_N, False, False, PRECISION, UPCAST)
        acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, full, S, S, qk_scale,
                                HEAD_DIM, BLOCK_N, True, False, PRECISION, UPCAST)
    out = acc / l_i[:, None]
    o_ptrs = Out + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    tl.store(o_ptrs, _epilogue(out, Out.dtype.element_ty, UPCAST), mask=offs_m[:, None] < S)  # write O



# ---- Hopper form: K in its natural layout, tensor descriptors (TMA) ----------------------------


@triton.jit
def _blocks_nat(acc, l_i, m_i, q, k_src, v_src, offs_m, offs_n, lo, hi, S, qk_scale,
                HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr, CAUSAL: tl.constexpr,
                PRECISION: tl.constexpr, UPCAST: tl.constexpr, TMA: tl.constexpr, WS: tl.constexpr):
    """``_blocks`` with K read as [BN, D] rows, like V, and transposed for the dot (tl.trans: the
    wgmma reads the shared-memory tile as Kᵀ, nothing moves). ``TMA``: k_src / v_src are tensor
    descriptors of the head's [S, D] (rows ≥ S read as zeros; the key mask still applies to the
    scores); else pointer blocks [BN, D] at key 0. ``WS``: the loop asks for warp specialization."""
    for start in tl.range(lo, hi, BLOCK_N, warp_specialize=WS):
        keys = start + offs_n
        if TMA:
            k = k_src.load([start, 0])  # read K block [BN, D] (TMA)
        elif MASK:
            k = tl.load(k_src + start * HEAD_DIM, mask=keys[:, None] < S, other=0.0)  # read K block [BN, D]
        else:
            k = tl.load(k_src + start * HEAD_DIM)
        if UPCAST:
            k = k.to(tl.float32)
        qk = tl.dot(q, tl.trans(k), input_precision=PRECISION)  # unscaled: the scale joins the exp2's FMA
        if MASK:
            ok = keys[None, :] < S
            if CAUSAL:
                ok = ok & (keys[None, :] <= offs_m[:, None])
            qk = tl.where(ok, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)  # qk_scale > 0: max(qk)·s = max(qk·s)
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk * qk_scale - m_new[:, None])  # one FMA per score
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if TMA:
            v = v_src.load([start, 0])  # read V block [BN, D] (TMA)
        elif MASK:
            v = tl.load(v_src + start * HEAD_DIM, mask=keys[:, None] < S, other=0.0)  # read V block [BN, D]
        else:
            v = tl.load(v_src + start * HEAD_DIM)
        if UPCAST:
            acc = tl.dot(p, v.to(tl.float32), acc, input_precision=PRECISION)
        else:
            acc = tl.dot(p.to(v.dtype), v, acc, input_precision=PRECISION)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def attention_flash_tma(Q, K, V, Out, S, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                        BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                        UPCAST: tl.constexpr = False, TMA: tl.constexpr = True, WS: tl.constexpr = False):
    """``attention_flash`` in the Hopper form: K loaded [BN, D] and transposed in the dot;
    ``TMA``: Q, K, V and O through tensor descriptors made here over the head's [S, D] (TMA on
    sm_90; the launcher must have set ``triton.set_allocator`` for their global workspace; zero-fill
    past S on loads, clipped stores); else masked pointer loads/stores. Same loop split, numerics
    and arguments as attention_flash."""
    pid_m = tl.program_id(0)
    head = tl.program_id(1).to(tl.int64) * S * HEAD_DIM
    row0 = pid_m * BLOCK_M
    offs_m = row0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    if TMA:
        q_desc = tl.make_tensor_descriptor(Q + head, shape=[S, HEAD_DIM], strides=[HEAD_DIM, 1],
                                           block_shape=[BLOCK_M, HEAD_DIM])
        k_src = tl.make_tensor_descriptor(K + head, shape=[S, HEAD_DIM], strides=[HEAD_DIM, 1],
                                          block_shape=[BLOCK_N, HEAD_DIM])
        v_src = tl.make_tensor_descriptor(V + head, shape=[S, HEAD_DIM], strides=[HEAD_DIM, 1],
                                          block_shape=[BLOCK_N, HEAD_DIM])
        q = q_desc.load([row0, 0])  # read Q tile once (TMA)
    else:
        q = tl.load(Q + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < S,
                    other=0.0)  # read Q tile once
        k_src = K + head + offs_n[:, None] * HEAD_DIM + offs_d[None, :]  # K block [BN, D] at key 0
        v_src = V + head + offs_n[:, None] * HEAD_DIM + offs_d[None, :]  # V block [BN, D] at key 0
    if UPCAST:
        q = q.to(tl.float32)
    m_i = tl.full((BLOCK_M,), NEG, tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), tl.float32)
    if CAUSAL:
        acc, l_i, m_i = _blocks_nat(acc, l_i, m_i, q, k_src, v_src, offs_m, offs_n, 0, row0, S, qk_scale,
                                    HEAD_DIM, BLOCK_N, False, True, PRECISION, UPCAST, TMA, WS)
        acc, l_i, m_i = _blocks_nat(acc, l_i, m_i, q, k_src, v_src, offs_m, offs_n, row0,
                                    tl.minimum(row0 + BLOCK_M, S), S, qk_scale, HEAD_DIM, BLOCK_N, True, True,
                                    PRECISION, UPCAST, TMA, WS)
    else:
        full = (S // BLOCK_N) * BLOCK_N
        acc, l_i, m_i = _blocks_nat(acc, l_i, m_i, q, k_src, v_src, offs_m, offs_n, 0, full, S, qk_scale,
                                    HEAD_DIM, BLOCK_N, False, False, PRECISION, UPCAST, TMA, WS)
        acc, l_i, m_i = _blocks_nat(acc, l_i, m_i, q, k_src, v_src, offs_m, offs_n, full, S, S, qk_scale,
                                    HEAD_DIM, BLOCK_N, True, False, PRECISION, UPCAST, TMA, WS)
    out = _epilogue(acc / l_i[:, None], Out.dtype.element_ty, UPCAST)
    if TMA:
        o_desc = tl.make_tensor_descriptor(Out + head, shape=[S, HEAD_DIM], strides=[HEAD_DIM, 1],
                                           block_shape=[BLOCK_M, HEAD_DIM])
        o_desc.store([row0, 0], out)  # write O (TMA; rows ≥ S clipped)
    else:
        tl.store(Out + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out,
                 mask=offs_m[:, None] < S)  # write O
