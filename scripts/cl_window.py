"""How much does the OpenCL timing window add to a kernel? For each (op, variant, case) given, one
OpenCL process times the registered kernel three ways, hot (no L2 flush), 200 samples each:

- ``window``: the fence window, the harness's sample before session 21 (a user event gates the
  queue; from the end of a fence kernel behind the gate to the start of a fence kernel after the
  work), read here as the gated sample plus the backend's ``outside_s``;
- ``events``: the harness's sample since session 21, the gated commands' own events (kernels and
  fills enqueued through the backend: first start to last end, device timestamps, no fences), and
  ``busy``, the sum of those commands' own durations (below ``events`` by the gaps between the
  kernels of a several-kernel variant);
- ``ungated``: the same span for launches enqueued straight on the queue (no gate, no fences);

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
    """(fn(), the events of the commands it enqueued through the backend: kernels and fills, the
    commands ``OpenCLBackend.time`` spans — taken where the backend records them, ``_record``)."""
    rec, orig = [], be._record

    def record(ev):
        rec.append(ev)
        return orig(ev)

    be._record = record
    try:
        return fn(), rec
    finally:
        del be._record  # the class's method again


def _span_us(evs) -> float:
    """First recorded command's start to the last one's end, µs (device timestamps): the harness's
    sample, for launches made without its gate."""
    return (max(e.profile.end for e in evs) - min(e.profile.start for e in evs)) * 1e-3


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
        events.append(w * 1e6)  # the harness's sample: the recorded commands' span
        window.append((w + be.outside_s) * 1e6)  # the fence span
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
