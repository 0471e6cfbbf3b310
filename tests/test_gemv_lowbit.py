"""gemv_lowbit: the formats of references/lowbit.py round-trip and mean what their docstring
says (nibble order, offset binary, scale groups); the float64 reference equals a direct per-
element formula; K not a multiple of 128 is rejected; the checker accepts right results (fp32
compute, fp16 dense weights) and rejects planted wrong kernels (nibble order swapped, scales per
wrong group, fp16 accumulation), through the harness; the Triton kernels compile for sm_90."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ops.gemv_lowbit.spec import SPEC, signature
from references import lowbit
from references.numerics import decode, encode
from suite.check import verify
from suite.spec import Case
from tests.spawn import check_in_process, nvrtc_reports, triton_missing
from tests.wrong import registered


def test_w4_pack_layout_and_round_trip():
    q = np.array([[-8, 7] + [0] * 126, [1, -1] + [3] * 126], np.int8)
    packed = lowbit.pack("w4a16", q)
    assert packed.shape == (2, 64) and packed.dtype == np.uint8
    assert packed[0, 0] == (0 | 15 << 4)  # k=0 (q −8 → 0) low nibble, k=1 (q 7 → 15) high nibble
    assert packed[1, 0] == (9 | 7 << 4)
    assert packed[1, 1] == (11 | 11 << 4)
    rng = np.random.default_rng(1)
    q = rng.integers(-8, 8, size=(5, 256))
    assert np.array_equal(lowbit.unpack("w4a16", lowbit.pack("w4a16", q)), q)


def test_w8_round_trip_and_range_checks():
    rng = np.random.default_rng(2)
    q = rng.integers(-128, 128, size=(3, 128))
    assert np.array_equal(lowbit.unpack("w8a16", lowbit.pack("w8a16", q)), q)
    with pytest.raises(ValueError, match="outside"):
        lowbit.pack("w4a16", np.full((1, 128), 8))
    with pytest.raises(ValueError, match="outside"):
        lowbit.pack("w8a16", np.full((1, 128), -129))


@pytest.mark.parametrize("fmt", lowbit.FORMATS)
def test_k_not_multiple_of_group_rejected(fmt):
    with pytest.raises(ValueError, match="multiple of 128"):
        lowbit.pack(fmt, np.zeros((2, 1000), np.int8))
    with pytest.raises(ValueError, match="multiple of 128"):
        signature(Case("bad", {"n": 4, "k": 1000, "b": 1, "bits": int(fmt[1])}, "fp16"))


@pytest.mark.parametrize("name", ["w4a16,n64,k384,b4", "w8a16,n37,k256,b1,bf16"])
def test_reference_matches_direct_formula(name):
    """Reference vs y[b, n] = Σ_k q·s·x written out per element from the bytes themselves."""
    case = SPEC.case(name)
    x = SPEC.inputs(case)
    ref = SPEC.reference(case, x)["y"]
    qw = x["qweight"]
    s = decode(x["scales"], case.dtype).astype(np.float64)
    xv = decode(x["x"], case.dtype).astype(np.float64)
    rng = np.random.default_rng(3)
    for bi, n in zip(rng.integers(0, case["b"], 6), rng.integers(0, case["n"], 6), strict=True):
        total = 0.0
        for k in range(case["k"]):
            if case["bits"] == 4:
                byte = int(qw[n, k // 2])
                q = ((byte >> 4) if k % 2 else (byte & 15)) - 8
                w = q * s[n, k // 128]
            else:
                w = int(qw[n, k]) * s[n]
            total += w * xv[bi, k]
        assert ref[bi, n] == pytest.approx(total, rel=1e-12, abs=1e-12)


def _w(case, x):
    return lowbit.dequantize("w4a16" if case["bits"] == 4 else "w8a16", x["qweight"], x["scales"], case.dtype)


def test_checker_accepts_bf16_results_and_rejects_fp16_rounding_of_bf16_inputs():
    """bf16: fp32 compute and bf16 dense weights pass; x read as if it were fp16 does not."""
    case = SPEC.case("w8a16,n37,k256,b1,bf16")
    x = SPEC.inputs(case)
    ref = SPEC.reference(case, x)
    tol = SPEC.tolerance(case)
    w32 = _w(case, x).astype(np.float32)
    xs = decode(x["x"], "bf16")
    wb = decode(encode(w32, "bf16"), "bf16")
    for w in (w32, wb):
        res = verify(SPEC, case, x, {"y": encode(xs @ w.T, "bf16")}, ref, tol)
        assert res.ok, res.message
    bad = x["x"].view(np.float16).astype(np.float32) @ w32.T
    assert not verify(SPEC, case, x, {"y": encode(bad, "bf16")}, ref, tol).ok


def test_checker_accepts_fp32_and_fp16_weight_results():
    case = SPEC.case("w4a16,n1000,k1024,b1")
    x = SPEC.inputs(case)
    ref = SPEC.reference(case, x)
    tol = SPEC.tolerance(case)
    w32 = _w(case, x).astype(np.float32)
    xs = x["x"].astype(np.float32)
    for w in (w32, w32.astype(np.float16).astype(np.float32)):  # fused; dense fp16 W paths
        res = verify(SPEC, case, x, {"y": (xs @ w.T).astype(np.float16)}, ref, tol)
        assert res.ok, res.message


def test_fp16_accumulation_rejected_at_cpu_bench_size():
    case = SPEC.case("w4a16,n4096,k4096,b1")
    x = SPEC.inputs(case)
    ref = SPEC.reference(case, x)
    prod = x["x"].astype(np.float32)[0][None, :] * _w(case, x).astype(np.float32)
    acc = np.zeros(case["n"], np.float16)
    for k in range(case["k"]):
        acc = (acc.astype(np.float32) + prod[:, k]).astype(np.float16)
    res = verify(SPEC, case, x, {"y": acc[None, :]}, ref, SPEC.tolerance(case))
    assert not res.ok


@pytest.fixture()
def wrong_kernels():
    with registered("tests.wrong.gemv_wrong"):
        yield


@pytest.mark.parametrize("variant,case", [
    ("control_fp32", "w4a16,n1000,k1024,b1"), ("control_fp32", "w8a16,n100,k512,b8"),
    ("control_fp32", "w4a16,n48,k256,b1,bf16"), ("wrong_nibble_order", "w4a16,n48,k256,b1,bf16"),
    ("wrong_nibble_order", "w4a16,n1000,k1024,b1"), ("wrong_scale_group", "w4a16,n1000,k1024,b1"),
    ("wrong_fp16_accumulate", "w4a16,n1000,k1024,b1"), ("wrong_fp16_accumulate", "w8a16,n100,k512,b8")])
def test_planted_kernels_through_the_harness(wrong_kernels, variant, case):
    from suite.worker import Executor, Item

    ex = Executor("torch")
    cpu = next(d for d in ex.devices if d.kind == "cpu")
    row = ex.run(Item("gemv_lowbit", "torch", variant, case, cpu.index, cpu.slug, size="test",
                      check_only=True))
    assert row["status"] == ("ok" if variant.startswith("control") else "failed"), row["message"]


def _triton_child(kernel: str, cases, **kw):
    """``ops.gemv_lowbit.kernels.<kernel>`` (with keyword arguments ``kw``) in the Triton
    interpreter on each (bits, n, k, b) of ``cases`` in fp16 and bf16 (its own process: one LLVM
    each)."""
    from ops.gemv_lowbit import kernels as gk
    from suite.check import checked_launch
    from tests.spawn import open_backend

    be, skip = open_backend("triton")
    if skip:
        return skip
    fails = []
    for dt in ("fp16", "bf16"):
        for bits, n, k, b in cases:
            case = Case(f"w{bits}a16,n{n},k{k},b{b},{dt}", {"n": n, "k": k, "b": b, "bits": bits}, dt, 5)
            x = SPEC.inputs(case)
            ins = {name: be.upload(x[name]) for name in ("qweight", "scales", "x")}
            outs = {"y": be.empty((b, n), x["x"].dtype)}
            res = checked_launch(be, SPEC, case, getattr(gk, kernel)(be, case, **kw), ins, outs, x,
                                 SPEC.reference(case, x), SPEC.tolerance(case))
            if not res.ok:
                fails.append(f"{case.name}: {res.message[:300]}")
    return {"fails": fails}


def _triton_dot_child():
    """gemv_lowbit_dot (fused_vec's w4a16 kernel at batch > 1; for w8a16 a probe form): odd N and
    every batch size."""
    return _triton_child("triton_dot", ((4, 37, 256, 1), (4, 70, 384, 8), (8, 37, 256, 4), (8, 70, 128, 1)))


def _triton_row_child():
    """gemv_lowbit_row (fused_vec at batch 1): odd N, and K not a multiple of its K tile (256 in
    the interpreter: the masked path) in both formats."""
    return _triton_child("triton_row", ((4, 37, 384, 1), (8, 33, 640, 1), (8, 70, 256, 1)))


def _triton_dp4a_staged_child():
    """gemv_lowbit_dp4a with its word tiles through the tl.range ring (STAGES 3; a probe form):
    odd N, K a multiple of the tile and not (the masked path), batch 1 and 4."""
    return _triton_child("triton_dp4a", ((4, 37, 384, 1), (4, 70, 512, 4), (4, 13, 256, 1)),
                         shapes=[(16, 256, 4, 3)])


def test_triton_dp4a_staged_is_right_in_the_interpreter():
    check_in_process(_triton_dp4a_staged_child)


def _triton_dp4a_unit_child():
    """gemv_lowbit_dp4a with the planes combined per 32-k unit (UNIT 1, the 5th field of two
    autotuned GPU configs; the interpreter's config has UNIT 0): odd N, K a multiple of the tile and
    not (the masked path), batch 1 and 4. The ring and the register loop call the same tile code;
    the interpreter ignores the ring's stages, so one config covers it."""
    from ops.gemv_lowbit.kernels import TRITON_DP4A_INTERPRET

    return _triton_child("triton_dp4a", ((4, 37, 384, 1), (4, 70, 512, 4), (4, 13, 256, 1)),
                         shapes=[TRITON_DP4A_INTERPRET], unit=1)


def test_triton_dp4a_unit_is_right_in_the_interpreter():
    check_in_process(_triton_dp4a_unit_child)


def test_triton_row_is_right_in_the_interpreter():
    check_in_process(_triton_row_child)


def test_triton_dot_is_right_in_the_interpreter():
    check_in_process(_triton_dot_child)


def _dp4a_fails(be, build, cases) -> list[str]:
    """Each (n, k, b, cu, dtype) w4a16 case built by ``build(be, case, cu)`` and checked against
    the reference: one message per failure."""
    from suite.check import checked_launch

    fails = []
    for n, k, b, cu, dt in cases:
        case = Case(f"w4a16,n{n},k{k},b{b},{dt}", {"n": n, "k": k, "b": b, "bits": 4}, dt, 7)
        x = SPEC.inputs(case)
        ins = {name: be.upload(x[name]) for name in ("qweight", "scales", "x")}
        outs = {"y": be.empty((b, n), x["x"].dtype)}
        res = checked_launch(be, SPEC, case, build(be, case, cu), ins, outs, x, SPEC.reference(case, x),
                             SPEC.tolerance(case))
        if not res.ok:
            fails.append(f"{case.name} cu={cu}: {res.message[:300]}")
    return fails


def _dp4a_child(backend: str):
    """gemv_lowbit_dp4a on PoCL (byte products, local-memory sums) or lavapipe (WGSL's packed dot
    products): K in several chunks (4 or 8 units of 32 k each), odd N, batch 1, 2 and 8, fp16 and
    bf16; a NaN in x makes every output NaN (the NaN group's factor), never a finite number."""
    import numpy as np

    from ops.gemv_lowbit import kernels as gk
    from tests.spawn import open_backend

    be, skip = open_backend(backend)
    if skip:
        return skip
    factory = {"opencl": gk.opencl_dp4a, "webgpu": gk.webgpu_dp4a}[backend]
    shapes = ((37, 512, 1, 4), (70, 384, 8, 4), (13, 1024, 2, 8), (64, 256, 1, None))
    fails = _dp4a_fails(be, lambda be, case, cu: factory(be, case, cu=cu),
                        [(*nkbc, dt) for dt in ("fp16", "bf16") for nkbc in shapes])
    case = Case("w4a16,n37,k512,b1", {"n": 37, "k": 512, "b": 1, "bits": 4}, "fp16", 7)
    x = SPEC.inputs(case)
    xn = x["x"].copy()
    xn[0, 300] = np.nan
    y = be.empty((1, 37), x["x"].dtype)
    factory(be, case, cu=4)({"qweight": be.upload(x["qweight"]), "scales": be.upload(x["scales"]),
                             "x": be.upload(xn)}, {"y": y})
    be.synchronize()
    yn = be.download(y)
    if not np.all(np.isnan(yn)):
        fails.append(f"NaN in x: outputs {yn[0, :6]} are not all NaN")
    return {"fails": fails}


@pytest.mark.parametrize("backend", ["opencl", "webgpu"])
def test_dp4a_chunks_batches_and_nan(backend):
    check_in_process(_dp4a_child, (backend,))


def _dp4a_wgsl_options_child():
    """gemv_lowbit_dp4a.wgsl's probe options on lavapipe: team sums through subgroup shuffles (SG:
    lavapipe's subgroups are narrower than a team, so the partials path runs), a team per
    subgroup summing by subgroupAdd (SG 2; with ST, y stored by the last chunk: odd N at batch 1,
    the gemv_pack fallback at odd N and batch 2), weights loaded a step ahead (PF), every chunk in
    one dispatch (LP, at SG 0, 1 and 2), with either, at
    1–4 rows per team and 4–16 teams; the weights repacked per tile (RL 1) or K-major (RL 2), at SG
    0, 1 and 2, 3 and 4 rows per team, blocks of 4 and 32 units (a second input set through the same
    launcher is repacked, not served the first one's copy); one or several chunks of 4–128
    units (PF's look-ahead runs where a lane takes several 32-unit steps), odd N, batch 1, 2 and 8
    (up to 32 sums per team, eight rounds of four); and the registered shape's fallback where the
    adapter lacks subgroups."""
    from ops.gemv_lowbit import kernels as gk
    from tests.spawn import open_backend

    be, skip = open_backend("webgpu")
    if skip:
        return skip
    if "subgroup" not in be.features:
        return {"skip": "the adapter has no subgroup feature"}
    cases = ((37, 512, 1, 4, "fp16"), (70, 384, 8, 4, "bf16"), (13, 1024, 2, 8, "fp16"),
             (301, 256, 1, None, "bf16"), (45, 4096, 1, None, "fp16"),
             (19, 4096, 2, 64, "bf16"))  # (4 and 2 steps of 32 units per lane)
    fails = []
    for shape in ((4, 16, 1, 1, 0), (4, 16, 1, 0, 1), (2, 4, 2, 1, 1), (1, 8, 1, 1, 1), (4, 16, 1, 2, 0),
                  (2, 4, 2, 2, 1, 1), (2, 4, 2, 2, 1, 1, 1), (4, 16, 1, 1, 0, 0, 1), (1, 8, 1, 0, 1, 0, 1),
                  (4, 16, 1, 2, 0, 1, 1, 1), (3, 4, 2, 1, 1, 0, 1, 1), (2, 4, 2, 0, 0, 0, 0, 1),
                  (4, 16, 1, 2, 0, 1, 1, 2), (3, 4, 2, 1, 0, 0, 1, 2)):
        fails += [f"{shape} {f}" for f in _dp4a_fails(
            be, lambda be, case, cu, s=shape: gk.webgpu_dp4a(be, case, s, cu=cu), cases)]
    # RL: one launcher, two input sets (the second must not be served the first one's repacked copy)
    from suite.check import checked_launch

    run = gk.webgpu_dp4a(be, SPEC.case("w4a16,n48,k256,b1,bf16"), (4, 16, 1, 2, 0, 1, 1, 1))
    for seed in (7, 8):
        case = Case("w4a16,n48,k256,b1,bf16", {"n": 48, "k": 256, "b": 1, "bits": 4}, "bf16", seed)
        x = SPEC.inputs(case)
        res = checked_launch(be, SPEC, case, run, {a: be.upload(x[a]) for a in ("qweight", "scales", "x")},
                             {"y": be.empty((1, 48), x["x"].dtype)}, x, SPEC.reference(case, x),
                             SPEC.tolerance(case))
        if not res.ok:
            fails.append(f"RL, input set of seed {seed}: {res.message[:300]}")
    # the registered shape on an adapter without subgroups: the SG 0 fallback, still right
    be.features = be.features - {"subgroup"}
    fails += [f"no subgroup: {f}" for f in _dp4a_fails(
        be, lambda be, case, cu: gk.webgpu_dp4a(be, case, cu=cu), cases[:3])]
    try:
        gk.webgpu_dp4a(be, SPEC.case("w4a16,n48,k256,b1,bf16"), (4, 16, 1, 1, 0))
        fails.append("SG 1 built without the subgroup feature")
    except gk.Unsupported:
        pass
    try:
        gk.webgpu_dp4a(be, SPEC.case("w4a16,n48,k256,b1,bf16"), (4, 16, 1, 0, 0, 1))
        fails.append("ST 1 built without SG 2")
    except ValueError:
        pass
    return {"fails": fails}


def test_dp4a_wgsl_subgroup_and_prefetch_options():
    check_in_process(_dp4a_wgsl_options_child)


def _hopper_jobs() -> dict:
    if (skip := triton_missing()):
        return skip
    from backends.triton import compile_many_for_hopper
    from ops.gemv_lowbit.gemv_lowbit_triton import (
        gemv_lowbit,
        gemv_lowbit_dot,
        gemv_lowbit_row,
        gemv_lowbit_vec,
    )
    sig = {"s_ptr": "*fp16", "x_ptr": "*fp16", "y_ptr": "*fp16", "N": "i32", "K": "i32", "B": "i32",
           "W_STRIDE": "i32"}
    opts = {"num_warps": 4, "divisible_by_16": ("w_ptr", "s_ptr", "x_ptr", "y_ptr", "K", "W_STRIDE")}
    sig_bf16 = {**sig, "s_ptr": "*bf16", "x_ptr": "*bf16", "y_ptr": "*bf16"}
    row = {"EVEN_K": True}
    out = compile_many_for_hopper([
        (gemv_lowbit, {"w_ptr": "*u8", **sig}, {"BITS": 4, "BN": 32, "BK": 128, "BB": 1, "MODE": 1,
                                                "OUT_BF16": False}, opts),
        (gemv_lowbit_vec, {"w_ptr": "*i32", **sig_bf16}, {"BN": 16, "BK": 512, "BB": 4, "EVEN_K": True,
                                                          "OUT_BF16": True}, opts),
        (gemv_lowbit_dot, {"w_ptr": "*i32", **sig_bf16}, {"BITS": 8, "BN": 64, "BB": 16, "OUT_BF16": True,
                                                          "F32": False}, opts),
        (gemv_lowbit_row, {"w_ptr": "*i32", **sig_bf16, "MAGIC": "i32"},
         {"BITS": 4, "BN": 64, "BK": 256, "OUT_BF16": True, **row}, opts),
        (gemv_lowbit_row, {"w_ptr": "*i32", **sig, "MAGIC": "i32"},
         {"BITS": 8, "BN": 128, "BK": 256, "OUT_BF16": False, **row}, {**opts, "num_warps": 8})])
    names = ("gemv_lowbit", "gemv_lowbit_vec", "gemv_lowbit_dot", "gemv_lowbit_row w4", "gemv_lowbit_row w8")
    fails = [f"{n}: {o['error'][:2000]}" for n, o in zip(names, out, strict=True) if "error" in o]
    if fails:
        return {"fails": fails}
    fails += [f"{n}: spills {o['spill_bytes']} bytes" for n, o in zip(names, out, strict=True)
              if o["spill_bytes"] != 0]  # None: not read (no cuobjdump)
    if "wgmma.mma_async" not in out[2]["ptx"]:
        fails.append("gemv_lowbit_dot: no wgmma")
    for i in (1, 3, 4):  # gemv_lowbit_vec, gemv_lowbit_row: 2 word tiles × 2 loads at least
        if out[i]["global_accesses"].get("ld.global.v4.b32", 0) < 4:
            fails.append(f"{names[i]}: fewer than 4 16-byte loads: {out[i]['global_accesses']}")
    # one barrier in all, the final row sum's (gemv_lowbit_vec at batch 1, 4 warps: 38 in the PTX)
    if out[4]["ptx"].count("bar.sync") > 1:
        fails.append(f"gemv_lowbit_row w8: {out[4]['ptx'].count('bar.sync')} bar.sync in the PTX")
    return {"fails": fails}


def test_triton_kernels_compile_for_hopper():
    """fused (fp16; byte-indexed nibbles), fused_vec's kernels — gemv_lowbit_row (batch 1, w4a16
    bf16 and w8a16 fp16: int32 word tiles, which must become 16-byte loads, also the prefetched
    next tile; at 8 warps no barrier in the loop, the property that took w8a16 from 55 to 84–90 %
    on the H200), gemv_lowbit_vec (w8a16, batch 4) — and gemv_lowbit_dot (w8a16 bf16: wgmma)
    compile for sm_90 without spills (about 3 s each on 2 cores; the other modes run in the
    interpreter), in a spawned process as every Triton compile of the tests."""
    check_in_process(_hopper_jobs)


@pytest.mark.parametrize("defines", [{"BITS": 8, "DT": 2, "KW": 1, "US": 4},
                                     {"BITS": 4, "DT": 2, "KW": 4, "US": 2},
                                     {"BITS": 8, "DT": 2, "KW": 2, "US": 2, "RT": 2},
                                     {"BITS": 4, "DT": 2, "KW": 2, "US": 2, "RT": 2, "NB": 8},
                                     {"BITS": 4, "DT": 2, "KW": 4, "US": 2, "RT": 2, "MEMONLY": 1}])
def test_cuda_tc_probe_forms_compile_without_spills(defines):
    """The probe-only forms of gemv_lowbit_tc (scripts/probe.py) compile for sm_80 and sm_90."""
    from ops.gemv_lowbit.kernels import _CU

    for rep in nvrtc_reports(_CU, "gemv_lowbit_tc", {"NB": 1, **defines}):
        assert rep["spill_bytes"] == 0, rep


@pytest.mark.parametrize("defines", [{"DT": 1}, {"DT": 2}, {"DT": 2, "TKW": 16},
                                     {"DT": 2, "TSTAGES": 8, "TCH": 1024}, {"DT": 2, "TMEMONLY": 1}])
def test_cuda_tma_compiles_for_sm90_without_spills(defines):
    """gemv_lowbit_tma (fused_tma: w4a16 at batch 1 on sm_90, and the probe's shapes) compiles for
    sm_90 in fp16 and bf16 without spills, within 65536 registers per block."""
    from ops.gemv_lowbit.kernels import _CU

    defs = {"BITS": 4, "NB": 1, **defines}
    (rep,) = nvrtc_reports(_CU, "gemv_lowbit_tma", defs, ("-arch=sm_90",))
    assert rep["spill_bytes"] == 0 and rep["registers"] * 32 * (defs.get("TKW", 8) + 1) <= 65536, rep


@pytest.mark.parametrize("entry,defines", [("gemv_lowbit_pk", {"DT": 1}), ("gemv_lowbit_pk", {"DT": 2}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PKW": 16}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PSTAGES": 5}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PMEMONLY": 1}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PTIMELINE": 1}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PKDIV": 1}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PNEXT": 4}),
                                           ("gemv_lowbit_pk", {"DT": 1, "PIMMA": 1}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PIMMA": 1}),
                                           ("gemv_lowbit_pk", {"DT": 2, "PXG": 1, "PSTAGES": 5, "PSPW": 1})])
