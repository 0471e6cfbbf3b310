"""Split a kernel's time into a fixed cost per call and a marginal rate: reads probe files
(``scripts/probe.py``'s JSON) of one op and backend at several sizes, and fits each
configuration's cold median time against its bytes by least squares, time = fixed + bytes /
marginal. A memory-bound kernel whose marginal rate is near its memory path's but whose GB/s at
the bench size is not loses to the fixed part (launch, ramp-up, drain, a second launch).

    python scripts/fixed_cost.py DIR/probe-gemv_lowbit-triton-*.json [--json OUT]

Labels timed at fewer than two distinct byte counts (and failed or unchecked-error rows, which
carry no time) are listed without a fit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def fit(points: list[tuple[float, float]]) -> dict:
    """Least-squares line through (bytes, seconds): fixed seconds, marginal bytes/s, the largest
    residual in seconds."""
    n = len(points)
    mb = sum(b for b, _ in points) / n
    mt = sum(t for _, t in points) / n
    sbb = sum((b - mb) ** 2 for b, _ in points)
    slope = sum((b - mb) * (t - mt) for b, t in points) / sbb
    fixed = mt - slope * mb
    resid = max(abs(t - (fixed + slope * b)) for b, t in points)
    return {"fixed_s": fixed, "marginal_bps": 1 / slope if slope > 0 else None, "max_residual_s": resid,
            "points": [{"bytes": b, "median_s": t} for b, t in sorted(points)]}


def collect(paths: list[str]) -> dict[str, list[tuple[float, float]]]:
    """label → [(bytes, cold median seconds)] over the probe files, timed rows only."""
    rows: dict[str, list[tuple[float, float]]] = {}
    for p in paths:
        doc = json.loads(Path(p).read_text())
        for r in doc["rows"]:
            rows.setdefault(r["label"], [])
            if r.get("median_s"):
                rows[r["label"]].append((float(doc["bytes"]), float(r["median_s"])))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", help="probe JSON files of one op/backend at several sizes")
    ap.add_argument("--json", help="also write the fits here")
    args = ap.parse_args()
    out = {}
    for label, pts in collect(args.files).items():
        if len({b for b, _ in pts}) < 2:
            print(f"{label:44s} no fit: timed at {len(pts)} size(s)")
            continue
        f = out[label] = fit(pts)
        rate = f"{f['marginal_bps'] / 1e9:7.0f} GB/s" if f["marginal_bps"] else "   (no positive slope)"
        print(f"{label:44s} fixed {f['fixed_s'] * 1e6:6.2f} µs  marginal {rate}  "
              f"worst residual {f['max_residual_s'] * 1e6:.2f} µs  ({len(pts)} sizes)")
    if args.json:
        from suite.results import atomic_write_json

        atomic_write_json(Path(args.json), out)


if __name__ == "__main__":
    main()
