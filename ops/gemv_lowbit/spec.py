"""gemv_lowbit: y = W·x with low-bit weights, for one token (B = 1) and small batches (B = 4, 8).

Formats (defined once in ``references/lowbit.py``): ``w4a16`` — int4 q ∈ [−8, 7] stored as
offset-binary nibbles (q + 8), two per byte along K, element 2j in the LOW nibble of byte j,
one fp16 scale per group of 128 consecutive k of a row; ``w8a16`` — int8 q ∈ [−128, 127], one
fp16 scale per output row. Weight value w = q·scale, symmetric (no zero point). K must be a
multiple of 128 for both formats: other K are REJECTED (``references.lowbit.pack`` and this
spec raise ValueError naming the rule) — no partial scale group.

Arguments: ``qweight`` (w4a16: uint8 [N, K/2]; w8a16: int8 [N, K]), ``scales`` fp16 (w4a16:
[N, K/128]; w8a16: [N]), ``x`` fp16 [B, K], ``y`` fp16 [B, N] (out). Case dims: n, k, b and
bits (4 or 8). Bytes = packed weights + scales + x + y; flops = 2·N·K·B.

Inputs: q uniform over the format's whole range (−8 and −128 included), scales uniform in
[0.5, 1.5)/(√K·rms(q)) rounded to fp16 (y ≈ N(0, 1)), x N(0, 1) rounded to fp16.
Checking: float64 dequantise-then-multiply of every output (bench shapes in row blocks), and
Σ|w|·|x| per output to bound the accumulated rounding (``tolerance``, ``verify``).
"""

from __future__ import annotations

import math

import numpy as np

from references import lowbit
from suite.check import CheckResult
from suite.spec import Arg, Case, OpSpec, Tolerance

U32 = 2.0**-24
#: half an ulp of fp16, relative (normal range): the output rounding, and the rounding of one
#: dequantised weight q·s to fp16 (dequant_then_gemv, the torch dense baseline)
U16 = 2.0**-11
#: half the smallest fp16 subnormal: the absolute output rounding near 0
SUB16 = 2.0**-25
#: relative error norm allowed: a right kernel has ≤ 2^-11 (output rounding) plus ≤ 2^-11 from
#: fp16 dequantised weights in the dense paths, typically ≈ 0.7·2^-11 in all (independent
#: roundings add in quadrature); an fp16 accumulator over K ≥ 1024 terms gives ≳ 2^-9
REL_NORM = 2.0**-10
#: rows per block of the float64 reference at bench shapes (bounds its memory to ~1 GiB)
ROW_BLOCK = 4096


def fmt_of(case: Case) -> str:
    return "w4a16" if case["bits"] == 4 else "w8a16"


