"""``solbench inspect`` on a machine without a GPU: every cuda and triton kernel compiles for
sm_90 and its report parses (registers, spills, shared memory, the intended instructions)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from suite.registry import SPECS, discover

ROOT = Path(__file__).resolve().parent.parent


def _ops() -> list[str]:
    discover()
    return sorted(SPECS)


@pytest.mark.parametrize("op", _ops())
def test_cuda_kernels_compile_for_sm90_and_report(op):
    from suite.inspection import inspect_kernels

    recs = inspect_kernels(op, "cuda", arch="sm_90")
    compiled = [r for r in recs if "error" not in r]
    errors = [r for r in recs if "error" in r and "needs CuPy" not in r["error"]]
    assert not errors, errors
    assert compiled, recs
    for r in compiled:
        assert r["arch"].startswith("sm_90") and r["registers"] and r["registers"] > 0, r["entry"]
        assert r["spill_bytes"] is not None and r["smem_bytes"] is not None
        assert re.search(rf"\.entry\s+{re.escape(r['entry'])}\s*\(", r["stages"]["ptx"]), r["entry"]
    if op == "vector_add":
        vec = {r["variant"]: r["markers"]["vec_load"] for r in compiled}
        assert vec["vec4"] and not vec["naive"], vec  # the vec4 variant really loads 16 bytes
    if op == "reduction":
        assert any(r["markers"]["shfl"] for r in compiled if r["variant"] == "warp_shuffle")


@pytest.mark.parametrize("op", _ops())
def test_cuda_kernels_build_for_turing_or_say_why(op):
    """On an sm_75 GPU (Turing: T4) a CUDA kernel either builds or its factory refuses it with
    the reason (no mma.sync m16n8k16 or cp.async before sm_80), instead of a ptxas error — and a
    module with one such kernel still builds its others (gemv_lowbit.cu)."""
    from suite.inspection import inspect_kernels

    recs = inspect_kernels(op, "cuda", arch="sm_75")
    bad = [(r["variant"], r["error"][:300]) for r in recs if "error" in r
           and not re.match(r"Unsupported: .*needs sm_\d+ or newer; the target is sm_75", r["error"])
           and "(this device only compiles)" not in r["error"]]
    assert recs and not bad, bad
    assert all(r["arch"] in ("sm_75", "sm_90", "sm_90a") for r in recs if "error" not in r)


@pytest.mark.parametrize("op", ["vector_add", "reduction", "scan", "grayscale"])
def test_triton_kernels_compile_for_sm90_and_report(op):
    from suite.inspection import inspect_kernels

    recs = inspect_kernels(op, "triton", arch="sm_90")
    assert recs and not [r for r in recs if "error" in r], recs
    for r in recs:
        assert r["arch"] == "sm_90" and r["num_warps"] >= 1 and r["smem_bytes"] is not None
        assert {"ttir", "ttgir", "llir", "ptx"} <= set(r["stages"]), set(r["stages"])
        if r["registers"] is not None:  # cuobjdump present (Triton's wheel ships it)
            assert r["registers"] > 0 and r["spill_bytes"] is not None
            assert "sass" in r["stages"]


def test_opencl_and_webgpu_show_what_was_built():
    from suite.inspection import inspect_kernels

    cl = inspect_kernels("vector_add", "opencl", ["naive"])
    assert cl and cl[0]["stages"]["binary"] and "log" in cl[0]["stages"]
    wg = inspect_kernels("vector_add", "webgpu", ["vec4"])
    assert wg and "{{" not in wg[0]["stages"]["wgsl"] and "fn vector_add_vec4" in wg[0]["stages"]["wgsl"]


def test_cli_inspect_summary_and_stage():
    r = subprocess.run([sys.executable, "-m", "suite.cli", "inspect", "vector_add", "--backend", "cuda",
                        "--summary"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "vector_add_vec4" in r.stdout and "regs" in r.stdout
    r = subprocess.run([sys.executable, "-m", "suite.cli", "inspect", "vector_add", "--backend", "cuda",
                        "--variant", "naive", "--stage", "sass"], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and ("FADD" in r.stdout or "cuobjdump" in r.stdout), r.stdout[-2000:]
    r = subprocess.run([sys.executable, "-m", "suite.cli", "inspect", "vector_add", "--backend", "cuda",
                        "--stage", "ttir"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "valid: ptx, sass, loops, log" in r.stdout + r.stderr


#: cuobjdump -sass's form: an outer loop 0x40-0xc0 around an inner one 0x60-0xa0, a forward
#: branch and the trap's branch to itself (neither a loop)
_SASS = """
        Function : k
        /*0000*/                   MOV R1, c[0x0][0x28] ;           /* 0x0 */
        /*0010*/              @!P0 BRA 0x100 ;                     /* 0x0 */
        /*0020*/                   S2R R0, SR_TID.X ;              /* 0x0 */
        /*0030*/                   NOP ;                           /* 0x0 */
        /*0040*/                   LDG.E.128 R4, desc[UR4][R2.64] ;  /* 0x0 */
        /*0050*/                   IADD3 R2, R2, 0x10, RZ ;        /* 0x0 */
        /*0060*/                   IDP.4A.U8.U8 R8, R4, R5, R8 ;    /* 0x0 */
        /*0070*/                   IDP.4A.S8.S8 R9, R6, R7, R9 ;    /* 0x0 */
        /*0080*/                   ISETP.GE.AND P1, PT, R2, R3, PT ;  /* 0x0 */
        /*0090*/                   NOP ;                           /* 0x0 */
        /*00a0*/              @!P1 BRA 0x60 ;                      /* 0x0 */
        /*00b0*/                   ISETP.GE.AND P2, PT, R2, R3, PT ;  /* 0x0 */
        /*00c0*/              @!P2 BRA 0x40 ;                      /* 0x0 */
        /*00d0*/                   EXIT ;                          /* 0x0 */
        /*00e0*/                   BRA 0xe0;                       /* 0x0 */
