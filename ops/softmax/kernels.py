"""softmax kernels: y = softmax(x) along the rows of [M, N], one registration per (backend, variant).

Each factory gets the opened backend and the case, compiles once, allocates its scratch once
(split_row: the per-part (max, Σ) words and the ticket counter) and returns ``run(ins, outs)``
that only enqueues work. Backend packages are imported inside the factories.

Variants, in every dialect: ``three_pass`` (a max read, a Σ exp read, a normalise read),
``fused_row`` (one row per workgroup — or per warp for narrow rows — held in registers when it
fits: one read; wider rows fall back to the online stream and a re-read), ``online`` (one
streaming read with a running max and a rescaled running sum, then a normalising re-read), and
``split_row`` (a row cut into G parts on G workgroups, each part in registers, partial (max, Σ)
combined across the row: one read on cuda/opencl/webgpu/triton-on-GPU; WebGPU's waits are bounded,
with a fixup dispatch for parts that gave up, since WebGPU promises no forward progress).
torch: ``eager`` (aten softmax into the output) and ``compile`` (torch.compile, static shapes).

Geometry (``plan``) comes from the case and the device: 16-byte vectors when N is a multiple
of one (4 fp32 / 8 bf16), else one element per access; threads per row (TPR) so that a row's
tile is ≤ VALS values per thread; several rows per workgroup for narrow rows; the number of
parts of a split row bounded by the device's compute units (on cuda all parts of a row must be
resident together; opencl and webgpu bound their waits, see the .cl/.cu/.wgsl headers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from suite.registry import kernel, source

#: SM count assumed where the device reports none: compile-only CUDA, and WebGPU GPUs (WebGPU
#: exposes no count) — an H100/H200's. WebGPU's split_row waits are bounded (a part that gives up
#: goes to the fixup dispatch), so on a smaller GPU its rows are only cut finer than they need be
DEFAULT_UNITS = 132


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def pow2(v: int) -> int:
    return 1 << max(0, int(v) - 1).bit_length()


def pow2_floor(v: int) -> int:
    return 1 << (max(1, v).bit_length() - 1)


@dataclass(frozen=True)
class Geometry:
    """Launch shape of one case: see the module docstring and the kernel headers."""

    vecload: bool  # 16-byte units
    unit: int  # elements per unit
    nu: int  # units per row
    tpr: int  # threads per row (part)
    rpb: int  # rows per workgroup
    items: int  # units per thread in the register tile
    fits: bool  # the row (part) is held in the tile
    g: int  # parts per row
    chunk: int  # units per part
    m: int

    @property
    def tpb(self) -> int:
        return self.tpr * self.rpb

    @property
    def groups(self) -> int:
        return self.m * self.g if self.g > 1 else cdiv(self.m, self.rpb)


def plan(case, mode: str, *, tpb_max: int, vals: int, min_tpb: int, g_max: int = 1) -> Geometry:
    """``mode``: "stream" (three_pass, online), "fused" or "split"."""
    m, n = case["m"], case["n"]
    vec = 16 // (2 if case.dtype == "bf16" else 4)
    vecload = n % vec == 0
    unit = vec if vecload else 1
    nu = n // unit
    items_max = max(1, vals // unit)
    g, chunk = 1, nu
    if mode == "split":
        g = max(1, min(g_max, cdiv(nu, tpb_max * items_max)))
        chunk = cdiv(nu, g)
        g = cdiv(nu, chunk)
    tpr = min(tpb_max, pow2(cdiv(chunk, items_max)))
    items = cdiv(chunk, tpr)
    fits = mode != "stream" and items <= items_max
    rpb = 1 if g > 1 else max(1, min(min_tpb // tpr, pow2(m)))
    if g > tpr * rpb:
        raise ValueError(f"split_row: {g} parts exceed {tpr * rpb} threads")
    return Geometry(vecload, unit, nu, tpr, rpb, items if fits else 1, fits, g, chunk, m)


def _units(be) -> int:
    return be.device.compute_units or DEFAULT_UNITS


def _c_defines(case, geo: Geometry, extra: dict | None = None) -> dict:
    return {"BF16": int(case.dtype == "bf16"), "TPR": geo.tpr, "RPB": geo.rpb, "VECLOAD": int(geo.vecload),
            "ITEMS": geo.items, "FITS": int(geo.fits), "G": geo.g, **(extra or {})}


class _Epoch:
    """Launch counter of split_row (1, 2, ...): tags this launch's partials, offsets its tickets."""

    def __init__(self):
        self.n = 0

    def next(self) -> np.uint32:
        self.n += 1
        return np.uint32(self.n & 0xFFFFFFFF)


# ---- torch ----------------------------------------------------------------------------------


def _torch_view(t, dtype: str):
    import torch

    return t.view(torch.bfloat16) if dtype == "bf16" else t


