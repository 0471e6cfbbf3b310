"""gemv_lowbit: y = W·x with low-bit weights, for one token (B = 1) and small batches (B = 4, 8).

Formats (defined once in ``references/lowbit.py``): ``w4a16`` — int4 q ∈ [−8, 7] stored as
offset-binary nibbles (q + 8), two per byte along K, element 2j in the LOW nibble of byte j,
one 16-bit scale per group of 128 consecutive k of a row; ``w8a16`` — int8 q ∈ [−128, 127],
one 16-bit scale per output row (scales are fp16 in fp16 cases, bf16 in bf16 cases). Weight
value w = q·scale, symmetric (no zero point). K must be a multiple of 128 for both formats:
other K are REJECTED (``references.lowbit.pack`` and this spec raise ValueError naming the
rule) — no partial scale group.

Arguments: ``qweight`` (w4a16: uint8 [N, K/2]; w8a16: int8 [N, K]), ``scales`` (w4a16:
[N, K/128]; w8a16: [N]), ``x`` [B, K], ``y`` [B, N] (out); scales, x and y are the case dtype:
fp16, or bf16 (raw uint16 words; fp32 arithmetic either way). Case dims: n, k, b and bits (4 or
8). Bytes = packed weights + scales + x + y; flops = 2·N·K·B.

Inputs: q uniform over the format's whole range (−8 and −128 included), scales uniform in
[0.5, 1.5)/(√K·rms(q)) rounded to the dtype (y ≈ N(0, 1)), x N(0, 1) rounded to the dtype.
Checking: float64 dequantise-then-multiply of every output (bench shapes in row blocks), and
Σ|w|·|x| per output to bound the accumulated rounding (``tolerance``, ``verify``).
"""

from __future__ import annotations

import math

import numpy as np

from references import lowbit
from references.numerics import encode
from suite.check import CheckResult, compare
from suite.spec import Arg, Case, OpSpec, Tolerance

U32 = 2.0**-24
#: half an ulp of fp16, relative (normal range): the output rounding, and the rounding of one
#: dequantised weight q·s to fp16 (dequant_then_gemv, the torch dense baseline)
U16 = 2.0**-11
#: the same for bf16 (8 significand bits)
UBF16 = 2.0**-8
#: half the smallest fp16 subnormal: the absolute output rounding near 0 (bf16: 2^-134, noise)
SUB16 = 2.0**-25
#: relative error norm allowed: a right kernel has ≤ u (output rounding) plus ≤ u from 16-bit
#: dequantised weights in the dense paths, typically ≈ 0.7·u in all (independent roundings add
#: in quadrature; measured 0.43·u fp32 path, 0.57·u dense fp16 path); an fp16 accumulator over
#: K ≥ 512 terms gives ≥ 7·u (measured 3.4e-3 at K=512, 9.5e-3 at K=4096). Bound: 2u.
REL_NORM = {"fp16": 2 * U16, "bf16": 2 * UBF16}


def unit(case: Case) -> float:
    """Half an ulp, relative, of the case's 16-bit type."""
    return UBF16 if case.dtype == "bf16" else U16
#: rows per block of the float64 reference at bench shapes (bounds its memory to ~1 GiB)
ROW_BLOCK = 4096


def fmt_of(case: Case) -> str:
    return "w4a16" if case["bits"] == 4 else "w8a16"


