"""Measurement integrity (issue 9), proven on the CPU with planted kernels (tests/wrong/integrity.py)
and fakes: every number the harness reports must be impossible to doubt.

* check flow: the output of the last timed launch is checked, then a second input set; the test
  path launches twice (state across launches, replayed answers, stale carries are caught);
* guard regions: a write one past the end, or into an input, is caught;
* test shapes from the kernels' thresholds: even widths, > 2^22 elements, WebGPU's 2-D grid;
* int32 over its full range, exact float reductions/scans (a dropped tile fails at any size),
  fp16 overflow to ±inf accepted where the rounded reference overflows;
* a worker is restarted after any error row (a sticky fault costs one row);
* the start of the timed window (host enqueue time is not timed), work outside it is inside or
  rejected, no row is ``ok`` above 105 % of SOL;
* clocks sampled during the window flag a row and re-measure it (fake clock reader);
* provenance: the real commit or none, an honest dirty flag, per-row source hashes.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from suite.runner import execute, plan
from suite.worker import Pool
from tests.wrong import registered

ROOT = Path(__file__).resolve().parent.parent
EXTRA = {"SOLBENCH_EXTRA_KERNELS": "tests.wrong.integrity"}
FAST = {"warmup_s": 0.02, "min_samples": 5, "time_cap_s": 0.3, "max_samples": 20}


@pytest.fixture(scope="module")
def pool():
    """Workers that load the planted kernels (registered in this process for this module only)."""
    with registered("tests.wrong.integrity"):
        p = Pool(env=EXTRA)
        yield p
        p.close()


def _rows(pool, op, backend, variants, cases=None, check_only=True, timing=None, timeout=300):
    p = plan(pool, ops=[op], backends=[backend], variants=variants, size="test", check_only=check_only,
             device="all", cases=cases, timing=timing)
    if not p.items:
        pytest.skip(f"no {backend} device: {[n['message'] for n in p.notes]}")
    return execute(pool, p.items, timeout=timeout)


def _status(rows):
    return {(r["variant"], r["case"]): (r["status"], r.get("message", "")) for r in rows}


# -- state across launches: the test path launches twice, the second time on new inputs --------

@pytest.mark.parametrize("backend, variant", [("opencl", "wrong_done_flag"), ("opencl", "wrong_ticket"),
                                              ("webgpu", "wrong_ticket"), ("torch", "wrong_replay")])
def test_state_across_launches_rejected_by_test_path(pool, backend, variant):
    rows = _rows(pool, "vector_add", backend, [variant], cases=["n=1025", "n=65537"])
    st = _status(rows)
    assert all(s == "failed" and "second-input check" in m for s, m in st.values()), st


def test_stale_carry_rejected_by_test_path(pool):
    rows = _rows(pool, "scan", "torch", ["wrong_stale_carry"], cases=["n=4097", "n=65537,i32"])
    st = _status(rows)
    assert all(s == "failed" and "second-input" in m for s, m in st.values()), st


def test_replay_and_stale_carry_rejected_by_timed_run(pool):
    """``solbench run`` re-launches on the same inputs while timing; the second input set after
    it catches what replays (the old post-timing check re-ran the first inputs: both passed)."""
    rows = _rows(pool, "vector_add", "torch", ["wrong_replay"], cases=["n=1025"], check_only=False,
                 timing=FAST)
    rows += _rows(pool, "scan", "torch", ["wrong_stale_carry"], cases=["n=4097"], check_only=False,
                  timing=FAST)
    for r in rows:
        assert r["status"] == "failed" and r["message"].startswith("second-input check"), r["message"]
        assert r["checks"]["first"]["ok"] and r["checks"]["timed"]["ok"]  # only new inputs show it


def test_timed_output_is_checked(pool):
    """The output the timed launches left is verified before anything touches it."""
    rows = _rows(pool, "vector_add", "opencl", ["naive"], cases=["n=1025"], check_only=False, timing=FAST)
    (r,) = rows
    assert r["status"] == "ok", r["message"]
    assert list(r["checks"]) == ["first", "timed", "second-input"]
    assert r["seed"] is not None and r["timing"]["n"] >= 5
    if r.get("pct_sol") is not None:  # the CPU's peaks are committed: the file used is named
        assert r["peaks_used"]["file"]["path"].endswith("peaks.json") and r["peaks_used"]["bandwidth"]
    from suite.results import flat

    f = flat(r)
    assert f["start"] == "user-event-gate, command events" and f["source_hash"] == r["source"]["hash"]


# -- out-of-bounds writes and modified inputs ------------------------------------------------------

@pytest.mark.parametrize("backend", ["opencl", "triton"])
def test_write_one_past_the_end_rejected(pool, backend):
    rows = _rows(pool, "vector_add", backend, ["wrong_le_n"], cases=["n=5", "n=1000", "n=1025"])
    st = _status(rows)
    assert all(s == "failed" and "guard byte(s) changed" in m for s, m in st.values()), st


def test_modified_input_rejected(pool):
    (r,) = _rows(pool, "vector_add", "torch", ["wrong_writes_input"], cases=["n=1025"])
    assert r["status"] == "failed" and "input a was modified" in r["message"], r["message"]


def test_input_comparison_counts_every_piece(monkeypatch):
    """guard.differing_bytes compares in pieces: a byte changed in the last, partial piece or in
    several pieces is counted; equal arrays give 0."""
    from suite import guard

    monkeypatch.setattr(guard, "PIECE", 64)
    a = np.random.default_rng(0).integers(0, 256, 1000, dtype=np.uint8)
    b = a.copy()
    assert guard.differing_bytes(a, b) == 0
    b[999] ^= 1
    assert guard.differing_bytes(a, b) == 1
    b[[0, 64, 500]] ^= 0x80
    assert guard.differing_bytes(a, b) == 4


def test_correct_kernels_leave_guards_alone(pool):
    rows = _rows(pool, "vector_add", "opencl", ["naive", "vec4"], cases=["n=1", "n=1025", "n=4097"])
    rows += _rows(pool, "vector_add", "triton", ["naive"], cases=["n=1", "n=1025"])
    assert all(r["status"] == "ok" and r["guards"] == "canary" for r in rows), _status(rows)


# -- coverage holes closed by the test shapes ------------------------------------------------------

def test_even_width_defect_rejected(pool):
    rows = _rows(pool, "grayscale", "torch", ["wrong_even_width"])
    st = _status(rows)
    odd = {c: s for (v, c), (s, m) in st.items() if int(c.split("x")[1]) % 2}
    even = {c: s for (v, c), (s, m) in st.items() if not int(c.split("x")[1]) % 2}
    assert even and all(s == "failed" for s in even.values()), even
    assert all(s == "ok" for s in odd.values()), odd  # the defect is only on even widths


def test_tail_dropped_above_2_22_rejected(pool):
    from ops.vector_add.spec import LARGE_N

    rows = _rows(pool, "vector_add", "opencl", ["wrong_tail_large"], cases=["n=4097", f"n={LARGE_N}"])
    st = {c: s for (v, c), (s, m) in _status(rows).items()}
    assert st == {"n=4097": "ok", f"n={LARGE_N}": "failed"}, st


def test_webgpu_second_grid_dimension_covered(pool):
    """Under the test session's grid cap a test size needs workgroup_id.y; ignoring it fails."""
    from ops.vector_add.spec import LARGE_N

    rows = _rows(pool, "vector_add", "webgpu", ["wrong_ignore_y", "naive"], cases=[f"n={LARGE_N}"])
    st = {v: s for (v, c), (s, m) in _status(rows).items()}
    assert st == {"wrong_ignore_y": "failed", "naive": "ok"}, st


