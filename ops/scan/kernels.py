"""scan kernels: y = inclusive cumsum(x), one registration per (backend, variant).

Each factory compiles once, allocates its scratch (tile sums per level, look-back flags and the
ticket counter) once, and returns ``run(ins, outs)`` that only enqueues work. Backend packages
are imported inside the factories.

cuda / opencl: ``kogge_stone`` and ``brent_kung`` (the block-scan algorithm inside a three-pass
reduce-then-scan hierarchy) and ``decoupled_lookback`` (single pass). triton:
``reduce_then_scan`` (tl.sum + tl.cumsum) and ``decoupled_lookback``. webgpu:
``reduce_then_scan`` and ``decoupled_lookback`` (bounded waits: no forward-progress guarantee
between workgroups). The cuda/opencl/triton look-back flags carry an epoch taken from a never-reset
ticket counter, so a second launch on the same scratch needs no re-zeroing; WGSL's two flag
arrays alternate between launches, each launch zeroing the other (see the kernel headers).
"""

from __future__ import annotations

import numpy as np

from suite.registry import kernel, source

NP = {"fp32": np.dtype(np.float32), "i32": np.dtype(np.int32)}
#: elements per tile of the three-pass scans (cuda/opencl/webgpu: 256 threads × 4 elements);
#: n = 1_050_001 > 1024² needs three levels
TILE3 = 1024
BLOCK3 = 256


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def level_lengths(n: int, tile: int) -> list[int]:
    """[n, ⌈n/tile⌉, ...] down to the first length that fits one tile: the arrays a
    reduce-then-scan hierarchy scans, level by level."""
    lens = [n]
    while lens[-1] > tile:
        lens.append(cdiv(lens[-1], tile))
    return lens


def _unsupported(msg: str):
    from backends.base import Unsupported

    return Unsupported(msg)


# ---- torch ----------------------------------------------------------------------------------


@kernel("scan", "torch", "cumsum")
def torch_cumsum(be, case):
    """torch.cumsum into the preallocated output (int32 stays int32)."""
    import torch

    dt = {"fp32": torch.float32, "i32": torch.int32}[case.dtype]
    return lambda ins, outs: torch.cumsum(ins["x"], 0, dtype=dt, out=outs["y"])


def _torch_cumsum_into(x, y):
    y.copy_(x.cumsum(0, dtype=y.dtype))


@kernel("scan", "torch", "compiled", test_cases=("n=1025", "n=1025,i32"))
def torch_compiled(be, case):
    """torch.compile (dynamic=False) of ``y.copy_(x.cumsum(0))``: Inductor's scan (an
    associative scan on GPU where it lowers one, else the ATen kernel)."""
    from backends.torch import compile_static

    fn = compile_static(_torch_cumsum_into)
    return lambda ins, outs: fn(ins["x"], outs["y"])


# ---- cuda -----------------------------------------------------------------------------------

_CU = source(__file__, "scan.cu")
#: decoupled look-back (CUDA and OpenCL): 128 threads × 16 vectors of 4 = 8192 elements per tile,
#: 8 flags per look-back window (the best measured on the H200: results/nvidia-h200/scan-probes/)
LOOKBACK_BLOCK, LOOKBACK_ITEMS_VEC, LOOKBACK_WINDOW = 128, 16, 8
#: CUDA: reads of a still-X flag before the block sums that tile's input itself
LOOKBACK_SPIN_LIMIT = 256


@kernel("scan", "cuda", "cupy")
def cuda_cupy(be, case):
    """cupy.cumsum (CUB device scan) on the cuda backend's CuPy arrays."""
    if be.device.mode == "compile":
        raise _unsupported("cupy.cumsum needs CuPy and a CUDA GPU (this device only compiles)")
    import cupy

    dt = NP[case.dtype]
    return lambda ins, outs: cupy.cumsum(ins["x"], dtype=dt, out=outs["y"])


