"""Known-wrong softmax kernels (torch, real arithmetic), registered only when
SOLBENCH_EXTRA_KERNELS names this module. The softmax tolerances must reject each of them."""

from __future__ import annotations

from suite.registry import kernel


def _views(case, ins, outs):
    import torch

    if case.dtype == "bf16":
        return ins["x"].view(torch.bfloat16).float(), outs["y"].view(torch.bfloat16)
    return ins["x"], outs["y"]


@kernel("softmax", "torch", "wrong_no_max")
def no_max(be, case):
    """exp(x) / Σ exp(x) without subtracting the max: Inf/NaN on the ±1e4 rows."""
    import torch

    def run(ins, outs):
        x, y = _views(case, ins, outs)
        e = torch.exp(x.float())
        y.copy_((e / e.sum(-1, keepdim=True)).to(y.dtype))
    return run


@kernel("softmax", "torch", "wrong_low_precision_sum")
def low_precision_sum(be, case):
    """Max-subtracted, but Σ exp accumulated in fp16 (fp32 case) / bf16 (bf16 case): 32 serial
    per-lane partials, then a pairwise tree, every addition rounded to the 16-bit type."""
    import torch

    def run(ins, outs):
        x, y = _views(case, ins, outs)
        x = x.float()
        e = torch.exp(x - x.amax(-1, keepdim=True))
        lo = torch.bfloat16 if case.dtype == "bf16" else torch.float16
        n = e.shape[-1]
        pad = torch.zeros(e.shape[0], (-n) % 32)
        t = torch.cat([e, pad], -1).to(lo).reshape(e.shape[0], -1, 32)
        acc = torch.zeros(e.shape[0], 32, dtype=lo)
        for k in range(t.shape[1]):  # serial per lane
            acc = (acc + t[:, k]).to(lo)
        while acc.shape[-1] > 1:  # pairwise
            acc = (acc[:, 0::2] + acc[:, 1::2]).to(lo)
        y.copy_((e / acc.float()).to(y.dtype))
    return run
