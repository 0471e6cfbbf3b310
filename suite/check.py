"""Comparison of kernel outputs with the float64 reference.

An element passes when ``|out - ref| <= atol + rtol*|ref|``; a NaN or Inf where the reference is
finite always fails; the relative error norm ``||out - ref|| / ||ref||`` must stay under the
tolerance's ``rel_norm``. A failure carries the first mismatches (index, got, want).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from references.parallel import over_pieces
from suite.spec import Tolerance

#: byte written over every output before a checked launch: NaN for floats, 0xA5.. for integers
POISON_FLOAT = 0xFF
POISON_INT = 0xA5


def poison_byte(dtype: np.dtype | str) -> int:
    """Poison byte of a NumPy dtype or a case dtype name (bf16 words get 0xFF: a bf16 NaN)."""
    if isinstance(dtype, str):
        from suite.spec import FLOAT_DTYPES, np_dtype

        return POISON_FLOAT if dtype in FLOAT_DTYPES else poison_byte(np_dtype(dtype))
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


#: elements per piece run on one core (``over_pieces``)
CHUNK = 1 << 21
#: elements per pass inside a piece: each pass's float64 temporaries (1 MiB each) stay in the
#: core's cache instead of faulting in fresh pages (compare 4.7× faster than whole-piece passes
#: on the CI machine class, 2^22 elements)
SUB = 1 << 17


def _piece_stats(o: np.ndarray, r: np.ndarray, tol: Tolerance, start: int, show: int, extra=None):
    """``_sub_stats`` of each cache-sized pass over one piece."""
    return [_sub_stats(o[s:s + SUB], r[s:s + SUB], tol, start + s, show,
                       None if extra is None else extra[s:s + SUB]) for s in range(0, o.size, SUB)]


def _sub_stats(o: np.ndarray, r: np.ndarray, tol: Tolerance, start: int, show: int, extra=None):
    """(max |out − ref| over finite differences, max relative error, Σ diff², Σ ref², elements
    out of tolerance, any Inf/NaN where the reference is finite, the first ``show`` bad indices)."""
    o = o.astype(np.float64)
    r = np.asarray(r, dtype=np.float64)
    abs_r = np.abs(r)
    diff = o - r
    with np.errstate(invalid="ignore"):  # inf − inf
        np.abs(diff, out=diff)
    bound = abs_r * tol.rtol
    bound += tol.atol
    if extra is not None:
        bound += extra
    bad = ~(diff <= bound)  # NaN compares False → bad
    if np.isfinite(o).all() and np.isfinite(r).all():  # the usual case: nothing below applies
        nonfinite_any, finite = False, diff
    else:
        inf_ref = np.isinf(r)  # where the reference (rounded to the output type) overflows,
        if inf_ref.any():  # exactly its ±inf is right
            bad = np.where(inf_ref, o != r, bad)
        nonfinite = ~np.isfinite(o) & np.isfinite(r)
        bad |= nonfinite
        nonfinite_any = bool(nonfinite.any())
        finite = np.where(np.isfinite(diff), diff, 0.0)
    rel = np.zeros_like(finite)
    np.divide(finite, abs_r, out=rel, where=r != 0)
    first = np.flatnonzero(bad)[:show] + start
    return (float(finite.max(initial=0.0)), float(rel.max(initial=0.0)), float(np.dot(finite, finite)),
            float(np.dot(r, r)), int(np.count_nonzero(bad)), nonfinite_any, first)


def compare(out: np.ndarray, ref: np.ndarray, tol: Tolerance, name: str = "out",
            show: int = 5, extra: np.ndarray | None = None) -> CheckResult:
    """Compare one output array with its reference (in chunks, on all cores: bench sizes are
    hundreds of millions of elements). ``extra``: a per-element term added to the bound
    ``atol + rtol·|ref|`` (e.g. an accumulation bound from Σ|a·b| of each output)."""
    if out.shape != ref.shape:
        return CheckResult(False, message=f"{name}: shape {out.shape} != reference {ref.shape}")
    o, r = out.ravel(), np.asarray(ref).ravel()
    e = None if extra is None else np.broadcast_to(extra, ref.shape).ravel()
    pieces = over_pieces(lambda s: _piece_stats(o[s:s + CHUNK], r[s:s + CHUNK], tol, s, show,
                                                None if e is None else e[s:s + CHUNK]), o.size, CHUNK)
    parts = [p for piece in pieces for p in piece]  # every pass, in index order
    max_abs = max((p[0] for p in parts), default=0.0)
    max_rel = max((p[1] for p in parts), default=0.0)
    err2, ref2 = sum(p[2] for p in parts), sum(p[3] for p in parts)
    n_bad = sum(p[4] for p in parts)
    nonfinite = any(p[5] for p in parts)
    rel_norm = np.inf if nonfinite else (np.sqrt(err2 / ref2) if ref2 else np.sqrt(err2))
    res = CheckResult(ok=False, max_abs_err=max_abs, max_rel_err=max_rel, rel_norm_err=float(rel_norm),
                      n_bad=n_bad, n_checked=int(o.size))
    if n_bad:
        firsts = np.concatenate([p[6] for p in parts])[:show]
        for i in firsts:
            idx = tuple(int(k) for k in np.unravel_index(i, out.shape))
            res.mismatches.append({"output": name, "index": idx, "got": float(o[i]), "want": float(r[i])})
        first = res.mismatches[0]
        res.message = (f"{name}: {n_bad}/{o.size} elements out of tolerance "
                       f"(atol={tol.atol:g}, rtol={tol.rtol:g}: {tol.reason}); first at "
                       f"{first['index']}: got {first['got']!r}, want {first['want']!r}")
    elif rel_norm > tol.rel_norm:
        res.message = f"{name}: relative error norm {rel_norm:.3g} > {tol.rel_norm:g} ({tol.reason})"
    else:
        res.ok = True
    return res


def merge(parts: list[CheckResult]) -> CheckResult:
    """One result from the compares of several outputs or parts of one: the worst errors (a
    part's relative norm is against its own reference: the largest is kept), counts added, the
    first failure's message, at most 5 mismatches."""
    total = CheckResult(True)
    for r in parts:
        total.max_abs_err = max(total.max_abs_err, r.max_abs_err)
        total.max_rel_err = max(total.max_rel_err, r.max_rel_err)
        total.rel_norm_err = max(total.rel_norm_err, r.rel_norm_err)
        total.n_bad += r.n_bad
        total.n_checked += r.n_checked
        total.mismatches += r.mismatches[: max(0, 5 - len(total.mismatches))]
        if not r.ok and total.ok:
            total.ok, total.message = False, r.message
    return total


def reindex(res: CheckResult, index) -> CheckResult:
    """A compare of a slice (sampled rows, a row block) in the whole output's coordinates: each
    mismatch's index through ``index(*i)``, and the message's "first at" with it."""
    for mm in res.mismatches:
        mm["index"] = index(*mm["index"])
    if res.mismatches and "; first at" in res.message:
        first = res.mismatches[0]
        res.message = (res.message.split("; first at")[0] + f"; first at {first['index']}: "
                       f"got {first['got']!r}, want {first['want']!r}")
    return res


def compare_all(outs: dict[str, np.ndarray], refs: dict[str, np.ndarray], tol: Tolerance) -> CheckResult:
    """Compare every output; the worst error figures and the first failure are kept."""
    return merge([compare(outs[name], ref, tol, name) for name, ref in refs.items()])


def verify(spec, case, inputs: dict, outs: dict[str, np.ndarray], refs: dict, tol: Tolerance) -> CheckResult:
    """Compare downloaded outputs (raw storage arrays) with the reference: outputs are decoded
    (bf16 words → floats) and handed to the spec's own ``verify`` when it has one (sampled rows,
    Freivalds), else compared element-wise with every reference array."""
    from references.numerics import decode

    sig = spec.signature(case)
    got = {k: decode(v, sig[k].dtype) for k, v in outs.items()}
    if spec.verify is not None:
        return spec.verify(case, inputs, got, refs, tol)
    return compare_all(got, refs, tol)


def checked_launch(be, spec, case, run, ins: dict, outs: dict, inputs: dict, refs: dict,
                   tol: Tolerance) -> CheckResult:
    """Poison every output, launch ``run`` once, download and ``verify``: the one check of a
    launch, shared by the worker, tests and probe scripts."""
    sig = spec.signature(case)
    for k, buf in outs.items():
        be.fill_bytes(buf, poison_byte(sig[k].dtype))
    be.synchronize()
    run(ins, outs)
    be.synchronize()
    return verify(spec, case, inputs, {k: be.download(v) for k, v in outs.items()}, refs, tol)
