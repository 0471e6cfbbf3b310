"""Comparison of kernel outputs with the float64 reference.

An element passes when ``|out - ref| <= atol + rtol*|ref|``; a NaN or Inf where the reference is
finite always fails; the relative error norm ``||out - ref|| / ||ref||`` must stay under the
tolerance's ``rel_norm``. A failure carries the first mismatches (index, got, want).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from suite.spec import Tolerance

#: byte written over every output before a checked launch: NaN for floats, 0xA5.. for integers
POISON_FLOAT = 0xFF
POISON_INT = 0xA5


def poison_byte(dtype: np.dtype) -> int:
    return POISON_FLOAT if np.dtype(dtype).kind == "f" else POISON_INT


@dataclass
class CheckResult:
    ok: bool
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    rel_norm_err: float = 0.0
    n_bad: int = 0
    n_checked: int = 0
    mismatches: list[dict] = field(default_factory=list)
    message: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def compare(out: np.ndarray, ref: np.ndarray, tol: Tolerance, name: str = "out",
            show: int = 5) -> CheckResult:
    """Compare one output array with its reference."""
    if out.shape != ref.shape:
        return CheckResult(False, message=f"{name}: shape {out.shape} != reference {ref.shape}")
    o = out.astype(np.float64).ravel()
    r = np.asarray(ref, dtype=np.float64).ravel()
    diff = np.abs(o - r)
    bound = tol.atol + tol.rtol * np.abs(r)
    nonfinite = ~np.isfinite(o) & np.isfinite(r)
    bad = nonfinite | ~(diff <= bound)  # NaN in diff compares False → bad
    diff = np.where(np.isfinite(diff), diff, np.inf)
    ref_norm = float(np.linalg.norm(r))
    err_norm = float(np.linalg.norm(np.where(np.isfinite(diff), diff, 0.0)))
    rel_norm = np.inf if nonfinite.any() else (err_norm / ref_norm if ref_norm else err_norm)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(r)
    res = CheckResult(
        ok=False,
        max_abs_err=float(diff.max()) if diff.size else 0.0,
        max_rel_err=float(np.nanmax(np.where(r != 0, rel, 0.0))) if diff.size else 0.0,
        rel_norm_err=float(rel_norm),
        n_bad=int(bad.sum()),
        n_checked=int(o.size),
    )
    if res.n_bad:
        for i in np.flatnonzero(bad)[:show]:
            idx = tuple(int(k) for k in np.unravel_index(i, out.shape))
            res.mismatches.append({"output": name, "index": idx, "got": float(o[i]), "want": float(r[i])})
        first = res.mismatches[0]
        res.message = (f"{name}: {res.n_bad}/{o.size} elements out of tolerance "
                       f"(atol={tol.atol:g}, rtol={tol.rtol:g}: {tol.reason}); first at "
                       f"{first['index']}: got {first['got']!r}, want {first['want']!r}")
    elif rel_norm > tol.rel_norm:
        res.message = f"{name}: relative error norm {rel_norm:.3g} > {tol.rel_norm:g} ({tol.reason})"
    else:
        res.ok = True
    return res


def compare_all(outs: dict[str, np.ndarray], refs: dict[str, np.ndarray], tol: Tolerance) -> CheckResult:
    """Compare every output; the worst error figures and the first failure are kept."""
    total = CheckResult(True)
    for name, ref in refs.items():
        r = compare(outs[name], ref, tol, name)
        total.max_abs_err = max(total.max_abs_err, r.max_abs_err)
        total.max_rel_err = max(total.max_rel_err, r.max_rel_err)
        total.rel_norm_err = max(total.rel_norm_err, r.rel_norm_err)
        total.n_bad += r.n_bad
        total.n_checked += r.n_checked
        total.mismatches += r.mismatches
        if not r.ok and total.ok:
            total.ok, total.message = False, r.message
    return total
