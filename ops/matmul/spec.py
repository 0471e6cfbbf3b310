"""matmul: C = A·B, row-major A [M, K], B [K, N], C [M, N], all of the case's storage dtype.

Precisions: ``fp32`` (strict IEEE fp32, CUDA-core peak), ``tf32`` (fp32 storage, operands rounded
to tf32 by the tensor cores, fp32 accumulation), ``fp16`` and ``bf16`` (16-bit operands, fp32
accumulation, output rounded to the storage type). Bytes: A and B read once, C written once →
(M·K + K·N + M·N)·itemsize (skinny shapes, M ≤ 16, are bound by these). Flops: 2·M·N·K.
Inputs: uniform in [-1, 1), rounded to the storage type, so |C_ij| grows like √K/3 and
(|A|·|B|)_ij like K/4 (the error bound below is stated against |A|·|B|).

Checking: shapes with M·N·K ≤ 2^27 are compared element-wise with the full float64 product.
Larger ones (the bench shapes) are checked by exact float64 rows and columns at 64 random indices
each (plus the first and last), and by Freivalds' test with T = 64 random ±1 vectors on every row
(see ``verify``): a row whose error vector e_i has ‖e_i‖₂ ≥ 2·8·σ_i (σ_i: the root-sum-square of
the row's allowed element errors) passes all T vectors with probability ≤ (13/16)^64 ≈ 1.7e-6
(Paley–Zygmund: each ±1 vector reveals it with probability ≥ 3/16), while a kernel within
tolerance fails a row with probability ≤ 2·e^-32 per vector (Hoeffding).
"""

from __future__ import annotations

import math

import numpy as np

from references import matmul as ref
from references.numerics import decode, encode
from suite.check import CheckResult, compare, merge, reindex
from suite.spec import Arg, Case, OpSpec, Tolerance, np_dtype

#: precision p (significand bits) of each output type: round to nearest errs ≤ 2^-p relatively
OUT_BITS = {"fp32": 24, "fp16": 11, "bf16": 8}
U32 = 2.0**-24
#: λ of the probabilistic rounding-error bounds (Higham & Mary 2019: holds unless a λ-sigma
#: event, e^-λ²/2 ≈ 1e-14 at λ = 8, happens)
LAMBDA = 8.0
#: above this M·N·K, check by sampled rows/columns + Freivalds instead of the full product
FULL_MAX = 2**27
SAMPLE_ROWS = SAMPLE_COLS = 64
FREIVALDS_T = 64
#: Freivalds' threshold in σ_i (8 σ: a within-tolerance kernel fails with probability ≤ 2e^-32)
FREIVALDS_K = 8.0


def signature(case: Case) -> dict[str, Arg]:
    m, n, k = case["m"], case["n"], case["k"]
    return {"A": Arg((m, k), case.dtype, "in"), "B": Arg((k, n), case.dtype, "in"),
            "C": Arg((m, n), case.dtype, "out")}


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    m, n, k = case["m"], case["n"], case["k"]
    a = rng.uniform(-1.0, 1.0, size=(m, k)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, size=(k, n)).astype(np.float32)
    return {"A": encode(a, case.dtype), "B": encode(b, case.dtype)}


def _operands(case: Case, inputs: dict) -> tuple[np.ndarray, np.ndarray]:
    return decode(inputs["A"], case.dtype), decode(inputs["B"], case.dtype)


