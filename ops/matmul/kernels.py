"""matmul kernels: C = A·B, one registration per (backend, variant).

The ladder, the same algorithm in each dialect: ``naive`` (one thread per C element, K loop from
global memory), ``tiled_shared`` (square tiles of A and B staged through shared/local/workgroup
memory), ``register_blocked`` (each thread a 2-D register tile of C, vector loads, fp32 FMA),
then the tensor-core variants where the backend reaches them: CUDA ``mma_sync`` (inline PTX
mma.sync.m16n8k16, ldmatrix, cp.async pipeline), ``wgmma`` (sm_90a: wgmma.mma_async from
swizzled shared memory) and ``wgmma_tma`` (the same fed by TMA from a producer warpgroup) and
Triton ``grouped`` (tl.dot, grouped program order, autotuned) and ``persistent`` (one program per
SM walking tiles, TMA descriptors where the Triton build has them). torch: ``matmul`` (cuBLAS /
the CPU BLAS) with TF32 enabled exactly for tf32 cases.

Precisions (``case.prec``): fp32 strict, tf32, fp16, bf16 (fp32 accumulation). bf16 arrives as
raw 16-bit words (uint16 buffers; torch/Triton view them as torch.bfloat16). A kernel that lacks
a precision raises ``Unsupported`` with the reason (OpenCL C and WGSL have no tensor-core path:
no tf32 there).
"""

from __future__ import annotations

from backends.base import Unsupported
from suite.registry import kernel, source


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _need(case, precisions: tuple[str, ...], why: str) -> None:
    if case.prec not in precisions:
        raise Unsupported(f"{case.prec}: {why}")


def _torch_view(t, dtype: str):
    """A storage tensor as the torch dtype it holds (bf16 words → torch.bfloat16)."""
    import torch

    return t.view(torch.bfloat16) if dtype == "bf16" else t


def _torch_dtype(case):
    import torch

    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[case.dtype]


# ---- torch ----------------------------------------------------------------------------------


@kernel("matmul", "torch", "matmul")
def torch_matmul(be, case):
    """torch.matmul into the preallocated C (cuBLAS on NVIDIA); TF32 only for tf32 cases. The
    fp16/bf16 "reduced precision reduction" (cuBLAS split-K summing partials in 16 bits, on by
    default) is turned off: the spec asks for fp32 accumulation, and with it on the 4097³ bf16
    product fails the check (seen on the H200)."""
    import torch

    tf32 = case.prec == "tf32"
    if tf32 and not be.gpu:
        raise Unsupported("tf32: no TF32 matmul on the CPU")

    def run(ins, outs):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        a, b, c = (_torch_view(ins["A"], case.dtype), _torch_view(ins["B"], case.dtype),
                   _torch_view(outs["C"], case.dtype))
        torch.matmul(a, b, out=c)

    return run


# ---- cuda: tensor cores ---------------------------------------------------------------------

_MMA_CU = source(__file__, "matmul_mma.cu")
#: the block tile of matmul_mma.cu: 128 × BN, one 64×64 warp tile per 64×64 of it (BN 256: 8
#: warps, one block per SM; BN 128: 4 warps, MINB 2 asks for two blocks per SM)
_MMA_BM = 128
#: (BK, STAGES, BN, MINB): 128×128 tiles, K steps of 32 in a 3-stage ring (48 KiB of shared
#: memory per block, so it fits every sm_80+ part), two blocks per SM. 8192³ bf16 on the H200
#: (scripts/probe.py, one process, 2026-12-01): 397 TFLOP/s; BN 256 (one 8-warp block per SM)
#: with BK 64 × 3 stages (144 KiB) 386, BK 64 × 4 380, BK 32 × 4 332; BN 128 with BK 64 × 3 369.
#: Session 8 (probes-20261201-session8, each probe in one process, the first row the coolest):
#: PIPE (fragments double-buffered across tiles) with BK 64 × 3 stages: 2.647 ms hot, 2.595 ms
#: per launch in a back-to-back batch, against 2.824 / 2.784 ms for (32, 3, 128, 2) without PIPE
#: (which was timed first: its cold median, 2.530 against 2.574 ms, ran at cooler clocks).
#: BK 64 × 3 stages of 128×128 tiles (96 KiB per block, two blocks per SM need 192 KiB: sm_80 /
#: sm_90; smaller parts fit one block per SM).
_MMA_SHAPE = (64, 3, 128, 2)
#: Session 9 (probes-20261202-session9, PIPE, under the 700 W cap): BN 256 tiles (one 8-warp block
#: per SM, 144 KiB) ran at higher clocks for the same power — hot 2.538 / 2.635 ms (bf16 / fp16
#: 8192³) against 2.672 / 2.753 for _MMA_SHAPE, back-to-back batches 2.525 / 2.580 against 2.618 /
#: 2.730 (its soaked cold medians came second in the process, warmer: 2.639 / 2.673 against 2.329 /
#: 2.580). Taken where there are at least _MMA_BIG_WAVES waves of its tiles (fewer, larger blocks
#: would leave SMs idle) and the device's shared memory holds it; else _MMA_SHAPE, else
#: _MMA_SMALL (48 KiB: every sm_80+ part).
_MMA_SHAPE_BIG = (64, 3, 256, 1)
_MMA_BIG_WAVES = 8
_MMA_SMALL = (32, 3, 128, 2)