def _three_pass(be, case, reduce_k, scan_k, launch, tile: int):
    """Reduce-then-scan over the levels of ``level_lengths``; ``launch(k, groups, args)``.
    Level l > 0 arrays are scanned in place (the kernels read a tile before writing it).
    ``run.passes``: name → (the level-0 reduce or scan pass alone, its bytes), for timing them
    apart (scripts/scan_probe.py); the scan pass alone reads a carry left by an earlier run."""
    lens = level_lengths(case["n"], tile)
    sums = [be.empty((m,), NP[case.dtype]) for m in lens[1:]]
    top = len(lens) - 1

    def reduce_at(lvl, x):  # x: the array scanned at level lvl
        launch(reduce_k, lens[lvl + 1], [x, sums[lvl], np.int64(lens[lvl])])

    def scan_at(lvl, x, y):
        if lvl == top:  # fits one tile: scanned alone (the dummy carry is never read)
            launch(scan_k, 1, [x, y, x, np.int32(0), np.int64(lens[lvl])])
        else:  # with the carry of the level above, scanned in place already
            launch(scan_k, lens[lvl + 1], [x, y, sums[lvl], np.int32(1), np.int64(lens[lvl])])

    def run(ins, outs):
        arrays = [ins["x"], *sums]
        for lvl in range(top):  # pass 1, every level: tile sums
            reduce_at(lvl, arrays[lvl])
        for lvl in reversed(range(top + 1)):  # the top alone, then back down (pass 3)
            scan_at(lvl, arrays[lvl], outs["y"] if lvl == 0 else arrays[lvl])

    if top:
        run.passes = {"reduce": (lambda ins, outs: reduce_at(0, ins["x"]), 4 * lens[0]),
                      "scan": (lambda ins, outs: scan_at(0, ins["x"], outs["y"]), 8 * lens[0])}
    return run


def _cuda_three_pass(be, case, entry: str):
    defs = {"IS_INT": int(case.dtype == "i32"), "BLOCK": BLOCK3}
    red = be.compile(_CU, "scan_reduce_tiles", defs)
    scan = be.compile(_CU, entry, defs)
    return _three_pass(be, case, red, scan,
                       lambda k, groups, args: be.launch(k, (groups,), (BLOCK3,), args), TILE3)


@kernel("scan", "cuda", "kogge_stone")
def cuda_kogge_stone(be, case):
    """Reduce-then-scan (3 passes per level, 1024-element tiles); block scan: Kogge–Stone over
    256 thread totals in shared memory."""
    return _cuda_three_pass(be, case, "scan_tiles_kogge_stone")


@kernel("scan", "cuda", "brent_kung")
def cuda_brent_kung(be, case):
    """Reduce-then-scan (3 passes per level, 1024-element tiles); block scan: Brent–Kung
    up-sweep / down-sweep in shared memory."""
    return _cuda_three_pass(be, case, "scan_tiles_brent_kung")


def cuda_lookback(be, case, block: int | None = None, items_vec: int | None = None, **defines):
    """The single-pass kernel with its shape (defaults: the module constants) and extra defines
    (LOOKBACK, SPIN_LIMIT, PROBE_NO_LOOKBACK: see scan.cu and scripts/scan_probe.py)."""
    n = case["n"]
    block, items_vec = block or LOOKBACK_BLOCK, items_vec or LOOKBACK_ITEMS_VEC
    n_tiles = cdiv(n, block * 4 * items_vec)
    k = be.compile(_CU, "scan_decoupled_lookback", {"IS_INT": int(case.dtype == "i32"), "BLOCK": block,
                                                     "ITEMS_VEC": items_vec, **defines})
    flags = be.upload(np.zeros(n_tiles, np.uint64))  # zeroed once: the epoch does the rest
    epoch = [0]

    def run(ins, outs):
        epoch[0] += 1  # flags of the previous launch read as X
        be.launch(k, (n_tiles,), (block,), [ins["x"], outs["y"], flags, np.int64(n), np.uint64(epoch[0])])

    return run