@kernel("softmax", "torch", "eager")
def torch_eager(be, case):
    """aten softmax (``_softmax.out``) straight into the output; bf16: bf16 in/out, fp32 inside."""
    import torch

    op = torch.ops.aten._softmax.out

    def run(ins, outs):
        op(_torch_view(ins["x"], case.dtype), -1, False, out=_torch_view(outs["y"], case.dtype))

    return run


def _softmax_into(x, y):
    import torch

    y.copy_(torch.softmax(x.float(), dim=-1).to(y.dtype))


#: test cases torch.compile is checked on when the device is the CPU (see torch_compile)
CPU_COMPILE_CASES = ("17x1000", "9x1025,bf16")


def _test_names() -> frozenset:
    from ops.softmax.spec import SPEC

    return frozenset(c.name for c in SPEC.test_cases)


_CPU_TEST_NAMES = _test_names()


@kernel("softmax", "torch", "compile")
def torch_compile(be, case):
    """torch.compile(dynamic=False) of softmax in fp32 written into the output (Inductor fuses the
    copy into its kernel: one read, one write)."""
    import torch

    if be.device.kind == "cpu" and case.name in _CPU_TEST_NAMES and case.name not in CPU_COMPILE_CASES:
        from backends.base import Unsupported

        raise Unsupported(f"torch.compile on the CPU builds C++ for each shape (~10 s on 2 cores): "
                          f"checked on {', '.join(CPU_COMPILE_CASES)} only, to keep the test set short")
    torch._dynamo.reset()  # one static-shape graph per case: no recompile limit across cases
    fn = torch.compile(_softmax_into, dynamic=False)
    return lambda ins, outs: fn(_torch_view(ins["x"], case.dtype), _torch_view(outs["y"], case.dtype))


# ---- opencl ---------------------------------------------------------------------------------

_CL = source(__file__, "softmax.cl")


def _cl_subgroups(be) -> int:
    feats = set(be.device.features)
    if feats & {"cl_khr_subgroups", "cl_intel_subgroups"}:
        return 1
    if "cl_nv_device_attribute_query" in feats:
        return 2  # NVIDIA: warp shuffles through inline PTX
    return 0  # local-memory trees


def _cl_plan(be, case, mode: str, **over) -> Geometry:
    """``over``: plan arguments replacing the device's (tests: more parts than compute units).
    Work-groups stay within the device's largest (tuned sizes on GPUs: up to 1024)."""
    gpu = be.device.kind == "gpu"
    most = pow2_floor(int(be.cl_device.max_work_group_size))
    return plan(case, mode, **{"tpb_max": min(most, (512 if mode == "split" else 1024) if gpu else 512),
                               "vals": 32 if gpu else 128, "min_tpb": min(most, 256 if gpu else 64),
                               "g_max": max(1, be.device.compute_units), **over})


def _c_launcher(be, case, geo, k, entry: str, parts: int = 1):
    """``run(ins, outs)`` of a compiled softmax.cu / softmax.cl kernel: both dialects launch the
    same way (``geo.groups`` workgroups of ``geo.tpb``); split rows also get the exchange slots,
    the ticket and a fresh epoch per launch. ``parts`` 2 (OpenCL softmax_rows, PARTS=2): x and y
    go as two row parts each (``ClBuffer.pieces``), then the rows in the first."""
    m, n = np.int32(case["m"]), np.int32(case["n"])
    grid, block = (geo.groups,), (geo.tpb,)
    if entry == "softmax_three_pass":
        return lambda ins, outs: be.launch(k, grid, block, [ins["x"], outs["y"], m, n])
    slots = be.upload(np.zeros(max(1, 2 * case["m"] * geo.g), np.uint64))
    ticket = be.upload(np.zeros(1, np.uint32))
    epoch = _Epoch()
    chunk = np.int32(geo.chunk)

    def run(ins, outs):
        if parts == 1:
            be.launch(k, grid, block, [ins["x"], outs["y"], m, n, chunk, slots, ticket, epoch.next()])
            return
        (x0, x1), rows = ins["x"].pieces(2)
        (y0, y1), yrows = outs["y"].pieces(2)
        if rows != yrows:
            raise ValueError(f"x and y split at different rows ({rows}, {yrows})")
        be.launch(k, grid, block, [x0, y0, m, n, chunk, slots, ticket, epoch.next(), x1, y1, np.int32(rows)])

    return run