"""


def test_sass_loops_reads_each_loop_body():
    from suite.inspection import loops_text, main_loop_instructions, sass_loops

    loops = sass_loops(_SASS)
    assert [(lp["start"], lp["end"], lp["instructions"], lp["own"], lp["innermost"]) for lp in loops] == [
        (0x60, 0xA0, 5, 5, True), (0x40, 0xC0, 9, 4, False)]
    assert loops[0]["ops"] == {"IDP": 2, "BRA": 1, "ISETP": 1, "NOP": 1}
    assert loops[1]["ops"]["LDG"] == 1 and loops[1]["ops"]["ISETP"] == 2
    assert main_loop_instructions(_SASS) == 5
    assert main_loop_instructions(_SASS.replace("@!P1 BRA 0x60", "@!P1 BRA 0xb0")) == 9
    # a spin-wait (0x90-0xa0) inside the main loop: the main loop counts, less the wait
    spin = _SASS.replace("@!P1 BRA 0x60", "@!P1 BRA 0x90")
    assert main_loop_instructions(spin) == 7
    # a branch back over an EXIT is not a loop of the kernel's; a warp's early exit in one is
    assert main_loop_instructions(spin.replace("ISETP.GE.AND P2", "EXIT")) == 2
    assert main_loop_instructions(spin.replace("ISETP.GE.AND P2", "@P2 EXIT")) == 7
    assert main_loop_instructions(_SASS.replace("IDP.4A.S8.S8", "EXIT")) is None
    assert main_loop_instructions("        /*0000*/  EXIT ;") is None
    assert "0x0060-0x00a0: 5 instructions, innermost: IDP 2" in loops_text(_SASS)
    assert "0x0040-0x00c0: 9 instructions, outer (4 outside its inner loops): " in loops_text(_SASS)
    assert loops_text("(no cuobjdump here)") == "(no SASS)"
    # two functions: addresses restart in each, and each one's loops are its own
    two = sass_loops(_SASS + _SASS.replace("Function : k", "Function : k2").replace("@!P2 BRA 0x40", "NOP"))
    assert [(lp["start"], lp["end"], lp["instructions"]) for lp in two] == [
        (0x60, 0xA0, 5), (0x40, 0xC0, 9), (0x60, 0xA0, 5)]


def test_triton_is_inspected_as_compiled_for_the_gpu_not_as_interpreted():
    """On a machine without a GPU the Triton factories run in the interpreter, whose paths differ
    (fp32 upcasts before tl.dot, dp4a in plain arithmetic, one interpreter block shape): inspect
    shows what a GPU host compiles instead — every autotune config, tensor-core MMAs for bf16
    attention, PTX dp4a in the w4a16 GEMV, TMA descriptors with the pre-hook's block shapes."""
    from ops.attention.kernels import _TRITON_CONFIGS
    from suite.inspection import inspect_kernels

    recs = inspect_kernels("attention", "triton", ["flash"], "b4h32s8192d128,bf16")
    assert len(recs) == len(_TRITON_CONFIGS[(128, True)]) and not [r for r in recs if "error" in r], recs
    assert {r["constexprs"]["UPCAST"] for r in recs} == {False}
    assert all(r["markers"]["mma"] and r["note"].startswith("BLOCK_M=") for r in recs)
    (planes, *dp4a) = inspect_kernels("gemv_lowbit", "triton", ["fused_dp4a"], "w4a16,n16384,k16384,b1")
    assert planes["entry"] == "gemv_x_planes" and dp4a
    for r in dp4a:
        assert r["constexprs"]["ASM"] is True and "dp4a.u32.u32" in r["stages"]["ptx"], r["note"]
    (pers,) = inspect_kernels("matmul", "triton", ["persistent"], "128³,bf16")
    assert "error" not in pers and pers["markers"]["mma"], pers


