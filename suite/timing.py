"""The one timing protocol, for every backend.

Warm-up by a time budget (``SOAK_S`` for compute-heavy GPU rows, so that they are all timed in
the power-capped steady state, see ``soaked``), then samples of ``be.time(fn)`` (device-side
timers: CUDA events, OpenCL profiling events, WebGPU timestamp queries; host time only where a
device has none),
each preceded by an L2 flush outside the timed window unless ``hot``. Sampling stops once the
relative standard error of the mean falls below ``target_rse`` (after ``min_samples``), or at
the time cap / ``max_samples``; soaked rows take a fixed ``fixed_samples`` instead (see
``soaked``). The median is the reported figure.

During the sampling loop a background thread reads the device's clocks (``be.clocks()``: NVML
SM/memory clocks, power, throttle reasons) every ``clock_interval_s``; their min/median are kept
with the timing. A timing is *flagged* when the SM clock's median fell below ``sm_floor`` or the
memory clock's minimum below ``mem_floor`` of the device's maximum, when a throttle reason other
than idle/application clocks was active, when a blocking start opened on its timeout, or when
sampling did not converge; ``measure_flagged`` then measures once more and keeps the second
timing (the first one's figures are kept beside it). A kernel whose device stays busy after the
window (``be.outside_s``: work on another stream) is rejected with ``OutsideWindow``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
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
    #: how each window opened (the adapter's ``start_method``: blocking-kernel, user-event-gate,
    #: single-submit, host, spin-lead)
    start: str = ""
    #: clocks read during the sampling loop (``summarize_clocks``); empty without NVML
    clocks: dict = field(default_factory=dict)
    #: why this timing is not to be trusted as is (empty: clean); see ``flags_of``
    flags: list[str] = field(default_factory=list)
    #: median device-busy time after the window (CUDA-based adapters), seconds
    outside_s: float | None = None
    #: the first attempt's median, flags and clocks when this is a re-measurement
    first_attempt: dict | None = None
    #: seconds of warm-up asked for (Protocol.warmup_s; SOAK_S for compute-heavy GPU rows)
    warmup_s: float | None = None
    #: seconds the warm-up ran past ``warmup_s`` waiting for the SM clock (``ClockWait``), and the
    #: SM clock it ended on; older run files lack them
    warmup_extra_s: float | None = None
    warmup_sm_mhz: float | None = None
    #: how many samples were asked for: "adaptive" (until the RSE target, the time cap or
    #: max_samples) or "fixed N" (soaked rows); older run files lack it: adaptive
    sampling: str = ""
    #: what preceded each sample: "read" (the cold flush reads ≥ 2× L2, Backend.flush_l2) or
    #: "none" (hot). Older run files lack it: before the read flush (history.READ_FLUSH_SINCE) the
    #: flush wrote its buffer, which charged ~9 µs of write-backs to each sample on the H200
    flush: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Protocol:
    warmup_s: float = 0.2
    min_samples: int = 10
    max_samples: int = 1000
    target_rse: float = 0.005
    time_cap_s: float = 5.0
    #: > 0: exactly this many samples (the time cap still bounds them), no RSE stopping rule
    fixed_samples: int = 0
    hot: bool = False
    #: seconds between clock readings during sampling
    clock_interval_s: float = 0.01
    #: flag when the SM clock's median during sampling is below this fraction of its maximum
    sm_floor: float = 0.85
    #: flag when the memory clock's minimum during sampling is below this fraction of its maximum
    mem_floor: float = 0.95
    #: reject when the device stays busy after the window longer than this (seconds) and than
    #: ``outside_frac`` of the median: work the window did not contain
    outside_floor_s: float = 50e-6
    outside_frac: float = 0.5
    #: after ``warmup_s``, warm-up goes on while the SM clock is below its maximum and still
    #: rising: until it reaches the maximum, rises by no more than 1 % of it for ``clock_settle_s``
    #: (a steady state below it, e.g. a power-capped GEMM), or ``clock_wait_s`` has passed
    clock_wait_s: float = 4.0
    clock_settle_s: float = 0.3


#: throttle reasons that do not make a timing suspect (idle between samples, application clocks)
BENIGN_THROTTLE = {"gpu_idle", "app_clocks", "sync_boost", "display_clocks"}


class ClockSampler:
    """Reads ``reader()`` every ``interval`` seconds on a background thread while active; stops
    at once when the first reading is empty (no NVML for this device)."""

    def __init__(self, reader: Callable[[], dict], interval: float):
        self.reader, self.interval = reader, interval
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                r = self.reader()
            except Exception:  # noqa: BLE001 - a failed reading ends sampling, not the timing
                return
            if not r:
                return
            self.samples.append(r)
            self._stop.wait(self.interval)

    def __enter__(self) -> ClockSampler:
        self._thread = threading.Thread(target=self._loop, name="solbench-clocks", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


#: GPU rows of at least SOAK_INTENSITY flops per byte and SOAK_FLOPS flops per launch (matmul
#: from 2048³ and attention at bench sizes; not GEMV, softmax, the skinny M = 16 matmul or small
#: kernels that cannot load the GPU) are warmed up for ``SOAK_S`` seconds of back-to-back
#: launches: under a sustained GEMM the H200 power-caps within about a second (1980 -> ~1450-1700
#: MHz), so with the usual 0.2 s warm-up the first compute-heavy row of a run sampled a cool GPU
#: and the rows after it a capped one (cuBLAS bf16 8192³: 787 TFLOP/s as the first row at a
#: median 1628 MHz, 682 after other rows at ~1485 MHz). After the soak every such row is timed in
#: the capped steady state, whatever its place in the run.
#:
#: A soaked row then takes exactly SOAK_SAMPLES samples. The capped clock is not steady under the
#: sampling loop (a flush and a host synchronisation between launches lower the average power, and
#: the clock climbs): with the RSE stopping rule a row that drifted sampled longer and drifted
#: further, so its median came from a later, faster phase than its neighbours'. In 11 H200 runs
#: (2026-12-01/02) every kernel/cuBLAS ratio at 8192³ that the full medians moved by more than a
#: few points came with a row of 28-106 samples (cuBLAS's in five, lowering the ratio: bf16 1.686
#: -> 1.432 ms over 106 in run d19045; wgmma fp16's in fd7e61, raising it); over each row's first 10
#: samples the ratios agree run to run (mma_sync 0.62-0.66 ×, wgmma 0.85-0.89 ×) where the full
#: medians scatter (0.57-0.66, 0.75-0.94). A fixed count samples every soaked row in the same phase.
SOAK_INTENSITY = 64.0
SOAK_FLOPS = 1e10
SOAK_S = 2.0
SOAK_SAMPLES = 10


def soaked(proto: Protocol, flops: float, nbytes: float, gpu: bool) -> Protocol:
    """``proto`` with a ``SOAK_S`` warm-up and ``SOAK_SAMPLES`` samples where a GPU row is
    compute-heavy (see SOAK_INTENSITY)."""
    from dataclasses import replace

    heavy = nbytes > 0 and flops >= SOAK_FLOPS and flops / nbytes >= SOAK_INTENSITY
    if gpu and heavy:  # (a larger min_samples asked for stands)
        return replace(proto, warmup_s=max(proto.warmup_s, SOAK_S),
                       fixed_samples=max(SOAK_SAMPLES, proto.min_samples))
    return proto


def summarize_clocks(samples: list[dict]) -> dict:
    """n, min/median SM and memory clocks, their maxima, peak power and every throttle reason."""
    if not samples:
        return {}
    out: dict = {"n": len(samples)}
    for k in ("sm_mhz", "mem_mhz"):
        v = [s[k] for s in samples if s.get(k) is not None]
        if v:
            out[f"{k}_min"], out[f"{k}_median"] = min(v), float(np.median(v))
            out[f"{k}_max_seen"] = max(v)
    for k in ("sm_max_mhz", "mem_max_mhz"):
        v = [s[k] for s in samples if s.get(k)]
        if v:
            out[k] = max(v)
    p = [s["power_w"] for s in samples if s.get("power_w") is not None]
    if p:
        out["power_w_max"] = max(p)
    out["throttle"] = sorted({t for s in samples for t in s.get("throttle", [])})
    return out


def flags_of(t: Timing, proto: Protocol, start_timeouts: int = 0) -> list[str]:
    """Why a timing is suspect: low clocks, throttling, a blocking start that timed out, or no
    convergence (each flag names its evidence)."""
    flags = []
    c = t.clocks
    sm_max = c.get("sm_max_mhz") or c.get("sm_mhz_max_seen")
    if sm_max and c.get("sm_mhz_median") is not None and c["sm_mhz_median"] < proto.sm_floor * sm_max:
        flags.append(f"sm_clock_low: median {c['sm_mhz_median']:.0f} MHz < {proto.sm_floor:g}·{sm_max} MHz")
    mem_max = c.get("mem_max_mhz") or c.get("mem_mhz_max_seen")
    if mem_max and c.get("mem_mhz_min") is not None and c["mem_mhz_min"] < proto.mem_floor * mem_max:
        flags.append(f"mem_clock_low: min {c['mem_mhz_min']} MHz < {proto.mem_floor:g}·{mem_max} MHz")
    bad = [r for r in c.get("throttle", []) if r not in BENIGN_THROTTLE]
    if bad:
        flags.append(f"throttled: {','.join(bad)}")
    if start_timeouts:
        flags.append(f"start_timeout: {start_timeouts} window(s) opened before fn was enqueued")
    if not t.converged:
        flags.append(f"not_converged: rse {t.rse:.3g} >= {proto.target_rse:g} after {t.n} samples")
    return flags


class ClockWait:
    """Asked by ``measure``'s warm-up once past its time budget: ``more()`` reads the SM clock
    (kept in ``sm``) and says whether to go on warming — while it is below its maximum and has
    risen by more than 1 % of it within ``proto.clock_settle_s``, for at most
    ``proto.clock_wait_s``. No reading: no wait. (Session 32, H100: with
    the wait stopping at 85 % of the maximum, rows began at 1740 MHz and the clock went on to 1980
    over the next rows — hence the wait to the maximum.)"""

    def __init__(self, reader: Callable[[], dict], proto: Protocol, t_end: float):
        self.reader, self.proto, self.t_end = reader, proto, t_end
        self.sm: float | None = None
        self._best, self._best_t = 0.0, 0.0

    def more(self) -> bool:
        try:
            r = self.reader() or {}
        except Exception:  # noqa: BLE001 - a failed reading: no wait
            r = {}
        sm, top, now = r.get("sm_mhz"), r.get("sm_max_mhz"), time.perf_counter()
        if not (sm and top):
            return False
        self.sm = float(sm)
        if sm > self._best + 0.01 * top:  # a rise, not a power-capped clock's 15 MHz steps
            self._best, self._best_t = sm, now
        p = self.proto
        return (sm < top and now - self._best_t < p.clock_settle_s
                and now < self.t_end + p.clock_wait_s)


def sample(be, fn, hot: bool = False) -> float:
    """One timed call of ``fn``: cold (the L2 flushed by a read, then synchronized) unless ``hot``."""
    if not hot:
        be.flush_l2()
        be.synchronize()
    return be.time(fn)


def measure(be, fn, proto: Protocol = Protocol(), clock_reader: Callable[[], dict] | None = None) -> Timing:
    """Time ``fn`` (which enqueues the kernel's work) on backend ``be``; clocks are read by
    ``clock_reader`` (default ``be.clocks``) during sampling and the timing is flagged."""
    from backends.window import OutsideWindow

    # warm-up: JIT, lazy module loading, autotuning and clock ramp stay out of the numbers. After
    # the first call, the rest of the budget is filled with back-to-back launches and one
    # synchronize (at most 64 per batch): a device that waits on the host between launches may
    # stay in a low clock state (seen on the H200 through WebGPU: 345 MHz instead of 1980). Where
    # the clock is readable, warm-up then waits for it (``ClockWait``): session 32's WebGPU GEMV
    # probes on the H200 sampled their first rows at 345-930 MHz after the 0.2 s budget, the clock
    # climbing over ~10 s of rows to 1980 — every row's figure set by its place in the run.
    reader = clock_reader or be.clocks
    t_end = time.perf_counter() + proto.warmup_s
    warm, batch = 0, 1
    wait = ClockWait(reader, proto, t_end)
    while True:
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        be.synchronize()
        warm += batch
        now = time.perf_counter()
        per_call = (now - t0) / batch
        if now >= t_end and warm >= 2:
            if not wait.more():
                break
            left = 0.02  # ~20 ms of launches between clock readings
        else:
            left = t_end - now
        batch = max(1, min(64, int(left / max(per_call, 1e-6))))
    extra = max(0.0, time.perf_counter() - t_end)
    samples: list[float] = []
    outside: list[float] = []
    timeouts0 = getattr(be, "start_timeouts", 0)
    t_cap = time.perf_counter() + proto.time_cap_s
    rse = math.inf
    want = proto.fixed_samples or proto.max_samples
    with ClockSampler(reader, proto.clock_interval_s) as clocks:
        while len(samples) < want:
            samples.append(sample(be, fn, proto.hot))
            if getattr(be, "outside_s", None) is not None:
                outside.append(be.outside_s)
            if len(samples) >= proto.min_samples:
                a = np.asarray(samples)
                rse = float(a.std(ddof=1) / math.sqrt(a.size) / a.mean()) if a.mean() > 0 else 0.0
                if (rse < proto.target_rse and not proto.fixed_samples) or time.perf_counter() > t_cap:
                    break
    a = np.asarray(samples)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    t = Timing(method=getattr(be, "timer", "host"), cold=not proto.hot, median_s=float(med),
               min_s=float(a.min()), q1_s=float(q1), q3_s=float(q3), mean_s=float(a.mean()),
               rse=rse, n=int(a.size), warmup_n=warm, converged=rse < proto.target_rse,
               samples=[float(s) for s in a], start=getattr(be, "start_method", "host"),
               clocks=summarize_clocks(clocks.samples),
               outside_s=float(np.median(outside)) if outside else None,
               flush="none" if proto.hot else "read", warmup_s=proto.warmup_s,
               warmup_extra_s=round(extra, 3), warmup_sm_mhz=wait.sm,
               sampling=f"fixed {proto.fixed_samples}" if proto.fixed_samples else "adaptive")
    if t.outside_s is not None and t.outside_s > max(proto.outside_floor_s, proto.outside_frac * t.median_s):
        raise OutsideWindow(f"the device stayed busy {t.outside_s * 1e6:.0f} µs (median) outside a window of "
                            f"{t.median_s * 1e6:.1f} µs: work outside the timed window (another stream, or a "
                            "command enqueued past the backend?)")
    t.flags = flags_of(t, proto, getattr(be, "start_timeouts", 0) - timeouts0)
    return t


def measure_flagged(be, fn, proto: Protocol = Protocol(),
                    clock_reader: Callable[[], dict] | None = None) -> Timing:
    """``measure``, and once more when the first timing is flagged: the second is kept (still
    flagged if the condition persists), with the first's median, flags and clocks beside it."""
    t = measure(be, fn, proto, clock_reader)
    if not t.flags:
        return t
    again = measure(be, fn, proto, clock_reader)
    again.first_attempt = {"median_s": t.median_s, "flags": t.flags, "clocks": t.clocks}
    return again
