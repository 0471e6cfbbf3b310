"""Build the static dashboard: one ``index.html`` that opens from ``file://`` with no server and no
network. plotly.js comes from the installed ``plotly`` package and is inlined, the data (from
``suite.history.load_history``, ``peaks.json`` and the nightly reports) is inlined as a script, and
the page's own code is ``dashboard/app.js``.

    python -m dashboard.build [--results results] [--out build/dashboard]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from suite import results as res
from suite import sol
from suite.history import SERIES, History, Roots, latest_per_series, load_history, series_label

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = res.ROOT / "build" / "dashboard"
#: row fields the page gets for every cell
CELL_FIELDS = ["device", "op", "backend", "variant", "case", "dtype", "size", "status", "message", "mode",
               "median_s", "min_s", "q1_s", "q3_s", "n", "gbps", "tflops", "pct_sol", "peak_source",
               "bound", "bytes", "flops", "timer", "cold", "sm_mhz", "sm_mhz_before", "mem_mhz", "power_w",
               "throttle", "run_id", "started_utc", "git_sha"]


def plotly_js() -> str:
    """plotly.min.js shipped inside the ``plotly`` Python package."""
    import plotly

    p = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not p.is_file():
        raise FileNotFoundError(f"{p} missing: the plotly package ships no plotly.min.js")
    return p.read_text(encoding="utf-8")


def _clean(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if hasattr(v, "item"):
        return _clean(v.item())
    return v


def _peaks(slug: str, roots: list[Path]) -> dict[str, Any]:
    pk: dict[str, Any] = {}
    for r in roots:
        pk = sol.load_peaks(slug, r) or {}
        if pk:
            break
    out: dict[str, Any] = {"measured_utc": pk.get("measured_utc")}
    for kind in ("measured", "theoretical"):
        out[kind] = {k: {"value": v.get("value"), "how": v.get("how") or v.get("source")}
                     for k, v in (pk.get(kind) or {}).items() if isinstance(v, dict) and v.get("value")}
    return out


def _rel(f: str) -> str:
    p = Path(f)
    return str(p.relative_to(res.ROOT)) if p.is_relative_to(res.ROOT) else f


def _markers(reports_dirs: list[Path]) -> list[dict[str, Any]]:
    """Change markers (regressions, improvements, pending) of every nightly report JSON."""
    out = []
    for p in sorted(q for d in reports_dirs for q in Path(d).glob("*.json")):
        try:
            rep = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        for kind in ("regressions", "improvements", "pending"):
            for c in rep.get(kind) or []:
                out.append({"series": c.get("label"), "kind": c.get("kind", kind[:-1]),
                            "run_id": c.get("run_id"), "started_utc": c.get("started_utc"),
                            "ratio": c.get("ratio"), "confidence": c.get("confidence"),
                            "report": p.name})
    return out


def collect(root: Roots = None, reports_dirs: list[Path] | None = None) -> dict[str, Any]:
    """Everything the page shows, as one JSON-able dict. ``root``: a results folder, several, or
    None (the committed ``results/`` and the user's results folder); nightly reports are read from
    ``<each root>/reports/`` unless ``reports_dirs`` is given."""
    roots = res._roots(root)
    h: History = load_history(roots)
    rows = h.rows
    cells = latest_per_series(rows) if len(rows) else rows
    # × torch: against the best torch row of the same run, device, op and case
    ok = rows[(rows.status == "ok") & (rows["mode"] == "run") & rows.median_s.notna()]
    torch_best = ok[ok.backend == "torch"].groupby(["run_id", "device", "op", "case", "dtype"]).median_s.min()
    out_cells = []
    for _, r in cells.iterrows():
        c = {k: _clean(r.get(k)) for k in CELL_FIELDS}
        c["series"] = series_label(tuple(r[k] for k in SERIES))
        c["ai"] = (r.flops / r.bytes) if _clean(r.flops) and _clean(r.bytes) else None
        t = torch_best.get((r.run_id, r.device, r.op, r.case, r["dtype"]))
        c["x_torch"] = (float(t) / float(r.median_s)) if t is not None and c["median_s"] and \
            r.status == "ok" and r["mode"] == "run" else None
        out_cells.append(c)
    history: dict[str, dict[str, Any]] = {}
    for key, g in ok.groupby(SERIES, dropna=False, sort=True):
        label = series_label(key)
        history[label] = {**dict(zip(SERIES, key, strict=True)), "size": g["size"].iloc[-1],
                          "points": [[_clean(t), _clean(m), _clean(gb), rid, _clean(sm)]
                                     for t, m, gb, rid, sm in zip(g.started_utc, g.median_s, g.gbps, g.run_id,
                                                                  g.sm_mhz, strict=True)]}
    devices: dict[str, Any] = {}
    for rid in sorted(h.runs):
        for slug, rec in (h.runs[rid].get("devices") or {}).items():
            devices[slug] = {"name": rec.get("name"), "kind": rec.get("kind"), "vendor": rec.get("vendor"),
                             "driver": rec.get("driver"), "memory": rec.get("memory"),
                             "compute_units": rec.get("compute_units"), "l2_bytes": rec.get("l2_bytes"),
                             "backend_versions": rec.get("backend_versions") or {}}
    for slug in sorted(set(rows.device.dropna()) if len(rows) else set()):
        devices.setdefault(slug, {"name": slug, "backend_versions": {}})
        devices[slug]["peaks"] = _peaks(slug, roots)
    runs = []
    for rid, rec in sorted(h.runs.items()):
        g = rows[rows.run_id == rid]
        clk = pd.to_numeric(g.sm_mhz, errors="coerce").dropna()
        mem = pd.to_numeric(g.mem_mhz, errors="coerce").dropna()
        thr = sorted({t for s in g.throttle.dropna() for t in str(s).split(",") if t})
        runs.append({"id": rid, "started_utc": rec.get("started_utc"), "git_sha": rec.get("git_sha"),
                     "git_dirty": rec.get("git_dirty"), "argv": " ".join(map(str, rec.get("argv") or [])),
                     "host": (rec.get("host") or {}).get("hostname"), "devices": sorted(rec["devices"]),
                     "files": [_rel(f) for f in rec["files"]],
                     "rows": int(len(g)),
                     "statuses": {str(k): int(v) for k, v in g.status.value_counts().items()},
                     "timers": sorted({str(t) for t in g.timer.dropna()}),
                     "ops": sorted({str(o) for o in g.op.dropna()}),
                     "sm_mhz": [float(clk.min()), float(clk.max())] if len(clk) else None,
                     "mem_mhz": [float(mem.min()), float(mem.max())] if len(mem) else None,
                     "throttle": thr,
                     "peak_sources": sorted({str(p) for p in g.peak_source.dropna()}),
                     "versions": {s: (d or {}).get("backend_versions") for s, d in rec["devices"].items()}})
    return {"generated_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "git": res.git_info(), "results_dirs": [str(r) for r in roots], "devices": devices,
            "cells": out_cells, "history": history,
            "markers": _markers(reports_dirs or [r / "reports" for r in roots]), "runs": runs,
            "skipped_files": [{"file": f, "reason": why} for f, why in h.skipped],
            "ops": sorted({c["op"] for c in out_cells}),
            "backends": sorted({c["backend"] for c in out_cells})}


def _script_safe(text: str) -> str:
    """Text that cannot close the inline <script> it sits in."""
    return text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def build(root: Roots = None, out: Path | str = DEFAULT_OUT, reports_dirs: list[Path] | None = None) -> Path:
    """Write ``<out>/index.html`` (and ``data.json`` beside it, for other tools); returns the page."""
    data = collect(root, reports_dirs)
    page = (HERE / "template.html").read_text(encoding="utf-8")
    payload = _script_safe(json.dumps(data, default=res._jsonable, separators=(",", ":")))
    parts = {"/*@PLOTLY@*/": plotly_js().replace("</script", "<\\/script"),
             "/*@DATA@*/": f"window.SOLBENCH = {payload};",
             "/*@APP@*/": _script_safe((HERE / "app.js").read_text(encoding="utf-8"))}
    for k, v in parts.items():
        if page.count(k) != 1:
            raise ValueError(f"template.html must hold {k} exactly once")
        page = page.replace(k, v)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    res.atomic_write_text(out / "index.html", page)
    res.atomic_write_text(out / "data.json", json.dumps(data, indent=1, default=res._jsonable) + "\n")
    return out / "index.html"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, action="append",
                    help="results folder (repeatable; default: results/ and the user's results folder)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    a = ap.parse_args(argv)
    print(build(a.results, a.out))


if __name__ == "__main__":
    main()
