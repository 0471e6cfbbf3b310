"""attention: O = softmax(Q·Kᵀ·scale)·V per (batch, head), Q, K, V, O of shape [B, H, S, D].

scale = 1/√D. Causal: query i sees keys j ≤ i (top-left aligned, S_q = S_k). Storage ``fp32``,
``fp16`` or ``bf16`` (raw uint16 words) for all four tensors; the arithmetic (scores, softmax
state, accumulators) is fp32 in every precision; 16-bit cases may round P to the storage type
before P·V (what FlashAttention-2 and SDPA do). Bytes: Q, K, V read once, O written once →
4·B·H·S·D·itemsize. Flops: 4·B·H·S²·D (Q·Kᵀ and P·V, 2·S²·D each per head), half of it causal.

Inputs: Q, K, V ~ N(0, 1), rounded to the storage type. A ``big`` case multiplies Q by 1e4, so
scores are ~N(0, 1e8): exp overflows without the max subtraction (test size only; fp32 and bf16).

Checking (``verify``): every output element must be finite (an unwritten, poisoned element is
NaN), then element-wise against float64 rows (``references/attention.py``) with the bound of
``tolerance`` and a relative-error-norm bound over the rows checked. Cases with
B·H·S²·D ≤ ``FULL_MAX`` check every row. Larger ones (the bench shapes) check a sample:

- every row of three 128-row windows — the first (rows 0..127: the causal diagonal blocks of
  every tiling, where a mask off by one changes row i by ~1/(i+1) of its mass: row 0 by all of
  it), the last (the ragged last query block: S = 1000, 1023) and one straddling S/2 (a block
  boundary of every power-of-two tiling) — of (b, h) = (0, 0) and (B−1, H−1): 384 rows each;
- ``RANDOM_ROWS`` random rows of every (b, h): a head or batch stride error, or a skipped K/V
  tile (it moves every row that sees the tile by ~√(tile/S) of |O|: 9 % at S = 8192 with 64-key
  tiles, 18 % at S = 2048, far above the norm bound below) shows in every head.

The sample is drawn from the case's seed (+7919) and stored with the reference; at B4 H32 S8192
D128 it is 2·384 + 128·4 = 1280 rows (~11 GFLOP of float64, cached once per case).
"""

from __future__ import annotations

import math

import numpy as np

from references import attention as ref
from references.numerics import decode, encode
from suite.check import CheckResult, compare, reindex
from suite.spec import Arg, Case, OpSpec, Tolerance, np_dtype

#: significand bits of each storage type: rounding to it errs by ≤ 2^-p relative
OUT_BITS = {"fp32": 24, "fp16": 11, "bf16": 8}
U32 = 2.0**-24
#: λ of the probabilistic rounding-error bounds (Higham & Mary 2019, as ops/matmul)
LAMBDA = 8.0
#: above this B·H·S²·D the check samples rows (see the module docstring)
FULL_MAX = 2**28
WINDOW = 128
RANDOM_ROWS = 4
#: Q scale of the ``big`` cases
BIG = 1e4
#: relative error norm bound per storage type (see ``tolerance``)
REL_NORM = {"fp32": 2.0**-13, "fp16": 2.0**-9, "bf16": 2.0**-7}
#: ... and on ``big`` cases: a near-tie of two ±1e4 scores turns their fp32 rounding (~1e-3
#: absolute) into a percent-level weight change (fp32 kernels measured ~1e-4 on the test case)
REL_NORM_BIG = 2.0**-7


def signature(case: Case) -> dict[str, Arg]:
    shape = (case["b"], case["h"], case["s"], case["d"])
    return {"Q": Arg(shape, case.dtype, "in"), "K": Arg(shape, case.dtype, "in"),
            "V": Arg(shape, case.dtype, "in"), "O": Arg(shape, case.dtype, "out")}


def scale(case: Case) -> float:
    return 1.0 / math.sqrt(case["d"])


def causal(case: Case) -> bool:
    return bool(case.dims.get("causal", 0))


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    shape = (case["b"], case["h"], case["s"], case["d"])
    q, k, v = (rng.standard_normal(shape, dtype=np.float32) for _ in range(3))
    if case.dims.get("big", 0):
        q *= np.float32(BIG)
    return {"Q": encode(q, case.dtype), "K": encode(k, case.dtype), "V": encode(v, case.dtype)}