@kernel("scan", "cuda", "decoupled_lookback")
def cuda_decoupled_lookback(be, case):
    """Single pass (Merrill & Garland look-back, bounded spin with fallback): 8192-element tiles
    (128 threads × 16 vec4 in coalesced rows, a raking scan in shared memory), warp 0 looks back
    over 8 volatile 64-bit (epoch, status, value) flags per round trip; tile = block index."""
    return cuda_lookback(be, case, LOOKBACK=LOOKBACK_WINDOW, SPIN_LIMIT=LOOKBACK_SPIN_LIMIT)


# ---- triton ---------------------------------------------------------------------------------

#: triton reduce-then-scan tiles (three levels at the 1_050_001 test size, like the others)
TRITON_TILE3 = 1024
#: triton look-back: tile, window and warps. H200, 2^28 fp32 (scripts/scan_probe.py, session 28, s28a):
#: the tile held in registers 68.4 % at 8192 values (4 warps), 74.1 % at 16384; streamed and re-read
#: from L2 (TRITON_LOOKBACK_SUB) 75.3 % at 16384 values in 4096-value steps on 8 warps, 74.3 % at
#: 8192 / 2048 / 4, 66–67 % at 32768 or 2048-value steps of 16384, 63 % at 1024-value steps; s28b:
#: 76.2 / 74.8 % (registered shape) against 74.4 / 74.5 % held, 75.8 % on 4 warps, 72.1 % in 8192-value
#: steps, 52–71 % at 8192 / 4096 / 8, 12288, 24576 or 32768 / 8192 / 16; harness rows (f6dbdd) 73.2 %
#: fp32, 75.0 % i32. H100 (s28c): window 8 / 16 / 32 within 2 %, 4 warps 5 % slower
TRITON_LOOKBACK_TILE, TRITON_WINDOW, TRITON_LOOKBACK_WARPS = 16384, 16, 8
#: the look-back's tile order and wait (scan_decoupled_lookback's PID_ORDER, SPIN, HIDE): ticket
#: order, unbounded waits (a program waits only on tiles of programs already running)
TRITON_ORDER: dict = {}
#: values per step of the streamed look-back (scan_lookback_l2: the tile re-read from L2 after the
#: look-back); 0: the tile held in registers (scan_decoupled_lookback)
TRITON_LOOKBACK_SUB = 4096


@kernel("scan", "triton", "reduce_then_scan")
def triton_reduce_then_scan(be, case):
    """tl.sum tile sums, the same scheme on the sums level by level, then tl.cumsum per tile plus
    the carry from the level above."""
    from ops.scan.scan_triton import scan_reduce_tiles, scan_tiles

    def launch(k, groups, args):
        x, y, *rest = args
        if k is scan_reduce_tiles:
            scan_reduce_tiles[(groups,)](x, y, int(rest[0]), BLOCK=TRITON_TILE3, num_warps=4)
        else:
            carry, has_carry, m = rest
            scan_tiles[(groups,)](x, y, carry, int(m), BLOCK=TRITON_TILE3, HAS_CARRY=bool(has_carry),
                                  num_warps=4)

    return _three_pass(be, case, scan_reduce_tiles, scan_tiles, launch, TRITON_TILE3)


