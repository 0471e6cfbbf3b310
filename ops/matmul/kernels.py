"""matmul kernels: C = A·B, one registration per (backend, variant).

The ladder, the same algorithm in each dialect: ``naive`` (one thread per C element, K loop from
global memory), ``tiled_shared`` (square tiles of A and B staged through shared/local/workgroup
memory), ``register_blocked`` (each thread a 2-D register tile of C, vector loads, fp32 FMA),
then the tensor-core variants where the backend reaches them: CUDA ``mma_sync`` (inline PTX
mma.sync.m16n8k16, ldmatrix, cp.async pipeline) and Triton ``grouped`` (tl.dot, grouped program
order, autotuned) and ``persistent`` (one program per SM walking tiles, TMA descriptors where
the Triton build has them). torch: ``matmul`` (cuBLAS / the CPU BLAS) with TF32 enabled exactly
for tf32 cases.

Precisions (``case.prec``): fp32 strict, tf32, fp16, bf16 (fp32 accumulation). bf16 arrives as
raw 16-bit words (uint16 buffers; torch/Triton view them as torch.bfloat16). A kernel that lacks
a precision raises ``Unsupported`` with the reason (OpenCL C and WGSL have no tensor-core path:
no tf32 there).
"""

from __future__ import annotations

from backends.base import Unsupported
from suite.registry import kernel, source


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _need(case, precisions: tuple[str, ...], why: str) -> None:
    if case.prec not in precisions:
        raise Unsupported(f"{case.prec}: {why}")


def _torch_view(t, dtype: str):
    """A storage tensor as the torch dtype it holds (bf16 words → torch.bfloat16)."""
    import torch

    return t.view(torch.bfloat16) if dtype == "bf16" else t


# ---- torch ----------------------------------------------------------------------------------


@kernel("matmul", "torch", "matmul")
def torch_matmul(be, case):
    """torch.matmul into the preallocated C (cuBLAS on NVIDIA); TF32 only for tf32 cases."""
    import torch

    tf32 = case.prec == "tf32"
    if tf32 and not be.gpu:
        raise Unsupported("tf32: no TF32 matmul on the CPU")

    def run(ins, outs):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a, b, c = (_torch_view(ins["A"], case.dtype), _torch_view(ins["B"], case.dtype),
                   _torch_view(outs["C"], case.dtype))
        torch.matmul(a, b, out=c)

    return run


# ---- cuda: tensor cores ---------------------------------------------------------------------

# ---- triton ---------------------------------------------------------------------------------

# ---- SIMT ladder: cuda, opencl, webgpu (naive, tiled_shared, register_blocked) ----------------
#
# One algorithm per variant in matmul.cu / matmul.cl / matmul.wgsl (same entry names), fp32 FMA
# math on 16-bit storage. Launch geometry from the case: groups = (⌈N/BN⌉, ⌈M/BM⌉).

_SIMT_CU = source(__file__, "matmul.cu")
_SIMT_CL = source(__file__, "matmul.cl")
_SIMT_WGSL = source(__file__, "matmul.wgsl")
#: storage dtype → the DT define of the three sources
_SIMT_DT = {"fp32": 0, "fp16": 1, "bf16": 2}
#: register_blocked tiles (BM, BN, BK, TM, TN), 256 threads each: a serious SGEMM shape on GPUs
#: (128×128×8, 8×8 per thread); 64×64×16 with 4×4 per work-item on CPUs (PoCL, lavapipe), whose
#: SIMD lanes are work-items and where 64 accumulators per item only spill
_SIMT_RB_GPU = (128, 128, 8, 8, 8)
_SIMT_RB_CPU = (64, 64, 16, 4, 4)


def _simt_case(case, dialect: str) -> tuple[int, int, int]:
    """(M, N, K) of a case the SIMT kernels handle; Unsupported (with the reason) otherwise."""
    if case.prec == "tf32":
        raise Unsupported(f"tf32: no tensor-core path in {dialect}")
    _need(case, ("fp32", "fp16", "bf16"), f"the {dialect} SIMT kernels do fp32, fp16 and bf16")
    if case.dtype not in _SIMT_DT:
        raise Unsupported(f"{case.dtype}: storage not handled by the {dialect} SIMT kernels")
    return case["m"], case["n"], case["k"]


def _simt_rb_defs(tiles: tuple[int, ...]) -> dict:
    return dict(zip(("BM", "BN", "BK", "TM", "TN"), tiles, strict=True))


def _simt_grid(case, bm: int, bn: int, limit: int, dialect: str) -> tuple[int, int]:
    gx, gy = cdiv(case["n"], bn), cdiv(case["m"], bm)
    if max(gx, gy) > limit:
        raise Unsupported(f"{dialect}: grid ({gx}, {gy}) exceeds {limit} workgroups per dimension")
    return gx, gy


def _simt_args(ins, outs, *dims: int) -> list:
    import numpy as np

    return [ins["A"], ins["B"], outs["C"], *(np.int32(d) for d in dims)]


def _cuda_simt(be, case, entry: str, defs: dict, bm: int, bn: int, block: tuple[int, ...]):
    m, n, k = _simt_case(case, "CUDA SIMT (the tensor-core variant handles tf32)")
    if max(m * k, k * n, m * n) >= 2**31:
        raise Unsupported("CUDA SIMT kernels take int32 dimensions: a matrix has ≥ 2^31 elements")
    prog = be.compile(_SIMT_CU, entry, {"DT": _SIMT_DT[case.dtype], **defs})
    grid = _simt_grid(case, bm, bn, 65535, "cuda")

    def run(ins, outs):
        be.launch(prog, grid, block, _simt_args(ins, outs, m, n, k))

    return run


