"""Traps specific to reduction and scan, beyond the generic check of every kernel on its cases.

- The tolerances: accept honest fp32 orders, reject fp16 accumulation, a dropped element and a
  dropped carry; the references are exact.
- Per backend, each in its own process (two LLVMs in one process crash):
  * random sizes, far larger than one block, checked after a poisoned launch; a second launch
    must agree bit for bit for the deterministic variants (missing barriers show up here);
  * launches on the same scratch with different data in between: look-back flags (or partials)
    left over from the previous launch must not leak into the next;
  * the look-back with many small tiles and a short window (spins and window moves);
  * int32 exactness with magnitudes an fp32 accumulator cannot hold (prefixes up to ~1.6e9);
  * webgpu: 2-D dispatch grids (a tiny per-dimension limit forces them).
  cuda without a GPU: every variant compiles for every dtype at the test and bench sizes.
"""

from __future__ import annotations

import traceback

import numpy as np
import pytest

from suite.check import compare
from suite.spec import Case, Tolerance
from tests.spawn import check_in_process, open_backend, triton_missing

#: variants whose fp32 result legitimately depends on timing (order-dependent atomics, look-back)
NONDETERMINISTIC = {("reduction", "naive"), ("scan", "decoupled_lookback")}
DTYPES = {"reduction": ("fp32", "fp16", "i32"), "scan": ("fp32", "i32")}


# -- tolerances and references ----------------------------------------------------------------

def _pairwise(x: np.ndarray, dt) -> np.ndarray:
    x = x.astype(dt)
    while x.size > 1:
        if x.size % 2:
            x = np.append(x, dt(0))
        x = (x[0::2] + x[1::2]).astype(dt)
    return x.astype(np.float32)


def test_reduction_tolerance_separates_right_from_wrong():
    from ops.reduction.spec import SPEC

    for name in ("n=1025,rand", "n=65537,rand", "n=1025", "n=65537"):
        c = SPEC.case(name)
        x = SPEC.inputs(c)["x"]
        ref, tol = SPEC.reference(c, {"x": x})["out"], SPEC.tolerance(c)
        assert compare(_pairwise(x, np.float32), ref, tol).ok, name
        assert compare(np.cumsum(x, dtype=np.float32)[-1:], ref, tol).ok, name  # serial fp32
        if "rand" in name or x.size > 4096:  # small integer sums are exact even in fp16
            with np.errstate(over="ignore"):
                assert not compare(_pairwise(x, np.float16), ref, tol).ok, name  # fp16 accumulator
    c = SPEC.case("n=4097")
    x = SPEC.inputs(c)["x"]
    dropped = _pairwise(x[:-1], np.float32)  # the tail element is lost
    assert not compare(dropped, SPEC.reference(c, {"x": x})["out"], SPEC.tolerance(c)).ok


