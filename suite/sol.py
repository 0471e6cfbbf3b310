"""Speed of light: device ceilings (measured and theoretical) and % of SOL.

``results/<device>/peaks.json`` holds, per device, the measured memory bandwidth (copy/add:
the fastest of the backends' vector_add kernels and torch's copy, arrays far larger than L2), a
read-only bandwidth (BabelStream's dot: the fastest of the reduction kernels and torch's dot) and
FLOP/s per dtype (vendor GEMM through torch), each the median of repeated measurements (see
suite/peaks.py), next to a theoretical value with its source. Every result gets
``sol_time = max(bytes / BW, flops / peak[dtype])`` and ``pct_sol = sol_time / time``; rows of
read-dominated ops (``OpSpec.read_dominated``) also get ``pct_sol_read``, the same with the
read-only bandwidth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from suite import results as res
from suite.results import atomic_write_json

#: Datasheet ceilings (dense) for devices whose rates NVML cannot give. Source in each entry.
DATASHEET: dict[str, dict[str, Any]] = {
    "nvidia-h200": {"bandwidth": 4.8e12, "fp32": 66.9e12, "tf32": 494.7e12, "fp16": 989.4e12,
                    "bf16": 989.4e12, "source": "NVIDIA H200 SXM datasheet (dense, boost clock)"},
    "nvidia-h100-80gb-hbm3": {"bandwidth": 3.35e12, "fp32": 66.9e12, "tf32": 494.7e12,
                              "fp16": 989.4e12, "bf16": 989.4e12,
                              "source": "NVIDIA H100 SXM datasheet (dense, boost clock)"},
}

#: the FLOP ceiling a case's compute precision is held to (fp32-strict → CUDA-core fp32;
#: tf32/fp16/bf16 → tensor cores): a WGSL bf16 matmul is rated against the tensor-core peak too
PEAK_KEY = {"fp16": "fp16", "bf16": "bf16", "tf32": "tf32", "fp32": "fp32"}

#: peaks.json keys of bandwidth ceilings (bytes/s): copy/add and read-only (dot)
BANDWIDTH_KEYS = ("bandwidth", "read_bandwidth")


#: a folder searched for peaks before the defaults (the CLI sets it from ``--results-dir``)
PEAKS_FIRST: Path | None = None


def peaks_path(slug: str, root: Path | None = None) -> Path:
    """Where ``solbench peaks`` writes a device's ceilings: ``<root>/<slug>/peaks.json``
    (default root: the user's results folder, never the committed ``results/`` unless named)."""
    return Path(root if root is not None else res.RESULTS_DIR) / slug / "peaks.json"


def peaks_search(root: Path | None = None) -> list[Path]:
    """Folders searched for peaks, first hit wins: ``root`` (or ``PEAKS_FIRST``), the user's
    results folder, then the committed reference data."""
    out: list[Path] = []
    for r in (root, PEAKS_FIRST, res.RESULTS_DIR, res.COMMITTED_DIR):
        if r is not None and Path(r) not in out:
            out.append(Path(r))
    return out


def load_peaks(slug: str, root: Path | None = None, model: str | None = None,
               driver: str | None = None) -> dict[str, Any] | None:
    """A device's ceilings with ``file``, the file they came from: its own, from the first folder
    of ``peaks_search(root)`` that has them; failing that, inherited from another card of its
    ``model`` (the model's own folder first — a one-card host's — then other ``<model>-*`` folders
    whose file names the same model), measured under the same ``driver`` where the file records
    one, with ``inherited_from``: that card's slug. None when there is neither."""
    for own in (r / slug / "peaks.json" for r in peaks_search(root)):
        if own.is_file():
            return {**json.loads(own.read_text()), "file": str(own)}
    for r in peaks_search(root) if model else ():
        for p in [r / model / "peaks.json", *sorted(r.glob(f"{model}-*/peaks.json"))]:
            if p.parent.name == slug or not p.is_file():
                continue
            d = json.loads(p.read_text())
            if (d.get("model") or d.get("device")) == model and d.get("driver", driver) == driver:
                return {**d, "file": str(p), "inherited_from": p.parent.name}
    return None


def save_peaks(slug: str, peaks: dict[str, Any], root: Path | None = None) -> Path:
    p = peaks_path(slug, root)
    atomic_write_json(p, peaks)
    return p


def theoretical(slug: str, ident: dict[str, Any]) -> dict[str, Any]:
    """Theoretical ceilings: NVML memory clock × bus width for NVIDIA, else the datasheet table."""
    out: dict[str, Any] = {}
    sheet = DATASHEET.get(slug)
    if ident.get("mem_clock_max_mhz") and ident.get("mem_bus_width_bits"):
        bw = ident["mem_clock_max_mhz"] * 1e6 * 2 * ident["mem_bus_width_bits"] / 8
        out["bandwidth"] = {"value": bw, "source": f"NVML: {ident['mem_clock_max_mhz']} MHz × "
                            f"{ident['mem_bus_width_bits']}-bit × 2 (DDR)"}
    elif sheet:
        out["bandwidth"] = {"value": sheet["bandwidth"], "source": sheet["source"]}
    if sheet:
        for k in ("fp32", "tf32", "fp16", "bf16"):
            out[k] = {"value": sheet[k], "source": sheet["source"]}
    return out


def peak_for(peaks: dict[str, Any] | None, key: str) -> tuple[float | None, str]:
    """(value, source) of a ceiling: measured if present, else theoretical, else (None, 'none')."""
    if not peaks:
        return None, "none"
    m = peaks.get("measured", {}).get(key)
    if m and m.get("value"):
        return float(m["value"]), "measured"
    t = peaks.get("theoretical", {}).get(key)
    if t and t.get("value"):
        return float(t["value"]), "theoretical"
    return None, "none"


def derive(row: dict[str, Any], peaks: dict[str, Any] | None) -> None:
    """Fill GB/s, TFLOP/s, sol_time, pct_sol and peak_source of a timed row in place."""
    t = (row.get("timing") or {}).get("median_s")
    if not t:
        return
    nbytes, flops = row.get("bytes") or 0, row.get("flops") or 0
    row["gbps"] = nbytes / t / 1e9
    row["tflops"] = flops / t / 1e12
    bw, bw_src = peak_for(peaks, "bandwidth")
    prec = row.get("precision") or row.get("dtype", "")
    pk, pk_src = peak_for(peaks, PEAK_KEY.get(prec, "fp32"))
    t_mem = nbytes / bw if bw else 0.0
    t_cmp = flops / pk if pk else 0.0
    if not (t_mem or t_cmp):
        row.update(sol_time_s=None, pct_sol=None, peak_source="none", bound=None)
        return
    row["sol_time_s"] = max(t_mem, t_cmp)
    row["bound"] = "memory" if t_mem >= t_cmp else "compute"
    row["peak_source"] = bw_src if t_mem >= t_cmp else pk_src
    row["pct_sol"] = 100.0 * row["sol_time_s"] / t
    row["peaks_used"] = {"bandwidth": bw, "bandwidth_source": bw_src,
                         "compute_key": PEAK_KEY.get(prec, "fp32"), "compute": pk, "compute_source": pk_src}
    for k in ("inherited_from", "measured_on_card"):  # measured on another card of the model
        if peaks.get(k):
            row["peaks_used"][k] = peaks[k]
    if row.get("read_dominated"):
        # a read-only op against the read-only ceiling: the copy ceiling pays for writes it never
        # makes (and, on a CPU, for the write-allocate reads of its destination). A peaks file
        # without it (older than the read ceiling) leaves the figure empty
        rbw, rbw_src = peak_for(peaks, "read_bandwidth")
        t_read = max(nbytes / rbw, t_cmp) if rbw else 0.0
        row["pct_sol_read"] = 100.0 * t_read / t if t_read else None
        row["peaks_used"].update(read_bandwidth=rbw, read_bandwidth_source=rbw_src)
    # the same row against the datasheet/NVML ceilings: for compute-bound rows the measured peak
    # is cuBLAS under the power cap, the theoretical one what the silicon promises
    theo = (peaks or {}).get("theoretical", {})
    th_bw = (theo.get("bandwidth") or {}).get("value")
    th_pk = (theo.get(PEAK_KEY.get(prec, "fp32")) or {}).get("value")
    t_th = max(nbytes / th_bw if th_bw else 0.0, flops / th_pk if th_pk else 0.0)
    row["pct_sol_theoretical"] = 100.0 * t_th / t if t_th else None
    faster_than_light(row)


#: % of SOL above which a row is invalid: the measured ceiling's own noise is a few percent
SOL_LIMIT_PCT = 105.0


def faster_than_light(row: dict[str, Any]) -> bool:
    """Mark an ``ok`` row faster than ``SOL_LIMIT_PCT`` % of the speed of light (for a
    memory-bound read-dominated row with a read ceiling, % of that ceiling) ``invalid``, with
    the reason (work outside the timed window, a wrong byte count, a stale ceiling): such a
    number is never reported as a result. Returns whether the row was marked."""
    pct = row.get("pct_sol")
    if row.get("pct_sol_read") is not None and row.get("bound") == "memory":
        pct = row["pct_sol_read"]  # a read-only op's speed of light is the read ceiling, not copy's
    if row.get("bound") == "compute" and row.get("peak_source") == "measured":
        # the measured FLOP ceiling is a vendor GEMM's rate, which a kernel may beat: only the
        # theoretical peak is a speed of light for compute
        pct = row.get("pct_sol_theoretical")
    if pct is None or pct <= SOL_LIMIT_PCT or row.get("status") != "ok":
        return False
    if row.get("device_kind") == "cpu":
        # a CPU's ceiling is measured on a shared host whose bandwidth varies from run to run (and
        # one CPU slug covers every host of that model): a stale ceiling, flagged, not a verdict
        row.setdefault("flags", []).append(f"above_sol: {pct:.0f} % of SOL > {SOL_LIMIT_PCT:g} % "
                                           "(this CPU's ceiling is stale: re-run solbench peaks)")
        return False
    row["status"] = "invalid"
    row["message"] = (f"faster than the speed of light: {pct:.0f} % of SOL > {SOL_LIMIT_PCT:g} % "
                      f"({row.get('bound')}-bound, {row.get('peak_source')} ceiling); not a result")
    return True
