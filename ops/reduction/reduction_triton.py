"""Triton sum reduction: out = Σ x (fp32/fp16 → fp32, int32 → int32).

Two kernels, both deterministic (fixed reduction order, no atomics):

- ``reduce_tl_sum``: program p loads BLOCK elements [p·BLOCK, (p+1)·BLOCK) and writes their
  ``tl.sum`` (a tree) to partials[p]; applied again to the partials until one value is left.
  Reads n·itemsize, writes ⌈n/BLOCK⌉·acc_size per level.
- ``reduce_persistent``: a grid of a few programs per SM; program p adds tiles p, p+P, p+2P, ...
  into a BLOCK-wide register accumulator (coarsening: each lane serially sums its column), then one
  ``tl.sum`` → partials[p]; ``reduce_tl_sum`` on one program finishes. Reads n·itemsize once.
"""

import triton
import triton.language as tl


@triton.jit
def reduce_tl_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)  # 64-bit: n·itemsize may exceed 2^31
    x = tl.load(x_ptr + offs, mask=offs < n, other=0).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + pid, tl.sum(x, axis=0))


@triton.jit
def reduce_persistent(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    step = tl.num_programs(0).to(tl.int64) * BLOCK
    acc = tl.zeros((BLOCK,), dtype=part_ptr.dtype.element_ty)
    for start in range(pid * BLOCK, n, step):  # grid-stride over tiles, 64-bit offsets
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0).to(acc.dtype)
    tl.store(part_ptr + pid, tl.sum(acc, axis=0))