def signature(case: Case) -> dict[str, Arg]:
    n, k, b, fmt = case["n"], case["k"], case["b"], fmt_of(case)
    lowbit.scale_shape(fmt, n, k)  # rejects K not a multiple of 128
    qw = Arg((n, k // 2), "u8", "in") if fmt == "w4a16" else Arg((n, k), "i8", "in")
    return {"qweight": qw, "scales": Arg(lowbit.scale_shape(fmt, n, k), "fp16", "in"),
            "x": Arg((b, k), "fp16", "in"), "y": Arg((b, n), "fp16", "out")}


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    n, k, b, fmt = case["n"], case["k"], case["b"], fmt_of(case)
    lo, hi = lowbit.QRANGE[fmt]
    q = rng.integers(lo, hi + 1, size=(n, k), dtype=np.int16)
    rms = math.sqrt(np.mean(np.arange(lo, hi + 1, dtype=np.float64) ** 2))
    s = rng.uniform(0.5, 1.5, size=lowbit.scale_shape(fmt, n, k)) / (math.sqrt(k) * rms)
    return {"qweight": lowbit.pack(fmt, q), "scales": s.astype(np.float16),
            "x": rng.standard_normal((b, k)).astype(np.float16)}


def reference(case: Case, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float64 y and Σ|w|·|x| ([B, N] each), computed in blocks of ``ROW_BLOCK`` rows of W."""
    fmt, n = fmt_of(case), case["n"]
    ys, abss = [], []
    for r0 in range(0, n, ROW_BLOCK):
        r1 = min(n, r0 + ROW_BLOCK)
        part = lowbit.reference(fmt, inputs["qweight"][r0:r1], inputs["scales"][r0:r1], inputs["x"])
        ys.append(part["y"])
        abss.append(part["absy"])
    return {"y": np.concatenate(ys, axis=1), "absy": np.concatenate(abss, axis=1)}


def tolerance(case: Case) -> Tolerance:
    """|y − ref| ≤ SUB16 + U16·|ref| + (K·2^-24 + 2^-11)·Σ_k|w·x| element-wise (``verify``), and
    the relative error norm ≤ 2^-10.

    Every product q·x (|q| ≤ 128, x fp16) is exact in fp32; a kernel sums K such terms (scaled
    per group) in fp32 in any order: the accumulated error is ≤ γ_K·Σ|w·x| with γ_K ≈ K·2^-24
    (Higham's deterministic bound; the per-group scale multiply adds one rounding, inside it).
    The dense paths (dequant_then_gemv, torch dense) round each q·s to fp16 first: ≤ 2^-11·
    Σ|w·x| more. The fp16 output rounding is ≤ 2^-11·|ref| (normal) or 2^-25 (subnormal).
    The element-wise bound alone is loose at large K; the norm bound (2^-10, vs ≈ 0.7·2^-11 for
    right kernels) is what rejects fp16 accumulation, whose error grows like 2^-12·√K·|y|."""
    k = case["k"]
    return Tolerance(atol=SUB16, rtol=U16, rel_norm=REL_NORM,
                     reason=f"fp16 output (2^-11·|ref| + 2^-25) + (K·2^-24 + 2^-11)·Σ|w·x| (fp32 sum of "
                            f"exact products over K={k}; fp16-rounded dequantised weights), "
                            f"rel. norm ≤ 2^-10")


def verify(case: Case, inputs: dict, outs: dict[str, np.ndarray], refs: dict, tol: Tolerance) -> CheckResult:
    """Every output against the float64 reference with the bound of ``tolerance`` (its Σ|w·x|
    term is per output, so this replaces the element-wise compare); NaN/Inf always fail."""
    got = np.asarray(outs["y"]).astype(np.float64)
    ref, absy = refs["y"], refs["absy"]
    if got.shape != ref.shape:
        return CheckResult(False, message=f"y: shape {got.shape} != reference {ref.shape}")
    bound = tol.atol + tol.rtol * np.abs(ref) + (case["k"] * U32 + U16) * absy
    with np.errstate(invalid="ignore"):
        diff = np.abs(got - ref)
    bad = ~(diff <= bound)  # NaN compares False
    finite = np.where(np.isfinite(diff), diff, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(ref != 0, finite / np.abs(ref), 0.0)
    nonfinite = not np.isfinite(got).all()
    norm = float("inf") if nonfinite else float(np.linalg.norm(finite) / (np.linalg.norm(ref) or 1.0))
    res = CheckResult(False, max_abs_err=float(finite.max(initial=0.0)),
                      max_rel_err=float(rel.max(initial=0.0)),
                      rel_norm_err=norm, n_bad=int(bad.sum()), n_checked=int(got.size))
    if res.n_bad:
        for i in np.flatnonzero(bad)[:5]:
            idx = tuple(int(v) for v in np.unravel_index(i, got.shape))
            res.mismatches.append({"output": "y", "index": idx, "got": float(got[idx]),
                                   "want": float(ref[idx])})
        m = res.mismatches[0]
        res.message = (f"y: {res.n_bad}/{got.size} outputs out of tolerance ({tol.reason}); first at "
                       f"{m['index']}: got {m['got']!r}, want {m['want']!r}")
    elif norm > tol.rel_norm:
        res.message = f"y: relative error norm {norm:.3g} > {tol.rel_norm:g} ({tol.reason})"
    else:
        res.ok = True
    return res


def _bytes(case: Case) -> int:
    sig = signature(case)
    return sum(a.nbytes for a in sig.values())


def _cases(rows, seed0: int) -> list[Case]:
    out = []
    for i, (bits, n, k, b) in enumerate(rows):
        dims = {"n": n, "k": k, "b": b, "bits": bits}
        out.append(Case(f"w{bits}a16,n{n},k{k},b{b}", dims, "fp16", seed0 + i))
    return out


#: small: odd N (37, 13), N = 1000, K from one group (128) to 1024, every batch size; few cases so
#: the op's tests (12 kernels × PoCL, lavapipe, the Triton interpreter) stay short
TEST = [(4, 37, 256, 1), (4, 1000, 1024, 1), (4, 64, 384, 4), (4, 13, 128, 8),
        (8, 37, 256, 1), (8, 100, 512, 8)]
BENCH_GPU = [(bits, n, k, 1) for bits in (4, 8) for (n, k) in ((8192, 8192), (16384, 16384), (28672, 8192))] \
    + [(4, 8192, 8192, 4), (4, 8192, 8192, 8), (8, 8192, 8192, 8), (4, 1000, 8192, 1)]
BENCH_CPU = [(4, 4096, 4096, 1), (8, 4096, 4096, 1), (4, 1000, 4096, 8)]

SPEC = OpSpec(
    name="gemv_lowbit",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=_bytes,
    flops=lambda c: 2 * c["n"] * c["k"] * c["b"],
    tolerance=tolerance,
    test_cases=_cases(TEST, 12100),
    bench_cases={"gpu": _cases(BENCH_GPU, 12200), "cpu": _cases(BENCH_CPU, 12300)},
    description="y = W·x, W int4 (group-128 fp16 scales) or int8 (per-row scales), x/y fp16, batch 1/4/8",
    verify=verify,
)
