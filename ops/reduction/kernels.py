"""reduction kernels: out = Σ x, one registration per (backend, variant).

Each factory gets the opened backend and the case, compiles once and allocates its scratch
(per-block partials, a counter) once, and returns ``run(ins, outs)`` that only enqueues work.
Backend packages are imported inside the factories, so importing this file loads no GPU runtime.

The ladder, for cuda / opencl / webgpu: ``naive`` (serial per thread + one atomic per thread),
``tree_shared`` (one element per thread, a shared-memory tree, relaunched on the partials),
``coarsened`` (persistent grid, 16-byte vector loads, one tree per block, two launches),
``warp_shuffle`` (CUDA) / ``subgroup`` (OpenCL, WGSL). triton: ``tl_sum`` and ``persistent``.
Only ``naive`` is order-dependent; the others give bit-identical results run after run.
"""

from __future__ import annotations

import numpy as np

from suite.registry import kernel, source

ACC_NP = {"fp32": np.dtype(np.float32), "fp16": np.dtype(np.float32), "i32": np.dtype(np.int32)}
#: input dtype of the levels after the first (the partials are accumulator-typed)
ACC_NAME = {"fp32": "fp32", "fp16": "fp32", "i32": "i32"}
#: elements per 16-byte vector
VEC = {"fp32": 4, "fp16": 8, "i32": 4}
#: SM count assumed where the device does not report one (compile-only: an H100/H200)
DEFAULT_SMS = 132
#: naive: at most this many blocks of 256, so at most 2^16 atomics (and the fp32 error of their
#: serial, order-dependent sum stays within the spec's tolerance: see ops/reduction/spec.py)
NAIVE_MAX_BLOCKS = 256


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def level_sizes(n: int, per_block: int) -> list[int]:
    """[n, ⌈n/B⌉, ⌈n/B²⌉, ..., 1]: the lengths a tree of blocks reduces through (≥ 1 level)."""
    sizes = [n]
    while True:
        sizes.append(cdiv(sizes[-1], per_block))
        if sizes[-1] == 1:
            return sizes


def _units(be) -> int:
    return be.device.compute_units or DEFAULT_SMS


# ---- torch ----------------------------------------------------------------------------------


@kernel("reduction", "torch", "sum")
def torch_sum(be, case):
    """torch.sum into the preallocated (1,) output, accumulating in fp32 (int32 for int32)."""
    import torch

    acc = {"fp32": torch.float32, "fp16": torch.float32, "i32": torch.int32}[case.dtype]
    return lambda ins, outs: torch.sum(ins["x"], 0, keepdim=True, dtype=acc, out=outs["out"])


def _torch_sum_into(x, out):
    out.copy_(x.sum(0, keepdim=True, dtype=out.dtype))


@kernel("reduction", "torch", "compiled", test_cases=("n=1025", "n=1025,fp16", "n=4097,i32"))
def torch_compiled(be, case):
    """torch.compile (dynamic=False) of ``out.copy_(x.sum(dtype=out.dtype))`` (fp32 accumulation
    for fp16 input, int32 for int32): Inductor's split reduction."""
    from backends.torch import compile_static

    fn = compile_static(_torch_sum_into)
    return lambda ins, outs: fn(ins["x"], outs["out"])


# ---- cuda -----------------------------------------------------------------------------------

_CU = source(__file__, "reduction.cu")


def _cu_defs(dtype: str, block: int) -> dict:
    return {"IN_HALF": int(dtype == "fp16"), "IN_INT": int(dtype == "i32"), "BLOCK": block}


@kernel("reduction", "cuda", "cupy")
def cuda_cupy(be, case):
    """cupy.sum (CUB device reduction) on the cuda backend's CuPy arrays."""
    if be.device.mode == "compile":
        from backends.base import Unsupported

        raise Unsupported("cupy.sum needs CuPy and a CUDA GPU (this device only compiles)")
    import cupy

    acc = ACC_NP[case.dtype]
    return lambda ins, outs: cupy.sum(ins["x"], axis=0, dtype=acc, keepdims=True, out=outs["out"])


@kernel("reduction", "cuda", "naive")
def cuda_naive(be, case):
    """Grid-stride serial sum per thread, then one atomicAdd per thread (≤ 2^16 of them)."""
    n, block = case["n"], 256
    defs = _cu_defs(case.dtype, block)
    zero = be.compile(_CU, "reduce_zero", defs)
    k = be.compile(_CU, "reduce_naive", defs)
    grid = min(cdiv(n, block), NAIVE_MAX_BLOCKS)

    def run(ins, outs):
        be.launch(zero, (1,), (1,), [outs["out"]])
        be.launch(k, (grid,), (block,), [ins["x"], outs["out"], np.int64(n)])

    return run