def test_cuda_packed_compiles_for_sm90_without_spills(entry, defines):
    """gemv_lowbit_pk (fused_packed, and the probe's shapes) compiles for sm_90 in fp16 and bf16
    without spills, within 65536 registers per block."""
    from ops.gemv_lowbit.kernels import _CU

    defs = {"BITS": 4, "NB": 1, **defines}
    (rep,) = nvrtc_reports(_CU, entry, defs, ("-arch=sm_90",))
    assert rep["spill_bytes"] == 0 and rep["registers"] * 32 * (defs.get("PKW", 8) + 1) <= 65536, rep


def test_packed_split_finishes_every_group_once():
    """gemv_lowbit_pk's work split written out (its ranges, and the owner of chunk c as
    ⌈(c + 1)·B / T⌉ − 1): for the bench and test shapes and several SM counts, every block holds a
    chunk, the blocks b0..b1 a group's finish counts are exactly those whose ranges hold its
    chunks, and they fit the host's ``slots`` (a block counted but never arriving leaves y
    unwritten: s20l)."""
    from ops.gemv_lowbit.kernels import pk_geometry

    for n, k in ((16384, 16384), (28672, 8192), (8192, 8192), (1000, 8192), (1000, 1024), (13, 512)):
        for sms, per_sm in itertools.product((1, 2, 7, 66, 78, 114, 132, 144, 170), (1, 2)):
            groups, cpg, nb, slots = pk_geometry(n, k, sms, per_sm=per_sm)
            total = groups * cpg
            ranges = [(total * b // nb, total * (b + 1) // nb) for b in range(nb)]
            assert all(hi > lo for lo, hi in ranges), (n, k, sms)
            for grp in range(groups):
                f0, f1 = grp * cpg, grp * cpg + cpg - 1
                b0 = ((f0 + 1) * nb + total - 1) // total - 1
                b1 = ((f1 + 1) * nb + total - 1) // total - 1
                holding = [b for b, (lo, hi) in enumerate(ranges) if lo <= f1 and hi > f0]
                assert holding == list(range(b0, b1 + 1)) and len(holding) <= slots, (n, k, sms, grp)


@pytest.mark.parametrize("n,k,kw,spw", [(1000, 1024, 8, 4), (48, 4096, 2, 8), (13, 512, 1, 4)])
def test_pack_groups_puts_each_lane_s_bytes_where_fused_packed_reads_them(n, k, kw, spw):
    """fused_packed's stream (kernels.pack_groups) against the kernel's reads written out
    (gemv_lowbit.cu, gemv_lowbit_pk): chunk c = grp·CPG + kc at byte c·STB (STB = kw·spw·1056);
    warp w's step j: lane (g, t) reads 16 bytes at 1024·(w·spw + j) + 16·lane (row 16·kw·grp + 16w
    + g) and + 512 (row + 8); its word h must hold the row's k 8·(4h + t) + (0, 2, 1, 3, 4, 6, 5, 7)
    of step kc·spw + j, from the low nibble up (the pairs unpack_pairs makes are then consecutive
    k, as x is stored); the scale of (row 16w + r, step j) at kw·spw·1024 + 2·(16·(w·spw + j) + r).
    Rows past N read as zeros."""
    from ops.gemv_lowbit.kernels import pack_groups

    rng = np.random.default_rng(n + k + kw)
    w = rng.integers(0, 256, size=(n, k // 2), dtype=np.uint8)
    sc = rng.integers(1, 2**16, size=(n, k // 128), dtype=np.uint16)
    stream = pack_groups(w, sc, n, k, kw, spw)
    rows = 16 * kw
    groups, cpg = -(-n // rows), k // 128 // spw
    stb = kw * spw * 1056
    assert stream.dtype == np.uint8 and stream.shape == (groups * cpg * stb,)
    nib = np.zeros((groups * rows, k), np.uint8)  # the format's nibbles: element 2j low in byte j
    nib[:n, 0::2], nib[:n, 1::2] = w & 15, w >> 4
    sz = np.concatenate([sc, np.zeros((groups * rows - n, k // 128), np.uint16)])
    order = np.array([0, 2, 1, 3, 4, 6, 5, 7])
    for grp in range(groups):
        for kc in range(cpg):
            base = (grp * cpg + kc) * stb
            scl = stream[base + kw * spw * 1024: base + stb].view(np.uint16)
            for wp in range(kw):
                row0 = grp * rows + 16 * wp
                for j in range(spw):
                    step = kc * spw + j
                    at0 = 16 * (wp * spw + j)
                    assert (scl[at0: at0 + 16] == sz[row0: row0 + 16, step]).all()
                    for lane in range(32):
                        g, t = lane >> 2, lane & 3
                        for half in range(2):
                            at = base + 1024 * (wp * spw + j) + 512 * half + 16 * lane
                            got = stream[at: at + 16]
                            got = np.stack([got & 15, got >> 4], axis=-1).reshape(4, 8)  # [h][nibble]
                            for h in range(4):
                                want = nib[row0 + g + 8 * half, 128 * step + 8 * (4 * h + t) + order]
                                assert (got[h] == want).all(), (grp, kc, wp, j, lane, half, h)


def _imma_planes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gemv_lowbit.cu's pk_x_planes written out: x (float, K) → planes bytes [group][plane][t][kb][8]
    and gf [group] (2^e, −8·ΣM), lane by lane as the kernel stores them."""
    k = x.size
    pl = np.zeros((k // 128, 3, 4, 4, 8), np.uint8)
    gf = np.zeros((k // 128, 2))
    for grp in range(k // 128):
        v = x[grp * 128:(grp + 1) * 128].astype(np.float32)
        m = np.abs(v).max()
        sh = min(20 - (int(np.floor(np.log2(m))) if m > 0 else 0), 126)
        q = np.rint(v.astype(np.float64) * 2.0 ** sh).astype(np.int64)
        gf[grp] = (2.0 ** -sh, -8.0 * q.sum())
        for lane in range(32):
            kb, t, hi = lane >> 3, (lane & 7) >> 1, lane & 1
            for p in range(3):
                byt = [(int(q[4 * lane + i]) >> (8 * p)) & 0xFF for i in range(4)]
                pl[grp, p, t, kb, 2 * hi:2 * hi + 2] = byt[0:2]  # b0 bytes 2·hi, 2·hi + 1
                pl[grp, p, t, kb, 4 + 2 * hi:4 + 2 * hi + 2] = byt[2:4]  # b1
    return pl, gf


def test_packed_integer_mma_fragments_give_the_dot_product():
    """gemv_lowbit_pk's PIMMA consumer (pk_x_planes, pk_steps_imma) emulated fragment by fragment
    with the PTX layout of mma.m16n8k32 (A row g / g + 8, mma-k 4t + i and 16 + 4t + i; B mma-k the
    same, column g; C column 0 in lanes t = 0) over pack_groups' stream: each warp's 16 rows equal
    the exact Σ_k q·x·scale to fp32 rounding (x in 22-bit fixed point per group). A plane layout
    off by one byte pair, or B's k order not matching the nibbles', fails it."""
    from ops.gemv_lowbit.kernels import pack_groups

    rng = np.random.default_rng(5)
    n, k, kw, spw = 32, 1024, 2, 2
    w = rng.integers(0, 256, size=(n, k // 2), dtype=np.uint8)
    sc = (rng.uniform(0.5, 2, size=(n, k // 128)) * 2.0 ** -6).astype(np.float16)
    x = rng.standard_normal(k).astype(np.float16).astype(np.float32)
    x[:128] *= 1e-3  # a group of small values: its own exponent
    stream = pack_groups(w, sc.view(np.uint16), n, k, kw, spw)
    pl, gf = _imma_planes(x)
    q = np.stack([(w & 15).astype(np.int64) - 8, (w >> 4).astype(np.int64) - 8], -1).reshape(n, k)
    want = (q * np.repeat(sc.astype(np.float64), 128, axis=1)) @ x.astype(np.float64)
    stb, cpg = kw * spw * 1056, k // 128 // spw
    got = np.zeros(n)
    for kc in range(cpg):  # one group of 16·kw rows (n = 32)
        stage = stream[kc * stb:(kc + 1) * stb]
        words = stage[:kw * spw * 1024].view(np.uint32).reshape(kw, spw, 2, 32, 4)  # [w][j][half][lane][h]
        scl = stage[kw * spw * 1024:].view(np.float16).reshape(kw, spw, 16)
        for wp, j in itertools.product(range(kw), range(spw)):
            grp = kc * spw + j
            c = np.zeros((3, 16, 8), np.int64)
            for kb in range(4):
                a = np.zeros((16, 32), np.int64)  # [row][mma-k]
                b = np.zeros((3, 32, 8), np.int64)  # [plane][mma-k][col]
                for lane in range(32):
                    g, t = lane >> 2, lane & 3
                    for half in range(2):
                        wd = int(words[wp, j, half, lane, kb])
                        for i in range(4):
                            a[g + 8 * half, 4 * t + i] = (wd >> (8 * i)) & 15
                            a[g + 8 * half, 16 + 4 * t + i] = (wd >> (8 * i + 4)) & 15
                    for p in range(3):
                        pair = pl[grp, p, t, kb]
                        for i in range(4):
                            lo, hi = int(pair[i]), int(pair[4 + i])
                            if p == 2:  # signed top plane
                                lo, hi = lo - 256 * (lo > 127), hi - 256 * (hi > 127)
                            b[p, 4 * t + i, g], b[p, 16 + 4 * t + i, g] = lo, hi
                for p in range(3):
                    c[p] += a @ b[p]
            v = c[0, :, 0] + 256 * c[1, :, 0] + 65536 * c[2, :, 0] + gf[grp, 1]
            got[np.arange(16) + 16 * wp] += v * gf[grp, 0] * scl[wp, j].astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("dt,pf", [(1, 1), (2, 1), (2, 0)])
def test_cuda_simt_probe_compiles_without_spills(dt, pf):
    """gemv_lowbit_simt (the w8a16 CUDA-core probe form, kernels.cuda_simt) compiles for sm_80 and
    sm_90 in fp16 and bf16, with and without the prefetch, without spills."""
    from ops.gemv_lowbit.kernels import _CU

    defines = {"BITS": 8, "NB": 1, "RPT": 16, "WARPS": 4, "DT": dt, "PF": pf}
    for rep in nvrtc_reports(_CU, "gemv_lowbit_simt", defines):
        assert rep["spill_bytes"] == 0, rep


def _mma_frontend_jobs(forms):
    """gemv_lowbit.cl's inline-PTX kernels (gemv_lowbit_mma: MMA forms, gemv_lowbit_pk: PKW forms)
    through PoCL's compiler front end (OpenCL C parsed and type-checked; PoCL's clang knows the
    inline asm only as ``__asm__``, NVIDIA's as ``asm``, and the PTX itself is checked on the GPU
    only), and both factories' answer on a non-NVIDIA device."""
    import pyopencl as cl

    from backends.base import Unsupported, read_source
    from ops.gemv_lowbit.kernels import _CL, opencl_fused_mma, opencl_fused_packed
    from tests.spawn import open_backend

    be, skip = open_backend("opencl")
    if skip:
        return skip
    fails = []
    src = read_source(_CL)  # tc_pairs.h and halfvec.cl included, as the backend builds it
    for defs in forms:
        opts = [f"-D{k}={v}" for k, v in (({} if "PKW" in defs else {"MMA": 1}) | defs).items()]
        opts += ["-Dasm=__asm__"]
        try:
            cl.Program(be.ctx, src).build(options=opts, devices=[be.cl_device])
        except Exception as e:  # noqa: BLE001 - reported
            fails.append(f"{defs}: {str(e)[:2000]}")
    for name, factory in (("fused_mma", opencl_fused_mma), ("fused_packed", opencl_fused_packed)):
        try:
            factory(be, Case("t", {"n": 256, "k": 256, "b": 1, "bits": 4}, "bf16"))
            fails.append(f"{name} did not decline a device without NVIDIA's attribute query")
        except Unsupported:
            pass
    return {"fails": fails}


_MMA_FORMS = [{"BITS": 4, "NB": 1, "DT": 2, "KW": 2, "US": 2, "RT": 2},
              {"BITS": 4, "NB": 8, "DT": 1, "KW": 4, "US": 1, "RT": 1},
              {"BITS": 8, "NB": 1, "DT": 2, "KW": 1, "US": 2, "RT": 1},
              {"BITS": 8, "NB": 3, "DT": 1, "KW": 8, "US": 2, "RT": 2},
              {"BITS": 4, "NB": 1, "DT": 2, "KW": 2, "US": 1, "RT": 2},
              {"BITS": 8, "NB": 2, "DT": 1, "KW": 4, "US": 2, "RT": 1},
              {"BITS": 4, "NB": 1, "DT": 2, "PKW": 8, "PSTAGES": 5, "PSPW": 1},
              {"BITS": 4, "NB": 1, "DT": 1, "PKW": 4, "PSTAGES": 4, "PSPW": 2},
              {"BITS": 4, "NB": 1, "DT": 2, "PKW": 8, "PSTAGES": 5, "PSPW": 1, "PXR": 1},
              {"BITS": 4, "NB": 1, "DT": 1, "PKW": 8, "PSTAGES": 2, "PSPW": 2, "PXR": 1}]


def test_opencl_mma_source_parses_and_declines_off_nvidia():
    check_in_process(_mma_frontend_jobs, (_MMA_FORMS,))


@pytest.mark.parametrize("defines", [{"RPT": 2, "WARPS": 32}, {"RPT": 4, "WARPS": 16},
                                     {"RPT": 2, "WARPS": 16, "MINB": 2}, {"RPT": 2, "WARPS": 8, "NB": 8},
                                     {"RPT": 2, "WARPS": 16, "MINB": 2, "DMEMONLY": 1}])
def test_cuda_dp4a_forms_compile_without_spills(defines):
    """gemv_lowbit_dp4a (fused_dp4a and the probe's shapes) compiles
    for sm_80 and sm_90, without spills on sm_90 (sm_80's ptxas spills a few bytes of the
    two-blocks-per-SM form; the registered form also runs through test_kernels)."""
    from ops.gemv_lowbit.kernels import _CU

    reps = nvrtc_reports(_CU, "gemv_lowbit_dp4a", {"BITS": 4, "NB": 1, "DT": 2, "CU": 512, **defines})
    assert {r["arch"] for r in reps} >= {"sm_80", "sm_90"}
    for rep in reps:
        if rep["arch"] == "sm_90":
            assert rep["spill_bytes"] == 0, rep


def _hopper_dp4a_job() -> dict:
    if (skip := triton_missing()):
        return skip
    from backends.triton import compile_many_for_hopper
    from ops.gemv_lowbit.gemv_lowbit_triton import gemv_lowbit_dp4a, gemv_x_planes
    opts = {"num_warps": 8, "num_stages": 1,
            "divisible_by_16": ("w_ptr", "s_ptr", "xp_ptr", "sm_ptr", "f_ptr", "y_ptr", "K", "W_STRIDE")}
    sig = {"w_ptr": "*i32", "s_ptr": "*bf16", "xp_ptr": "*i32", "sm_ptr": "*i32", "f_ptr": "*fp32",
           "y_ptr": "*bf16", "N": "i32", "K": "i32", "W_STRIDE": "i32"}
    cx = {"BK": 256, "EVEN_K": True, "OUT_BF16": True, "ASM": True, "PDL": False, "PREF": 0, "UNIT": 0}
    psig = {"x_ptr": "*bf16", "xp_ptr": "*i32", "sm_ptr": "*i32", "f_ptr": "*fp32", "K": "i32"}
    planes = (gemv_x_planes, psig, {"GB": 8, "PDL": False},
              {"num_warps": 4, "divisible_by_16": ("x_ptr", "xp_ptr", "sm_ptr", "f_ptr", "K")})
    names = ("dp4a", "planes", "staged", "pdl", "planes pdl", "pref", "unit")
    out = compile_many_for_hopper([
        (gemv_lowbit_dp4a, sig, {**cx, "BN": 64, "STAGES": 1}, opts), planes,
        (gemv_lowbit_dp4a, sig, {**cx, "BN": 32, "STAGES": 4}, {**opts, "num_warps": 4}),
        (gemv_lowbit_dp4a, sig, {**cx, "BN": 64, "STAGES": 1, "PDL": True}, opts),
        (planes[0], planes[1], {"GB": 8, "PDL": True}, planes[3]),
        (gemv_lowbit_dp4a, sig, {**cx, "BN": 16, "BK": 1024, "STAGES": 3, "PDL": True, "PREF": 2},
         {**opts, "num_warps": 4, "stages": True}),
        (gemv_lowbit_dp4a, sig, {**cx, "BN": 16, "BK": 1024, "STAGES": 3, "PDL": True, "PREF": 2, "UNIT": 1},
         {**opts, "num_warps": 4, "stages": True})])
    fails = [f"{n}: {o['error'][:2000]}" for n, o in zip(names, out, strict=True) if "error" in o]
    if fails:
        return {"fails": fails}
    main = out[0]
    if main["spill_bytes"] != 0:  # None: not read (no cuobjdump)
        fails.append(f"gemv_lowbit_dp4a spills {main['spill_bytes']} bytes")
    if main["ptx"].count("dp4a.") < 6:
        fails.append(f"gemv_lowbit_dp4a: {main['ptx'].count('dp4a.')} dp4a in the PTX, 6 wanted at least")
    if main["global_accesses"].get("ld.global.v4.b32", 0) < 1:
        fails.append(f"gemv_lowbit_dp4a: no 16-byte word loads: {main['global_accesses']}")
    staged = out[2]
    if "cp.async.cg.shared.global" not in staged["ptx"] or staged["spill_bytes"] != 0:
        fails.append(f"gemv_lowbit_dp4a STAGES 4: no 16-byte cp.async ring in the PTX, or spills "
                     f"({staged['spill_bytes']})")
    pdl, wait = out[3]["ptx"], out[3]["ptx"].find("griddepcontrol.wait")
    if not 0 <= pdl.find("ld.global.v4") < wait:
        fails.append("gemv_lowbit_dp4a PDL: the first word tile is not loaded before griddepcontrol.wait")
    if "griddepcontrol.launch_dependents" not in out[4]["ptx"]:
        fails.append("gemv_x_planes PDL: no griddepcontrol.launch_dependents")
    pref, wait = out[5]["ptx"], out[5]["ptx"].find("griddepcontrol.wait")
    if not 0 <= pref.find("prefetch.global.L2") < wait or out[5]["spill_bytes"] != 0:
        fails.append("gemv_lowbit_dp4a PREF 2: no L2 prefetch before griddepcontrol.wait, or spills "
                     f"({out[5]['spill_bytes']})")
    unit = out[6]
    if unit["ptx"].count("dp4a.") < 24 or unit["spill_bytes"] != 0:  # 3 planes × 8 chained, unrolled
        fails.append(f"gemv_lowbit_dp4a UNIT 1: {unit['ptx'].count('dp4a.')} dp4a in the PTX (24 wanted at "
                     f"least), or spills ({unit['spill_bytes']})")
    # UNIT's point is the issue slots: its main loop's SASS (273 instructions per 2048-word tile
    # with Triton 3.6 and 3.9) at most 0.9 × the per-word form's at the same ring (335)
    from suite.inspection import main_loop_instructions
    if "sass" in unit.get("asm", {}):  # cuobjdump present (Triton's wheel ships it)
        per_word, per_unit = (main_loop_instructions(o["asm"]["sass"]) for o in (out[5], unit))
        if not (per_word and per_unit and per_unit <= 0.9 * per_word):
            fails.append(f"gemv_lowbit_dp4a UNIT 1: {per_unit} SASS instructions in the main loop against "
                         f"{per_word} per word (at most 0.9 × wanted)")
    return {"fails": fails}


def test_triton_dp4a_compiles_for_hopper():
    """Triton fused_dp4a's kernels compile for sm_90 with PTX dp4a (the interpreter runs the plain
    integer form through test_kernels), 16-byte word loads and no spills; its staged form (a probe)
    with the word tiles in a 16-byte cp.async ring, its PDL form (the first word tile loaded
    before waiting for the planes kernel), PREF (a ring config's first tiles asked into L2
    before that wait) and UNIT 1 (the planes combined per 32-k unit)."""
    check_in_process(_hopper_dp4a_job)