def test_scan_tolerance_separates_right_from_wrong():
    from ops.scan.spec import SPEC

    c = SPEC.case("n=65537")
    x = SPEC.inputs(c)["x"]
    ref, tol = SPEC.reference(c, {"x": x})["y"], SPEC.tolerance(c)
    # a two-level scan in fp32 (1024-element tiles, serial inside, carries added): honest
    t = x.reshape(-1)[: x.size // 1024 * 1024].reshape(-1, 1024)
    local = np.cumsum(t, axis=1, dtype=np.float32)
    carry = np.concatenate([[0], np.cumsum(local[:, -1], dtype=np.float32)[:-1]]).astype(np.float32)
    y = np.concatenate([(local + carry[:, None]).ravel(),
                        np.cumsum(x[t.size:], dtype=np.float32) + np.float32(carry[-1] + local[-1, -1])])
    assert compare(y.astype(np.float32), ref, tol).ok
    with np.errstate(over="ignore"):
        assert not compare(np.cumsum(x.astype(np.float16), dtype=np.float16), ref, tol).ok
    bad = y.copy()
    bad[-1024:] -= carry[-1]  # the last tile forgot its carry
    assert not compare(bad, ref, tol).ok


def test_references_are_exact():
    """fp32 inputs in [0.5, 1.5) are multiples of 2^-24: float64 partial sums are exact."""
    from fractions import Fraction

    from ops.scan.spec import SPEC

    c = SPEC.case("n=4097")
    x = SPEC.inputs(c)["x"]
    y = SPEC.reference(c, {"x": x})["y"]
    exact = sum((Fraction(float(v)) for v in x), Fraction(0))
    assert Fraction(float(y[-1])) == exact


def test_int32_inputs_full_range_and_wrap():
    """int32 inputs span the whole range (a kernel accumulating through float32 cannot pass) and
    the references wrap modulo 2^32, as an int32 accumulator does in any order."""
    from ops.reduction.spec import SPEC
    from ops.scan.spec import SPEC as SCAN

    c = Case("n=2^16", {"n": 2**16}, "i32", seed=9)
    x = SPEC.inputs(c)["x"]
    assert x.dtype == np.int32 and x.min() < -2**30 and x.max() > 2**30
    assert SPEC.reference(c, {"x": x})["out"][0] == x.sum(dtype=np.int32)  # NumPy's int32 sum wraps
    assert (SCAN.reference(c, {"x": x})["y"] == np.cumsum(x, dtype=np.int32)).all()
    via_f32 = np.array([x.astype(np.float32).sum(dtype=np.float32)]).astype(np.int64)
    assert not compare(via_f32, SPEC.reference(c, {"x": x})["out"], SPEC.tolerance(c)).ok


# -- per-backend traps (one process per backend) ----------------------------------------------

def _check(be, spec, case, run, ins, outs, x: dict) -> tuple[bool, str, dict]:
    from suite.check import checked_launch

    tol = spec.tolerance(case) if case.dtype != "i32" else Tolerance.exact()
    res = checked_launch(be, spec, case, run, ins, outs, x, spec.reference(case, x), tol)
    return res.ok, res.message, {k: be.download(v) for k, v in outs.items()}


def _upload(be, spec, case, x: dict) -> tuple[dict, dict]:
    from suite.spec import np_dtype

    sig = spec.signature(case)
    ins = {k: be.upload(x[k]) for k, a in sig.items() if a.role == "in"}
    outs = {k: be.empty(a.shape, np_dtype(a.dtype)) for k, a in sig.items() if a.role == "out"}
    return ins, outs


def _big_ints(n: int, rng) -> np.ndarray:
    """int32 values 2^20 ± 50: prefixes up to ~1.6e9, beyond what fp32 holds exactly."""
    return (2**20 + rng.integers(-50, 51, size=n)).astype(np.int32)


class _Traps:
    """Runs in a fresh process: every trap on every variant of both ops for one backend."""

    def __init__(self, be, dev):
        self.be, self.dev = be, dev
        self.fails: list[str] = []
        self.notes: list[str] = []
        self.rng = np.random.default_rng(20260101)

    def guard(self, label: str, fn) -> None:
        from backends.base import Unsupported

        try:
            fn()
        except Unsupported as e:
            self.notes.append(f"{label}: unsupported: {e}")
        except Exception:  # noqa: BLE001
            self.fails.append(f"{label}: {traceback.format_exc(limit=3)}")

    def checked(self, label: str, spec, case, run, x: dict) -> tuple[bool, dict]:
        ins, outs = _upload(self.be, spec, case, x)
        ok, msg, got = _check(self.be, spec, case, run, ins, outs, x)
        if not ok:
            self.fails.append(f"{label}: {msg}")
        return ok, got

    def compile_all(self, backend: str) -> None:
        """cuda without a GPU: every variant compiles for every dtype at test and bench sizes."""
        from suite.registry import select

        for op in ("reduction", "scan"):
            for e in select([op], [backend]):
                for dt in DTYPES[op]:
                    for n in (1, 1_050_001, 2**28):
                        self.guard(f"{op}/{e.variant}/{dt}/n={n}",
                                   lambda e=e, dt=dt, n=n: e.factory(self.be, Case(f"n={n}", {"n": n}, dt)))

    def relaunch(self, op: str, e, spec, case: Case) -> None:
        """Three launches on one factory's scratch: data a, data b, data a again; the first and
        the third must agree bit for bit unless the variant is order-dependent."""
        label = f"{op}/{e.variant}/{case.dtype}/n={case['n']}"
        run = e.factory(self.be, case)
        xa = spec.inputs(case)
        xb = spec.inputs(Case(case.name, case.dims, case.dtype, case.seed + 1))
        ok1, got1 = self.checked(f"{label} first launch", spec, case, run, xa)
        ok2, _ = self.checked(f"{label} second launch, new data on the same scratch", spec, case, run, xb)
        ok3, got3 = self.checked(f"{label} third launch", spec, case, run, xa)
        if ok1 and ok3 and ((op, e.variant) not in NONDETERMINISTIC or case.dtype == "i32"):
            for k in got1:
                if got1[k].tobytes() != got3[k].tobytes():
                    self.fails.append(f"{label}: not bit-reproducible across launches ({k})")

    def big_ints(self, op: str, e, spec) -> None:
        n = 1500  # 1500·(2^20 + 50) < 2^31
        case = Case("big-ints", {"n": n}, "i32", 0)
        self.checked(f"{op}/{e.variant}/i32 big magnitudes", spec, case, e.factory(self.be, case),
                     {"x": _big_ints(n, self.rng)})

    def lookback_small_tiles(self, backend: str, patch: dict) -> None:
        """Many tiles and a short window: the look-back spins and moves its window."""
        import ops.scan.kernels as sk
        from suite.registry import get_spec, select

        consts = {k: v for k, v in patch.items() if not k.startswith("_")}
        saved = {k: getattr(sk, k) for k in consts}
        for k, v in consts.items():
            setattr(sk, k, v)
        try:
            spec, n = get_spec("scan"), patch.get("_n", 300_007)
            for e in select(["scan"], [backend], ["decoupled_lookback"]):
                for dt in DTYPES["scan"]:
                    case = Case(f"n={n}", {"n": n}, dt, seed=77)

                    def four(e=e, case=case):
                        run = e.factory(self.be, case)
                        for rep in range(4):
                            x = spec.inputs(Case(case.name, case.dims, case.dtype, case.seed + rep))
                            label = f"scan/{e.variant}/{case.dtype} small tiles {consts}, launch {rep}"
                            if not self.checked(label, spec, case, run, x)[0]:
                                return

                    self.guard(f"scan/{e.variant}/{dt} small tiles", four)
        finally:
            for k, v in saved.items():
                setattr(sk, k, v)

    def webgpu_grid_2d(self) -> None:
        """A tiny per-dimension limit forces 2-D grids: 300_007 elements need 1172 and 293 groups
        (reduction); the scans with one vec4 per invocation (1024-element tiles) at 1_100_003
        need 1075 groups (the look-back: 1152 launched, the last 77 take no tile) and three levels
        (reduce-then-scan)."""
        import ops.scan.kernels as sk
        from suite.registry import get_spec, select

        key = "max-compute-workgroups-per-dimension"
        saved, saved_items = self.be.limits[key], (sk.WEBGPU_ITEMS_VEC, sk.WEBGPU_LOOKBACK_ITEMS)
        self.be.limits[key] = 128  # (the backend's own fill kernel needs 4297 groups: < 128²)
        sk.WEBGPU_ITEMS_VEC = sk.WEBGPU_LOOKBACK_ITEMS = 1
        try:
            for op, variant, n in (("reduction", "tree_shared", 300_007),
                                   ("scan", "reduce_then_scan", 1_100_003),
                                   ("scan", "decoupled_lookback", 1_100_003)):
                spec = get_spec(op)
                case = Case(f"n={n}", {"n": n}, "fp32", seed=5)
                for e in select([op], ["webgpu"], [variant]):
                    def grid2d(e=e, spec=spec, op=op, case=case):
                        run = e.factory(self.be, case)
                        self.checked(f"{op}/{e.variant} on 2-D grids", spec, case, run, spec.inputs(case))

                    self.guard(f"{op}/{variant} 2-D grid", grid2d)
        finally:
            self.be.limits[key] = saved
            sk.WEBGPU_ITEMS_VEC, sk.WEBGPU_LOOKBACK_ITEMS = saved_items


def _traps(backend: str, sizes: list[int], lookback_patch: dict) -> dict:
    from backends import backend_class
    from suite.registry import get_spec, select

    try:
        cls = backend_class(backend)
        devices = [d for d in cls.devices() if d.usable]
    except Exception as e:  # noqa: BLE001 - a missing package is a skip
        return {"skip": f"{backend} unavailable: {type(e).__name__}: {e}"}
    if not devices:
        return {"skip": f"{backend}: no usable device"}
    dev = next((d for d in devices if d.kind == "gpu"), devices[0])
    t = _Traps(cls(dev), dev)
    if dev.mode == "compile":
        t.compile_all(backend)
    else:
        for op in ("reduction", "scan"):
            spec = get_spec(op)
            for e in select([op], [backend]):
                for dt in DTYPES[op]:
                    for n in sizes:
                        case = Case(f"n={n}", {"n": n}, dt, seed=int(t.rng.integers(1 << 30)))
                        t.guard(f"{op}/{e.variant}/{dt}/n={n}",
                                lambda e=e, s=spec, c=case, o=op: t.relaunch(o, e, s, c))
                    if dt == "i32":
                        t.guard(f"{op}/{e.variant}/i32 big", lambda e=e, s=spec, o=op: t.big_ints(o, e, s))
        for extra in ({}, *lookback_patch.get("_also", ())) if lookback_patch else ():
            t.lookback_small_tiles(backend, {**lookback_patch, **extra})
        if backend == "webgpu":
            t.webgpu_grid_2d()
    return {"fails": t.fails, "notes": t.notes, "device": dev.name}




_RNG = np.random.default_rng(7)
#: random sizes: small odd ones, and ones spanning many blocks (three levels past 1024²)
SIZES = sorted({int(v) for v in _RNG.integers(2, 5000, 3)} | {int(v) for v in _RNG.integers(5000, 400_000, 2)}
               | {1, 1_100_003})
TRITON_SIZES = sorted({1, 3, 1031, 9001, int(_RNG.integers(10_000, 40_000))})


@pytest.mark.parametrize("backend,sizes,patch,timeout", [
    ("opencl", SIZES, {"LOOKBACK_ITEMS_VEC": 1, "LOOKBACK_WINDOW": 2}, 900),
    # webgpu, then with three of every four tiles never seen published: their sums from x
    ("webgpu", SIZES, {"WEBGPU_LOOKBACK_ITEMS": 1, "WEBGPU_WINDOW": 2,
                       "_also": ({"WEBGPU_HIDE": 3, "WEBGPU_SPIN": 1},)}, 900),
    ("cuda", SIZES, {"LOOKBACK_ITEMS_VEC": 1, "LOOKBACK_SPIN_LIMIT": 1}, 900),
    # triton: the streamed tile (scan_lookback_l2, 32 values a step), then with three of every four
    # tiles never seen published; the tile held in registers, then in program-id order with the
    # hidden tiles
    ("triton", TRITON_SIZES, {"TRITON_LOOKBACK_TILE": 128, "TRITON_WINDOW": 4, "TRITON_LOOKBACK_SUB": 32,
                              "_n": 20_011,
                              "_also": ({"TRITON_ORDER": {"SPIN": 1, "HIDE": 3}}, {"TRITON_LOOKBACK_SUB": 0},
                                        {"TRITON_LOOKBACK_SUB": 0,
                                         "TRITON_ORDER": {"PID_ORDER": True, "SPIN": 1, "HIDE": 3}})},
     1800),
    ("torch", SIZES, {}, 600),
])
def test_traps(backend, sizes, patch, timeout):
    res = check_in_process(_traps, (backend, sizes, patch), timeout,
                           lambda res: f"{backend} on {res.get('device')}")
    # a variant may decline only for what the device lacks (sub-groups on PoCL, CuPy where CUDA
    # only compiles): any other Unsupported would take it out of every trap unnoticed
    declined = {n.split("/")[1] for n in res["notes"]}
    assert declined <= {"subgroup", "cupy"}, res["notes"]


# -- triton for Hopper, without a GPU -----------------------------------------------------------

def _hopper_jobs() -> dict:
    if (skip := triton_missing()):
        return skip
    from backends.triton import compile_many_for_hopper
    from ops.reduction import reduction_triton as rt
    from ops.scan import kernels as sk
    from ops.scan import scan_triton as st
    jobs, names = [], []
    for dt, acc in (("fp32", "fp32"), ("fp16", "fp32"), ("i32", "i32")):
        sig = {"x_ptr": f"*{dt}", "n": "i64"}
        jobs.append((rt.reduce_persistent, {**sig, "part_ptr": f"*{acc}"}, {"BLOCK": 4096},
                     {"num_warps": 8, "divisible_by_16": ("x_ptr", "part_ptr", "n")}))
        names.append(f"reduce_persistent/{dt}")
        jobs.append((rt.reduce_tl_sum, {**sig, "out_ptr": f"*{acc}"}, {"BLOCK": 4096},
                     {"num_warps": 8, "divisible_by_16": ("x_ptr", "out_ptr", "n")}))
        names.append(f"reduce_tl_sum/{dt}")
    for dt in ("fp32", "i32"):
        jobs.append((st.scan_decoupled_lookback,
                     {"x_ptr": f"*{dt}", "y_ptr": f"*{dt}", "flag_ptr": "*i64", "ticket_ptr": "*i64",
                      "n": "i64", "n_tiles": "i64"},
                     {"BLOCK": 8192, "WINDOW": 16, "IS_FLOAT": dt == "fp32", "PID_ORDER": False, "SPIN": 0,
                      "HIDE": 0},
                     {"num_warps": 4, "divisible_by_16": ("x_ptr", "y_ptr", "flag_ptr", "n")}))
        names.append(f"scan_decoupled_lookback/{dt}")
        f, sig, const, opt = jobs[-1]
        jobs.append((f, sig, {**const, "WINDOW": 128, "PID_ORDER": True, "SPIN": 4096}, opt))
        names.append(f"scan_decoupled_lookback/{dt} program-id order, bounded waits")
        jobs.append((st.scan_lookback_l2, sig,  # the registered shape
                     {"CHUNK": sk.TRITON_LOOKBACK_TILE, "SUB": sk.TRITON_LOOKBACK_SUB,
                      "WINDOW": sk.TRITON_WINDOW, "IS_FLOAT": dt == "fp32", "SPIN": 0, "HIDE": 0},
                     {**opt, "num_warps": sk.TRITON_LOOKBACK_WARPS}))
        names.append(f"scan_lookback_l2/{dt}")
        box = f"tensordesc<{dt}[64,256]>"  # 16384-value tiles on 16 warps, the probe's first shape
        jobs.append((st.scan_lookback_tma, {"x_desc": box, "y_desc": box, "flag_ptr": "*i64",
                                            "ticket_ptr": "*i64", "n": "i64", "n_tiles": "i64"},
                     {"R": 64, "WINDOW": 16, "IS_FLOAT": dt == "fp32"}, {"num_warps": 16}))
        names.append(f"scan_lookback_tma/{dt}")
        jobs.append((st.scan_tiles, {"x_ptr": f"*{dt}", "y_ptr": f"*{dt}", "carry_ptr": f"*{dt}", "n": "i64"},
                     {"BLOCK": 1024, "HAS_CARRY": True},
                     {"num_warps": 4, "divisible_by_16": ("x_ptr", "y_ptr", "n")}))
        names.append(f"scan_tiles/{dt}")
        jobs.append((st.scan_reduce_tiles, {"x_ptr": f"*{dt}", "sums_ptr": f"*{dt}", "n": "i64"},
                     {"BLOCK": 1024}, {"num_warps": 4, "divisible_by_16": ("x_ptr", "n")}))
        names.append(f"scan_reduce_tiles/{dt}")
    fails = []
    for name, out in zip(names, compile_many_for_hopper(jobs), strict=True):
        if "error" in out:
            fails.append(f"{name}: {out['error'][:2000]}")
        elif name.split("/")[0] in ("reduce_persistent", "scan_decoupled_lookback",
                                    "scan_lookback_l2") and not any(
                k.startswith("ld.global") and ".v4" in k for k in out["global_accesses"]):
            fails.append(f"{name}: no 16-byte loads: {out['global_accesses']}")
        elif "lookback" in name.split("/")[0] and "atom.global.gpu.relaxed.add" not in out["ptx"]:
            fails.append(f"{name}: the ticket is not a relaxed add (acq_rel: a fence, an L1 invalidate)")
        elif name.startswith("scan_lookback_tma") and ("cp.async.bulk.tensor.2d" not in out["ptx"]
                                                         or out["spill_bytes"]):
            fails.append(f"{name}: no TMA copy, or {out['spill_bytes']} bytes spilled")
        elif name.startswith("scan_lookback_l2") and not all(
                f"L2::{p}" in out["ptx"] for p in ("evict_last", "evict_first")):
            fails.append(f"{name}: the first read is not evict_last, or the re-read not evict_first")
    return {"fails": fails}


def _triton_lookback_tma() -> dict:
    be, skip = open_backend("triton")
    if skip:
        return skip
    from backends.base import Unsupported
    from ops.scan import kernels as sk
    from suite.check import checked_launch
    from suite.registry import discover, get_spec

    discover()
    spec, fails = get_spec("scan"), []
    # several tiles (the look-back runs), a tile wider than n (one box, clipped), int32
    for n, dt, tile in ((256 * 37, "fp32", 1024), (256 * 64, "i32", 2048), (256 * 5, "fp32", 16384)):
        case = Case(f"n={n}", {"n": n}, dt, seed=5)
        x = spec.inputs(case)
        ins, outs = {"x": be.upload(x["x"])}, {"y": be.empty(x["x"].shape, x["x"].dtype)}
        res = checked_launch(be, spec, case, sk.triton_lookback_tma(be, case, tile, 4, 4), ins, outs, x,
                             spec.reference(case, x), spec.tolerance(case))
        if not res.ok:
            fails.append(f"n={n} {dt} tile={tile}: {res.message}")
    try:
        sk.triton_lookback_tma(be, Case("n=1000", {"n": 1000}, "fp32", seed=1))
        fails.append("n = 1000 accepted for 256-value TMA rows")
    except Unsupported:
        pass
    return {"fails": fails}


def test_triton_lookback_tma_form():
    """scan_lookback_tma (probe form: the tile as one TMA box, scanned as rows) in the interpreter."""
    check_in_process(_triton_lookback_tma, (), 900)


def test_triton_kernels_compile_for_hopper():
    """Every Triton kernel compiles for sm_90 (the interpreter checks semantics, not this), and
    the bandwidth kernels load 16 bytes per access."""
    check_in_process(_hopper_jobs, (), 900)


# -- the probe that explained the scan misses ---------------------------------------------------

def test_scan_probe_checks_and_times_each_pass(tmp_path):
    """scripts/scan_probe.py on PoCL: the three-pass scan is checked, then each of its passes is
    timed alone with its own bytes (the README's per-pass figures come from this script)."""
    import importlib.util
    import json
    import subprocess
    import sys
    from pathlib import Path

    if importlib.util.find_spec("pyopencl") is None:
        pytest.skip("pyopencl is not installed")
    root = Path(__file__).resolve().parent.parent
    r = subprocess.run([sys.executable, str(root / "scripts" / "scan_probe.py"), "opencl", "--n", "300007",
                        "--only", "kogge", "--out", str(tmp_path), "--ceiling", "10"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads((tmp_path / "probe-scan-opencl-fp32-kogge.json").read_text())["rows"]
    assert [row["label"] for row in rows] == ["kogge_stone", "kogge_stone: reduce alone",
                                              "kogge_stone: scan alone"]
    assert rows[0]["checked"] == "ok" and rows[0]["bytes"] == 8 * 300_007
    assert rows[1]["bytes"] == 4 * 300_007 and rows[2]["bytes"] == 8 * 300_007
    assert all(row["median_ms"] > 0 and row["pct"] > 0 for row in rows)