def _opencl(be, case, mode: str, entry: str, plan_kw: dict | None = None, **defines):
    """``plan_kw`` replaces plan arguments, ``defines`` the planned defines (probes:
    scripts/probe.py; tests)."""
    if case["m"] * case["n"] >= 2**31:
        from backends.base import Unsupported

        raise Unsupported("int row/element counts in softmax.cl: M·N >= 2^31")
    geo = _cl_plan(be, case, mode, **(plan_kw or {}))
    # an x (and y) above the device's one-buffer limit comes in row parts (the harness allocates
    # them guarded, suite.guard): softmax_rows takes two
    from ops.softmax.spec import signature
    from suite.guard import GUARD_BYTES
    from suite.spec import np_dtype

    x = signature(case)["x"]
    parts = be.row_parts(x.shape, np_dtype(x.dtype), GUARD_BYTES)
    most = 2 if entry == "softmax_rows" else 1
    if parts > most:
        from backends.base import Unsupported

        raise Unsupported(f"x is above this device's one-buffer limit and comes in {parts} row parts; "
                          f"{entry} takes {'at most 2' if most == 2 else 'one buffer'}")
    k = be.compile(_CL, entry, _c_defines(case, geo, {"SUBGROUPS": _cl_subgroups(be), "PARTS": parts,
                                                      **defines}))
    return _c_launcher(be, case, geo, k, entry, parts)


@kernel("softmax", "opencl", "three_pass")
def opencl_three_pass(be, case):
    """Max loop, Σ exp loop, write loop over the row: three reads (TPR work-items per row)."""
    return _opencl(be, case, "stream", "softmax_three_pass")


@kernel("softmax", "opencl", "fused_row")
def opencl_fused_row(be, case):
    """Row in private registers (≤ 32 values per work-item on GPUs), one read; wider rows: the
    online stream and a re-read."""
    return _opencl(be, case, "fused", "softmax_rows")


@kernel("softmax", "opencl", "online")
def opencl_online(be, case):
    """Running max and rescaled running sum in one streaming read, then a normalising re-read."""
    return _opencl(be, case, "stream", "softmax_rows")


@kernel("softmax", "opencl", "split_row")
def opencl_split_row(be, case):
    """G ≤ compute-unit work-groups per row, each holding its part in registers; partial (max, Σ)
    exchanged through epoch-tagged 64-bit words in one launch (ticket order); a sibling not seen
    within SPIN polls is computed by the waiting work-group (softmax.cl)."""
    if "cl_khr_int64_base_atomics" not in be.device.features:
        from backends.base import Unsupported

        raise Unsupported("split_row needs cl_khr_int64_base_atomics (64-bit atom_xchg)")
    return _opencl(be, case, "split", "softmax_rows")


# ---- cuda -----------------------------------------------------------------------------------

_CU = source(__file__, "softmax.cu")


def _cuda(be, case, mode: str, entry: str):
    geo = plan(case, mode, tpb_max=512 if mode == "split" else 1024, vals=32, min_tpb=256, g_max=_units(be))
    k = be.compile(_CU, entry, _c_defines(case, geo))
    return _c_launcher(be, case, geo, k, entry)


@kernel("softmax", "cuda", "three_pass")
def cuda_three_pass(be, case):
    """Max loop, Σ exp loop, write loop over the row: three reads (a warp per narrow row)."""
    return _cuda(be, case, "stream", "softmax_three_pass")


@kernel("softmax", "cuda", "fused_row")
def cuda_fused_row(be, case):
    """Row in registers (≤ 32 values per thread, all 16-byte loads issued first), one read; a
    warp per row up to 1024 fp32 / 2048 bf16, a block of ≤ 1024 threads beyond; rows wider than
    the tile: the online stream and a re-read."""
    return _cuda(be, case, "fused", "softmax_rows")


@kernel("softmax", "cuda", "online")
def cuda_online(be, case):
    """Running max and rescaled running sum in one streaming read, then a normalising re-read."""
    return _cuda(be, case, "stream", "softmax_rows")


@kernel("softmax", "cuda", "split_row")
def cuda_split_row(be, case):
    """G ≤ SM-count blocks of 512 per row (4096×131072 fp32: 8 parts of 16384), each holding its
    part in registers; partial (max, Σ) exchanged through epoch-tagged 64-bit words in the same
    launch (ticket order): one read, one write."""
    return _cuda(be, case, "split", "softmax_rows")


# ---- triton ---------------------------------------------------------------------------------

