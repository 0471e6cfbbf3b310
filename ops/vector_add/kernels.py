"""vector_add kernels: one registration per (backend, variant).

Each factory gets the opened backend and the case, compiles once, and returns ``run(ins, outs)``
that only enqueues work. Backend packages are imported inside the factories, so importing this
file loads no GPU runtime.
"""

from __future__ import annotations

from suite.registry import kernel, source

# ---- torch ----------------------------------------------------------------------------------


@kernel("vector_add", "torch", "eager")
def torch_eager(be, case):
    """torch.add into a preallocated output."""
    import torch

    return lambda ins, outs: torch.add(ins["a"], ins["b"], out=outs["c"])


def _torch_add_into(a, b, c):
    c.copy_(a + b)


@kernel("vector_add", "torch", "compiled", test_cases=("n=1025", "n=1025,fp16"))
def torch_compiled(be, case):
    """torch.compile (dynamic=False) of ``c.copy_(a + b)``: Inductor writes the sum straight into
    the preallocated output in one fused kernel."""
    from backends.torch import compile_static

    fn = compile_static(_torch_add_into)
    return lambda ins, outs: fn(ins["a"], ins["b"], outs["c"])


# ---- cuda -----------------------------------------------------------------------------------



_CUDA_VECTOR_ADD = source(__file__, "vector_add.cu")
_CUDA_BLOCK = 256  # threads per block
_CUDA_UNROLL = 4  # 16-byte vectors per thread and input in vector_add_vec4_unroll


def _cuda_vector_add(be, case, entry: str, blocks: int, defines: dict | None = None):
    """Compile ``entry`` for the case's dtype; launch ``blocks`` blocks of 256 threads."""
    import numpy as np

    fn = be.compile(_CUDA_VECTOR_ADD, entry, {"FP16": int(case.dtype == "fp16"), **(defines or {})})
    grid, block, n = (max(1, blocks),), (_CUDA_BLOCK,), np.int64(case["n"])
    return lambda ins, outs: be.launch(fn, grid, block, [ins["a"], ins["b"], outs["c"], n])


def _cuda_vec(case) -> int:
    """Elements per 16-byte vector: 4 fp32 or 8 fp16."""
    from suite.spec import np_dtype

    return 16 // np_dtype(case.dtype).itemsize


