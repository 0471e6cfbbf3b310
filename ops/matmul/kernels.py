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
