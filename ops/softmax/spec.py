"""softmax: y = exp(x − max) / Σ exp(x − max) along each row of a row-major [M, N] matrix.

Storage dtypes ``fp32`` and ``bf16`` (raw uint16 words in and out); the arithmetic is fp32 in both
(precision = dtype). Bytes: x read once, y written once → 2·M·N·itemsize (what a kernel that
keeps each row on chip moves; multi-read variants are rated against the same count). Flops:
5·M·N, for information (max, subtract, scale by log2 e, exp2 + add, multiply by 1/sum).

Inputs: each row is one of six kinds (row index mod 6), so every test case of ≥ 6 rows has all:
0 normal N(0, 3²); 1 N(0, 1)·1e4 (almost one-hot; exp overflows without the max subtraction);
2 N(0, 2²) + 1e4 and 3 N(0, 2²) − 1e4 (a kernel that skips the max, or starts its max at 0,
gives Inf/NaN or 0/0); 4 N(0, 3²) with ~10 % −inf entries; 5 uniform [−8, 8) with ~50 % −inf.
A row always keeps at least one finite entry: softmax of an all −inf row is undefined and is
never generated. The output must then be finite everywhere (the checker fails any Inf/NaN).

Checking: cases up to ``FULL_MAX`` elements are compared with the whole float64 reference
(``references/softmax.py``); bench shapes (up to 2^29 elements: a 4 GiB float64 reference) are
compared by ``verify`` against the same float64 reference recomputed block by block from the
inputs, on every element, so nothing of that size is stored.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from references.numerics import decode, encode
from references.softmax import softmax_rows
from suite.check import CheckResult, compare, merge, reindex
from suite.spec import Arg, Case, OpSpec, Tolerance, np_dtype

#: unit roundoff of fp32
U32 = 2.0**-24
#: unit roundoff of bf16 (8 significand bits): round to nearest errs by ≤ 2^-8 relative
U_BF16 = 2.0**-8
#: element-wise ulps: exp2 (≤ 3 ulp: OpenCL full profile, WGSL; CUDA exp2f 2) + the product by
#: log2 e (1) + the division or reciprocal-multiply (≤ 2.5 ulp: OpenCL/WGSL division) → 8
C_ELEM = 8
#: ulps per level of the row sum (the same constant and argument as ops/reduction: c·ε·⌈log2 N⌉)
C_SUM = 16
#: absolute term, in ulps of 1: rounding (x − m)·log2 e to fp32 perturbs exp by |t|·ε relative
#: (t = (x − m)·log2 e; WGSL's exp2 adds 2·|t| ulp), i.e. y·|t|·3ε ≤ 3ε·log2 e/e < 2ε in
#: absolute terms since y ≤ e^(x−m) and |d|·e^d ≤ 1/e; 4 covers it (and subnormal outputs)
C_ABS = 4
#: above this many elements, check through ``verify`` (blockwise recomputed reference)
FULL_MAX = 1 << 22
#: rows per block of the blockwise check: ≈ 2^20 elements
_BLOCK_ELEMS = 1 << 20


def signature(case: Case) -> dict[str, Arg]:
    m, n = case["m"], case["n"]
    return {"x": Arg((m, n), case.dtype, "in"), "y": Arg((m, n), case.dtype, "out")}


def row_values(m: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """The six row kinds of the module docstring, float32, shape [m, n] (no all −inf row)."""
    x = rng.standard_normal((m, n), dtype=np.float32)
    kind = np.arange(m) % 6
    scale = np.choose(kind, [3.0, 1e4, 2.0, 2.0, 3.0, 0.0]).astype(np.float32)[:, None]
    shift = np.choose(kind, [0.0, 0.0, 1e4, -1e4, 0.0, 0.0]).astype(np.float32)[:, None]
    x *= scale
    x += shift
    k5 = kind == 5
    if k5.any():
        x[k5] = rng.uniform(-8.0, 8.0, size=(int(k5.sum()), n)).astype(np.float32)
    for k, p in ((4, 0.1), (5, 0.5)):
        rows = np.flatnonzero(kind == k)
        if rows.size and n > 1:
            drop = rng.random((rows.size, n)) < p
            keep = rng.integers(0, n, size=rows.size)  # one entry per row always stays finite
            drop[np.arange(rows.size), keep] = False
            sub = x[rows]
            sub[drop] = -np.inf
            x[rows] = sub
    return x


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": encode(row_values(case["m"], case["n"], rng), case.dtype)}


def reference(case: Case, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if case["m"] * case["n"] > FULL_MAX:
        return {}  # checked block by block in ``verify``
    return {"y": softmax_rows(decode(inputs["x"], case.dtype))}


def tolerance(case: Case) -> Tolerance:
    """|y − ref| ≤ atol + rtol·|ref| element-wise, and the relative error norm ≤ rtol.

    fp32: rtol = (8 + 16·⌈log2 N⌉)·ε. 8 ulps for the element's own operations (exp2 ≤ 3 ulp,
    the scale by log2 e, the division ≤ 2.5 ulp); the row sum Σ e ≥ 1 has only positive terms,
    so its relative error is bounded by the depth of its longest chain of dependent additions
    times ε. Kernels add per-thread serial chains (≤ ~300 terms at the test sizes) and then a
    tree of depth ⌈log2(threads)⌉; serial chains' independent zero-mean errors grow like √d
    (Higham & Mary 2019), so 16·⌈log2 N⌉ covers both, as in ops/reduction; the online form's
    rescales (one exp2 and one product per new running maximum, a few per thread) fit in it.
    atol = 4ε: the rounding of the exponent argument, see ``C_ABS``.
    bf16 output: plus rounding the fp32 result to bf16 (2^-8 relative, half an ulp of an 8-bit
    significand; 2^-9 is the typical, not the largest, relative half ulp). Inputs are bf16
    values, exact in fp32, so the fp32 part is the same.
    An fp16 or bf16 sum accumulator errs by ≥ 2^-12 (fp16) / 2^-9 (bf16) per addition: far
    above 16·⌈log2 N⌉·ε at every N ≥ 2 (and above 2^-8 for bf16 over a 1000-wide row)."""
    n = case["n"]
    levels = math.ceil(math.log2(n)) if n > 1 else 0
    r32 = (C_ELEM + C_SUM * levels) * U32
    if case.dtype == "bf16":
        rtol = U_BF16 + r32 * (1 + U_BF16)
        why = f"bf16 output: 2^-8 (rounding) + fp32 math ({C_ELEM} + {C_SUM}·⌈log2 N⌉)·ε, atol {C_ABS}ε"
    else:
        rtol = r32
        why = f"fp32: ({C_ELEM} + {C_SUM}·⌈log2 N⌉)·ε (exp2, scale, divide; sum tree depth), atol {C_ABS}ε"
    return Tolerance(atol=C_ABS * U32, rtol=rtol, rel_norm=rtol, reason=why)


def _merge(parts: list[CheckResult], ref2: list[float]) -> CheckResult:
    """``check.merge`` of the row blocks, with the relative error norm of the whole output (from
    each block's norm and its reference's squared norm ``ref2``), not the largest block's."""
    total = merge(parts)
    err2 = sum(p.rel_norm_err**2 * r2 for p, r2 in zip(parts, ref2, strict=True))
    total.rel_norm_err = math.sqrt(err2 / sum(ref2)) if sum(ref2) else math.sqrt(err2)
    return total


