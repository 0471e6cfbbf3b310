"""Where does a kernel lose time? Times named configurations of one op on one backend (one case),
each checked against the float64 reference first (poisoned output; a wrong one is a FAILED row,
never timed; a label with UNCHECKED marks a diagnostic form that is wrong by design, such as a
kernel's memory path alone, timed without the check and marked so in its row), with the harness's
protocol (suite.timing.measure: cold, L2 flushed, median), and prints time, GB/s or TFLOP/s and
% of the measured ceiling of the device's peaks.json, beside the hot median (no flush) and a
host-timed batch of back-to-back launches (wall clock / count: a timer independent of the
backend's events).

    python scripts/probe.py softmax opencl --case 65536x1024 [--only TEXT] [--out DIR]

The configurations (``CONFIGS`` below) are the registered variants plus factory calls with
overridden defines or tiles. Compute-heavy ones on a GPU are soaked first like the harness's rows
(``suite.timing.soaked``). One backend per process. Writes
``probe-<op>-<backend>-<case>.json`` (atomically) under --out.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.registry import REGISTRY, discover, get_spec  # noqa: E402


def selected(label: str, only: str) -> bool:
    """``--only``: texts separated by ``|``, one of which the label contains (``text$``: ends with)."""
    return not only or any(label.endswith(t[:-1]) if t.endswith("$") else t in label for t in only.split("|"))


def registered(op: str, backend: str):
    """(variant label, factory) of every registered kernel of op/backend."""
    return [(k[2], e.factory) for k, e in sorted(REGISTRY.items()) if k[0] == op and k[1] == backend]


def configurations(op: str, backend: str):
    """(label, factory) of every configuration of op/backend: the registered variants, then
    ``CONFIGS``' extra ones."""
    return registered(op, backend) + CONFIGS.get((op, backend), list)()


def _softmax_opencl():
    import ops.softmax.kernels as sk

    modes = (("fused_row", "fused", "softmax_rows"), ("online", "stream", "softmax_rows"),
             ("three_pass", "stream", "softmax_three_pass"))
    out = []
    for name, mode, entry in modes:
        for exp2 in ("exp2", "native_exp2"):
            for sg in (0, 2):
                out.append((f"{name} EXP2={exp2} SUBGROUPS={sg}",
                            lambda be, c, mode=mode, entry=entry, exp2=exp2, sg=sg:
                            sk._opencl(be, c, mode, entry, EXP2=exp2, SUBGROUPS=sg)))
    return out


def _matmul_cuda():
    import ops.matmul.kernels as mk

    # mma_sync (BK, STAGES, BN, MINB) and register_blocked tiles (BM, BN, BK, TM, TN), with
    # (BM/TM)·(BN/TN) = 256 threads; the registered shapes (_MMA_SHAPE, _SIMT_RB_CUDA) are timed too
    mma = [(f"mma_sync BK={p[0]} STAGES={p[1]} BN={p[2]} MINB={p[3]} PIPE=0",  # one buffer of fragments
            lambda be, c, p=p: mk.cuda_mma_sync(be, c, p, pipe=False))
           for p in ((32, 3, 128, 2), (64, 3, 256, 1), (64, 2, 128, 2))] + [
        (f"mma_sync BK={p[0]} STAGES={p[1]} BN={p[2]} MINB={p[3]} EVEN=0",  # bounded copies
         lambda be, c, p=p: mk.cuda_mma_sync(be, c, p, even=False))
        for p in ((64, 3, 128, 2),)] + [
        (f"mma_sync BK={p[0]} STAGES={p[1]} BN={p[2]} MINB={p[3]}",
         lambda be, c, p=p: mk.cuda_mma_sync(be, c, p))
        for p in ((32, 4, 128, 2), (64, 3, 128, 2), (64, 3, 256, 1), (32, 4, 256, 1))]
    simt = [(f"register_blocked tiles={t}", lambda be, c, t=t: mk.cuda_register_blocked(be, c, t))
            for t in ((128, 128, 8, 8, 8), (256, 128, 8, 16, 8), (128, 256, 16, 8, 16))]
    # wgmma (warpgroups, stages): the registered shape is timed as "wgmma"
    wg = [(f"wgmma WGS={w} STAGES={st}", lambda be, c, sh=(w, st): mk.cuda_wgmma(be, c, sh))
          for w, st in ((3, 4), (2, 3))] + [
        ("wgmma bounded", lambda be, c: mk.cuda_wgmma(be, c, bounded=True)),
        ("wgmma ws", lambda be, c: mk.cuda_wgmma(be, c, ws=True)),
        ("wgmma tma", lambda be, c: mk.cuda_wgmma(be, c, tma=True))]
    return mma + simt + wg


def _matmul_triton():
    import ops.matmul.kernels as mk

    # the persistent kernel storing C whole (the registered form stores it in two halves, SUBTILE)
    return [("persistent whole C", lambda be, c: mk.triton_persistent(be, c, subtile=False))]


def _matmul_webgpu():
    import ops.matmul.kernels as mk

    return [(f"register_blocked tiles={t}", lambda be, c, t=t: mk._webgpu_simt(
             be, c, "matmul_register_blocked", 16, t, t[0], t[1]))
            for t in ((128, 128, 8, 8, 8), (128, 128, 16, 8, 8), (64, 64, 16, 4, 4), (128, 64, 16, 8, 4))]