def _mma_smem(bk: int, stages: int, bn: int) -> int:
    return stages * (_MMA_BM * bk + bk * bn) * 2


def mma_shape(m: int, n: int, sms: int, smem: int) -> tuple[int, int, int, int]:
    """The registered (BK, STAGES, BN, MINB) of mma_sync for an M×N product on a device of ``sms``
    SMs whose blocks may take ``smem`` bytes of shared memory (see _MMA_SHAPE_BIG)."""
    big = cdiv(m, _MMA_BM) * cdiv(n, _MMA_SHAPE_BIG[2]) >= _MMA_BIG_WAVES * sms
    for shape in ((_MMA_SHAPE_BIG,) if big else ()) + (_MMA_SHAPE, _MMA_SMALL):
        if _mma_smem(*shape[:3]) <= smem:
            return shape
    return _MMA_SMALL


@kernel("matmul", "cuda", "mma_sync")
def cuda_mma_sync(be, case, shape: tuple[int, int, int, int] | None = None, even: bool = True,
                  pipe: bool = True):
    """Tensor cores through inline PTX mma.sync.m16n8k16 (fp16/bf16, fp32 accumulation):
    128×256×64 block tiles of 8 warps, one block per SM (144 KiB ring) for large products, else
    128×128×64 tiles of 4 warps, two blocks per SM (96 KiB; see mma_shape), a 3-stage cp.async
    ring in dynamic shared memory, ldmatrix from XOR-swizzled tiles into fragments double-buffered
    across k16 steps and tiles (PIPE) (``shape``: (BK, STAGES, BN, MINB); probes vary it). Where
    the tiles divide M, N and K the copies run without bounds from pointers advanced per tile
    (EVEN; ``even=False``: the bounded copies, for probes; ``pipe=False``: without PIPE, for
    probes). Rows whose stride is not 16 bytes (K or N not a multiple of 8) are copied into padded
    buffers inside the timed call."""
    _need(case, ("fp16", "bf16"), "mma_sync is the fp16/bf16 path (fp32: register_blocked; tf32 on tensor "
                                   "cores: Triton grouped/persistent, no CUDA kernel yet)")
    be.require_mma_sync()
    m, n, k = case["m"], case["n"], case["k"]
    bk, stages, bn, minb = shape or mma_shape(m, n, be.device.compute_units or 132, be.smem_per_block())
    exact = m % _MMA_BM == 0 and n % bn == 0 and k % bk == 0
    defs = {"BF16": int(case.dtype == "bf16"), "STAGES": stages, "BK": bk, "BN": bn, "MINB": minb,
            "EVEN": int(even and exact), "PIPE": int(pipe)}
    fn = be.compile(_MMA_CU, "matmul_mma_sync", defs)
    # 2·BN/64 warps = BN threads
    return _padded_run(be, case, fn, (cdiv(m, _MMA_BM) * cdiv(n, bn),), (bn,), _mma_smem(bk, stages, bn))


def _padded_run(be, case, fn, groups: tuple, block: tuple, smem: int, operands=None):
    """``run`` of a tensor-core kernel that reads 16-byte rows (K and N multiples of 8): A, B and
    C as they are where they qualify, else bit copies into zero-padded buffers inside the timed
    call (``run.info["padded"]``). The kernel takes ``operands(a, b, kp, np_)`` (default: A and B
    themselves), then C and (M, N, K) with N and K padded."""
    import numpy as np

    m, n, k = case["m"], case["n"], case["k"]
    kp, np_ = cdiv(k, 8) * 8, cdiv(n, 8) * 8
    dims = [np.int32(m), np.int32(np_), np.int32(kp)]
    operands = operands or (lambda a, b, kp, np_: [a, b])

    def launch(a, b, c):
        be.launch(fn, groups, block, [*operands(a, b, kp, np_), c, *dims], shared_mem=smem)

    if (kp, np_) == (k, n) or be.device.mode == "compile":
        return lambda ins, outs: launch(ins["A"], ins["B"], outs["C"])
    import cupy

    ap = cupy.zeros((m, kp), np.uint16)  # zero padding, written once
    bp = cupy.zeros((kp, np_), np.uint16)
    cp = cupy.empty((m, np_), np.uint16)

    def run(ins, outs):  # bit copies (fp16 arrays are viewed as words, not converted)
        ap[:, :k] = ins["A"].view(np.uint16)
        bp[:k, :n] = ins["B"].view(np.uint16)
        launch(ap, bp, cp)
        outs["C"].view(np.uint16)[...] = cp[:, :n]

    run.info = {"padded": True}
    return run


_WGMMA_CU = source(__file__, "matmul_wgmma.cu")
#: matmul_wgmma.cu's tiles: WGS warpgroups of m64n256k16 (BM = 64·WGS rows, 256 columns, K steps of
#: 64), and its ring depths: 4 stages (two tiles in flight ahead of the one computed, one still read
#: by the previous group), else 3. H200, 8192³ bf16 (probes-20261202-session10): WGS 2, 4 stages hot
#: 2.106 ms, 3 stages 2.326 ms
_WGMMA_BN, _WGMMA_BK = 256, 64
_WGMMA_SHAPES = ((2, 4), (2, 3))  # (WGS, STAGES), first that fits the device's shared memory


def _wgmma_smem(wgs: int, stages: int) -> int:
    return stages * (64 * wgs + _WGMMA_BN) * _WGMMA_BK * 2 + 1024  # + the ring's 1024-byte alignment