@kernel("matmul", "cuda", "naive")
def cuda_naive(be, case):
    """One thread per C element (16×16 blocks), the K loop straight from global memory."""
    return _cuda_simt(be, case, "matmul_naive", {}, 16, 16, (16, 16))


@kernel("matmul", "cuda", "tiled_shared")
def cuda_tiled_shared(be, case):
    """32×32 tiles of A and B through shared memory, one thread (of 1024) per C element."""
    return _cuda_simt(be, case, "matmul_tiled_shared", {"TILE": 32}, 32, 32, (32, 32))


@kernel("matmul", "cuda", "register_blocked")
def cuda_register_blocked(be, case):
    """128×128×8 block tiles, 256 threads with 8×8 accumulators each, float4 loads into
    double-buffered shared memory (A transposed), unrolled outer-product FMAs."""
    bm, bn, bk, tm, tn = _SIMT_RB_GPU
    nt = (bm // tm) * (bn // tn)
    return _cuda_simt(be, case, "matmul_register_blocked", _simt_rb_defs(_SIMT_RB_GPU), bm, bn, (nt, 1))


def _opencl_simt(be, case, entry: str, defs: dict, bm: int, bn: int, block: tuple[int, ...]):
    m, n, k = _simt_case(case, "OpenCL")
    if max(m * k, k * n, m * n) >= 2**31:
        raise Unsupported("OpenCL SIMT kernels take int dimensions: a matrix has ≥ 2^31 elements")
    wg = 1
    for b in block:
        wg *= b
    have = int(be.cl_device.max_work_group_size)
    if wg > have:
        raise Unsupported(f"{entry} needs work-groups of {wg}; the device allows {have}")
    prog = be.compile(_SIMT_CL, entry, {"DT": _SIMT_DT[case.dtype], **defs})
    grid = _simt_grid(case, bm, bn, 2**31 // max(bm, bn), "opencl")

    def run(ins, outs):
        be.launch(prog, grid, block, _simt_args(ins, outs, m, n, k))

    return run


@kernel("matmul", "opencl", "naive")
def opencl_naive(be, case):
    """One work-item per C element (16×16 groups), the K loop straight from global memory."""
    return _opencl_simt(be, case, "matmul_naive", {}, 16, 16, (16, 16))


@kernel("matmul", "opencl", "tiled_shared")
def opencl_tiled_shared(be, case):
    """TILE×TILE tiles of A and B through __local memory, one work-item per C element (32 on GPUs
    that take 1024-wide groups, else 16)."""
    gpu = be.device.kind == "gpu" and int(be.cl_device.max_work_group_size) >= 1024
    t = 32 if gpu else 16
    return _opencl_simt(be, case, "matmul_tiled_shared", {"TILE": t}, t, t, (t, t))


@kernel("matmul", "opencl", "register_blocked")
def opencl_register_blocked(be, case):
    """matmul.cu's register_blocked in OpenCL C: 128×128×8 tiles, 256 work-items × 8×8 (GPU;
    64×64×16 × 4×4 on CPUs), 4-wide loads into double-buffered __local tiles, A transposed."""
    tiles = _SIMT_RB_GPU if be.device.kind == "gpu" else _SIMT_RB_CPU
    bm, bn, _, tm, tn = tiles
    nt = (bm // tm) * (bn // tn)
    return _opencl_simt(be, case, "matmul_register_blocked", _simt_rb_defs(tiles), bm, bn, (nt, 1))


def _webgpu_simt(be, case, entry: str, tile: int, rb: tuple[int, ...], bm: int, bn: int):
    import numpy as np

    m, n, k = _simt_case(case, "WGSL")
    if max(m * k, k * n, m * n) >= 2**32:
        raise Unsupported("WGSL kernels index with u32: a matrix has ≥ 2^32 elements")
    defs = {"DT": _SIMT_DT[case.dtype], "TILE": tile, **_simt_rb_defs(rb)}
    prog = be.compile(_SIMT_WGSL, entry, defs)
    grid = _simt_grid(case, bm, bn, be.limits["max-compute-workgroups-per-dimension"], "webgpu")
    prm = np.array([m, n, k, 0], dtype=np.uint32)

    def run(ins, outs):
        be.launch(prog, grid, None, [ins["A"], ins["B"], outs["C"], prm])

    return run


def _webgpu_rb_tiles(be) -> tuple[int, ...]:
    return _SIMT_RB_GPU if be.device.kind == "gpu" else _SIMT_RB_CPU


@kernel("matmul", "webgpu", "naive")
def webgpu_naive(be, case):
    """One invocation per C element (16×16 workgroups), the K loop straight from storage."""
    return _webgpu_simt(be, case, "matmul_naive", 16, _webgpu_rb_tiles(be), 16, 16)


@kernel("matmul", "webgpu", "tiled_shared")
def webgpu_tiled_shared(be, case):
    """16×16 tiles of A and B through workgroup memory, one invocation per C element."""
    return _webgpu_simt(be, case, "matmul_tiled_shared", 16, _webgpu_rb_tiles(be), 16, 16)


@kernel("matmul", "webgpu", "register_blocked")
def webgpu_register_blocked(be, case):
    """256 invocations with 8×8 accumulators on a 128×128×8 tile (GPU; 4×4 on 64×64×16 on CPUs),
    vec4 loads with the next K tile prefetched into registers, A transposed in workgroup memory."""
    tiles = _webgpu_rb_tiles(be)
    return _webgpu_simt(be, case, "matmul_register_blocked", 16, tiles, tiles[0], tiles[1])
