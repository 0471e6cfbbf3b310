"""A planted Triton kernel (tests/wrong/integrity.py): vector_add whose store mask is
``offs <= n``, one element past the end (the values it writes are right)."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def add_le_n(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs <= n  # one past the end
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a + b, mask=mask)