def _softmax_webgpu():
    import ops.softmax.kernels as sk

    # registered split_row: one pass (bounded waits, fixup dispatch); the two-dispatch form beside it
    return [("split_row two_pass", lambda be, c: sk._webgpu(be, c, "split", one_pass=False))] + [
        (f"split_row tpb={t} vals={v}",
         lambda be, c, t=t, v=v: sk._webgpu(be, c, "split", tpb_split=t, vals=v))
        for t, v in ((256, 32), (1024, 16), (512, 16), (1024, 32))] + [
        (f"split_row spin={sp}", lambda be, c, sp=sp: sk._webgpu(be, c, "split", spin=sp))
        for sp in (1 << 20, 256)] + [
        ("split_row poll=load", lambda be, c: sk._webgpu(be, c, "split", poll="load"))]


def _softmax_triton():
    import ops.softmax.kernels as sk

    # registered split_row: TRITON_PART (16384 values per program), 16 warps, relaxed ticket,
    # TRITON_SPLIT_BACKOFF_NS between polls
    # session 28's softmax_split_tma (parts as TMA boxes: 59 registers at 16384 values on 16 warps,
    # so two programs per SM) at parts × warps × backoff
    return [(f"split_row backoff={b}", lambda be, c, b=b: sk.triton_split_row(be, c, backoff=b))
            for b in (0, 500, 2000)] + [
        # session 37: while a program waits for its siblings' partials, the part of the ticket
        # `ahead` × SM count after its own asked into L2 (softmax_split's AHEAD; registered:
        # TRITON_SPLIT_AHEAD, the "split_row" row; 0: the form before)
        (f"split_row ahead={a}", lambda be, c, a=a: sk.triton_split_row(be, c, ahead=a))
        for a in (0, 0.5, 2)] + [
        # session 39: a 64-register cap (maxnreg), so two 512-thread programs share an SM as CUDA's
        # split_row (64 registers as compiled) does. Triton 3.6 (the H200 host's) compiles the
        # registered kernel at 64 registers already; 3.9 at 76 (one program per SM), at 64 with the
        # cap and no spills (sm_90 compiles, 4096x131072) — for a host whose Triton is newer. AHEAD
        # in waves of the SM count as before (2: one wave of two programs per SM)
        (f"split_row regs=64 ahead={a}", lambda be, c, a=a: sk.triton_split_row(be, c, regs=64, ahead=a))
        for a in (0, 1, 2)] + [
        (f"split_row tma part={p} warps={w} backoff={b}",
         lambda be, c, p=p, w=w, b=b: sk.triton_split_row(be, c, part=p, warps=w, backoff=b, tma=True))
        for p, w, b in ((16384, 16, 1000), (16384, 16, 500), (16384, 16, 0), (16384, 8, 1000),
                        (8192, 16, 1000), (8192, 8, 1000), (32768, 16, 1000), (32768, 32, 1000))]


def _attention_webgpu():
    import ops.attention.kernels as ak

    # flash tiles (BM, BN, TM, TN) beside the registered first fit of _WGSL_FLASH_TILES (64×32×4×2
    # at D = 64 on the H200)
    return [(f"flash tiles={t}", lambda be, c, t=t: ak.webgpu_flash(be, c, t))
            for t in ((32, 32, 2, 2), (32, 32, 4, 2), (64, 32, 8, 2), (64, 32, 4, 4), (32, 64, 2, 4))]


def _cl_ptx_on_cuda(be, case, per_sm: int | None = None):
    """OpenCL fused_packed as NVIDIA's OpenCL compiler built it — the PTX scripts/cl_ptx.py dumped
    (a file named by $SOLBENCH_CL_PTX, from another process: one driver stack per process) — loaded
    by the CUDA driver and launched like CUDA's fused_packed at OpenCL's registered geometry (the two
    kernels take the same arguments). The file's other kernels and its trailing metadata section
    (OpenCL's, not PTX) are cut, and the two environment registers NVIDIA's OpenCL runtime fills are
    given their CUDA meaning: %envreg6 (get_num_groups(0)) → %nctaid.x, %envreg0 (the group offset)
    → 0. ``per_sm``: blocks per SM the grid is sized for (OpenCL's registered count by default)."""
    import tempfile

    import ops.gemv_lowbit.kernels as gk
    from backends.base import Unsupported

    path = os.environ.get("SOLBENCH_CL_PTX", "")
    if not path or not Path(path).exists():
        raise Unsupported("SOLBENCH_CL_PTX: name scripts/cl_ptx.py's gemv_lowbit_pk PTX of fused_packed")
    if be.device.mode == "compile":
        raise Unsupported("compile-only device: the PTX is loaded by the CUDA driver")
    n, k, _, _ = gk._dims(case)
    text = Path(path).read_bytes().replace(b"\0", b"").decode().split(".metadata_section")[0]
    head, entry = text.split(".entry", 1)[0], text[text.index(".entry gemv_lowbit_pk("):]  # the kernel alone
    text = (head + entry).replace("%envreg6", "%nctaid.x").replace("%envreg0", "0")
    if "%envreg" in text:
        raise Unsupported("the PTX reads an OpenCL environment register CUDA has no value for")
    # (kept: CuPy may load the module from the file lazily, at the first launch)
    with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
        f.write(text)
    fn = be.cp.RawModule(path=f.name).get_function("gemv_lowbit_pk")
    kw, spw = gk.PK_CL_KW, gk.PK_CL_SPW
    return gk._pk_run(be, fn, n, k, kw, spw, per_sm or gk.PK_CL_PER_SM,
                      lambda ins: gk.pack_groups(ins["qweight"], ins["scales"], n, k, kw, spw))