def signature(case: Case) -> dict[str, Arg]:
    n, k, b, fmt = case["n"], case["k"], case["b"], fmt_of(case)
    lowbit.scale_shape(fmt, n, k)  # rejects K not a multiple of 128
    qw = Arg((n, k // 2), "u8", "in") if fmt == "w4a16" else Arg((n, k), "i8", "in")
    dt = case.dtype
    return {"qweight": qw, "scales": Arg(lowbit.scale_shape(fmt, n, k), dt, "in"),
            "x": Arg((b, k), dt, "in"), "y": Arg((b, n), dt, "out")}


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    n, k, b, fmt = case["n"], case["k"], case["b"], fmt_of(case)
    lo, hi = lowbit.QRANGE[fmt]
    q = rng.integers(lo, hi + 1, size=(n, k), dtype=np.int16)
    rms = math.sqrt(np.mean(np.arange(lo, hi + 1, dtype=np.float64) ** 2))
    s = rng.uniform(0.5, 1.5, size=lowbit.scale_shape(fmt, n, k)) / (math.sqrt(k) * rms)
    return {"qweight": lowbit.pack(fmt, q), "scales": encode(s.astype(np.float32), case.dtype),
            "x": encode(rng.standard_normal((b, k)).astype(np.float32), case.dtype)}


def reference(case: Case, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float64 y and Σ|w|·|x| ([B, N] each), computed in blocks of ``ROW_BLOCK`` rows of W."""
    fmt, n = fmt_of(case), case["n"]
    ys, abss = [], []
    for r0 in range(0, n, ROW_BLOCK):
        r1 = min(n, r0 + ROW_BLOCK)
        part = lowbit.reference(fmt, inputs["qweight"][r0:r1], inputs["scales"][r0:r1], inputs["x"],
                                case.dtype)
        ys.append(part["y"])
        abss.append(part["absy"])
    return {"y": np.concatenate(ys, axis=1), "absy": np.concatenate(abss, axis=1)}


def tolerance(case: Case) -> Tolerance:
    """|y − ref| ≤ 2^-25 + u·|ref| + (K·2^-24 + u)·Σ_k|w·x| element-wise (``verify``), and the
    relative error norm ≤ 2u; u = 2^-11 (fp16) or 2^-8 (bf16), half an ulp.

    Every product q·x (|q| ≤ 128, x a 16-bit float) is exact in fp32; a kernel sums K such terms
    (scaled per group) in fp32 in any order: the accumulated error is ≤ γ_K·Σ|w·x| with
    γ_K ≈ K·2^-24 (Higham's deterministic bound; the per-group scale multiply adds one rounding,
    inside it). The dense paths (dequant_then_gemv, torch dense) round each q·s to the 16-bit
    type first: ≤ u·Σ|w·x| more. The output rounding is ≤ u·|ref| (normal) or 2^-25 (fp16
    subnormal). The element-wise bound alone is loose at large K; the norm bound (2u, vs ≈ 0.5u
    for right kernels) is what rejects fp16 accumulation (≥ 7u at K ≥ 512)."""
    k, u = case["k"], unit(case)
    t = case.dtype
    return Tolerance(atol=SUB16, rtol=u, rel_norm=REL_NORM[t],
                     reason=f"{t} output (u·|ref| + 2^-25) + (K·2^-24 + u)·Σ|w·x| (fp32 sum of exact "
                            f"products over K={k}; {t}-rounded dequantised weights), u = {u:g}; "
                            f"rel. norm ≤ 2u")


def verify(case: Case, inputs: dict, outs: dict[str, np.ndarray], refs: dict, tol: Tolerance) -> CheckResult:
    """Every output against the float64 reference with the bound of ``tolerance``: its Σ|w·x|
    term is per output, passed to the element-wise compare as an extra bound; NaN/Inf fail."""
    extra = (case["k"] * U32 + unit(case)) * refs["absy"]
    return compare(np.asarray(outs["y"]), refs["y"], tol, "y", extra=extra)


def _bytes(case: Case) -> int:
    sig = signature(case)
    return sum(a.nbytes for a in sig.values())


def _cases(rows, seed0: int, dtype: str = "fp16") -> list[Case]:
    out = []
    for i, (bits, n, k, b) in enumerate(rows):
        dims = {"n": n, "k": k, "b": b, "bits": bits}
        name = f"w{bits}a16,n{n},k{k},b{b}" + ("" if dtype == "fp16" else f",{dtype}")
        out.append(Case(name, dims, dtype, seed0 + i))
    return out


#: small: odd N (13, 37), N = 1000, K from one group (128) to 1024, every batch size, both
#: formats in both dtypes; few cases so the op's tests (12 kernels × PoCL, lavapipe, the Triton
#: interpreter, NVRTC, torch) stay near 40 s on 2 cores
TEST = [(4, 1000, 1024, 1), (4, 64, 384, 4), (4, 13, 128, 8), (8, 100, 512, 8)]
#: bf16 (scales, x, y): one w4a16 with N a multiple of 16 (tinygemm's CPU packing), one w8a16
TEST_BF16 = [(4, 48, 256, 1), (8, 37, 256, 1)]
BENCH_GPU = [(bits, n, k, 1) for bits in (4, 8) for (n, k) in ((8192, 8192), (16384, 16384), (28672, 8192))] \
    + [(4, 8192, 8192, 4), (4, 8192, 8192, 8), (8, 8192, 8192, 8), (4, 1000, 8192, 1)]
BENCH_CPU = [(4, 4096, 4096, 1), (8, 4096, 4096, 1), (4, 1000, 4096, 8)]
#: bf16 at the issue's peer shapes (tinygemm's CUDA kernel takes bf16 activations only)
BENCH_GPU_BF16 = [(bits, n, k, 1) for bits in (4, 8) for (n, k) in ((16384, 16384), (28672, 8192))]

SPEC = OpSpec(
    name="gemv_lowbit",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=_bytes,
    flops=lambda c: 2 * c["n"] * c["k"] * c["b"],
    tolerance=tolerance,
    test_cases=_cases(TEST, 12100) + _cases(TEST_BF16, 12150, "bf16"),
    bench_cases={"gpu": _cases(BENCH_GPU, 12200) + _cases(BENCH_GPU_BF16, 12250, "bf16"),
                 "cpu": _cases(BENCH_CPU, 12300) + _cases(BENCH_CPU[:1], 12350, "bf16")},
    description="y = W·x, W int4 (group-128 scales) or int8 (per-row scales), x/y/scales fp16 or bf16, "
                "batch 1/4/8",
    verify=verify,
    read_dominated=lambda c: True,  # the packed weights (N·K/2 or N·K bytes) dwarf x and y (B·(K+N)·2)
)
