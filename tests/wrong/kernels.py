"""Known-wrong kernels, registered only when SOLBENCH_EXTRA_KERNELS names this module.

A checker that passes any of them is broken. Real kernels (OpenCL C on PoCL, torch), not mocks.
"""

from __future__ import annotations

import os
import signal
import time

import numpy as np

from suite.registry import kernel, source

CL = source(__file__, "wrong.cl")


def _cl(entry):
    def factory(be, case):
        n = case["n"]
        k = be.compile(CL, entry)
        args = lambda ins, outs: [ins["a"], ins["b"], outs["c"], np.int32(n)]  # noqa: E731
        return lambda ins, outs: be.launch(k, (-(-n // 64),), (64,), args(ins, outs))
    return factory


for _entry in ("add_skip_tail", "add_99_percent", "add_oob_read"):
    kernel("vector_add", "opencl", "wrong_" + _entry[4:], dtypes=("fp32",))(_cl(_entry))


@kernel("vector_add", "torch", "wrong_noop")
def noop(be, case):
    """Launches nothing: the poisoned output stays."""
    return lambda ins, outs: None


@kernel("vector_add", "torch", "wrong_fp16_accumulate", dtypes=("fp32",))
def fp16_accumulate(be, case):
    """Adds in fp16: right to ~1e-3, wrong for an fp32 add."""

    def run(ins, outs):
        outs["c"].copy_(ins["a"].half() + ins["b"].half())
    return run


@kernel("vector_add", "torch", "wrong_nan")
def nan_out(be, case):
    """Correct except one NaN."""
    import torch

    def run(ins, outs):
        torch.add(ins["a"], ins["b"], out=outs["c"])
        outs["c"][len(outs["c"]) // 2] = float("nan")
    return run


@kernel("grayscale", "torch", "wrong_truncate", dtypes=("u8",))
def truncate(be, case):
    """Truncates instead of rounding: off by one LSB wherever the fraction is ≥ .5."""
    import torch

    def run(ins, outs):
        w = torch.tensor([0.299, 0.587, 0.114])
        outs["out"].copy_((ins["img"].float() * w).sum(-1).floor())
    return run


@kernel("grayscale", "torch", "wrong_fixed_point", dtypes=("u8",))
def fixed_point(be, case):
    """8-bit fixed-point weights (77, 150, 29)/256: a common shortcut, 1 LSB off off the ties."""
    def run(ins, outs):
        x = ins["img"].int()
        outs["out"].copy_((77 * x[..., 0] + 150 * x[..., 1] + 29 * x[..., 2] + 128) >> 8)
    return run


@kernel("vector_add", "torch", "crash_segfault")
def segfault(be, case):
    """Kills its own process with SIGSEGV: must become an error row, and the run goes on."""
    return lambda ins, outs: os.kill(os.getpid(), signal.SIGSEGV)


@kernel("vector_add", "torch", "crash_hang")
def hang(be, case):
    """Never returns: must become a timeout row."""
    return lambda ins, outs: time.sleep(3600)


@kernel("vector_add", "torch", "broken_compile")
def broken(be, case):
    """Fails while building, like a compile error."""
    raise RuntimeError("error: expected ';' (build log of a broken kernel)")
