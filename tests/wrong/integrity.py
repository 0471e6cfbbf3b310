"""Planted kernels for the measurement-integrity tests (tests/test_integrity.py and
scripts/integrity_gpu.sh), registered only when SOLBENCH_EXTRA_KERNELS names this module.

``wrong_*`` kernels are wrong in a way that one launch on the first input set does not show
(state kept across launches, a write one past the end, a defect only on even widths, above 2^22
elements or on a 2-D grid, int32 summed through float32, a dropped tile or carry); the harness
must reject each. ``probe_*`` kernels are correct but enqueue their work unusually (host time
between launches, a fill beside the kernel, another stream, a direct queue write): the timing
must contain that work or reject the row. ``crash_*`` kernels fault, and the worker must be
restarted so the next row is unaffected. Real kernels (OpenCL C, WGSL, Triton, CUDA C, torch).
"""

from __future__ import annotations

import time

import numpy as np

from suite.registry import kernel, source

CL = source(__file__, "integrity.cl")
WGSL = source(__file__, "integrity.wgsl")
WGSL_ADD = source(__file__, "integrity_add.wgsl")
CU = source(__file__, "integrity.cu")

_CL_T = {"fp32": "float", "i32": "int"}
_WGSL_T = {"fp32": "f32", "i32": "i32"}


def _cl_defs(dtype: str = "fp32", drop: int = -1, acc: str | None = None) -> dict:
    t = _CL_T[dtype]
    return {"T": t, "ACC": acc or t, "OUT": t, "DROP": drop}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _unsupported(msg: str):
    from backends.base import Unsupported

    raise Unsupported(msg)


# ---- vector_add, OpenCL ---------------------------------------------------------------------------

def _cl_add(entry: str, groups_for=lambda n: _cdiv(n, 64)):
    def factory(be, case):
        n = case["n"]
        k = be.compile(CL, entry, _cl_defs())
        return lambda ins, outs: be.launch(k, (groups_for(n),), (64,),
                                           [ins["a"], ins["b"], outs["c"], np.int32(n)])
    return factory


