"""How much does the OpenCL timing window add to a kernel? For each (op, variant, case) given, one
OpenCL process times the registered kernel three ways, hot (no L2 flush), 200 samples each:

- ``window``: the fence window, the harness's sample before session 21 (a user event gates the
  queue; from the end of a fence kernel behind the gate to the start of a fence kernel after the
  work), read here as the gated sample plus the backend's ``outside_s``;
- ``events``: the same gated samples' own kernel events, first kernel's start to last kernel's end
  (device timestamps of the timed commands themselves, no fences; the harness's sample since
  session 21), and ``busy``, the sum of those kernels' own durations (below ``events`` by the
  gaps between the kernels of a several-kernel variant);
- ``ungated``: the kernel events of launches enqueued straight on the queue (no gate, no fences);

and a host-timed batch of back-to-back launches (wall clock / count), and prints medians in µs.
Session 21 found a 22–26 µs window for a 32-element vector_add on the H200 through NVIDIA's
OpenCL, against 3 µs through CUDA events.

    python scripts/cl_window.py vector_add/naive/n32:n=32 gemv_lowbit/fused_mma/w4a16,n16384,k16384,b1,bf16
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.registry import REGISTRY, discover, get_spec  # noqa: E402


def _recorded(be, fn):
    """(fn(), the events of the kernels it launched through ``be.launch``)."""
    rec, orig = [], be.launch

    def launch(*a, **k):
        rec.append(orig(*a, **k))
        return rec[-1]

    be.launch = launch
    try:
        return fn(), rec
    finally:
        be.launch = orig


def _span_us(evs) -> float:
    """First recorded kernel's start to the last one's end, µs (device timestamps)."""
    return (evs[-1].profile.end - evs[0].profile.start) * 1e-3


def _measure(be, one) -> dict:
    """Medians (µs) of 200 harness samples of ``one``, their kernels' own events (first start to
    last end, and the sum of the kernels' own durations: less than that span by the gaps between
    several kernels), 200 ungated launches' events, and a host-timed batch of 100."""
    for _ in range(20):
        one()
    be.synchronize()
    window, events, busy, ungated = [], [], [], []
    for _ in range(200):  # the harness's sample, and the timed commands' own events
        w, evs = _recorded(be, lambda: be.time(one))
        window.append((w + be.outside_s) * 1e6)  # the fence span
        events.append(_span_us(evs))
        busy.append(sum(e.profile.end - e.profile.start for e in evs) * 1e-3)
    for _ in range(200):
        _, evs = _recorded(be, one)
        be.synchronize()
        ungated.append(_span_us(evs))
    t0 = time.perf_counter()
    for _ in range(100):
        one()
    be.synchronize()
    return {"window_us": statistics.median(window), "events_us": statistics.median(events),
            "busy_us": statistics.median(busy),
            "ungated_us": statistics.median(ungated), "host_batch_us": (time.perf_counter() - t0) / 100 * 1e6}


def main() -> None:
    from suite.results import atomic_write_json
    from suite.spec import Case, np_dtype
    from suite.worker import probe_backend

    discover()
    be = probe_backend("opencl")
    rows = []
    for item in sys.argv[1:]:
        target, _, dims = item.partition(":")
        op, variant, case_name = target.split("/", 2)
        spec = get_spec(op)
        case = (Case(case_name, {k: int(v) for k, v in (kv.split("=") for kv in dims.split(","))}, "fp32", 1)
                if dims else spec.case(case_name))
        sig = spec.signature(case)
        x = spec.inputs(case)
        ins = {k: be.upload(x[k]) for k, a in sig.items() if a.role == "in"}
        outs = {k: be.empty(a.shape, np_dtype(a.dtype)) for k, a in sig.items() if a.role == "out"}
        run = REGISTRY[(op, "opencl", variant)].factory(be, case)
        row = {"target": item, **_measure(be, lambda: run(ins, outs))}  # noqa: B023 - used in this iteration
        rows.append(row)
        print(f"{item:60s} window {row['window_us']:8.1f}  events {row['events_us']:8.1f}  "
              f"busy {row['busy_us']:8.1f}  "
              f"ungated {row['ungated_us']:8.1f}  host batch {row['host_batch_us']:8.1f} µs", flush=True)
    out = Path(os.environ.get("OUT", ".")) / "cl_window.json"
    atomic_write_json(out, {"device": be.device.name, "rows": rows})
    print(json.dumps({"wrote": str(out)}))


if __name__ == "__main__":
    main()