def _gemv_cuda():
    import ops.gemv_lowbit.kernels as gk

    shapes = [(kw, us, st) for kw in (1, 2, 4) for us, st in ((2, 3), (2, 4), (4, 3), (1, 4), (1, 6))]
    return [(f"tma KW={kw} STAGES={st} CH={ch}",
             lambda be, c, kw=kw, st=st, ch=ch: gk.cuda_tma(be, c, kw, st, ch))
            for kw, st, ch in ((8, 4, 2048), (16, 4, 2048), (8, 8, 1024))] + [  # w4a16 b1: gemv_lowbit_tma
        ("tma TMEMONLY UNCHECKED", lambda be, c: gk.cuda_tma(be, c, TMEMONLY=1))] + [  # its memory path alone
        (f"packed KW={kw} STAGES={st} SPW={sp}",
         lambda be, c, kw=kw, st=st, sp=sp: gk.cuda_packed(be, c, kw, st, sp))
        for kw, st, sp in ((8, 4, 4), (8, 5, 4), (16, 4, 2), (4, 4, 8), (8, 3, 4), (8, 2, 4), (8, 2, 8),
                           (16, 3, 2), (4, 3, 8),
                           # session 35: half-size chunks (SPW 2) with the same bytes in flight or
                           # more — the last chunk's compute (the drain) and the range split halve
                           (8, 4, 2), (8, 6, 2), (8, 8, 2))] + [  # fused_packed
        ("packed PMEMONLY UNCHECKED", lambda be, c: gk.cuda_packed(be, c, PMEMONLY=1)),
        ("packed PKDIV", lambda be, c: gk.cuda_packed(be, c, PKDIV=1))] + [  # the per-chunk division
        # session 37: the successor's last chunks asked into L2 after a block's last copy (PNEXT)
        (f"packed PNEXT={p}", lambda be, c, p=p: gk.cuda_packed(be, c, PNEXT=p)) for p in (2, 4, 8)] + [
        # session 35 (H100: 0.996-1.005 x, removed), again in session 38 for the H200 (consumers
        # busy 77 % there): the consumers on 8-bit integer mma
        ("packed PIMMA=1", lambda be, c: gk.cuda_packed(be, c, PIMMA=1)),
        ("packed PIMMA=1 STAGES=4", lambda be, c: gk.cuda_packed(be, c, stages=4, PIMMA=1))] + [
        (f"packed2 KW={kw} STAGES={st} SPW={sp} x2/SM",
         lambda be, c, kw=kw, st=st, sp=sp: gk.cuda_packed(be, c, kw, st, sp, per_sm=2))
        for kw, st, sp in ((8, 2, 4), (4, 2, 4), (4, 4, 4), (4, 3, 4), (8, 1, 8),
                           # session 43: OpenCL fused_packed's registered geometry (its 48 KiB of
                           # local memory: 5 stages of 8.25 KiB, two work-groups per SM) in CUDA
                           (8, 5, 1))] + [  # two blocks per SM
        # session 43: and with x read from global memory, as the OpenCL port reads it (PXG)
        ("packed2 KW=8 STAGES=5 SPW=1 x2/SM PXG",
         lambda be, c: gk.cuda_packed(be, c, 8, 5, 1, per_sm=2, PXG=1)),
        ("packed PXG", lambda be, c: gk.cuda_packed(be, c, PXG=1)),
        # session 44: OpenCL fused_packed's registered geometry, and NVIDIA OpenCL's own PTX of that
        # kernel launched through CUDA (the front end's code or the OpenCL runtime behind its gap?)
        ("packed2 KW=8 STAGES=2 SPW=2 x2/SM", lambda be, c: gk.cuda_packed(be, c, 8, 2, 2, per_sm=2)),
        ("OpenCL PTX fused_packed", _cl_ptx_on_cuda),
        ("OpenCL PTX x1/SM", lambda be, c: _cl_ptx_on_cuda(be, c, per_sm=1)),
        ("packed PMINB=0 x2/SM", lambda be, c: gk.cuda_packed(be, c, 8, 2, 4, per_sm=2, PMINB=0)),
        ("packed PMINB=0", lambda be, c: gk.cuda_packed(be, c, PMINB=0))] + [
        (f"fused_vec KW={kw} US={us} STAGES={st}",
             lambda be, c, kw=kw, us=us, st=st: gk._cuda_tc(be, c, KW=kw, US=us, STAGES=st))
            for kw, us, st in shapes] + [
        (f"fused_vec RT={rt}", lambda be, c, rt=rt: gk._cuda_tc(be, c, RT=rt)) for rt in (1, 2)] + [
        ("fused_vec MEMONLY UNCHECKED", lambda be, c: gk._cuda_tc(be, c, MEMONLY=1))] + [
        (f"fused_vec MEMONLY UNCHECKED {d}", lambda be, c, d=d: gk._cuda_tc(be, c, MEMONLY=1, **d))
        for d in ({"KW": 1}, {"KW": 4}, {"RT": 2}, {"RT": 2, "KW": 1}, {"US": 4}, {"STAGES": 4},
                  {"US": 1, "STAGES": 5})] + [  # the memory path of other ring layouts
        (f"fused_vec RT=2 {d}", lambda be, c, d=d: gk._cuda_tc(be, c, RT=2, **d))
        for d in ({"KW": 1}, {"KW": 2})] + [  # w8a16 at batch 1 on CUDA cores (gemv_lowbit_simt)
        (f"simt RPT={r} WARPS={w} PF={p}", lambda be, c, r=r, w=w, p=p: gk.cuda_simt(be, c, r, w, p))
        for r, w, p in ((4, 8, 0), (4, 8, 1), (16, 4, 0), (16, 4, 1), (8, 4, 1), (4, 4, 1), (2, 8, 1),
                        (8, 8, 1))] + [  # fused_dp4a (gemv_lowbit_dp4a): rows per warp, warps, blocks per SM
        (f"dp4a RPT={r} WARPS={w} x{m}/SM", lambda be, c, r=r, w=w, m=m: gk.cuda_dp4a(be, c, r, w, m))
        for r, w, m in DP4A_SHAPES] + [  # its loads and x conversion alone (no dot products)
        (f"dp4a DMEMONLY UNCHECKED RPT={r} WARPS={w} x{m}/SM",
         lambda be, c, r=r, w=w, m=m: gk.cuda_dp4a(be, c, r, w, m, DMEMONLY=1))
        for r, w, m in ((2, 16, 2), (2, 32, 1), (4, 16, 1))]

