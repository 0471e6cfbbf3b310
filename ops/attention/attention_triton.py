"""attention in Triton: O = softmax(Q·Kᵀ·scale)·V per (batch, head), [B, H, S, HEAD_DIM] contiguous.

``attention_flash``: program (m, bh) → BLOCK_M query rows of head bh; Q tile loaded once; K/V tiles
of BLOCK_N keys streamed with an online softmax (running max m, running sum l, accumulator
rescaled by exp2(m_old − m_new)); scores in the log2 domain (qk_scale = log2(e)/√D, applied inside
the exp2's argument: one FMA per score, qk·s − m), P cast to the input type for the P·V tl.dot
(tensor cores for fp16/bf16; fp32 keeps "ieee" precision). Reads Q, K, V once per program's rows
and writes O: 4·B·H·S·D·itemsize bytes when K/V stay in L2; 4·B·H·S²·D flops (half causal).

Grid: one program per job (a query block of a head) from job ``JOB0`` on, jobs numbered query block
fastest so the programs running at once share a head's K/V in L2; causal blocks in reverse, the
longest (most keys) of each head first.

Split tail (non-causal; ``triton_flash`` decides): when the jobs fill whole waves of the GPU but
for a last wave of a few programs — B4 H32 S8192 at 256 rows per program is 4096 jobs, 31 waves
of 132 and 4 programs, while 128 SMs wait — ``attention_flash`` runs the whole waves and the last
jobs' rows go to ``attention_flash_part`` split over the keys as well (each program a BLOCK_M-row
block and a key chunk, its unnormalised (acc, m, l) to fp32 scratch), then
``attention_flash_merge`` combines the chunks of each row (rescaled to their common max) into O.

The key range is split in two loops so that only blocks that need a mask pay for it: causal —
blocks left of the diagonal (keys < m·BLOCK_M, every row sees them) unmasked, then the diagonal
block(s) with the causal mask (BLOCK_M is a multiple of BLOCK_N); non-causal — whole BLOCK_N
blocks unmasked, then the ragged tail (S % BLOCK_N keys) with the key mask. "No score yet" is
−FLT_MAX (never −inf), so a row with every key masked in a block keeps its state (no NaN).

``HALVES`` 2 (``_two_halves``; in the D128 autotune list): two query halves of BLOCK_M rows per
program, their steps interleaved so that one half's exponentials run under the other's tensor-core
work (see there).

``UPCAST`` (interpreter only; see ops/matmul/matmul_triton.py): tiles are converted to fp32 before
tl.dot (the interpreter's bf16 dot is wrong) and bf16 outputs are rounded to nearest even by hand
(the interpreter truncates); P then stays fp32, which only makes it more exact. Compiled kernels
never take these paths.
"""

from __future__ import annotations

import triton
import triton.language as tl

from ops.matmul.matmul_triton import _epilogue

NEG = tl.constexpr(-3.4028234663852886e38)


@triton.jit
def _k_block(k_ptrs, start, keys, S, HEAD_DIM: tl.constexpr, MASK: tl.constexpr, UPCAST: tl.constexpr):
    """Kᵀ block [D, BN] at key ``start`` (MASK: keys past S read as 0)."""
    if MASK:
        k = tl.load(k_ptrs + start * HEAD_DIM, mask=keys[None, :] < S, other=0.0)
    else:
        k = tl.load(k_ptrs + start * HEAD_DIM)
    return k.to(tl.float32) if UPCAST else k


@triton.jit
def _v_block(v_ptrs, start, keys, S, HEAD_DIM: tl.constexpr, MASK: tl.constexpr):
    """V block [BN, D] at key ``start`` (MASK: keys past S read as 0)."""
    if MASK:
        return tl.load(v_ptrs + start * HEAD_DIM, mask=keys[:, None] < S, other=0.0)
    else:
        return tl.load(v_ptrs + start * HEAD_DIM)


@triton.jit
def _online(acc, l_i, m_i, qk, keys, offs_m, S, qk_scale, MASK: tl.constexpr, CAUSAL: tl.constexpr):
    """One key block's online-softmax step on the unscaled scores qk (MASK: the key < S mask, and the
    causal one when CAUSAL): (acc rescaled, l, the new running max, P)."""
    if MASK:
        ok = keys[None, :] < S
        if CAUSAL:
            ok = ok & (keys[None, :] <= offs_m[:, None])
        qk = tl.where(ok, qk, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)  # qk_scale > 0: max(qk)·s = max(qk·s)
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(qk * qk_scale - m_new[:, None])  # one FMA per score
    l_i = l_i * alpha + tl.sum(p, 1)
    return acc * alpha[:, None], l_i, m_new, p


