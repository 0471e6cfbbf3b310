"""Known-wrong matmuls (torch, on any device), registered only when SOLBENCH_EXTRA_KERNELS names
this module. Each computes in fp32 and spoils the result the way a buggy GEMM kernel would."""

from __future__ import annotations

from suite.registry import kernel


def _operands(ins, dtype: str):
    import torch

    a, b = ins["A"], ins["B"]
    if dtype == "bf16":
        a, b = a.view(torch.bfloat16), b.view(torch.bfloat16)
    return a.float(), b.float()


def _store(outs, c, dtype: str) -> None:
    import torch

    out = outs["C"].view(torch.bfloat16) if dtype == "bf16" else outs["C"]
    out.copy_(c)


@kernel("matmul", "torch", "control_fp32_compute", dtypes=("bf16", "fp16", "fp32"))
def control(be, case):
    """Not wrong: the product in fp32, rounded once to the storage type — the control the checker
    must accept (torch's own bf16 matmul on a CPU without bf16 units takes minutes at 2048³)."""

    def run(ins, outs):
        a, b = _operands(ins, case.dtype)
        _store(outs, a @ b, case.dtype)

    return run


@kernel("matmul", "torch", "wrong_one_tile", dtypes=("bf16", "fp16", "fp32"))
def one_tile(be, case):
    """Right everywhere but one 128×128 tile of C, 10 % off (a tile whose epilogue misbehaves)."""

    def run(ins, outs):
        a, b = _operands(ins, case.dtype)
        c = a @ b
        r0 = min(128, max(0, c.shape[0] - 128))
        c[r0:r0 + 128, :128] *= 0.9
        _store(outs, c, case.dtype)

    return run


@kernel("matmul", "torch", "wrong_skip_k_tail", dtypes=("bf16", "fp16", "fp32"))
def skip_k_tail(be, case):
    """Drops the K remainder after the last full 128-wide K tile (the last tile if K % 128 == 0)."""
    k = case["k"]
    kk = k // 128 * 128 if k % 128 else max(0, k - 128)

    def run(ins, outs):
        a, b = _operands(ins, case.dtype)
        _store(outs, a[:, :kk] @ b[:kk], case.dtype)

    return run


@kernel("matmul", "torch", "wrong_fp16_accumulate", dtypes=("bf16", "fp16"))
def fp16_accumulate(be, case):
    """Accumulates 64-wide K slices in an fp16 accumulator (rounded after every slice)."""
    import torch

    def run(ins, outs):
        a, b = _operands(ins, case.dtype)
        acc = torch.zeros((a.shape[0], b.shape[1]), dtype=torch.float16, device=a.device)
        for k0 in range(0, a.shape[1], 64):
            acc = (acc.float() + a[:, k0:k0 + 64] @ b[k0:k0 + 64]).half()
        _store(outs, acc.float(), case.dtype)

    return run
