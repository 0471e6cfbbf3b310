"""vector_add in Triton: c[i] = a[i] + b[i] for 0 <= i < n (fp32 or fp16, the pointers' type).

Program p → elements [p·BLOCK, (p+1)·BLOCK), masked at n; grid = ceil(n / BLOCK) programs.
Triton splits the block over num_warps·32 threads and vectorises each thread's contiguous
elements into 16-byte accesses when it can prove alignment (pointers are 16-byte aligned and n
is specialised as a multiple of 16; otherwise the mask forces scalar accesses). The variants
differ only in launch constants (see ops/vector_add/kernels.py): ``naive`` BLOCK=1024,
4 warps (8 elements per thread); ``large_block`` BLOCK=8192, 8 warps (32 elements = 128 B of each
input per thread in flight for fp32).
Bytes: read a and b, write c → 3·n·itemsize. Flops: n.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def vector_add_naive(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)  # 64-bit offsets: n may exceed 2^31
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)  # read a: BLOCK elements
    b = tl.load(b_ptr + offs, mask=mask)  # read b: BLOCK elements
    tl.store(c_ptr + offs, a + b, mask=mask)  # write c, in the element type (fp16 add for fp16)
