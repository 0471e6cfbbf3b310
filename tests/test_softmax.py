"""softmax spec-level checks: the reference, the inputs' traps, the tolerances (honest fp32
orders pass; no max subtraction and 16-bit sums fail, through planted kernels run by the
harness), the blockwise bench check, and the Triton kernels compiled for sm_90."""

from __future__ import annotations

import numpy as np
import pytest

from references.numerics import decode, encode
from references.softmax import softmax_rows
from suite.check import compare
from suite.spec import Case
from tests.spawn import check_in_process, open_backend, triton_missing
from tests.wrong import registered


def _spec():
    from ops.softmax.spec import SPEC

    return SPEC


def test_reference_matches_direct_formula():
    spec = _spec()
    c = spec.case("17x1000")
    x = decode(spec.inputs(c)["x"], c.dtype).astype(np.float64)
    ref = spec.reference(c, {"x": spec.inputs(c)["x"]})["y"]
    direct = np.empty_like(x)
    for i, row in enumerate(x):  # the textbook formula, row by row, float64
        e = np.exp(row - row.max())
        direct[i] = e / e.sum()
    assert np.allclose(ref, direct, rtol=1e-14, atol=0)
    assert np.allclose(ref.sum(1), 1.0, rtol=1e-13)


def test_inputs_have_the_traps_and_no_all_neg_inf_row():
    spec = _spec()
    for c in spec.test_cases:
        x = decode(spec.inputs(c)["x"], c.dtype)
        assert np.isfinite(x).any(axis=1).all(), c.name  # never a whole row of −inf
        y = spec.reference(c, {"x": spec.inputs(c)["x"]})["y"]
        assert np.isfinite(y).all(), c.name
    c = spec.case("17x1000")
    x = decode(spec.inputs(c)["x"], c.dtype)
    assert np.abs(x[1]).max() > 1e4 and x[2].min() > 9e3 and x[3].max() < -9e3
    assert np.isneginf(x[4]).any() and np.isneginf(x[5]).mean() > 0.3
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(x.astype(np.float32))
        naive = naive / naive.sum(1, keepdims=True)
    assert not np.isfinite(naive).all()  # without the max subtraction: Inf/NaN


def _fp32_softmax(x: np.ndarray, acc) -> np.ndarray:
    """fp32 softmax with the sum in ``acc`` (serial per 32 lanes, then pairwise)."""
    x = x.astype(np.float32)
    m = x.max(1, keepdims=True)
    e = np.exp2((x - m) * np.float32(1.4426950408889634)).astype(np.float32)
    n = e.shape[1]
    t = np.concatenate([e, np.zeros((e.shape[0], (-n) % 32), np.float32)], 1).reshape(e.shape[0], -1, 32)
    s = np.zeros((e.shape[0], 32), acc)
    for k in range(t.shape[1]):
        s = (s + t[:, k].astype(acc)).astype(acc)
    while s.shape[1] > 1:
        s = (s[:, 0::2] + s[:, 1::2]).astype(acc)
    return (e * (np.float32(1) / s.astype(np.float32))).astype(np.float32)


@pytest.mark.parametrize("name", ["13x7", "17x1000", "5x70000"])
def test_tolerance_accepts_fp32_rejects_fp16_sum(name):
    spec = _spec()
    c = spec.case(name)
    inputs = spec.inputs(c)
    x, ref, tol = decode(inputs["x"], c.dtype), spec.reference(c, inputs)["y"], spec.tolerance(c)
    assert compare(_fp32_softmax(x, np.float32), ref, tol).ok
    with np.errstate(over="ignore"):
        assert not compare(_fp32_softmax(x, np.float16), ref, tol).ok


def test_bf16_tolerance_accepts_rounded_fp32_result():
    spec = _spec()
    c = spec.case("9x1025,bf16")
    inputs = spec.inputs(c)
    x, ref, tol = decode(inputs["x"], c.dtype), spec.reference(c, inputs)["y"], spec.tolerance(c)
    y = decode(encode(_fp32_softmax(x, np.float32), "bf16"), "bf16")
    assert compare(y, ref, tol).ok
    trunc = (_fp32_softmax(x, np.float32).view(np.uint32) & 0xFFFF0000).view(np.float32)
    assert not compare(trunc, ref, tol).ok  # truncation to bf16 errs by up to 2^-7: rejected


