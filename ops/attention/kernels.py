"""attention kernels: O = softmax(Q·Kᵀ/√D)·V over [B, H, S, D], one registration per (backend, variant).

The ladder, the same algorithm in each dialect (entry names shared by attention.cu / .cl / .wgsl):
``naive`` (scores Q·Kᵀ into an S×S fp32 scratch in device memory, a softmax kernel over its rows,
a P·V kernel: three launches, heads in chunks so the scratch stays ≤ ``NAIVE_SCRATCH`` bytes),
``fused_rows`` (one block of query rows per workgroup, all of its scores over the S keys kept in
shared/local/workgroup memory: K and V read once per row block; rows per block from the device's
local-memory size, Unsupported when one row's S scores do not fit), ``flash`` (tiled over K/V
with an online softmax: running max, running sum and a rescaled accumulator; the S×S matrix never
reaches device memory). Tensor cores where the backend reaches them: Triton ``flash`` (tl.dot),
CUDA ``flash`` on fp16/bf16 (mma.sync m16n8k16, FA2 layout; fp32 cases take the SIMT kernel).
OpenCL C and WGSL are SIMT kernels with fp32 math on 16-bit storage (converted in-kernel with core
built-ins: vload_half / unpack2x16float, bf16 as the top half of an fp32 word). torch: ``sdpa``
(F.scaled_dot_product_attention; the SDPA backend the dispatcher picked is recorded in the row).

Scores are kept in the log2 domain everywhere (qk_scale = log2(e)/√D, exp2), causal masks are
top-left aligned (query i sees keys j ≤ i).
"""

from __future__ import annotations

import math

import numpy as np

from backends.base import Unsupported
from ops.attention.spec import causal
from suite.registry import kernel, source

LOG2E = 1.4426950408889634
#: the naive variant's S×S fp32 scratch is filled for as many heads at a time as fit in this
NAIVE_SCRATCH = 1 << 30
#: head dims the kernels are built for (power-of-two tiles, Triton's tl.arange)
HEAD_DIMS = (64, 128)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _dims(case) -> tuple[int, int, int, int]:
    if case["d"] not in HEAD_DIMS:
        raise Unsupported(f"head dim {case['d']}: the kernels are built for D in {HEAD_DIMS}")
    return case["b"], case["h"], case["s"], case["d"]


def _qk_scale(case) -> np.float32:
    return np.float32(LOG2E / math.sqrt(case["d"]))


def _torch_view(t, dtype: str):
    import torch

    return t.view(torch.bfloat16) if dtype == "bf16" else t


# ---- torch ----------------------------------------------------------------------------------


def sdpa_backend(q, k, v, is_causal: bool) -> str:
    """Name of the SDPA backend PyTorch's dispatcher picks for these tensors (flash, cudnn,
    efficient, math...): ``torch._fused_sdp_choice`` is the function the dispatcher itself calls,
    so this needs no run and no profiler; "unknown" where a torch build lacks it."""
    import torch
    from torch.nn.attention import SDPBackend

    try:
        choice = torch._fused_sdp_choice(q, k, v, None, 0.0, is_causal)
        return SDPBackend(int(choice)).name.lower().replace("_attention", "")
    except Exception as e:  # noqa: BLE001 - a private function: report, never fail the row
        return f"unknown ({type(e).__name__})"


@kernel("attention", "torch", "sdpa")
def torch_sdpa(be, case):
    """F.scaled_dot_product_attention(Q, K, V, is_causal) and a copy into O (SDPA has no out=;
    the copy moves 2·B·H·S·D·itemsize bytes, small beside the S² work). The row's kernel_info
    names the SDPA backend the dispatcher chose for the case (flash, cudnn, efficient, math)."""
    import torch
    import torch.nn.functional as F

    b, h, s, d = _dims(case)
    is_causal = causal(case)
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[case.dtype]
    probe = torch.empty((b, h, s, d), dtype=dt, device=be.dev)

    def run(ins, outs):
        q, k, v = (_torch_view(ins[n], case.dtype) for n in ("Q", "K", "V"))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=is_causal)
        _torch_view(outs["O"], case.dtype).copy_(o)

    run.info = {"sdpa_backend": sdpa_backend(probe, probe, probe, is_causal)}
    return run