# -- reductions and scans: exact inputs, full-range int32 ------------------------------------------

@pytest.mark.parametrize("op, backend, variant", [
    ("reduction", "opencl", "wrong_drop_tile"), ("reduction", "webgpu", "wrong_drop_tile"),
    ("scan", "opencl", "wrong_drop_carry"), ("scan", "webgpu", "wrong_drop_carry")])
def test_dropped_tile_rejected_at_every_size(pool, op, backend, variant):
    rows = _rows(pool, op, backend, [variant])
    st = _status(rows)
    # every case with more than two 256-element tiles must fail, both dtypes, exact and rand
    many = {c: s for (v, c), (s, m) in st.items() if int(c.split(",")[0][2:]) > 512}
    assert many and all(s == "failed" for s in many.values()), st
    assert any("i32" in c for c in many) and any("i32" not in c for c in many)


def test_int32_accumulated_through_float32_rejected(pool):
    rows = _rows(pool, "reduction", "opencl", ["wrong_i32_via_f32"])
    st = _status(rows)
    assert all(s == "failed" for (v, c), (s, m) in st.items() if int(c.split(",")[0][2:]) > 1), st


def test_dropped_tile_fails_at_bench_size_reference():
    """At n = 2^28 the old relative bound admitted ~7000 dropped elements; the exact inputs do
    not admit one (checked on the spec, without a kernel)."""
    from ops.reduction.spec import SPEC
    from suite.check import compare
    from suite.spec import Case

    for dt in ("fp32", "fp16", "i32"):
        c = Case("n=2^28", {"n": 2**28}, dt, seed=7)
        tol = SPEC.tolerance(c)
        x = SPEC.inputs(Case("n=2^20", {"n": 2**20}, dt, seed=7))["x"]  # the same distribution, smaller
        ref = SPEC.reference(Case("n=2^20", {"n": 2**20}, dt, seed=7), {"x": x})["out"]
        dropped = ref - x[256:512].astype(np.int64 if dt == "i32" else np.float64).sum()
        assert tol.atol == 0 and tol.rtol == 0, tol
        if dropped[0] != ref[0]:
            assert not compare(dropped, ref, tol).ok