def test_blockwise_verify_matches_full_compare():
    """``verify`` on a shape above FULL_MAX recomputes the reference by blocks: it must accept a
    correct output and reject one wrong element and one unwritten (NaN) row."""
    import ops.softmax.spec as sm

    c = Case("600x7001", {"m": 600, "n": 7001}, "fp32", seed=3)
    assert c["m"] * c["n"] > sm.FULL_MAX
    inputs = sm.SPEC.inputs(c)
    assert sm.SPEC.reference(c, inputs) == {}
    good = softmax_rows(inputs["x"]).astype(np.float32)
    tol = sm.SPEC.tolerance(c)
    assert sm.verify(c, inputs, {"y": good}, {}, tol).ok
    bad = good.copy()
    j = int(good[599].argmax())  # the row's largest output (others may be exact zeros)
    bad[599, j] *= 1.001
    r = sm.verify(c, inputs, {"y": bad}, {}, tol)
    assert not r.ok and r.n_bad == 1 and r.mismatches[0]["index"] == (599, j)
    bad = good.copy()
    bad[300] = np.nan
    assert not sm.verify(c, inputs, {"y": bad}, {}, tol).ok


# -- planted wrong kernels, through the harness -------------------------------------------------

EXTRA = {"SOLBENCH_EXTRA_KERNELS": "tests.wrong.softmax_wrong"}


@pytest.fixture(scope="module")
def pool():
    from suite.worker import Pool

    with registered("tests.wrong.softmax_wrong"):
        p = Pool(env=EXTRA)
        yield p
        p.close()


@pytest.mark.parametrize("variant", ["wrong_no_max", "wrong_low_precision_sum"])
def test_wrong_kernels_rejected(pool, variant):
    from suite.runner import execute, plan

    p = plan(pool, size="test", check_only=True, ops=["softmax"], backends=["torch"], variants=[variant],
             device="all")
    rows = execute(pool, p.items, timeout=120)
    spec = _spec()
    # the traps it must fall into: no_max → rows of kind 1-3 (m ≥ 3: ±1e4 overflow); a 16-bit
    # sum → any row of N > 1 (N = 1 is exactly 1 whatever the sum's precision)
    must = {c.name for c in spec.test_cases if (c["m"] >= 3 if variant == "wrong_no_max" else c["n"] > 1)}
    statuses = {r["case"]: r["status"] for r in rows}
    assert must and all(statuses.get(n) == "failed" for n in must), statuses


# -- triton for Hopper, without a GPU -----------------------------------------------------------

