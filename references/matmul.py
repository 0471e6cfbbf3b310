"""Float64 references of C = A·B for checking big GEMMs without computing all of A·B.

Exact float64 on sampled rows and columns, plus Freivalds' randomized test: for random ±1
vectors X (N×T), C·X must equal A·(B·X) within the rounding the precision allows. Both need only
O(r·K·N + T·(M·K + K·N)) float64 work instead of 2·M·N·K.
"""

from __future__ import annotations

import numpy as np


def full(a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
    """C = A·B and |A|·|B| in float64 (the latter bounds the accumulated rounding error)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    return {"C": a @ b, "absC": np.abs(a) @ np.abs(b)}


def sampled(a: np.ndarray, b: np.ndarray, rows: int, cols: int, vectors: int,
            rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Exact rows/columns of A·B (and of |A|·|B|) at ``rows``/``cols`` random indices (the first
    and last always among them), and Freivalds data: X (N×T random ±1), A·(B·X), and per row i the
    bounds S_i = (|A|·|B|·1)_i and R_i = ‖a_i‖₁·max|B| (R_i ≥ |(A·B)_ij| for every j)."""
    m, n = a.shape[0], b.shape[1]
    a, b = a.astype(np.float64), b.astype(np.float64)
    ri = np.unique(np.concatenate([[0, m - 1], rng.choice(m, min(rows, m), replace=False)]))
    ci = np.unique(np.concatenate([[0, n - 1], rng.choice(n, min(cols, n), replace=False)]))
    x = rng.choice(np.array([-1.0, 1.0]), size=(n, vectors))
    aa, ab = np.abs(a), np.abs(b)
    return {"rows": ri, "C_rows": a[ri] @ b, "absC_rows": aa[ri] @ ab,
            "cols": ci, "C_cols": a @ b[:, ci], "absC_cols": aa @ ab[:, ci],
            "X": x, "ABX": a @ (b @ x), "S": aa @ ab.sum(axis=1), "R": aa.sum(axis=1) * ab.max()}