def reference(case: Case, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    a, b = _operands(case, inputs)
    mab = np.array([np.abs(a).max() * np.abs(b).max()])
    if case["m"] * case["n"] * case["k"] <= FULL_MAX:
        return {**ref.full(a, b), "mAB": mab}
    rng = np.random.default_rng(case.seed + 7919)
    return {**ref.sampled(a, b, SAMPLE_ROWS, SAMPLE_COLS, FREIVALDS_T, rng), "mAB": mab}


def tolerance(case: Case) -> Tolerance:
    """|C − ref| ≤ rtol·|ref| + atol·(|A|·|B|) + tf32 term, element-wise; relative error norm ≤ rel_norm.

    - rtol = 2^-p: rounding the fp32 result to the output type (p = 24, 11, 8 for fp32, fp16,
      bf16) errs by at most half an ulp.
    - atol = λ·√K·2^-24: fp32 accumulation in any order (serial, tree, split-K) errs by at most
      ~√K·u·Σ|a_ik·b_kj| with high probability (Higham & Mary 2019; the deterministic bound is K·u).
      16-bit operands multiply exactly in fp32, so nothing more for fp16/bf16.
    - tf32: each product also errs by ≤ 2·2^-11 (both operands rounded to 11 bits), independent
      zero-mean errors: ≤ λ·2^-10·sqrt(Σ(a·b)²) ≤ λ·2^-10·sqrt(max|A|·max|B|·(|A|·|B|)_ij).
    - rel_norm: rounding to the output type alone gives ~2^-p/√3 in norm; fp16 accumulation
      (~1 % at K = 4096) or a skipped K remainder (~1.6 %) exceed it.
    """
    p = OUT_BITS[case.dtype if case.dtype in OUT_BITS else "fp32"]
    k = case["k"]
    atol = LAMBDA * math.sqrt(k) * U32
    prod = LAMBDA * 2.0**-10 if case.prec == "tf32" else 0.0
    rel = {"fp32": 4 * math.sqrt(k) * U32, "tf32": 2.0**-10, "fp16": 2.0**-10, "bf16": 2.0**-8}[case.prec]
    return Tolerance(atol=atol, rtol=2.0**-p, rel_norm=max(rel, 2.0**-p),
                     reason=f"{case.prec}: 2^-{p}·|ref| (output rounding) + {LAMBDA:g}·√K·2^-24·(|A||B|) "
                            f"(fp32 accumulation)" + (" + 8·2^-10·√(max|A|max|B|·|A||B|) (tf32 operands)"
                                                      if prod else ""))


def _bound(tol: Tolerance, case: Case, refv, absc, mab: float):
    b = tol.rtol * np.abs(refv) + tol.atol * absc
    if case.prec == "tf32":
        b = b + LAMBDA * 2.0**-10 * np.sqrt(absc * mab)
    return b


def _elementwise(name: str, got: np.ndarray, want: np.ndarray, bound: np.ndarray, tol: Tolerance,
                 index) -> CheckResult:
    """|got − want| ≤ bound element-wise (NaN/Inf fail) and the relative error norm ≤ rel_norm;
    mismatches in C's coordinates through ``index(i, j)``, each with its bound."""
    res = compare(got, want, Tolerance(atol=0.0, rtol=0.0, rel_norm=tol.rel_norm, reason=tol.reason),
                  f"C ({name})", extra=bound)
    for mm in res.mismatches:
        mm["bound"] = float(bound[mm["index"]])
    return reindex(res, index)


def verify(case: Case, inputs: dict, outs: dict[str, np.ndarray], r: dict, tol: Tolerance) -> CheckResult:
    """Full element-wise check for small shapes; sampled rows/columns + Freivalds otherwise."""
    c = outs["C"]
    mab = float(r["mAB"][0])
    if c.shape != (case["m"], case["n"]):
        return CheckResult(False, message=f"C: shape {c.shape} != {(case['m'], case['n'])}")
    if "C" in r:  # full reference
        return _elementwise("all", c, r["C"], _bound(tol, case, r["C"], r["absC"], mab), tol,
                            lambda i, j: (int(i), int(j)))
    rows, cols = r["rows"], r["cols"]
    parts = [
        _elementwise(f"{rows.size} sampled rows", c[rows], r["C_rows"],
                     _bound(tol, case, r["C_rows"], r["absC_rows"], mab), tol,
                     lambda i, j: (int(rows[i]), int(j))),
        _elementwise(f"{cols.size} sampled columns", c[:, cols], r["C_cols"],
                     _bound(tol, case, r["C_cols"], r["absC_cols"], mab), tol,
                     lambda i, j: (int(i), int(cols[j]))),
    ]
    if not np.isfinite(c).all():
        bad = np.argwhere(~np.isfinite(c))[0]
        parts.append(CheckResult(False, n_bad=int((~np.isfinite(c)).sum()), n_checked=c.size,
                                 message=f"C: non-finite values, first at {tuple(int(v) for v in bad)}: "
                                         f"{c[tuple(bad)]!r}"))
        return merge(parts)
    parts.append(freivalds(case, c, r, tol, mab))
    return merge(parts)


def freivalds(case: Case, c: np.ndarray, r: dict, tol: Tolerance, mab: float) -> CheckResult:
    """|(C·X − A·(B·X))_it| ≤ 8·σ_i for every row i and vector t, where σ_i² bounds Σ_j τ_ij² of
    the allowed element errors τ_ij (the ``tolerance`` terms, with |ref_ij| ≤ R_i and
    Σ_j (|A||B|)_ij² ≤ R_i·S_i); plus the relative norm ‖C·X − A·B·X‖/‖A·B·X‖ ≤ rel_norm."""
    cx = c.astype(np.float64) @ r["X"]
    d = cx - r["ABX"]
    rows_r, s = r["R"], r["S"]
    cap = np.minimum(np.abs(c).astype(np.float64), rows_r[:, None])
    var = 3 * (tol.rtol**2 * np.einsum("ij,ij->i", cap, cap) + tol.atol**2 * rows_r * s)
    if case.prec == "tf32":
        var += 3 * (LAMBDA * 2.0**-10) ** 2 * mab * s
    sigma = np.sqrt(var)
    excess = np.abs(d) / (FREIVALDS_K * sigma[:, None] + 1e-300)
    bad_rows = np.flatnonzero((excess > 1).any(axis=1))
    rel = float(np.linalg.norm(d) / max(np.linalg.norm(r["ABX"]), 1e-300))
    res = CheckResult(ok=False, max_abs_err=float(np.abs(d).max(initial=0)), rel_norm_err=rel,
                      n_bad=int(bad_rows.size), n_checked=int(d.size))
    if bad_rows.size:
        i = int(bad_rows[0])
        t = int(np.argmax(excess[i]))
        res.mismatches.append({"output": "C", "index": (i, "row"), "got": float(cx[i, t]),
                               "want": float(r["ABX"][i, t]), "bound": float(FREIVALDS_K * sigma[i])})
        res.message = (f"C (Freivalds, {d.shape[1]} vectors): {bad_rows.size}/{d.shape[0]} rows exceed "
                       f"{FREIVALDS_K:g}σ; first row {i}: (C·x)_i = {cx[i, t]:.6g}, (A·B·x)_i = "
                       f"{r['ABX'][i, t]:.6g}, allowed ± {FREIVALDS_K * sigma[i]:.3g}")
    elif rel > tol.rel_norm:
        res.message = f"C (Freivalds): relative error norm {rel:.3g} > {tol.rel_norm:.3g} ({tol.reason})"
    else:
        res.ok = True
    return res


def _case(m: int, n: int, k: int, dtype: str, seed: int, precision: str | None = None,
          label: str | None = None) -> Case:
    prec = precision or dtype
    dims = label or (f"{m}³" if m == n == k else f"{m}x{n}x{k}")
    return Case(f"{dims},{prec}", {"m": m, "n": n, "k": k}, dtype, seed, precision)


# small shapes: 1, non-multiples of every tile (16, 32, 64, 128) in each dimension, more than one
# tile in each, skinny rows (M = 1, 16), and a K remainder after several full K tiles
_TEST_SHAPES = [(1, 1, 1), (7, 5, 3), (33, 17, 65), (128, 128, 128), (130, 257, 129), (1, 300, 513),
                (16, 200, 260)]
_TEST = ([_case(m, n, k, "fp32", 100 + i) for i, (m, n, k) in enumerate(_TEST_SHAPES)]
         + [_case(m, n, k, "fp32", 200 + i, "tf32") for i, (m, n, k) in enumerate(_TEST_SHAPES[1:5])]
         + [_case(m, n, k, "fp16", 300 + i) for i, (m, n, k) in enumerate(_TEST_SHAPES[1:5])]
         + [_case(m, n, k, "bf16", 400 + i) for i, (m, n, k) in enumerate(_TEST_SHAPES)]
         + [_case(500, 600, 300, "bf16", 450)])

_GPU = ([_case(s, s, s, "bf16", 500 + i) for i, s in enumerate((128, 512, 2048, 8192))]
        + [_case(8192, 8192, 8192, "fp16", 510), _case(8192, 8192, 8192, "fp32", 511),
           _case(8192, 8192, 8192, "fp32", 512, "tf32"),
           _case(4097, 4097, 4097, "bf16", 513), _case(500, 600, 300, "bf16", 514),
           _case(16, 8192, 8192, "bf16", 515), _case(1, 8192, 8192, "bf16", 516)])
_CPU = [_case(512, 512, 512, "fp32", 600), _case(512, 512, 512, "bf16", 601),
        _case(500, 600, 300, "bf16", 602), _case(16, 2048, 2048, "bf16", 603)]

SPEC = OpSpec(
    name="matmul",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=lambda c: (c["m"] * c["k"] + c["k"] * c["n"] + c["m"] * c["n"]) * np_dtype(c.dtype).itemsize,
    flops=lambda c: 2 * c["m"] * c["n"] * c["k"],
    tolerance=tolerance,
    test_cases=_TEST,
    bench_cases={"gpu": _GPU, "cpu": _CPU},
    description="C = A·B (row-major), fp32 / tf32 / fp16 / bf16 with fp32 accumulation",
    verify=verify,
    # skinny M (decode shapes): reading B (K·N) is the cost, so they are also rated against the
    # read-only ceiling (pct_sol_read); larger M are compute-bound
    read_dominated=lambda c: c["m"] <= 64,
)