@kernel("matmul", "cuda", "wgmma")
def cuda_wgmma(be, case, shape: tuple[int, int] | None = None, bounded: bool = False, ws: bool = False,
               tma: bool = False):
    """Hopper tensor cores through inline PTX wgmma.mma_async.m64n256k16 (sm_90a; fp16/bf16, fp32
    accumulation): 128×256 block tiles of two warpgroups, both operands read by the tensor cores
    from a cp.async ring in shared memory (128-byte-swizzle descriptors, B N-major through the
    transpose flag), one block per SM (``shape``: (warpgroups, stages); probes vary it). Where
    the tiles divide M, N and K the copies run without bounds (EVEN; ``bounded=True``: the bounded
    copies, for probes; ``ws=True``: matmul_wgmma_ws, a producer warpgroup handing stages to the
    two consumer warpgroups through mbarriers, for probes; ``tma=True``: matmul_wgmma_tma, the same
    with TMA loads, the ``wgmma_tma`` variant). Padded like mma_sync where K or N is not a multiple
    of 8. Other architectures: unsupported (the source asks for -arch=sm_90a)."""
    _need(case, ("fp16", "bf16"), "wgmma is the fp16/bf16 path on sm_90a (fp32: register_blocked)")
    m, n = case["m"], case["n"]
    smem_max = be.smem_per_block()
    shape = shape or next((sh for sh in _WGMMA_SHAPES if _wgmma_smem(*sh) <= smem_max), None)
    if shape is None:
        raise Unsupported(f"wgmma needs {_wgmma_smem(*_WGMMA_SHAPES[-1])} bytes of shared memory per "
                          f"block; the device allows {smem_max}")
    wgs, stages = shape
    defs = {"BF16": int(case.dtype == "bf16"), "WGS": wgs, "STAGES": stages}
    groups = (cdiv(m, 64 * wgs) * cdiv(n, _WGMMA_BN),)
    if ws or tma:  # + one producer warpgroup; + full/empty mbarriers (8 bytes each) per stage
        if wgs != 2:
            raise ValueError(f"the warp-specialised wgmma kernels take 2 consumer warpgroups, not {wgs}")
        block, smem = (128 * (wgs + 1),), _wgmma_smem(wgs, stages) + 16 * stages
        if tma:
            fn = be.compile(_WGMMA_CU, "matmul_wgmma_tma", defs, options=("-arch=sm_90a",))
            return _padded_run(be, case, fn, groups, block, smem, _tma_operands(be, case))
        fn = be.compile(_WGMMA_CU, "matmul_wgmma_ws", defs, options=("-arch=sm_90a",))
        return _padded_run(be, case, fn, groups, block, smem)
    even = not bounded and m % (64 * wgs) == 0 and n % _WGMMA_BN == 0 and case["k"] % _WGMMA_BK == 0
    fn = be.compile(_WGMMA_CU, "matmul_wgmma", {**defs, "EVEN": int(even)}, options=("-arch=sm_90a",))
    return _padded_run(be, case, fn, groups, (128 * wgs,), _wgmma_smem(wgs, stages))


@kernel("matmul", "cuda", "wgmma_tma")
def cuda_wgmma_tma(be, case):
    """wgmma (the same 128×256 tiles, two consumer warpgroups, 4-stage ring) fed by TMA: one thread
    of a third, producer warpgroup loads each stage with five cp.async.bulk.tensor copies through
    tensor maps (128-byte swizzle, zeros past the edges, so no bounds in the kernel) and hands it
    over through full/empty mbarriers: no block-wide barrier per K tile. The maps are made on the
    host for the buffers of the first call (driver API); rows not 16-byte aligned are padded."""
    return cuda_wgmma(be, case, tma=True)


def _tma_operands(be, case):
    """``operands`` for _padded_run of matmul_wgmma_tma: A's and B's tensor maps
    (backends.cuda.tensor_map_2d: 64×128 boxes of A, 64×64 of B) in one device buffer, made once
    per pair of buffers (none in compile-only mode: the launch refuses before a map is needed)."""
    import numpy as np

    maps: dict[tuple[int, int], object] = {}
    bf16 = case.dtype == "bf16"

    def operands(a, b, kp, np_):
        if be.device.mode == "compile":
            return [None]
        key = (a.data.ptr, b.data.ptr)
        if key not in maps:
            import cupy

            from backends.cuda import tensor_map_2d

            map_a = tensor_map_2d(a.data.ptr, bf16, case["m"], kp, 128, 64)  # 64 (k) × 128 (m) boxes
            map_b = tensor_map_2d(b.data.ptr, bf16, kp, np_, 64, 64)  # 64 (n) × 64 (k) boxes
            maps[key] = cupy.asarray(np.frombuffer(map_a + map_b, np.uint8))
        return [maps[key]]

    return operands


_SPLITK_CU = source(__file__, "matmul_splitk.cu")
#: matmul_splitk.cu's fixed tile: 128 columns per strip, BK 64, 4-stage ring, 4 warps
_SPLITK_BN, _SPLITK_BK, _SPLITK_STAGES = 128, 64, 4
#: its dynamic shared memory: the ring of 16-row A and BK-row B tiles (72 KiB)
_SPLITK_SMEM = _SPLITK_STAGES * (16 * _SPLITK_BK + _SPLITK_BK * _SPLITK_BN) * 2


