"""vector_add kernels: one registration per (backend, variant).

Each factory gets the opened backend and the case, compiles once, and returns ``run(ins, outs)``
that only enqueues work. Backend packages are imported inside the factories, so importing this
file loads no GPU runtime.
"""

from __future__ import annotations

from suite.registry import kernel

# ---- torch ----------------------------------------------------------------------------------


@kernel("vector_add", "torch", "eager")
def torch_eager(be, case):
    """torch.add into a preallocated output."""
    import torch

    return lambda ins, outs: torch.add(ins["a"], ins["b"], out=outs["c"])


# ---- cuda -----------------------------------------------------------------------------------

# ---- triton ---------------------------------------------------------------------------------

# ---- opencl ---------------------------------------------------------------------------------


def _opencl_src(name: str):
    """Path of an OpenCL source beside this file (resolved at import: a missing file fails here)."""
    from suite.registry import source

    return source(__file__, name)


_OPENCL_VECTOR_ADD = _opencl_src("vector_add.cl")
_OPENCL_T = {"fp32": "float", "fp16": "half"}  # fp16: core half storage, fp32 arithmetic


def _opencl_vector_add(be, case, entry: str, per_item: int):
    import numpy as np

    n = case["n"]
    if n >= 2**32:
        raise ValueError(f"{entry}: 32-bit indices, n={n} >= 2^32")
    k = be.compile(_OPENCL_VECTOR_ADD, entry, {"T": _OPENCL_T[case.dtype]})
    gsize = (max(1, -(-n // per_item)),)
    return lambda ins, outs: be.launch(k, gsize, (256,), [ins["a"], ins["b"], outs["c"], np.uint32(n)])


@kernel("vector_add", "opencl", "naive")
def opencl_naive(be, case):
    """One element per work-item, 256-wide work-groups."""
    return _opencl_vector_add(be, case, "vector_add_naive", 1)


@kernel("vector_add", "opencl", "vec4")
def opencl_vec4(be, case):
    """Four elements per work-item through aligned float4/half4 accesses; scalar tail."""
    return _opencl_vector_add(be, case, "vector_add_vec4", 4)


# ---- webgpu ---------------------------------------------------------------------------------


def _webgpu_src(name: str):
    """Path of a WGSL source beside this file (resolved at import: a missing file fails here)."""
    from suite.registry import source

    return source(__file__, name)


_WEBGPU_VECTOR_ADD = _webgpu_src("vector_add.wgsl")


def _webgpu_vector_add(be, case, entry: str, per_item: int):
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
    grid = be.grid_2d(-(-n // (256 * per_item)))
    params = np.array([n], np.uint32)
    return lambda ins, outs: be.launch(pipe, grid, [ins["a"], ins["b"], outs["c"]], params)


@kernel("vector_add", "webgpu", "naive")
def webgpu_naive(be, case):
    """One element per invocation, 256-wide workgroups, 2-D grid past 65535 groups."""
    return _webgpu_vector_add(be, case, "vector_add_naive", 1)


@kernel("vector_add", "webgpu", "vec4")
def webgpu_vec4(be, case):
    """One vec4 per invocation (16 B for f32); the partial last vector lies in buffer padding."""
    return _webgpu_vector_add(be, case, "vector_add_vec4", 4)