def _hopper_jobs() -> dict:
    if (skip := triton_missing()):
        return skip
    import inspect

    from backends.triton import compile_many_for_hopper
    from ops.softmax import kernels as sk
    from ops.softmax import softmax_triton as st

    ticket_sem = inspect.signature(sk.triton_split_row).parameters["ticket_sem"].default  # registered
    jobs, names = [], []
    for dt in ("fp32", "bf16"):
        io = {"x_ptr": f"*{dt}", "y_ptr": f"*{dt}", "N": "i32"}
        d16 = ("x_ptr", "y_ptr", "N")
        for fn, block, warps in ((st.softmax_three_pass, 4096, 8), (st.softmax_online, 4096, 8),
                                 (st.softmax_fused, 16384, 16), (st.softmax_fused, 1024, 2)):
            jobs.append((fn, io, {"BLOCK": block}, {"num_warps": warps, "divisible_by_16": d16}))
            names.append(f"{fn.fn.__name__ if hasattr(fn, 'fn') else fn.__name__}/{dt}/{block}")
        split_io = {**io, "slot_ptr": "*i64", "ticket_ptr": "*i64", "chunk": "i32", "n_blocks": "i64",
                    "epoch": "i64"}
        split_cx = {"G": 8, "GP": 8, "BLOCK": 16384, "PHASE": 0, "TICKET_SEM": ticket_sem,
                    "BACKOFF": sk.TRITON_SPLIT_BACKOFF_NS}
        split_opts = {"num_warps": 16, "divisible_by_16": ("x_ptr", "y_ptr", "N", "chunk")}
        ahead = int(sk.TRITON_SPLIT_AHEAD * 132)  # as registered on a 132-SM card
        jobs.append((st.softmax_split, split_io, {**split_cx, "AHEAD": ahead}, split_opts))
        names.append(f"softmax_split/{dt}/phase0 ahead")
        jobs.append((st.softmax_split, split_io, {**split_cx, "AHEAD": 0}, split_opts))
        names.append(f"softmax_split/{dt}/phase0")
        # a part narrower than one 128-byte line (13x7 and 5x1: one program per row, BLOCK 8 / 1)
        # still prefetches one line (on the GPU these failed to compile before session 38)
        for block in (8, 1):
            jobs.append((st.softmax_split, split_io, {**split_cx, "G": 1, "GP": 2, "BLOCK": block,
                                                      "AHEAD": ahead}, {"num_warps": 1}))
            names.append(f"softmax_split/{dt}/phase0 ahead narrow {block}")
        box = f"tensordesc<{dt}[1,64,256]>"  # 16384-value parts on 16 warps, the probe's shape
        jobs.append((st.softmax_split_tma, {"x_desc": box, "y_desc": box, "slot_ptr": "*i64",
                                            "ticket_ptr": "*i64", "n_blocks": "i64", "epoch": "i64"},
                     {"G": 8, "GP": 8, "R": 64, "PHASE": 0, "TICKET_SEM": ticket_sem,
                      "BACKOFF": sk.TRITON_SPLIT_BACKOFF_NS}, {"num_warps": 16}))
        names.append(f"softmax_split_tma/{dt}/phase0")
    fails = []
    for name, out in zip(names, compile_many_for_hopper(jobs), strict=True):
        if "error" in out:
            fails.append(f"{name}: {out['error'][:2000]}")
        elif not any(k.startswith("ld.global") and ".v4" in k for k in out["global_accesses"]) and \
                not any(w in name for w in ("/4096", "/1024", "_tma", "narrow")):
            fails.append(f"{name}: no 16-byte loads: {out['global_accesses']}")
        elif name.startswith("softmax_split_tma") and "cp.async.bulk.tensor.3d" not in out["ptx"]:
            fails.append(f"{name}: the part is not moved by TMA")
        elif name.startswith("softmax_split_tma") and (out["registers"] > 64 or out["spill_bytes"]):
            fails.append(f"{name}: {out['registers']} registers, {out['spill_bytes']} bytes spilled: two "
                         "programs of 512 threads no longer fit an SM")
        elif "phase0" in name and "atom.global.gpu.relaxed.add" not in out["ptx"]:
            fails.append(f"{name}: the ticket is not a relaxed add (acq_rel: a fence, an L1 invalidate)")
        elif name.startswith("softmax_split") and "nanosleep.u32" not in out["ptx"]:
            fails.append(f"{name}: no nanosleep between the polls")
        elif ("ahead" in name) != (0 <= out["ptx"].find("prefetch.global.L2") < out["ptx"].find("nanosleep")):
            fails.append(f"{name}: an L2 prefetch before the polls only where AHEAD asks for one")
    return {"fails": fails}


def _softmax_child(backend: str):
    """(the backend, the softmax spec, None) for a test body in its own process, or (None, None,
    the skip) where the backend is missing."""
    be, skip = open_backend(backend)
    if skip:
        return None, None, skip
    from suite.registry import discover, get_spec

    discover()
    return be, get_spec("softmax"), None


def _rows(be, spec, m: int, n: int, dt: str, seed: int):
    """An m×n softmax case of ``dt``: (case, inputs, device x, device y, reference)."""
    case = Case(f"{m}x{n}", {"m": m, "n": n}, dt, seed)
    x = spec.inputs(case)
    ins, outs = {"x": be.upload(x["x"])}, {"y": be.empty(x["x"].shape, x["x"].dtype)}
    return case, x, ins, outs, spec.reference(case, x)


def test_triton_softmax_compiles_for_hopper():
    check_in_process(_hopper_jobs)


def _triton_split_tma() -> dict:
    be, spec, skip = _softmax_child("triton")
    if skip:
        return skip
    from backends.base import Unsupported
    from ops.softmax import kernels as sk
    from suite.check import checked_launch

    fails = []
    # parts of 512 and 1024 values (rows of 2048 / 4096), bf16; the spec's inputs bring ±1e4 rows
    for m, n, dt, part in ((5, 2048, "fp32", 512), (3, 4096, "bf16", 1024), (4, 4096, "fp32", 4096)):
        case, x, ins, outs, ref = _rows(be, spec, m, n, dt, 41)
        res = checked_launch(be, spec, case, sk.triton_split_row(be, case, part=part, tma=True), ins, outs, x,
                             ref, spec.tolerance(case))
        if not res.ok:
            fails.append(f"{case.name},{dt} part={part}: {res.message}")
    case = _rows(be, spec, 3, 1000, "fp32", 1)[0]
    try:
        sk.triton_split_row(be, case, part=512, tma=True)
        fails.append("1000-value rows (parts of 500) were accepted for TMA boxes of 256-value rows")
    except Unsupported:
        pass
    return {"fails": fails}