#: fused_dp4a shapes the probes time (rows per warp, warps per block, blocks per SM)
DP4A_SHAPES = ((1, 32, 1), (2, 32, 1), (1, 16, 2), (2, 16, 2), (2, 16, 1), (4, 16, 1), (1, 8, 4), (2, 8, 4))


def _gemv_opencl():
    import ops.gemv_lowbit.kernels as gk

    # fused_vec (U words per row and step, RPT rows per team of 32, teams per work-group) beside the
    # registered (4, 4) with 4 teams; fused_mma's shapes
    return [(f"fused_vec U={u} RPT={r} TEAMS={t}",
             lambda be, c, u=u, r=r, t=t: gk.opencl_fused_vec(be, c, (u, r), t))
            for u, r, t in ((4, 8, 4), (4, 2, 4), (8, 4, 4), (4, 4, 2), (4, 4, 8))] + [
        # fused_mma (NVIDIA: gemv_lowbit_mma) with its planned KW/US/RT overridden and its
        # registers capped (s21b: 168 registers unbounded, 3 blocks of 4 warps per SM: K=N=16384's
        # 512 blocks in 1.3 waves)
        (f"mma maxrreg={m} {d}", lambda be, c, m=m, d=d: gk.opencl_fused_mma(be, c, m, **d))
        for m, d in ((None, {"US": 1}), (128, {"US": 2}), (96, {}), (128, {"RT": 1}), (128, {"KW": 2}),
                     (128, {"KW": 8}))] + [
        (f"dp4a RPT={r} TEAMS={w} x{m}/SM", lambda be, c, r=r, w=w, m=m: gk.opencl_dp4a(be, c, r, w, m))
        for r, w, m in DP4A_SHAPES] + [
        # fused_packed (NVIDIA sm_90: gemv_lowbit_pk in OpenCL C): consumer warps, ring stages, steps
        # per warp and chunk, work-groups per SM, beside the registered (8, 5, 1, 2)
        (f"packed KW={kw} STAGES={st} SPW={sp} x{m}/SM",
         lambda be, c, kw=kw, st=st, sp=sp, m=m: gk.opencl_packed(be, c, kw, st, sp, m))
        for kw, st, sp, m in ((8, 5, 1, 1), (8, 5, 1, 3), (8, 2, 2, 2), (8, 2, 2, 3), (4, 8, 1, 3),
                              (4, 10, 1, 3), (4, 4, 1, 4), (4, 2, 2, 4), (16, 2, 1, 1))] + [
        # session 44: x's slice in each ring stage (PXR, registered since) or loaded from global
        # memory a chunk ahead (PXR=0, registered before)
        (f"packed KW={kw} STAGES={st} SPW={sp} x{m}/SM PXR={p}",
         lambda be, c, kw=kw, st=st, sp=sp, m=m, p=p: gk.opencl_packed(be, c, kw, st, sp, m, pxr=p))
        for kw, st, sp, m, p in ((8, 5, 1, 2, 1), (8, 4, 1, 2, 1), (8, 3, 1, 2, 1), (4, 5, 2, 2, 1),
                                 (4, 4, 2, 2, 1), (8, 5, 1, 2, 0), (8, 2, 2, 1, 1), (8, 5, 1, 1, 1))] + [
        # session 44: the registered form without its register cap (-cl-nv-maxrregcount)
        ("packed no regcap", lambda be, c: gk.opencl_packed(be, c, regcap=False))] + [
        # ptxas's registers and spills in the build log (PYOPENCL_COMPILER_OUTPUT=1)
        (f"packed verbose x{m}/SM",
         lambda be, c, m=m: gk.opencl_packed(be, c, per_sm=m, options=("-cl-nv-verbose",))) for m in (2, 3)]


