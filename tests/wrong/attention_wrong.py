"""Known-wrong attention kernels (torch, real fp32 arithmetic), registered only when
SOLBENCH_EXTRA_KERNELS names this module. Each computes what a buggy kernel would; the attention
check must reject each on the cases where the bug changes the result."""

from __future__ import annotations

import math

from suite.registry import kernel

#: the K/V tile the skipping kernel leaves out: keys [SKIP0, SKIP0 + SKIP_N)
SKIP0, SKIP_N = 64, 64


def _f32(case, ins):
    import torch

    def f(t):
        return (t.view(torch.bfloat16) if case.dtype == "bf16" else t).float()

    return f(ins["Q"]), f(ins["K"]), f(ins["V"])


def _store(case, outs, o) -> None:
    import torch

    out = outs["O"].view(torch.bfloat16) if case.dtype == "bf16" else outs["O"]
    out.copy_(o)


def _attend(case, ins, outs, *, shift: int = 0, max_sub: bool = True, skip: bool = False) -> None:
    """fp32 attention with the bug: causal mask j ≤ i + shift; no max subtraction; keys of one
    tile dropped."""
    import torch

    from ops.attention.spec import causal

    q, k, v = _f32(case, ins)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(case["d"])
    n = s.shape[-1]
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    drop = torch.zeros((n, n), dtype=torch.bool)
    if causal(case):
        drop |= j > i + shift
    if skip:
        drop |= (j >= SKIP0) & (j < SKIP0 + SKIP_N)
        drop[:, 0] = False  # every row keeps key 0 (no empty row: the bug is the missing tile)
    s = s.masked_fill(drop, float("-inf"))
    e = torch.exp(s - s.amax(-1, keepdim=True)) if max_sub else torch.exp(s)
    _store(case, outs, (e / e.sum(-1, keepdim=True)) @ v)


@kernel("attention", "torch", "control_fp32")
def control(be, case):
    """Not wrong: fp32 attention with the max subtracted, rounded once (the checker must accept)."""
    return lambda ins, outs: _attend(case, ins, outs)


@kernel("attention", "torch", "wrong_mask_off_by_one")
def mask_off_by_one(be, case):
    """Causal mask j ≤ i + 1: each row also sees the next key (the diagonal test written with <=
    on the wrong index)."""
    return lambda ins, outs: _attend(case, ins, outs, shift=1)


@kernel("attention", "torch", "wrong_no_max")
def no_max(be, case):
    """exp(s) / Σ exp(s) without subtracting the row max: Inf/NaN on ±1e4 scores."""
    return lambda ins, outs: _attend(case, ins, outs, max_sub=False)


@kernel("attention", "torch", "wrong_skip_tile")
def skip_tile(be, case):
    """Skips the K/V tile of keys 64..127 (a loop bound or tile index off by one)."""
    return lambda ins, outs: _attend(case, ins, outs, skip=True)
