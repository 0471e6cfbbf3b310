"""The one timing protocol, for every backend.

Warm-up by a time budget, then samples of ``be.time(fn)`` (device-side timers: CUDA events,
OpenCL profiling events, WebGPU timestamp queries; host time only where a device has none),
each preceded by an L2 flush outside the timed window unless ``hot``. Sampling stops once the
relative standard error of the mean falls below ``target_rse`` (after ``min_samples``), or at
the time cap / ``max_samples``. The median is the reported figure.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np


@dataclass
class Timing:
    method: str  # timer name, e.g. "cuda-event"
    cold: bool
    median_s: float
    min_s: float
    q1_s: float
    q3_s: float
    mean_s: float
    rse: float  # relative standard error of the mean
    n: int
    warmup_n: int
    converged: bool
    samples: list[float] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Protocol:
    warmup_s: float = 0.2
    min_samples: int = 10
    max_samples: int = 1000
    target_rse: float = 0.005
    time_cap_s: float = 5.0
    hot: bool = False


def measure(be, fn, proto: Protocol = Protocol()) -> Timing:
    """Time ``fn`` (which enqueues the kernel's work) on backend ``be``."""
    # warm-up: JIT, lazy module loading, autotuning and clock ramp stay out of the numbers. After
    # the first call, the rest of the budget is filled with back-to-back launches and one
    # synchronize (at most 64 per batch): a device that waits on the host between launches may
    # stay in a low clock state (seen on the H200 through WebGPU: 345 MHz instead of 1980).
    t_end = time.perf_counter() + proto.warmup_s
    warm, batch = 0, 1
    while True:
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        be.synchronize()
        warm += batch
        now = time.perf_counter()
        if now >= t_end and warm >= 2:
            break
        per_call = (now - t0) / batch
        batch = max(1, min(64, int((t_end - now) / max(per_call, 1e-6))))
    samples: list[float] = []
    t_cap = time.perf_counter() + proto.time_cap_s
    rse = math.inf
    while len(samples) < proto.max_samples:
        if not proto.hot:
            be.flush_l2()
            be.synchronize()
        samples.append(be.time(fn))
        if len(samples) >= proto.min_samples:
            a = np.asarray(samples)
            rse = float(a.std(ddof=1) / math.sqrt(a.size) / a.mean()) if a.mean() > 0 else 0.0
            if rse < proto.target_rse or time.perf_counter() > t_cap:
                break
    a = np.asarray(samples)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return Timing(method=getattr(be, "timer", "host"), cold=not proto.hot, median_s=float(med),
                  min_s=float(a.min()), q1_s=float(q1), q3_s=float(q3), mean_s=float(a.mean()),
                  rse=rse, n=int(a.size), warmup_n=warm, converged=rse < proto.target_rse,
                  samples=[float(s) for s in a])