@kernel("reduction", "cuda", "tree_shared")
def cuda_tree_shared(be, case):
    """One element per thread, a shared-memory tree per 256-thread block, relaunched on the
    partials until one value is left (n = 2^28: 4 launches)."""
    n, block = case["n"], 256
    sizes = level_sizes(n, block)
    first = be.compile(_CU, "reduce_tree_shared", _cu_defs(case.dtype, block))
    rest = be.compile(_CU, "reduce_tree_shared", _cu_defs(ACC_NAME[case.dtype], block))
    bufs = [be.empty((m,), ACC_NP[case.dtype]) for m in sizes[1:-1]]

    def run(ins, outs):
        src = ins["x"]
        for lvl in range(len(sizes) - 1):
            dst = outs["out"] if lvl == len(sizes) - 2 else bufs[lvl]
            k = first if lvl == 0 else rest
            be.launch(k, (sizes[lvl + 1],), (block,), [src, dst, np.int64(sizes[lvl])])
            src = dst

    return run


def _cuda_grid(be, n: int, dtype: str, block: int, per_sm: int) -> int:
    return max(1, min(per_sm * _units(be), cdiv(cdiv(n, VEC[dtype]), block)))


@kernel("reduction", "cuda", "coarsened")
def cuda_coarsened(be, case):
    """Persistent grid (4 blocks of 512 per SM), 16-byte loads into 4 accumulators per thread,
    one shared-memory tree per block; a second launch of one block sums the partials."""
    n, block = case["n"], 512
    grid = _cuda_grid(be, n, case.dtype, block, 2048 // block)
    k = be.compile(_CU, "reduce_coarsened", _cu_defs(case.dtype, block))
    fin = be.compile(_CU, "reduce_coarsened", _cu_defs(ACC_NAME[case.dtype], block))
    part = be.empty((grid,), ACC_NP[case.dtype])

    def run(ins, outs):
        be.launch(k, (grid,), (block,), [ins["x"], part, np.int64(n)])
        be.launch(fin, (1,), (block,), [part, outs["out"], np.int64(grid)])

    return run


@kernel("reduction", "cuda", "warp_shuffle")
def cuda_warp_shuffle(be, case):
    """Persistent grid, 4 × 16-byte loads in flight per thread, warp-shuffle trees, and a
    deterministic single-launch finish by the last block (per-block partials summed in block
    order). The default: no order-dependent atomics."""
    n, block = case["n"], 512
    grid = _cuda_grid(be, n, case.dtype, block, 2048 // block)
    k = be.compile(_CU, "reduce_warp_shuffle", _cu_defs(case.dtype, block))
    part = be.empty((grid,), ACC_NP[case.dtype])
    counter = be.upload(np.zeros(1, np.uint32))  # left at zero by every launch

    def run(ins, outs):
        be.launch(k, (grid,), (block,), [ins["x"], outs["out"], part, counter, np.int64(n)])

    return run


# ---- triton ---------------------------------------------------------------------------------


def _torch_dtype(dt: np.dtype):
    import torch

    return {np.dtype(np.float32): torch.float32, np.dtype(np.int32): torch.int32}[np.dtype(dt)]


@kernel("reduction", "triton", "tl_sum")
def triton_tl_sum(be, case):
    """tl.sum over 4096-element blocks → partials, relaunched until one value is left."""
    from ops.reduction.reduction_triton import reduce_tl_sum

    n, block = case["n"], 4096
    sizes = level_sizes(n, block)
    bufs = [be.empty((m,), ACC_NP[case.dtype]) for m in sizes[1:-1]]

    def run(ins, outs):
        src = ins["x"]
        for lvl in range(len(sizes) - 1):
            dst = outs["out"] if lvl == len(sizes) - 2 else bufs[lvl]
            reduce_tl_sum[(sizes[lvl + 1],)](src, dst, sizes[lvl], BLOCK=block, num_warps=8)
            src = dst

    return run


@kernel("reduction", "triton", "persistent")
def triton_persistent(be, case):
    """A few programs per SM, each accumulating 4096-wide register tiles grid-stride, one tl.sum
    per program; one program sums the partials (deterministic)."""
    import triton

    from ops.reduction.reduction_triton import reduce_persistent, reduce_tl_sum

    n, block = case["n"], 4096
    per_sm = 1 if be.device.mode == "interpret" else 4
    grid = max(1, min(per_sm * _units(be), cdiv(n, block)))
    part = be.empty((grid,), ACC_NP[case.dtype])
    fin_block = max(16, triton.next_power_of_2(grid))

    def run(ins, outs):
        reduce_persistent[(grid,)](ins["x"], part, n, BLOCK=block, num_warps=8)
        reduce_tl_sum[(1,)](part, outs["out"], grid, BLOCK=fin_block, num_warps=4)

    return run


# ---- opencl ---------------------------------------------------------------------------------

_CL = source(__file__, "reduction.cl")


def _cl_defs(dtype: str, block: int, subgroups: int = 0) -> dict:
    return {"IN_HALF": int(dtype == "fp16"), "IN_INT": int(dtype == "i32"), "BLOCK": block,
            "SUBGROUPS": subgroups}


@kernel("reduction", "opencl", "naive")
def opencl_naive(be, case):
    """Grid-stride serial sum per work-item, then one atomic add per work-item (float: an
    atomic_cmpxchg loop; ≤ 2^16 of them)."""
    n, block = case["n"], 256
    defs = _cl_defs(case.dtype, block)
    zero = be.compile(_CL, "reduce_zero", defs)
    k = be.compile(_CL, "reduce_naive", defs)
    groups = min(cdiv(n, block), NAIVE_MAX_BLOCKS)

    def run(ins, outs):
        be.launch(zero, (1,), (1,), [outs["out"]])
        be.launch(k, (groups,), (block,), [ins["x"], outs["out"], np.int64(n)])

    return run


@kernel("reduction", "opencl", "tree_shared")
def opencl_tree_shared(be, case):
    """One element per work-item, a local-memory tree per 256-wide group, relaunched on the
    partials until one value is left."""
    n, block = case["n"], 256
    sizes = level_sizes(n, block)
    first = be.compile(_CL, "reduce_tree_shared", _cl_defs(case.dtype, block))
    rest = be.compile(_CL, "reduce_tree_shared", _cl_defs(ACC_NAME[case.dtype], block))
    bufs = [be.empty((m,), ACC_NP[case.dtype]) for m in sizes[1:-1]]

    def run(ins, outs):
        src = ins["x"]
        for lvl in range(len(sizes) - 1):
            dst = outs["out"] if lvl == len(sizes) - 2 else bufs[lvl]
            be.launch(first if lvl == 0 else rest, (sizes[lvl + 1],), (block,),
                      [src, dst, np.int64(sizes[lvl])])
            src = dst

    return run


def _opencl_two_pass(be, case, entry: str, subgroups: int = 0):
    n, block = case["n"], 256
    groups = max(1, min(8 * _units(be), cdiv(cdiv(n, VEC[case.dtype]), block)))
    k = be.compile(_CL, entry, _cl_defs(case.dtype, block, subgroups))
    fin = be.compile(_CL, entry, _cl_defs(ACC_NAME[case.dtype], block, subgroups))
    part = be.empty((groups,), ACC_NP[case.dtype])

    def run(ins, outs):
        be.launch(k, (groups,), (block,), [ins["x"], part, np.int64(n)])
        be.launch(fin, (1,), (block,), [part, outs["out"], np.int64(groups)])

    return run


@kernel("reduction", "opencl", "coarsened")
def opencl_coarsened(be, case):
    """8 work-groups of 256 per compute unit, 16-byte vloads grid-stride, one local tree per
    group; a second launch of one group sums the partials."""
    return _opencl_two_pass(be, case, "reduce_coarsened")


@kernel("reduction", "opencl", "subgroup")
def opencl_subgroup(be, case):
    """As coarsened, with sub_group_reduce_add (cl_khr_subgroups / cl_intel_subgroups) or, on
    NVIDIA, warp shuffles in inline PTX, instead of the local-memory tree."""
    from backends.base import Unsupported

    feats = set(be.device.features)
    if feats & {"cl_khr_subgroups", "cl_intel_subgroups"}:
        mode = 1
    elif "cl_nv_device_attribute_query" in feats:
        mode = 2
    else:
        raise Unsupported("no sub-groups: device has neither cl_khr_subgroups nor cl_intel_subgroups "
                          "(nor NVIDIA inline PTX)")
    return _opencl_two_pass(be, case, "reduce_subgroup", mode)


# ---- webgpu ---------------------------------------------------------------------------------

_WGSL = source(__file__, "reduction.wgsl")
_WGSL_SUBGROUP = source(__file__, "reduction_subgroup.wgsl")
_WGSL_T = {"fp32": "f32", "fp16": "f16", "i32": "i32"}


def _wgsl_defs(dtype: str, block: int, path=_WGSL) -> dict:
    t, acc = _WGSL_T[dtype], _WGSL_T[ACC_NAME[dtype]]
    d = {"BLOCK": block, "ACC": acc, "VEC": VEC[dtype], "ELEM": f"elem_{t}", "SUM16": f"sum16_{t}"}
    if path == _WGSL:  # reduce_naive's atomic add lives in reduction.wgsl only
        d["ATOMIC_ADD"] = f"atomic_add_{acc}"
    return d


def _params(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.uint32)


def _webgpu_u32(case) -> None:
    if case["n"] >= 2**32:
        from backends.base import Unsupported

        raise Unsupported(f"WGSL kernels index with u32: n = {case['n']} >= 2^32")


@kernel("reduction", "webgpu", "naive")
def webgpu_naive(be, case):
    """Grid-stride serial sum per invocation, then one atomic add per invocation (f32: an
    atomicCompareExchangeWeak loop; ≤ 2^16 of them)."""
    _webgpu_u32(case)
    n, block = case["n"], 256
    zero = be.compile(_WGSL, "reduce_zero", _wgsl_defs(case.dtype, block))
    k = be.compile(_WGSL, "reduce_naive", _wgsl_defs(case.dtype, block))
    groups = min(cdiv(n, block), NAIVE_MAX_BLOCKS)
    prm = _params(n, groups)

    def run(ins, outs):
        be.launch(zero, (1, 1, 1), None, [ins["x"], outs["out"], prm])
        be.launch(k, (groups, 1, 1), None, [ins["x"], outs["out"], prm])

    return run


@kernel("reduction", "webgpu", "tree_shared")
def webgpu_tree_shared(be, case):
    """One element per invocation, a workgroup-memory tree per 256-wide workgroup, relaunched
    on the partials until one value is left (2-D grids past 65535 workgroups)."""
    _webgpu_u32(case)
    n, block = case["n"], 256
    sizes = level_sizes(n, block)
    first = be.compile(_WGSL, "reduce_tree_shared", _wgsl_defs(case.dtype, block))
    rest = be.compile(_WGSL, "reduce_tree_shared", _wgsl_defs(ACC_NAME[case.dtype], block))
    bufs = [be.empty((m,), ACC_NP[case.dtype]) for m in sizes[1:-1]]
    steps = [(first if lvl == 0 else rest, be.grid_2d(sizes[lvl + 1]), _params(sizes[lvl], sizes[lvl + 1]))
             for lvl in range(len(sizes) - 1)]

    def run(ins, outs):
        src = ins["x"]
        for lvl, (k, grid, prm) in enumerate(steps):
            dst = outs["out"] if lvl == len(steps) - 1 else bufs[lvl]
            be.launch(k, grid, None, [src, dst, prm])
            src = dst

    return run


def _webgpu_two_pass(be, case, path, entry: str):
    _webgpu_u32(case)
    n, block = case["n"], 256
    units = be.device.compute_units or (4 * DEFAULT_SMS if be.device.kind == "gpu" else 8)
    groups = max(1, min(8 * units, cdiv(cdiv(n, VEC[case.dtype]), block)))
    k = be.compile(path, entry, _wgsl_defs(case.dtype, block, path))
    fin = be.compile(path, entry, _wgsl_defs(ACC_NAME[case.dtype], block, path))
    part = be.empty((groups,), ACC_NP[case.dtype])
    p1, p2 = _params(n, groups), _params(groups, 1)

    def run(ins, outs):
        be.launch(k, (groups, 1, 1), None, [ins["x"], part, p1])
        be.launch(fin, (1, 1, 1), None, [part, outs["out"], p2])

    return run


@kernel("reduction", "webgpu", "coarsened")
def webgpu_coarsened(be, case):
    """A fixed grid of 256-wide workgroups, 16-byte loads grid-stride into a 4-wide accumulator,
    one workgroup tree each; a second dispatch of one workgroup sums the partials."""
    return _webgpu_two_pass(be, case, _WGSL, "reduce_coarsened")


@kernel("reduction", "webgpu", "subgroup", requires=("subgroup",))
def webgpu_subgroup(be, case):
    """As coarsened, with subgroupAdd in place of the workgroup-memory tree."""
    return _webgpu_two_pass(be, case, _WGSL_SUBGROUP, "reduce_subgroup")