kernel("vector_add", "opencl", "wrong_le_n", dtypes=("fp32",))(_cl_add("add_le_n", lambda n: n // 64 + 1))
kernel("vector_add", "opencl", "wrong_tail_large", dtypes=("fp32",))(_cl_add("add_drop_tail_large"))


@kernel("vector_add", "opencl", "wrong_done_flag", dtypes=("fp32",))
def cl_done_flag(be, case):
    """A 'done' flag set after the first launch and never reset: later launches write nothing."""
    n = case["n"]
    k, done_k = be.compile(CL, "add_unless_done", _cl_defs()), be.compile(CL, "set_done", _cl_defs())
    done = be.empty((1,), np.int32)
    be.fill_bytes(done, 0)

    def run(ins, outs):
        be.launch(k, (_cdiv(n, 64),), (64,), [ins["a"], ins["b"], outs["c"], np.int32(n), done])
        be.launch(done_k, (1,), (1,), [done])
    return run


@kernel("vector_add", "opencl", "wrong_ticket", dtypes=("fp32",))
def cl_ticket(be, case):
    """Blocks from a ticket counter that is never reset: the second launch writes nothing."""
    n = case["n"]
    k = be.compile(CL, "add_ticket", _cl_defs())
    ticket = be.empty((1,), np.int32)
    be.fill_bytes(ticket, 0)
    return lambda ins, outs: be.launch(k, (_cdiv(n, 64),), (64,),
                                       [ins["a"], ins["b"], outs["c"], np.int32(n), ticket])


@kernel("vector_add", "opencl", "probe_extra_fill", dtypes=("fp32",))
def cl_extra_fill(be, case):
    """Correct, but every launch also fills a 64 MiB scratch buffer on the queue, not through
    ``launch``/``fill_bytes``: the row must not pass (invalid: queue time outside the window)."""
    import pyopencl as cl

    n, size = case["n"], 64 << 20
    k = be.compile(CL, "add_naive", _cl_defs())
    scratch = cl.Buffer(be.ctx, cl.mem_flags.READ_WRITE, size)

    def run(ins, outs):
        cl.enqueue_fill_buffer(be.queue, scratch, np.uint8(7), 0, size)
        be.launch(k, (_cdiv(n, 64),), (64,), [ins["a"], ins["b"], outs["c"], np.int32(n)])
    return run


@kernel("vector_add", "opencl", "probe_slow_enqueue", dtypes=("fp32",))
def cl_slow_enqueue(be, case):
    """Correct; the host spends 30 ms between its two launches: that is not device time."""
    n = case["n"]
    k = be.compile(CL, "add_naive", _cl_defs())

    def run(ins, outs):
        be.launch(k, (_cdiv(n, 64),), (64,), [ins["a"], ins["b"], outs["c"], np.int32(n)])
        time.sleep(0.03)
        be.launch(k, (_cdiv(n, 64),), (64,), [ins["a"], ins["b"], outs["c"], np.int32(n)])
    return run


# ---- vector_add, WebGPU ---------------------------------------------------------------------------

def _wgsl_add(entry: str, grid_for):
    def factory(be, case):
        n = case["n"]
        pipe = be.compile(WGSL_ADD, entry)
        ticket = be.empty((4,), np.uint32)
        be.fill_bytes(ticket, 0)
        grid, params = grid_for(be, n), np.array([n], np.uint32)
        return lambda ins, outs: be.launch(pipe, grid, None, [ins["a"], ins["b"], outs["c"], ticket, params])
    return factory


kernel("vector_add", "webgpu", "wrong_ignore_y", dtypes=("fp32",))(
    _wgsl_add("add_ignore_y", lambda be, n: be.grid_2d(_cdiv(n, 256))))
kernel("vector_add", "webgpu", "wrong_ticket", dtypes=("fp32",))(
    _wgsl_add("add_ticket", lambda be, n: be.grid_2d(_cdiv(n, 256))))


def _webgpu_naive(be, case):
    from ops.vector_add.kernels import webgpu_naive

    return webgpu_naive(be, case)


@kernel("vector_add", "webgpu", "probe_slow_enqueue", dtypes=("fp32",))
def wgpu_slow_enqueue(be, case):
    """Correct; the host spends 30 ms between its two dispatches: that is not device time."""
    run = _webgpu_naive(be, case)

    def twice(ins, outs):
        run(ins, outs)
        time.sleep(0.03)
        run(ins, outs)
    return twice


@kernel("vector_add", "webgpu", "probe_direct_write", dtypes=("fp32",))
def wgpu_direct_write(be, case):
    """Correct, but also writes a scratch buffer through the queue directly (outside the
    recorded dispatches): the timed row must be rejected."""
    run = _webgpu_naive(be, case)
    scratch = be.empty((1 << 16,), np.float32)
    zeros = np.zeros(1 << 16, np.float32)

    def both(ins, outs):
        be.queue.write_buffer(scratch.buf, 0, zeros)
        run(ins, outs)
    return both


# ---- vector_add, Triton ---------------------------------------------------------------------------

@kernel("vector_add", "triton", "wrong_le_n", dtypes=("fp32",))
def triton_le_n(be, case):
    """A store masked with ``offs <= n``: one element past the end."""
    from tests.wrong.integrity_triton import add_le_n

    n = case["n"]
    grid = (_cdiv(n, 128),)
    return lambda ins, outs: add_le_n[grid](ins["a"], ins["b"], outs["c"], n, BLOCK=128)


# ---- vector_add, torch ----------------------------------------------------------------------------

@kernel("vector_add", "torch", "wrong_replay")
def torch_replay(be, case):
    """Computes the first launch, then replays that answer whatever the inputs."""
    import torch

    cache: dict = {}

    def run(ins, outs):
        if "c" not in cache:
            torch.add(ins["a"], ins["b"], out=outs["c"])
            cache["c"] = outs["c"].clone()
        else:
            outs["c"].copy_(cache["c"])
    return run


@kernel("vector_add", "torch", "wrong_writes_input")
def torch_writes_input(be, case):
    """Right output, but it scribbles on its input a."""
    import torch

    def run(ins, outs):
        torch.add(ins["a"], ins["b"], out=outs["c"])
        ins["a"][0] += 1
    return run


@kernel("vector_add", "torch", "crash_sticky")
def torch_sticky(be, case):
    """A simulated sticky device fault: it breaks torch.add for the rest of its process (as a
    CUDA trap or illegal address breaks the context), then fails."""
    import torch

    def broken(*a, **k):
        raise RuntimeError("CUDA error: an illegal memory access was encountered (sticky, simulated)")

    def run(ins, outs):
        torch.add = broken
        broken()
    return run


@kernel("vector_add", "torch", "probe_other_stream", dtypes=("fp32",))
def torch_other_stream(be, case):
    """Correct, but the add runs on a stream of its own, outside the timed window (GPU only)."""
    import torch

    if not be.gpu:
        _unsupported("needs a CUDA GPU (another stream)")
    s = torch.cuda.Stream()

    def run(ins, outs):
        with torch.cuda.stream(s):
            torch.add(ins["a"], ins["b"], out=outs["c"])
    return run


# ---- vector_add, CUDA (GPU host) ------------------------------------------------------------------

def _cu_add(be, case, entry: str):
    n = case["n"]
    fn = be.compile(CU, entry)
    grid, block, nn = (max(1, _cdiv(n, 256)),), (256,), np.int64(n)
    return lambda ins, outs: be.launch(fn, grid, block, [ins["a"], ins["b"], outs["c"], nn])


@kernel("vector_add", "cuda", "probe_other_stream", dtypes=("fp32",))
def cuda_other_stream(be, case):
    """Correct, but launched on a non-blocking stream of its own: outside the timed window."""
    run = _cu_add(be, case, "add_naive")
    if be.device.mode == "compile":
        return run
    import cupy as cp

    s = cp.cuda.Stream(non_blocking=True)

    def other(ins, outs):
        with s:
            run(ins, outs)
    return other


@kernel("vector_add", "cuda", "probe_slow_enqueue", dtypes=("fp32",))
def cuda_slow_enqueue(be, case):
    """Correct; the host spends 2 ms before launching: with a blocking start that is not timed."""
    run = _cu_add(be, case, "add_naive")

    def slow(ins, outs):
        time.sleep(0.002)
        run(ins, outs)
    return slow


@kernel("vector_add", "cuda", "crash_trap", dtypes=("fp32",))
def cuda_trap(be, case):
    """Traps on the device (sticky CUDA_ERROR_LAUNCH_FAILED)."""
    return _cu_add(be, case, "add_trap")


@kernel("vector_add", "cuda", "crash_illegal_address", dtypes=("fp32",))
def cuda_illegal_address(be, case):
    """Writes to address 16 (sticky CUDA_ERROR_ILLEGAL_ADDRESS)."""
    return _cu_add(be, case, "add_illegal_address")


# ---- grayscale ------------------------------------------------------------------------------------

@kernel("grayscale", "torch", "wrong_even_width", dtypes=("u8",))
def torch_even_width(be, case):
    """Right on odd widths; on even widths the last column is never written."""
    from ops.grayscale.kernels import _torch_gray

    w = case["w"]

    def run(ins, outs):
        if w % 2:
            _torch_gray(ins["img"], outs["out"])
        else:
            _torch_gray(ins["img"][:, :-1], outs["out"][:, :-1])
    return run


# ---- reduction and scan, OpenCL -------------------------------------------------------------------

def _cl_reduce(drop: int, acc: str | None = None):
    def factory(be, case):
        n, dt = case["n"], case.dtype
        defs = _cl_defs(dt, drop, acc)
        part_k, fin_k = be.compile(CL, "reduce_partials", defs), be.compile(CL, "reduce_finish", defs)
        groups = _cdiv(n, 256)
        partial = be.empty((groups,), np.float32 if (acc or _CL_T[dt]) == "float" else np.int32)

        def run(ins, outs):
            be.launch(part_k, (groups,), (256,), [ins["x"], partial, np.int32(n)])
            be.launch(fin_k, (1,), (1,), [partial, outs["out"], np.int32(groups)])
        return run
    return factory


kernel("reduction", "opencl", "wrong_drop_tile", dtypes=("fp32", "i32"))(_cl_reduce(1))
kernel("reduction", "opencl", "wrong_i32_via_f32", dtypes=("i32",))(_cl_reduce(-1, "float"))


@kernel("scan", "opencl", "wrong_drop_carry", dtypes=("fp32", "i32"))
def cl_scan_drop_carry(be, case):
    """Tile 1's sum is left out of every later carry (wrong from element 512 on)."""
    n, dt = case["n"], case.dtype
    defs = _cl_defs(dt, 1)
    tiles_k, carry_k, add_k = (be.compile(CL, e, defs) for e in ("scan_tiles", "scan_carry", "scan_add"))
    tiles = _cdiv(n, 256)
    npdt = np.float32 if dt == "fp32" else np.int32
    sums, carry = be.empty((tiles,), npdt), be.empty((tiles,), npdt)

    def run(ins, outs):
        be.launch(tiles_k, (_cdiv(tiles, 64),), (64,), [ins["x"], outs["y"], sums, np.int32(n)])
        be.launch(carry_k, (1,), (1,), [sums, carry, np.int32(tiles)])
        be.launch(add_k, (tiles,), (256,), [outs["y"], carry, np.int32(n)])
    return run


# ---- reduction and scan, WebGPU -------------------------------------------------------------------

def _wgsl_defs(dt: str) -> dict:
    return {"T": _WGSL_T[dt], "DROP": 1}


@kernel("reduction", "webgpu", "wrong_drop_tile", dtypes=("fp32", "i32"))
def wgpu_reduce_drop_tile(be, case):
    """Per-workgroup partials, summed by one invocation that leaves partial 1 out."""
    n, dt = case["n"], case.dtype
    part_p, fin_p = (be.compile(WGSL, e, _wgsl_defs(dt)) for e in ("reduce_partials", "reduce_finish"))
    groups = _cdiv(n, 256)
    part = be.empty((groups,), np.float32 if dt == "fp32" else np.int32)
    params = np.array([n, groups], np.uint32)

    def run(ins, outs):
        be.launch(part_p, be.grid_2d(groups), None, [ins["x"], outs["out"], part, params])
        be.launch(fin_p, (1, 1, 1), None, [ins["x"], outs["out"], part, params])
    return run


@kernel("scan", "webgpu", "wrong_drop_carry", dtypes=("fp32", "i32"))
def wgpu_scan_drop_carry(be, case):
    """Serial 256-element tiles, carries by one invocation that leaves tile 1's sum out."""
    n, dt = case["n"], case.dtype
    tiles_p, carry_p, add_p = (be.compile(WGSL, e, _wgsl_defs(dt)) for e in ("scan_tiles", "scan_carry",
                                                                              "scan_add"))
    tiles = _cdiv(n, 256)
    part = be.empty((tiles,), np.float32 if dt == "fp32" else np.int32)
    params = np.array([n, tiles], np.uint32)

    def run(ins, outs):
        args = [ins["x"], outs["y"], part, params]
        be.launch(tiles_p, (_cdiv(tiles, 64), 1, 1), None, args)
        be.launch(carry_p, (1, 1, 1), None, args)
        be.launch(add_p, (tiles, 1, 1), None, args)
    return run


# ---- scan, torch: carries from the previous launch ------------------------------------------------

@kernel("scan", "torch", "wrong_stale_carry", dtypes=("fp32", "i32"))
def torch_stale_carry(be, case):
    """Scans 1024-element tiles and adds carries computed from the tile sums of the *previous*
    launch (the first launch uses its own): right whenever the inputs repeat."""
    import torch

    n, tile = case["n"], 1024
    prev: dict = {}

    def run(ins, outs):
        x = ins["x"]
        pad = (-n) % tile
        xt = torch.nn.functional.pad(x, (0, pad)).view(-1, tile)
        local = torch.cumsum(xt, dim=1, dtype=x.dtype)
        sums = prev.get("sums", local[:, -1].clone())
        carry = torch.cumsum(sums, 0, dtype=x.dtype) - sums
        outs["y"].copy_((local + carry[:, None]).reshape(-1)[:n])
        prev["sums"] = local[:, -1].clone()
    return run