# -- fp16 overflow rule -----------------------------------------------------------------------------

@pytest.mark.parametrize("backend, variants", [("torch", ["eager"]), ("opencl", ["naive", "vec4"]),
                                               ("webgpu", ["naive", "vec4"])])
def test_fp16_overflow_to_inf_accepted(pool, backend, variants):
    rows = _rows(pool, "vector_add", backend, variants, cases=["n=4097,fp16,overflow"])
    assert rows and all(r["status"] in ("ok", "unsupported") for r in rows), _status(rows)
    assert any(r["status"] == "ok" for r in rows)


def test_overflow_rule_in_checker():
    from ops.vector_add.spec import SPEC
    from suite.check import compare

    c = SPEC.case("n=4097,fp16,overflow")
    x = SPEC.inputs(c)
    ref = SPEC.reference(c, x)["c"]
    assert np.isinf(ref).any()
    right = (x["a"].astype(np.float32) + x["b"].astype(np.float32)).astype(np.float16)
    assert compare(right, ref, SPEC.tolerance(c)).ok
    wrong = right.copy()
    wrong[np.isinf(ref)] = np.float16(65504)  # saturating instead of overflowing
    assert not compare(wrong, ref, SPEC.tolerance(c)).ok
    flipped = right.copy()
    flipped[np.isinf(ref)] *= -1
    assert not compare(flipped, ref, SPEC.tolerance(c)).ok


# -- a worker is restarted after any error row ------------------------------------------------------

def test_sticky_fault_costs_one_row(pool):
    p = plan(pool, ops=["vector_add"], backends=["torch"], size="test", check_only=True, device="all",
             variants=["crash_sticky", "eager"], cases=["n=5", "n=1025"])
    order = sorted(p.items, key=lambda it: (it.variant != "crash_sticky", it.case))  # fault first
    rows = execute(pool, order, timeout=120)
    st = {(r["variant"], r["case"]): r["status"] for r in rows}
    assert all(s == "error" for (v, c), s in st.items() if v == "crash_sticky"), st
    assert all(s == "ok" for (v, c), s in st.items() if v == "eager"), st
    assert all(r.get("worker_restarted") for r in rows if r["status"] == "error")


# -- the timed window -------------------------------------------------------------------------------

def test_host_time_between_launches_is_not_timed(pool):
    """Two launches 30 ms apart on the host: the blocking start (OpenCL user-event gate; WebGPU
    one submission) times the device work only, far below the host's 30 ms."""
    for backend in ("opencl", "webgpu"):
        (r,) = _rows(pool, "vector_add", backend, ["probe_slow_enqueue"], cases=["n=1025"],
                     check_only=False, timing=FAST)
        assert r["status"] == "ok", r["message"]
        assert r["timing"]["median_s"] < 0.01, (backend, r["timing"]["median_s"])
        assert r["timing"]["start"] in ("user-event-gate, command events", "single-submit")