def _gemv_webgpu():
    import ops.gemv_lowbit.kernels as gk

    # fused_vec (U, RPT, TEAM, TEAMS) beside the registered (4, 4, 32, 2); fused_dp4a (rows per team,
    # teams, workgroups per compute unit)
    return [(f"fused_vec shape={s}", lambda be, c, s=s: gk.webgpu_fused_vec(be, c, s))
            for s in ((4, 8, 32, 2), (4, 2, 32, 2), (8, 4, 32, 2), (4, 4, 32, 4), (4, 4, 32, 1))] + [
        (f"dp4a shape={s}", lambda be, c, s=s: gk.webgpu_dp4a(be, c, s))
        for s in ((2, 16, 1), (4, 8, 2), (1, 16, 2), (2, 8, 4), (4, 16, 1), (2, 4, 4))] + [
        # session 31: team sums through subgroup shuffles (SG, 2 barriers per four sums instead of 7
        # per sum) and the weights loaded a step ahead (PF), at the registered shape and four more
        (f"dp4a sgpf shape={s}", lambda be, c, s=s: gk.webgpu_dp4a(be, c, s))
        for s in ((4, 16, 1, 1, 0), (4, 16, 1, 0, 1), (4, 16, 1, 1, 1), (2, 16, 1, 1, 1), (4, 8, 2, 1, 1),
                  (2, 32, 1, 1, 1), (8, 16, 1, 1, 1),
                  # session 32: the two best of s32a's 1980 MHz rows without subgroups (the fallback)
                  (8, 16, 1, 0, 1), (8, 16, 1, 0, 0), (2, 32, 1, 0, 1))] + [
        # session 41: SG 2, a team per subgroup summing by subgroupAdd, no barrier in the tile loop;
        # ST 1 (6th field), y stored by the last chunk instead of a gemv_pack dispatch
        (f"dp4a sg2 shape={s}", lambda be, c, s=s: gk.webgpu_dp4a(be, c, s))
        for s in ((4, 16, 1, 2, 0), (4, 16, 1, 2, 1), (2, 16, 1, 2, 0), (8, 16, 1, 2, 0), (4, 32, 1, 2, 0),
                  (4, 8, 2, 2, 0), (4, 16, 1, 2, 0, 1), (8, 16, 1, 2, 0, 1), (4, 8, 2, 2, 0, 1),
                  # session 42: ST with 32 teams (SG 2 alone best there), 16 rows, the step prefetch
                  (8, 32, 1, 2, 0, 1), (4, 32, 1, 2, 0, 1), (16, 16, 1, 2, 0, 1), (8, 16, 1, 2, 1, 1),
                  (8, 32, 1, 2, 1, 1), (16, 32, 1, 2, 0, 1),
                  # and LP 1 (7th field): one dispatch walks K's chunks (two at K = 16384 on NVIDIA)
                  (8, 16, 1, 2, 0, 1, 1), (8, 32, 1, 2, 0, 1, 1), (4, 32, 1, 2, 0, 1, 1),
                  # around the LP winner (registered (4, 32, 1, 2, 0, 1, 1))
                  (2, 32, 1, 2, 0, 1, 1), (6, 32, 1, 2, 0, 1, 1), (4, 24, 1, 2, 0, 1, 1),
                  (4, 32, 1, 2, 1, 1, 1),
                  # session 43: two workgroups per compute unit with LP (more bytes in flight per SM)
                  (4, 16, 2, 2, 0, 1, 1), (2, 32, 2, 2, 0, 1, 1))] + [
        # session 45: the weights repacked so that each team's tile is one contiguous stream (RL,
        # 8th field); the registered form without x's conversion and without the dot products
        (f"dp4a s45 shape={s}", lambda be, c, s=s: gk.webgpu_dp4a(be, c, s))
        for s in ((4, 32, 1, 2, 0, 1, 1, 1), (2, 32, 1, 2, 0, 1, 1, 1), (8, 16, 1, 2, 0, 1, 1, 1),
                  (4, 24, 1, 2, 1, 1, 1, 1))] + [
        (f"dp4a s45 DIAG={d}{rl} UNCHECKED", lambda be, c, d=d, s=s: gk.webgpu_dp4a(be, c, s, diag=d))
        for d in (1, 2) for rl, s in (("", None), (" RL", (4, 32, 1, 2, 0, 1, 1, 1)))] + [
        # session 45, second call: RL 2 (the blocks K-major: the teams' steps read one slab at a
        # time; XP, a chunk's first step loaded before x's conversion, lost 5-10 % and was removed);
        # third call: the step prefetch at 2 rows per team, two workgroups per SM (the fourth, s45d
        # at 398adc4: x converted by four invocations per unit, since the only conversion)
        (f"dp4a s45b shape={s}", lambda be, c, s=s: gk.webgpu_dp4a(be, c, s))
        for s in ((4, 32, 1, 2, 0, 1, 1, 1), (4, 32, 1, 2, 0, 1, 1, 2), (2, 32, 1, 2, 1, 1, 1, 1),
                  (2, 32, 1, 2, 1, 1, 1, 2), (2, 16, 2, 2, 1, 1, 1, 1), (2, 32, 1, 2, 0, 1, 1, 1))] + [
        # the registered form's neighbours: more rows per team at 16-28 teams (more bytes in flight
        # per lane, fewer dependent steps; 32 teams of 6-8 rows spilled)
        (f"dp4a s45e shape={s}", lambda be, c, s=s: gk.webgpu_dp4a(be, c, s))
        for s in ((8, 24, 1, 2, 0, 1, 1, 1), (6, 24, 1, 2, 0, 1, 1, 1), (4, 28, 1, 2, 0, 1, 1, 1),
                  (8, 20, 1, 2, 0, 1, 1, 1), (6, 16, 1, 2, 0, 1, 1, 1), (8, 16, 1, 2, 0, 1, 1, 1),
                  (8, 24, 1, 2, 0, 1, 1, 2))] + [
        # (session 46's XT and SP, words or whole first steps loaded before x's conversion, lost
        # 1-3 % on the H200 and 12-16 % on an H100 and were removed)
        ("dp4a s45b DIAG=2 RL2 UNCHECKED",
         lambda be, c: gk.webgpu_dp4a(be, c, (4, 32, 1, 2, 0, 1, 1, 2), diag=2))]