def splitk_geometry(n: int, k: int, sms: int, smem_per_block: int) -> tuple[int, int]:
    """(column strips, K splits) of matmul_splitk: as many splits as fill one wave of blocks
    (SMs × the blocks whose rings fit an SM's shared memory — the per-block opt-in limit stands in
    for the per-SM one), at least one K tile each, and none empty."""
    strips, k_tiles = cdiv(n, _SPLITK_BN), cdiv(k, _SPLITK_BK)
    per_sm = max(1, smem_per_block // (_SPLITK_SMEM + 1024))
    splits = max(1, min(k_tiles, sms * per_sm // strips))
    return strips, cdiv(k_tiles, cdiv(k_tiles, splits))


@kernel("matmul", "cuda", "splitk")
def cuda_splitk(be, case):
    """Skinny products (M ≤ 16, LLM decode), bandwidth-bound: B streamed once through a 4-stage
    cp.async ring, A's rows zero-padded to one m16 tile on tensor cores (mma.sync), K split to fill
    one wave of blocks (device-queried SMs and shared memory); the partials of a column strip are
    summed in split order by its last block (one launch, deterministic)."""
    import numpy as np

    _need(case, ("fp16", "bf16"), "splitk is a tensor-core path for fp16/bf16")
    be.require_mma_sync()
    m, n, k = case["m"], case["n"], case["k"]
    if m > 16:
        raise Unsupported(f"splitk is the skinny path (M ≤ 16), M = {m}: mma_sync")
    if k % 8 or n % 8:
        raise Unsupported(f"splitk streams 16-byte rows: K ({k}) and N ({n}) must be multiples of 8")
    strips, sp = splitk_geometry(n, k, be.device.compute_units or 132, be.smem_per_block())
    defs = {"BF16": int(case.dtype == "bf16"), "STAGES": _SPLITK_STAGES}
    fn = be.compile(_SPLITK_CU, "matmul_splitk", defs)
    ws = be.empty((sp * 16 * strips * _SPLITK_BN,), np.float32)
    cnt = be.empty((strips,), np.uint32)
    be.fill_bytes(cnt, 0)  # each launch's last block per strip sets its counter back to 0
    dims = [np.int32(m), np.int32(n), np.int32(k)]

    def run(ins, outs):
        be.launch(fn, (strips, sp), (128,), [ins["A"], ins["B"], outs["C"], ws, cnt, *dims],
                  shared_mem=_SPLITK_SMEM)

    run.info = {"splits": sp, "strips": strips}
    return run


# ---- triton ---------------------------------------------------------------------------------

#: autotune configs per kind of case: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages); the
#: winner and the tuning time are recorded per device in the row (``kernel_info``)
_TRITON_CONFIGS = {
    "tensor": [(128, 256, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4), (128, 128, 64, 4, 4)],
    "tf32": [(128, 128, 32, 8, 3), (128, 256, 32, 8, 3), (128, 128, 32, 4, 4)],
    "fma": [(128, 128, 32, 8, 3), (128, 128, 16, 8, 4), (128, 64, 32, 4, 4)],
    # skinny M (≤ 64): memory-bound, many narrow column panels with long K steps in flight
    "skinny": [(16, 64, 256, 4, 4), (16, 32, 512, 4, 3), (16, 128, 128, 4, 4), (16, 32, 256, 2, 6),
               (16, 64, 512, 4, 3), (16, 128, 256, 8, 3), (16, 64, 128, 4, 6)],
}
#: per kind, for parts whose shared memory holds none of the above (48 KiB of tiles each)
_TRITON_SMALL = {"tensor": [(128, 128, 32, 4, 3)], "tf32": [(64, 64, 32, 4, 3)], "fma": [(64, 64, 32, 4, 3)],
                 "skinny": [(16, 64, 128, 4, 3)]}
#: below this M·N·K no autotuning (test shapes): the first config of the kind that fits is used
_TRITON_TUNE_MIN = 2**30
#: one small config for the interpreter (no autotuning on the CPU)
_TRITON_INTERPRET = (64, 64, 64, 4, 1)


def _triton_kind(case) -> str:
    if case["m"] <= 64 and case.prec in ("bf16", "fp16"):
        return "skinny"
    return {"fp32": "fma", "tf32": "tf32"}.get(case.prec, "tensor")


def _triton_precision(case) -> str:
    return "tf32" if case.prec == "tf32" else "ieee"


def _padded_operands(be, case, align_elems: int):
    """A/B/C storage padded so that every row stride is a multiple of ``align_elems`` (16 bytes):
    returns (prepare, finish, (A, B, C) as torch tensors to launch on) where ``prepare(ins,
    outs)`` copies the operands into the padded buffers (zero padding, written once here) and
    ``finish`` copies C back; both run inside the timed call. Aligned shapes need no copies."""
    import torch

    m, n, k = case["m"], case["n"], case["k"]
    kp, np_ = cdiv(k, align_elems) * align_elems, cdiv(n, align_elems) * align_elems
    if (kp, np_) == (k, n):
        return None, None, None
    dt = _torch_dtype(case)
    ap = torch.zeros((m, kp), dtype=dt, device=be.dev)
    bp = torch.zeros((kp, np_), dtype=dt, device=be.dev)
    cp = torch.empty((m, np_), dtype=dt, device=be.dev)

    def prepare(ins, outs):
        ap[:, :k].copy_(_torch_view(ins["A"], case.dtype))
        bp[:k, :n].copy_(_torch_view(ins["B"], case.dtype))

    def finish(ins, outs):
        _torch_view(outs["C"], case.dtype).copy_(cp[:, :n])

    return prepare, finish, (ap, bp, cp)


def _tile_smem(case, c_tile: float = 0.0):
    """Shared memory of a (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) config: ``stages`` A and B
    tiles (``c_tile``: and that fraction of a C tile, the persistent kernel's store buffer)."""
    item = 4 if case.prec in ("fp32", "tf32") else 2
    return lambda c: (c[4] * (c[0] * c[2] + c[2] * c[1]) + int(c_tile * c[0] * c[1])) * item


def _autotuned(be, fn, case, key, pre_hook=None, c_tile: float = 0.0):
    """``fn`` autotuned over the configs of the case's kind that fit the device's shared memory
    (only the first below ``_TRITON_TUNE_MIN``: test shapes are for correctness, not tuning)."""
    import triton

    from backends.triton import fitting

    kind = _triton_kind(case)
    configs = fitting(_TRITON_CONFIGS[kind], _tile_smem(case, c_tile), be.smem_per_block(),
                      _TRITON_SMALL[kind])
    if case["m"] * case["n"] * case["k"] < _TRITON_TUNE_MIN:
        configs = configs[:1]
    return triton.autotune([triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w,
                                          num_stages=st, pre_hook=pre_hook)
                            for bm, bn, bk, w, st in configs], key=key)(fn)


def _tune_now(be, case, launch) -> dict:
    """Run the autotuner once on scratch operands of the case's shape (the factory's job: tuning
    stays out of the timed runs) and report the winner and the tuning time."""
    import time

    import torch

    dt = _torch_dtype(case)
    m, n, k = case["m"], case["n"], case["k"]
    a = torch.randn((m, k), device=be.dev).to(dt)
    b = torch.randn((k, n), device=be.dev).to(dt)
    c = torch.empty((m, n), device=be.dev, dtype=dt)
    t0 = time.perf_counter()
    tuner = launch(a, b, c)
    be.synchronize()
    best = getattr(tuner, "best_config", None)
    return {"autotune_s": round(time.perf_counter() - t0, 3),
            "config": None if best is None else {**best.kwargs, "num_warps": best.num_warps,
                                                 "num_stages": best.num_stages}}


def _triton_runner(be, case, launch, pad: bool):
    """``run(ins, outs)`` of a Triton matmul: ``launch(a, b, c)`` is autotuned once here on scratch
    operands (compiled devices only), then launched on the case's buffers — through copies padded
    to 16-byte row strides inside the timed call when ``pad`` and the shape needs it."""
    elem = 16 // (4 if case.dtype == "fp32" else 2)
    prepare, finish, padded = _padded_operands(be, case, elem) if pad else (None, None, None)
    tuned = lambda a, b, c: launch(*(padded or (a, b, c)))  # noqa: E731
    info = {} if be.device.mode == "interpret" else _tune_now(be, case, tuned)

    def run(ins, outs):
        if prepare is not None:
            prepare(ins, outs)
            launch(*padded)
            finish(ins, outs)
        else:
            launch(_torch_view(ins["A"], case.dtype), _torch_view(ins["B"], case.dtype),
                   _torch_view(outs["C"], case.dtype))

    run.info = {**info, "padded": prepare is not None}
    return run


def _triton_dtypes_ok(case) -> None:
    _need(case, ("fp32", "tf32", "fp16", "bf16"), "not a Triton matmul precision")


@kernel("matmul", "triton", "grouped")
def triton_grouped(be, case):
    """tl.dot on BLOCK_M×BLOCK_N tiles in grouped order, autotuned per shape class; operands
    with unaligned row strides (e.g. 4097) are padded to 16 bytes inside the timed call."""
    import triton

    from ops.matmul.matmul_triton import matmul_grouped

    _triton_dtypes_ok(case)
    m, n, k = case["m"], case["n"], case["k"]
    prec = _triton_precision(case)
    interp = be.device.mode == "interpret"
    if interp:
        bm, bn, bk, w, st = _TRITON_INTERPRET
        kern = matmul_grouped
        meta = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_warps": w, "num_stages": st,
                "UPCAST": True}
    else:
        kern = _autotuned(be, matmul_grouped, case, ["M", "N", "K", "stride_am"])
        meta = {}

    def launch(a, b, c):
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)  # noqa: E731
        kern[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), GROUP_M=8, PRECISION=prec, **meta)
        return kern

    return _triton_runner(be, case, launch, pad=not interp)