def test_work_enqueued_past_the_backend_is_rejected(pool):
    """A 64 MiB fill enqueued on the queue outside ``launch``/``fill_bytes``: the sample spans the
    recorded commands only (the commands' own profiling events), so the queue time outside them
    (the gate's fence span minus the sample) rejects the row; the plain kernel beside it is ok."""
    rows = _rows(pool, "vector_add", "opencl", ["probe_extra_fill", "naive"], cases=["n=1025"],
                 check_only=False, timing=FAST)
    r = {r["variant"]: r for r in rows}
    assert r["naive"]["status"] == "ok", r["naive"]["message"]
    bad = r["probe_extra_fill"]
    assert bad["status"] == "invalid" and "outside the timed window" in bad["message"], bad["message"]


def test_direct_queue_work_rejected(pool):
    (r,) = _rows(pool, "vector_add", "webgpu", ["probe_direct_write"], cases=["n=1025"], check_only=False,
                 timing=FAST)
    assert r["status"] == "invalid" and "outside the timed window" in r["message"], r["message"]


class FakeBackend:
    """A device whose samples, busy-after-window time and clocks the test chooses."""

    timer = "fake"
    start_method = "blocking-kernel"

    def __init__(self, sample=1e-3, outside=0.0):
        self.sample, self.outside_s, self.start_timeouts = sample, outside, 0

    def synchronize(self):
        pass

    def flush_l2(self):
        pass

    def time(self, fn):
        fn()
        return self.sample

    def clocks(self):
        return {}


def test_busy_after_window_rejected():
    from backends.window import OutsideWindow
    from suite.timing import Protocol, measure

    proto = Protocol(warmup_s=0.0, min_samples=5, time_cap_s=0.1)
    with pytest.raises(OutsideWindow, match="outside the timed window"):
        measure(FakeBackend(sample=2e-6, outside=700e-6), lambda: None, proto)
    assert measure(FakeBackend(sample=1e-3, outside=5e-6), lambda: None, proto).outside_s == 5e-6


def test_faster_than_light_is_invalid():
    from suite import sol

    peaks = {"measured": {"bandwidth": {"value": 4.0e12}}}
    row = {"status": "ok", "bytes": 3 * 4 * 2**28, "flops": 2**28, "dtype": "fp32",
           "timing": {"median_s": 1.3e-6}}
    sol.derive(row, peaks)
    assert row["status"] == "invalid" and "faster than the speed of light" in row["message"]
    assert row["pct_sol"] > 105 and row["peaks_used"]["bandwidth"] == 4.0e12
    ok = {"status": "ok", "bytes": 3 * 4 * 2**28, "flops": 2**28, "dtype": "fp32",
          "timing": {"median_s": 3 * 4 * 2**28 / 4.1e12}}  # 102.5 %: the ceiling's own noise
    sol.derive(ok, peaks)
    assert ok["status"] == "ok"
    cpu = {**row, "status": "ok", "device_kind": "cpu", "message": ""}  # a stale CPU ceiling: flagged
    sol.derive(cpu, peaks)
    assert cpu["status"] == "ok" and cpu["flags"][0].startswith("above_sol")


# -- clocks during the window: flags and one re-measure (fake clock reader) -------------------------

def _reader(states):
    """A clock reader that returns ``states[i]`` during the i-th measurement (switched by the
    test through the returned setter)."""
    cur = {"i": 0}

    def read():
        return dict(states[min(cur["i"], len(states) - 1)])

    return read, cur


FULL = {"sm_mhz": 1980, "mem_mhz": 3201, "sm_max_mhz": 1980, "mem_max_mhz": 3201, "power_w": 300,
        "throttle": []}
LOW = {**FULL, "sm_mhz": 345, "mem_mhz": 1593, "throttle": ["sw_thermal"]}


class SlowFake(FakeBackend):
    """4 ms of host time per sample, so the clock sampler gets readings in."""

    def time(self, fn):
        import time

        time.sleep(0.004)
        return super().time(fn)


