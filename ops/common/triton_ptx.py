"""Triton helpers for PTX instructions Triton does not expose (compiled CUDA only: not the
interpreter, not ROCm; callers keep them behind their own flags)."""

import triton
import triton.language as tl


@triton.jit
def prefetch_l2(ptrs):
    """Ask the 128-byte line at each of ``ptrs`` (a pointer tensor; every address must be valid)
    into L2: prefetch.global.L2 — nothing returns, nothing waits, no register stays held."""
    addr = ptrs.to(tl.int64, bitcast=True)
    tl.inline_asm_elementwise("prefetch.global.L2 [$1];\nmov.u32 $0, 0;", "=r,l", [addr], dtype=tl.int32,
                              is_pure=False, pack=1)
