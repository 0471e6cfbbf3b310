"""Float64 reference of scaled dot-product attention, O = softmax(Q·Kᵀ·scale)·V, per (batch, head).

Tensors are [B, H, S, D] (queries and keys share S). Causal: query i sees keys j ≤ i (the mask
is aligned at the top left, S_q = S_k), so row 0 sees key 0 alone and no row is ever empty.
Every step is float64 and max-subtracted (exp of a value ≤ 0, the largest term exactly 1), so
nothing overflows for any finite input, ±1e4-scaled scores included.

Besides O, ``rows`` returns per element the quantities the spec's error bound is made of:
``absO = Σ_j p_ij·|v_jd|`` (what rounding each product of P·V, or the accumulator, can move),
``rssO = sqrt(Σ_j p_ij²·v_jd²)`` (the root-sum-square of the same terms: independent rounding
errors of P add up like it), and per row ``amax = scale·max_j Σ_d |q_id·k_jd|`` (what rounding a
score s_ij in fp32 can move it by, in units of the unit roundoff and √D), and
``vsub = sqrt(Σ_j v_jd²)/l_i`` over the keys row i sees, l_i = Σ_j e^(s_ij − m_i) (what flushing
tiny weights to fp16 subnormals can move).
"""

from __future__ import annotations

import numpy as np


def rows(q: np.ndarray, k: np.ndarray, v: np.ndarray, idx: np.ndarray, causal: bool,
         scale: float) -> dict[str, np.ndarray]:
    """Exact attention of the query rows ``idx`` of one (batch, head): q, k, v are [S, D] (any float
    dtype, taken as float64). Returns ``O``, ``absO``, ``rssO``, ``vsub`` ([len(idx), D]) and
    ``amax`` ([len(idx)])."""
    q = np.asarray(q, np.float64)[idx]
    k, v = np.asarray(k, np.float64), np.asarray(v, np.float64)
    s = (q @ k.T) * scale
    if causal:
        s[np.arange(k.shape[0])[None, :] > idx[:, None]] = -np.inf
    m = s.max(axis=1, keepdims=True)
    e = np.exp(s - m)
    total = e.sum(axis=1, keepdims=True)
    p = e / total
    seen = np.isfinite(s)
    amax = np.where(seen, scale * (np.abs(q) @ np.abs(k).T), 0.0)
    return {"O": p @ v, "absO": p @ np.abs(v), "rssO": np.sqrt((p * p) @ (v * v)),
            "vsub": np.sqrt(seen.astype(np.float64) @ (v * v)) / total, "amax": amax.max(axis=1)}


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool, scale: float) -> np.ndarray:
    """O for every (batch, head) and query row: [B, H, S, D] float64 (the textbook formula)."""
    b, h, s, d = q.shape
    out = np.empty((b, h, s, d))
    for i in range(b):
        for j in range(h):
            out[i, j] = rows(q[i, j], k[i, j], v[i, j], np.arange(s), causal, scale)["O"]
    return out