def test_low_clocks_flag_and_remeasure(monkeypatch):
    import suite.timing as timing
    from suite.timing import Protocol, measure, measure_flagged

    proto = Protocol(warmup_s=0.0, min_samples=5, time_cap_s=0.2, clock_interval_s=0.001)
    state = {"clocks": LOW}
    t = measure(SlowFake(), lambda: None, proto, lambda: dict(state["clocks"]))
    assert t.clocks["n"] >= 1 and t.clocks["sm_mhz_min"] == 345
    assert any(f.startswith("sm_clock_low") for f in t.flags)
    assert any(f.startswith("mem_clock_low") for f in t.flags)
    assert any("sw_thermal" in f for f in t.flags)

    def measure_then_recover(be, fn, p, reader):  # low clocks in the first measurement only
        res = measure(be, fn, p, reader)
        state["clocks"] = FULL
        return res

    monkeypatch.setattr(timing, "measure", measure_then_recover)
    state["clocks"] = LOW
    t2 = measure_flagged(SlowFake(), lambda: None, proto, lambda: dict(state["clocks"]))
    assert t2.first_attempt and t2.first_attempt["flags"] and not t2.flags, (t2.flags, t2.first_attempt)
    assert t2.clocks["sm_mhz_min"] == 1980
    # a condition that persists stays flagged after the one re-measure
    state["clocks"] = LOW
    monkeypatch.setattr(timing, "measure", measure)
    t3 = measure_flagged(SlowFake(), lambda: None, proto, lambda: dict(state["clocks"]))
    assert t3.first_attempt and t3.flags


def test_clean_clocks_no_flags():
    from suite.timing import Protocol, measure

    proto = Protocol(warmup_s=0.0, min_samples=5, time_cap_s=0.2, clock_interval_s=0.001)
    t = measure(FakeBackend(), lambda: None, proto, lambda: dict(FULL))
    assert t.flags == [] and t.converged


def test_unconverged_timing_flagged():
    from suite.timing import Protocol, measure

    vals = iter([1e-3, 2e-3] * 100)
    be = FakeBackend()
    be.time = lambda fn: next(vals)
    t = measure(be, lambda: None, Protocol(warmup_s=0.0, min_samples=5, max_samples=6, time_cap_s=0.1),
                lambda: {})
    assert not t.converged and any(f.startswith("not_converged") for f in t.flags)


def test_fixed_sample_count_ignores_the_rse_rule():
    """A protocol with fixed_samples (soaked rows) takes exactly that many samples although the
    RSE target is met after min_samples, and says so in the timing; the default stays adaptive."""
    from suite.timing import Protocol, measure

    be = FakeBackend()
    be.time = lambda fn: 1e-3  # constant: RSE 0, the adaptive rule stops at min_samples
    t = measure(be, lambda: None, Protocol(warmup_s=0.0, min_samples=5, time_cap_s=5.0, fixed_samples=13),
                lambda: {})
    assert t.n == 13 and t.sampling == "fixed 13" and t.converged
    t = measure(be, lambda: None, Protocol(warmup_s=0.0, min_samples=5, time_cap_s=5.0), lambda: {})
    assert t.n == 5 and t.sampling == "adaptive"


def test_compute_heavy_gpu_rows_are_soaked():
    """Rows of matmul/attention bench shapes on a GPU get the SOAK_S warm-up (timed in the power-
    capped steady state whatever their place in a run); light, skinny or CPU rows keep theirs."""
    from suite.registry import discover, get_spec
    from suite.timing import SOAK_S, SOAK_SAMPLES, Protocol, soaked

    discover()
    base = Protocol()

    def warm(op, case, gpu=True):
        spec = get_spec(op)
        c = spec.case(case)
        p = soaked(base, spec.flops(c), spec.bytes_moved(c), gpu)
        assert p.fixed_samples == (SOAK_SAMPLES if p.warmup_s == SOAK_S else 0), p  # with the soak
        return p.warmup_s

    assert warm("matmul", "8192³,bf16") == SOAK_S
    assert warm("attention", "b4h32s8192d128,bf16") == SOAK_S
    assert warm("matmul", "8192³,bf16", gpu=False) == base.warmup_s
    assert warm("softmax", "4096x131072") == base.warmup_s
    assert warm("gemv_lowbit", "w4a16,n16384,k16384,b1,bf16") == base.warmup_s
    assert warm("matmul", "16x8192x8192,bf16") == base.warmup_s  # skinny: memory-bound
    assert warm("matmul", "128³,bf16") == base.warmup_s  # too small to load the GPU
    long = soaked(Protocol(warmup_s=5.0, min_samples=25), 1e12, 1e6, True)
    assert long.warmup_s == 5.0 and long.fixed_samples == 25  # longer asks stand