def test_triton_split_row_tma_form():
    """softmax_split_tma (probe form of split_row: parts as TMA boxes) in the interpreter, and
    rows it cannot box declined."""
    check_in_process(_triton_split_tma)


# -- WebGPU: buffers above the storage-binding limit, bound as windows ---------------------------

def _webgpu_windows(limit: int) -> dict:
    be, spec, skip = _softmax_child("webgpu")
    if skip:
        return skip
    from backends.base import Unsupported
    from ops.softmax import kernels as sk
    from suite.check import checked_launch

    be.limits["max-storage-buffer-binding-size"] = limit  # the adapter allows more: windows are real
    fails = []
    for m, n, dt in ((67, 4096, "fp32"), (40, 2048, "bf16")):  # x: 1072 / 160 KiB > the limit
        case, x, ins, outs, ref = _rows(be, spec, m, n, dt, 77)
        res = checked_launch(be, spec, case, sk._webgpu(be, case, "split", None), ins, outs, x, ref,
                             spec.tolerance(case))
        if not res.ok:
            fails.append(f"split {case.name},{dt}: {res.message}")
        try:
            sk._webgpu(be, case, "fused")(ins, outs)
            fails.append(f"fused {case.name}: bound a buffer above the binding limit whole")
        except Unsupported as e:
            if "binding limit" not in str(e):
                fails.append(f"fused {case.name}: {e}")
        be.fill_bytes(outs["y"], 0x5A)  # the fill kernel goes window by window
        if not (be.download(outs["y"]).view(np.uint8) == 0x5A).all():
            fails.append(f"fill_bytes {case.name}: not every byte poisoned")
    try:
        be.window(ins["x"], 8, 64)
        fails.append("a window at an unaligned offset was accepted")
    except ValueError:
        pass
    return {"fails": fails}


def test_webgpu_split_row_binds_windows_above_the_binding_limit():
    """WebGPU 4096×131072 fp32 (2 GiB) is above the H200 adapter's storage-binding limit: split_row
    binds each batch's rows as a window; kernels that bind a buffer whole say why they cannot."""
    check_in_process(_webgpu_windows, (64 << 10,))


def _webgpu_one_pass() -> dict:
    be, spec, skip = _softmax_child("webgpu")
    if skip:
        return skip
    from ops.softmax import kernels as sk
    from suite.check import checked_launch

    fails, seen = [], []
    key = "max-compute-workgroups-per-dimension"
    # spin 1: nearly every part gives up → the fixup dispatch; slots read by RMW (registered) or
    # atomicLoad (the probes' other form)
    for spin, poll in ((sk.WGSL_SPLIT_SPIN, "rmw"), (1, "rmw"), (sk.WGSL_SPLIT_SPIN, "load")):
        # (cap: a 2-D grid of 8 × 5 for 7 × 5 parts, whose 5 padding workgroups take tickets too)
        for m, n, dt, cap in ((7, 70000, "fp32", 0), (5, 70000, "bf16", 0), (7, 70000, "fp32", 8)):
            case, x, ins, outs, ref = _rows(be, spec, m, n, dt, 91)
            scratch = []
            launch = be.launch
            be.launch = lambda k, g, b, args, scratch=scratch, launch=launch, **kw: (
                len(args) == 4 and scratch.append(args[2]), launch(k, g, b, args, **kw))[1]
            limit = be.limits[key]
            be.limits[key] = cap or limit  # the factory sizes its grids; fill and flush keep the real one
            try:
                run = sk._webgpu(be, case, "split", None, one_pass=True, spin=spin, poll=poll)
            finally:
                be.limits[key] = limit
            try:
                for rep in range(2):  # the state a launch leaves must serve the next
                    res = checked_launch(be, spec, case, run, ins, outs, x, ref, spec.tolerance(case))
                    if not res.ok:
                        fails.append(f"spin {spin} poll {poll} {case.name},{dt} launch {rep}: {res.message}")
            finally:
                be.launch = launch
            g = run.info["parts"]
            seen.append((run.info["one_pass"], g))
            w = be.download(scratch[0])
            ctl = w[2 * m * g:2 * m * g + 4]  # ticket, deferred parts (cumulative), pending, fixups done
            if not (w[:2 * m * g] == 0xFFFFFFFF).all() or ctl[[0, 2, 3]].any():
                fails.append(f"spin {spin} {case.name},{dt}: slots or counters not reset: {ctl}")
            if spin == 1 and (ctl[1] == 0 or run.counters()["deferred"] != ctl[1]):
                fails.append(f"spin 1 {case.name},{dt}: no part went to the fixup dispatch ({ctl})")
    return {"fails": fails, "seen": seen}