def sample(case: Case) -> np.ndarray:
    """The (b, h, row) triples checked at shapes above FULL_MAX (module docstring), [n, 3] int64."""
    b, h, s = case["b"], case["h"], case["s"]
    win = np.unique(np.concatenate([np.arange(0, min(WINDOW, s)), np.arange(max(0, s - WINDOW), s),
                                    np.arange(max(0, s // 2 - WINDOW // 2), min(s, s // 2 + WINDOW // 2))]))
    rng = np.random.default_rng(case.seed + 7919)
    out = []
    for bi in range(b):
        for hi in range(h):
            rows = rng.choice(s, min(RANDOM_ROWS, s), replace=False)
            if (bi, hi) in ((0, 0), (b - 1, h - 1)):
                rows = np.concatenate([win, rows])
            rows = np.unique(rows)
            out.append(np.stack([np.full(rows.size, bi), np.full(rows.size, hi), rows], axis=1))
    return np.concatenate(out).astype(np.int64)


def _full(case: Case) -> bool:
    return case["b"] * case["h"] * case["s"] ** 2 * case["d"] <= FULL_MAX


def reference(case: Case, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Float64 rows with their error-bound terms (``references.attention.rows``): every row of
    small cases, the ``sample`` of large ones; ``sel`` lists the (b, h, row) of each."""
    q, k, v = (decode(inputs[n], case.dtype) for n in ("Q", "K", "V"))
    b, h, s = case["b"], case["h"], case["s"]
    sel = (np.stack(np.meshgrid(np.arange(b), np.arange(h), np.arange(s), indexing="ij"), -1).reshape(-1, 3)
           if _full(case) else sample(case))
    parts: dict[str, list] = {"O": [], "absO": [], "rssO": [], "vsub": [], "amax": []}
    for bi in range(b):
        for hi in range(h):
            rows = sel[(sel[:, 0] == bi) & (sel[:, 1] == hi), 2]
            r = ref.rows(q[bi, hi], k[bi, hi], v[bi, hi], rows, causal(case), scale(case))
            for key in parts:
                parts[key].append(r[key])
    return {"sel": sel, **{key: np.concatenate(val) for key, val in parts.items()}}


def tolerance(case: Case) -> Tolerance:
    """|O − ref| ≤ 2^-p·|ref| + atol + extra, element-wise (``verify`` adds the per-element
    extra from the reference's terms), and ‖O − ref‖/‖ref‖ ≤ rel_norm over the rows checked.

    With u = 2^-24, λ = 8 (Higham & Mary's probabilistic bound: holds unless a λ-sigma event):
    - 2^-p·|ref|: rounding O to the storage type (p = 24, 11, 8).
    - λ·ρ·rssO, rssO = sqrt(Σ_j p_ij²·v_jd²): P rounded to the storage type before P·V (ρ = 2^-8
      bf16, 2^-11 fp16; 0 for fp32, whose P stays fp32); fp16 also flushes weights below 2^-14
      to multiples of 2^-24, an absolute error ≤ 2^-25 per weight: λ·2^-25·vsub, vsub =
      sqrt(Σ_j v_jd²)/l_i over the keys row i sees (l_i = Σ_j e^(s_ij − m_i) ≥ 1).
    - u·(3λ√S + 16)·absO, absO = Σ_j p_ij·|v_jd|: fp32 accumulation of P·V and of the row sum
      l (λ√S·u each, any order) and the online rescales (at most S/16, ~3u each, independent:
      ≤ λ√S·u), plus the final division.
    - (e^(2E_i) − 1)·(absO + |ref|): a relative error ≤ E_i in every weight e^(s_ij − m_i) moves
      O_i by at most that (the weights renormalise: p̃/p ∈ [e^-2E, e^2E], and Σ p_j·|v_j − O_i| ≤
      absO + |O_i|). E_i = u·((λ√D + 4)·amax_i + 8): the fp32 score (D-term dot product, λ√D·u
      relative to scale·Σ_d|q_id·k_jd| ≤ amax_i), the scale and log2 e products and the
      subtraction of the max (4u·amax_i), exp2 (≤ 3 ulp) and slack. It matters on ``big`` cases
      (scores ~1e4: E_i ~ 0.05), where near-ties make fp32 scores alone move O by percent.
    - rel_norm 2^-13 (fp32), 2^-9 (fp16), 2^-7 (bf16): the norms of the errors above are
      ~2^-p/√3 (output rounding) + ρ/√3·‖rssO‖/‖O‖ (P rounding; ‖rssO‖ ≈ ‖O‖ for random V), a few
      times below these. A skipped 64-key tile (≥ 9 % at S ≤ 8192), a mask off by one (row i off
      by ~1/√(i+1) relative) or missing max subtraction (Inf/NaN) are far above them. ``big``
      cases take 2^-7 (``REL_NORM_BIG``): their scores' fp32 rounding is ~1e-3 absolute.
    """
    p = OUT_BITS[case.dtype]
    atol = 2.0**-25 if case.dtype == "fp16" else 0.0  # fp16 subnormal outputs: half of 2^-24
    why = (f"{case.dtype}: 2^-{p}·|O| (output rounding) + λ·ρ·rssO (P rounded to {case.dtype}) + "
           "u·(3λ√S+16)·absO (fp32 accumulation, rescales) + (e^2E−1)(absO+|O|) (fp32 scores), λ=8")
    rel = max(REL_NORM[case.dtype], REL_NORM_BIG) if case.dims.get("big", 0) else REL_NORM[case.dtype]
    return Tolerance(atol=atol, rtol=2.0**-p, rel_norm=rel, reason=why)


def extra_bound(case: Case, r: dict[str, np.ndarray]) -> np.ndarray:
    """The per-element terms of ``tolerance`` beyond rtol·|ref| + atol, for the reference rows ``r``."""
    rho = {"fp32": 0.0, "fp16": 2.0**-11, "bf16": 2.0**-8}[case.dtype]
    e = U32 * ((LAMBDA * math.sqrt(case["d"]) + 4) * r["amax"] + 8)
    bound = (LAMBDA * rho * r["rssO"] + U32 * (3 * LAMBDA * math.sqrt(case["s"]) + 16) * r["absO"]
             + np.expm1(2 * e)[:, None] * (r["absO"] + np.abs(r["O"])))
    if case.dtype == "fp16":
        bound = bound + LAMBDA * 2.0**-25 * r["vsub"]
    return bound


def verify(case: Case, inputs: dict, outs: dict[str, np.ndarray], r: dict, tol: Tolerance) -> CheckResult:
    """All of O finite; the reference rows (all, or the sample) within ``tolerance``."""
    o = outs["O"]
    shape = (case["b"], case["h"], case["s"], case["d"])
    if o.shape != shape:
        return CheckResult(False, message=f"O: shape {o.shape} != {shape}")
    bad = ~np.isfinite(o)
    if bad.any():
        first = tuple(int(x) for x in np.argwhere(bad)[0])
        return CheckResult(False, n_bad=int(bad.sum()), n_checked=int(o.size),
                           message=f"O: {int(bad.sum())}/{o.size} elements not finite (unwritten or "
                                   f"overflowed), first at {first}: {o[first]!r}")
    sel = r["sel"]
    got = o[sel[:, 0], sel[:, 1], sel[:, 2]]
    what = "O" if len(sel) == case["b"] * case["h"] * case["s"] else f"O ({len(sel)} sampled rows)"
    res = compare(got, r["O"], tol, what, extra=extra_bound(case, r))
    return reindex(res, lambda i, d: (*(int(x) for x in sel[i]), int(d)))  # (sample row, d) → (b, h, row, d)


def _case(b: int, h: int, s: int, d: int, is_causal: bool, dtype: str, seed: int, big: bool = False) -> Case:
    name = f"b{b}h{h}s{s}d{d}" + (",causal" if is_causal else "") + (",big" if big else "") + f",{dtype}"
    dims = {"b": b, "h": h, "s": s, "d": d, "causal": int(is_causal)}
    if big:
        dims["big"] = 1
    return Case(name, dims, dtype, seed)


#: tiny shapes (the Triton interpreter and lavapipe run every variant on each): S = 1, 7, 77
#: (no multiple of any tile), 128 (whole tiles), 130 (one past); D 64 and 128; causal both ways;
#: fp32, fp16, bf16; a ±1e4-score case (no max subtraction → Inf); B·H > 1 in a few (strides)
TEST = [
    _case(1, 1, 1, 64, False, "fp32", 9000),
    _case(2, 3, 7, 64, True, "fp32", 9001),
    _case(1, 2, 77, 64, False, "fp32", 9002),
    _case(1, 1, 130, 128, True, "fp32", 9003),
    _case(1, 1, 77, 64, True, "fp32", 9004, big=True),
    _case(1, 1, 128, 64, True, "bf16", 9005),
    _case(2, 1, 130, 64, False, "bf16", 9006),
    _case(1, 1, 77, 128, True, "bf16", 9007),
    _case(1, 1, 130, 64, True, "fp16", 9008),
    _case(1, 1, 7, 128, False, "fp16", 9009),
]

GPU = [
    _case(4, 32, 8192, 128, False, "bf16", 9100),
    _case(4, 32, 8192, 128, True, "bf16", 9101),
    _case(16, 16, 2048, 64, False, "bf16", 9102),
    _case(16, 16, 2048, 64, True, "bf16", 9103),
    _case(4, 32, 8192, 128, True, "fp16", 9104),
    _case(1, 16, 4096, 64, False, "fp32", 9105),
    _case(1, 16, 4096, 64, True, "fp32", 9106),
    _case(2, 16, 1023, 128, True, "bf16", 9107),
    _case(2, 16, 1000, 64, False, "fp16", 9108),
]
CPU = [_case(1, 4, 1024, 64, True, "fp32", 9200), _case(1, 4, 1000, 64, False, "bf16", 9201)]

SPEC = OpSpec(
    name="attention",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=lambda c: 4 * c["b"] * c["h"] * c["s"] * c["d"] * np_dtype(c.dtype).itemsize,
    flops=lambda c: 4 * c["b"] * c["h"] * c["s"] ** 2 * c["d"] // (2 if causal(c) else 1),
    tolerance=tolerance,
    test_cases=TEST,
    bench_cases={"gpu": GPU, "cpu": CPU},
    description="O = softmax(Q·Kᵀ/√D)·V over [B, H, S, D], causal or not (fp32 softmax state)",
    verify=verify,
)
