"""matmul: the checker of big shapes (sampled rows/columns + Freivalds) rejects planted wrong
products at bench size and accepts right ones; bf16 words round-trip; the Triton kernels compile
for sm_90 without a GPU; the CUDA tensor-core source compiles with sm_90a options."""

from __future__ import annotations

import numpy as np
import pytest

from ops.matmul.spec import SPEC, freivalds
from references.numerics import decode, encode, from_bf16, to_bf16
from suite.check import verify
from tests.spawn import check_in_process, nvrtc_reports, triton_missing
from tests.wrong import registered


def test_bf16_round_to_nearest_even():
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, -2.5e-3, 3.0e38, np.inf], np.float32)
    got = from_bf16(to_bf16(x))
    assert got[0] == 1.0 and got[1] == 1.0  # a tie rounds to the even neighbour
    assert got[2] == np.float32(1.0 + 4 * 2**-8)
    assert abs(got[3] - x[3]) <= 2**-9 * abs(x[3]) and np.isinf(got[5])
    assert np.isnan(from_bf16(to_bf16(np.array([np.nan], np.float32))))[0]


@pytest.fixture(scope="module")
def bench_4097():
    case = SPEC.case("4097³,bf16")
    x = SPEC.inputs(case)
    ref = SPEC.reference(case, x)
    a, b = decode(x["A"], "bf16"), decode(x["B"], "bf16")
    return case, x, ref, a, b, a @ b


def _check(case, x, ref, c32):
    return verify(SPEC, case, x, {"C": encode(c32, case.dtype)}, ref, SPEC.tolerance(case))


def test_right_product_passes_at_bench_size(bench_4097):
    case, x, ref, a, b, good = bench_4097
    assert "rows" in ref  # the sampled + Freivalds path, not the full product
    res = _check(case, x, ref, good)
    assert res.ok, res.message


def test_wrong_tile_caught_by_freivalds_alone(bench_4097):
    case, x, ref, a, b, good = bench_4097
    rows, cols = set(ref["rows"].tolist()), set(ref["cols"].tolist())
    i0 = next(i for i in range(0, 4096, 128) if not rows & set(range(i, i + 128)))
    j0 = next(j for j in range(0, 4096, 128) if not cols & set(range(j, j + 128)))
    bad = good.copy()
    bad[i0:i0 + 128, j0:j0 + 128] *= 0.9
    c = decode(encode(bad, "bf16"), "bf16")
    tol = SPEC.tolerance(case)
    assert freivalds(case, c, ref, tol, float(ref["mAB"][0])).ok is False
    res = _check(case, x, ref, bad)
    assert not res.ok and "Freivalds" in res.message


def test_skipped_k_remainder_rejected(bench_4097):
    case, x, ref, a, b, good = bench_4097
    res = _check(case, x, ref, a[:, :4096] @ b[:4096])
    assert not res.ok


def test_fp16_accumulation_rejected(bench_4097):
    case, x, ref, a, b, good = bench_4097
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    acc = np.zeros(good.shape, np.float16)
    for k0 in range(0, a.shape[1], 64):
        acc = (acc.astype(np.float32) + a32[:, k0:k0 + 64] @ b32[k0:k0 + 64]).astype(np.float16)
    res = _check(case, x, ref, acc.astype(np.float32))
    assert not res.ok


def test_nan_never_passes(bench_4097):
    case, x, ref, a, b, good = bench_4097
    bad = good.copy()
    bad[4000, 17] = np.nan
    assert not _check(case, x, ref, bad).ok


@pytest.fixture()
def wrong_kernels():
    with registered("tests.wrong.matmul_wrong"):
        yield


@pytest.mark.parametrize("variant", ["wrong_one_tile", "wrong_skip_k_tail", "wrong_fp16_accumulate",
                                     "control_fp32_compute"])
def test_planted_kernels_through_the_harness(wrong_kernels, variant):
    """The planted torch kernels, run by the worker on a bench case (sampled check), fail; a right
    product (fp32 compute, rounded once) passes the same check."""
    from suite.worker import Executor, Item

    ex = Executor("torch")
    cpu = next(d for d in ex.devices if d.kind == "cpu")
    row = ex.run(Item("matmul", "torch", variant, "2048³,bf16", cpu.index, cpu.slug, size="bench",
                      check_only=True))
    assert row["status"] == ("ok" if variant.startswith("control") else "failed"), row["message"]