def test_webgpu_split_row_one_pass_waits_or_falls_back():
    """WebGPU split_row in one dispatch (parts publish (max, Σ) and wait for their siblings) is
    right whether the siblings show up (the default poll bound) or not (bound 1: the parts go to
    the fixup dispatch), launch after launch: the slots and counters are left clean."""
    out = check_in_process(_webgpu_one_pass)
    assert out["seen"] and all(op and g > 1 for op, g in out["seen"]), out["seen"]


# -- OpenCL: arrays above the one-buffer limit, allocated in row parts ---------------------------

def _opencl_row_parts(limit: int) -> dict:
    be, spec, skip = _softmax_child("opencl")
    if skip:
        return skip
    from backends.base import Unsupported
    from ops.softmax import kernels as sk
    from suite import guard
    from suite.check import checked_launch

    be.max_buffer = limit  # as NVIDIA's 2^31 − 1 (PoCL takes more: the parts are real buffers)
    fails = []
    for m, n, dt in ((67, 1024, "fp32"), (40, 2048, "bf16")):  # x: 268 / 160 KiB, two parts
        case = Case(f"{m}x{n}", {"m": m, "n": n}, dt, 78)
        x = spec.inputs(case)
        bufs = guard.allocate(be, spec.signature(case), x)
        if len(bufs.ins["x"].parts) != 2 or len(bufs.outs["y"].parts) != 2:
            fails.append(f"{case.name}: x/y not in two parts ({len(bufs.ins['x'].parts)})")
        ref = spec.reference(case, x)
        for variant, mode in (("fused_row", "fused"), ("online", "stream"), ("split_row", "split")):
            res = checked_launch(be, spec, case, sk._opencl(be, case, mode, "softmax_rows"), bufs.ins,
                                 bufs.outs, x, ref, spec.tolerance(case))
            if not res.ok:
                fails.append(f"{variant} {case.name},{dt}: {res.message}")
        if (bad := guard.violations(be, bufs.guards, bufs.ins, x)):
            fails.append(f"{case.name}: guard regions or inputs changed: {bad}")
        try:  # refused when built, not at launch
            sk.opencl_three_pass(be, case)
            fails.append(f"three_pass {case.name}: built for a split array")
        except Unsupported as e:
            if "2 row parts" not in str(e):
                fails.append(f"three_pass {case.name}: {e}")
        be.fill_bytes(bufs.outs["y"], 0x5A)
        if not (be.download(bufs.outs["y"]).view(np.uint8) == 0x5A).all():
            fails.append(f"fill_bytes {case.name}: not every part poisoned")
        if not np.array_equal(be.download(bufs.ins["x"]), x["x"]):
            fails.append(f"download {case.name}: the parts do not give x back")
    be.max_buffer = 100 << 10  # x of 67×1024 fp32 in three parts: more than softmax_rows takes
    try:
        sk._opencl(be, Case("67x1024", {"m": 67, "n": 1024}, "fp32", 78), "fused", "softmax_rows")
        fails.append("softmax_rows built for an x in three parts")
    except Unsupported as e:
        if "3 row parts" not in str(e):
            fails.append(f"three parts: {e}")
    return {"fails": fails}


def test_opencl_softmax_takes_arrays_in_row_parts():
    """OpenCL 4096×131072 fp32 (2 GiB) is above NVIDIA's one-buffer limit (2^31 − 1 bytes): x and y
    are allocated as two buffers of whole rows, softmax_rows (fused_row, online, split_row) takes
    both parts; a kernel that takes its arrays whole, or an array in more parts than two, is
    refused when built, with the reason."""
    check_in_process(_opencl_row_parts, (150 << 10,))


# -- OpenCL split_row: more parts than can be resident ------------------------------------------