def verify(case: Case, inputs: dict, outs: dict[str, np.ndarray], refs: dict, tol: Tolerance) -> CheckResult:
    """Every element against the float64 reference, recomputed block by block from the inputs
    (bench shapes); small cases use the stored reference. Row blocks run on all cores."""
    got = outs["y"]
    if "y" in refs:
        from suite.check import compare_all

        return compare_all({"y": got}, {"y": refs["y"]}, tol)
    m, n = case["m"], case["n"]
    x = inputs["x"]
    rows = max(1, _BLOCK_ELEMS // n)

    def block(r0: int) -> tuple[CheckResult, float]:
        r1 = min(m, r0 + rows)
        want = softmax_rows(decode(x[r0:r1], case.dtype))
        res = reindex(compare(got[r0:r1], want, tol, "y"), lambda i, j: (int(i) + r0, int(j)))
        return res, float(np.dot(want.ravel(), want.ravel()))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as ex:
        parts, ref2 = zip(*ex.map(block, range(0, m, rows)), strict=True)
    total = _merge(list(parts), list(ref2))
    if total.ok and total.rel_norm_err > tol.rel_norm:
        total.ok = False
        total.message = f"y: relative error norm {total.rel_norm_err:.3g} > {tol.rel_norm:g} ({tol.reason})"
    return total


def _name(m: int, n: int, dtype: str) -> str:
    return f"{m}x{n}" + ("" if dtype == "fp32" else f",{dtype}")


def _cases(shapes, dtype: str, seed0: int) -> list[Case]:
    return [Case(_name(m, n, dtype), {"m": m, "n": n}, dtype, seed0 + i) for i, (m, n) in enumerate(shapes)]


#: widths 1, 7, 1000, 1025 (no multiple of any vector or block), 4096 (16-byte vectors, several
#: per thread), 70000 (wider than any register tile: the long-row re-read and split paths);
#: row counts 1 and odd ones, ≥ 6 rows (all six row kinds) in most; few cases: the set runs on
#: four backends and the Triton interpreter in well under a minute
TEST_FP32 = [(1, 1025), (5, 1), (13, 7), (17, 1000), (6, 4096), (5, 70000)]
TEST_BF16 = [(13, 7), (9, 1025), (5, 70000)]
BENCH_GPU = [(16384, 16384), (4096, 131072), (65536, 1024)]
BENCH_CPU = [(1024, 4096), (256, 65536)]

SPEC = OpSpec(
    name="softmax",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=lambda c: 2 * c["m"] * c["n"] * np_dtype(c.dtype).itemsize,
    flops=lambda c: 5 * c["m"] * c["n"],
    tolerance=tolerance,
    test_cases=_cases(TEST_FP32, "fp32", 8100) + _cases(TEST_BF16, "bf16", 8200),
    bench_cases={"gpu": _cases(BENCH_GPU, "fp32", 8300) + _cases(BENCH_GPU, "bf16", 8400),
                 "cpu": _cases(BENCH_CPU, "fp32", 8500) + _cases(BENCH_CPU[:1], "bf16", 8600)},
    description="y = softmax(x) along rows (max-subtracted, fp32 math)",
    verify=verify,
)