#: widest row the fused kernel holds in registers (16 warps × 32 values); wider: online stream
TRITON_FUSED_MAX = 16384
#: tile of the streaming kernels (three_pass, online) and the split part size
TRITON_TILE = 4096
TRITON_PART = 16384
#: split_row, 4096×131072 fp32 on the H200 (scripts/probe.py, 2026-12-01): 16384-value parts
#: 75.6 %, 8192 46.7 %, 4096 50.9 %; a register cap for two programs per SM (81 → 64 registers)
#: 74.2 %; polling each sibling's words as scalars, one after another, 46.1 %. Those runs took
#: the ticket with the default acq_rel add (a fence and an L1 invalidate per program); with a
#: relaxed add 86.5 % (session 6, run 115296; acq_rel 76.3 % in the same probe); 8 / 32 warps at
#: 16384 values 66 / 50 %, 32768 values with 16 / 32 warps 82.6 / 79.7 % (CUDA's kernel of the
#: same geometry: 93.3 %); session 7 (probes-20261201-session7): a 64-register cap 79.1 %,
#: evict_first loads/stores 84.3 % (registered 86.4 % beside them), 8192 values × 8 warps 82.8 %,
#: 4096 × 4 81.7 %, 8192 × 16 51.5 %, 4096 × 8 58.9 % (registered 86.1 %).
#: session 8 (probes-20261201-session8): a nanosleep between polls, 500 / 1000 / 2000 / 4000 ns:
#: 87.8 / 88.2 / 87.9 / 76.2 % against 86.1 % without (one probe, 4096×131072 fp32); polls on
#: one value per thread with all but G lanes masked (one warp loads) crash the H200's Triton.
TRITON_SPLIT_BACKOFF_NS = 1000
#: split_row: after publishing its partial, each program asks into L2 the part of the ticket this
#: many waves (× the SM count) after its own (softmax_split's AHEAD), so DRAM has work while it
#: waits for its siblings (one 512-thread program per SM). Session 37 (H100, `s37d`, 40
#: interleaved rounds at 4096×131072 fp32): 0.5 / 1 / 2 / 4 waves took 0.993 / 0.989 / 1.197 /
#: 1.454 × the time without (95.6 % of that card's ceiling without, 96.7 % at 1 wave): past one
#: wave the prefetched parts no longer wait in L2 for their programs. Session 42 (H200, 40 rounds,
#: probes-20261207-session42/s41h): AHEAD 0 / 0.5 0.9997 / 1.0001 × AHEAD 1's time — at parity there
TRITON_SPLIT_AHEAD = 1
#: session 10 (probes-20261202-session10/5decb2e): persistent programs that load and publish their
#: next part while waiting for the current one's siblings (softmax_split_pipe, commit 5decb2e; two
#: parts in registers, 127-128 registers): 76.9 % (16384 values, 16 warps, one program per SM),
#: 83.7 % (8192 × 8 warps, two per SM), 53.2 % (8192 × 16 warps) against 88.5 % registered; removed.
#: session 11 (probes-20261202-session11): program-id order without the ticket (a program polled its
#: siblings at most 4096 times, then computed a missing part's (max, Σ) from x; commit e656a9c):
#: 62.0 / 65.1 % at 1000 / 250 ns backoff against 88.5 % registered beside it; removed. An L2
#: prefetch (prefetch.global.L2 per 128-byte line) of the part 0.5 / 1 / 2 × SM-count tickets later,
#: issued before a program's own load (commit 209105b): 63.6 / 63.4 / 53.7 % against 88.0 %; removed.
#: PTX cache operators on the part's load / store (commit 46aa9a5): .cg/- 88.8 %, -/.cs 88.1 %,
#: .cg/.cs 88.3 %, .ca/.wb 88.6 % against 88.4 % registered: noise; removed.
#: session 13 (probes-20261202-session13/c71b162): warp 0 alone polling the siblings' words (a PTX
#: spin, then a barrier; the other warps loaded the words once) 87.6 / 87.2 % at 1000 / 250 ns;
#: parts × warps 16384 × 8 59.7 %, 16384 × 32 55.1 %, 8192 × 4 84.1 %, 8192 × 8 85.8 %, 32768 × 16
#: 81.1 %, against 88.3 % registered beside them; removed.
#: session 14 (probes-20261202-session14/71e007b): each part's exp(x − m) kept in registers for the
#: write, scaled by exp(m − mt)/Σ after the wait (34 instead of 65 ex2 per program, 63 registers):
#: 81.5 / 81.8 % at 1000 / 500 ns against 88.2 % registered beside them; removed.
#: session 15 (probes-20261203-session15/ba65b77, 52a2d8e): persistent programs (2 per SM, 64-register
#: cap) taking tickets in a loop — no CTA relaunch per part — 89.2 % in one probe and 88.3 % in the
#: next, against 88.2 / 88.4 % registered; 1 per SM 62.4 %; 4 per SM with 8192-value parts 85.9 %;
#: the next ticket taken before the write 86.8 %, or right after the part's loads 64–66 % (Triton
#: broadcasts a scalar atomic's result through a barrier, and the loop spilled): removed.
#: session 28 (probes-20261205-session28/s28a, commit a7ee76c): the part streamed in tiles instead
#: of held (its (max, Σ) by a per-lane online loop with evict_last loads, the exchange, then the part
#: read again from L2 with evict_first and written; ~52 registers, several programs per SM):
#: 77.8 % at 16384-value parts in 4096-wide tiles (8 warps), 74–75 % at 8192 or 4096 / 2048,
#: 63–72 % elsewhere, 65–66 % without the eviction hints, against 88.5 % registered: removed.
#: the interpreter's cost is per loop iteration, not per element: wide tiles there
TRITON_TILE_INTERPRET = 65536


