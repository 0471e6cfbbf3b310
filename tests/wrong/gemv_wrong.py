"""Known-wrong low-bit GEMVs (torch, any device), registered only when SOLBENCH_EXTRA_KERNELS
names this module (or a test imports it). Each spoils y = W·x the way a buggy kernel would;
``control_fp32`` is right (fp32 compute, one rounding) and must pass the same check."""

from __future__ import annotations

from suite.registry import kernel

GROUP = 128


def _q(case, qweight, swap: bool = False):
    """Integer weights [N, K] as float32 (``swap``: the high nibble taken as the even k)."""
    import torch

    n, k = case["n"], case["k"]
    if case["bits"] == 8:
        return qweight.view(torch.int8).float()
    b = qweight.to(torch.int16)
    lo, hi = (b & 0xF) - 8, (b >> 4) - 8
    pair = (hi, lo) if swap else (lo, hi)
    return torch.stack(pair, dim=-1).reshape(n, k).float()


def _scales(case, scales, transposed: bool = False):
    """Per-element scales [N, K]; ``transposed``: the w4a16 scale array read as if it were stored
    [K/128, N] (group-major), so row n gets other rows' / groups' scales."""
    n, k = case["n"], case["k"]
    s = _tv(scales, case).float()
    if case["bits"] == 8:
        return s[:, None].expand(n, k)
    if transposed:
        s = s.reshape(-1).reshape(k // GROUP, n).t()
    return s.repeat_interleave(GROUP, dim=1)


def _tv(t, case):
    import torch

    return t.view(torch.bfloat16) if case.dtype == "bf16" else t


def _store(outs, y, case):
    _tv(outs["y"], case).copy_(y)


@kernel("gemv_lowbit", "torch", "control_fp32")
def control(be, case):
    """Not wrong: W dequantised in fp32 (exact), fp32 products and sums, one rounding to fp16."""
    def run(ins, outs):
        w = _q(case, ins["qweight"]) * _scales(case, ins["scales"])
        _store(outs, _tv(ins["x"], case).float() @ w.t(), case)

    return run


@kernel("gemv_lowbit", "torch", "wrong_nibble_order")
def nibble_order(be, case):
    """w4a16 unpacked with k even in the HIGH nibble (the other common convention)."""
    def run(ins, outs):
        w = _q(case, ins["qweight"], swap=case["bits"] == 4) * _scales(case, ins["scales"])
        _store(outs, _tv(ins["x"], case).float() @ w.t(), case)

    return run


@kernel("gemv_lowbit", "torch", "wrong_scale_group")
def scale_group(be, case):
    """w4a16 scales indexed group-major ([K/128, N]) instead of row-major ([N, K/128])."""
    def run(ins, outs):
        w = _q(case, ins["qweight"]) * _scales(case, ins["scales"], transposed=case["bits"] == 4)
        _store(outs, _tv(ins["x"], case).float() @ w.t(), case)

    return run


@kernel("gemv_lowbit", "torch", "wrong_fp16_accumulate")
def fp16_accumulate(be, case):
    """Exact fp32 products q·s·x, summed one k at a time in an fp16 accumulator (every partial
    sum rounded to fp16; fp16 for bf16 cases too)."""
    import torch

    def run(ins, outs):
        w = _q(case, ins["qweight"]) * _scales(case, ins["scales"])
        x = _tv(ins["x"], case).float()
        acc = torch.zeros((x.shape[0], w.shape[0]), dtype=torch.float16, device=x.device)
        for k in range(w.shape[1]):
            acc = (acc.float() + x[:, k:k + 1] * w[:, k][None, :]).half()
        _store(outs, acc, case)

    return run
