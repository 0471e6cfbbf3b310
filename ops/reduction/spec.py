"""reduction: out = Σ x over a 1-D array (fp32 in/out, fp16 in with fp32 accumulation, int32).

Bytes: read x once, write one accumulator → n·itemsize + 4. Flops: n (one add per element).
Inputs (shared with ``scan``, see ``one_signed_inputs``):

* fp32/fp16, by default: integers in ±[1, 100] of random sign. Every partial sum any summation
  order forms is an integer far below 2^24 in magnitude, so fp32 accumulation is *exact* in any
  order and the check is exact: a dropped element or tile changes the sum at every size (a
  relative bound c·ε·⌈log2 n⌉ at n = 2^28 would admit ~7000 dropped elements).
* fp32/fp16 cases marked ``rand``: floats in [0.5, 1.5) of one sign (``neg``: negative), so
  Σ|x| = |Σx|: the rounding of real fp32 accumulation, held to c·ε·⌈log2 n⌉·Σ|x|.
* int32: the full int32 range; the sum wraps modulo 2^32 (two's complement), which is what an
  int32 accumulator gives in any order. A kernel that accumulates through float32 fails.
"""

from __future__ import annotations

import math

import numpy as np

from references.scan_reduce import sum_reference
from suite.spec import Arg, Case, OpSpec, Tolerance, np_dtype

#: accumulator / output dtype per input dtype
ACC = {"fp32": "fp32", "fp16": "fp32", "i32": "i32"}

#: ε of the fp32 accumulator (unit roundoff 2^-24)
EPS32 = 2.0**-24
#: constant of the bound c·ε·log2(n)·Σ|x| (see ``tolerance``)
C_TOL = 16

# 1, 2, sizes that are multiples of no block size (4·32, 256, 512, 1024, 4096, 8192 ...),
# more than one block, and a size whose tree/partials need 3 levels at 1024 elements per block.
TEST_SIZES = [1, 2, 3, 5, 1000, 1025, 4097, 65_537, 300_007, 1_050_001]


def signature(case: Case) -> dict[str, Arg]:
    n = case["n"]
    return {"x": Arg((n,), case.dtype, "in"), "out": Arg((1,), ACC[case.dtype], "out")}


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"x": one_signed_inputs(case, rng)}


#: magnitude of the integer-valued float inputs (see the module docstring)
INT_MAX_ABS = 100


def one_signed_inputs(case: Case, rng: np.random.Generator) -> np.ndarray:
    """Shared with ``scan``: full-range int32; integer-valued floats in ±[1, 100]; or (``rand``)
    floats in ±[0.5, 1.5) of one sign per case."""
    n, dt = case["n"], np_dtype(case.dtype)
    if dt.kind == "i":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    if not case.dims.get("rand", 0):
        # signed magnitudes in place (2^28 values at bench size: every fresh array costs ~1 s of
        # page faults on the host)
        v = rng.integers(-INT_MAX_ABS, INT_MAX_ABS, size=n, dtype=np.int32)
        v[v >= 0] += 1  # ±[1, 100], never 0
        return v.astype(dt)
    v = rng.random(n, dtype=np.float32)
    v += 0.5
    if case.dims.get("neg", 0):
        np.negative(v, out=v)
    return v.astype(dt, copy=False)


def exact_premise(x: np.ndarray, prefix: np.ndarray | None = None) -> None:
    """Integer-valued float inputs: every range sum (a tile's partial, a carry) is bounded by
    twice the largest prefix sum; below 2^24 all of them are exact in fp32. Raises if not.
    ``prefix``: x's float64 prefix sums where the caller has them (scan's reference)."""
    if x.dtype.kind == "f" and x.size:
        if prefix is not None:
            top = max(float(prefix.max()), -float(prefix.min()))
        else:
            carry, top = 0.0, 0.0  # prefix sums piece by piece (no 2^28-element float64 temporaries)
            for i in range(0, x.size, 1 << 20):
                c = np.cumsum(x[i:i + (1 << 20)], dtype=np.float64)
                c += carry
                top, carry = max(top, float(np.abs(c).max())), float(c[-1])
        worst = 2 * top + INT_MAX_ABS
        if worst >= 2.0**24:
            raise ValueError(f"integer-valued inputs reach partial sums of {worst:.3g} >= 2^24: "
                             "fp32 sums would not be exact (spec bug)")


def reference(case: Case, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if not case.dims.get("rand", 0):
        exact_premise(x["x"])
    return {"out": sum_reference(x["x"])}


def tolerance(case: Case) -> Tolerance:
    if case.dtype == "i32":
        return Tolerance.exact("int32 sum: exact, modulo 2^32 (two's-complement wrap-around is associative)")
    if not case.dims.get("rand", 0):
        return Tolerance.exact("integer-valued inputs: every partial sum is an integer < 2^24, so fp32 "
                               "accumulation is exact in any order; a dropped element or tile shows")
    # Any summation whose longest chain of dependent additions has depth d errs by at most
    # ~d·ε·Σ|x| (Higham, Accuracy & Stability §4.2); a tree has d = ⌈log2 n⌉. GPU kernels add
    # serial chains (per-thread coarsening loops, atomics over ≤2^16 per-thread partials, a
    # look-back over tiles) whose rounding errors are independent and zero-mean, so they grow
    # like √d, not d (Higham & Mary 2019): simulated in fp32 at n = 2^20..2^26 they stay below
    # ~110ε·Σ|x|. c = 16 covers that; fp16 accumulation (ε = 2^-11) or a dropped block fails.
    # Inputs have one sign, so Σ|x| = |Σx| and the bound is rtol·|ref|. fp16 inputs are
    # exact in fp32, so the same bound holds with fp32 accumulation.
    d = max(1, math.ceil(math.log2(case["n"])))
    return Tolerance(atol=0.0, rtol=C_TOL * EPS32 * d, rel_norm=C_TOL * EPS32 * d,
                     reason=f"fp32 accumulation: {C_TOL}·ε·⌈log2 n⌉·Σ|x| (tree depth; serial "
                            f"chains grow as √d)")


def _cases(sizes, dtype, seed0, neg=False, rand=False):
    sfx = ("" if dtype == "fp32" else f",{dtype}") + (",rand" if rand else "") + (",neg" if neg else "")
    flags = {**({"rand": 1} if rand else {}), **({"neg": 1} if neg else {})}
    return [Case(f"n={n}{sfx}", {"n": n, **flags}, dtype, seed0 + i) for i, n in enumerate(sizes)]


def _bench(n: int, label: str) -> list[Case]:
    return [Case(f"n={label}", {"n": n}, "fp32", 7), Case(f"n={label},fp16", {"n": n}, "fp16", 8),
            Case(f"n={label},i32", {"n": n}, "i32", 9)]


SPEC = OpSpec(
    name="reduction",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=lambda c: c["n"] * np_dtype(c.dtype).itemsize + np_dtype(ACC[c.dtype]).itemsize,
    flops=lambda c: c["n"],
    tolerance=tolerance,
    test_cases=_cases(TEST_SIZES, "fp32", 100)
    + _cases([1025, 65_537, 1_050_001], "fp32", 170, rand=True)
    + _cases([2, 4097], "fp32", 150, neg=True, rand=True)
    + _cases([1, 1025, 65_537, 1_050_001], "fp16", 200)
    + _cases([1, 2, 1000, 4097, 65_537, 1_050_001], "i32", 300),
    bench_cases={"gpu": _bench(2**28, "2^28"), "cpu": _bench(2**24, "2^24")},
    description="out = sum(x)",
    read_dominated=lambda c: True,  # reads n·itemsize, writes one accumulator
)
