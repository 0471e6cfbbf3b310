"""Where does a scan lose bandwidth? Times, on one backend, shapes of the single-pass look-back
and each pass of the three-pass scans, with the harness's protocol (suite.timing.measure, an L2
flush before every sample), and prints GB/s against the measured copy ceiling.

    python scripts/scan_probe.py cuda [--n 268435456] [--dtype fp32] [--out DIR]

One backend per process (each brings its own LLVM/driver). Every configuration that computes a
scan is checked against the float64 reference first (poisoned output); a wrong one becomes a
FAILED row and is not timed. Probes that are wrong on purpose (PROBE_NO_LOOKBACK: no look-back
at all, the memory path alone) say so in the "checked" column. Bytes: 8n for a whole scan and
for the scan pass of a three-pass scheme (read n, write n), 4n for its reduce pass (read n).
Writes ``probe-scan-<backend>-<dtype>.json`` (atomically) under --out.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ops.scan.kernels as sk  # noqa: E402
from scripts.probe import selected  # noqa: E402
from suite.registry import REGISTRY, discover, get_spec  # noqa: E402
from suite.spec import Case, np_dtype  # noqa: E402
from suite.timing import Protocol, measure  # noqa: E402


def variant(backend: str, name: str):
    return lambda be, case: REGISTRY[("scan", backend, name)].factory(be, case)


def configs(backend: str) -> list[tuple[str, object, bool, int]]:
    """(label, factory(be, case) -> run, kind, bytes per element). kind: True, a whole scan
    (checked, then timed); False, timed only (not a scan); "passes", a multi-pass scan: checked and
    timed whole, then each of its ``run.passes`` (name → (launch, bytes)) timed alone."""
    if backend == "cuda":
        lb = sk.cuda_lookback
        cfg = [(f"lookback block={b} vec={v} window={w} spin={sl}",
                lambda be, c, b=b, v=v, w=w, sl=sl: lb(be, c, b, v, LOOKBACK=w, SPIN_LIMIT=sl), True, 8)
               for b, v, w, sl in ((128, 16, 8, 256), (128, 16, 4, 256), (256, 8, 8, 256), (128, 16, 8, 1))]
        cfg += [(f"NO look-back, block={b} vec={v} (memory path only)",
                 lambda be, c, b=b, v=v: lb(be, c, b, v, PROBE_NO_LOOKBACK=1), False, 8)
                for b, v in ((128, 16),)]
        cfg += [("cupy.cumsum", variant("cuda", "cupy"), True, 8),
                ("copy x -> y (cupy)", lambda be, c: lambda ins, outs: outs["y"].__setitem__(..., ins["x"]),
                 False, 8)]
        return cfg + [("kogge_stone", variant("cuda", "kogge_stone"), "passes", 8)]
    if backend == "opencl":
        cfg = [(f"lookback block={b} vec={v} window={w}",
                lambda be, c, b=b, v=v, w=w: sk.opencl_lookback(be, c, b, v, w), True, 8)
               for b, v, w in ((128, 16, 8), (128, 16, 4), (64, 16, 8), (128, 32, 8), (256, 8, 8))]
        return cfg + [("kogge_stone", variant("opencl", "kogge_stone"), "passes", 8)]
    if backend == "triton":
        cfg = [(f"lookback tile={t} warps={w} window={win}",
                lambda be, c, t=t, w=w, win=win: sk.triton_lookback(be, c, t, win, w, sub=0), True, 8)
               for t, w, win in ((8192, 4, 16), (16384, 4, 16), (16384, 8, 16), (16384, 8, 32),
                                 (16384, 16, 16), (32768, 8, 16), (32768, 16, 16), (65536, 16, 16),
                                 # one flag per thread: no replicated volatile loads to disagree
                                 (8192, 4, 128), (16384, 4, 128), (16384, 8, 256))]
        # tiles in program-id order (x's load before the ticket returns), waits bounded by a
        # fallback that sums an unpublished tile from x (SPIN 1: nearly every wait falls back)
        cfg += [(f"lookback pid-order tile={t} warps={w} window={win} spin={sp}",
                 lambda be, c, t=t, w=w, win=win, sp=sp: sk.triton_lookback(be, c, t, win, w, sub=0,
                                                                            PID_ORDER=True, SPIN=sp), True, 8)
                for t, w, win, sp in ((8192, 4, 128, 4096), (16384, 4, 128, 4096), (8192, 4, 16, 4096),
                                      (8192, 4, 128, 1))]
        # session 28: the tile streamed (scan_lookback_l2: its sum, the look-back, then a re-read
        # from L2 scanned `sub` values at a time), few registers, several programs per SM
        cfg += [(f"lookback l2 tile={t} sub={sb} warps={w} window={win}",
                 lambda be, c, t=t, sb=sb, w=w, win=win: sk.triton_lookback(be, c, t, win, w, sub=sb),
                 True, 8)
                for t, sb, w, win in ((16384, 4096, 8, 32), (16384, 4096, 4, 32), (16384, 4096, 8, 8),
                                      (8192, 2048, 4, 16), (16384, 2048, 4, 16), (32768, 2048, 4, 16),
                                      (16384, 4096, 8, 16), (32768, 4096, 8, 16), (16384, 1024, 4, 16),
                                      (65536, 4096, 8, 16), (16384, 4096, 4, 16), (16384, 8192, 8, 16),
                                      (16384, 8192, 16, 16), (8192, 4096, 8, 16), (32768, 8192, 16, 16),
                                      (12288, 4096, 8, 16), (24576, 4096, 8, 16))]
        # session 28's scan_lookback_tma: the tile as one TMA box held in registers (71 registers at
        # 16384 values on 16 warps, 73 at 8192 on 8), scanned as 256-value rows
        cfg += [(f"lookback tma tile={t} warps={w} window=16",
                 lambda be, c, t=t, w=w: sk.triton_lookback_tma(be, c, t, 16, w), True, 8)
                for t, w in ((16384, 16), (8192, 8), (8192, 16), (4096, 4), (16384, 32))]
        return cfg + [("reduce_then_scan", variant("triton", "reduce_then_scan"), "passes", 8)]
    if backend == "webgpu":
        cfg = [(f"lookback vec4/invocation={v} window={w} spin={sp} poll={p}",
                lambda be, c, v=v, w=w, sp=sp, p=p: sk.webgpu_lookback(be, c, v, window=w, spin=sp, poll=p),
                True, 8)
               for v, w, sp, p in ((4, 32, 4096, "rmw"), (2, 32, 4096, "rmw"), (8, 32, 4096, "rmw"),
                                   (4, 16, 4096, "rmw"), (4, 8, 4096, "rmw"), (4, 32, 4096, "load"),
                                   (4, 8, 4096, "load"), (4, 32, 64, "rmw"))]
        return cfg + [(f"three-pass vec4/invocation={v}", lambda be, c, v=v: sk.webgpu_three_pass(be, c, v),
                       "passes", 8) for v in (2, 4, 8)]
    if backend == "torch":
        return [("torch.cumsum", variant("torch", "cumsum"), True, 8)]
    raise SystemExit(f"unknown backend {backend!r}; valid: cuda, opencl, triton, webgpu, torch")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("backend")
    ap.add_argument("--n", type=int, default=2**28)
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "i32"])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--only", default="", help="run only the configurations whose label contains this "
                    "(texts separated by |: any of them; text$: ends with it)")
    ap.add_argument("--ceiling", type=float, default=None, help="GB/s (default: peaks.json of the device)")
    args = ap.parse_args()

    from suite.check import checked_launch
    from suite.results import RESULTS_DIR, atomic_write_json
    from suite.sol import load_peaks
    from suite.worker import probe_backend

    discover()
    be = probe_backend(args.backend)
    dev = be.device
    ceiling = args.ceiling
    if ceiling is None:
        peaks = load_peaks(dev.slug, RESULTS_DIR) or {}
        ceiling = (peaks.get("measured", {}).get("bandwidth", {}) or {}).get("value", 0) / 1e9 or None
    spec = get_spec("scan")
    case = Case(f"n={args.n}", {"n": args.n}, args.dtype, seed=17)
    t0 = time.perf_counter()
    x = spec.inputs(case)
    ref = spec.reference(case, x)
    tol = spec.tolerance(case)
    print(f"# {args.backend} on {dev.name} ({dev.slug}), n={args.n} {args.dtype}, ceiling {ceiling} GB/s, "
          f"inputs+reference {time.perf_counter() - t0:.1f} s", flush=True)
    ins = {"x": be.upload(x["x"])}
    outs = {"y": be.empty((args.n,), np_dtype(args.dtype))}
    rows = []

    def timed(label: str, run, nbytes: int, checked: str) -> None:
        row = {"label": label, "bytes": nbytes, "checked": checked}
        tm = measure(be, lambda: run(ins, outs), Protocol(time_cap_s=2.0))
        row.update(median_ms=tm.median_s * 1e3, gbs=nbytes / tm.median_s / 1e9, rse=tm.rse, n=tm.n,
                   clocks=be.clocks())
        row["pct"] = 100 * row["gbs"] / ceiling if ceiling else None
        pct = f"{row['pct']:5.1f} %" if ceiling else ""
        print(f"{label:48s} {row['median_ms']:8.3f} ms {row['gbs']:7.0f} GB/s {pct}  [{checked}]", flush=True)
        rows.append(row)

    for label, factory, kind, per_elem in configs(args.backend):
        if not selected(label, args.only):
            continue
        try:
            run = factory(be, case)
            checked = "not a scan (timed only)"
            if kind:
                res = checked_launch(be, spec, case, run, ins, outs, x, ref, tol)
                if not res.ok:
                    rows.append({"label": label, "checked": f"FAILED {res.message}"})
                    print(f"{label:48s} FAILED: {res.message[:120]}", flush=True)
                    continue
                checked = "ok"
            timed(label, run, per_elem * args.n, checked)  # both dtypes are 4-byte
            if kind == "passes":
                for name, (launch, nbytes) in getattr(run, "passes", {}).items():
                    timed(f"{label}: {name} alone", launch, nbytes, "one pass (timed only)")
        except Exception as e:  # noqa: BLE001 - a config that fails to build or run is a row
            rows.append({"label": label, "error": f"{type(e).__name__}: {e}"[:500]})
            print(f"{label:48s} ERROR {rows[-1]['error'][:150]}", flush=True)
    tag = f"-{''.join(ch if ch.isalnum() else '_' for ch in args.only)}" if args.only else ""
    path = Path(args.out) / f"probe-scan-{args.backend}-{args.dtype}{tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"backend": args.backend, "device": dev.name, "slug": dev.slug, "n": args.n,
                             "dtype": args.dtype, "ceiling_gbs": ceiling, "method": "suite.timing.measure, "
                             "cold (L2 flushed), median", "rows": rows})
    print(f"# wrote {path}")


if __name__ == "__main__":
    main()