def _attention_cuda():
    import ops.attention.kernels as ak

    return [(f"flash warps={w} bn={bn}", lambda be, c, w=w, bn=bn: ak.cuda_flash(be, c, w, bn))
            for w, bn in ((8, 64), (4, 64))]  # registered flash: 8 warps × 128 keys where it fits


def _attention_triton():
    import ops.attention.kernels as ak

    # SDPA through torch in this process (the baseline of --ab rounds: under the power cap the
    # harness's rows sample each form at its own clock); session 33: without the split tail (every
    # job in one launch, the last wave partial) — before the split rows, which then run warmer
    return [("sdpa torch", ak.torch_sdpa)] + [
        (f"flash whole cfg={t}", lambda be, c, t=t: ak.triton_flash(be, c, [t], tail=False))
        for t in ((128, 64, 8, 3, 2), (128, 64, 8, 3))] + [
        # flash at one config each (BLOCK_M, BLOCK_N, warps, stages) of the autotune's tensor-core
        # list at head dim 128
        (f"flash cfg={t}", lambda be, c, t=t: ak.triton_flash(be, c, [t]))
        for t in ak._TRITON_CONFIGS[(128, True)]] + [
        # HALVES 2: two query halves of BLOCK_M rows per program, steps interleaved (at BLOCK_N 128
        # ptxas waits on each HGMMA alone — 64 WARPGROUP.DEPBAR at 255 registers — so none listed)
        (f"flash pingpong cfg={t}", lambda be, c, t=t: ak.triton_flash(be, c, [(*t, 2)]))
        for t in ((128, 64, 8, 2), (128, 64, 8, 3), (128, 64, 8, 4), (128, 32, 8, 3), (64, 64, 4, 3))]


def _gemv_triton():
    import ops.gemv_lowbit.kernels as gk

    # gemv_lowbit_dot at one (BN rows, warps, stages) each, and gemv_lowbit_row at each of its
    # configs, beside the registered fused_vec (batch 1: gemv_lowbit_row autotuned). BN < 64: Triton
    # takes mma.sync (both operands in registers) instead of wgmma, whose B operand (the x field
    # tiles, made in registers) goes through shared memory with a fence and a barrier per k16 dot
    # (8 of each per 128-k group at BN 128, Triton 3.6 sm_90 PTX)
    return [(f"dot shape={t}", lambda be, c, t=t: gk.triton_dot(be, c, [t]))
            for t in ((32, 4, 3), (32, 2, 3), (32, 4, 5), (32, 2, 5), (16, 1, 5), (16, 2, 5), (32, 2, 8))] + [
        # fused_dp4a at one config, as registered (a dependent launch where the GPU has it), and
        # launched plainly
        (f"dp4a shape={t}", lambda be, c, t=t: gk.triton_dp4a(be, c, [t]))
        for t in gk.TRITON_DP4A_CONFIGS] + [
        (f"dp4a plain shape={t}", lambda be, c, t=t: gk.triton_dp4a(be, c, [t], pdl=False))
        for t in gk.TRITON_DP4A_CONFIGS] + [
        # session 34: each of its two kernels alone (the fixed cost per call: s34c's sweep over N)
        (f"dp4a {a} alone UNCHECKED", lambda be, c, a=a: gk.triton_dp4a(be, c, [(16, 1024, 4, 3)], alone=a))
        for a in ("planes", "main")] + [
        # session 37: the first P word tiles of each program's rows prefetched into L2 before the
        # dependent launch's wait (gemv_lowbit_dp4a's PREF; registered: TRITON_DP4A_PREF, the
        # "dp4a shape" rows), so DRAM streams while the planes are made; P 0 the form before
        (f"dp4a pref={p} shape={t}", lambda be, c, t=t, p=p: gk.triton_dp4a(be, c, [t], pref=p))
        for t in ((16, 1024, 4, 3), (8, 1024, 2, 4)) for p in (0, 1, 4)] + [
        # session 29: the word tiles through a cp.async ring (tl.range num_stages; a 4th field) —
        # 32–120 KiB in flight per SM in the sm_90 compile against ~32 KiB for the registered form
        # (its BK 1024 rings, registered since session 31, are the "dp4a plain" rows)
        (f"dp4a staged shape={t}", lambda be, c, t=t: gk.triton_dp4a(be, c, [t], pdl=False))
        for t in ((32, 512, 8, 3), (32, 512, 8, 6), (32, 512, 4, 3), (16, 512, 4, 3), (16, 512, 4, 5),
                  (32, 256, 4, 4), (32, 256, 4, 6), (16, 256, 2, 4))] + [
        # and as a programmatic dependent launch of the planes kernel (its launch and first loads
        # under the small kernel's few µs) — at registered shapes the "dp4a shape" rows since session
        # 32 registered the dependent launch (session 31's "dp4a pdl ring" rows among them)
        (f"dp4a pdl shape={t}", lambda be, c, t=t: gk.triton_dp4a(be, c, [t], pdl=True))
        for t in ((16, 512, 4, 5), (32, 256, 4, 6))] + [
        # session 31: rings at BK 1024 won (70 / 71 % for (16, 1024, 4, 3)): wider tiles, deeper rings
        (f"dp4a wide shape={t}", lambda be, c, t=t: gk.triton_dp4a(be, c, [t], pdl=False))
        for t in ((16, 2048, 4, 3), (8, 2048, 4, 3), (32, 1024, 8, 3), (16, 1024, 4, 4), (16, 1024, 8, 3),
                  (32, 1024, 4, 3), (8, 4096, 4, 2), (16, 2048, 8, 2))] + [
        # session 49: the planes combined per 32-k unit (UNIT 1: eight dp4a chained per plane, one
        # int→float and FMA per unit; 273 sm_90 instructions per tile against 335, 72 registers
        # against 93) at the registered rings ("dp4a shape" the same at UNIT 0) and, at both UNITs,
        # at wider ones its registers allow; then UNIT 1 at 32–64 words per thread (offline sm_90
        # SASS, Triton 3.6: 12.2–14.0 instructions per word against 17.1 at the registered ring's
        # 16 and 20.9 at UNIT 0; registers 124 at (64, 512, 4, 3), 154 at (64, 1024, 8, 3), 247 at
        # (32, 2048, 4, 2))
        (f"dp4a unit={u} shape={t}", lambda be, c, t=t, u=u: gk.triton_dp4a(be, c, [t], unit=u))
        for t, u in [((16, 1024, 4, 3), 1), ((8, 1024, 2, 4), 1)]
        + [(t, u) for t in ((16, 1024, 4, 4), (32, 1024, 4, 3), (16, 2048, 4, 3)) for u in (0, 1)]
        + [(t, 1) for t in ((64, 512, 4, 3), (64, 1024, 8, 3), (32, 2048, 4, 2))]] + [
        (f"row shape={t}", lambda be, c, t=t: gk.triton_row(be, c, [t]))  # batch 1: fused_vec's kernel
        for t in gk.TRITON_ROW_CONFIGS + [(64, 256, 8, 1), (128, 128, 8, 1), (256, 128, 8, 1),
                                          (128, 256, 16, 1), (256, 256, 16, 1)]]