def _opencl_split_unresident() -> dict:
    be, spec, skip = _softmax_child("opencl")
    if skip:
        return skip
    if "cl_khr_int64_base_atomics" not in be.device.features:
        return {"skip": "split_row needs cl_khr_int64_base_atomics"}
    from ops.softmax import kernels as sk
    from suite.check import checked_launch

    # PoCL runs one work-group per compute unit; a GPU holds them all, and SPIN=1 makes them late
    g = min(2 * max(1, be.device.compute_units) + 1, 64)  # (lane k < G polls part k: G ≤ 64 threads)
    fails, seen = [], []
    for dt, vec in (("fp32", 4), ("bf16", 8)):
        for per in (128, 384):  # units per part: 128 fit the 64 × 2 register tile, 384 stream
            case, x, ins, outs, ref = _rows(be, spec, 3, vec * (g * per - 3), dt, 81)
            kw = {"tpb_max": 64, "vals": 2 * vec, "g_max": g}
            geo = sk._cl_plan(be, case, "split", **kw)
            seen.append((geo.g, geo.fits))
            got = {}
            for spin in (1, 16384):  # 1: nearly every sibling is late and computed by its waiter
                run = sk._opencl(be, case, "split", "softmax_rows", kw, SPIN=spin)
                res = checked_launch(be, spec, case, run, ins, outs, x, ref, spec.tolerance(case))
                if not res.ok:
                    fails.append(f"spin {spin} {case.name},{dt}: {res.message}")
                got[spin] = be.download(outs["y"])
            if not np.array_equal(got[1], got[16384]):  # a computed sibling has the same bits
                fails.append(f"{case.name},{dt}: outputs differ with the siblings computed by their waiters")
    return {"fails": fails, "seen": seen}


def test_opencl_split_row_needs_no_coresident_parts():
    """OpenCL promises no co-residency of work-groups, and compute units do not bound it: split_row
    with more parts per row than PoCL runs at once (it runs a work-group to completion, so an
    unbounded wait never returns) finishes, right, because a part that does not come within the
    poll bound is computed by the work-group waiting for it, to the same bits."""
    out = check_in_process(_opencl_split_unresident, timeout=300)
    assert {f for _, f in out["seen"]} == {True, False} and all(g > 4 for g, _ in out["seen"]), out["seen"]


# -- workgroup sizes within the device's limit ----------------------------------------------------

@pytest.mark.parametrize("limit", [1024, 1000, 256, 64])
def test_opencl_softmax_plans_within_the_work_group_limit(limit):
    """OpenCL work-groups are planned within CL_DEVICE_MAX_WORK_GROUP_SIZE (the tuned sizes go up
    to 1024 on GPUs; a device that takes fewer gets smaller groups, not a failed launch)."""
    from types import SimpleNamespace

    from ops.softmax import kernels as sk

    spec = _spec()
    be = SimpleNamespace(device=SimpleNamespace(kind="gpu", compute_units=132),
                         cl_device=SimpleNamespace(max_work_group_size=limit))
    sizes = set()
    for case in [*spec.cases("bench", "gpu"), *spec.test_cases]:
        for mode in ("stream", "fused", "split"):
            geo = sk._cl_plan(be, case, mode)
            assert geo.tpb <= limit and geo.g <= geo.tpb, (case.name, mode, geo)
            sizes.add(geo.tpb)
    assert max(sizes) == sk.pow2_floor(limit), sizes


def _webgpu_small_groups(most: int) -> dict:
    be, spec, skip = _softmax_child("webgpu")
    if skip:
        return skip
    from ops.softmax import kernels as sk
    from suite.check import checked_launch

    be.limits["max-compute-invocations-per-workgroup"] = most  # the adapter takes more: what is
    compile_ = be.compile                                    # planned must follow the limit
    built = []
    be.compile = lambda path, entry, defs=None, *a, **k: (built.append(defs.get("TPB", defs.get("WG"))),
                                                          compile_(path, entry, defs, *a, **k))[1]
    fails = []
    for m, n, dt in ((9, 1025, "bf16"), (5, 4096, "fp32"), (3, 20000, "fp32")):
        case, x, ins, outs, ref = _rows(be, spec, m, n, dt, 79)
        for mode in ("stream", "fused", "split"):
            res = checked_launch(be, spec, case, sk._webgpu(be, case, mode), ins, outs, x, ref,
                                 spec.tolerance(case))
            if not res.ok:
                fails.append(f"{mode} {case.name},{dt}: {res.message}")
    if not built or max(built) > most:
        fails.append(f"workgroup sizes {sorted(set(built))} with a limit of {most}")
    return {"fails": fails, "built": sorted(set(built))}


def test_webgpu_softmax_workgroups_follow_the_adapter_limit():
    """WebGPU workgroups are planned within max-compute-invocations-per-workgroup (WebGPU's
    default limit is 256; the tuned sizes go up to 1024), and the kernels stay right on them."""
    out = check_in_process(_webgpu_small_groups, (128,))
    assert out["built"][-1] == 128, out["built"]
