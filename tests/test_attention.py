"""attention: the float64 reference is the textbook formula; bytes and flops as the issue says; the
sampled bench check accepts honest fp32 / FA2-style (P rounded to bf16) results and rejects a
causal mask off by one, a skipped K/V tile and an unwritten row at a bench-like shape; planted torch
kernels (no max subtraction, mask off by one, skipped tile) fail through the harness at test
size; the WGSL flash tiles the H200 picks run correctly on lavapipe; the Triton ping-pong form
(a probe) passes every test case in the interpreter; the Triton kernels compile for sm_90 with
tensor-core instructions and no spills and the CUDA mma.sync kernel compiles without spills. (Every
registered variant on every CPU backend is checked on the test cases by tests/test_kernels.py.)"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from ops.attention import spec as att
from ops.attention.spec import SPEC
from references.attention import attention
from references.numerics import decode, encode
from suite.spec import Case
from tests.spawn import check_in_process, nvrtc_reports, triton_missing
from tests.wrong import registered


def _textbook(q, k, v, is_causal):
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    out = np.empty_like(q)
    for b, h in np.ndindex(q.shape[:2]):
        for i in range(q.shape[2]):
            n = i + 1 if is_causal else q.shape[2]
            s = k[b, h, :n] @ q[b, h, i] / math.sqrt(q.shape[3])
            w = np.exp(s - s.max())
            out[b, h, i] = w @ v[b, h, :n] / w.sum()
    return out


@pytest.mark.parametrize("name", ["b2h3s7d64,causal,fp32", "b1h2s77d64,fp32", "b1h1s77d64,causal,big,fp32"])
def test_reference_is_the_textbook_formula(name):
    c = SPEC.case(name)
    x = SPEC.inputs(c)
    q, k, v = (decode(x[n], c.dtype) for n in "QKV")
    want = _textbook(q, k, v, att.causal(c))
    assert np.allclose(attention(q, k, v, att.causal(c), 1 / math.sqrt(c["d"])), want, rtol=1e-12, atol=1e-14)
    r = SPEC.reference(c, x)
    assert np.allclose(r["O"].reshape(want.shape), want, rtol=1e-12, atol=1e-14)
    if att.causal(c):
        assert np.array_equal(want[:, :, 0], v[:, :, 0])  # row 0 sees key 0 alone


def test_big_case_overflows_without_max_subtraction():
    c = SPEC.case("b1h1s77d64,causal,big,fp32")
    x = SPEC.inputs(c)
    q, k = decode(x["Q"], c.dtype), decode(x["K"], c.dtype)
    s = (q[0, 0] @ k[0, 0].T) / 8.0
    with np.errstate(over="ignore"):
        assert not np.isfinite(np.exp(s.astype(np.float32))).all()


def test_bytes_and_flops():
    c = SPEC.case("b4h32s8192d128,causal,bf16")
    n = 4 * 32 * 8192 * 128
    assert SPEC.bytes_moved(c) == 4 * n * 2
    assert SPEC.flops(c) == 4 * n * 8192 // 2
    c = SPEC.case("b1h16s4096d64,fp32")
    assert SPEC.bytes_moved(c) == 4 * 16 * 4096 * 64 * 4 and SPEC.flops(c) == 4 * 16 * 4096**2 * 64


def test_sample_covers_first_last_middle_windows_and_every_head():
    c = SPEC.case("b4h32s8192d128,causal,bf16")
    sel = att.sample(c)
    heads = {(int(b), int(h)) for b, h, _ in sel}
    assert heads == {(b, h) for b in range(4) for h in range(32)}
    for bh in ((0, 0), (3, 31)):
        rows = set(sel[(sel[:, 0] == bh[0]) & (sel[:, 1] == bh[1]), 2].tolist())
        assert set(range(128)) <= rows and set(range(8192 - 128, 8192)) <= rows
        assert set(range(4096 - 64, 4096 + 64)) <= rows


# -- the sampled check at a bench-like shape (CPU-cheap: wrong outputs made at the sampled rows) --

BENCH = Case("b2h4s2048d64,causal,bf16", {"b": 2, "h": 4, "s": 2048, "d": 64, "causal": 1}, "bf16", seed=77)
BENCH32 = Case("b1h4s2048d64,fp32", {"b": 1, "h": 4, "s": 2048, "d": 64, "causal": 0}, "fp32", seed=78)


def _rows32(q, k, v, idx, is_causal, *, p16: str | None = None, shift: int = 0, skip=None, tile: int = 0):
    """fp32 attention of rows ``idx`` as a kernel computes it: scores, max, exp and sums in fp32;
    ``p16``: P rounded to that type before P·V (FA2); ``tile``: online softmax over key tiles of
    that size (rescaled accumulator); the bugs: mask j ≤ i + shift, keys ``skip`` dropped."""
    q, k, v = (np.asarray(a, np.float32) for a in (q[idx], k, v))
    s = (q @ k.T) * np.float32(1 / math.sqrt(q.shape[1]))
    j = np.arange(k.shape[0])[None, :]
    drop = (j > idx[:, None] + shift) if is_causal else np.zeros(s.shape, bool)
    if skip is not None:
        drop |= (j >= skip[0]) & (j < skip[1])
    s[drop] = -np.inf
    n = k.shape[0]
    bounds = [(t, min(t + tile, n)) for t in range(0, n, tile)] if tile else [(0, n)]
    m = np.full((len(idx), 1), -np.float32(3e38), np.float32)
    acc = np.zeros((len(idx), v.shape[1]), np.float32)
    lsum = np.zeros((len(idx), 1), np.float32)
    for t0, t1 in bounds:
        mn = np.maximum(m, s[:, t0:t1].max(axis=1, keepdims=True))
        alpha = np.exp(m - mn).astype(np.float32)
        p = np.exp(s[:, t0:t1] - mn).astype(np.float32)
        lsum = lsum * alpha + p.sum(axis=1, keepdims=True, dtype=np.float32)
        pp = decode(encode(p, p16), p16).astype(np.float32) if p16 else p
        acc = acc * alpha + pp @ v[t0:t1]
        m = mn
    return acc / lsum


@functools.cache
def _data(name: str):
    case = {c.name: c for c in (BENCH, BENCH32)}[name]
    x = SPEC.inputs(case)
    return x, SPEC.reference(case, x)


def _bench_check(case, **bug):
    """verify() of an output whose sampled rows are what ``_rows32`` computes with ``bug``; the
    other rows hold finite stand-ins (the sampled check reads only the sample and finiteness)."""
    x, r = _data(case.name)
    q, k, v = (decode(x[n], case.dtype) for n in "QKV")
    out = np.zeros((case["b"], case["h"], case["s"], case["d"]), np.float32)
    sel = r["sel"]
    for b, h in {(int(b), int(h)) for b, h, _ in sel}:
        rows = sel[(sel[:, 0] == b) & (sel[:, 1] == h), 2]
        out[b, h, rows] = _rows32(q[b, h], k[b, h], v[b, h], rows, att.causal(case), **bug)
    got = decode(encode(out, case.dtype), case.dtype)
    assert len(sel) < case["b"] * case["h"] * case["s"]  # the sampled path
    return att.verify(case, x, {"O": got}, r, SPEC.tolerance(case)), got, x, r


@pytest.mark.parametrize("bug", [{"p16": "bf16"}, {"p16": "bf16", "tile": 64}, {}])
def test_bench_check_accepts_fa2_style_bf16(bug):
    res = _bench_check(BENCH, **bug)[0]
    assert res.ok, res.message


def test_bench_check_accepts_online_fp32():
    res = _bench_check(BENCH32, tile=64)[0]
    assert res.ok, res.message


@pytest.mark.parametrize("case, bug", [(BENCH, {"shift": 1, "p16": "bf16"}), (BENCH, {"shift": -1}),
                                       (BENCH, {"skip": (64, 128), "p16": "bf16"}),
                                       (BENCH32, {"skip": (1984, 2048), "tile": 64})])
def test_bench_check_rejects(case, bug):
    """A causal mask off by one either way (j ≤ i + 1; j ≤ i − 1, whose row 0 is 0/0) and a skipped
    64-key tile (the second of a causal bf16 case; the last of a non-causal fp32 one), each in an
    otherwise FA2-style kernel, fail the sampled check."""
    with np.errstate(invalid="ignore", divide="ignore"):
        res = _bench_check(case, **bug)[0]
    assert not res.ok, res.message


def test_bench_check_rejects_unwritten_row_outside_the_sample():
    res, got, x, r = _bench_check(BENCH, p16="bf16")
    sel = r["sel"]
    seen = set(sel[(sel[:, 0] == 1) & (sel[:, 1] == 2), 2].tolist())
    missing = next(i for i in range(BENCH["s"]) if i not in seen)
    got = got.copy()
    got[1, 2, missing] = np.nan  # what a poisoned, never-written row reads as
    res = att.verify(BENCH, x, {"O": got}, r, SPEC.tolerance(BENCH))
    assert not res.ok and "not finite" in res.message


# -- planted kernels through the harness ----------------------------------------------------------

EXTRA = {"SOLBENCH_EXTRA_KERNELS": "tests.wrong.attention_wrong"}


@pytest.fixture(scope="module")
def planted_rows():
    from suite.runner import execute, plan
    from suite.worker import Pool

    with registered("tests.wrong.attention_wrong"):
        pool = Pool(env=EXTRA)
        try:
            p = plan(pool, size="test", check_only=True, ops=["attention"], backends=["torch"],
                     variants=["control_fp32", "wrong_mask_off_by_one", "wrong_no_max", "wrong_skip_tile"],
                     device="all")
            rows = execute(pool, p.items, timeout=120)
        finally:
            pool.close()
    return {(r["variant"], r["case"]): r["status"] for r in rows}


@pytest.mark.parametrize("variant, must_fail", [
    ("wrong_mask_off_by_one", lambda c: att.causal(c) and c["s"] > 1),
    ("wrong_no_max", lambda c: bool(c.dims.get("big"))),
    ("wrong_skip_tile", lambda c: c["s"] > 64),
    ("control_fp32", lambda c: False)])
def test_planted_kernels_rejected(planted_rows, variant, must_fail):
    got = {case: st for (v, case), st in planted_rows.items() if v == variant}
    assert set(got) == {c.name for c in SPEC.test_cases}, got
    want = {c.name: "failed" if must_fail(c) else "ok" for c in SPEC.test_cases}
    assert any(s == "failed" for s in want.values()) or variant == "control_fp32"
    assert got == want


# -- forms the CPU backends' own limits or registrations never pick ------------------------------

def _checked_forms(backend: str, forms) -> dict:
    """Each (case, factory) of ``forms`` launched on ``backend`` in this process and checked against
    the reference (the harness's check: poisoned output, NaN never passes); the failures."""
    from suite.check import checked_launch
    from tests.spawn import open_backend

    be, skip = open_backend(backend)
    if skip:
        return skip
    fails = []
    for case, label, factory in forms:
        x = SPEC.inputs(case)
        ins = {n: be.upload(x[n]) for n in ("Q", "K", "V")}
        outs = {"O": be.empty(x["Q"].shape, x["Q"].dtype)}
        res = checked_launch(be, SPEC, case, factory(be, case), ins, outs, x, SPEC.reference(case, x),
                             SPEC.tolerance(case))
        if not res.ok:
            fails.append(f"{case.name} {label}: {res.message[:300]}")
    return {"fails": fails}


def _webgpu_tiles_child():
    """The H200's WGSL flash tiles (64×32×4×2 at D = 64, 32×32×2×2 at D = 128; lavapipe's own
    32 KiB limit picks smaller ones, which tests/test_kernels.py covers) run on lavapipe with
    explicit tiles (wgpu does not hold the shader to the reported workgroup-storage limit), both
    masks, fp32 and bf16, S = 77 (a ragged last tile) and 130 (full tiles before the diagonal)."""
    from ops.attention import kernels as ak

    return _checked_forms("webgpu", [
        (att._case(1, 2, s, d, is_causal, dt, 9100 + s), str(tiles),
         lambda be, c, t=tiles: ak.webgpu_flash(be, c, t))
        for d, tiles in ((64, (64, 32, 4, 2)), (128, (32, 32, 2, 2)))
        for s, is_causal, dt in ((77, False, "fp32"), (130, True, "fp32"), (77, True, "bf16"),
                                 (130, False, "bf16"))])


def test_webgpu_flash_h200_tiles_on_lavapipe():
    check_in_process(_webgpu_tiles_child)


def _triton_pingpong_child():
    """attention_flash with HALVES 2 (two query halves per program, steps interleaved; a probe form)
    on every test case in the interpreter: S = 1 and 7 (half b, or both halves, past the end), 77,
    128, 130 (half b partly masked), causal (half a's diagonal masked for both, then half b's alone),
    ±1e4 scores."""
    from ops.attention import kernels as ak

    def two_halves(be, case):
        return ak.triton_flash(be, case, [(128, 64, 8, 2, 2)])

    return _checked_forms("triton", [(case, "HALVES 2", two_halves) for case in att.TEST])


def test_triton_flash_pingpong_form():
    check_in_process(_triton_pingpong_child)


def _triton_split_tail_child():
    """attention_flash's split tail (the last partial wave's rows split over the keys as well, then
    merged) in the interpreter, with a wave size that makes it split: every non-causal test case
    of more than two jobs, ±1e4 scores (chunks whose maxima differ by far more than fp32's range
    of exp2) and D 128, one and two halves; each form must have taken the split path."""
    from ops.attention import kernels as ak

    big = att._case(2, 3, 130, 64, False, "fp32", 9300, big=True)
    cases = [c for c in att.TEST if not att.causal(c)] + [big, att._case(1, 3, 200, 128, False, "bf16", 9301)]
    forms, fails = [], []
    for case in cases:
        for halves in (1, 2):
            jobs = case["b"] * case["h"] * ak.cdiv(case["s"], halves * ak._TRITON_INTERPRET[0])
            waves = [w for w in range(2, jobs) if 0 < jobs % w <= w // 2]
            if waves:  # the largest such wave (its tail the fewest jobs)
                w, t = waves[-1], (128, 64, 8, 2, halves)
                forms.append((case, f"HALVES {halves} wave {w}",
                              lambda be, c, t=t, w=w: _split(ak, be, c, t, w, fails)))
    out = _checked_forms("triton", forms)
    out.setdefault("fails", []).extend(fails)
    return {**out, "forms": len(forms)}


def _split(ak, be, case, cfg, wave, fails):
    run = ak.triton_flash(be, case, [cfg], wave=wave)
    if "tail" not in run.info:
        fails.append(f"{case.name} wave {wave}: no split")
    return run


def _resident_child() -> dict:
    """resident_programs (the split tail's wave) on an H100 / H200 SM (65536 registers, 233472
    bytes of shared memory, 2048 threads) for the D128 and D64 flash winners' sm_90 compiles."""
    from backends.triton import resident_programs

    sm = (65536, 233472, 2048)
    want = {(8, 255, 131072): 1,  # D128 two halves: the register file, one program
            (4, 236, 65536): 2,  # D64 128×64: registers (7680 per warp) allow 2, memory 3
            (4, 64, 16384): 8,  # small: registers allow 8, memory 13, threads 16
            (16, 32, 0): 4,  # threads: 2048 / 512
            (2, 170, 0): 5}  # 5440 registers a warp, allocated as 5632: 5 (6 unrounded)
    fails = [f"{k}: {resident_programs(*k, *sm)} programs, want {v}" for k, v in want.items()
             if resident_programs(*k, *sm) != v]
    return {"fails": fails}


def test_resident_programs():
    check_in_process(_resident_child)


def test_triton_flash_split_tail():
    assert check_in_process(_triton_split_tail_child)["forms"] == 7


# -- compiled for Hopper without a GPU ----------------------------------------------------------

def _hopper_jobs() -> dict:
    if (skip := triton_missing()):
        return skip
    from backends.triton import compile_many_for_hopper
    from ops.attention.attention_triton import attention_flash, attention_flash_merge, attention_flash_part
    jobs = []
    for d, bm, bn, w, st, c, halves in ((128, 128, 64, 8, 3, True, 1), (64, 128, 64, 4, 3, False, 1),
                                        (128, 128, 64, 8, 2, False, 2),  # 255 registers
                                        (128, 128, 64, 8, 2, True, 2)):
        sig = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "Out": "*bf16", "S": "i32", "qk_scale": "fp32",
               "JOB0": "i32"}
        cx = {"HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": c, "PRECISION": "ieee", "UPCAST": False,
              "HALVES": halves}
        jobs.append((attention_flash, sig, cx, {"num_warps": w, "num_stages": st,
                                   "divisible_by_16": ("Q", "K", "V", "Out")}))
    # the split tail's two kernels at the D128 winner's tile (the merge has no dot)
    tail = {"HEAD_DIM": 128, "BLOCK_M": 128, "ROWS": 256, "UPCAST": False}
    opts = {"num_warps": 8, "num_stages": 3}
    t = {"Q": "*bf16", "K": "*bf16", "V": "*bf16", "Part": "*fp32", "ML": "*fp32", "Out": "*bf16", "S": "i32",
         "qk_scale": "fp32", "JOB0": "i32", "CH": "i32", "C": "i32", "TAIL_ROWS": "i32"}
    part = ("Q", "K", "V", "Part", "ML", "S", "qk_scale", "JOB0", "CH", "TAIL_ROWS")
    merge = ("Part", "ML", "Out", "S", "JOB0", "C", "TAIL_ROWS")
    jobs.append((attention_flash_part, {n: t[n] for n in part}, {**tail, "BLOCK_N": 64, "PRECISION": "ieee"},
                 {**opts, "divisible_by_16": part[:5]}))
    jobs.append((attention_flash_merge, {n: t[n] for n in merge}, tail,
                 {**opts, "divisible_by_16": merge[:3]}))
    fails = []
    for (fn, *_), o in zip(jobs, compile_many_for_hopper(jobs), strict=True):
        if "error" in o:
            fails.append(o["error"][:2000])
        elif ("mma" not in o["ptx"] and fn is not attention_flash_merge) or o["spill_bytes"] != 0:
            # (spill_bytes None: not read, no cuobjdump)
            fails.append(f"{o['name']}: no tensor-core instruction or spills ({o['spill_bytes']})")
    return {"fails": fails}


def test_triton_flash_compiles_for_hopper():
    check_in_process(_hopper_jobs)


@pytest.mark.parametrize("hd", [64, 128])
def test_cuda_mma_flash_compiles_without_spills(hd):
    from ops.attention.kernels import _CU

    reps = nvrtc_reports(_CU, "attention_flash_mma",
                         {"DT": 2, "HD": hd, "CAUSAL": 1, "MMA": 1}, archs=("sm_90",))
    for rep in reps:
        assert rep["spill_bytes"] == 0 and rep["registers"] <= 255, rep


def _fused_rows_per_block(limits: tuple[int, ...]) -> dict:
    from tests.spawn import open_backend

    be, skip = open_backend("cuda")  # compile-only here: NVRTC builds the kernel
    if skip:
        return skip
    from ops.attention import kernels as ak

    case = SPEC.case("b4h32s8192d128,bf16")
    rows = {}
    for limit in limits:
        be.smem_per_block = lambda limit=limit: limit  # what the device would report
        rows[limit] = ak.cuda_fused_rows(be, case).info["rows"]
    return {"fails": [], "rows": rows}


def test_cuda_fused_rows_fit_the_device_shared_memory():
    """fused_rows keeps ROWS·S scores in dynamic shared memory: on a part that allows less per block
    than an H200 (A100 163 KiB, Ada 99 KiB, 48 KiB without opt-in) it takes fewer rows per block,
    not a launch refused for 133 KiB."""
    out = check_in_process(_fused_rows_per_block, ((227 << 10, 163 << 10, 99 << 10, 48 << 10),))
    assert out["rows"] == {227 << 10: 4, 163 << 10: 4, 99 << 10: 2, 48 << 10: 1}, out["rows"]