# ---- opencl ---------------------------------------------------------------------------------

_CL = source(__file__, "attention.cl")
#: storage dtype → the DT define of attention.cl / attention.cu / attention.wgsl
_DT = {"fp32": 0, "fp16": 1, "bf16": 2}
#: flash tiles (BM, BN, TM, TN) in order of preference; the first whose local memory fits is used
_FLASH_TILES = [(64, 32, 4, 4), (32, 32, 4, 4), (32, 16, 4, 2), (16, 16, 2, 2)]
#: WGSL's: 4×2 score tiles per invocation first, then 2×2. NVIDIA's Vulkan compiler (H200, 580
#: driver; D = 64 fp32, probes-20261202-session12/6de880c, scalar rows) ran 32×32×2×2 at 12.5
#: TFLOP/s and 64×32×2×2 at 12.2, against 10.0 for the 64×32×4×4 that NVIDIA's OpenCL runs at
#: 19.4. With vec4 rows and partial maxima (probes-20261202-session14/02d5054) 64×32×4×2 ran at
#: 16.0 / 15.5 TFLOP/s (non-causal / causal) against 15.0 / 15.1 for 32×32×2×2: four score rows per
#: invocation halve the workgroup-memory reads of the score loop per FMA (each Q vec4 is a
#: broadcast, each K vec4 is not), while 32×32×4×2 (14.6 / 14.3), 64×32×8×2 (10.8 / 11.0),
#: 64×32×4×4 (11.3 / 11.6), 32×64×2×4 (12.6 / 11.5) and 64×16×4×2 (11.5 / 11.2) lost. Devices with
#: less workgroup memory or fewer invocations fall through (the H200 at D = 128, 48 KiB:
#: 32×32×2×2; lavapipe's 32 KiB: 32×32×2×2 at D = 64, 32×16×4×2 at D = 128).
_WGSL_FLASH_TILES = [(64, 32, 4, 2), (32, 32, 2, 2), (64, 32, 2, 2)] + _FLASH_TILES
#: softmax work-group of the naive variant
_NAIVE_WG = 64


def _flash_local_bytes(hd: int, bm: int, bn: int, pad: int = 1, nx: int = 0) -> int:
    """Bytes of local memory of attention_flash (.cl/.wgsl): Q tile, K/V tile and the BM×BN score
    tile, rows padded by ``pad`` floats (1 in OpenCL C, 4 for WGSL's vec4 rows), and with ``nx``
    the BM×nx partial row maxima (WGSL)."""
    return 4 * ((bm + bn) * (hd + pad) + bm * (bn + pad) + (bm * (nx + pad) if nx else 0))