def _hopper_jobs() -> dict:
    if (skip := triton_missing()):
        return skip
    from backends.triton import compile_many_for_hopper
    from ops.matmul.matmul_triton import matmul_grouped, matmul_splitk
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32"}
    cx = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8, "PRECISION": "ieee", "UPCAST": False}
    sk = {"a_ptr": "*bf16", "b_ptr": "*bf16", "ws_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
          "stride_am": "i32", "stride_bk": "i32"}
    skc = {"BLOCK_M": 16, "BLOCK_N": 64, "BLOCK_K": 128, "SPLIT": 4, "PRECISION": "ieee", "UPCAST": False}
    out = compile_many_for_hopper([
        (matmul_grouped, sig, cx, {"num_warps": 8, "num_stages": 3,
                                   "divisible_by_16": ("a_ptr", "b_ptr", "c_ptr", "stride_am", "stride_bk")}),
        (matmul_splitk, sk, skc, {"num_warps": 4, "num_stages": 4, "divisible_by_16": ("a_ptr", "b_ptr")}),
    ])
    fails = []
    for name, o in zip(("matmul_grouped", "matmul_splitk"), out, strict=True):
        if "error" in o:
            fails.append(f"{name}: {o['error'][:2000]}")
        elif "mma" not in o["ptx"]:  # tensor-core instructions (wgmma or mma.sync)
            fails.append(f"{name}: no mma in the PTX")
    return {"fails": fails}


def test_triton_matmul_compiles_for_hopper():
    """In a spawned process, as every Triton compile of the tests (Triton's LLVM beside another
    in one test worker has crashed it)."""
    check_in_process(_hopper_jobs)


def _splitk_smem_jobs() -> dict:
    """splitk's first config (the one a test shape runs) at every skinny (M ≤ 64) test and bench
    case's BLOCK_M and precision, compiled for sm_90: its shared memory within an H100's / H200's
    227 KiB (the fp32 / tf32 test cases at M 33-64 needed 256 KiB before the fitting)."""
    if (skip := triton_missing()):
        return skip
    from backends.triton import compile_many_for_hopper
    from ops.matmul import kernels as mk
    from ops.matmul.matmul_triton import matmul_splitk
    limit, keys, jobs = 227 * 1024, set(), []
    for case in SPEC.test_cases + [c for cs in SPEC.bench_cases.values() for c in cs]:
        key = (mk._splitk_bm(case["m"]), case.prec)
        if case["m"] > 64 or key in keys:
            continue
        keys.add(key)
        bn, bk, sp, w, st = mk.splitk_configs(case, limit)[0]
        dt = {"fp32": "*fp32", "tf32": "*fp32", "fp16": "*fp16", "bf16": "*bf16"}[case.prec]
        sig = {"a_ptr": dt, "b_ptr": dt, "ws_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
               "stride_am": "i32", "stride_bk": "i32"}
        cx = {"BLOCK_M": key[0], "BLOCK_N": bn, "BLOCK_K": bk, "SPLIT": sp,
              "PRECISION": "tf32" if case.prec == "tf32" else "ieee", "UPCAST": False}
        jobs.append((matmul_splitk, sig, cx, {"num_warps": w, "num_stages": st}))
    fails = [f"{cx['BLOCK_M']} {sig['a_ptr']}: {o.get('error', '')[:500] or o['smem_bytes']} bytes"
             for (_, sig, cx, _), o in zip(jobs, compile_many_for_hopper(jobs), strict=True)
             if "error" in o or o["smem_bytes"] > limit]
    return {"fails": fails, "jobs": len(jobs)}


def test_triton_splitk_fits_shared_memory():
    assert check_in_process(_splitk_smem_jobs)["jobs"] >= 6


@pytest.mark.parametrize("bk,stages,bn,minb,pipe,even",
                         [(32, 4, 256, 1, 0, 1), (64, 3, 256, 1, 0, 1), (32, 3, 128, 2, 0, 1),
                          (32, 4, 128, 2, 1, 1), (64, 3, 128, 2, 1, 1), (64, 3, 128, 2, 1, 0),
                          (64, 3, 256, 1, 1, 1), (64, 3, 256, 1, 1, 0)])
def test_cuda_mma_source_compiles_with_sm90a_options(bk, stages, bn, minb, pipe, even):
    from ops.matmul.kernels import _MMA_CU

    (rep,) = nvrtc_reports(_MMA_CU, "matmul_mma_sync",
                           {"BF16": 1, "STAGES": stages, "BK": bk, "BN": bn, "MINB": minb,
                            "PIPE": pipe, "EVEN": even},
                           ("-arch=sm_90a",))
    # MINB 2 of 128-thread blocks: 65536 registers / 256 threads → at most 255 (the ISA's cap)
    assert rep["arch"] == "sm_90a" and rep["spill_bytes"] == 0 and rep["registers"] <= 255, rep


