"""How fast can this device read N bytes in one kernel? The bandwidth ceiling in peaks.json is
measured on large transfers; a kernel of ~100–300 MB also pays its launch, ramp-up and drain. This
times plain reads of each gemv_lowbit bench case's byte count (the case's packed weights + scales +
x + y): torch's dense fp16 GEMV (cuBLAS, ``x @ Wᵀ`` as the `dense` variant runs it, W [rows, 8192]
with the same bytes) and ``torch.sum`` over a fp32 buffer of the same bytes, with the harness's
protocol (suite.timing.measure: cold, L2 flushed, median), and prints GB/s and % of the measured
ceilings. One JSON file (atomic) under --out.

    python scripts/size_ceiling.py [--out DIR] [--cap SECONDS] [--sizes BYTES,BYTES,...]

On the GPU torch sees first, else the CPU (tests run it there with small --sizes).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--cap", type=float, default=1.0, help="seconds of samples per row")
    ap.add_argument("--sizes", default="", help="byte counts to read instead of the GEMV cases' "
                    "(comma-separated)")
    args = ap.parse_args()

    import torch

    from suite.registry import discover, get_spec
    from suite.results import RESULTS_DIR, atomic_write_json
    from suite.sol import load_peaks
    from suite.timing import Protocol, measure
    from suite.worker import probe_backend

    discover()
    spec = get_spec("gemv_lowbit")
    be = probe_backend("torch")
    peaks = (load_peaks(be.device.slug, RESULTS_DIR) or {}).get("measured", {})
    ceil = {k: (peaks.get(k) or {}).get("value") for k in ("bandwidth", "read_bandwidth")}
    if args.sizes:
        sizes = {f"{int(b)} B": int(b) for b in args.sizes.split(",")}
    else:
        sizes = {c.name: spec.bytes_moved(c) for c in spec.cases("bench") if c.name.endswith(",bf16")}
        sizes["512 MiB"], sizes["2 GiB"] = 2**29, 2**31
    rows = []
    for name, nbytes in sizes.items():
        for what, fn, b in _reads(torch, be.dev, nbytes):  # x @ Wᵀ: cuBLAS's GEMV on a GPU
            tm = measure(be, fn, Protocol(time_cap_s=args.cap))
            gbs = b / tm.median_s / 1e9
            pct = {k: 100 * gbs * 1e9 / v if v else None for k, v in ceil.items()}
            rows.append({"case": name, "read": what, "bytes": b, "median_s": tm.median_s, "rse": tm.rse,
                         "gbs": gbs, "pct_of": pct, "clocks": tm.clocks, "flags": tm.flags})
            print(f"{name:32s} {what:12s} {b / 1e6:8.1f} MB {tm.median_s * 1e6:8.1f} us {gbs:7.0f} GB/s "
                  + " ".join(f"{v:5.1f} % of {k}" for k, v in pct.items() if v), flush=True)
    atomic_write_json(Path(args.out) / "size-ceiling.json",
                      {"device": be.device.name, "ceilings": ceil, "rows": rows})
    print(f"# wrote {Path(args.out) / 'size-ceiling.json'}")


def _reads(torch, dev, nbytes: int):
    """(name, launch, bytes read) of the two plain reads of about ``nbytes`` on torch device ``dev``."""
    k = 8192
    n = max(1, round(nbytes / (2 * k)))
    w = torch.randn((n, k), device=dev, dtype=torch.float16)
    x = torch.randn((1, k), device=dev, dtype=torch.float16)
    y = torch.empty((1, n), device=dev, dtype=torch.float16)
    buf = torch.rand((nbytes // 4,), device=dev, dtype=torch.float32)
    out = torch.empty((), device=dev, dtype=torch.float32)
    return (("x @ Wᵀ", lambda: torch.mm(x, w.t(), out=y), w.numel() * 2 + 2 * (k + n)),
            ("torch.sum", lambda: torch.sum(buf, dim=0, out=out), buf.numel() * 4))


if __name__ == "__main__":
    main()
