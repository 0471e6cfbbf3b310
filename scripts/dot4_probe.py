"""Does WGSL's ``dot4I8Packed`` reach the GPU as a packed dot-product instruction (DP4A) or as
naga's polyfill? Times two compute-bound WGSL kernels on the WebGPU backend: ``native`` chains
``dot4I8Packed`` (naga emits SPIR-V ``OpSDot`` with the 4x8-bit packed format when the Vulkan
device enables ``shaderIntegerDotProduct``, else four sign extensions, multiplies and adds), and
``manual`` spells that polyfill out (byte-wise sign extension by shifts, an ivec4 dot). Equal
rates: the polyfill ran in both; ``native`` several times faster: a hardware instruction (an SM's
IDP4A rate on Hopper is a fraction of its 128 FP32 lanes per clock, the polyfill costs ~12
operations per dot).

    python scripts/dot4_probe.py [--iters 256] [--workgroups W] [--out DIR]

Both kernels are checked first against a NumPy emulation at a few iterations (every thread's
result), then timed with the harness's protocol (suite.timing.measure, device timestamps, hot:
no memory traffic worth flushing). Writes ``probe-dot4-webgpu.json`` (atomic) under --out.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.timing import Protocol, measure  # noqa: E402

CHAINS = 8  # independent accumulators per thread: enough to cover the instruction's latency
WG = 256
#: workgroups per launch where the adapter reports its compute units (WebGPU does not: the backend's
#: compute_units is None there, and session 31's first run took 1 for it — 16 workgroups, 4096
#: threads, 116 of the H200's 132 SMs idle)
WGS_PER_UNIT = 16
MIN_WGS = 1056  # 132 SMs × 8 workgroups of 256: every SM of a large GPU full (64 warps)

SRC = """
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<i32>;
struct P { iters: u32, n: u32 }
@group(0) @binding(2) var<uniform> p: P;

fn sx(v: u32, s: u32) -> i32 { return bitcast<i32>(v << s) >> 24u; }
fn manual(x: u32, y: u32) -> i32 {
    return dot(vec4<i32>(sx(x, 24u), sx(x, 16u), sx(x, 8u), sx(x, 0u)),
               vec4<i32>(sx(y, 24u), sx(y, 16u), sx(y, 8u), sx(y, 0u)));
}
fn native(x: u32, y: u32) -> i32 { return dot4I8Packed(x, y); }

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    let t = g.x;
    if (t >= p.n) { return; }
DECLS
    for (var i = 0u; i < p.iters; i++) {
STEPS
    }
    o[t] = SUM;
}
"""


def source(fn: str) -> str:
    """The kernel with its chains as scalars (x0, acc0, …), not arrays: a dynamically indexed
    WGSL array may be lowered to local memory, whose round trips would hide either form's cost
    (session 31's first version: 180 cycles per chain step on the H200, both forms)."""
    r = range(CHAINS)
    decls = "\n".join(f"    let x{c} = a[(t * {CHAINS}u + {c}u) % 4096u]; var acc{c} = {c}i;" for c in r)
    steps = "\n".join(f"        acc{c} = acc{c} + {fn}(x{c}, bitcast<u32>(acc{c}));" for c in r)
    return (SRC.replace("DECLS", decls).replace("STEPS", steps).replace("WG", str(WG))
            .replace("SUM", " + ".join(f"acc{c}" for c in r)))


def emulate(a: np.ndarray, n: int, iters: int) -> np.ndarray:
    """Every thread's result in NumPy: int32 wrap-around as in WGSL."""
    def bytes4(v):  # uint32 array → (..., 4) signed bytes, least significant first
        return v.astype("<u4").view(np.int8).reshape(*v.shape, 4).astype(np.int64)

    t = np.arange(n)
    x = a[(t[:, None] * CHAINS + np.arange(CHAINS)) % 4096]
    acc = np.broadcast_to(np.arange(CHAINS, dtype=np.int64), (n, CHAINS)).copy()
    xb = bytes4(x)
    for _ in range(iters):
        d = (xb * bytes4(acc.astype(np.int32).view(np.uint32))).sum(-1)
        acc = (acc + d).astype(np.int32).astype(np.int64)
    return acc.sum(-1).astype(np.int32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iters", type=int, default=256)
    ap.add_argument("--workgroups", type=int, default=0,
                    help=f"of {WG} threads (default: {WGS_PER_UNIT} per compute unit, at least {MIN_WGS})")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()

    from suite.results import atomic_write_json
    from suite.worker import probe_backend

    be = probe_backend("webgpu")
    dev = be.device
    units = dev.compute_units  # None where the adapter does not say (WebGPU)
    wgs = args.workgroups or max(WGS_PER_UNIT * (units or 0), MIN_WGS)
    n = WG * wgs
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32)
    ab, ob = be.upload(a), be.empty((n,), np.int32)
    print(f"# webgpu on {dev.name} ({dev.slug}), compute units: {units or 'not reported'}, {wgs} workgroups, "
          f"{n} threads x {CHAINS} chains x {args.iters} steps",
          flush=True)
    check_iters = 3
    want = emulate(a, n, check_iters)  # the same for both forms
    rows = []
    for form in ("native", "manual"):
        row = {"form": form}
        rows.append(row)
        try:
            pipe = be.compile_source(source(form), "main", f"dot4 {form}")
            be.fill_bytes(ob, 0xFF)
            be.launch(pipe, (n // WG, 1, 1), None, [ab, ob, np.array([check_iters, n], np.uint32)])
            be.synchronize()
            wrong = np.flatnonzero(be.download(ob) != want)
            if wrong.size:
                row["checked"] = f"FAILED: {wrong.size} of {n} threads differ (first {wrong[:4]})"
                print(f"{form:8s} {row['checked']}", flush=True)
                continue
            row["checked"] = "ok"
            params = np.array([args.iters, n], np.uint32)
            tm = measure(be, lambda p=pipe, q=params: be.launch(p, (n // WG, 1, 1), None, [ab, ob, q]),
                         Protocol(hot=True, time_cap_s=2.0))
            dots = n * CHAINS * args.iters
            row.update(median_ms=tm.median_s * 1e3, gdots=dots / tm.median_s / 1e9, rse=tm.rse, n=tm.n,
                       clocks=be.clocks())
            if units:
                row["dots_per_unit_per_ns"] = dots / tm.median_s / 1e9 / units
            print(f"{form:8s} {row['median_ms']:9.3f} ms {row['gdots']:10.1f} G dot4/s", flush=True)
        except Exception as e:  # noqa: BLE001 - a form that fails to build or run is a row
            row["error"] = f"{type(e).__name__}: {e}"[:500]
            print(f"{form:8s} ERROR {row['error'][:150]}", flush=True)
    rates = {r["form"]: r.get("gdots") for r in rows}
    ratio = rates["native"] / rates["manual"] if rates.get("native") and rates.get("manual") else None
    if ratio:
        print(f"# native / manual = {ratio:.2f}", flush=True)
    path = Path(args.out) / "probe-dot4-webgpu.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"backend": "webgpu", "device": dev.name, "slug": dev.slug, "threads": n,
                             "workgroups": wgs, "chains": CHAINS, "iters": args.iters,
                             "ratio_native_over_manual": ratio,
                             "method": "suite.timing.measure, hot, median", "rows": rows})
    print(f"# wrote {path}")


if __name__ == "__main__":
    main()