@triton.jit
def _kv_ptrs(K, V, head, offs_n, offs_d, HEAD_DIM: tl.constexpr):
    """Pointers of the Kᵀ block [D, BN] and the V block [BN, D] at key 0 of a head."""
    return (K + head + offs_n[None, :] * HEAD_DIM + offs_d[:, None],
            V + head + offs_n[:, None] * HEAD_DIM + offs_d[None, :])


@triton.jit
def _fresh(BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr):
    """An empty online-softmax state: (acc, l, m) with m at −FLT_MAX ("no score yet")."""
    return (tl.zeros((BLOCK_M, HEAD_DIM), tl.float32), tl.zeros((BLOCK_M,), tl.float32),
            tl.full((BLOCK_M,), NEG, tl.float32))


@triton.jit
def _pv(acc, p, v, PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """acc + P·V (P cast to V's type for the tensor cores; UPCAST: V to fp32 instead)."""
    if UPCAST:
        return tl.dot(p, v.to(tl.float32), acc, input_precision=PRECISION)
    else:
        return tl.dot(p.to(v.dtype), v, acc, input_precision=PRECISION)


@triton.jit
def _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, lo, hi, S, qk_scale,
            HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr, CAUSAL: tl.constexpr,
            PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """Keys [lo, hi) in BLOCK_N steps; MASK: the key < S mask, and the causal one when CAUSAL."""
    for start in tl.range(lo, hi, BLOCK_N):
        keys = start + offs_n
        k = _k_block(k_ptrs, start, keys, S, HEAD_DIM, MASK, UPCAST)
        qk = tl.dot(q, k, input_precision=PRECISION)  # unscaled: the scale joins the exp2's FMA
        acc, l_i, m_i, p = _online(acc, l_i, m_i, qk, keys, offs_m, S, qk_scale, MASK, CAUSAL)
        acc = _pv(acc, p, _v_block(v_ptrs, start, keys, S, HEAD_DIM, MASK), PRECISION, UPCAST)
    return acc, l_i, m_i


@triton.jit
def _job(job, S, ROWS: tl.constexpr, HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr):
    """(query block, offset of its head) of job ``job``: query blocks of ROWS rows fastest; causal
    blocks reversed in each head (the longest first: the end of the grid runs short blocks)."""
    nqb = tl.cdiv(S, ROWS)
    pid_m = job % nqb
    if CAUSAL:
        pid_m = nqb - 1 - pid_m
    return pid_m, (job // nqb).to(tl.int64) * S * HEAD_DIM


@triton.jit
def attention_flash(Q, K, V, Out, S, qk_scale, JOB0, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                    UPCAST: tl.constexpr = False, HALVES: tl.constexpr = 1):
    """Job JOB0 + program id; HALVES 2: _two_halves (two query halves of BLOCK_M rows per program,
    2·BLOCK_M rows)."""
    if HALVES == 2:
        _two_halves(Q, K, V, Out, S, qk_scale, JOB0, HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, PRECISION, UPCAST)
    else:
        pid_m, head = _job(JOB0 + tl.program_id(0), S, BLOCK_M, HEAD_DIM, CAUSAL)
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = tl.arange(0, BLOCK_N)
        offs_d = tl.arange(0, HEAD_DIM)
        q = _q_tile(Q, head, offs_m, offs_d, S, HEAD_DIM, UPCAST)  # read Q tile once
        k_ptrs, v_ptrs = _kv_ptrs(K, V, head, offs_n, offs_d, HEAD_DIM)
        acc, l_i, m_i = _fresh(BLOCK_M, HEAD_DIM)
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
        _store_o(Out, head, offs_m, offs_d, acc, l_i, S, HEAD_DIM, UPCAST)  # write O


@triton.jit
def _blocks_pp(acc_a, l_a, m_a, acc_b, l_b, m_b, q_a, q_b, k_ptrs, v_ptrs, offs_a, offs_b, offs_n, lo, hi,
               S, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr,
               CAUSAL: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """Keys [lo, hi) for two query halves: both halves' scores first, then half a's softmax and
    its P·V (an accumulating dot, issued without a wait), then half b's softmax, which can run
    while half a's P·V is on the tensor cores."""
    for start in tl.range(lo, hi, BLOCK_N):
        keys = start + offs_n
        k = _k_block(k_ptrs, start, keys, S, HEAD_DIM, MASK, UPCAST)
        v = _v_block(v_ptrs, start, keys, S, HEAD_DIM, MASK)
        qk_a = tl.dot(q_a, k, input_precision=PRECISION)
        qk_b = tl.dot(q_b, k, input_precision=PRECISION)
        acc_a, l_a, m_a, p_a = _online(acc_a, l_a, m_a, qk_a, keys, offs_a, S, qk_scale, MASK, CAUSAL)
        acc_a = _pv(acc_a, p_a, v, PRECISION, UPCAST)
        acc_b, l_b, m_b, p_b = _online(acc_b, l_b, m_b, qk_b, keys, offs_b, S, qk_scale, MASK, CAUSAL)
        acc_b = _pv(acc_b, p_b, v, PRECISION, UPCAST)
    return acc_a, l_a, m_a, acc_b, l_b, m_b


@triton.jit
def _q_tile(Q, head, offs_m, offs_d, S, HEAD_DIM: tl.constexpr, UPCAST: tl.constexpr):
    """The Q tile of rows offs_m (rows past S read as 0)."""
    q = tl.load(Q + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    return q.to(tl.float32) if UPCAST else q


@triton.jit
def _store_o(Out, head, offs_m, offs_d, acc, l_i, S, HEAD_DIM: tl.constexpr, UPCAST: tl.constexpr):
    """O = acc / l for rows offs_m (those below S)."""
    o_ptrs = Out + head + offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    tl.store(o_ptrs, _epilogue(acc / l_i[:, None], Out.dtype.element_ty, UPCAST), mask=offs_m[:, None] < S)


@triton.jit
def _two_halves(Q, K, V, Out, S, qk_scale, JOB0, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr):
    """attention_flash with two query halves of BLOCK_M rows per program (2·BLOCK_M rows), their
    steps interleaved (_blocks_pp) so that one half's exponentials can run under the other half's
    P·V on the tensor cores — a ping-pong inside one program, where the warpgroups of the
    one-tile kernel meet at every K/V stage's barrier and take their turns on the tensor cores and
    on the exponential units at the same time. Causal: keys left of the program's first row
    unmasked for both halves, half a's diagonal keys masked for both (all visible to half b but
    for the S bound), then half b's own diagonal alone (_blocks)."""
    pid_m, head = _job(JOB0 + tl.program_id(0), S, 2 * BLOCK_M, HEAD_DIM, CAUSAL)
    offs_a = pid_m * 2 * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_b = offs_a + BLOCK_M
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q_a = _q_tile(Q, head, offs_a, offs_d, S, HEAD_DIM, UPCAST)
    q_b = _q_tile(Q, head, offs_b, offs_d, S, HEAD_DIM, UPCAST)
    k_ptrs, v_ptrs = _kv_ptrs(K, V, head, offs_n, offs_d, HEAD_DIM)
    acc_a, l_a, m_a = _fresh(BLOCK_M, HEAD_DIM)
    acc_b, l_b, m_b = _fresh(BLOCK_M, HEAD_DIM)
    if CAUSAL:
        diag = pid_m * 2 * BLOCK_M
        acc_a, l_a, m_a, acc_b, l_b, m_b = _blocks_pp(
            acc_a, l_a, m_a, acc_b, l_b, m_b, q_a, q_b, k_ptrs, v_ptrs, offs_a, offs_b, offs_n, 0, diag, S,
            qk_scale, HEAD_DIM, BLOCK_N, False, True, PRECISION, UPCAST)
        acc_a, l_a, m_a, acc_b, l_b, m_b = _blocks_pp(
            acc_a, l_a, m_a, acc_b, l_b, m_b, q_a, q_b, k_ptrs, v_ptrs, offs_a, offs_b, offs_n, diag,
            tl.minimum(diag + BLOCK_M, S), S, qk_scale, HEAD_DIM, BLOCK_N, True, True, PRECISION, UPCAST)
        acc_b, l_b, m_b = _blocks(acc_b, l_b, m_b, q_b, k_ptrs, v_ptrs, offs_b, offs_n, diag + BLOCK_M,
                                  tl.minimum(diag + 2 * BLOCK_M, S), S, qk_scale, HEAD_DIM, BLOCK_N, True,
                                  True, PRECISION, UPCAST)
    else:
        full = (S // BLOCK_N) * BLOCK_N
        acc_a, l_a, m_a, acc_b, l_b, m_b = _blocks_pp(
            acc_a, l_a, m_a, acc_b, l_b, m_b, q_a, q_b, k_ptrs, v_ptrs, offs_a, offs_b, offs_n, 0, full, S,
            qk_scale, HEAD_DIM, BLOCK_N, False, False, PRECISION, UPCAST)
        acc_a, l_a, m_a, acc_b, l_b, m_b = _blocks_pp(
            acc_a, l_a, m_a, acc_b, l_b, m_b, q_a, q_b, k_ptrs, v_ptrs, offs_a, offs_b, offs_n, full, S, S,
            qk_scale, HEAD_DIM, BLOCK_N, True, False, PRECISION, UPCAST)
    _store_o(Out, head, offs_a, offs_d, acc_a, l_a, S, HEAD_DIM, UPCAST)
    _store_o(Out, head, offs_b, offs_d, acc_b, l_b, S, HEAD_DIM, UPCAST)


@triton.jit
def _tail_rows(p, S, JOB0, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, ROWS: tl.constexpr):
    """Tail block p (ROWS // BLOCK_M blocks per job, jobs from JOB0; non-causal): (its rows, the
    offset of its head)."""
    SUB: tl.constexpr = ROWS // BLOCK_M
    pid_m, head = _job(JOB0 + p // SUB, S, ROWS, HEAD_DIM, False)
    return pid_m * ROWS + (p % SUB) * BLOCK_M + tl.arange(0, BLOCK_M), head


@triton.jit
def _part_rows(c, p, TAIL_ROWS, BLOCK_M: tl.constexpr):
    """Rows of key chunk c's partials of tail block p in the scratch (chunk-major, then the
    tail's rows from its first: p·BLOCK_M + i)."""
    return (c * TAIL_ROWS + p * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)


@triton.jit
def attention_flash_part(Q, K, V, Part, ML, S, qk_scale, JOB0, CH, TAIL_ROWS, HEAD_DIM: tl.constexpr,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, ROWS: tl.constexpr,
                         PRECISION: tl.constexpr, UPCAST: tl.constexpr = False):
    """Program (p, c): tail block p's rows against keys [c·CH, min((c+1)·CH, S)) (CH a multiple of
    BLOCK_N; non-causal): the unnormalised acc to Part[c, row, :] and (m, l) to ML[c, row, :], rows
    numbered from the tail's first (p·BLOCK_M + i; rows past S too: their Q reads as 0)."""
    p = tl.program_id(0)
    c = tl.program_id(1)
    offs_m, head = _tail_rows(p, S, JOB0, HEAD_DIM, BLOCK_M, ROWS)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = _q_tile(Q, head, offs_m, offs_d, S, HEAD_DIM, UPCAST)
    k_ptrs, v_ptrs = _kv_ptrs(K, V, head, offs_n, offs_d, HEAD_DIM)
    acc, l_i, m_i = _fresh(BLOCK_M, HEAD_DIM)
    lo = c * CH
    hi = tl.minimum(lo + CH, S)
    full = (S // BLOCK_N) * BLOCK_N  # whole blocks unmasked, then the ragged tail masked
    acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, lo, tl.minimum(hi, full), S,
                            qk_scale, HEAD_DIM, BLOCK_N, False, False, PRECISION, UPCAST)
    acc, l_i, m_i = _blocks(acc, l_i, m_i, q, k_ptrs, v_ptrs, offs_m, offs_n, tl.maximum(lo, full), hi, S,
                            qk_scale, HEAD_DIM, BLOCK_N, True, False, PRECISION, UPCAST)
    rows = _part_rows(c, p, TAIL_ROWS, BLOCK_M)
    tl.store(Part + rows[:, None] * HEAD_DIM + offs_d[None, :], acc)
    tl.store(ML + 2 * rows, m_i)
    tl.store(ML + 2 * rows + 1, l_i)


@triton.jit
def attention_flash_merge(Part, ML, Out, S, JOB0, C, TAIL_ROWS, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                          ROWS: tl.constexpr, UPCAST: tl.constexpr = False):
    """Program p: tail block p's C partials merged (each rescaled by exp2(m_c − m), m their running
    max) and O = acc / l written for its rows below S."""
    p = tl.program_id(0)
    offs_m, head = _tail_rows(p, S, JOB0, HEAD_DIM, BLOCK_M, ROWS)
    offs_d = tl.arange(0, HEAD_DIM)
    acc, l_i, m_i = _fresh(BLOCK_M, HEAD_DIM)
    for c in range(0, C):
        rows = _part_rows(c, p, TAIL_ROWS, BLOCK_M)
        m_c = tl.load(ML + 2 * rows)
        m_new = tl.maximum(m_i, m_c)
        a = tl.exp2(m_i - m_new)
        b = tl.exp2(m_c - m_new)
        acc = acc * a[:, None] + tl.load(Part + rows[:, None] * HEAD_DIM + offs_d[None, :]) * b[:, None]
        l_i = l_i * a + tl.load(ML + 2 * rows + 1) * b
        m_i = m_new
    _store_o(Out, head, offs_m, offs_d, acc, l_i, S, HEAD_DIM, UPCAST)
