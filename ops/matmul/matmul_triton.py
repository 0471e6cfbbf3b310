"""matmul in Triton: C = A·B with tl.dot (tensor cores for tf32/fp16/bf16; FMA for fp32 strict).

``matmul_grouped``: program p → one BLOCK_M×BLOCK_N tile of C, tiles visited in groups of
GROUP_M rows of tiles so that consecutive programs share B column panels in L2 (Triton
tutorial 03's order); K loop of BLOCK_K steps, A/B tiles loaded with pointer arithmetic (rows
wrap modulo M/N so that only the K edge needs a mask), fp32 accumulator, one masked store.
Grid: cdiv(M, BLOCK_M)·cdiv(N, BLOCK_N) programs.

``matmul_persistent``: NUM_SMS programs, each walking tiles tile_id = pid, pid + NUM_SMS, ... in
the same grouped order; A, B and C are addressed through TMA tensor descriptors (out-of-bounds
rows/columns are zero-filled on load and clipped on store, so no masks), which needs 16-byte
aligned row strides (the factory pads odd shapes inside the timed call).

``UPCAST`` (interpreter only): Triton's interpreter (3.9) computes tl.dot on bf16 operands wrongly
(garbage ~1e10 on a 16×16 product) and truncates fp32 → bf16 conversions (even with
``fp_downcast_rounding="rtne"``), so interpreted runs convert the tiles to fp32 first (the products
of 16-bit values are exact in fp32 either way) and round the bf16 result to nearest-even by hand
(``_round_bf16``). Compiled kernels never take these paths.

Bytes: A and B read once from DRAM when L2 holds the panels (M·K + K·N + M·N)·itemsize.
Flops: 2·M·N·K. PRECISION: "ieee" (fp32 strict), "tf32", or "ieee" for 16-bit inputs (exact
products, fp32 accumulation).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _tile_of(tile_id, num_pid_m, num_pid_n, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of the tile_id-th tile in grouped order: GROUP_M tile-rows per group,
    walked column by column, so a group reuses each B panel GROUP_M times while it is in L2."""
    in_group = GROUP_M * num_pid_n
    first_m = (tile_id // in_group) * GROUP_M
    size_m = min(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + (tile_id % in_group) % size_m
    pid_n = (tile_id % in_group) // size_m
    return pid_m, pid_n


@triton.jit
def _round_bf16(x):
    """fp32 → the nearest bf16 value, ties to even, still as fp32 (the low 16 bits cleared), so
    that any later fp32 → bf16 conversion is exact (the interpreter's truncation included)."""
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _epilogue(acc, out_ty: tl.constexpr, UPCAST: tl.constexpr):
    if UPCAST and out_ty == tl.bfloat16:
        acc = _round_bf16(acc)
    return acc.to(out_ty)


@triton.jit
def matmul_grouped(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr = False):
    pid_m, pid_n = _tile_of(tl.program_id(0), tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M  # wrap: rows past M re-read valid rows
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * stride_bk + offs_n[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K  # mask only the K edge (zeros add nothing)
        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)  # read A tile
        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)  # read B tile
        if UPCAST:
            a, b = a.to(tl.float32), b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + rows[:, None].to(tl.int64) * stride_cm + cols[None, :]
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(c_ptrs, _epilogue(acc, c_ptr.dtype.element_ty, UPCAST), mask=mask)  # write C


@triton.jit
def matmul_persistent(a_desc, b_desc, c_desc, M, N, K,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                      GROUP_M: tl.constexpr, NUM_SMS: tl.constexpr, PRECISION: tl.constexpr,
                      UPCAST: tl.constexpr = False, SUBTILE: tl.constexpr = False):
    """SUBTILE (registered): C stored as two BLOCK_M × BLOCK_N/2 halves (c_desc's block shape), so the
    epilogue stages half the tile in shared memory and the K ring may keep a stage more."""
    num_pid_m, num_pid_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile_id in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS):
        pid_m, pid_n = _tile_of(tile_id, num_pid_m, num_pid_n, GROUP_M)
        om, on = pid_m * BLOCK_M, pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for ki in range(k_tiles):
            a = a_desc.load([om, ki * BLOCK_K])  # TMA: zero-filled past M and K
            b = b_desc.load([ki * BLOCK_K, on])
            if UPCAST:
                a, b = a.to(tl.float32), b.to(tl.float32)
            acc = tl.dot(a, b, acc, input_precision=PRECISION)
        if SUBTILE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            c0, c1 = tl.split(halves)
            c_desc.store([om, on], _epilogue(c0, c_desc.dtype, UPCAST))
            c_desc.store([om, on + BLOCK_N // 2], _epilogue(c1, c_desc.dtype, UPCAST))
        else:
            c_desc.store([om, on], _epilogue(acc, c_desc.dtype, UPCAST))  # TMA store, clipped at M, N


@triton.jit
def matmul_splitk(a_ptr, b_ptr, ws_ptr, M, N, K, stride_am, stride_bk,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, SPLIT: tl.constexpr,
                  PRECISION: tl.constexpr, UPCAST: tl.constexpr = False):
    """Skinny M (≤ BLOCK_M): program (n, s) → all M rows × BLOCK_N columns over the s-th of SPLIT
    slices of K, fp32 partial into ws[s, M, N]. Grid: (cdiv(N, BLOCK_N), SPLIT). Reads B once
    (K·N·itemsize: the whole cost), A SPLIT·cdiv(N, BLOCK_N) times from L2; writes SPLIT·M·N·4."""
    pid_n, pid_s = tl.program_id(0), tl.program_id(1)
    k_per = tl.cdiv(tl.cdiv(K, SPLIT), BLOCK_K) * BLOCK_K
    k0 = pid_s * k_per
    offs_m = tl.arange(0, BLOCK_M) % M  # rows past M re-read valid rows (not stored)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(k0, tl.minimum(k0 + k_per, K), BLOCK_K):
        ks = k + offs_k
        a = tl.load(a_ptr + offs_m[:, None].to(tl.int64) * stride_am + ks[None, :], mask=ks[None, :] < K,
                    other=0.0)
        b = tl.load(b_ptr + ks[:, None].to(tl.int64) * stride_bk + offs_n[None, :],
                    mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)  # read B slice once
        if UPCAST:
            a, b = a.to(tl.float32), b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    rows = tl.arange(0, BLOCK_M)
    ws = ws_ptr + pid_s.to(tl.int64) * M * N + rows[:, None] * N + offs_n[None, :]
    tl.store(ws, acc, mask=(rows[:, None] < M) & (offs_n[None, :] < N))


@triton.jit
def splitk_sum(ws_ptr, c_ptr, MN, SPLIT: tl.constexpr, BLOCK: tl.constexpr, UPCAST: tl.constexpr = False):
    """c[i] = Σ_s ws[s, i] in fp32, rounded once to C's type; grid cdiv(M·N, BLOCK)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < MN
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(SPLIT):
        acc += tl.load(ws_ptr + s * MN + offs, mask=mask, other=0.0)
    tl.store(c_ptr + offs, _epilogue(acc, c_ptr.dtype.element_ty, UPCAST), mask=mask)
