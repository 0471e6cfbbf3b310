"""grayscale kernels: one registration per (backend, variant). See ops/vector_add/kernels.py."""

from __future__ import annotations

from suite.registry import kernel, source

# ---- torch ----------------------------------------------------------------------------------


def _torch_gray(img, out):
    """Eager torch, as a user would write it: float32 weights, then round back for uint8."""
    import torch

    w = torch.tensor([0.299, 0.587, 0.114], dtype=torch.float32, device=img.device)
    y = (img.to(torch.float32) * w).sum(-1)
    if out.dtype == torch.uint8:
        y = torch.round(y)  # round-half-to-even: a tie may go either way under the rule
    out.copy_(y)


@kernel("grayscale", "torch", "eager")
def torch_eager(be, case):
    """Eager torch: convert to float, weighted sum over channels, round, copy out."""
    return lambda ins, outs: _torch_gray(ins["img"], outs["out"])


#: test cases of the compiled variants (see registry.KernelEntry.test_cases): one per dtype
_COMPILED_TESTS = ("257x255", "257x255,fp32")


@kernel("grayscale", "torch", "compiled", test_cases=_COMPILED_TESTS)
def torch_compiled(be, case):
    """The same function through torch.compile (dynamic=False; Inductor fuses it into one kernel)."""
    from backends.torch import compile_static

    fn = compile_static(_torch_gray)
    return lambda ins, outs: fn(ins["img"], outs["out"])


def _torch_gray_channels(img, out):
    """Per-channel fp32 products summed in one expression (no weight tensor, no reduction over
    the channel axis), rounded and converted in place: the formulation that fuses best."""
    import torch

    f = img.to(torch.float32)
    y = f[..., 0] * 0.299 + f[..., 1] * 0.587 + f[..., 2] * 0.114
    out.copy_(y.round_() if out.dtype == torch.uint8 else y)


@kernel("grayscale", "torch", "compiled_channels", test_cases=_COMPILED_TESTS)
def torch_compiled_channels(be, case):
    """torch.compile (dynamic=False) of the per-channel expression, which issue 9 measured at
    72.7 % of the H200's ceiling against 48.6 % for ``compiled`` (not yet re-measured with this
    copy into the preallocated output); the report's "x torch" takes the fastest torch variant."""
    from backends.torch import compile_static

    fn = compile_static(_torch_gray_channels)
    return lambda ins, outs: fn(ins["img"], outs["out"])


# ---- cuda -----------------------------------------------------------------------------------



_CUDA_GRAYSCALE = source(__file__, "grayscale.cu")
_CUDA_BLOCK = 256  # threads per block


def _cuda_grayscale(be, case, entry: str, pixels_per_thread: int):
    import numpy as np

    fn = be.compile(_CUDA_GRAYSCALE, entry, {"GRAY_FP32": int(case.dtype == "fp32")})
    npix = case["h"] * case["w"]
    grid, block = (max(1, -(-npix // (pixels_per_thread * _CUDA_BLOCK))),), (_CUDA_BLOCK,)
    return lambda ins, outs: be.launch(fn, grid, block, [ins["img"], outs["out"], np.int64(npix)])


@kernel("grayscale", "cuda", "naive")
def cuda_naive(be, case):
    """One pixel per thread: three scalar loads, one scalar store."""
    return _cuda_grayscale(be, case, "grayscale_naive", 1)


@kernel("grayscale", "cuda", "vec16")
def cuda_vec16(be, case):
    """16-byte accesses: per thread three 16-byte loads and one 16-byte store (16 u8 pixels or 4 fp32
    pixels); the last thread does its partial group one pixel at a time."""
    return _cuda_grayscale(be, case, "grayscale_vec16", 16 if case.dtype == "u8" else 4)


# ---- triton ---------------------------------------------------------------------------------


@kernel("grayscale", "triton", "naive")
def triton_naive(be, case):
    """1024 pixels per program, 4 warps: three stride-3 channel gathers, one contiguous store."""
    from .grayscale_triton import grayscale_naive

    npix = case["h"] * case["w"]
    grid = (-(-npix // 1024),)
    return lambda ins, outs: grayscale_naive[grid](ins["img"], outs["out"], npix, BLOCK=1024, num_warps=4)


@kernel("grayscale", "triton", "vec4_split")
def triton_vec4_split(be, case):
    """Quads of 4 pixels: three aligned 4-element vector loads (16 B for fp32, 4 B for u8), lanes
    split in registers, one 4-element vector store; 1024 quads per program, 8 warps."""
    from .grayscale_triton import grayscale_vec4_split

    npix, quads = case["h"] * case["w"], 1024
    grid = (-(-npix // (4 * quads)),)
    return lambda ins, outs: grayscale_vec4_split[grid](ins["img"], outs["out"], npix, BLOCK=quads,
                                                        num_warps=8)


# ---- opencl ---------------------------------------------------------------------------------



_OPENCL_GRAYSCALE = source(__file__, "grayscale.cl")


def _opencl_grayscale(be, case, entry: str, per_item: int):
    import numpy as np

    n = case["h"] * case["w"]
    if 3 * n >= 2**32:
        raise ValueError(f"{entry}: 32-bit indices, 3*n={3 * n} >= 2^32")
    k = be.compile(_OPENCL_GRAYSCALE, entry, {"U8": int(case.dtype == "u8")})
    grid = (max(1, -(-n // (256 * per_item))),)
    return lambda ins, outs: be.launch(k, grid, (256,), [ins["img"], outs["out"], np.uint32(n)])


@kernel("grayscale", "opencl", "naive")
def opencl_naive(be, case):
    """One pixel per work-item: three scalar loads, one scalar store."""
    return _opencl_grayscale(be, case, "grayscale_naive", 1)


@kernel("grayscale", "opencl", "vec16")
def opencl_vec16(be, case):
    """16-byte loads and stores: 16 u8 pixels (3 uint4 in, 1 uint4 out) or 4 fp32 pixels per
    work-item; exact integer rounding for u8; scalar tail."""
    return _opencl_grayscale(be, case, "grayscale_vec16", 16 if case.dtype == "u8" else 4)


# ---- webgpu ---------------------------------------------------------------------------------



_WEBGPU_GRAYSCALE = source(__file__, "grayscale.wgsl")


def _webgpu_grayscale(be, case, entry: str, per_item: int):
    import numpy as np

    n = case["h"] * case["w"]
    pipe = be.compile(_WEBGPU_GRAYSCALE, entry, {"DTYPE": case.dtype})
    grid = be.grid_2d(-(-n // (256 * per_item)))
    params = np.array([n], np.uint32)
    return lambda ins, outs: be.launch(pipe, grid, None, [ins["img"], outs["out"], params])


@kernel("grayscale", "webgpu", "naive")
def webgpu_naive(be, case):
    """u8: one invocation per output u32 word (4 pixels; WGSL has no 8-bit type); fp32: one
    invocation per pixel."""
    return _webgpu_grayscale(be, case, "grayscale_naive", 4 if case.dtype == "u8" else 1)


@kernel("grayscale", "webgpu", "vec16")
def webgpu_vec16(be, case):
    """16-byte loads and stores: 16 u8 pixels (3 vec4<u32> in, 1 out) or 4 fp32 pixels per
    invocation; exact integer rounding for u8."""
    return _webgpu_grayscale(be, case, "grayscale_vec16", 16 if case.dtype == "u8" else 4)