@kernel("matmul", "triton", "persistent")
def triton_persistent(be, case, subtile: bool = True):
    """One program per SM walking C tiles in grouped order; A, B, C through TMA tensor
    descriptors (host-built, block shapes set by the autotuner's pre-hook); operands padded to
    16-byte row strides inside the timed call where the shape needs it; C stored in two halves
    (matmul_persistent's SUBTILE: 8192³ bf16 probes, each form in its own process, hot median
    1.415 / 1.590 against 1.557 / 1.659 ms in either order; fp16 within ±1 % in one order, 11 %
    slower in the other: probes-20261202-session13). ``subtile=False`` (probes): C stored whole."""
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor

    from ops.matmul.matmul_triton import matmul_persistent

    _triton_dtypes_ok(case)
    m, n, k = case["m"], case["n"], case["k"]
    prec = _triton_precision(case)
    interp = be.device.mode == "interpret"
    sms = be.device.compute_units or 132
    if interp:
        sms = 4

    def set_blocks(nargs):
        bm, bn, bk = nargs["BLOCK_M"], nargs["BLOCK_N"], nargs["BLOCK_K"]
        nargs["a_desc"].block_shape = [bm, bk]
        nargs["b_desc"].block_shape = [bk, bn]
        nargs["c_desc"].block_shape = [bm, bn // 2 if subtile else bn]

    if interp:
        bm, bn, bk, w, st = _TRITON_INTERPRET
        kern, meta = matmul_persistent, {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_warps": w,
                                         "num_stages": st, "UPCAST": True}
    else:
        kern = _autotuned(be, matmul_persistent, case, ["M", "N", "K"], set_blocks, 0.5 if subtile else 1.0)
        meta = {}
    blk = [_TRITON_INTERPRET[0], _TRITON_INTERPRET[2]] if interp else [1, 1]  # reset by the pre-hook

    def launch(a, b, c):
        ad = TensorDescriptor(a, [m, k], [a.stride(0), 1], blk)
        bd = TensorDescriptor(b, [k, n], [b.stride(0), 1], [blk[1], blk[0]] if interp else blk)
        cblk = [blk[0], blk[0] // (2 if subtile else 1)] if interp else blk
        cd = TensorDescriptor(c, [m, n], [c.stride(0), 1], cblk)
        grid = lambda meta: (min(sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)  # noqa: E731
        kern[grid](ad, bd, cd, m, n, k, GROUP_M=8, NUM_SMS=sms, PRECISION=prec, SUBTILE=subtile, **meta)
        return kern

    return _triton_runner(be, case, launch, pad=True)  # TMA needs 16-byte row strides

#: split-K configs for skinny M: (BLOCK_N, BLOCK_K, SPLIT, num_warps, num_stages)
_SPLITK_CONFIGS = [(64, 128, 4, 4, 4), (64, 256, 4, 4, 3), (32, 256, 8, 4, 3), (128, 128, 2, 4, 4),
                   (64, 128, 8, 4, 4), (64, 256, 2, 4, 4), (128, 256, 2, 8, 3), (64, 512, 2, 4, 3),
                   (128, 128, 4, 4, 5)]
#: ... where none of those fits the shared memory (4-byte fp32 / tf32 tiles at M up to 64: the
#: first config's 4 stages of 64×128 and 128×64 tiles need 256 KiB, over an H100's 227)
_SPLITK_SMALL = [(64, 64, 4, 4, 2), (32, 64, 8, 4, 2)]
_SPLITK_MAX = 8


def _splitk_bm(m: int) -> int:
    """splitk's BLOCK_M: every one of the M rows in one tile (a power of two, at least 16)."""
    return max(16, 1 << (m - 1).bit_length())


def splitk_configs(case, limit: int) -> list:
    """triton splitk's autotune configs (BLOCK_N, BLOCK_K, SPLIT, warps, stages) whose stages of A
    and B tiles fit ``limit`` bytes of shared memory at the case's BLOCK_M (else _SPLITK_SMALL's)."""
    from backends.triton import fitting

    bm, tile = _splitk_bm(case["m"]), _tile_smem(case)
    return fitting(_SPLITK_CONFIGS, lambda c: tile((bm, c[0], c[1], c[3], c[4])), limit, _SPLITK_SMALL)


@kernel("matmul", "triton", "splitk")
def triton_splitk(be, case):
    """Skinny M ≤ 64 (LLM decode shapes, bound by reading B): every M row in one tile, K split
    SPLIT ways so that cdiv(N, BLOCK_N)·SPLIT programs keep every SM streaming B; fp32 partials,
    then one summing kernel rounds C once. Autotuned over (BLOCK_N, BLOCK_K, SPLIT)."""
    import torch
    import triton

    from ops.matmul.matmul_triton import matmul_splitk, splitk_sum

    _need(case, ("fp16", "bf16", "fp32", "tf32"), "not a Triton matmul precision")
    m, n, k = case["m"], case["n"], case["k"]
    if m > 64:
        raise Unsupported(f"splitk is the skinny-M variant (M ≤ 64); M = {m}: use grouped/persistent")
    bm = _splitk_bm(m)
    prec = _triton_precision(case)
    interp = be.device.mode == "interpret"
    ws = torch.empty((_SPLITK_MAX, m, n), dtype=torch.float32, device=be.dev)
    cfgs = [(64, 64, 2, 4, 1)] if interp else splitk_configs(case, be.smem_per_block())
    if not interp and m * n * k < _TRITON_TUNE_MIN:
        cfgs = cfgs[:1]
    kern = matmul_splitk if interp else triton.autotune(
        [triton.Config({"BLOCK_N": bn, "BLOCK_K": bk, "SPLIT": sp}, num_warps=w, num_stages=st)
         for bn, bk, sp, w, st in cfgs], key=["M", "N", "K"])(matmul_splitk)
    meta = ({"BLOCK_N": cfgs[0][0], "BLOCK_K": cfgs[0][1], "SPLIT": cfgs[0][2], "UPCAST": True}
            if interp else {})

    def launch(a, b, c):
        grid = lambda mt: (triton.cdiv(n, mt["BLOCK_N"]), mt["SPLIT"])  # noqa: E731
        kern[grid](a, b, ws, m, n, k, a.stride(0), b.stride(0), BLOCK_M=bm, PRECISION=prec, **meta)
        split = meta["SPLIT"] if interp else kern.best_config.kwargs["SPLIT"]
        splitk_sum[(triton.cdiv(m * n, 1024),)](ws, c, m * n, SPLIT=split, BLOCK=1024, UPCAST=interp)
        return kern

    return _triton_runner(be, case, launch, pad=False)


# ---- SIMT ladder: cuda, opencl, webgpu (naive, tiled_shared, register_blocked) ----------------
#
# One algorithm per variant in matmul.cu / matmul.cl / matmul.wgsl (same entry names), fp32 FMA
# math on 16-bit storage. Launch geometry from the case: groups = (⌈N/BN⌉, ⌈M/BM⌉).

_SIMT_CU = source(__file__, "matmul.cu")
_SIMT_CL = source(__file__, "matmul.cl")
_SIMT_WGSL = source(__file__, "matmul.wgsl")
#: storage dtype → the DT define of the three sources
_SIMT_DT = {"fp32": 0, "fp16": 1, "bf16": 2}
#: register_blocked tiles (BM, BN, BK, TM, TN), 256 threads each: a serious SGEMM shape on GPUs
#: (128×128×8, 8×8 per thread); 64×64×16 with 4×4 per work-item on CPUs (PoCL, lavapipe), whose
#: SIMD lanes are work-items and where 64 accumulators per item only spill
_SIMT_RB_GPU = (128, 128, 8, 8, 8)
_SIMT_RB_CPU = (64, 64, 16, 4, 4)
#: CUDA's register_blocked: 128×256×8 with 8×16 per thread. 8192³ fp32 on the H200
#: (scripts/probe.py, 2026-12-01): 44.5 TFLOP/s against 39.1 for 128×128×8 (8×8), 43.9 for
#: 256×128 (16×8), 38.0 for 128×128×16; the OpenCL and WGSL ports keep 128×128×8 (not probed)
_SIMT_RB_CUDA = (128, 256, 8, 8, 16)


def _simt_case(case, dialect: str) -> tuple[int, int, int]:
    """(M, N, K) of a case the SIMT kernels handle; Unsupported (with the reason) otherwise."""
    if case.prec == "tf32":
        raise Unsupported(f"tf32: no tensor-core path in {dialect}")
    _need(case, ("fp32", "fp16", "bf16"), f"the {dialect} SIMT kernels do fp32, fp16 and bf16")
    if case.dtype not in _SIMT_DT:
        raise Unsupported(f"{case.dtype}: storage not handled by the {dialect} SIMT kernels")
    return case["m"], case["n"], case["k"]


def _simt_rb_defs(tiles: tuple[int, ...]) -> dict:
    return dict(zip(("BM", "BN", "BK", "TM", "TN"), tiles, strict=True))


def _simt_grid(case, bm: int, bn: int, limit: int, dialect: str) -> tuple[int, int]:
    gx, gy = cdiv(case["n"], bn), cdiv(case["m"], bm)
    if max(gx, gy) > limit:
        raise Unsupported(f"{dialect}: grid ({gx}, {gy}) exceeds {limit} workgroups per dimension")
    return gx, gy


def _simt_args(ins, outs, *dims: int) -> list:
    import numpy as np

    return [ins["A"], ins["B"], outs["C"], *(np.int32(d) for d in dims)]


def _cuda_simt(be, case, entry: str, defs: dict, bm: int, bn: int, block: tuple[int, ...]):
    m, n, k = _simt_case(case, "CUDA SIMT (the tensor-core variant handles tf32)")
    if max(m * k, k * n, m * n) >= 2**31:
        raise Unsupported("CUDA SIMT kernels take int32 dimensions: a matrix has ≥ 2^31 elements")
    prog = be.compile(_SIMT_CU, entry, {"DT": _SIMT_DT[case.dtype], **defs})
    grid = _simt_grid(case, bm, bn, 65535, "cuda")

    def run(ins, outs):
        be.launch(prog, grid, block, _simt_args(ins, outs, m, n, k))

    return run


@kernel("matmul", "cuda", "naive")
def cuda_naive(be, case):
    """One thread per C element (16×16 blocks), the K loop straight from global memory."""
    return _cuda_simt(be, case, "matmul_naive", {}, 16, 16, (16, 16))


@kernel("matmul", "cuda", "tiled_shared")
def cuda_tiled_shared(be, case):
    """32×32 tiles of A and B through shared memory, one thread (of 1024) per C element."""
    return _cuda_simt(be, case, "matmul_tiled_shared", {"TILE": 32}, 32, 32, (32, 32))


@kernel("matmul", "cuda", "register_blocked")
def cuda_register_blocked(be, case, tiles: tuple[int, ...] = _SIMT_RB_CUDA):
    """128×256×8 block tiles, 256 threads with 8×16 accumulators each, float4 loads into
    double-buffered shared memory (A transposed), unrolled outer-product FMAs. ``tiles``: (BM, BN,
    BK, TM, TN) for probes."""
    bm, bn, bk, tm, tn = tiles
    nt = (bm // tm) * (bn // tn)
    return _cuda_simt(be, case, "matmul_register_blocked", _simt_rb_defs(tiles), bm, bn, (nt, 1))


def _opencl_simt(be, case, entry: str, defs: dict, bm: int, bn: int, block: tuple[int, ...],
                 options: tuple[str, ...] = ()):
    m, n, k = _simt_case(case, "OpenCL")
    if max(m * k, k * n, m * n) >= 2**31:
        raise Unsupported("OpenCL SIMT kernels take int dimensions: a matrix has ≥ 2^31 elements")
    wg = 1
    for b in block:
        wg *= b
    have = int(be.cl_device.max_work_group_size)
    if wg > have:
        raise Unsupported(f"{entry} needs work-groups of {wg}; the device allows {have}")
    prog = be.compile(_SIMT_CL, entry, {"DT": _SIMT_DT[case.dtype], **defs}, options)
    grid = _simt_grid(case, bm, bn, 2**31 // max(bm, bn), "opencl")

    def run(ins, outs):
        be.launch(prog, grid, block, _simt_args(ins, outs, m, n, k))

    return run


@kernel("matmul", "opencl", "naive")
def opencl_naive(be, case):
    """One work-item per C element (16×16 groups), the K loop straight from global memory."""
    return _opencl_simt(be, case, "matmul_naive", {}, 16, 16, (16, 16))


@kernel("matmul", "opencl", "tiled_shared")
def opencl_tiled_shared(be, case):
    """TILE×TILE tiles of A and B through __local memory, one work-item per C element (32 on GPUs
    that take 1024-wide groups, else 16)."""
    gpu = be.device.kind == "gpu" and int(be.cl_device.max_work_group_size) >= 1024
    t = 32 if gpu else 16
    return _opencl_simt(be, case, "matmul_tiled_shared", {"TILE": t}, t, t, (t, t))


@kernel("matmul", "opencl", "register_blocked")
def opencl_register_blocked(be, case):
    """matmul.cu's register_blocked in OpenCL C: 128×128×8 tiles, 256 work-items × 8×8 (GPU;
    64×64×16 × 4×4 on CPUs), 4-wide loads into double-buffered __local tiles, A transposed."""
    tiles = _SIMT_RB_GPU if be.device.kind == "gpu" else _SIMT_RB_CPU
    bm, bn, _, tm, tn = tiles
    nt = (bm // tm) * (bn // tn)
    # NVIDIA's OpenCL has no __launch_bounds__: cap registers at 128 so two 256-item groups fit an
    # SM (what ptxas picks for matmul.cu's copy under __launch_bounds__(256): 127, no spills).
    # fp16/bf16 at 8192³ run at 24.3 TFLOP/s against fp32's 39.4 with the cap, without it, or at
    # 168 / 255 (probes-20261204-session18/s18e); NVIDIA's PTX of the three has the same main loop
    # (512 fma.rn.f32, 32 ld.shared.v4, 2 bar.sync per K tile; 8-byte global loads for 16-bit):
    # the difference is below PTX (ptxas or the memory system), not found yet
    opts = ("-cl-nv-maxrregcount=128",) if "cl_nv_compiler_options" in be.device.features else ()
    return _opencl_simt(be, case, "matmul_register_blocked", _simt_rb_defs(tiles), bm, bn, (nt, 1), opts)


def _webgpu_simt(be, case, entry: str, tile: int, rb: tuple[int, ...], bm: int, bn: int):
    import numpy as np

    m, n, k = _simt_case(case, "WGSL")
    if max(m * k, k * n, m * n) >= 2**32:
        raise Unsupported("WGSL kernels index with u32: a matrix has ≥ 2^32 elements")
    defs = {"DT": _SIMT_DT[case.dtype], "TILE": tile, **_simt_rb_defs(rb)}
    prog = be.compile(_SIMT_WGSL, entry, defs)
    grid = _simt_grid(case, bm, bn, be.limits["max-compute-workgroups-per-dimension"], "webgpu")
    prm = np.array([m, n, k, 0], dtype=np.uint32)

    def run(ins, outs):
        be.launch(prog, grid, None, [ins["A"], ins["B"], outs["C"], prm])

    return run


def _webgpu_rb_tiles(be) -> tuple[int, ...]:
    return _SIMT_RB_GPU if be.device.kind == "gpu" else _SIMT_RB_CPU


@kernel("matmul", "webgpu", "naive")
def webgpu_naive(be, case):
    """One invocation per C element (16×16 workgroups), the K loop straight from storage."""
    return _webgpu_simt(be, case, "matmul_naive", 16, _webgpu_rb_tiles(be), 16, 16)


@kernel("matmul", "webgpu", "tiled_shared")
def webgpu_tiled_shared(be, case):
    """16×16 tiles of A and B through workgroup memory, one invocation per C element."""
    return _webgpu_simt(be, case, "matmul_tiled_shared", 16, _webgpu_rb_tiles(be), 16, 16)


@kernel("matmul", "webgpu", "register_blocked")
def webgpu_register_blocked(be, case):
    """256 invocations with 8×8 accumulators on a 128×128×8 tile (GPU; 4×4 on 64×64×16 on CPUs),
    vec4 loads with the next K tile prefetched into registers, A transposed in workgroup memory."""
    tiles = _webgpu_rb_tiles(be)
    return _webgpu_simt(be, case, "matmul_register_blocked", 16, tiles, tiles[0], tiles[1])