#: (op, backend) → extra configurations beyond the registered variants
CONFIGS = {("softmax", "opencl"): _softmax_opencl, ("matmul", "cuda"): _matmul_cuda,
           ("matmul", "webgpu"): _matmul_webgpu, ("softmax", "webgpu"): _softmax_webgpu,
           ("gemv_lowbit", "cuda"): _gemv_cuda, ("attention", "cuda"): _attention_cuda,
           ("softmax", "triton"): _softmax_triton, ("attention", "webgpu"): _attention_webgpu,
           ("matmul", "triton"): _matmul_triton, ("gemv_lowbit", "triton"): _gemv_triton,
           ("gemv_lowbit", "opencl"): _gemv_opencl, ("gemv_lowbit", "webgpu"): _gemv_webgpu,
           ("attention", "triton"): _attention_triton}


def interleaved(be, runs: dict, ins, outs, rounds: int) -> dict:
    """``--ab``: ``rounds`` rounds timing each of ``runs`` once (L2 flushed before each), the
    first of a round rotating; per configuration the median time and the median, first and third
    quartiles of its per-round ratio to the first configuration's time (< 1: faster). Prints them."""
    import numpy as np

    from suite.timing import sample

    labels = list(runs)
    times = {k: [] for k in labels}
    for r in range(rounds):
        for i in range(len(labels)):
            k = labels[(r + i) % len(labels)]
            times[k].append(sample(be, lambda k=k: runs[k](ins, outs)))
    base = np.asarray(times[labels[0]])
    out = {}
    print(f"# interleaved: {rounds} rounds, ratio to '{labels[0]}' per round", flush=True)
    for k in labels:
        q1, med, q3 = np.percentile(np.asarray(times[k]) / base, [25, 50, 75])
        out[k] = {"median_s": float(np.median(times[k])), "ratio_median": float(med), "ratio_q1": float(q1),
                  "ratio_q3": float(q3), "n": rounds}
        print(f"{k:44s} {out[k]['median_s'] * 1e3:8.3f} ms  ratio {med:.4f} [{q1:.4f}, {q3:.4f}]  "
              f"({1 / med:.3f} × the first's speed)", flush=True)
    return {"rounds": rounds, "baseline": labels[0], "forms": out}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("op")
    ap.add_argument("backend")
    ap.add_argument("--case", required=True, help="a case of the op's spec, or (with --dims) the name of "
                    "a shape it does not list")
    ap.add_argument("--dims", default="", help="k=v,...: probe this shape (the spec's dtype rules, seed 1) "
                    "instead of a listed case, e.g. m=2048,n=131072")
    ap.add_argument("--dtype", default="fp32", help="dtype of a --dims shape")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--only", default="", help="only the configurations whose label contains one of these "
                    "|-separated texts (a text ending in $: the label ends with it)")
    ap.add_argument("--cap", type=float, default=2.0, help="seconds of samples per configuration")
    ap.add_argument("--batch", type=int, default=20, help="launches of the host-timed batch (no flush)")
    ap.add_argument("--ab", type=int, default=0, metavar="ROUNDS",
                    help="then ROUNDS rounds that time every checked configuration once each (cold, L2 "
                    "flushed), in turn, the first of a round rotating: under a power cap each round's forms "
                    "share its clock, so the median per-round ratio to the first configuration compares "
                    "them where separate rows sampled different clocks")
    args = ap.parse_args()

    from suite.check import checked_launch
    from suite.results import RESULTS_DIR, atomic_write_json
    from suite.sol import load_peaks
    from suite.spec import np_dtype
    from suite.timing import Protocol, measure, soaked
    from suite.worker import probe_backend

    discover()
    spec = get_spec(args.op)
    if args.dims:
        from suite.spec import Case

        dims = {k: int(v) for k, v in (kv.split("=") for kv in args.dims.split(","))}
        case = Case(args.case, dims, args.dtype, 1)
    else:
        case = spec.case(args.case)
    be = probe_backend(args.backend)
    dev = be.device
    peaks = (load_peaks(dev.slug, RESULTS_DIR) or {}).get("measured", {})
    bw = (peaks.get("bandwidth") or {}).get("value")
    nbytes, flops = spec.bytes_moved(case), spec.flops(case)
    t0 = time.perf_counter()
    x = spec.inputs(case)
    ref = spec.reference(case, x)
    tol = spec.tolerance(case)
    sig = spec.signature(case)
    print(f"# {args.op}/{args.backend} {case.name} on {dev.name} ({dev.slug}); "
          f"ceiling {bw and bw / 1e9} GB/s; inputs+reference {time.perf_counter() - t0:.1f} s", flush=True)
    ins = {k: be.upload(x[k]) for k, a in sig.items() if a.role == "in"}
    outs = {k: be.empty(a.shape, np_dtype(a.dtype)) for k, a in sig.items() if a.role == "out"}
    rows, timed = [], {}
    for label, factory in configurations(args.op, args.backend):
        if not selected(label, args.only):
            continue
        try:
            run = factory(be, case)
            if "UNCHECKED" in label:  # a diagnostic form, wrong by design (e.g. a memory path alone)
                run(ins, outs)
                be.synchronize()
                res = None
            else:
                res = checked_launch(be, spec, case, run, ins, outs, x, ref, tol)
            if res is not None and not res.ok:
                rows.append({"label": label, "checked": f"FAILED {res.message}"})
                print(f"{label:44s} FAILED: {res.message[:120]}", flush=True)
                continue
            # compute-heavy configurations on a GPU warm up as the harness's rows do (soaked: timed in
            # the power-capped steady state, not cooler for coming first)
            proto = soaked(Protocol(time_cap_s=args.cap), flops or 0, nbytes, dev.kind == "gpu")
            tm = measure(be, lambda run=run: run(ins, outs), proto)
            hot = measure(be, lambda run=run: run(ins, outs), Protocol(time_cap_s=args.cap / 2, hot=True))
            be.synchronize()
            t1 = time.perf_counter()
            for _ in range(args.batch):
                run(ins, outs)
            be.synchronize()
            host_s = (time.perf_counter() - t1) / args.batch
            row = {"label": label, "checked": "ok" if res is not None else "UNCHECKED (wrong by design)",
                   "median_s": tm.median_s, "rse": tm.rse, "n": tm.n,
                   "hot_median_s": hot.median_s, "host_batch_s": host_s,
                   "gbs": nbytes / tm.median_s / 1e9, "tflops": flops / tm.median_s / 1e12 if flops else None,
                   "clocks": be.clocks(), "sampling_clocks": tm.clocks,
                   "warmup_extra_s": tm.warmup_extra_s, "info": getattr(run, "info", None) or None}
            row["pct_bw"] = 100 * nbytes / tm.median_s / bw if bw else None
            # a factory's own counters over every launch of this configuration (e.g. WebGPU split_row's
            # parts that gave up waiting), with the launches they cover (besides the check's few)
            if hasattr(run, "counters"):
                row["counters"] = {**run.counters(), "launches": tm.n + tm.warmup_n + hot.n + hot.warmup_n
                                   + args.batch}
            rows.append(row)
            if res is not None:
                timed[label] = run
            pct = f"{row['pct_bw']:5.1f} %" if bw else ""
            tf = f"{row['tflops']:7.1f} TFLOP/s" if flops else ""
            sm = tm.clocks.get("sm_mhz_median")  # the SM clock while sampling (NVML; absent elsewhere)
            print(f"{label:44s} {tm.median_s * 1e3:8.3f} ms {row['gbs']:7.0f} GB/s {pct} {tf} | hot "
                  f"{hot.median_s * 1e3:.3f} ms, host batch {host_s * 1e3:.3f} ms"
                  + (f" | SM {sm:.0f} MHz" if sm else "")
                  + (f" (+{tm.warmup_extra_s:.1f} s warm-up)" if tm.warmup_extra_s >= 0.05 else "")
                  + (f" | {row['info']['waves']} waves" if "waves" in (row["info"] or {}) else "")
                  + (f" | {row['counters']}" if "counters" in row else ""), flush=True)
        except Exception as e:  # noqa: BLE001 - a configuration that fails is a row
            rows.append({"label": label, "error": f"{type(e).__name__}: {e}"[:500]})
            print(f"{label:44s} ERROR {rows[-1]['error'][:150]}", flush=True)
    ab = interleaved(be, timed, ins, outs, args.ab) if args.ab and len(timed) > 1 else None
    safe = "".join(ch if ch.isalnum() else "_" for ch in case.name)
    path = Path(args.out) / f"probe-{args.op}-{args.backend}-{safe}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"op": args.op, "backend": args.backend, "case": case.name, "device": dev.name,
                             "slug": dev.slug, "ceiling_gbs": bw and bw / 1e9, "bytes": nbytes,
                             "flops": flops,
                             "method": "suite.timing.measure, cold (L2 flushed), median", "rows": rows,
                             **({"ab": ab} if ab else {})})
    print(f"# wrote {path}")


if __name__ == "__main__":
    main()
