"""Synthetic result histories written as real run files (for the compare/nightly/dashboard tests)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import numpy as np

from suite import results as res

DEVICE = "gpu-synth"
T0 = dt.datetime(2026, 1, 1, 2, 0, tzinfo=dt.UTC)


def row(op: str = "vector_add", backend: str = "cuda", variant: str = "vec4", case: str = "n=2^20",
        dtype: str = "fp32", median_s: float | None = 1e-3, samples: list[float] | None = None,
        status: str = "ok", message: str = "", sm_mhz: int = 1980, throttle: list[str] | None = None,
        device: str = DEVICE, nbytes: int = 12 * 2**20, flops: int = 2**20,
        pct_sol: float | None = None, flush: str | None = None) -> dict[str, Any]:
    """One nested result row as the runner writes it (``flush``: timing.flush, absent by default
    as in the run files before it was recorded)."""
    ok = status == "ok" and median_s is not None
    clk = {"sm_mhz": sm_mhz, "mem_mhz": 3201, "power_w": 300.0, "throttle": throttle or []}
    r: dict[str, Any] = {"device": device, "backend": backend, "op": op, "variant": variant, "case": case,
                         "size": "bench", "status": status, "message": message, "dtype": dtype,
                         "mode": "run", "bytes": nbytes, "flops": flops,
                         "clocks": {"before": clk, "after": clk},
                         "check": {"ok": status != "failed", "max_abs_err": 0.0}}
    if ok:
        s = samples if samples is not None else [median_s] * 10
        r["timing"] = {"method": "cuda-event", "cold": True, "median_s": median_s, "min_s": min(s),
                       "q1_s": float(np.quantile(s, 0.25)), "q3_s": float(np.quantile(s, 0.75)),
                       "n": len(s), "samples": list(map(float, s))}
        if flush is not None:
            r["timing"]["flush"] = flush
        r["gbps"] = nbytes / median_s / 1e9
        r["tflops"] = flops / median_s / 1e12
        r["pct_sol"] = pct_sol if pct_sol is not None else 50.0
        r["peak_source"] = "measured"
        r["bound"] = "memory"
    return r


def write_run(root: Path, i: int, rows: list[dict[str, Any]], device: str = DEVICE,
              sha: str | None = None, hours: float = 24.0) -> Path:
    """Run number ``i`` (one a day from T0) holding ``rows``; returns its path."""
    t = T0 + dt.timedelta(hours=hours * i)
    rid = t.strftime("%Y%m%dT%H%M%SZ") + f"-{i:06x}"
    run = {"id": rid, "started_utc": t.isoformat(timespec="seconds"), "git_sha": sha or f"{i:040x}",
           "git_dirty": False, "argv": ["solbench", "run"], "host": {"hostname": "synth"}}
    devrec = {"name": "Synthetic GPU", "kind": "gpu", "vendor": "NVIDIA", "driver": "580.0",
              "backend_versions": {"cuda": {"cupy": "14.0"}}}
    doc = {"schema_version": res.SCHEMA_VERSION, "run": run, "devices": {device: devrec},
           "results": rows}
    path = root / device / f"run-{rid}.json"
    res.atomic_write_json(path, doc)
    return path


def samples_around(rng: np.random.Generator, level: float, n: int = 20, spread: float = 0.005) -> list[float]:
    """``n`` timing samples around ``level`` (relative spread, a light right tail like real timers)."""
    return list(level * (1 + rng.normal(0, spread, n) + np.abs(rng.normal(0, spread / 2, n))))


def series_history(root: Path, levels: list[float], seed: int = 0, **kw: Any) -> list[Path]:
    """One run per level for a single series (``kw`` goes to ``row``); samples around each level."""
    rng = np.random.default_rng(seed)
    paths = []
    for i, lv in enumerate(levels):
        s = samples_around(rng, lv)
        paths.append(write_run(root, i, [row(median_s=float(np.median(s)), samples=s, **kw)]))
    return paths