def test_triton_is_inspected_in_the_gpu_hosts_shape_with_its_register_cap(monkeypatch):
    """Kernels sized by the device's SM count are inspected as a 132-SM host runs them (softmax
    split_row: 8 parts of 16384 values at 4096x131072, not the 2 parts of this CPU's 2 cores: the
    76-register kernel, not a 128-register one — session 39), or as ``sms`` says; a launch's
    ``maxnreg`` reaches the compile."""
    import ops.softmax.kernels as sk
    from suite.inspection import inspect_kernels

    def split(sms=None):
        (r,) = inspect_kernels("softmax", "triton", ["split_row"], "4096x131072", sms=sms)
        assert "error" not in r, r
        return r

    r = split()
    assert (r["constexprs"]["G"], r["constexprs"]["BLOCK"]) == (8, 16384)
    assert (split(sms=4)["constexprs"]["BLOCK"]) == 32768
    if r["registers"] is None:
        pytest.skip("no cuobjdump here: registers unknown")
    d = sk.triton_split_row.__defaults__
    monkeypatch.setattr(sk.triton_split_row, "__defaults__", d[:-1] + (r["registers"] - 8,))  # regs
    assert split()["registers"] <= r["registers"] - 8


def test_triton_configs_fit_a_part_with_less_shared_memory(monkeypatch):
    """The Triton autotune lists were tuned on an H200 (227 KiB of shared memory per program): on a
    part that allows 99 KiB (Ada) every config kept compiles within it — the untuned test shapes'
    single config too (the first H200 config, 144 KiB, could not launch there) — and no kernel is
    left without one (matmul bf16 falls back to a 48 KiB tile)."""
    from backends.triton import TritonBackend
    from suite.inspection import inspect_kernels

    monkeypatch.setattr(TritonBackend, "smem_per_block", lambda self: 99 << 10)  # as an RTX 4090 reports
    seen = []
    for op, variant, case in (("matmul", "grouped", "8192³,bf16"), ("matmul", "grouped", "128³,bf16"),
                              ("matmul", "persistent", "8192³,bf16"),
                              ("matmul", "grouped", "16x8192x8192,bf16"),
                              ("attention", "flash", "b4h32s8192d128,bf16"),
                              ("attention", "flash", "b1h16s4096d64,fp32")):
        recs = inspect_kernels(op, "triton", [variant], case)
        assert recs and not [r for r in recs if "error" in r], recs
        for r in recs:
            assert r["smem_bytes"] <= 99 << 10, (op, variant, case, r["note"], r["smem_bytes"])
        seen.append(len(recs))
    assert seen[1] == 1 and seen[4] == 1, seen  # 128³: untuned; D128 bf16: one H200 config fits


@pytest.mark.parametrize("op", _ops())
def test_triton_kernels_compile_for_sm90_at_every_test_case(op):
    """Every Triton launch of every test case, as a 132-SM GPU host's factory makes it, compiles
    for sm_90 (the interpreter the CPU tests run never takes the PTX-only branches: session 38's
    split_row prefetch broke at 13x7 and 5x1 and only the GPU's test cases saw it)."""
    from suite.inspection import triton_compile_failures

    n, fails = triton_compile_failures(op)
    assert not fails, "\n".join(fails)
    assert n > 0
