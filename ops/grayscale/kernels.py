"""grayscale kernels: one registration per (backend, variant). See ops/vector_add/kernels.py."""

from __future__ import annotations

from suite.registry import kernel

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


@kernel("grayscale", "torch", "compiled")
def torch_compiled(be, case):
    """The same function through torch.compile (Inductor fuses it into one kernel)."""
    import torch

    fn = torch.compile(_torch_gray, dynamic=False)
    return lambda ins, outs: fn(ins["img"], outs["out"])


# ---- cuda -----------------------------------------------------------------------------------

# ---- triton ---------------------------------------------------------------------------------

# ---- opencl ---------------------------------------------------------------------------------

# ---- webgpu ---------------------------------------------------------------------------------
