"""scan: inclusive prefix sum y[i] = Σ_{j<=i} x[j] over a 1-D array (fp32, int32 exact).

Bytes: read x once, write y once → 2·n·itemsize. Flops: n (one add per element).
Inputs as for ``reduction``: integer-valued floats in ±[1, 100] by default, whose running sums
(and every tile's partial and carry) are exact in fp32, so the check is exact at every size; ``rand``
cases: floats in [0.5, 1.5) of one sign, so the running Σ|x| of element i equals |y[i]|;
int32 over the full range, every y[i] modulo 2^32 (two's complement).
"""

from __future__ import annotations

import math

import numpy as np

from ops.reduction.spec import EPS32, exact_premise, one_signed_inputs
from references.scan_reduce import inclusive_scan_reference
from suite.spec import Arg, Case, OpSpec, Tolerance, np_dtype

#: constant of the element-wise bound c·ε·log2(n)·Σ_{j<=i}|x_j| (see ``tolerance``)
C_TOL = 16

# 1, 2, sizes that are multiples of no tile size, more than one tile, and 1_050_001 > 1024²:
# three levels of the reduce-then-scan hierarchy at 1024-element tiles (CUDA/OpenCL/WGSL).
TEST_SIZES = [1, 2, 3, 5, 1000, 1025, 4097, 65_537, 300_007, 1_050_001]


def signature(case: Case) -> dict[str, Arg]:
    n = case["n"]
    return {"x": Arg((n,), case.dtype, "in"), "y": Arg((n,), case.dtype, "out")}


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": one_signed_inputs(case, rng)}


def reference(case: Case, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    y = inclusive_scan_reference(x["x"])
    if not case.dims.get("rand", 0):
        exact_premise(x["x"], y)  # the premise from the prefix sums just made, not a second scan
    return {"y": y}


def tolerance(case: Case) -> Tolerance:
    if case.dtype == "i32":
        return Tolerance.exact("int32 scan: exact, every prefix modulo 2^32 (two's-complement wrap-around)")
    if not case.dims.get("rand", 0):
        return Tolerance.exact("integer-valued inputs: every prefix, tile partial and carry is an integer "
                               "< 2^24, exact in fp32; a lost tile or carry shows")
    # Element-wise: y[i] is a sum of i+1 terms through a tree of depth ~⌈log2 n⌉ (block scans,
    # the hierarchy's levels) plus serial chains (per-thread items, the carry of a look-back
    # over n/tile tiles). Worst case d·ε·Σ_{j<=i}|x_j| for depth d; the chains' rounding errors
    # are independent and zero-mean, so they grow like √chain (Higham & Mary 2019): simulated
    # in fp32 (serial in-tile scans, look-back chains over 2^10..2^16 tiles, n up to 2^26) the
    # worst element stays below ~110ε·Σ|x|. c = 16 covers that. One-signed inputs make the
    # running Σ|x| equal |y[i]|, so the bound is exactly rtol·|ref| element by element.
    d = max(1, math.ceil(math.log2(case["n"])))
    return Tolerance(atol=0.0, rtol=C_TOL * EPS32 * d, rel_norm=C_TOL * EPS32 * d,
                     reason=f"fp32 scan: {C_TOL}·ε·⌈log2 n⌉·running Σ|x| per element")


def _cases(sizes, dtype, seed0, neg=False, rand=False):
    sfx = ("" if dtype == "fp32" else f",{dtype}") + (",rand" if rand else "") + (",neg" if neg else "")
    flags = {**({"rand": 1} if rand else {}), **({"neg": 1} if neg else {})}
    return [Case(f"n={n}{sfx}", {"n": n, **flags}, dtype, seed0 + i) for i, n in enumerate(sizes)]


def _bench(n: int, label: str) -> list[Case]:
    return [Case(f"n={label}", {"n": n}, "fp32", 17), Case(f"n={label},i32", {"n": n}, "i32", 18)]


SPEC = OpSpec(
    name="scan",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=lambda c: 2 * c["n"] * np_dtype(c.dtype).itemsize,
    flops=lambda c: c["n"],
    tolerance=tolerance,
    test_cases=_cases(TEST_SIZES, "fp32", 500)
    + _cases([1025, 65_537, 1_050_001], "fp32", 570, rand=True)
    + _cases([2, 4097], "fp32", 550, neg=True, rand=True)
    + _cases([1, 2, 1025, 4097, 65_537, 1_050_001], "i32", 600),
    bench_cases={"gpu": _bench(2**28, "2^28"), "cpu": _bench(2**24, "2^24")},
    description="y = cumsum(x) (inclusive)",
)