def flash_tiles(hd: int, local_bytes: int, max_threads: int, tiles=_FLASH_TILES,
                pad: int = 1, partial_max: bool = False) -> tuple[int, int, int, int]:
    """The first of ``tiles`` (BM, BN, TM, TN) that fits the device's local memory (rows padded by
    ``pad`` floats; ``partial_max``: with WGSL's BM × BN/TN partial row maxima) and work-group size,
    with ≥ 4 accumulator columns per thread (HD·TN/BN ≥ 4)."""
    for bm, bn, tm, tn in tiles:
        nt = (bm // tm) * (bn // tn)
        need = _flash_local_bytes(hd, bm, bn, pad, bn // tn if partial_max else 0)
        if need <= local_bytes and nt <= max_threads and hd * tn // bn >= 4:
            return bm, bn, tm, tn
    raise Unsupported(f"flash: no tile fits {local_bytes} bytes of local memory at D = {hd} "
                      f"(needs {_flash_local_bytes(hd, 16, 16, pad)})")


def fused_rows_count(s: int, hd: int, local_bytes: int) -> int:
    """Rows per work-group of fused_rows: the largest power of two ≤ 8 whose scores (ROWS·S floats),
    Q rows and reduction scratch fit in ``local_bytes``; Unsupported when not even one row does."""
    rows = 8
    while rows and 4 * (rows * (s + hd) + hd) > local_bytes:
        rows //= 2
    if not rows:
        raise Unsupported(f"fused_rows keeps a row's {s} scores on chip: {4 * (s + 2 * hd)} bytes of "
                          f"local memory needed, the device has {local_bytes}")
    return rows


def _naive_chunk(b: int, h: int, s: int) -> int:
    return max(1, min(b * h, NAIVE_SCRATCH // (4 * s * s)))


def _cl_common(be, case) -> dict:
    _dims(case)
    if 4 * case["b"] * case["h"] * case["s"] * case["d"] >= 2**31 * 4:
        raise Unsupported("attention.cl takes int sizes")
    return {"DT": _DT[case.dtype], "HD": case["d"], "CAUSAL": int(causal(case))}


def _naive_c(be, case, path, defs: dict, max_heads: int | None = None):
    """``run`` of attention.cu / attention.cl ``naive`` (both dialects launch alike): per chunk
    of heads (≤ 1 GiB of fp32 scores; ≤ ``max_heads``: CUDA's grid z limit) the scores, softmax
    and P·V kernels."""
    b, h, s, d = _dims(case)
    ks, kx, kp = (be.compile(path, e, defs) for e in ("attention_scores", "attention_softmax",
                                                       "attention_pv"))
    nz = min(_naive_chunk(b, h, s), max_heads or b * h)
    scratch = be.empty((nz * s * s,), np.float32)
    qk, sn = _qk_scale(case), np.int32(s)

    def run(ins, outs):
        for z0 in range(0, b * h, nz):
            z = min(nz, b * h - z0)
            be.launch(ks, (cdiv(s, 16), cdiv(s, 16), z), (16, 16, 1), [ins["Q"], ins["K"], scratch, sn,
                                                                        np.int32(z0), qk])
            be.launch(kx, (s, z), (_NAIVE_WG, 1), [scratch, sn])
            be.launch(kp, (s, z), (d, 1), [scratch, ins["V"], outs["O"], sn, np.int32(z0)])

    return run


@kernel("attention", "opencl", "naive")
def opencl_naive(be, case):
    """Three kernels: scores (16×16 work-groups, one score each) into an fp32 S×S scratch per head,
    a softmax work-group per row, a P·V work-group of D per row (heads in chunks: ≤ 1 GiB scratch)."""
    return _naive_c(be, case, _CL, {**_cl_common(be, case), "WG": _NAIVE_WG})


def _cl_local(be) -> int:
    return int(be.cl_device.local_mem_size)


@kernel("attention", "opencl", "fused_rows")
def opencl_fused_rows(be, case):
    """Work-group of D work-items per block of ROWS query rows (ROWS ≤ 8 from the device's local
    memory), the block's S scores per row in __local memory: K and V read once per block."""
    b, h, s, d = _dims(case)
    rows = fused_rows_count(s, d, _cl_local(be))
    k = be.compile(_CL, "attention_fused_rows", {**_cl_common(be, case), "SEQ": s, "ROWS": rows})
    qk, sn = _qk_scale(case), np.int32(s)

    def run(ins, outs):
        be.launch(k, (cdiv(s, rows), b * h), (d, 1), [ins["Q"], ins["K"], ins["V"], outs["O"], sn, qk])

    run.info = {"rows": rows}
    return run


@kernel("attention", "opencl", "flash")
def opencl_flash(be, case):
    """BM query rows per work-group, K/V tiles of BN keys through __local memory, TM×TN register
    tiles of scores and TM×(D·TN/BN) accumulators per work-item, online softmax (tiles from the
    device's local memory and work-group size: 64×32 or 32×32 on GPUs with 48 KiB)."""
    b, h, s, d = _dims(case)
    bm, bn, tm, tn = flash_tiles(d, _cl_local(be), int(be.cl_device.max_work_group_size))
    k = be.compile(_CL, "attention_flash", {**_cl_common(be, case), "BM": bm, "BN": bn, "TM": tm, "TN": tn})
    nt = (bm // tm) * (bn // tn)
    qk, sn = _qk_scale(case), np.int32(s)

    grid = (b * h, cdiv(s, bm)) if causal(case) else (cdiv(s, bm), b * h)  # causal: longest first

    def run(ins, outs):
        be.launch(k, grid, (nt, 1), [ins["Q"], ins["K"], ins["V"], outs["O"], sn, qk])

    run.info = {"tile": {"BM": bm, "BN": bn, "TM": tm, "TN": tn}}
    return run


# ---- triton ---------------------------------------------------------------------------------

#: autotune configs (BLOCK_M, BLOCK_N, num_warps, num_stages) per (head dim, tensor cores or not);
#: the winner and the tuning time land in the row (kernel_info). (128, 64, 8, 3) at D64 won at
#: B16 H16 S2048 (0.95 × SDPA, run 37203e; the best of the first five was 0.895 ×). A lazy
#: rescale (raise the running max only when a block exceeds it by 2^8) was autotuned beside the
#: eager one in that run and lost on all three bf16 cells: removed (commit 57b788d has it); tried
#: again in session 33 as a tile-wide test (one branch per step; commit ea9d220), D128 non-causal on
#: an H100: 418-463 TFLOP/s against 584 for (128, 64, 8, 3, 2) in the same probe (s33a): removed. 256-row
#: tiles on four warpgroups (256×64, 16 warps, 3 stages; 256×128, 2 stages; 128 registers, no
#: spills) won the non-causal D128 autotune in run e13834 at the same 494 TFLOP/s as before (0.83 ×
#: SDPA there), causal kept 128×128: no gain for twice the tuning time; removed (commit ddc7e6b).
#: Session 14 (probes-20261202-session14/98474ac, one config each): half of the unmasked blocks'
#: exp2 on the FMA pipe (a cubic on the odd columns, MUFU.EX2 on the even ones; register-local
#: split/join, 100 instead of 132 MUFU.EX2 in the sm_90 SASS, 255 registers) 457 / 427 TFLOP/s
#: against 520 / 498 at D128 non-causal / causal, 332 against 418 at D64: removed (commit 98474ac).
#: Session 18 (probes-20261204-session18/s18a, commit 63191a8): two programs per SM at D128, so one's
#: exponentials could run under the other's tensor-core work — 128×64 tiles on 4 warps, 2 stages
#: (255 registers, 96 KiB of shared memory) 341 / 335 TFLOP/s, on 8 warps capped at 128 registers
#: (88 bytes of stack) 447 / 407, against 513 / 501 for (128, 64, 8, 3) in the same probe
#: (non-causal / causal): not added. Not probed: P by ex2.approx on bf16x2 / f16x2 pairs (inline
#: PTX, for half the MUFU issues) — ptxas for sm_90 splits each into two MUFU.EX2 (132 in the SASS
#: of either form, Triton 3.6 compiled on the CPU), so it cannot save any.
_TRITON_CONFIGS = {
    (64, True): [(128, 64, 4, 3), (128, 128, 8, 3), (128, 64, 4, 4), (128, 128, 4, 2), (64, 64, 4, 3),
                 (128, 64, 8, 3), (128, 128, 8, 4)],
    (128, True): [(128, 64, 8, 3), (128, 128, 8, 2), (128, 64, 4, 3), (128, 32, 4, 4), (64, 64, 4, 3),
                  (128, 128, 8, 3), (128, 64, 8, 4), (128, 64, 8, 3, 2), (128, 64, 8, 4, 2)],
    # (a shape over the shared memory is skipped)
    (64, False): [(64, 32, 4, 2), (64, 64, 4, 2), (128, 32, 8, 2), (32, 32, 4, 2)],
    (128, False): [(64, 32, 4, 2), (32, 32, 4, 2), (64, 64, 8, 2), (64, 16, 4, 2)],
}
#: below this many flops no autotuning (test shapes): the first config that fits is used
_TRITON_TUNE_MIN = 2**30
#: the interpreter's block shape (its cost is per block operation: large blocks, BN < BM so the
#: causal diagonal spans two key blocks)
_TRITON_INTERPRET = (64, 32)


def _torch_dtype(case):
    import torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[case.dtype]


@kernel("attention", "triton", "flash")
def triton_flash(be, case, cfgs=None, wave: int | None = None, tail: bool = True):
    """FA2-style forward: BLOCK_M query rows per program, K/V blocks streamed with an online
    softmax (exp2, log2 e folded into the scale), tl.dot on tensor cores for fp16/bf16 (fp32:
    "ieee"); causal: unmasked blocks left of the diagonal, then the diagonal with the mask;
    non-causal: whole blocks, then the masked tail. Autotuned over 4–9 (BLOCK_M, BLOCK_N,
    num_warps, num_stages[, HALVES]) per head dim on compiled devices (``cfgs``: those instead of
    _TRITON_CONFIGS; HALVES 2: two query halves of BLOCK_M rows per program, their steps
    interleaved — in the interpreter the first config's HALVES is taken at its own block shape).

    Non-causal, where the jobs (programs of HALVES·BLOCK_M rows) fill whole waves of the GPU and
    at most half of one more — a wave: the SMs times the programs one SM holds (the compiled
    kernel's registers, shared memory and threads; ``wave`` instead, which also turns this on in
    the interpreter) — the last partial wave's rows are split over the keys too (``tail``; see
    attention_triton.py: two more launches, fp32 partials in scratch)."""
    import time

    import torch
    import triton

    from ops.attention.attention_triton import attention_flash, attention_flash_merge, attention_flash_part

    def halves(c) -> int:
        return c[4] if len(c) > 4 else 1

    b, h, s, d = _dims(case)
    is_causal = causal(case)
    prec = "ieee"
    qk = float(_qk_scale(case))
    interp = be.device.mode == "interpret"
    if interp:
        bm, bn = _TRITON_INTERPRET
        kern, meta = attention_flash, {"BLOCK_M": bm, "BLOCK_N": bn, "UPCAST": True,
                                       "HALVES": halves(cfgs[0]) if cfgs else 1}
        cfg, opts = dict(meta), {}
    else:
        from backends.triton import fitting

        item = 4 if case.dtype == "fp32" else 2  # `halves` Q tiles, `stages` K and V tiles
        cfgs = cfgs or fitting(_TRITON_CONFIGS[(d, case.dtype != "fp32")],
                               lambda c: (halves(c) * c[0] + 2 * c[3] * c[1]) * d * item, be.smem_per_block())
        if 4 * b * h * s * s * d < _TRITON_TUNE_MIN:
            cfgs = cfgs[:1]
        kern = triton.autotune([triton.Config({"BLOCK_M": c[0], "BLOCK_N": c[1], "HALVES": halves(c)},
                                              num_warps=c[2], num_stages=c[3]) for c in cfgs],
                               key=["S"])(attention_flash)
        meta = {}
    common = {"HEAD_DIM": d, "PRECISION": prec}

    def jobs_of(c) -> int:
        return b * h * cdiv(s, c["HALVES"] * c["BLOCK_M"])

    def launch(q, k, v, o, jobs=None):  # the first `jobs` jobs (all: None)
        kern[lambda mt: (jobs or jobs_of(mt),)](q, k, v, o, s, qk, 0, CAUSAL=is_causal, **common, **meta)

    info = {}
    if not interp:  # tune once here on scratch tensors of the case's shape (out of the timed runs)
        x = torch.randn((b, h, s, d), device=be.dev).to(_torch_dtype(case))
        t0 = time.perf_counter()
        launch(x, x, x, torch.empty_like(x))
        be.synchronize()
        best = kern.best_config
        cfg, opts = best.kwargs, {"num_warps": best.num_warps, "num_stages": best.num_stages}
        info = {"autotune_s": round(time.perf_counter() - t0, 3), "config": {**cfg, **opts}}
        if wave is None:  # the grid's waves, for the row (no occupancy known: no split, one launch)
            info.update(be.occupancy(attention_flash, (x, x, x, x, s, qk, 0),
                                     {"CAUSAL": is_causal, **common, **best.all_kwargs()}, jobs_of(cfg)))
            wave = info.get("wave")
        del x

    jobs = jobs_of(cfg)
    rest = jobs % wave if wave else 0
    if not (tail and not is_causal and wave and jobs > wave and 0 < rest <= wave // 2):
        def run(ins, outs):
            q, k, v = (_torch_view(ins[n], case.dtype) for n in ("Q", "K", "V"))
            launch(q, k, v, _torch_view(outs["O"], case.dtype))

        run.info = info
        return run

    # split tail: whole waves as above, the last `rest` jobs' rows in BLOCK_M-row blocks × key chunks
    rows = cfg["HALVES"] * cfg["BLOCK_M"]
    tile = {"BLOCK_M": cfg["BLOCK_M"], "ROWS": rows, "UPCAST": interp}
    blocks = rest * rows // cfg["BLOCK_M"]
    bn = cfg["BLOCK_N"]
    chunk = cdiv(cdiv(s, min(cdiv(wave, blocks), cdiv(s, bn))), bn) * bn  # keys per chunk
    chunks = cdiv(s, chunk)
    part = torch.empty((chunks, rest * rows, d), dtype=torch.float32, device=be.dev)
    ml = torch.empty((chunks, rest * rows, 2), dtype=torch.float32, device=be.dev)
    first = jobs - rest
    info["tail"] = {"wave": wave, "jobs": rest, "blocks": blocks, "chunks": chunks, "keys_per_chunk": chunk}

    def run_split(ins, outs):
        q, k, v = (_torch_view(ins[n], case.dtype) for n in ("Q", "K", "V"))
        o = _torch_view(outs["O"], case.dtype)
        launch(q, k, v, o, first)
        attention_flash_part[(blocks, chunks)](q, k, v, part, ml, s, qk, first, chunk, rest * rows,
                                               BLOCK_N=bn, **common, **tile, **opts)
        attention_flash_merge[(blocks,)](part, ml, o, s, first, chunks, rest * rows, HEAD_DIM=d, **tile,
                                         **opts)

    run_split.info = info
    return run_split


# ---- webgpu ---------------------------------------------------------------------------------

_WGSL = source(__file__, "attention.wgsl")
#: workgroup memory of attention.wgsl's shared reduction / row-staging array (1024 floats)
_WGSL_RED_BYTES = 4096


def _wgsl_defs(case, **over) -> dict:
    """Every placeholder of attention.wgsl (the variant's own in ``over``; the others get small
    valid values: a workgroup array an entry does not use takes no memory)."""
    defs = {"DT": _DT[case.dtype], "HD": case["d"], "CAUSAL": int(causal(case)), "WG": _NAIVE_WG,
            "SEQ": 1, "ROWS": 1, "BM": 16, "BN": 16, "TM": 2, "TN": 2}
    return {**defs, **over}


def _webgpu_case(be, case):
    b, h, s, d = _dims(case)
    if b * h * s * d >= 2**32:
        raise Unsupported("attention.wgsl indexes with u32: B·H·S·D ≥ 2^32")
    if b * h > be.limits["max-compute-workgroups-per-dimension"]:
        raise Unsupported(f"B·H = {b * h} workgroups exceed the grid's y limit")
    return b, h, s, d


def _wgsl_params(case, bh0: int = 0) -> np.ndarray:
    return np.array([case["s"], bh0, int(_qk_scale(case).view(np.uint32)), 0], np.uint32)


@kernel("attention", "webgpu", "naive")
def webgpu_naive(be, case):
    """Three dispatches: scores (16×16 workgroups) into an f32 S×S scratch per head, a softmax
    workgroup per row, a P·V workgroup of D per row (heads in chunks: ≤ 1 GiB scratch)."""
    b, h, s, d = _webgpu_case(be, case)
    defs = _wgsl_defs(case)
    ks, kx, kp = (be.compile(_WGSL, e, defs)
                  for e in ("attention_scores", "attention_softmax", "attention_pv"))
    lim = be.limits["max-compute-workgroups-per-dimension"]
    if s > lim:
        raise Unsupported(f"naive: one workgroup per row, S = {s} > {lim} per grid dimension")
    cap = min(be.limits["max-storage-buffer-binding-size"], be.limits["max-buffer-size"])
    nz = max(1, min(_naive_chunk(b, h, s), cap // (4 * s * s), lim))
    if 4 * s * s > cap:
        raise Unsupported(f"naive: one head's S×S scratch ({4 * s * s} bytes) exceeds the binding "
                          f"limit {cap}")
    scratch = be.empty((nz * s * s,), np.float32)

    def run(ins, outs):
        for z0 in range(0, b * h, nz):
            z = min(nz, b * h - z0)
            args = [ins["Q"], ins["K"], ins["V"], outs["O"], scratch, _wgsl_params(case, z0)]
            be.launch(ks, (cdiv(s, 16), cdiv(s, 16), z), None, args)
            be.launch(kx, (s, 1, z), None, args)
            be.launch(kp, (s, 1, z), None, args)

    return run


@kernel("attention", "webgpu", "fused_rows")
def webgpu_fused_rows(be, case):
    """Workgroup of D invocations per block of ROWS query rows (ROWS ≤ 8 from the adapter's
    workgroup-storage limit), the block's scores over all S keys in workgroup memory."""
    b, h, s, d = _webgpu_case(be, case)
    rows = fused_rows_count(s, d, be.limits["max-compute-workgroup-storage-size"] - _WGSL_RED_BYTES)
    k = be.compile(_WGSL, "attention_fused_rows", _wgsl_defs(case, SEQ=s, ROWS=rows))
    dummy = be.empty((4,), np.float32)
    prm = _wgsl_params(case)

    def run(ins, outs):
        be.launch(k, (cdiv(s, rows), b * h, 1), None, [ins["Q"], ins["K"], ins["V"], outs["O"], dummy, prm])

    run.info = {"rows": rows}
    return run


@kernel("attention", "webgpu", "flash")
def webgpu_flash(be, case, tiles: tuple[int, int, int, int] | None = None):
    """attention.cl's flash in WGSL with vec4 workgroup rows: BM query rows per workgroup, K/V
    tiles of BN keys through workgroup memory, TM×TN score tiles, the row max through
    per-invocation partial maxima, online softmax; the first of _WGSL_FLASH_TILES that the
    adapter's workgroup-storage and invocation limits take (H200: 64×32×4×2 at D = 64, 32×32×2×2
    at D = 128; lavapipe's 32 KiB: 32×32×2×2 at D = 64, 32×16×4×2 at D = 128; ``tiles``: (BM, BN,
    TM, TN) instead, for probes and tests)."""
    b, h, s, d = _webgpu_case(be, case)
    lim = be.limits
    bm, bn, tm, tn = tiles or flash_tiles(d, lim["max-compute-workgroup-storage-size"],
                                          lim["max-compute-invocations-per-workgroup"], _WGSL_FLASH_TILES, 4,
                                          partial_max=True)
    k = be.compile(_WGSL, "attention_flash", _wgsl_defs(case, BM=bm, BN=bn, TM=tm, TN=tn))
    dummy = be.empty((4,), np.float32)
    prm = _wgsl_params(case)

    grid = (b * h, cdiv(s, bm), 1) if causal(case) else (cdiv(s, bm), b * h, 1)  # causal: longest first

    def run(ins, outs):
        be.launch(k, grid, None, [ins["Q"], ins["K"], ins["V"], outs["O"], dummy, prm])

    run.info = {"tile": {"BM": bm, "BN": bn, "TM": tm, "TN": tn}}
    return run


# ---- cuda -----------------------------------------------------------------------------------

_CU = source(__file__, "attention.cu")
#: static shared memory per block the SIMT flash tiles may use (no opt-in needed)
_CUDA_STATIC_SMEM = 48 * 1024
#: dynamic shared memory the fused_rows scores may take at most (an H100/H200 block opts in to
#: 227 KiB; a device that allows less per block gets fewer rows per block)
_CUDA_FUSED_SMEM = 200 * 1024


def _cu_defs(case, **extra) -> dict:
    return {"DT": _DT[case.dtype], "HD": case["d"], "CAUSAL": int(causal(case)), **extra}


@kernel("attention", "cuda", "naive")
def cuda_naive(be, case):
    """Three kernels: scores (16×16 blocks, one score each) into an fp32 S×S scratch per head, a
    softmax block per row, a P·V block of D threads per row (heads in chunks: ≤ 1 GiB scratch)."""
    return _naive_c(be, case, _CU, _cu_defs(case, WG=_NAIVE_WG), max_heads=65535)


@kernel("attention", "cuda", "fused_rows")
def cuda_fused_rows(be, case):
    """Block of D threads per ROWS query rows (ROWS ≤ 8, ROWS·S scores ≤ 200 KiB of dynamic
    shared memory: 4 rows at S = 8192), the rows' scores on chip: K and V read once per block."""
    b, h, s, d = _dims(case)
    rows = fused_rows_count(s, d, min(_CUDA_FUSED_SMEM, be.smem_per_block()))
    k = be.compile(_CU, "attention_fused_rows", _cu_defs(case, ROWS=rows))
    smem = 4 * rows * s
    qk, sn = _qk_scale(case), np.int32(s)

    def run(ins, outs):
        be.launch(k, (cdiv(s, rows), b * h), (d, 1), [ins["Q"], ins["K"], ins["V"], outs["O"], sn, qk],
                  shared_mem=smem)

    run.info = {"rows": rows}
    return run


#: (warps, keys per K/V tile) of attention_flash_mma, the first whose shared memory
#: ((16·warps + 4·keys)·D·2 bytes) fits the device. bf16 B4 H32 S8192 D128 on the H200
#: (scripts/probe.py, 2026-12-01), non-causal / causal TFLOP/s: 8 × 128 306 / 299 (160 KiB at
#: D128), 8 × 64 294 / 282, 4 × 64 290 / 281, 4 × 128 179 / 186
_FLASH_MMA_SHAPES = ((8, 128), (8, 64), (4, 64))


@kernel("attention", "cuda", "flash")
def cuda_flash(be, case, warps: int | None = None, bn: int | None = None):
    """fp16/bf16: tensor cores (mma.sync m16n8k16, FA2 layout: warps × 16 query rows, K/V tiles
    double-buffered by cp.async, P re-used from registers as the A operand of P·V; warps and keys
    per tile from _FLASH_MMA_SHAPES, or given by probes). fp32: the SIMT kernel of attention.cl
    (BM×BN tiles in shared memory, TM×TN per thread)."""
    b, h, s, d = _dims(case)
    qk, sn = _qk_scale(case), np.int32(s)
    if case.dtype in ("fp16", "bf16"):
        be.require_mma_sync()
        if warps is None:
            fits = [p for p in _FLASH_MMA_SHAPES if (16 * p[0] + 4 * p[1]) * d * 2 <= be.smem_per_block()]
            warps, bn = (fits or _FLASH_MMA_SHAPES[-1:])[0]
        k = be.compile(_CU, "attention_flash_mma", _cu_defs(case, MMA=1, MWARPS=warps, MBN=bn))
        bm = 16 * warps
        smem = (bm + 4 * bn) * d * 2
        grid, block = (cdiv(s, bm), b * h), (32 * warps, 1)
        info = {"kernel": "attention_flash_mma", "tile": {"BM": bm, "BN": bn}}
    else:
        bm, bn, tm, tn = flash_tiles(d, _CUDA_STATIC_SMEM, 1024)
        k = be.compile(_CU, "attention_flash", _cu_defs(case, BM=bm, BN=bn, TM=tm, TN=tn))
        smem = 0
        grid, block = (cdiv(s, bm), b * h), ((bm // tm) * (bn // tn), 1)
        info = {"kernel": "attention_flash", "tile": {"BM": bm, "BN": bn, "TM": tm, "TN": tn}}

    def run(ins, outs):
        be.launch(k, grid, block, [ins["Q"], ins["K"], ins["V"], outs["O"], sn, qk], shared_mem=smem)

    run.info = info
    return run
