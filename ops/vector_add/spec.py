"""vector_add: c = a + b over n elements (fp32, fp16).

Bytes: read a and b, write c → 3·n·itemsize. Flops: n.
"""

from __future__ import annotations

import numpy as np

from references.elementwise import vector_add
from suite.spec import Arg, Case, OpSpec, Tolerance, elementwise_cases, np_dtype

# 1, sizes that are not multiples of any block (4, 64, 128, 256, 1024, 4096), and several blocks.
TEST_SIZES = [1, 2, 3, 5, 127, 1000, 1025, 4097, 65_537, 300_007]
#: above 2^22 (2^22 + 12,033, a multiple of no block size): a tail dropped only past 2^22 shows;
#: more than 16,384 workgroups of 256, so under the test session's WebGPU grid cap
#: (SOLBENCH_WEBGPU_MAX_GROUPS=16384, conftest.py) the kernels use ``workgroup_id.y``
LARGE_N = 2**22 + 12_033


def signature(case: Case) -> dict[str, Arg]:
    n = case["n"]
    return {"a": Arg((n,), case.dtype, "in"), "b": Arg((n,), case.dtype, "in"),
            "c": Arg((n,), case.dtype, "out")}


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    n, dt = case["n"], np_dtype(case.dtype)
    if case.dims.get("big"):
        # magnitudes near the top of the type's range, random signs: about a quarter of the sums
        # overflow to ±inf (fp16 max 65504), the rest are large finite values
        top = float(np.finfo(dt).max)
        mag = lambda: (0.3 + 0.7 * rng.random(n)) * top  # noqa: E731
        sign = lambda: np.where(rng.random(n) < 0.5, -1.0, 1.0)  # noqa: E731
        return {"a": (sign() * mag()).astype(dt), "b": (sign() * mag()).astype(dt)}
    # standard normal, b shifted by 0.5: mixed signs; shifted in place (at 2^28 every fresh array
    # costs about a second of page faults on the host)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    b += 0.5
    return {"a": a.astype(dt, copy=False), "b": b.astype(dt, copy=False)}


def reference(case: Case, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    # the exact sum rounded to the output type, kept in that type (half the bytes of float64 to
    # store and compare): a correctly rounded add gives exactly this, and ±inf is the right answer
    # where the rounded sum overflows (checked as equal infinities)
    return {"c": vector_add(x["a"], x["b"], np_dtype(case.dtype))}


def tolerance(case: Case):
    # The sum of two floats of the output type, computed in that type (or wider, then rounded),
    # is correctly rounded: |err| <= 2^-p |ref| with p = 24 (fp32) or 11 (fp16). Allow 1 ulp
    # (2^-(p-1)) and, for fp16, the smallest subnormal for results that underflow.
    if case.dtype == "fp16":
        return Tolerance(atol=2.0**-24, rtol=2.0**-10, reason="fp16 add: correctly rounded, 1 ulp")
    return Tolerance(atol=1e-38, rtol=2.0**-23, reason="fp32 add: correctly rounded, 1 ulp")


SPEC = OpSpec(
    name="vector_add",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=lambda c: 3 * c["n"] * np_dtype(c.dtype).itemsize,
    flops=lambda c: c["n"],
    tolerance=tolerance,
    test_cases=elementwise_cases("fp32", TEST_SIZES)
    + [Case(f"n={n},fp16", {"n": n}, "fp16", seed=2000 + n) for n in (1, 1025, 65_537)]
    + [Case("n=4097,fp16,overflow", {"n": 4097, "big": 1}, "fp16", seed=2099)]
    + [Case(f"n={LARGE_N}", {"n": LARGE_N}, "fp32", seed=1099)],
    bench_cases={
        "gpu": [Case("n=2^28", {"n": 2**28}, "fp32", seed=7),
                Case("n=2^28,fp16", {"n": 2**28}, "fp16", seed=8)],
        "cpu": [Case("n=2^25", {"n": 2**25}, "fp32", seed=7),
                Case("n=2^25,fp16", {"n": 2**25}, "fp16", seed=8)],
    },
    description="c = a + b",
)