# -- provenance -------------------------------------------------------------------------------------

def test_git_info_is_real_or_none(tmp_path, monkeypatch):
    from suite import provenance

    info = provenance.git_info()
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True).stdout.strip()
    assert info["git_sha"] == head and len(info["git_sha"]) == 40
    assert isinstance(info["git_dirty"], bool) and len(info["source_hash"]) == 16
    # a repository without commits (what the device copies had): no sha, never "HEAD"
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.setattr(provenance, "ROOT", tmp_path)
    empty = provenance.git_info()
    assert empty["git_sha"] is None and empty["git_dirty"] is None


def test_rows_carry_kernel_source_hashes(pool):
    import hashlib

    from backends.base import read_source

    (r,) = _rows(pool, "vector_add", "opencl", ["naive"], cases=["n=5"])
    (comp,) = r["source"]["compiled"]
    path = ROOT / comp["file"]  # the text as compiled: its #include snippets (halfvec.cl) expanded
    assert comp["sha256"] == hashlib.sha256(read_source(path).encode()).hexdigest()
    assert comp["args"][0] == "vector_add_naive" and comp["args"][1] == {"T": "float"}
    assert any(m["file"] == "ops/vector_add/kernels.py" for m in r["source"]["modules"])
    (t,) = _rows(pool, "vector_add", "triton", ["naive"], cases=["n=5"])
    assert any(m["file"] == "ops/vector_add/vector_add_triton.py" for m in t["source"]["modules"])


def test_second_input_set_differs():
    from ops.vector_add.spec import SPEC
    from suite.worker import Executor

    ex = Executor("torch")
    case = SPEC.case("n=1025")
    a, ra = ex.data(SPEC, case, None)
    b, rb = ex.second_data(SPEC, case, None)
    assert not np.array_equal(a["a"], b["a"]) and not np.array_equal(ra["c"], rb["c"])
    assert ex.data(SPEC, case, None)[0] is a  # the first set stays cached


def test_warmup_waits_for_the_clock():
    """Past its time budget, warm-up goes on while the SM clock is below its maximum and still
    rising (a clock that climbs with launches is sampled at its top), stops on a plateau after
    ``clock_settle_s`` and at ``clock_wait_s`` in any case; no readings: no wait."""
    from suite.timing import Protocol, measure

    proto = Protocol(warmup_s=0.0, min_samples=5, time_cap_s=0.2, clock_interval_s=0.001,
                     clock_wait_s=2.0, clock_settle_s=0.05)
    launches = {"n": 0}

    def fn():
        launches["n"] += 1

    def ramp():  # +10 MHz per launch from 345, up to 1980
        return {**FULL, "sm_mhz": min(1980, 345 + 10 * launches["n"])}

    t = measure(SlowFake(), fn, proto, ramp)
    assert t.warmup_sm_mhz == 1980 and t.clocks["sm_mhz_min"] == 1980, t.clocks
    assert not any(f.startswith("sm_clock_low") for f in t.flags)
    # a plateau below the maximum that drifts up by 25 MHz/s (a power-capped GEMM: new highs, but
    # by less than 1 % of the maximum within clock_settle_s): settles, does not wait out clock_wait_s
    import time

    t0 = time.perf_counter()
    t = measure(FakeBackend(), fn, proto, lambda: dict(FULL, sm_mhz=1440 + 25 * (time.perf_counter() - t0)))
    assert 1440 <= t.warmup_sm_mhz < 1500 and t.warmup_extra_s < 1.0
    # a clock that keeps rising below its maximum (800 MHz/s from 300): clock_wait_s bounds the wait
    t0 = time.perf_counter()

    def creep():
        return dict(FULL, sm_mhz=300 + 800 * (time.perf_counter() - t0))

    t = measure(FakeBackend(), fn, proto, creep)
    assert 2.0 <= t.warmup_extra_s < 3.0
    t = measure(FakeBackend(), fn, proto, lambda: {})
    assert t.warmup_sm_mhz is None and t.warmup_extra_s < 0.05