def triton_lookback(be, case, tile: int | None = None, window: int | None = None,
                    num_warps: int | None = None, sub: int | None = None, **order):
    """The single-pass Triton kernel with its shape (defaults: the module constants); ``order``
    (probes; default TRITON_ORDER): PID_ORDER, SPIN, HIDE of scan_decoupled_lookback; ``sub`` > 0
    (default TRITON_LOOKBACK_SUB): scan_lookback_l2 instead, the tile streamed ``sub`` values at a
    time and re-read from L2 after the look-back (SPIN and HIDE as there; ticket order)."""
    from ops.scan.scan_triton import scan_decoupled_lookback, scan_lookback_l2

    n = case["n"]
    tile, window = tile or TRITON_LOOKBACK_TILE, window or TRITON_WINDOW
    n_tiles = cdiv(n, tile)
    flags = be.upload(np.zeros(n_tiles, np.int64))  # zeroed once: the epoch does the rest
    ticket = be.upload(np.zeros(1, np.int64))
    is_float = case.dtype == "fp32"
    kw = {**TRITON_ORDER, **order}

    sub = TRITON_LOOKBACK_SUB if sub is None else sub
    if sub:
        fn, shape = scan_lookback_l2, {"CHUNK": tile, "SUB": min(sub, tile)}
        kw.pop("PID_ORDER", None)
    else:
        fn, shape = scan_decoupled_lookback, {"BLOCK": tile}

    def run(ins, outs):
        fn[(n_tiles,)](ins["x"], outs["y"], flags, ticket, n, n_tiles, WINDOW=window, IS_FLOAT=is_float,
                       num_warps=num_warps or TRITON_LOOKBACK_WARPS, **shape, **kw)

    return run


