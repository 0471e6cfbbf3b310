"""The reference of a case, computed once and shared by every backend worker.

Each backend runs in its own process, so an in-process cache would compute a costly reference
(a bench-size matmul's sampled rows and Freivalds products, a 2^28 scan) once per backend. The
reference of (op, case, seed) is therefore stored under ``$SOLBENCH_CACHE`` (default
``~/.cache/solbench/refs``) as ``.npz``, keyed by a hash of the case, the seed and the source of
the op's ``spec.py`` and of ``references/`` — editing either invalidates it. A file lock makes
concurrent workers wait for the one computing; writes are atomic. Inputs are not stored: they
are regenerated from the seed (cheaper than reading them back).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
#: references smaller than this are not worth a file (recomputed in each worker)
MIN_BYTES = 1 << 20


def cache_dir() -> Path:
    return Path(os.environ.get("SOLBENCH_CACHE") or Path.home() / ".cache" / "solbench") / "refs"


def _sources_hash(op: str) -> str:
    h = hashlib.sha256()
    for p in sorted([ROOT / "ops" / op / "spec.py", *(ROOT / "references").glob("*.py")]):
        if p.is_file():
            h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:16]


def key(op: str, case, seed: int) -> str:
    text = f"{op}|{case.name}|{sorted(case.dims.items())}|{case.dtype}|{case.precision}|{seed}"
    return f"{op}-{hashlib.sha256(text.encode()).hexdigest()[:16]}-{_sources_hash(op)}"


def reference(spec, case, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``spec.reference(case, inputs)``, from the on-disk cache when another worker (or an
    earlier run) computed it; cheap references are computed in place."""
    if sum(a.nbytes for a in inputs.values()) < MIN_BYTES:
        return spec.reference(case, inputs)
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        return spec.reference(case, inputs)
    path = d / f"{key(spec.name, case, case.seed)}.npz"
    with open(d / ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if path.is_file():
                try:
                    with np.load(path) as z:
                        return {k: z[k] for k in z.files}
                except (OSError, ValueError):
                    path.unlink(missing_ok=True)  # a damaged file: recompute
            ref = spec.reference(case, inputs)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
            np.savez(tmp, **ref)
            os.replace(tmp, path)
            return ref
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
