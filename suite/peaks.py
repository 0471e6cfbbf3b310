"""``solbench peaks``: measure each device's ceilings once and store them beside the theoretical ones.

Bandwidth: the best of every backend's vector_add kernels at the fp32 bench size (arrays far larger
than L2; bytes = 3n·4) and torch's copy (2n·4), all cold, with the one timing protocol.
FLOP/s per dtype: torch GEMM (cuBLAS on NVIDIA, the CPU BLAS elsewhere).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suite import sol
from suite.runner import execute, plan
from suite.worker import Pool

GEMM = {"gpu": (8192, ("fp32", "tf32", "fp16", "bf16")), "cpu": (2048, ("fp32",))}
#: a sustained GEMM drops the H200 from 1980 to ~1500 MHz (power cap): each precision is measured
#: after a rest and over a short window, so that the order of the precisions does not decide
#: their ceilings (they were fp16 639 < bf16 674 TFLOP/s when run back to back for 3 s each)
GEMM_REST_S = 3.0


def torch_peaks(ex, device: int) -> dict[str, Any]:
    """Runs in the torch worker: copy bandwidth and GEMM rate per dtype on one device."""
    import torch

    from backends.nvml import nvml_identity
    from suite.timing import Protocol, measure

    be = ex.open(device)
    gpu = be.device.kind == "gpu"
    proto = Protocol(warmup_s=0.5, time_cap_s=3.0)
    gemm_proto = Protocol(warmup_s=0.2, time_cap_s=1.0)
    n = 2**28 if gpu else 2**25
    src = torch.rand(n, device=be.dev)
    dst = torch.empty_like(src)
    t = measure(be, lambda: dst.copy_(src), proto)
    out = {"copy": {"value": 2 * n * 4 / t.median_s,
                    "how": f"torch copy_ of {n} fp32 (2n·4 bytes), cold",
                    "timing": {"median_s": t.median_s, "n": t.n}}, "gemm": {}}
    src = dst = None  # free before the GEMMs
    size, dtypes = GEMM["gpu" if gpu else "cpu"]
    for name in dtypes:
        dt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
              "bf16": torch.bfloat16}[name]
        if gpu:
            torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
        a = torch.randn(size, size, device=be.dev, dtype=dt)
        b = torch.randn(size, size, device=be.dev, dtype=dt)
        c = torch.empty(size, size, device=be.dev, dtype=dt)
        if gpu:
            time.sleep(GEMM_REST_S)  # let the clock recover from the previous GEMM's power cap
        before = be.clocks()
        t = measure(be, lambda a=a, b=b, c=c: torch.mm(a, b, out=c), gemm_proto)
        out["gemm"][name] = {"value": 2 * size**3 / t.median_s,
                             "how": f"torch.mm {size}³ {name}, random inputs, cold, "
                                    f"{GEMM_REST_S:g} s rest, ≤ {gemm_proto.time_cap_s:g} s of samples",
                             "timing": {"median_s": t.median_s, "n": t.n,
                                        "window_clocks": getattr(t, "clocks", None)},
                             "clocks": {"before": before, "after": be.clocks()}}
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        out["ident"] = nvml_identity(device, be.device.pci_bus_id)
    return out


def measure_peaks(pool: Pool, device: str | None = None, timeout: float = 600.0,
                  on_row=None, root: Path | None = None,
                  on_start: Callable[[int], None] | None = None,
                  gemm_only: bool = False) -> dict[str, dict[str, Any]]:
    """Measure and save peaks.json for every selected device; returns slug → peaks.

    ``gemm_only``: re-measure only the GEMM (FLOP/s) ceilings and keep the stored bandwidth
    figures (a few seconds per precision instead of every backend's bandwidth sweep).

    ``root``: the results folder to write to (default: the user's, see ``sol.peaks_path``).
    ``on_start(total)`` is told how many steps follow (kernel items and torch devices), each
    reported through ``on_row(label, row)`` as it finishes.
    """
    p = plan(pool, ops=["vector_add"], device=device, size="bench", dtypes=["fp32"],
             timing={"warmup_s": 0.3, "time_cap_s": 3.0})
    items = [] if gemm_only else [it for it in p.items if _runs(pool, it)]
    torch_devs = [d for d in pool["torch"].probe() if d["slug"] in p.devices and not d["reason"]]
    if on_start:
        on_start(len(items) + len(torch_devs))
    rows = execute(pool, items, timeout, on_row)
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    peaks: dict[str, dict[str, Any]] = {}
    for slug in p.devices:
        peaks[slug] = {"device": slug, "measured_utc": now, "measured": {}, "candidates": [],
                       "theoretical": {}}
        old = sol.load_peaks(slug) if gemm_only else None
        if old:  # keep the stored bandwidth ceiling and its candidates
            peaks[slug]["candidates"] = old.get("candidates", [])
            if "bandwidth" in old.get("measured", {}):
                peaks[slug]["measured"]["bandwidth"] = old["measured"]["bandwidth"]
    for r in rows:
        if r["status"] == "ok" and r.get("mode") == "run":
            t = r["timing"]["median_s"]
            peaks[r["device"]]["candidates"].append(
                {"value": r["bytes"] / t,
                 "how": f"{r['backend']}/vector_add/{r['variant']} {r['case']} (3n·4 bytes)"})
    for d in torch_devs:
        tp = pool["torch"].call("suite.peaks", "torch_peaks", timeout, device=d["index"])
        if on_row:
            on_row(f"torch copy + GEMM @{d['slug']}", tp)
        pk = peaks[d["slug"]]
        if "error" in tp:
            pk["torch_error"] = tp["error"]
            continue
        if not gemm_only:
            pk["candidates"].append(tp["copy"])
        for k, v in tp["gemm"].items():
            pk["measured"][k] = {**v, "source": "measured"}
        pk["theoretical"] = sol.theoretical(d["slug"], tp.get("ident", {}))
    for slug, pk in peaks.items():
        if pk["candidates"] and not gemm_only:
            best = max(pk["candidates"], key=lambda c: c["value"])
            pk["measured"]["bandwidth"] = {"value": best["value"], "how": best["how"], "source": "measured"}
        if not pk["theoretical"]:
            pk["theoretical"] = sol.theoretical(slug, {}) or {
                "note": "no theoretical figure: NVML absent and no datasheet entry for this device"}
        if pk["measured"]:
            sol.save_peaks(slug, pk, root)
    return peaks


def _runs(pool: Pool, item) -> bool:
    """Only devices that really run kernels (not the interpreter, not compile-only) set peaks."""
    return any(d["index"] == item.device and d["mode"] == "run" for d in pool[item.backend].devices or [])