def triton_lookback_tma(be, case, tile: int = 16384, window: int | None = None, num_warps: int = 16):
    """scan_lookback_tma (probes): ``tile`` values per [tile/256, 256] TMA box; n a multiple of 256
    (Unsupported otherwise). Descriptors built once per pair of buffers."""
    from backends.triton import tma_descriptors
    from ops.scan.scan_triton import scan_lookback_tma

    n = case["n"]
    if n % 256 or tile % 256 or tile > 256 * 256:
        raise _unsupported(f"lookback tma: n = {n} and a {tile}-value tile must be whole 256-value rows "
                           "(at most 256 of them per tile)")
    r, n_tiles = tile // 256, cdiv(n, tile)
    flags = be.upload(np.zeros(n_tiles, np.int64))
    ticket = be.upload(np.zeros(1, np.int64))
    descriptors = tma_descriptors([n // 256, 256], [256, 1], [r, 256])

    def run(ins, outs):
        xd, yd = descriptors(ins["x"], outs["y"])
        scan_lookback_tma[(n_tiles,)](xd, yd, flags, ticket, n, n_tiles, R=r, WINDOW=window or TRITON_WINDOW,
                                      IS_FLOAT=case.dtype == "fp32", num_warps=num_warps)

    return run


@kernel("scan", "triton", "decoupled_lookback")
def triton_decoupled_lookback(be, case):
    """Single pass over 16384-value tiles (8 warps): the tile's sum from 4096-value loads, look-back
    over a 16-flag window with volatile loads (64-bit (epoch, status, value) flags, a ticket
    counter), then the tile read again — from L2, where the first read left it — and scanned
    with tl.cumsum 4096 values at a time (``triton_lookback``; scan_triton.py: scan_lookback_l2)."""
    return triton_lookback(be, case)


# ---- opencl ---------------------------------------------------------------------------------

_CL = source(__file__, "scan.cl")


def _opencl_three_pass(be, case, entry: str):
    defs = {"IS_INT": int(case.dtype == "i32"), "BLOCK": BLOCK3}
    red = be.compile(_CL, "scan_reduce_tiles", defs)
    scan = be.compile(_CL, entry, defs)
    return _three_pass(be, case, red, scan,
                       lambda k, groups, args: be.launch(k, (groups,), (BLOCK3,), args), TILE3)


@kernel("scan", "opencl", "kogge_stone")
def opencl_kogge_stone(be, case):
    """Reduce-then-scan (3 passes per level, 1024-element tiles); work-group scan: Kogge–Stone
    over 256 work-item totals in local memory."""
    return _opencl_three_pass(be, case, "scan_tiles_kogge_stone")


@kernel("scan", "opencl", "brent_kung")
def opencl_brent_kung(be, case):
    """Reduce-then-scan (3 passes per level, 1024-element tiles); work-group scan: Brent–Kung
    up-sweep / down-sweep in local memory."""
    return _opencl_three_pass(be, case, "scan_tiles_brent_kung")


def opencl_lookback(be, case, block: int | None = None, items_vec: int | None = None,
                    window: int | None = None):
    """The single-pass OpenCL kernel with its shape (defaults: the module constants)."""
    if "cl_khr_int64_base_atomics" not in be.device.features:
        raise _unsupported("decoupled_lookback needs cl_khr_int64_base_atomics (64-bit flags and ticket)")
    n = case["n"]
    block, items_vec = block or LOOKBACK_BLOCK, items_vec or LOOKBACK_ITEMS_VEC
    n_tiles = cdiv(n, block * 4 * items_vec)
    k = be.compile(_CL, "scan_decoupled_lookback", {
        "IS_INT": int(case.dtype == "i32"), "BLOCK": block, "ITEMS_VEC": items_vec,
        "LOOKBACK": window or LOOKBACK_WINDOW, "LOOKBACK_KERNEL": 1})
    flags = be.upload(np.zeros(n_tiles, np.uint64))
    ticket = be.upload(np.zeros(1, np.uint64))

    return lambda ins, outs: be.launch(k, (n_tiles,), (block,),
                                       [ins["x"], outs["y"], flags, ticket, np.int64(n), np.int64(n_tiles)])


@kernel("scan", "opencl", "decoupled_lookback")
def opencl_decoupled_lookback(be, case):
    """Single pass: 8192-element tiles (128 work-items × 16 vec4 in coalesced rows, a raking scan
    in local memory), look-back by one work-item over 8 flags per round trip; 64-bit flags
    (cl_khr_int64_base_atomics), tiles claimed by a ticket counter."""
    return opencl_lookback(be, case)


# ---- webgpu ---------------------------------------------------------------------------------

_WGSL = source(__file__, "scan.wgsl")
#: vec4s per invocation of the WGSL three-pass scan (tile = 4·256·WEBGPU_ITEMS_VEC elements)
WEBGPU_ITEMS_VEC = 4


#: the WGSL look-back: vec4s per invocation, window (predecessors read at once, ≤ BLOCK3), window
#: reads an unpublished predecessor gets before its sum is taken from x, and the poll (see scan.wgsl)
WEBGPU_LOOKBACK_ITEMS, WEBGPU_WINDOW, WEBGPU_SPIN, WEBGPU_POLL = 4, 32, 1 << 12, "rmw"
#: tests only: tiles j with j & WEBGPU_HIDE != 0 are never seen published (their sums come from x)
WEBGPU_HIDE = 0


def _wgsl_defs(case, n: int, items: int, window: int = WEBGPU_WINDOW, spin: int = WEBGPU_SPIN,
               poll: str = WEBGPU_POLL, hide: int = WEBGPU_HIDE) -> dict:
    if n >= 2**32:
        raise _unsupported(f"WGSL kernels index with u32: n = {n} >= 2^32")
    ntot = BLOCK3 * items
    return {"T": {"fp32": "f32", "i32": "i32"}[case.dtype], "BLOCK": BLOCK3, "ITEMS": items,
            "NTOT_PAD": ntot + ntot // 32, "WINDOW": min(window, BLOCK3), "SPIN": max(1, spin),
            "POLL": f"poll_{poll}", "HIDE": hide}


def webgpu_three_pass(be, case, items: int | None = None):
    """Reduce-then-scan with ``items`` vec4s per invocation (default WEBGPU_ITEMS_VEC)."""
    n = case["n"]
    items = items or WEBGPU_ITEMS_VEC
    ntot = BLOCK3 * items
    defs = _wgsl_defs(case, n, items)
    red = be.compile(_WGSL, "scan_reduce_tiles", defs)
    scan = be.compile(_WGSL, "scan_tiles", defs)
    lens = level_lengths(n, 4 * ntot)
    top = len(lens) - 1
    sums = [be.empty((m,), NP[case.dtype]) for m in lens[1:]]  # sums[l-1]: tile sums of level l-1
    scanned = [be.empty((m,), NP[case.dtype]) for m in lens[1:]]  # their inclusive scans
    dummy = be.empty((4,), NP[case.dtype])  # the top level's carry binding (never read)
    u32 = lambda *v: np.array(v, dtype=np.uint32)  # noqa: E731
    src = lambda ins, lvl: ins["x"] if lvl == 0 else sums[lvl - 1]  # noqa: E731 - scanned at lvl
    dst = lambda outs, lvl: outs["y"] if lvl == 0 else scanned[lvl - 1]  # noqa: E731

    def step(kern, groups: int, buffers, params):  # buffers(ins, outs) -> the bindings
        grid = be.grid_2d(groups)
        return lambda ins, outs: be.launch(kern, grid, None, [*buffers(ins, outs), params])

    # (name, launch, bytes) in launch order: tile sums up the levels, the top alone, scans down
    steps = [(f"reduce L{lvl}", step(red, lens[lvl + 1], lambda i, o, lvl=lvl: [src(i, lvl), sums[lvl]],
                                     u32(lens[lvl], lens[lvl + 1])), 4 * lens[lvl])
             for lvl in range(top)]
    steps.append((f"scan L{top} (top)", step(scan, 1, lambda i, o: [src(i, top), dst(o, top), dummy],
                                             u32(lens[top], 1, 0)), 8 * lens[top]))
    steps += [(f"scan L{lvl}", step(scan, lens[lvl + 1],
                                    lambda i, o, lvl=lvl: [src(i, lvl), dst(o, lvl), scanned[lvl]],
                                    u32(lens[lvl], lens[lvl + 1], 1)), 8 * lens[lvl])
              for lvl in reversed(range(top))]

    def run(ins, outs):
        for _, launch, _ in steps:
            launch(ins, outs)

    run.passes = {name: (launch, nbytes) for name, launch, nbytes in steps}
    return run


@kernel("scan", "webgpu", "reduce_then_scan")
def webgpu_reduce_then_scan(be, case):
    """Three passes per level over 4096-element tiles (4 vec4s per invocation, a raking scan in
    workgroup memory); each level's scan goes to its own buffer (WebGPU forbids a buffer bound
    both read and written)."""
    return webgpu_three_pass(be, case)


def webgpu_lookback(be, case, items: int | None = None, **kw):
    """The single-pass WGSL scan with ``items`` vec4s per invocation (default
    WEBGPU_LOOKBACK_ITEMS); ``kw``: window, spin, poll, hide (default: the module constants)."""
    n = case["n"]
    items = items or WEBGPU_LOOKBACK_ITEMS
    kw = {"window": WEBGPU_WINDOW, "spin": WEBGPU_SPIN, "poll": WEBGPU_POLL, "hide": WEBGPU_HIDE, **kw}
    kern = be.compile(_WGSL, "scan_lookback", _wgsl_defs(case, n, items, **kw))
    groups = cdiv(n, 4 * BLOCK3 * items)
    flags = [be.upload(np.zeros(4 * groups + 1, np.uint32)) for _ in range(2)]  # zeroed once
    grid = be.grid_2d(groups)
    params = np.array([n, groups], np.uint32)
    parity = [0]

    def run(ins, outs):
        k = parity[0]
        parity[0] ^= 1
        be.launch(kern, grid, None, [ins["x"], outs["y"], flags[k], flags[k ^ 1], params])

    return run


@kernel("scan", "webgpu", "decoupled_lookback")
def webgpu_decoupled_lookback(be, case):
    """Single pass over 4096-element tiles (4 vec4s per invocation; scan_tiles' raking scan),
    taken in start order by a ticket; look-back over 32 predecessors at once through two-word
    READY-tagged values; a predecessor still unpublished after 4096 window reads is summed from x
    by the waiting workgroup (no forward-progress assumption); flag arrays alternate per launch."""
    return webgpu_lookback(be, case)