def _warps(block: int) -> int:
    return max(1, min(16, block // 512))


def _triton_views(case, ins, outs):
    return _torch_view(ins["x"], case.dtype), _torch_view(outs["y"], case.dtype)


def _triton_stream(case, fn, interpret: bool = False):
    n = case["n"]
    block = min(TRITON_TILE_INTERPRET if interpret else TRITON_TILE, pow2(n))
    grid = (case["m"],)

    def run(ins, outs):
        x, y = _triton_views(case, ins, outs)
        fn[grid](x, y, n, BLOCK=block, num_warps=_warps(block))

    return run


@kernel("softmax", "triton", "three_pass")
def triton_three_pass(be, case):
    """Program per row: max, Σ exp and write loops over 4096-wide tiles (three reads)."""
    from ops.softmax.softmax_triton import softmax_three_pass

    return _triton_stream(case, softmax_three_pass, be.device.mode == "interpret")


@kernel("softmax", "triton", "online")
def triton_online(be, case):
    """Program per row: per-lane running max and rescaled sums over 4096-wide tiles, then a
    write loop (two reads)."""
    from ops.softmax.softmax_triton import softmax_online

    return _triton_stream(case, softmax_online, be.device.mode == "interpret")


@kernel("softmax", "triton", "fused_row")
def triton_fused_row(be, case):
    """Program per row, the whole row in registers (≤ 16384 values, ≤ 16 warps): one read;
    wider rows: the online kernel."""
    from ops.softmax.softmax_triton import softmax_fused, softmax_online

    n = case["n"]
    if pow2(n) > TRITON_FUSED_MAX:
        return _triton_stream(case, softmax_online, be.device.mode == "interpret")
    block = pow2(n)
    grid = (case["m"],)

    def run(ins, outs):
        x, y = _triton_views(case, ins, outs)
        softmax_fused[grid](x, y, n, BLOCK=block, num_warps=_warps(block))

    return run


def _triton_split_tma(case, fn, chunk, g, nblk, slots, ticket, epoch, phases, kw):
    """softmax_split_tma's launcher: x and y as [M, N/256, 256] tensor descriptors with one part
    per box, built once per pair of buffers (outside the timed launches after the first)."""
    from backends.base import Unsupported
    from backends.triton import tma_descriptors

    m, n = case["m"], case["n"]
    if chunk % 256 or chunk * g != n or chunk > 256 * 256:
        raise Unsupported(f"split_row tma: {n}-value rows in {g} parts of {chunk}: a part must be a "
                          "whole number of 256-value rows of at most 256 of them")
    r = chunk // 256
    descriptors = tma_descriptors([m, n // 256, 256], [n, 256, 1], [1, r, 256])

    def run(ins, outs):
        xd, yd = descriptors(*_triton_views(case, ins, outs))
        e = int(epoch.next())
        for ph in phases:
            fn[(nblk,)](xd, yd, slots, ticket, nblk, e, R=r, PHASE=ph, **kw)

    return run


@kernel("softmax", "triton", "split_row")
def triton_split_row(be, case, part: int = TRITON_PART, ticket_sem: str = "relaxed", warps: int = 0,
                     backoff: int | None = None, tma: bool = False, ahead: float = TRITON_SPLIT_AHEAD,
                     regs: int = 0):
    """G ≤ SM-count programs per row (parts of ≤ 16384 values in registers), partial (max, Σ)
    exchanged in one launch through epoch-tagged words on a GPU (one read); in the interpreter
    the same kernel as a publish launch and a finish launch (see softmax_triton.py). ``part``:
    values per program, ``ticket_sem``: the ticket atomic's memory order, ``warps``: num_warps
    instead of one warp per 512 values, ``backoff``: ns of nanosleep between polls (default
    TRITON_SPLIT_BACKOFF_NS; 0 in the interpreter and on ROCm: no PTX nanosleep); ``tma``
    (probes): softmax_split_tma, the parts moved as TMA boxes (rows whose parts are whole
    multiples of 256 values only; Unsupported otherwise); ``ahead`` (TRITON_SPLIT_AHEAD): while
    its siblings' partials come, each program asks into L2 the part of the ticket ``ahead`` × the
    SM count after its own (softmax_split's AHEAD; compiled GPU only, not with ``tma``); ``regs``
    (probes): a register cap per thread (Triton's ``maxnreg``; 0: none)."""
    import torch

    from ops.softmax.softmax_triton import softmax_split, softmax_split_tma

    m, n = case["m"], case["n"]
    g = max(1, min(_units(be), cdiv(n, part)))
    chunk = cdiv(n, g)
    g = cdiv(n, chunk)
    block = pow2(chunk)
    nblk = m * g
    slots = torch.zeros(2 * nblk, dtype=torch.int64, device=be.dev)
    ticket = torch.zeros(1, dtype=torch.int64, device=be.dev)
    epoch = _Epoch()
    interp = be.device.mode == "interpret"
    ptx = not (interp or torch.version.hip)  # (nanosleep, prefetch: PTX, not in the interpreter or on ROCm)
    if not ptx:
        backoff = 0
    elif backoff is None:
        backoff = TRITON_SPLIT_BACKOFF_NS
    kw = {"G": g, "GP": max(2, pow2(g)), "BLOCK": block, "num_warps": warps or _warps(block),
          "TICKET_SEM": ticket_sem, "BACKOFF": backoff}
    if ahead and ptx and not tma:
        kw["AHEAD"] = int(ahead * _units(be))
    if regs and not interp:
        kw["maxnreg"] = regs
    phases = (1, 2) if interp else (0,)
    if tma:
        return _triton_split_tma(case, softmax_split_tma, chunk, g, nblk, slots, ticket, epoch, phases,
                                 {k: v for k, v in kw.items() if k != "BLOCK"})

    def run(ins, outs):
        x, y = _triton_views(case, ins, outs)
        e = int(epoch.next())
        for ph in phases:
            softmax_split[(nblk,)](x, y, slots, ticket, n, chunk, nblk, e, PHASE=ph, **kw)

    return run


# ---- webgpu ---------------------------------------------------------------------------------

_WGSL = source(__file__, "softmax.wgsl")

#: (dtype, 16-byte units) → (XT, UNIT, UNPACK body, PACK body)
_WGSL_UNITS = {
    ("fp32", True): ("vec4<u32>", 4, "let f = bitcast<vec4<f32>>(w); return V(f.x, f.y, f.z, f.w);",
                     "return bitcast<vec4<u32>>(vec4<f32>(v[0], v[1], v[2], v[3]));"),
    ("fp32", False): ("u32", 1, "return V(bitcast<f32>(w));", "return bitcast<u32>(v[0]);"),
    ("bf16", True): ("vec4<u32>", 8,
                     "return V(bf16_lo(w.x), bf16_hi(w.x), bf16_lo(w.y), bf16_hi(w.y), bf16_lo(w.z), "
                     "bf16_hi(w.z), bf16_lo(w.w), bf16_hi(w.w));",
                     "return vec4<u32>(to_bf16(v[0]) | (to_bf16(v[1]) << 16u), to_bf16(v[2]) | "
                     "(to_bf16(v[3]) << 16u), to_bf16(v[4]) | (to_bf16(v[5]) << 16u), to_bf16(v[6]) | "
                     "(to_bf16(v[7]) << 16u));"),
    ("bf16", False): ("u32", 2, "return V(bf16_lo(w), bf16_hi(w));",
                      "return to_bf16(v[0]) | (to_bf16(v[1]) << 16u);"),
}
#: values per invocation in the register tile
WGSL_VALS = 32


#: split_row on WebGPU: bytes of x per dispatch pair (None: every row in one pair). Batches small
#: enough for L2 (16 MiB) would keep x there for the re-read, but each pair costs a drain of the
#: GPU between compute passes: on the H200 65536×1024 took 618 µs with 16 MiB batches (run
#: f5bb7a) against 470 µs in one pair (run 222415), so one pair is the default; the batch sizes
#: stay a probe configuration (scripts/probe.py). Above the binding limit the windows set the batch.
WGSL_SPLIT_BATCH_BYTES = None
#: split_row on WebGPU: workgroup size, polls of a sibling's slot before a part gives up and
#: leaves its row to the fixup dispatch (of that many workgroups)
WGSL_SPLIT_TPB = 512
WGSL_SPLIT_SPIN = 1 << 14
WGSL_FIXUP_GROUPS = 8


#: split_row's two-dispatch form: units per streamed part at most, on 256 invocations (H200,
#: 4096×131072: 60.6 % in run 3768c1; the same parts on 512 invocations 52.0 %)
WGSL_STREAM_PART = 4096


def _wgsl_parts(nu: int, units: int, most: int) -> tuple[int, int]:
    """(G, chunk): a row of ``nu`` units in G ≤ ``units`` parts of ``chunk`` ≤ ``most`` units where
    ``units`` allows (else G = ``units`` larger parts), the parts balanced."""
    chunk = cdiv(nu, max(1, min(units, cdiv(nu, most))))
    return cdiv(nu, chunk), chunk


def _wgsl_most(be) -> int:
    """The largest power-of-two workgroup (x) this adapter takes."""
    return pow2_floor(min(be.limits["max-compute-invocations-per-workgroup"],
                          be.limits["max-compute-workgroup-size-x"]))


def _webgpu(be, case, mode: str, batch_bytes: int | None = WGSL_SPLIT_BATCH_BYTES,
            one_pass: bool | None = None, spin: int = WGSL_SPLIT_SPIN, tpb_split: int = WGSL_SPLIT_TPB,
            vals: int = WGSL_VALS, poll: str = "rmw"):
    """``one_pass`` (split): the waiting form where a part fits the register tile (default: on
    GPUs; lavapipe runs few workgroups at a time, so most parts would wait SPIN polls and go to
    the fixup dispatch — tests force it there to check both paths); ``spin``: its poll bound;
    ``tpb_split``, ``vals``: workgroup size and values per invocation of a split part; ``poll``:
    "rmw" (atomicOr with 0) or "load" (atomicLoad) reads a sibling's slot — on the H200's Vulkan
    driver the RMW returns far sooner: 4096×131072 75.2 % against 64.4 % with atomicLoad (62.2 %
    with atomicLoad of the own slot too; probes-20261202-session9/22afffc) (probes)."""
    from backends.base import Unsupported

    m, n = case["m"], case["n"]
    if case.dtype == "bf16" and n % 2:
        return _bf16_odd_rows(be, case, lambda c: _webgpu(be, c, mode, batch_bytes, one_pass, spin,
                                                          tpb_split, vals, poll))
    if m * n >= 2**32:
        raise Unsupported("WGSL indexes words with u32: M·N >= 2^32")
    most = _wgsl_most(be)
    if most < 64:
        raise Unsupported(f"softmax.wgsl takes workgroups of 64 invocations or more; this adapter "
                          f"allows {most}")
    tpb_split = min(tpb_split, most)
    vec = 16 // (2 if case.dtype == "bf16" else 4)
    xt, unit, unpack, pack = _WGSL_UNITS[(case.dtype, n % vec == 0)]
    nu = n // unit
    items_max = max(1, (vals if mode == "split" else WGSL_VALS) // unit)
    g, chunk = 1, nu
    if mode == "split":
        units = be.device.compute_units or (DEFAULT_UNITS if be.device.kind == "gpu" else 8)
        # one pass: parts that fit the register tile of tpb_split invocations, G slots in scr
        g, chunk = _wgsl_parts(nu, units, tpb_split * items_max)
        tpb = min(tpb_split, max(64, pow2(cdiv(chunk, items_max))))
        items = cdiv(chunk, tpb)
        fits = items <= items_max and 2 * g <= tpb
        one_pass = fits and (be.device.kind == "gpu" if one_pass is None else one_pass)
        if not one_pass:  # two dispatches: streamed parts on 256 invocations
            (g, chunk), tpb, fits = _wgsl_parts(nu, units, WGSL_STREAM_PART), min(256, most), False
    else:
        tpb = min(1024, most, max(64, pow2(cdiv(nu, items_max))))
        items = cdiv(nu, tpb)
        fits = mode == "fused" and items <= items_max
    defs = {"TPB": tpb, "ITEMS": items if fits else 1, "UNIT": unit, "XT": xt, "UNPACK": unpack,
            "PACK": pack, "FITS": "true" if fits else "false", "SPIN": spin,
            "POLL": f"poll_{poll}"}
    if mode == "split":  # slots (empty: SENT), four control words, pending tickets (see the .wgsl header)
        ctl = 2 * m * g
        words = np.zeros(ctl + 4 + m * g, np.uint32)
        words[:ctl] = 0xFFFFFFFF
    else:  # bound by every entry, used by none of these
        ctl, words = 0, np.zeros(4, np.uint32)
    scratch = be.upload(words)
    prm = np.array([m, nu, chunk, g, 0, ctl, 0, 0], np.uint32)
    if mode == "split":
        k1 = be.compile(_WGSL, "softmax_split_wait" if one_pass else "softmax_part_stats", defs)
        k2 = be.compile(_WGSL, "softmax_split_fixup" if one_pass else "softmax_part_write", defs)
        row_bytes = n * (2 if case.dtype == "bf16" else 4)
        rows = m if not batch_bytes else max(1, min(m, batch_bytes // row_bytes))
        if m * row_bytes <= be.binding_limit():
            wins = [(r0, min(m, r0 + rows), None) for r0 in range(0, m, rows)]
        else:  # x and y above the binding limit: each batch binds its rows' window (rows from 0)
            most = min(rows, be.binding_limit() // row_bytes)
            rows = cdiv(m, cdiv(m, most)) if most else 0  # balanced batches
            if rows == 0 or row_bytes % be.storage_offset_alignment():
                raise Unsupported(f"rows of {row_bytes} bytes in a {m * row_bytes / 2**20:.0f} MiB x: "
                                  f"windows need rows ≤ the binding limit ({be.binding_limit()} bytes) and a "
                                  f"multiple of the offset alignment ({be.storage_offset_alignment()})")
            wins = [(0, min(m, r0 + rows) - r0, (r0 * row_bytes, (min(m, r0 + rows) - r0) * row_bytes))
                    for r0 in range(0, m, rows)]
        # (params, dispatch-1 grid, dispatch-2 grid, window) per batch; rows [first, end) of the binding
        batches = [(np.array([end, nu, chunk, g, first, ctl, 0, 0], np.uint32), be.grid_2d((end - first) * g),
                    (WGSL_FIXUP_GROUPS, 1, 1) if one_pass else be.grid_2d((end - first) * g),
                    win) for first, end, win in wins]

        def run(ins, outs):
            x, y = ins["x"], outs["y"]
            for bp, grid1, grid2, win in batches:
                if win is not None:
                    x, y = be.window(ins["x"], *win), be.window(outs["y"], *win)
                be.launch(k1, grid1, None, [x, y, scratch, bp])
                be.launch(k2, grid2, None, [x, y, scratch, bp])

        run.info = {"one_pass": one_pass, "parts": g}
        # parts that gave up waiting (went to the fixup dispatch), over every launch so far
        run.counters = lambda: {"deferred": int(be.download(scratch)[ctl + 1]), "parts": m * g}
        return run
    k = be.compile(_WGSL, "softmax_three_pass" if mode == "three" else "softmax_rows", defs)
    grid = be.grid_2d(m)
    return lambda ins, outs: be.launch(k, grid, None, [ins["x"], outs["y"], scratch, prm])


_WGSL_BF16_FLAT = source(__file__, "bf16_flat.wgsl")
#: invocations per workgroup of bf16_flat.wgsl's widen / narrow (one bf16 word each)
WGSL_FLAT_WG = 256


def _bf16_odd_rows(be, case, make):
    """bf16 rows of odd length on WebGPU: they start mid-word, and WGSL has no 16-bit stores (a
    word shared by two rows' workgroups would need atomics), so x is widened to fp32 scratch, the
    variant's fp32 kernels (``make(fp32 case)``) run on it, and their fp32 y is rounded back to bf16
    words (bf16_flat.wgsl) — the same fp32 math and round to nearest even as the even-N bf16 path,
    with 8·M·N more bytes of traffic, which the row's GB/s carries (no odd-N case is a bench one)."""
    import dataclasses

    total = case["m"] * case["n"]
    run32 = make(dataclasses.replace(case, dtype="fp32"))
    x32, y32 = be.empty((total,), np.float32), be.empty((total,), np.float32)
    wg = min(WGSL_FLAT_WG, _wgsl_most(be))
    widen, narrow = (be.compile(_WGSL_BF16_FLAT, e, {"WG": wg}) for e in ("widen", "narrow"))
    prm = np.array([total, 0, 0, 0], np.uint32)
    grid = be.grid_2d(cdiv(cdiv(total, 2), wg))

    def run(ins, outs):
        be.launch(widen, grid, None, [ins["x"], x32, prm])
        run32({"x": x32}, {"y": y32})
        be.launch(narrow, grid, None, [y32, outs["y"], prm])

    run.info = {**(getattr(run32, "info", None) or {}), "odd_bf16": "through fp32 scratch (widen, narrow)"}
    if hasattr(run32, "counters"):
        run.counters = run32.counters
    return run


@kernel("softmax", "webgpu", "three_pass")
def webgpu_three_pass(be, case):
    """Workgroup per row: max, Σ exp and write loops (three reads); 16-byte units where N allows."""
    return _webgpu(be, case, "three")


@kernel("softmax", "webgpu", "fused_row")
def webgpu_fused_row(be, case):
    """Workgroup (≤ 1024) per row, ≤ 32 values per invocation in registers: one read; wider rows
    stream online and re-read."""
    return _webgpu(be, case, "fused")


@kernel("softmax", "webgpu", "online")
def webgpu_online(be, case):
    """Workgroup per row: running max and rescaled sum per invocation in one read, then a re-read."""
    return _webgpu(be, case, "online")


@kernel("softmax", "webgpu", "split_row")
def webgpu_split_row(be, case):
    """G workgroups per row, each part in registers: parts publish their (max, Σ), wait (bounded)
    for their siblings' and write (one read); a small fixup dispatch finishes the parts that gave
    up. Where a part does not fit the register tile (or on CPU adapters): dispatch 1 streams each
    part's (max, Σ), dispatch 2 combines them and re-reads the part. One pair for every row, or
    one per window of rows where x is above the storage-binding limit."""
    return _webgpu(be, case, "split")