@kernel("vector_add", "cuda", "naive")
def cuda_naive(be, case):
    """One element per thread, 256-thread blocks."""
    return _cuda_vector_add(be, case, "vector_add_naive", -(-case["n"] // _CUDA_BLOCK))


@kernel("vector_add", "cuda", "vec4")
def cuda_vec4(be, case):
    """One 16-byte vector per thread and array (float4, or 4 half2 words = 8 fp16); scalar tail."""
    n, vec = case["n"], _cuda_vec(case)
    return _cuda_vector_add(be, case, "vector_add_vec4", -(-max(n // vec, n % vec) // _CUDA_BLOCK))


@kernel("vector_add", "cuda", "vec4_unroll")
def cuda_vec4_unroll(be, case):
    """Four 16-byte vectors per thread and array, all loads issued before the adds (128 B in
    flight per thread); each load instruction of a warp still reads 512 contiguous bytes."""
    nvec = case["n"] // _cuda_vec(case)
    return _cuda_vector_add(be, case, "vector_add_vec4_unroll", -(-nvec // (_CUDA_BLOCK * _CUDA_UNROLL)),
                            {"UNROLL": _CUDA_UNROLL})


# ---- triton ---------------------------------------------------------------------------------


def _triton_vector_add(case, block: int, num_warps: int):
    from .vector_add_triton import vector_add_naive

    n = case["n"]
    grid = (-(-n // block),)
    return lambda ins, outs: vector_add_naive[grid](ins["a"], ins["b"], outs["c"], n, BLOCK=block,
                                                    num_warps=num_warps)


@kernel("vector_add", "triton", "naive")
def triton_naive(be, case):
    """The tutorial kernel: 1024 elements per program, 4 warps, masked loads and stores."""
    return _triton_vector_add(case, 1024, 4)


@kernel("vector_add", "triton", "large_block")
def triton_large_block(be, case):
    """The same kernel with 8192 elements per program and 8 warps: 32 elements per thread, so
    each thread has eight 16-byte loads per input in flight (fp32)."""
    return _triton_vector_add(case, 8192, 8)


# ---- opencl ---------------------------------------------------------------------------------



_OPENCL_VECTOR_ADD = source(__file__, "vector_add.cl")
_OPENCL_T = {"fp32": "float", "fp16": "half"}  # fp16: core half storage, fp32 arithmetic


def _opencl_vector_add(be, case, entry: str, per_item: int, max_groups: int | None = None):
    import numpy as np

    n = case["n"]
    if n >= 2**32:
        raise ValueError(f"{entry}: 32-bit indices, n={n} >= 2^32")
    k = be.compile(_OPENCL_VECTOR_ADD, entry, {"T": _OPENCL_T[case.dtype]})
    groups = max(1, -(-n // (256 * per_item)))
    grid = (groups if max_groups is None else min(groups, max_groups),)
    return lambda ins, outs: be.launch(k, grid, (256,), [ins["a"], ins["b"], outs["c"], np.uint32(n)])


@kernel("vector_add", "opencl", "naive")
def opencl_naive(be, case):
    """One element per work-item, 256-wide work-groups."""
    return _opencl_vector_add(be, case, "vector_add_naive", 1)


@kernel("vector_add", "opencl", "vec4")
def opencl_vec4(be, case):
    """Four elements per work-item through aligned float4/half4 accesses; scalar tail."""
    return _opencl_vector_add(be, case, "vector_add_vec4", 4)


@kernel("vector_add", "opencl", "grid_stride")
def opencl_grid_stride(be, case):
    """The vec4 body in a grid-stride loop over 8 work-groups of 256 per compute unit."""
    return _opencl_vector_add(be, case, "vector_add_grid_stride", 4, 8 * max(1, be.device.compute_units))


# ---- webgpu ---------------------------------------------------------------------------------



_WEBGPU_VECTOR_ADD = source(__file__, "vector_add.wgsl")


def _webgpu_vector_add(be, case, entry: str, per_item: int, max_groups: int | None = None):
    import numpy as np

    from backends.base import Unsupported

    if case.dtype == "fp16":
        if "shader-f16" not in be.features:
            raise Unsupported(f"adapter {be.device.name} lacks shader-f16")
        defines = {"T": "f16", "ENABLE": "enable f16;"}
    else:
        defines = {"T": "f32", "ENABLE": ""}
    n = case["n"]
    pipe = be.compile(_WEBGPU_VECTOR_ADD, entry, defines)
    groups = -(-n // (256 * per_item))
    grid = be.grid_2d(groups if max_groups is None else min(groups, max_groups))
    params = np.array([n], np.uint32)
    return lambda ins, outs: be.launch(pipe, grid, None, [ins["a"], ins["b"], outs["c"], params])


@kernel("vector_add", "webgpu", "naive")
def webgpu_naive(be, case):
    """One element per invocation, 256-wide workgroups, 2-D grid past 65535 groups."""
    return _webgpu_vector_add(be, case, "vector_add_naive", 1)


@kernel("vector_add", "webgpu", "vec4")
def webgpu_vec4(be, case):
    """One vec4 per invocation (16 B for f32); the partial last vector lies in buffer padding."""
    return _webgpu_vector_add(be, case, "vector_add_vec4", 4)


@kernel("vector_add", "webgpu", "grid_stride")
def webgpu_grid_stride(be, case):
    """The vec4 body in a grid-stride loop over at most 2048 workgroups of 256 (WebGPU does not
    report a compute-unit count)."""
    return _webgpu_vector_add(be, case, "vector_add_grid_stride", 4, 2048)
