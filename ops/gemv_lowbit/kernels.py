"""gemv_lowbit kernels: y = W·x with int4/int8 weights (formats: ``references/lowbit.py``).

Variants, in every dialect (CUDA, OpenCL C, WGSL, Triton):

- ``dequant_then_gemv``: two kernels per call — the packed weights are dequantised to a dense
  fp16 W [N, K] in device memory (scratch allocated once), then a dense fp16 GEMV reads it back:
  the slow path (packed read + 2·N·K·2 dense bytes written and read) a fused kernel must beat.
- ``fused``: one kernel; each thread loads 32-bit words of packed weights (8 nibbles / 4 int8)
  and unpacks them in registers inside the dot product; one row per team (CUDA: a warp, OpenCL
  and WGSL: a work-group of 64, Triton: a block of rows).
- ``fused_vec``: 16-byte packed loads (32 int4 or 16 int8 values per load), 4 rows per
  warp/team sharing the x values, reduction across the team (CUDA warp shuffles; OpenCL and WGSL
  local-memory trees — no subgroup path yet; Triton: int32 word tiles and ``tl.sum``).

CUDA only, w4a16 at batch 1 on sm_90 (one producer thread per SM feeding a shared-memory ring,
tensor-core consumer warps): ``fused_tma`` (gemv_lowbit_tma: 2-D TMA boxes of 16 rows of the stored
W) and ``fused_packed`` (gemv_lowbit_pk: W and its scales repacked once, outside the timed calls,
into the order each SM consumes them — ``pack_groups`` — streamed in 1-D bulk copies).

``fused_dp4a`` (w4a16, every dialect, any batch): x per scale group in 22-bit fixed point as
three byte planes (CUDA/OpenCL/WGSL: each persistent block converts it into shared memory, a chunk
of K at a time where it does not fit; Triton: a small first launch), the nibbles multiplied by
4-way byte dot products (dp4a; WGSL dot4U8Packed / dot4I8Packed) into exact int32 sums, one FMA
per 32 k and row (gemv_lowbit.cu: gemv_lowbit_dp4a has the scheme and its exactness).

torch: ``dense`` (the weights dequantised once to fp16/bf16 outside the timed call, then
``x @ Wᵀ`` through ``torch.mm``) and ``tinygemm`` (``torch.ops.aten._weight_int4pack_mm``: CUDA
build, bf16 activations only, so Unsupported on the fp16 cases; the CPU build's port
``_weight_int4pack_mm_for_cpu`` with its own packing ``_convert_weight_to_int4pack_for_cpu``;
w4a16 only).

Cases are fp16 or bf16 (scales, x, y and the dense W of dequant_then_gemv); B ≤ 8 (one accumulator per
batch row in registers); K a multiple of 128 (the spec rejects other K).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from backends.base import Unsupported
from suite.registry import kernel, source

GROUP = 128
#: largest batch the register accumulators hold
MAX_B = 8


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _dims(case) -> tuple[int, int, int, int]:
    n, k, b, bits = case["n"], case["k"], case["b"], case["bits"]
    if k % GROUP:
        raise Unsupported(f"K = {k} is not a multiple of {GROUP} (rejected by the format)")
    if b > MAX_B:
        raise Unsupported(f"batch {b} > {MAX_B}: the GEMV kernels hold one accumulator per batch row")
    if n * k >= 2**31:
        raise Unsupported("int32 element indices: N·K >= 2^31")
    return n, k, b, bits


def _dt(case) -> int:
    """DT define of the C/WGSL sources: 1 fp16, 2 bf16 (scales, x, y, dense W)."""
    return 2 if case.dtype == "bf16" else 1


def _tv(t, case):
    """A 16-bit storage tensor as the torch dtype it holds (bf16 words → torch.bfloat16)."""
    import torch

    return t.view(torch.bfloat16) if case.dtype == "bf16" else t


#: (U words per load, rows per team) of fused and fused_vec; dense GEMV: 16-byte loads, 1 row
_SHAPES = {"fused": (1, 1), "fused_vec": (4, 4), "dense": (4, 1)}


# ---- torch ----------------------------------------------------------------------------------


def _torch_dense_w(case, ins):
    """W [N, K] dequantised in fp32 (exact) from the device arrays, as torch tensors."""
    import torch

    n, k = case["n"], case["k"]
    qw = ins["qweight"]
    if case["bits"] == 4:
        b = qw.to(torch.int16)
        q = torch.stack(((b & 0xF) - 8, (b >> 4) - 8), dim=-1).reshape(n, k)
        s = _tv(ins["scales"], case).float().repeat_interleave(GROUP, dim=1)
    else:
        q = qw.view(torch.int8)
        s = _tv(ins["scales"], case).float()[:, None]
    return q.float() * s


def _same_inputs(cache: dict, ins) -> bool:
    """Whether the weights prepared in ``cache`` came from these very input tensors: the tensors
    themselves are held (so a new input set at a reused address is never mistaken for the old
    one) and their in-place version counters compared; on a miss the cache is re-keyed."""
    key = [(ins[a], getattr(ins[a], "_version", 0)) for a in ("qweight", "scales")]  # CuPy: no counter
    old = cache.get("src")
    if old is not None and all(t is u and v == w for (t, v), (u, w) in zip(old, key, strict=True)):
        return True
    cache["src"] = key
    return False


def _per_input_set(prepare):
    """``prepare(ins)`` — the weights in a kernel's own form (repacked, dequantised) — made once
    per input set: a function of ``ins`` that returns the cached result, made again (the old one
    freed first) where ``_same_inputs`` finds a new set."""
    cache: dict = {}

    def get(ins):
        if not _same_inputs(cache, ins):
            cache.pop("made", None)
            cache["made"] = prepare(ins)
        return cache["made"]

    return get


@kernel("gemv_lowbit", "torch", "dense")
def torch_dense(be, case):
    """Weights dequantised to the case's 16-bit type (fp16/bf16) once, outside the timed call (on
    the first launch: inputs are not known to the factory), then ``torch.mm(x, Wᵀ, out=y)`` — the
    dense fp16/bf16 GEMV a low-bit
    kernel is compared with (it reads 2·N·K bytes of W, 4× the w4a16 bytes)."""
    import torch

    _dims(case)

    def dense(ins):
        w = _torch_dense_w(case, ins)
        return w.bfloat16() if case.dtype == "bf16" else w.half()

    weights = _per_input_set(dense)

    def run(ins, outs):
        torch.mm(_tv(ins["x"], case), weights(ins).t(), out=_tv(outs["y"], case))

    return run


@kernel("gemv_lowbit", "torch", "compiled_dequant",
        test_cases=("w4a16,n13,k128,b8", "w8a16,n37,k256,b1,bf16"))
def torch_compiled_dequant(be, case):
    """torch.compile (dynamic=False) of dequantise-then-multiply written as one expression: W in
    fp32 from the packed weights and scales (``_torch_dense_w``), ``y = Σ_k W·x`` as a broadcast
    product summed over K in fp32. Inductor fuses the unpacking into the reduction, so the packed
    weights are read once per call and no dense W is kept (unlike ``dense``, whose W is prepared
    outside the timed call)."""
    from backends.torch import compile_static

    _dims(case)

    def gemv(ins, y):
        w = _torch_dense_w(case, ins)  # [N, K] fp32
        x = _tv(ins["x"], case).float()  # [B, K]
        _tv(y, case).copy_((x[:, None, :] * w[None]).sum(-1))

    fn = compile_static(gemv)
    return lambda ins, outs: fn(ins, outs["y"])


@kernel("gemv_lowbit", "torch", "tinygemm")
def torch_tinygemm(be, case):
    """tinygemm int4: ``_weight_int4pack_mm`` (CUDA build; bf16 activations only) or the CPU
    build's port ``_weight_int4pack_mm_for_cpu`` (fp16 and bf16). Both take unsigned nibbles
    u = q + 8 (our stored nibbles) and per-group (scale, zero) pairs [K/128, N, 2] with
    w = (u − 8)·scale + zero: zero = 0 is this format exactly. Repacked (outside the timed call,
    on the first launch) by the build's own converter: CUDA's from uint8 [N, K/2] with the even
    k in the HIGH nibble (its convention, the opposite of ours), innerKTiles 8; the CPU one from
    int32 [N, K]. The CUDA path has not been run yet (no GPU in the session that wrote it)."""
    import torch

    n, k, b, bits = _dims(case)
    if bits != 4:
        raise Unsupported("tinygemm is int4 only (w8a16: no tinygemm kernel)")
    aten = torch.ops.aten
    cpu = be.device.kind == "cpu"
    name = "_weight_int4pack_mm_for_cpu" if cpu else "_weight_int4pack_mm"
    if not hasattr(aten, name):
        raise Unsupported(f"this torch build has no aten.{name}")
    if not cpu and case.dtype != "bf16":
        raise Unsupported("tinygemm's CUDA kernel takes bf16 activations only; this case is fp16 "
                          "(rounding x to bf16 would change the problem)")
    if n % 16 if cpu else n % 8:
        raise Unsupported(f"tinygemm's packing needs N divisible by {16 if cpu else 8}; N = {n}")

    def prepare(ins):
        qw = ins["qweight"].to(torch.int32)
        lo, hi = qw & 0xF, qw >> 4
        sz = torch.zeros((k // GROUP, n, 2), dtype=_tv(ins["scales"], case).dtype, device=qw.device)
        sz[..., 0] = _tv(ins["scales"], case).t()
        if cpu:
            u = torch.stack((lo, hi), dim=-1).reshape(n, k).contiguous()
            return aten._convert_weight_to_int4pack_for_cpu(u, 1), sz
        swapped = ((lo << 4) | hi).to(torch.uint8).contiguous()
        return aten._convert_weight_to_int4pack(swapped, 8), sz

    mm = getattr(aten, name)
    args = _per_input_set(prepare)

    def run(ins, outs):
        packed, sz = args(ins)
        _tv(outs["y"], case).copy_(mm(_tv(ins["x"], case), packed, GROUP, sz))

    return run


# ---- CUDA and OpenCL ------------------------------------------------------------------------

_CU = source(__file__, "gemv_lowbit.cu")
_CL = source(__file__, "gemv_lowbit.cl")


def _c_gemv(be, case, path, shape, team: int, teams: int, dense: bool, extra: dict | None = None):
    """``shape``: a key of _SHAPES or (U, RPT) itself (probes)."""
    n, k, b, bits = _dims(case)
    u, rpt = _SHAPES[shape] if isinstance(shape, str) else shape
    defs = {"BITS": 16 if dense else bits, "NB": b, "U": u, "RPT": rpt, "DT": _dt(case), **(extra or {})}
    defs.update({"WARPS": teams} if path == _CU else {"TEAM": team, "TEAMS": teams})
    prog = be.compile(path, "gemv_lowbit", defs)
    grid, block = (cdiv(n, teams * rpt),), (team * teams,)
    return prog, grid, block


def _c_kernels(be, case, path, variant: str, shape=None, teams: int | None = None):
    n, k, b, bits = _dims(case)
    nn, kk = np.int32(n), np.int32(k)
    if variant == "dequant_then_gemv":
        dq = be.compile(path, "dequant_lowbit", {"BITS": bits, "DT": _dt(case)})
        gemv, grid, block = _c_gemv(be, case, path, "dense", 32 if path == _CU else 64,
                                    4 if path == _CU else 2, True)
        wd = be.empty((n, k), np.uint16)  # fp16/bf16 words
        dgrid = (cdiv(n * k // 2, 256),)

        def run(ins, outs):
            be.launch(dq, dgrid, (256,), [ins["qweight"], ins["scales"], wd, nn, kk])
            be.launch(gemv, grid, block, [wd, ins["scales"], ins["x"], outs["y"], nn, kk])

        return run
    if variant == "fused":
        prog, grid, block = _c_gemv(be, case, path, "fused", 32 if path == _CU else 64,
                                    4 if path == _CU else 2, False)
    else:  # OpenCL fused_vec (CUDA's: cuda_fused_vec)
        prog, grid, block = _c_gemv(be, case, path, shape or "fused_vec", 32, teams or _cl_teams(be), False,
                                    _cl_vec_defines(be))
    return lambda ins, outs: be.launch(prog, grid, block, [ins["qweight"], ins["scales"], ins["x"], outs["y"],
                                                           nn, kk])


#: steps (64 bytes of each of 16 rows) per chunk of gemv_lowbit_tc, and chunks per warp in its
#: cp.async ring (STAGES − 1 in flight while one is consumed): (STAGES − 1)·2·US·16 = 128 bytes per
#: lane in flight, in shared memory (no registers held). Probes on the H200 (session 6,
#: results/nvidia-h200/probes-20261201-session6/35ab202, ca8f318): KW 2, US 2, STAGES 3 is within
#: 0.7 points of the best of nine shapes at w4a16 and w8a16 K=N=16384; with STAGES 4 a block's
#: ring (16 KiB at KW 2) leaves 13 blocks per SM, one short of the 13.6 that N=28672 needs, and
#: w8a16 there fell from 77.8 % (STAGES 3) to 63.6 % (a second wave).
TC_US, TC_STAGES = 2, 3
#: 16-row tiles per warp of gemv_lowbit_tc by format (RT: the tiles share each x load and its
#: fragment permutes). H200, bf16 B = 1 (probes-20261202-session14/b70e9ca): w4a16 RT 2 68.7 / 65.6 %
#: against 65.1 / 65.2 % (N = 16384 / 28672); w8a16 RT 2 72.6–77.4 % against 78.2 / 82.0 %.
TC_RT = {4: 2, 8: 1}
#: warps wanted on the device per SM (of 64) before gemv_lowbit_tc splits K further inside a block
#: (14: K=N=16384 and N=28672 get two warps per block, the best measured for both, session 6;
#: w4a16's 32-row blocks get four: 51 KiB of ring and partials each, opted in above 48 KiB)
TC_WARPS_PER_SM = 14
#: most warps per block (split-K inside the block): 8 × 6 KiB of ring = 48 KiB of shared memory
TC_KW_MAX = 8


def tc_geometry(case, sms: int, rt: int = 1) -> tuple[int, int]:
    """(KW warps per block, blocks) of gemv_lowbit_tc: one block per 16·``rt`` rows; K split over
    KW warps of the block, doubled until the grid holds ``TC_WARPS_PER_SM`` warps per SM or a warp
    would get less than one chunk (TC_US steps) of K."""
    n, k, _, bits = _dims(case)
    blocks = cdiv(n, 16 * rt)
    chunks = k // (128 if bits == 4 else 64) // TC_US
    kw = 1
    while kw < TC_KW_MAX and blocks * kw < sms * TC_WARPS_PER_SM and 2 * kw <= chunks:
        kw *= 2
    return kw, blocks


def _cuda_tc(be, case, **defines):
    """fused_vec on CUDA: gemv_lowbit_tc (tensor-core mma.sync dot products, split-K warps, a
    cp.async ring per warp); ``defines`` override the planned KW/US/STAGES/RT (probes)."""
    be.require_mma_sync()
    n, k, b, bits = _dims(case)
    rt = defines.get("RT", TC_RT[bits])
    kw, blocks = tc_geometry(case, be.device.compute_units or 132, rt)
    defs = {"BITS": bits, "NB": b, "DT": _dt(case), "KW": kw, "US": TC_US, "STAGES": TC_STAGES, "RT": rt,
            **defines}
    prog = be.compile(_CU, "gemv_lowbit_tc", defs)
    kw = defs["KW"]
    smem = kw * defs["STAGES"] * 2 * rt * defs["US"] * 32 * 16 + (kw - 1) * 4 * rt * 32 * 4
    grid, block = (blocks,), (32 * kw,)
    nn, kk = np.int32(n), np.int32(k)
    return lambda ins, outs: be.launch(prog, grid, block, [ins["qweight"], ins["scales"], ins["x"], outs["y"],
                                                           nn, kk], shared_mem=smem)


#: gemv_lowbit_tma shape: consumer warps per block (one block per SM; 16 warps: 67.6 / 60.8 %
#: against 8 warps' 68.3 / 62.5 % at w4a16 bf16 K=N=16384 / N=28672, probes-20261204-session19/
#: s19f), ring stages, and bytes of each of a tile's 16 rows per stage (one 2-D TMA copy of 32 KiB,
#: 2 KiB per row, the most a box row holds; 4 stages: 128 KiB in flight per SM, where the plain TMA
#: reads of scripts/read_ceiling.py reached 89–93 % at the w4a16 cases' byte counts)
TMA_KW, TMA_STAGES, TMA_CH = 8, 4, 2048


#: fused_packed shape (gemv_lowbit_pk): consumer warps per block (one block per SM), ring stages,
#: steps (128 k of each of a warp's 16 rows) per warp and chunk — a chunk is 8 × 4 KiB of weights +
#: 1 KiB of scales, one 33 KiB bulk copy (read_ceiling's plain 4-stage ring of that shape: 91.1 /
#: 89.2 % at the w4a16 cases' bytes, probes-20261204-session20/s20f). H200, w4a16 bf16 K=N=16384 /
#: N=28672 (s20g): 3 stages 77.0 / 74.0 %, 4 stages 76.0 / 71.9, 5 stages 70.8 / 67.8; 16 warps × 2
#: steps 73.1 / 70.7, 4 warps × 8 steps 70.6 / 67.3; two blocks per SM and other shapes within a
#: point of 3 stages (s20i, s20k)
PK_KW, PK_STAGES, PK_SPW = 8, 3, 4
#: gemv_lowbit_pk's PTIMELINE record (gemv_lowbit.cu: PK_TL_MAX, PK_TL_STRIDE)
PK_TL_MAX = 96
PK_TL_STRIDE = 32 + 3 * PK_TL_MAX


def pack_groups(w, sc, n: int, k: int, kw: int = PK_KW, spw: int = PK_SPW):
    """fused_packed's stream (gemv_lowbit.cu: gemv_lowbit_pk) from the format's qweight [N, K/2]
    (uint8) and scales [N, K/128] (16-bit words), NumPy or CuPy alike: chunk (group of 16·kw rows,
    kc of K/128/spw), group-major, each as [warp w][step j][row half][lane (g, t)][word h = the
    4-byte k piece 4h + t of the step of row 16w + 8·half + g] with each word's nibbles reordered
    to (k0, k2, k1, k3, k4, k6, k5, k7) from the low nibble up, then its scales as [w][j][16 rows];
    rows past N are zeros. The same bytes, in the order the kernel reads them."""
    xp = _xp(w)
    rows = 16 * kw
    groups, cpg = -(-n // rows), k // GROUP // spw
    if n % rows:  # zero rows up to whole groups (never stored)
        w, sc = (xp.concatenate([a, xp.zeros((groups * rows - n,) + a.shape[1:], a.dtype)]) for a in (w, sc))
    # row rows·grp + 16w + 8·half + g, byte 64·(spw·kc + j) + 16h + 4t + b
    wt = w.reshape(groups, kw, 2, 8, cpg, spw, 4, 4, 4).transpose(0, 4, 1, 5, 2, 3, 7, 6, 8)
    b0, b1, b2, b3 = (wt[..., i] for i in range(4))
    lo, hi = xp.uint8(0x0F), xp.uint8(0xF0)
    wt = xp.stack([(b0 & lo) | ((b1 & lo) << 4), (b0 >> 4) | (b1 & hi),
                   (b2 & lo) | ((b3 & lo) << 4), (b2 >> 4) | (b3 & hi)], axis=-1).astype(np.uint8)
    wt = wt.reshape(groups, cpg, kw * spw * 1024)
    st = sc.reshape(groups, kw, 16, cpg, spw).transpose(0, 3, 1, 4, 2).reshape(groups, cpg, kw * spw * 16)
    st = st.copy().view(np.uint8)  # [group][chunk][w][j][16 rows] as bytes
    return xp.concatenate([wt, st], axis=-1).reshape(-1)


def _xp(a):
    """NumPy or CuPy: the module of array ``a``."""
    if type(a).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


def cuda_tma(be, case, kw: int = TMA_KW, stages: int = TMA_STAGES, ch: int = TMA_CH, **probe):
    """w4a16 at batch 1 on sm_90: gemv_lowbit_tma — one producer thread per SM streams 16-row ×
    ``ch``-byte boxes of W and their group scales with 2-D TMA copies into a shared-memory ring of
    ``stages``; ``kw`` consumer warps unpack and multiply them on tensor cores (gemv_lowbit_tc's
    unpack and mma) against x staged once per block in fragment order; the chunks are split evenly
    over one block per SM (a tile shared by two blocks is finished by the second through
    ``ws``/``cnt``). Unsupported off sm_90, for K/2 not a multiple of ``ch``, or where x and the
    ring exceed a block's shared memory. ``probe``: the TMEMONLY define (scripts/probe.py)."""
    n, k, b, bits = _dims(case)
    if bits != 4 or b != 1 or (k // 2) % ch:
        raise Unsupported(f"gemv_lowbit_tma: w4a16 at batch 1 with K/2 a multiple of {ch} only")
    smem = stages * 16 * (ch + ch // 32) + 2 * k + 2 * kw * 512  # ring (weights, scales), x, sums
    if smem > be.smem_per_block():
        raise Unsupported(f"gemv_lowbit_tma needs {smem} bytes of shared memory; the device allows "
                          f"{be.smem_per_block()}")
    defs = {"BITS": 4, "NB": 1, "DT": _dt(case), "TKW": kw, "TSTAGES": stages, "TCH": ch, **probe}
    prog = be.compile(_CU, "gemv_lowbit_tma", defs, options=("-arch=sm_90",))
    tiles = cdiv(n, 16)
    ws, cnt = be.empty((2 * 16 * tiles,), np.float32), be.empty((tiles,), np.int32)
    be.fill_bytes(cnt, 0)  # each launch leaves the tile counters zero again
    grid, block = (min(tiles, be.device.compute_units or 132),), (32 * (kw + 1),)
    nn, kk = np.int32(n), np.int32(k)
    maps: dict = {}

    def tmaps(w, sc):  # W as [N, K/16] 8-byte words (16 × ch/8 boxes), the scales as [N, K/128]
        key = (w.data.ptr, sc.data.ptr)  # 16-bit words (16 × ch/64 boxes); built once per buffer pair
        if key not in maps:
            from backends.cuda import tensor_map_2d

            m = tensor_map_2d(w.data.ptr, False, n, k // 16, 16, ch // 8, elem="u64", swizzle=0) \
                + tensor_map_2d(sc.data.ptr, False, n, k // GROUP, 16, ch // 64, elem="u16", swizzle=0)
            maps[key] = be.upload(np.frombuffer(m, np.uint8))
        return maps[key]

    return lambda ins, outs: be.launch(prog, grid, block, [tmaps(ins["qweight"], ins["scales"]), ins["x"],
                                                           outs["y"], nn, kk, ws, cnt], shared_mem=smem)


def pk_geometry(n: int, k: int, sms: int, kw: int = PK_KW, spw: int = PK_SPW, per_sm: int = 1):
    """gemv_lowbit_pk's split: (groups, chunks per group, blocks, slots) — at most one block per
    chunk, so every block's contiguous range holds one at least (the group finish counts on it);
    ``slots`` the most blocks whose ranges one group's chunks can span. (A pool of the last groups
    claimed chunk by chunk, for the ranges' uneven finish, lost twice: s20l, next21a.)"""
    groups, cpg = cdiv(n, 16 * kw), k // GROUP // spw
    blocks = min(groups * cpg, per_sm * sms)
    return groups, cpg, blocks, (cpg - 1) // max(1, groups * cpg // blocks) + 2


def cuda_packed(be, case, kw: int = PK_KW, stages: int = PK_STAGES, spw: int = PK_SPW, per_sm: int = 1,
                timeline=None, **probe):
    """w4a16 at batch 1 on sm_90: gemv_lowbit_pk over ``pack_groups``' stream, repacked on the
    first launch with each input set (the cache holds the input tensors, so a new set at a reused
    address is repacked). ``kw`` consumer warps (16 rows each per group), ``stages`` ring stages of
    ``kw``·``spw`` KiB + scales; the group-major chunks split evenly over one block per SM, a group
    spanning several blocks finished by the one holding its first chunk from the others'
    epoch-tagged partials in ``ws`` (each launch passes the next epoch: nothing is reset). Unsupported
    off sm_90, for K not a multiple of 128·``spw``, or where the ring and x exceed a block's shared
    memory. ``per_sm``: blocks per SM (a probe: no gain, s20i). ``probe``: probe defines (PMEMONLY,
    PXG, ...; scripts/probe.py); ``timeline``: a uint64 buffer of blocks·PK_TL_STRIDE words, the PTIMELINE
    record of every launch (scripts/pk_timeline.py)."""
    n, k, b, bits = _dims(case)
    if bits != 4 or b != 1 or k % (GROUP * spw):
        raise Unsupported(f"gemv_lowbit_pk: w4a16 at batch 1 with K a multiple of {GROUP * spw} only")
    smem = stages * kw * spw * 1056 + 2 * k  # ring (weights, scales), x
    if probe.get("PIMMA"):
        smem += 3 * k + 8 * (k // GROUP)  # x's byte planes, (2^e, −8·ΣM) per group
    if smem * per_sm > be.smem_per_block():
        raise Unsupported(f"gemv_lowbit_pk needs {smem} bytes of shared memory; the device allows "
                          f"{be.smem_per_block()}")
    defs = {"BITS": 4, "NB": 1, "DT": _dt(case), "PKW": kw, "PSTAGES": stages, "PSPW": spw, **probe,
            **({"PTIMELINE": 1} if timeline is not None else {})}
    prog = be.compile(_CU, "gemv_lowbit_pk", defs, options=("-arch=sm_90",))
    return _pk_run(be, prog, n, k, kw, spw, per_sm,
                   lambda ins: pack_groups(ins["qweight"], ins["scales"], n, k, kw, spw),
                   smem, () if timeline is None else (timeline,))


def _pk_run(be, prog, n: int, k: int, kw: int, spw: int, per_sm: int, pack, smem: int = 0, tail=()):
    """The run of gemv_lowbit_pk in either dialect: its geometry, the zeroed epoch-tagged
    partials ``ws`` (epoch 0: no launch's; each launch passes the next), and the packed stream
    ``pack(ins)`` made once per input set (the old set's copy freed first)."""
    groups, cpg, blocks, slots = pk_geometry(n, k, be.device.compute_units or 132, kw, spw, per_sm)
    ws = be.empty((groups * slots * kw * 16,), np.uint64)
    be.fill_bytes(ws, 0)
    nn, kk, ns = np.int32(n), np.int32(k), np.int32(slots)
    epochs = itertools.count(1)
    stream = _per_input_set(pack)
    return lambda ins, outs: be.launch(prog, (blocks,), (32 * (kw + 1),),
                                       [stream(ins), ins["x"], outs["y"], nn, kk, ws, ns,
                                        np.uint32(next(epochs) % 0xFFFFFFFF or 1), *tail], shared_mem=smem)


#: gemv_lowbit_simt shape (rows per warp, warps per block; 128-thread blocks fit any CUDA GPU).
#: H200, w8a16 bf16 B = 1, % of the ceiling at K=N=16384 / K=8192 N=28672
#: (probes-20261203-session16/8cf8aa3): (4, 4) with the prefetch 89.4 / 89.7, against the
#: tensor-core gemv_lowbit_tc's 83.1 / 76.6 in the same probe; (4, 8) 84.8 / 88.4, (8, 4) 87.4 /
#: 86.4, (16, 4) 86.3 / 74.2, (8, 8) 87.1 / 84.2, (2, 8) 76.7 / 83.6; without the prefetch (4, 8)
#: 91.4 / 77.3, (16, 4) 76.5 / 85.2 — only (4, 4) with the prefetch held at both shapes
SIMT_RPT, SIMT_WARPS = 4, 4


def cuda_simt(be, case, rpt: int = SIMT_RPT, warps: int = SIMT_WARPS, pf: int = 1):
    """w8a16 at batch 1 on CUDA cores: gemv_lowbit_simt — one PRMT + FADD + FFMA per weight,
    16-byte weight and x loads, ``rpt`` rows per warp, ``warps`` per block, ``pf`` 1: the next
    unit's weights loaded before the current one is used (fused_vec's w8a16 batch-1 kernel)."""
    n, k, b, bits = _dims(case)
    if bits != 8 or b != 1:
        raise Unsupported("gemv_lowbit_simt: w8a16 at batch 1 only")
    defs = {"BITS": 8, "NB": 1, "DT": _dt(case), "RPT": rpt, "WARPS": warps, "PF": pf}
    prog = be.compile(_CU, "gemv_lowbit_simt", defs)
    grid, block = (cdiv(n, warps * rpt),), (32 * warps,)
    nn, kk = np.int32(n), np.int32(k)
    return lambda ins, outs: be.launch(prog, grid, block, [ins["qweight"], ins["scales"], ins["x"], outs["y"],
                                                           nn, kk])


def _cl_teams(be) -> int:
    """Teams of 32 per work-group of OpenCL fused_vec: 4 (128 work-items), fewer where the device's
    max work-group size is smaller (queried, not assumed)."""
    dev = getattr(be, "cl_device", None)
    wg = int(dev.max_work_group_size) if dev is not None else 128
    return max(1, min(4, wg // 32))


def _cl_vec_defines(be) -> dict:
    """fused_vec's OpenCL defines: the magic unpack, and warp-shuffle reductions (inline PTX
    shfl.sync) on NVIDIA (``cl_nv_device_attribute_query``); elsewhere (PoCL, other vendors) the
    local-memory tree — a team of 32 is not one sub-group there."""
    feats = set(be.device.features)
    return {"MAGIC": 1, "SUBGROUPS": 2 if "cl_nv_device_attribute_query" in feats else 0}


#: gemv_lowbit_dp4a shape (fused_dp4a): rows per warp, warps per block, blocks per SM (persistent;
#: each block converts x once per K chunk). H200, w4a16 bf16 batch 1, % of the ceiling at K=N=16384
#: / K=8192 N=28672 (probes-20261204-session23/s23b, next unit prefetched): (2, 16, 2) 76.6 / 72.4,
#: (2, 32, 1) 76.2 / 73.1, (4, 16, 1) 74.2 / 68.3, (2, 8, 4) 70.9 / 70.1, (1, 32, 1) 67.7 / 63.6,
#: (2, 16, 1) 59.9 / 58.8 — bytes in flight per SM decide (32 warps × 2 rows × 2 units); fused_packed
#: 78.0 / 75.3 in the same probe. OpenCL (48 KiB of local memory per work-group on NVIDIA: K=16384
#: in two chunks): (4, 16, 1) 56.3 / 57.5, (2, 32, 1) 51.7 / 57.6, two or four work-groups per SM
#: 42–51 % (fused_mma 63.3 / 58.3)
#: A cp.async ring per warp instead of the register prefetch (weights in shared memory, up to 160
#: KiB in flight per SM, the first steps issued before the block converts x; commit d679684, s23d /
#: s23e): 76.3 / 72.9 % at its best (4 rows × 16 warps, 3 steps) — no gain, removed.
DP4A_RPT, DP4A_WARPS, DP4A_PER_SM = 2, 16, 2
DP4A_RPT_CL, DP4A_TEAMS_CL = 4, 16
#: bytes of local/shared memory per 32-k unit and batch row: three planes (96), 8·ΣM (4), the
#: group factor (1 per unit)
DP4A_UNIT_BYTES = 101


def dp4a_units(k: int, b: int, budget: int) -> int:
    """fused_dp4a's chunk: the most 32-k units (a multiple of 4 dividing K/32) whose planes of ``b``
    batch rows fit ``budget`` bytes. Raises Unsupported where not even one group fits."""
    upr = k // 32
    fits = [d for d in range(4, upr + 1, 4) if upr % d == 0 and d * b * DP4A_UNIT_BYTES <= budget]
    if not fits:
        raise Unsupported(f"gemv_lowbit_dp4a: one group of x planes ({4 * b * DP4A_UNIT_BYTES} bytes) "
                          f"exceeds the {budget} bytes of shared/local memory")
    return fits[-1]


def _dp4a_dims(case) -> tuple[int, int, int]:
    """(N, K, B) of a fused_dp4a case; Unsupported for w8a16 (met on CUDA cores by the SIMT
    kernels, whose bytes hold half the weights)."""
    n, k, b, bits = _dims(case)
    if bits != 4:
        raise Unsupported("gemv_lowbit_dp4a: w4a16 only")
    return n, k, b


def _dp4a_args(be, case, cu: int, rpt: int, teams: int, per_sm: int):
    """(grid, workspace, N, K) of gemv_lowbit_dp4a in CUDA and OpenCL: persistent blocks, and the
    fp32 workspace where K spans several chunks (one word otherwise)."""
    n, k, b = _dp4a_dims(case)
    warps = cdiv(n, rpt)
    blocks = max(1, min((be.device.compute_units or 132) * per_sm, cdiv(warps, teams)))
    ws = be.empty((b * n if k // 32 > cu else 1,), np.float32)
    return (blocks,), ws, np.int32(n), np.int32(k)


def cuda_dp4a(be, case, rpt: int = DP4A_RPT, warps: int = DP4A_WARPS, per_sm: int = DP4A_PER_SM,
              cu: int | None = None, **probe):
    """w4a16 on CUDA cores through dp4a (gemv_lowbit.cu: gemv_lowbit_dp4a); ``cu``: units of 32 k
    per chunk instead of the most that fit (tests, probes); ``probe``: the DMEMONLY define."""
    n, k, b = _dp4a_dims(case)
    cu = cu or dp4a_units(k, b, be.smem_per_block())
    prog = be.compile(_CU, "gemv_lowbit_dp4a",
                      {"BITS": 4, "NB": b, "DT": _dt(case), "RPT": rpt, "WARPS": warps, "CU": cu,
                       "MINB": per_sm, **probe})
    grid, ws, nn, kk = _dp4a_args(be, case, cu, rpt, warps, per_sm)
    smem = b * cu * DP4A_UNIT_BYTES
    return lambda ins, outs: be.launch(prog, grid, (32 * warps,), [ins["qweight"], ins["scales"], ins["x"],
                                                                   outs["y"], ws, nn, kk], shared_mem=smem)


def opencl_dp4a(be, case, rpt: int = DP4A_RPT_CL, teams: int | None = None, per_sm: int = 1,
                cu: int | None = None):
    """gemv_lowbit.cl: gemv_lowbit_dp4a — PTX dp4a and warp shuffles on NVIDIA, byte products and
    local-memory sums elsewhere; local memory sized statically per chunk under the device's limit
    (``cu`` as in ``cuda_dp4a``)."""
    n, k, b = _dp4a_dims(case)
    dev = getattr(be, "cl_device", None)
    nv = "cl_nv_device_attribute_query" in set(be.device.features)
    # PTX dp4a from sm_61 (Pascal); older NVIDIA parts take the byte products
    dp4a = nv and (int(dev.compute_capability_major_nv), int(dev.compute_capability_minor_nv)) >= (6, 1)
    wg = int(dev.max_work_group_size) if dev is not None else 512
    teams = teams or max(1, min(DP4A_TEAMS_CL, wg // 32))
    lmem = int(dev.local_mem_size) if dev is not None else 48 * 1024
    scratch = 128 * teams + (0 if nv else 128 * teams * rpt * b) + 256
    cu = cu or dp4a_units(k, b, lmem - scratch)
    prog = be.compile(_CL, "gemv_lowbit_dp4a",
                      {"BITS": 4, "NB": b, "DT": _dt(case), "RPT": rpt, "TEAMS": teams, "CU": cu,
                       "DP4A": int(dp4a), "SUBGROUPS": 2 if nv else 0})
    grid, ws, nn, kk = _dp4a_args(be, case, cu, rpt, teams, per_sm)
    return lambda ins, outs: be.launch(prog, grid, (32 * teams,), [ins["qweight"], ins["scales"], ins["x"],
                                                                   outs["y"], ws, nn, kk])


@kernel("gemv_lowbit", "cuda", "fused_dp4a")
def cuda_fused_dp4a(be, case):
    """w4a16 on CUDA cores with integer dot products: x per scale group in 22-bit fixed point as
    three byte planes (shared memory), six dp4a per 8 weights into exact int32 sums, one FMA per
    32-k unit (``cuda_dp4a``; gemv_lowbit.cu: gemv_lowbit_dp4a). Unsupported for w8a16."""
    return cuda_dp4a(be, case)


@kernel("gemv_lowbit", "opencl", "fused_dp4a")
def opencl_fused_dp4a(be, case):
    """CUDA's fused_dp4a in OpenCL C (``opencl_dp4a``): PTX dp4a on NVIDIA, byte products elsewhere."""
    return opencl_dp4a(be, case)


@kernel("gemv_lowbit", "cuda", "dequant_then_gemv")
def cuda_dequant_then_gemv(be, case):
    """dequant_lowbit (thread per dense word) → dense fp16 W in memory → gemv_lowbit BITS=16
    (warp per row, 16-byte loads, 4 warps per block)."""
    return _c_kernels(be, case, _CU, "dequant_then_gemv")


@kernel("gemv_lowbit", "cuda", "fused")
def cuda_fused(be, case):
    """Warp per row, 4-byte packed loads unpacked in registers, warp-shuffle reduction."""
    return _c_kernels(be, case, _CU, "fused")


@kernel("gemv_lowbit", "cuda", "fused_vec")
def cuda_fused_vec(be, case):
    """w8a16 at batch 1: CUDA cores (gemv_lowbit_simt, ``cuda_simt``: warp per 4 rows, 16-byte
    loads with the next unit prefetched, one PRMT + FADD + FFMA per weight, warp-shuffle
    reduction). Otherwise tensor cores: block per 16·RT rows (TC_RT: 32 for w4a16, 16 for w8a16),
    lane loads 16 bytes of 2·RT rows per step through a cp.async ring, magic-exponent unpack to
    f16x2/bf16x2, mma.sync m16n8k16 with fp32 accumulators (batch = the mma's N), K split over the
    block's warps (gemv_lowbit.cu: gemv_lowbit_tc)."""
    _, _, b, bits = _dims(case)
    return cuda_simt(be, case) if (bits, b) == (8, 1) else _cuda_tc(be, case)


@kernel("gemv_lowbit", "cuda", "fused_tma")
def cuda_fused_tma(be, case):
    """w4a16 at batch 1 on sm_90 (``cuda_tma``, gemv_lowbit.cu: gemv_lowbit_tma): 2-D TMA copies of
    16-row boxes of W and their group scales into a shared-memory ring, one producer thread and
    TMA_KW consumer warps per SM (tensor-core mma.sync as fused_vec), the chunks split evenly over
    one block per SM. Elsewhere (other formats, batch, architectures): unsupported."""
    return cuda_tma(be, case)


@kernel("gemv_lowbit", "cuda", "fused_packed")
def cuda_fused_packed(be, case):
    """w4a16 at batch 1 on sm_90 (``cuda_packed``, gemv_lowbit.cu: gemv_lowbit_pk): W and its scales
    repacked once (outside the timed calls, as tinygemm's are) so each SM streams one contiguous
    range of 33 KiB bulk copies and every consumer warp keeps its own 16 rows' sums. Elsewhere
    (other formats, batch, architectures): unsupported."""
    return cuda_packed(be, case)


@kernel("gemv_lowbit", "opencl", "dequant_then_gemv")
def opencl_dequant_then_gemv(be, case):
    """dequant_lowbit (work-item per dense word) → dense fp16 W in memory → gemv_lowbit BITS=16
    (64 work-items per row, 16-byte loads, local-memory tree)."""
    return _c_kernels(be, case, _CL, "dequant_then_gemv")


@kernel("gemv_lowbit", "opencl", "fused")
def opencl_fused(be, case):
    """64 work-items per row, 4-byte packed loads unpacked in registers, local-memory tree."""
    return _c_kernels(be, case, _CL, "fused")


@kernel("gemv_lowbit", "opencl", "fused_vec")
def opencl_fused_vec(be, case, shape: tuple[int, int] | None = None, teams: int | None = None):
    """Team of 32 work-items per 4 rows, one 16-byte (uint4) packed load per row per step, x
    shared by the rows, shift-free 2^23-magic unpack (one AND/OR and one
    subtraction per weight); warp shuffles on NVIDIA, else a local-memory tree; up to 4 teams per
    work-group (the device's max work-group size permitting). ``shape`` (U, RPT) and ``teams``
    instead of the registered ones: probes."""
    return _c_kernels(be, case, _CL, "fused_vec", shape, teams)


#: OpenCL fused_mma's shape: steps per chunk and register cap (-cl-nv-maxrregcount, where
#: cl_nv_compiler_options is offered). H200, w4a16 bf16 K=N=16384 / N=28672
#: (probes-20261204-session21/s21a–c): unbounded, US 2: 168 registers (3 blocks of 4 warps per SM),
#: 44–46 / 47–50 %; capped at 128, US 1: 52.0 / 49.4 %; a cp.async ring in local memory 38–47 %
#: (at most 48 KiB of local memory per work-group on NVIDIA's OpenCL held STAGES 4 at US 1 and KW 4;
#: removed)
MMA_US, MMA_MAXRREG = 1, 128


@kernel("gemv_lowbit", "opencl", "fused_mma")
def opencl_fused_mma(be, case, maxrreg: int | None = MMA_MAXRREG, **defines):
    """NVIDIA sm_80+ only: CUDA ``fused_vec``'s tensor-core kernel in OpenCL C (gemv_lowbit.cl:
    gemv_lowbit_mma; mma.sync, prmt and f16x2/bf16x2 FMA through inline PTX, as the shuffles of
    fused_vec): block per 16·RT rows, split-K warps (``tc_geometry``), the next chunk's weights
    and x loaded into registers before the current one is multiplied. ``defines`` override the
    planned KW/US/RT and ``maxrreg`` caps the registers (cl_nv_compiler_options; probes).
    Elsewhere (PoCL, other vendors, older NVIDIA): unsupported."""
    feats = set(be.device.features)
    if "cl_nv_device_attribute_query" not in feats or int(be.cl_device.compute_capability_major_nv) < 8:
        raise Unsupported("gemv_lowbit_mma: NVIDIA OpenCL, compute capability 8.0+ only (inline PTX mma)")
    n, k, b, bits = _dims(case)
    rt = defines.get("RT", TC_RT[bits])
    defs = {"MMA": 1, "BITS": bits, "NB": b, "DT": _dt(case), "US": MMA_US, "RT": rt,
            "KW": tc_geometry(case, be.device.compute_units or 132, rt)[0], **defines}
    opts = (f"-cl-nv-maxrregcount={maxrreg}",) if maxrreg and "cl_nv_compiler_options" in feats else ()
    prog = be.compile(_CL, "gemv_lowbit_mma", defs, opts)
    grid, block = (cdiv(n, 16 * defs["RT"]),), (32 * defs["KW"],)
    nn, kk = np.int32(n), np.int32(k)
    return lambda ins, outs: be.launch(prog, grid, block, [ins["qweight"], ins["scales"], ins["x"], outs["y"],
                                                           nn, kk])


#: OpenCL fused_packed (gemv_lowbit.cl: gemv_lowbit_pk): consumer warps, ring stages, steps per warp
#: and chunk, work-groups per SM, x's slice in each stage (PXR) — 2 stages of 17 KiB fit the 48 KiB
#: NVIDIA's OpenCL gives a work-group; two work-groups per SM keep 68 KiB in flight (CUDA's one
#: block: 3 × 33 KiB). H100 only so far (K=N=16384 / K=8192 N=28672, % of that card's ceiling):
#: with x from global memory (probes-20261206-session36, s36b-3) (8, 5, 1, 2) 72.1 / 71.6,
#: (16, 2, 1, 1) 73.4 / 71.4, (4, 4, 1, 4) 71.4 / 70.3, (4, 8, 1, 3) 70.5 / 65.5, (8, 2, 2, 2)
#: 69.8 / 67.4, three per SM 58–61 (their 72-register cap not taken: 96 in the build log); with
#: PXR (probes-20261207-session44, s44a, 20 interleaved rounds) (8, 2, 2, 2) 78.8 / 74.8,
#: (8, 4, 1, 2) 78.1 / 75.9, (8, 5, 1, 2) 76.2 / 74.5, (16, 2, 1, 1) 71.4 / 68.8 against x from
#: global memory's (8, 5, 1, 2) 73.8 / 71.1 and fused_mma's 76.4 / 74.0 in the same rounds.
PK_CL_KW, PK_CL_STAGES, PK_CL_SPW, PK_CL_PER_SM, PK_CL_PXR = 8, 2, 2, 2, 1
#: registers per SM of the sm_90 parts the kernel runs on (the residency cap below)
SM90_REGS = 65536


def opencl_packed(be, case, kw: int = PK_CL_KW, stages: int = PK_CL_STAGES, spw: int = PK_CL_SPW,
                  per_sm: int = PK_CL_PER_SM, options: tuple[str, ...] = (), pxr: int = PK_CL_PXR,
                  regcap: bool = True):
    """w4a16 at batch 1 on NVIDIA sm_90 from OpenCL C: gemv_lowbit.cl's gemv_lowbit_pk over the
    stream of ``pack_groups`` (repacked once per input set, outside the timed calls, as CUDA's
    ``cuda_packed``). ``per_sm`` work-groups per SM, their registers capped
    (-cl-nv-maxrregcount) so the whole grid can be resident at once (s36b: the three-per-SM
    shapes' 72-register cap did not hold, and they ran 10 points slower, not stuck).
    Unsupported off NVIDIA's OpenCL at compute capability 9, without its compiler options (the
    cap), for K not a multiple of 128·``spw``, or where the ring exceeds the local memory.
    ``options``: more build options (probes: -cl-nv-verbose, ptxas's registers and spills);
    ``pxr`` 1: each chunk's x slice rides in its ring stage (a second bulk copy); 0: the
    consumers load it from global memory a chunk ahead (s43o, H100: CUDA's kernel at this
    geometry lost 6–7 % of its speed when it read x from global memory); ``regcap`` False: no
    register cap (a probe)."""
    feats = set(be.device.features)
    dev = getattr(be, "cl_device", None)
    if "cl_nv_device_attribute_query" not in feats or int(dev.compute_capability_major_nv) < 9:
        raise Unsupported("gemv_lowbit_pk: NVIDIA OpenCL, compute capability 9.0+ only (PTX bulk copies)")
    if "cl_nv_compiler_options" not in feats:
        raise Unsupported("gemv_lowbit_pk: needs cl_nv_compiler_options (the register cap for residency)")
    n, k, b, bits = _dims(case)
    if bits != 4 or b != 1 or k % (GROUP * spw):
        raise Unsupported(f"gemv_lowbit_pk: w4a16 at batch 1 with K a multiple of {GROUP * spw} only")
    lmem = stages * spw * (kw * 1056 + pxr * 256) + 16 * stages  # ring, barriers
    if lmem > int(dev.local_mem_size):
        raise Unsupported(f"gemv_lowbit_pk needs {lmem} bytes of local memory; the device allows "
                          f"{int(dev.local_mem_size)}")
    maxrreg = SM90_REGS // (per_sm * 32 * (kw + 1)) // 8 * 8
    defs = {"BITS": 4, "NB": 1, "DT": _dt(case), "PKW": kw, "PSTAGES": stages, "PSPW": spw, "PXR": pxr}
    cap = (f"-cl-nv-maxrregcount={min(255, maxrreg)}",) if regcap else ()
    prog = be.compile(_CL, "gemv_lowbit_pk", defs, (*cap, *options))
    return _pk_run(be, prog, n, k, kw, spw, per_sm,  # the stream packed on the host
                   lambda ins: be.upload(pack_groups(be.download(ins["qweight"]), be.download(ins["scales"]),
                                                     n, k, kw, spw)))


@kernel("gemv_lowbit", "opencl", "fused_packed")
def opencl_fused_packed(be, case):
    """CUDA's fused_packed in OpenCL C (``opencl_packed``; gemv_lowbit.cl: gemv_lowbit_pk): the
    repacked stream through a ring of 1-D bulk copies (inline PTX), each consumer warp's own rows,
    mma.sync consumers, each chunk's x slice copied into its stage. NVIDIA sm_90 only; elsewhere
    unsupported."""
    return opencl_packed(be, case)


# ---- triton ---------------------------------------------------------------------------------

#: K tile of every Triton kernel: one w4a16 scale group
TRITON_BK = 128
#: rows per program (fused: byte-indexed loads; dense GEMV)
TRITON_BN = {0: 16, 1: 16}
#: rows per program in the interpreter (its cost is per program and per tile, not per element)
TRITON_BN_INTERPRET = 128


def _pow2(v: int) -> int:
    return 1 << max(0, int(v) - 1).bit_length()


def _triton(be, case, mode: int):
    import torch

    from ops.gemv_lowbit.gemv_lowbit_triton import dequant_lowbit, gemv_lowbit

    n, k, b, bits = _dims(case)
    bn = TRITON_BN_INTERPRET if be.device.mode == "interpret" else TRITON_BN[mode]
    bb = _pow2(b)
    grid = (cdiv(n, bn),)
    kw = {"BITS": bits, "MODE": mode, "BN": bn, "BK": TRITON_BK, "BB": bb, "OUT_BF16": case.dtype == "bf16",
          "num_warps": 4}
    if mode == 0:
        wdt = torch.bfloat16 if case.dtype == "bf16" else torch.float16
        wd = torch.empty((n, k), dtype=wdt, device=be.dev)
        dgrid = (cdiv(n, bn), k // TRITON_BK)

        def run(ins, outs):
            s, x, y = _tv(ins["scales"], case), _tv(ins["x"], case), _tv(outs["y"], case)
            dequant_lowbit[dgrid](ins["qweight"], s, wd, n, k, k * bits // 8, BITS=bits, BN=bn, BK=TRITON_BK,
                                  OUT_BF16=case.dtype == "bf16")
            gemv_lowbit[grid](wd, s, x, y, n, k, b, k, **{**kw, "BITS": 16})

        return run

    stride = k * bits // 8

    def run(ins, outs):
        w = ins["qweight"]
        gemv_lowbit[grid](w, _tv(ins["scales"], case), _tv(ins["x"], case), _tv(outs["y"], case), n, k, b,
                          stride, **kw)

    return run


@kernel("gemv_lowbit", "triton", "dequant_then_gemv")
def triton_dequant_then_gemv(be, case):
    """dequant_lowbit (program per 16 rows × 128 k) → dense fp16 W → gemv_lowbit MODE 0."""
    return _triton(be, case, 0)


@kernel("gemv_lowbit", "triton", "fused")
def triton_fused(be, case):
    """Program per 16 rows; each k's packed byte loaded and its nibble shifted out in registers."""
    return _triton(be, case, 1)


#: fused_vec w8a16 (gemv_lowbit_vec) autotune configs (BN rows, BK k per tile, num_warps,
#: num_stages): narrow row panels with long K tiles keep many 16-byte loads in flight (the kernel
#: prefetches the next word tile itself: the kernel-level num_stages does not stage loads that feed
#: no tl.dot — a tl.range(num_stages=...) loop does, in Triton 3.6: see gemv_lowbit_dp4a's STAGES);
#: the winner and the tuning time are recorded in the row (``kernel_info``)
TRITON_VEC_CONFIGS = [(16, 512, 4, 1), (32, 256, 4, 1), (16, 1024, 4, 1), (32, 512, 8, 1), (8, 512, 2, 1),
                      (64, 256, 8, 1), (8, 1024, 4, 1)]
#: the interpreter's one config (its cost is per program and per tile, not per element)
TRITON_VEC_INTERPRET = (128, 128, 4, 1)
#: fused_vec w4a16 (gemv_lowbit_dot, tensor cores) autotune configs (BN rows, num_warps,
#: num_stages). H200, bf16 B = 1 (probes-20261202-session13/c71b162): K=N=16384 28.8 % (128, 8, 4)
#: against 27.3 % for gemv_lowbit_vec; N=28672 32.8 % (128, 4, 3) against 27.0; B = 8 17.7 %
#: (64, 4, 5) against 12.3. For w8a16 the same kernel ran at 42 % against gemv_lowbit_vec's 55 %.
#: Session 14 (probes-20261202-session14/6a41042): BN < 64 (Triton then takes mma.sync with both
#: operands in registers instead of wgmma, whose x-field B operands are stored to shared memory
#: and fenced before each of the 8 serialized k16 wgmma of a group — sm_90 SASS of (128, 8, 4):
#: HGMMA, WARPGROUP.DEPBAR, MEMBAR.ALL.CTA, FENCE.VIEW.ASYNC per dot): (32, 2, 3) 27.2 / 27.6 %
#: against 26.5 / 32.9 % registered (N = 16384 / 28672), (32, 4, *) 17.5 %, (16, 1, 5) 20–22 %;
#: w8a16 at most 43 % against 55.7 / 52.9. Not kept. (At BN 128 the N = 16384 grid is 128
#: programs: one per SM, 8 warps.)
TRITON_DOT_CONFIGS = [(128, 8, 4), (128, 4, 3), (64, 4, 5)]
TRITON_DOT_INTERPRET = (64, 4, 1)
#: below this N·K no autotuning (test shapes, N=1000): the config with the most programs (the
#: smallest BN) is used — the first one left N=1000 K=8192 with 8 programs (104 GB/s, `9f7613`)
TRITON_VEC_TUNE_MIN = 2**24


#: launch options of a config dict (the rest are the kernel's constexprs)
_LAUNCH_KEYS = ("num_warps", "num_stages", "maxnreg")


def _triton_tuned(be, case, fn, configs, words_per_row: int, meta: dict):
    """``fn`` (gemv_lowbit_row, _vec or _dot) over the int32 view of qweight: one config in the
    interpreter (``configs[0]``) and below TRITON_VEC_TUNE_MIN, else autotuned per (N, K, B) once
    here on scratch operands of the case's shape (outside the timed runs; winner and tuning time
    in ``run.info``).
    ``configs``: dicts of meta-parameters with ``num_warps`` / ``num_stages`` (and optionally
    ``maxnreg``); grid ⌈N / BN⌉."""
    import torch
    import triton

    n, k, b, _ = _dims(case)
    out_bf16 = case.dtype == "bf16"
    if be.device.mode == "interpret":
        configs = configs[:1]
    elif n * k < TRITON_VEC_TUNE_MIN:
        configs = [min(configs, key=lambda c: c["BN"])]
    kern = triton.autotune([triton.Config({kk: v for kk, v in c.items() if kk not in _LAUNCH_KEYS},
                                          num_warps=c["num_warps"], num_stages=c["num_stages"],
                                          maxnreg=c.get("maxnreg"))
                            for c in configs], key=["N", "K", "B"])(fn)
    grid = lambda m: (triton.cdiv(n, m["BN"]),)  # noqa: E731

    def launch(w, s, x, y):
        kern[grid](w, s, x, y, n, k, b, words_per_row, OUT_BF16=out_bf16, **meta)

    info = {}
    if be.device.mode != "interpret":
        import time

        sdt = torch.bfloat16 if out_bf16 else torch.float16
        ws = torch.zeros((n, words_per_row), dtype=torch.int32, device=be.dev)
        ss = torch.ones(lowbit_scale_shape(case), dtype=sdt, device=be.dev)
        xs = torch.randn((b, k), device=be.dev).to(sdt)
        ys = torch.empty((b, n), dtype=sdt, device=be.dev)
        t0 = time.perf_counter()
        launch(ws, ss, xs, ys)
        be.synchronize()
        best = kern.best_config
        info = {"autotune_s": round(time.perf_counter() - t0, 3),
                "config": {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages,
                           **({"maxnreg": best.maxnreg} if best.maxnreg else {})}}

    def run(ins, outs):
        launch(ins["qweight"].view(torch.int32), _tv(ins["scales"], case), _tv(ins["x"], case),
               _tv(outs["y"], case))

    run.info = info
    return run


def _triton_vec(be, case):
    import triton

    from ops.gemv_lowbit.gemv_lowbit_triton import gemv_lowbit_vec

    n, k, b, bits = _dims(case)
    shapes = [TRITON_VEC_INTERPRET] if be.device.mode == "interpret" else TRITON_VEC_CONFIGS
    heur = triton.heuristics({"EVEN_K": lambda a: a["K"] % a["BK"] == 0})
    return _triton_tuned(be, case, heur(gemv_lowbit_vec),
                         [{"BN": bn, "BK": bk, "num_warps": w, "num_stages": st} for bn, bk, w, st in shapes],
                         k * bits // 32, {"BB": _pow2(b)})


def triton_dot(be, case, shapes: list[tuple[int, int, int]] | None = None):
    """gemv_lowbit_dot: program per BN rows, tl.dot against the batch padded to 16 columns;
    ``shapes``: (BN, num_warps, num_stages) to tune over instead of TRITON_DOT_CONFIGS (probes)."""
    from ops.gemv_lowbit.gemv_lowbit_triton import gemv_lowbit_dot

    n, k, b, bits = _dims(case)
    interp = be.device.mode == "interpret"
    shapes = shapes or ([TRITON_DOT_INTERPRET] if interp else TRITON_DOT_CONFIGS)
    return _triton_tuned(be, case, gemv_lowbit_dot,
                         [{"BN": bn, "num_warps": w, "num_stages": st} for bn, w, st in shapes],
                         k * bits // 32, {"BITS": bits, "BB": max(16, _pow2(b)), "F32": interp})


#: gemv_lowbit_row (fused_vec at batch 1) autotune configs (BN, BK, num_warps, num_stages): Triton
#: 3.6 loads the x pairs per thread in the word tile's layout (sm_90 SASS: 0–2 barriers per loop
#: against gemv_lowbit_vec's 32; 4.3 instructions per weight value at 4–8 rows per thread). H200,
#: bf16 (probes-20261203-session16/d9f9a7b, before the shift-free unpack): w8a16 K=N=16384 best
#: (64, 512, 8) 86.2 %, N=28672 (128, 256, 8) 84.2 %; w4a16 (64, 512, 8) 43.0 %, (64, 256, 4) 47.6 %;
#: (64, 1024, 8) 32–71 % (dropped); no reload past the last K tile: +1.5 points for w8a16 (probe16d)
#: (128, 256, 8) takes 147 registers (one program per SM; N=28672's 224 programs in 1.7 waves);
#: capped at 128 (maxnreg, an optional 5th field; two per SM, no spills) it lost at w8a16 N=28672:
#: 78.0 against 83.9 % uncapped (session16d, commit 564ecf0), so not registered. Two word tiles
#: loaded ahead instead of one (a PF constexpr, commit ae5d8a6; probes-20261204-session18/s18b):
#: autotuned 43.8 against 46.3 % (w4a16 K=N=16384 bf16) and 74.4 against 85.7 % (w8a16 N=28672);
#: every config lower: removed
TRITON_ROW_CONFIGS = [(128, 256, 8, 1), (64, 512, 8, 1), (32, 512, 8, 1), (64, 256, 4, 1), (16, 512, 4, 1)]
TRITON_ROW_INTERPRET = (32, 256, 4, 1)
#: 0x4B000000 (2^23 as fp32) passed as a kernel argument, see gemv_lowbit_triton._field
MAGIC_2P23 = 0x4B000000


def triton_row(be, case, shapes: list[tuple[int, ...]] | None = None):
    """gemv_lowbit_row (batch 1): 2-D word tiles, x pairs in the words' layout; ``shapes``: (BN, BK,
    num_warps, num_stages[, maxnreg]) to tune over instead of TRITON_ROW_CONFIGS (probes)."""
    import triton

    from ops.gemv_lowbit.gemv_lowbit_triton import gemv_lowbit_row

    n, k, b, bits = _dims(case)
    if b != 1:
        raise ValueError(f"gemv_lowbit_row takes batch 1, not {b}")
    shapes = shapes or ([TRITON_ROW_INTERPRET] if be.device.mode == "interpret" else TRITON_ROW_CONFIGS)
    heur = triton.heuristics({"EVEN_K": lambda a: a["K"] % a["BK"] == 0})
    return _triton_tuned(be, case, heur(gemv_lowbit_row),
                         [{"BN": t[0], "BK": t[1], "num_warps": t[2], "num_stages": t[3],
                           "maxnreg": t[4] if len(t) > 4 else None} for t in shapes],
                         k * bits // 32, {"BITS": bits, "MAGIC": MAGIC_2P23})


def lowbit_scale_shape(case) -> tuple[int, ...]:
    n, k, _, bits = _dims(case)
    return (n, k // GROUP) if bits == 4 else (n,)


#: fused_dp4a on Triton (gemv_lowbit_dp4a) autotune configs (BN rows, BK k per tile, num_warps);
#: H200, w4a16 bf16 batch 1, % of the ceiling at K=N=16384 / N=28672 (probes-20261204-session23/
#: s23f, x's planes made by the first launch included): (32, 512, 8) 61.3 / 62.6, (64, 512, 8) 60.0 /
#: 57.2, (32, 256, 4) 45.3 / 63.1, (16, 512, 4) 46.8 / 61.0, (64, 256, 8) 44.2 / 61.0, (128, 256, 8)
#: 35.0 / 52.8; autotuned 61.1 / 62.9 (fused_vec 45.9 / 46.3). Session 31 (probes-20261206-session31/
#: s29c): the word tiles through a cp.async ring (a 4th field, STAGES) at BK 1024 — (16, 1024, 4, 3)
#: 70.1 / 71.2, (8, 1024, 2, 4) 69.4 / 65.7 against the registered six's best 62.1 / 63.2 in the
#: same probe; rings at BK ≤ 512 lost (44–63.5), so did the dependent (PDL) launch at those shapes
#: (62.6 / 61.5); at the BK 1024 rings it gained (session 32: see triton_dp4a's ``pdl``). A register
#: cap on the two rings (94 registers in Triton 3.6's sm_90 compile, 5 programs per SM; 80 → 6,
#: 64 → 8, no spills) lost on an H100 (session 40, `s39d`, 100 interleaved rounds, K=N=16384 /
#: K=8192, N=28672): 80 took 1.060 / 1.050 × the uncapped (16, 1024, 4, 3)'s time and 1.023 / 1.028 ×
#: (8, 1024, 2, 4)'s (ratios of medians), 64 took 1.109 / 1.217 × and 1.166 / 1.223 ×: removed. The
#: interpreter's one config. A 5th field is UNIT (gemv_lowbit_dp4a: the planes combined per 32-k unit,
#: 0 where absent); the two UNIT 1 rings joined the autotuned set in session 49 (H100, `s49a`, 40
#: interleaved rounds against (16, 1024, 4, 3): (32, 1024, 4, 3, 1) 0.972 / 1.005 × its time at
#: K=N=16384 / K=8192 N=28672, 83.7 % of that card's ceiling in one wave at K=N=16384;
#: (16, 2048, 4, 3, 1) 0.971 / 1.050 ×; UNIT 1 at the registered rings 1.034 / 1.000 and 0.991 /
#: 1.032 × — its 72 registers fit 7 programs per SM, 1.11 waves at K=N=16384) — each device's
#: autotuner picks
TRITON_DP4A_CONFIGS = [(64, 256, 8), (32, 512, 8), (128, 256, 8), (64, 512, 8), (32, 256, 4), (16, 512, 4),
                       (16, 1024, 4, 3), (8, 1024, 2, 4), (32, 1024, 4, 3, 1), (16, 2048, 4, 3, 1)]
TRITON_DP4A_INTERPRET = (64, 256, 4)
#: groups of 128 k per program of gemv_x_planes. Session 34 (H100s, `s34c`): time against N at
#: K = 16384 is 9.3–9.6 µs + bytes at 2970–3045 GB/s for the registered form, 5.8 µs + the same
#: for gemv_lowbit_dp4a alone: the planes' launch costs 3.5 µs of each call (PDL: none of it back
#: at the ring configs, which wait before their first load). Making the planes inside the one
#: launch instead (IN_PLANES, commit 530412d: the first programs by ticket make them, the others
#: poll an acquire counter after their first tile; counters reset by the last program) lost:
#: 1.080 / 1.105 × the registered form's time in interleaved rounds at K=N=16384 / K=8192,
#: N=28672 (`s34d`), 1.25–2.1 × at other shapes; removed.
TRITON_PLANES_GB = 8
#: word tiles of each program's rows prefetched into L2 before the dependent launch's wait
#: (gemv_lowbit_dp4a's PREF). Session 37 (H100, `s37a`, 100 interleaved rounds, K=N=16384 /
#: K=8192, N=28672): PREF 2 took 0.993 / 0.992 × the time of none at (16, 1024, 4, 3) and 0.990 /
#: 0.982 × at (8, 1024, 2, 4); PREF 1 0.993 / 0.993 and 0.994 / 0.988 ×; PREF 4 1.017 / 1.014 and
#: 1.005 / 0.986 × — small gains: DRAM was less idle during gemv_x_planes than its 3.5 µs suggested
TRITON_DP4A_PREF = 2
#: gemv_lowbit_dp4a's UNIT (a config's 5th field): 1 combines the planes per 32-k unit (each
#: plane's eight dp4a chained through one accumulator, one int→float and one FMA per unit and row),
#: as CUDA's and WGSL's kernels do; 0 per word. Session 49 (sm_90 SASS, Triton 3.6 and 3.9 offline):
#: (16, 1024, 4, 3)'s loop body 273 instructions per tile against 335, 72 registers against 93;
#: (32, 1024, 4, 3)'s 449 against 560, 92 registers against 165.


def triton_dp4a(be, case, shapes: list[tuple[int, ...]] | None = None, pdl: bool | None = None,
                alone: str = "", pref: int = TRITON_DP4A_PREF, unit: int | None = None):
    """w4a16 on dp4a in Triton (gemv_lowbit_triton.py): gemv_x_planes converts x into byte planes
    (a second small launch inside the timed call), then gemv_lowbit_dp4a streams the word tiles
    (PTX dp4a through inline asm; the same integers in plain arithmetic in the interpreter and on
    ROCm, which takes no PTX), batch
    rows on the grid's second axis (each reads the weights again: built for batch 1); autotuned
    per (N, K) over ``shapes`` (BN, BK, num_warps[, STAGES]) like fused_vec (STAGES > 1: the word
    tiles through a cp.async ring of that many stages instead of one tile loaded ahead). ``pdl``
    (None: where the device has it — compiled CUDA on sm_90+): gemv_lowbit_dp4a as a programmatic
    dependent launch of gemv_x_planes, so its launch and first loads overlap the small kernel
    (session 32, H200 probe: the registered (16, 1024, 4, 3) ring 71.0 / 73.5 % of the ceiling as
    a dependent launch against 69.7 / 71.2 % launched plainly). ``alone`` (probes, wrong by design):
    "planes" times gemv_x_planes alone, "main" gemv_lowbit_dp4a alone (launched plainly, on the
    planes of the first call's x). ``pref`` (with the dependent launch): the first ``pref`` word
    tiles of each program's rows prefetched into L2 before its wait (gemv_lowbit_dp4a's PREF);
    ``unit`` (probes): gemv_lowbit_dp4a's UNIT at every config, instead of each config's own."""
    import torch
    import triton

    from ops.gemv_lowbit.gemv_lowbit_triton import gdc_wait, gemv_lowbit_dp4a, gemv_x_planes

    n, k, b = _dp4a_dims(case)
    interp = be.device.mode == "interpret"
    asm = not interp and not torch.version.hip
    shapes = shapes or ([TRITON_DP4A_INTERPRET] if interp else TRITON_DP4A_CONFIGS)
    if not interp and n * k < TRITON_VEC_TUNE_MIN:
        shapes = [min(shapes, key=lambda t: (len(t) > 3, t[0]))]  # (the fewest rows, unstaged)
    even = triton.heuristics({"EVEN_K": lambda a: a["K"] % a["BK"] == 0})
    kern = triton.autotune([triton.Config({"BN": t[0], "BK": t[1], "STAGES": t[3] if len(t) > 3 else 1,
                                           "UNIT": (t[4] if len(t) > 4 else 0) if unit is None else unit},
                                          num_warps=t[2], num_stages=1)
                            for t in shapes],
                           key=["N", "K"])(even(gemv_lowbit_dp4a))
    xp = torch.empty((b, 6, k // 8), dtype=torch.int32, device=be.dev)
    sm = torch.empty((b, k // 8), dtype=torch.int32, device=be.dev)
    fg = torch.empty((b, k // GROUP), dtype=torch.float32, device=be.dev)
    out_bf16 = case.dtype == "bf16"
    pgrid = (triton.cdiv(k // GROUP, TRITON_PLANES_GB), b)
    grid = lambda m: (triton.cdiv(n, m["BN"]), b)  # noqa: E731

    # griddepcontrol is PTX for sm_90+: not in the interpreter, on ROCm or on older GPUs
    has_pdl = asm and gdc_wait is not None and be.capability() >= (9, 0)
    pdl = (has_pdl if pdl is None else pdl and has_pdl) and not alone
    dependent = {"PDL": True, "launch_pdl": True, "PREF": pref} if pdl else {}

    planes_made = [False]  # alone="main" makes the planes in its first call only

    def launch(w, s, x, y):
        if not (alone == "main" and planes_made[0]):
            gemv_x_planes[pgrid](x, xp, sm, fg, k, GB=TRITON_PLANES_GB, PDL=pdl, num_warps=4)
            planes_made[0] = True
        if alone != "planes":
            kern[grid](w, s, xp, sm, fg, y, n, k, k // 8, OUT_BF16=out_bf16, ASM=asm, **dependent)

    info = {}
    if not interp and alone != "planes":  # (planes alone: nothing to tune)
        import time

        sdt = torch.bfloat16 if out_bf16 else torch.float16
        t0 = time.perf_counter()
        w = torch.zeros((n, k // 8), dtype=torch.int32, device=be.dev)
        s = torch.ones(lowbit_scale_shape(case), dtype=sdt, device=be.dev)
        y = torch.empty((b, n), dtype=sdt, device=be.dev)
        launch(w, s, torch.randn((b, k), device=be.dev).to(sdt), y)
        be.synchronize()
        best = kern.best_config
        info = {"autotune_s": round(time.perf_counter() - t0, 3),
                "config": {**best.kwargs, "num_warps": best.num_warps, "pdl": pdl},
                # the waves of the grid (session 33: 1.72 / 2.72 at the registered shapes in an sm_90
                # compile — a last wave 72 % full)
                **be.occupancy(gemv_lowbit_dp4a, (w, s, xp, sm, fg, y, n, k, k // 8),
                               {"OUT_BF16": out_bf16, "ASM": asm, "PDL": pdl,
                                "PREF": dependent.get("PREF", 0), "EVEN_K": k % best.kwargs["BK"] == 0,
                                **best.all_kwargs()},
                               triton.cdiv(n, best.kwargs["BN"]) * b)}

    def run(ins, outs):
        launch(ins["qweight"].view(torch.int32), _tv(ins["scales"], case), _tv(ins["x"], case),
               _tv(outs["y"], case))

    run.info = info
    return run


@kernel("gemv_lowbit", "triton", "fused_dp4a")
def triton_fused_dp4a(be, case):
    """w4a16 on integer dot products (``triton_dp4a``): CUDA's fused_dp4a scheme in Triton, x's
    planes made by a small first kernel in each call."""
    return triton_dp4a(be, case)


@kernel("gemv_lowbit", "triton", "fused_vec")
def triton_fused_vec(be, case):
    """Batch 1 (both formats): gemv_lowbit_row — [BN, BK·BITS/32] int32 word tiles (16-byte loads),
    x read as pairs of 16-bit values in the words' layout, each field one LOP3 + FADD + FFMA.
    Batch > 1, w4a16: gemv_lowbit_dot — nibble pairs to exact 16-bit magic values, tensor-core dot
    products against the batch padded to 16 columns, the magic offset removed through Σx per
    group; w8a16: gemv_lowbit_vec (the same word tiles with a batch axis). Each autotuned over
    its configs per (N, K, B)."""
    _, _, b, bits = _dims(case)
    if b == 1:
        return triton_row(be, case)
    return triton_dot(be, case) if bits == 4 else _triton_vec(be, case)


# ---- webgpu ---------------------------------------------------------------------------------

_WGSL = source(__file__, "gemv_lowbit.wgsl")

#: (U, RPT, TEAM, TEAMS) of the WGSL GEMV per shape
_WGSL_SHAPES = {"fused": (1, 1, 64, 1), "fused_vec": (4, 4, 32, 2), "dense": (4, 1, 64, 1)}


def _webgpu(be, case, variant: str, shape: tuple[int, int, int, int] | None = None):
    n, k, b, bits = _dims(case)
    if n * k >= 2**32:
        raise Unsupported("WGSL indexes with u32: N·K >= 2^32")
    acc = be.empty((b * n,), np.float32)
    dummy = be.empty((4,), np.uint32)
    prm = np.array([n, k, b * n, 0], np.uint32)

    def gemv(name: str, wbits: int):
        u, rpt, team, teams = shape or _WGSL_SHAPES[name]
        defs = {"BITS": wbits, "NB": b, "U": u, "RPT": rpt, "TEAM": team, "WG": team * teams, "DT": _dt(case)}
        prog = be.compile(_WGSL, "gemv_lowbit", defs)
        pack = be.compile(_WGSL, "gemv_pack", defs)
        pgrid = be.grid_2d(cdiv(cdiv(b * n, 2), team * teams))
        return prog, be.grid_2d(cdiv(n, teams * rpt)), pack, pgrid, defs

    if variant == "dequant_then_gemv":
        prog, grid, pack, pgrid, defs = gemv("dense", 16)
        dq = be.compile(_WGSL, "dequant_lowbit", {**defs, "BITS": bits})
        wd = be.empty((n, k), np.uint16)  # fp16/bf16 words
        dgrid = be.grid_2d(cdiv(n * k // 2, defs["WG"]))

        def run(ins, outs):
            be.launch(dq, dgrid, None, [ins["qweight"], ins["scales"], ins["x"], acc, outs["y"], wd, prm])
            be.launch(prog, grid, None, [wd, ins["scales"], ins["x"], acc, outs["y"], dummy, prm])
            be.launch(pack, pgrid, None, [wd, ins["scales"], ins["x"], acc, outs["y"], dummy, prm])

        return run
    prog, grid, pack, pgrid, _ = gemv(variant, bits)

    def run(ins, outs):
        args = [ins["qweight"], ins["scales"], ins["x"], acc, outs["y"], dummy, prm]
        be.launch(prog, grid, None, args)
        be.launch(pack, pgrid, None, args)

    return run


_WGSL_DP4A = source(__file__, "gemv_lowbit_dp4a.wgsl")
#: fused_dp4a on WebGPU: rows per team of 32, teams per workgroup, workgroups per compute unit
#: (128 units assumed where the adapter does not say). H200 (Vulkan), w4a16 bf16 batch 1, % of the
#: ceiling at K=N=16384 / N=28672 (probes-20261204-session23/s23g): (4, 16, 1) 39.6 / 41.4, (2, 16,
#: 1) 33.5 / 37.0, (4, 8, 2) 29.7 / 30.0, (1, 16, 2) 24.1 / 25.9, (2, 8, 4) 22.1 / 21.5, (2, 8, 2)
#: 7.4 / 8.8 (the first registered shape); fused_vec 22.4 / 37.3 in the same probe. (Those rows
#: were sampled while the SM clock climbed from idle, each faster for its place in the run, before
#: the warm-up waited for the clock: see suite.timing.ClockWait.) Fourth and fifth fields: SG (team
#: sums through subgroupShuffleXor, where the adapter has "subgroup") and PF (weights a step
#: ahead). Session 32, H100 (Vulkan), clocks waited for, GB/s at K=N=16384 / N=28672
#: (results/nvidia-h100-80gb-hbm3/probes-20261206-session32/s32b): (4, 16, 1, 1, 0) 1596 / 1699,
#: (4, 16, 1, 1, 1) 1580 / 1709, (2, 32, 1, 1, 1) 1585 / 1689, (8, 16, 1, 1, 1) 1512 / 1714; without
#: subgroups (4, 16, 1) 1483 / 1538, (2, 32, 1, 0, 1) 1467 / 1600, (8, 16, 1, 0, 0) 1459 / 1634 —
#: SG +8-10 %, PF nothing. The first shape where the adapter has subgroups, else the second.
#: Session 33, H100 (132 SMs), the grid sized for 128 / 132 / 264 / 66 units: 1596 / 1614 / 1575 /
#: 1271 and 1756 / 1734 / 1735 / 1393 GB/s (probes-20261206-session33/s33a): the 128 assumed costs
#: nothing on a 132-unit part (the probe's `units` argument removed).
#: Session 41: SG 2, a team per subgroup summing by subgroupAdd, each team its own trip count, no
#: barrier in the tile loop; ST 1 (6th field, SG 2 and an even RPT), the last chunk stores y itself
#: instead of a gemv_pack dispatch. Session 42, H200, 20 interleaved rounds against (4, 16, 1, 1, 0)
#: at K=N=16384 / K=8192 N=28672 (results/nvidia-h200/probes-20261207-session42/s41w): (8, 16, 1, 2,
#: 0, 1) 1.101 / 1.266 × its speed, (4, 16, 1, 2, 0, 1) 1.083 / 1.222 ×, SG 2 without ST 0.95–1.09 ×
#: (TEAMS 32 the best, 1.026 / 1.085 ×); at K = 8192 one chunk, so ST removes the only other dispatch.
#: LP 1 (7th field): one dispatch walks the chunks. Session 42, H100, 20 rounds against (8, 16, 1, 2,
#: 0, 1) (results/nvidia-h100-80gb-hbm3/probes-20261207-session42/s42w): (4, 32, 1, 2, 0, 1, 1)
#: 1.267 / 1.043 × its speed (69.3 / 71.2 % of that card's ceiling), (8, 16, 1, 2, 0, 1, 1) 1.260 /
#: 1.006 ×, (4, 32, 1, 2, 0, 1) 1.029 / 1.046 ×; 32 teams with 8+ rows or PF 1 lost (to 2.7 × the time).
#: RL (8th field): the weights repacked per tile (1) or K-major (2). Session 45, H100, 20 rounds
#: against (4, 32, 1, 2, 0, 1, 1) (results/nvidia-h100-80gb-hbm3/probes-20261207-session45/): RL 1
#: 1.025 / 1.045 × its speed (s45a) and 1.028 / 1.033 × (s45b, 71.6 / 73.7 % of that card's
#: ceiling), RL 2 1.039 / 1.021 ×; the weight stream alone (DIAG 2) reads 80.4 / 78.9 % plain,
#: 81.5 / 82.2 RL 1, 85.0 / 83.7 RL 2, and without x's conversion (DIAG 1) the kernel reads 74 %.
#: x's conversion by four invocations per unit instead of one (s45d): 1.045 / 1.016 × at RL 1;
#: around the result (s45e) 6-8 rows per team at 16-28 teams 1.016-1.167 × its time. Harness rows
#: 74.6 / 76.6 % of the H100's ceiling (1.26 / 1.30 × tinygemm). Session 46, H200
#: (results/nvidia-h200/probes-20261207-session46/): harness rows 66.2 / 66.8 % (1.60 / 1.63 ×
#: tinygemm); XT (words of the first step read before x's conversion) 0.97-0.99 × its speed,
#: removed. Session 47 (H100): SP (half the workgroup converting x in two passes while the other
#: half's teams loaded their first steps) 1.12-1.16 × this form's time, removed.
WGSL_DP4A_SHAPE = (4, 32, 1, 2, 0, 1, 1, 1)
WGSL_DP4A_SHAPE_NO_SUBGROUP = (4, 16, 1)
#: The kernel's SG (team sums through subgroup shuffles, 1, or subgroupAdd, 2) and PF (weights
#: loaded one step ahead) options as WGSL text: SG_ARG, SG_SIZE, XOR and ADD name subgroup
#: built-ins only where SG is 1 or 2
_WGSL_SG_TEXT = {0: {"SG_ARG": "", "SG_SIZE": "32u", "XOR": "v", "ADD": "v"},
                 1: {"SG_ARG": ", @builtin(subgroup_size) sg_size: u32", "SG_SIZE": "sg_size",
                     "XOR": "subgroupShuffleXor(v, m)", "ADD": "subgroupAdd(v)"}}


def wgsl_rows_layout(w, sc, n: int, k: int, rpt: int, bw: int, rl: int = 1):
    """gemv_lowbit_dp4a.wgsl's RL layouts from the format's qweight [N, K/2] (uint8) and scales
    [N, K/128] (16-bit words), NumPy: RL 1, the words (16-byte units of 32 k) as [tile of rpt
    rows][unit / bw][row][unit % bw] and the scales as [tile][group][row]; RL 2, K-major,
    [unit / bw][tile][row][unit % bw] and [group][tile][row]. Rows past N are zeros. The same
    bytes, in the order the teams read them."""
    tiles, upr = cdiv(n, rpt), k // 32
    w, sc = (np.concatenate([a, np.zeros((tiles * rpt - n,) + a.shape[1:], a.dtype)]) for a in (w, sc))
    order = (0, 2, 1, 3) if rl == 1 else (2, 0, 1, 3)
    wt = w.reshape(tiles, rpt, upr // bw, bw * 16).transpose(order)
    st = sc.reshape(tiles, rpt, -1).transpose(order[:3])
    return np.ascontiguousarray(wt).reshape(-1), np.ascontiguousarray(st)


def webgpu_dp4a(be, case, shape: tuple[int, ...] | None = None, cu: int | None = None, diag: int = 0):
    """gemv_lowbit_dp4a.wgsl (dot4U8Packed / dot4I8Packed), one dispatch per chunk of K that fits
    the adapter's workgroup storage (LP 1: one dispatch for all), then (ST 0) gemv_lowbit.wgsl's
    gemv_pack (fp32 sums → 16-bit y). ``shape``: (rows per team, teams, workgroups per compute
    unit[, SG[, PF[, ST[, LP[, RL]]]]]]) instead of the registered one (WGSL_DP4A_SHAPE, or
    WGSL_DP4A_SHAPE_NO_SUBGROUP where the adapter lacks the "subgroup" feature that SG 1 and 2
    need); RL 1 or 2 reads the weights repacked by ``wgsl_rows_layout`` (on the first launch with each
    input set, outside the timed calls once cached, as fused_packed's are). The persistent grid is
    sized for the adapter's compute units (WebGPU reports none: 128 assumed). ``diag``: the
    kernel's DIAG (a probe's diagnostic form, wrong by design)."""
    n, k, b = _dp4a_dims(case)
    shape = shape or (WGSL_DP4A_SHAPE if "subgroup" in be.features else WGSL_DP4A_SHAPE_NO_SUBGROUP)
    rpt, teams, per_sm, sg, pf, st, lp, rl = (*shape, 0, 0, 0, 0, 0)[:8]
    if cdiv(n, rpt) * rpt * k >= 2**32:
        raise Unsupported("WGSL indexes with u32: N·K >= 2^32")
    if sg and "subgroup" not in be.features:
        raise Unsupported(f"gemv_lowbit_dp4a SG {sg}: the adapter has no \"subgroup\" feature")
    if st and (sg != 2 or rpt % 2):
        raise ValueError(f"gemv_lowbit_dp4a ST 1 needs SG 2 and an even RPT, not {shape}")
    st = int(bool(st) and (n % 2 == 0 or b == 1))  # an odd N at batch > 1: y's pairs span two teams
    teams = max(1, min(teams, be.limits["max-compute-invocations-per-workgroup"] // 32))
    # the chunk's planes get what amx, red and smq (4 bytes per invocation each) leave
    cu = cu or dp4a_units(k, b, be.limits["max-compute-workgroup-storage-size"] - 3 * 4 * 32 * teams - 64)
    bw = math.gcd(k // 32, 32)  # RL's block: 32 units (a team's lanes) where K allows
    defs = {"NB": b, "DT": _dt(case), "RPT": rpt, "TEAMS": teams, "CU": cu, "SG": sg, "PF": pf, "ST": st,
            "LP": lp, "RL": rl, "BW": bw, "DIAG": diag}
    prog = be.compile(_WGSL_DP4A, "gemv_lowbit_dp4a", {**defs, **_WGSL_SG_TEXT[min(sg, 1)]})
    grid = be.grid_2d(max(1, min((be.device.compute_units or 128) * per_sm, cdiv(cdiv(n, rpt), teams))))
    acc = be.empty((b * n,), np.float32)
    chunks = k // 32 // cu
    prms = [np.array([n, k, c, chunks], np.uint32) for c in range(1 if lp else chunks)]
    if not st:  # gemv_pack rounds the fp32 sums to y (ST 1: the last chunk stored y itself)
        pack = be.compile(_WGSL, "gemv_pack", {"BITS": 4, "NB": b, "U": 4, "RPT": 1, "TEAM": 32, "WG": 64,
                                               "DT": _dt(case)})
        pgrid = be.grid_2d(cdiv(cdiv(b * n, 2), 64))
        dummy = be.empty((4,), np.uint32)
        pprm = np.array([n, k, b * n, 0], np.uint32)

    def rows(ins):
        w, s = wgsl_rows_layout(*(be.download(ins[a]) for a in ("qweight", "scales")), n, k, rpt, bw, rl)
        return [be.upload(w), be.upload(s)]

    weights = _per_input_set(rows) if rl else lambda ins: [ins["qweight"], ins["scales"]]

    def run(ins, outs):
        bufs = [*weights(ins), ins["x"], acc, outs["y"]]
        for prm in prms:
            be.launch(prog, grid, None, [*bufs, prm])
        if not st:
            be.launch(pack, pgrid, None, [*bufs, dummy, pprm])

    return run


@kernel("gemv_lowbit", "webgpu", "fused_dp4a")
def webgpu_fused_dp4a(be, case):
    """CUDA's fused_dp4a in WGSL (``webgpu_dp4a``): x's byte planes in workgroup memory, packed
    4×8-bit dot products (core WGSL), persistent workgroups; where the adapter has subgroups, a
    team per subgroup summing by subgroupAdd, K's chunks walked in one dispatch and y stored by the
    last chunk (no gemv_pack dispatch); without, a dispatch per chunk and gemv_pack."""
    return webgpu_dp4a(be, case)


@kernel("gemv_lowbit", "webgpu", "dequant_then_gemv")
def webgpu_dequant_then_gemv(be, case):
    """dequant_lowbit (invocation per dense word) → dense fp16 W → gemv_lowbit BITS 16 (64
    invocations per row, 16-byte loads) → gemv_pack (fp32 sums → fp16 words)."""
    return _webgpu(be, case, "dequant_then_gemv")


@kernel("gemv_lowbit", "webgpu", "fused")
def webgpu_fused(be, case):
    """64 invocations per row, one packed word per load unpacked in registers, workgroup-memory
    tree; gemv_pack rounds the fp32 sums to fp16 words."""
    return _webgpu(be, case, "fused")


@kernel("gemv_lowbit", "webgpu", "fused_vec")
def webgpu_fused_vec(be, case, shape: tuple[int, int, int, int] | None = None):
    """Team of 32 invocations per 4 rows, one 16-byte (vec4<u32>) packed load per row per step,
    workgroup-memory tree (core WGSL has no subgroups); gemv_pack as in fused. ``shape`` (U, RPT,
    TEAM, TEAMS) instead of the registered one: probes."""
    return _webgpu(be, case, "fused_vec", shape)
