"""Where inside one launch does CUDA ``fused_packed`` (gemv_lowbit_pk) lose time? Each block of the
kernel built with PTIMELINE records clock64 at its entry, when x is ready, when consumer warp 0's
wait for each chunk of the ring ends (F) and when it releases the chunk (C), when the producer
issues each chunk (P), and each consumer warp's end, plus %globaltimer at entry and end (to line
the blocks up). Per form this prints medians over cold launches (L2 flushed, as the harness times):

- ``event``: the launch's event-timed duration; ``span``: last block end − first block entry;
- ``skew``: last block entry − first; ``end p50 / max``: block ends after the first entry;
- ``x`` / ``first``: x ready / first chunk in, after the block's entry;
- ``gap``: the mean time between successive chunks' arrival (F): the block's streaming rate
  (arrivals come in bursts, so s35b–s35d printed a median that read 15–25 % low);
- ``busy``: the share of warp 0's time from its first chunk to its last spent computing (C − F):
  near 1 the consumers set the pace, well below 1 the ring (memory) does;
- ``drain``: warp 0's end − the last chunk's arrival; ``lastw``: the last warp's end − the same;
- ``check after``: the full kernel checked again after the timed launches.

Forms: the registered shape, its integer-mma consumer (PIMMA), its memory path alone (PMEMONLY:
wrong by design, unchecked), and the ring depths and warp shapes ``ops/gemv_lowbit/kernels.py``
records as slower. The full kernel is checked against the reference before and after its timed
launches. One JSON file (atomic) under --out with the summaries and one launch's raw records per
form.

    python scripts/pk_timeline.py --case w4a16,n16384,k16384,b1,bf16 [--repeats 30] [--out DIR]

Without a CUDA GPU every form is compiled (NVRTC, sm_90), nothing is timed.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: label → cuda_packed keyword arguments
FORMS = {
    "registered": {},
    "PIMMA=1": {"PIMMA": 1},
    "PIMMA=1 STAGES=4": {"PIMMA": 1, "stages": 4},
    "PMEMONLY UNCHECKED": {"PMEMONLY": 1},
    "STAGES=4": {"stages": 4},
    "STAGES=5": {"stages": 5},
    "KW=16 SPW=2": {"kw": 16, "spw": 2},
}


def summarize(rec: np.ndarray, kw: int, mhz: float | None = None) -> dict:
    """One launch's PTIMELINE records [blocks, PK_TL_STRIDE] (uint64) → its statistics, in µs.
    Clocks become µs at ``mhz``, else at the rate the blocks' own counters ran against %globaltimer
    over their lifetimes (``clk_mhz``; NVML's reading between launches said 1980 MHz where the full
    kernel's counters ran at ~1790 on an H100 — session 35's printed summaries used NVML's, so their
    µs read ~10 % low for the full forms)."""
    from ops.gemv_lowbit.kernels import PK_TL_MAX

    rec = rec[rec[:, 0] > 0]  # the blocks that ran (the buffer is zeroed before each launch)
    g0, g1 = rec[:, 0].astype(np.int64), rec[:, 1].astype(np.int64)
    t0 = int(g0.min())
    clk0 = rec[:, 2].astype(np.int64)
    # the SM clock the block's own counters imply (globaltimer's resolution permitting)
    clk_mhz = float(np.median((rec[:, 4].astype(np.int64) - clk0) / np.maximum(g1 - g0, 1) * 1e3))
    us = 1.0 / (mhz or clk_mhz)  # µs per SM clock
    per = {"x": [], "first": [], "gap": [], "busy": [], "drain": [], "lastw": []}
    for b in range(rec.shape[0]):
        n = min(int(rec[b, 5]), PK_TL_MAX)
        if n == 0:
            continue
        f = rec[b, 32:32 + n].astype(np.int64) - clk0[b]
        c = rec[b, 32 + PK_TL_MAX:32 + PK_TL_MAX + n].astype(np.int64) - clk0[b]
        ends = rec[b, 8:8 + kw].astype(np.int64) - clk0[b]
        per["x"].append((int(rec[b, 3]) - clk0[b]) * us)
        per["first"].append(f[0] * us)
        if n > 1:
            per["gap"].append(float(f[-1] - f[0]) / (n - 1) * us)
        span = c[-1] - f[0]
        per["busy"].append(float((c - f).sum()) / span if span > 0 else 1.0)
        per["drain"].append((int(rec[b, 4]) - clk0[b] - f[-1]) * us)
        per["lastw"].append((int(ends.max()) - f[-1]) * us)
    ends_us = (g1 - t0) / 1e3
    out = {"span_us": float((g1.max() - t0) / 1e3), "skew_us": float((g0.max() - t0) / 1e3),
           "clk_mhz": clk_mhz, "end_p50_us": float(np.median(ends_us)), "end_min_us": float(ends_us.min())}
    for k, v in per.items():
        a = np.asarray(v)
        out[f"{k}_med"] = float(np.median(a)) if a.size else None
        out[f"{k}_max"] = float(a.max()) if a.size else None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", default="w4a16,n16384,k16384,b1,bf16")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()

    from ops.gemv_lowbit import kernels as gk
    from suite.check import checked_launch
    from suite.registry import discover, get_spec
    from suite.results import atomic_write_json
    from suite.spec import np_dtype
    from suite.timing import sample
    from suite.worker import probe_backend

    discover()
    spec = get_spec("gemv_lowbit")
    case = spec.case(args.case)
    be = probe_backend("cuda")
    blocks = be.device.compute_units or 132
    print(f"# gemv_lowbit/cuda fused_packed timeline, {case.name} on {be.device.name}", flush=True)
    tl = be.empty((blocks * gk.PK_TL_STRIDE,), np.uint64)
    if be.compile_only:  # the factory builds each form (NVRTC); its launch would raise Unsupported
        for label, kv in FORMS.items():
            gk.cuda_packed(be, case, timeline=tl, **kv)
            print(f"{label:22s} compiled (no CUDA GPU: nothing timed)", flush=True)
        return
    x = spec.inputs(case)
    ref = spec.reference(case, x)
    sig = spec.signature(case)
    ins = {k: be.upload(x[k]) for k, a in sig.items() if a.role == "in"}
    outs = {k: be.empty(a.shape, np_dtype(a.dtype)) for k, a in sig.items() if a.role == "out"}
    doc = {"case": case.name, "device": be.device.name, "repeats": args.repeats, "forms": {}}
    for label, kv in FORMS.items():
        try:
            run = gk.cuda_packed(be, case, timeline=tl, **kv)
            if "UNCHECKED" not in label:
                res = checked_launch(be, spec, case, run, ins, outs, x, ref, spec.tolerance(case))
                if not res.ok:
                    print(f"{label:22s} FAILED {res.message[:150]}", flush=True)
                    doc["forms"][label] = {"error": f"check failed: {res.message[:500]}"}
                    continue
            for _ in range(20):  # warm: clocks, lazy loading, the repack
                run(ins, outs)
            be.synchronize()
            kw = kv.get("kw", gk.PK_KW)
            stats, raws = [], []
            for _ in range(args.repeats):
                be.fill_bytes(tl, 0)
                t = sample(be, lambda run=run: run(ins, outs))
                rec = be.download(tl).reshape(blocks, gk.PK_TL_STRIDE)
                s = summarize(rec, kw)
                stats.append({"event_us": t * 1e6, "sm_mhz": be.clocks().get("sm_mhz"), **s})
                raws.append(rec)
            again = "unchecked"
            if "UNCHECKED" not in label:  # y after the timed launches too (the epochs moved on)
                res = checked_launch(be, spec, case, run, ins, outs, x, ref, spec.tolerance(case))
                again = "ok" if res.ok else f"FAILED {res.message[:200]}"
            keys = [k for k in stats[0] if isinstance(stats[0][k], (int, float))]
            med = {k: float(np.median([s[k] for s in stats if s[k] is not None])) for k in keys}
            mid = int(np.argsort([s["event_us"] for s in stats])[len(stats) // 2])
            doc["forms"][label] = {"kwargs": kv, "median": med, "check_after": again, "launches": stats,
                                   "raw_median_launch": raws[mid].tolist()}
            print(f"{label:22s} event {med['event_us']:6.2f} span {med['span_us']:6.2f} skew "
                  f"{med['skew_us']:4.2f} end p50/max {med['end_p50_us']:6.2f}/{med['span_us']:6.2f} | x "
                  f"{med['x_med']:5.2f} first {med['first_med']:5.2f} gap {med['gap_med']:5.3f} busy "
                  f"{med['busy_med']:4.2f}/{med['busy_max']:4.2f} drain {med['drain_med']:5.2f} lastw "
                  f"{med['lastw_med']:5.2f}/{med['lastw_max']:5.2f} | SM {med['clk_mhz']:.0f} MHz by its "
                  f"counters (NVML after: {med.get('sm_mhz', 0):.0f}) | check after: {again}", flush=True)
        except Exception as e:  # noqa: BLE001 - a form that fails is a row
            doc["forms"][label] = {"error": f"{type(e).__name__}: {e}"[:500]}
            print(f"{label:22s} ERROR {doc['forms'][label]['error'][:150]}", flush=True)
    out = Path(args.out) / f"pk-timeline-{case.name.replace(',', '_')}.json"
    atomic_write_json(out, doc)
    print(f"# wrote {out}", flush=True)


if __name__ == "__main__":
    main()
