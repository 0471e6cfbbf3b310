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

# ---- webgpu ---------------------------------------------------------------------------------