@pytest.mark.parametrize("wgs,stages,bf16,even", [(2, 4, 1, 1), (2, 4, 0, 0), (2, 3, 1, 1), (3, 4, 1, 1),
                                                  (3, 3, 0, 0)])
def test_cuda_wgmma_source_compiles_for_sm90a(wgs, stages, bf16, even):
    """matmul_wgmma.cu builds for sm_90a with its 128 accumulators per thread in registers (no
    spills; 3 warpgroups leave 168 registers per thread), and ptxas keeps its wgmmas asynchronous
    (no serialisation warning)."""
    from ops.matmul.kernels import _WGMMA_CU

    (rep,) = nvrtc_reports(_WGMMA_CU, "matmul_wgmma",
                           {"BF16": bf16, "WGS": wgs, "STAGES": stages, "EVEN": even},
                           ("-arch=sm_90a",))
    assert rep["arch"] == "sm_90a" and rep["spill_bytes"] == 0 and rep["registers"] <= 255, rep
    assert "serializ" not in rep["log"], rep["log"]  # ptxas: wgmma serialised (a slow fallback)


@pytest.mark.parametrize("entry", ["matmul_wgmma_ws", "matmul_wgmma_tma"])
def test_cuda_wgmma_ws_compiles_for_sm90a(entry):
    """The warp-specialised forms (matmul_wgmma_ws with cp.async, probes; matmul_wgmma_tma with TMA,
    the wgmma_tma variant):
    build for sm_90a within the launch's 168 registers (a few bytes of spill in the 40-register
    cp.async producer at most), their wgmmas asynchronous."""
    from ops.matmul.kernels import _WGMMA_CU

    for bf16 in (1, 0):
        (rep,) = nvrtc_reports(_WGMMA_CU, entry,
                               {"BF16": bf16, "WGS": 2, "STAGES": 4}, ("-arch=sm_90a",))
        assert rep["registers"] <= 168 and rep["spill_bytes"] <= 32, rep
        assert "serializ" not in rep["log"], rep["log"]


def test_mma_shape_follows_the_problem_and_the_device():
    """mma_sync takes 128×256 tiles only where they make enough waves and fit the shared memory;
    else 128×128 (96 KiB), else the 48 KiB ring every sm_80+ part holds."""
    from ops.matmul.kernels import _MMA_SHAPE, _MMA_SHAPE_BIG, _MMA_SMALL, _mma_smem, mma_shape

    h200 = (132, 227 * 1024)
    assert mma_shape(8192, 8192, *h200) == _MMA_SHAPE_BIG
    assert mma_shape(4097, 4097, *h200) == _MMA_SHAPE  # 561 tiles: about four waves
    assert mma_shape(1024, 1024, *h200) == _MMA_SHAPE
    assert mma_shape(8192, 8192, 132, 99 * 1024) == _MMA_SHAPE  # sm_86/sm_89: 99 KiB per block
    assert mma_shape(8192, 8192, 132, 48 * 1024) == _MMA_SMALL
    assert _mma_smem(*_MMA_SMALL[:3]) <= 48 * 1024


def _persistent_whole_c() -> dict:
    from tests.spawn import open_backend

    be, skip = open_backend("triton")
    if skip:
        return skip
    from ops.matmul import kernels as mk
    from ops.matmul.spec import SPEC
    from suite.check import checked_launch

    fails = []
    for case in SPEC.test_cases[:4]:
        x = SPEC.inputs(case)
        ins = {n: be.upload(x[n]) for n in ("A", "B")}
        outs = {"C": be.empty((case["m"], case["n"]), x["A"].dtype)}
        res = checked_launch(be, SPEC, case, mk.triton_persistent(be, case, subtile=False), ins, outs, x,
                             SPEC.reference(case, x), SPEC.tolerance(case))
        if not res.ok:
            fails.append(f"{case.name}: {res.message}")
    return {"fails": fails}


def test_triton_persistent_whole_c_is_right():
    """matmul_persistent's probe form storing C as one tile (the registered form stores it in
    two halves) in Triton's interpreter, poisoned output, the spec's first test cases."""
    from tests.spawn import check_in_process

    check_in_process(_persistent_whole_c)
