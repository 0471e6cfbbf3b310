"""webgpu: WGSL compute shaders through wgpu-py (wgpu-native: Vulkan, Metal, D3D12; lavapipe on
the CPU).

Buffers are ``WgpuBuffer``: a STORAGE|COPY_SRC|COPY_DST buffer padded to a multiple of 16 bytes
(at least 16), so a kernel may touch the whole last 16-byte vector of an array; ``download``
trims the padding. ``compile`` substitutes whitelisted ``{{NAME}}`` placeholders (WGSL has no
preprocessor), expands ``// @unroll`` loops (backends/wgsl_unroll.py) and builds a compute
pipeline with an automatic layout. ``launch`` binds the
buffers to ``@group(0) @binding(0..k-1)`` and optional params to a uniform at ``@binding(k)``,
and records the dispatch (a buffer larger than the adapter's storage-binding limit may be
allocated, up to ``max-buffer-size``, but is bound only through ``window(buf, offset, size)``
views, which ``launch`` takes in place of buffers: a kernel that binds it whole is unsupported);
recorded work is submitted by ``synchronize``, ``download``, ``fill_bytes``, ``flush_l2`` and
``time``, one compute pass per dispatch. ``time`` encodes the
dispatches of ``fn`` in one command encoder with a timestamp at the beginning of the first pass
and at the end of the last, converted to seconds with the queue's timestamp period.

A dispatch has at most ``max-compute-workgroups-per-dimension`` (65535) groups per dimension:
kernels take a 2-D grid from ``grid_2d`` and compute a linear group id
``wid.x + wid.y * num_workgroups.x`` (excess groups fail the kernel's bounds check).
"""

from __future__ import annotations

import os
import re
import tempfile
import time as _time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from backends.wgsl_unroll import unroll

# Mesa's Vulkan WSI complains on every adapter query when XDG_RUNTIME_DIR is unset (headless
# machines, CI); compute needs no display, so give it a private directory before wgpu loads.
if not os.environ.get("XDG_RUNTIME_DIR"):
    _xdg = Path(tempfile.gettempdir()) / f"solbench-xdg-{os.getuid()}"
    _xdg.mkdir(mode=0o700, exist_ok=True)
    os.environ["XDG_RUNTIME_DIR"] = str(_xdg)
import wgpu  # noqa: E402

from backends.base import Backend, Device, Unsupported, flush_bytes, host_memory_bytes, read_source
from backends.nvml import find_index, gpu_clocks

#: optional features requested when the adapter has them
FEATURES = ("timestamp-query", "shader-f16", "subgroup")
#: limits raised to the adapter's maximum
LIMITS = ("max-storage-buffer-binding-size", "max-buffer-size", "max-compute-workgroup-storage-size",
          "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
          "max-compute-workgroup-size-y", "max-compute-workgroup-size-z",
          "max-compute-workgroups-per-dimension", "max-storage-buffers-per-shader-stage")
#: preference among the native APIs when one device shows up through several
_API_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 1, "OpenGL": 2}
_VENDORS = {0x10DE: "NVIDIA", 0x1002: "AMD", 0x8086: "Intel", 0x106B: "Apple", 0x13B5: "ARM",
            0x5143: "Qualcomm", 0x10005: "Mesa"}
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_ALIGN = 16
#: lowers the workgroups per grid dimension the kernels may use (a test hook, set by the test
#: session): with 65,535, only arrays past ~16.7 M elements (one per invocation) reach the second
#: grid dimension, too large for CPU test runs; a lower cap exercises ``workgroup_id.y`` at
#: test sizes, with the same linear group id, so a kernel that ignores it fails
GRID_LIMIT_ENV = "SOLBENCH_WEBGPU_MAX_GROUPS"

#: reads every 16-byte word of a window of the flush buffer, ``run`` consecutive words per invocation
#: and step: 1 on a GPU (a grid-stride loop), one contiguous chunk per invocation on a CPU device
#: (lavapipe: 0.13 against 0.25 s per flush of a 480 MiB cache's 960 MiB buffer). A store depends
#: on the sum (harmless if it ever happens), so no compiler can drop the loads
_FLUSH_READ_WGSL = """
struct P { n: u32, stride: u32, run: u32 }
@group(0) @binding(0) var<storage, read> buf: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> sink: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn flush_read(@builtin(global_invocation_id) gid: vec3<u32>) {
    var acc = vec4<u32>(0u);
    for (var s = gid.x * p.run; s < p.n; s += p.stride * p.run) {
        for (var i = s; i < min(p.n, s + p.run); i++) { acc += buf[i]; }
    }
    if (acc.x + acc.y + acc.z + acc.w == 1u) { sink[0] = acc.x; }
}
"""

_FILL_WGSL = """
struct P { words: u32, pattern: u32 }
@group(0) @binding(0) var<storage, read_write> buf: array<u32>;
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(256)
fn fill(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.x + wid.y * nwg.x) * 256u + lid;
    if (i < p.words) { buf[i] = p.pattern; }
}
"""


@dataclass(eq=False)
class WgpuBuffer:
    """A device buffer of ``shape`` × ``dtype``, padded to a multiple of 16 bytes."""

    buf: Any  # wgpu.GPUBuffer
    shape: tuple[int, ...]
    dtype: np.dtype
    #: bind groups whose first buffer is this one: key → (bind group, the buffers it holds)
    _bind: dict = field(default_factory=dict, repr=False)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


@dataclass(eq=False)
class Window:
    """Bytes [offset, offset + size) of a buffer, bound in place of the whole of it (``be.window``):
    how a kernel reaches a buffer larger than the adapter's storage-binding limit."""

    base: WgpuBuffer
    offset: int
    size: int

    @property
    def buf(self):
        return self.base.buf


def grid_2d(n_groups: int, max_per_dim: int = 65535) -> tuple[int, int, int]:
    """A (x, y, 1) dispatch with x*y >= n_groups and x, y <= max_per_dim; kernels use the linear
    group id ``wid.x + wid.y * num_workgroups.x`` and bounds-check it."""
    n_groups = max(1, int(n_groups))
    if n_groups <= max_per_dim:
        return (n_groups, 1, 1)
    y = -(-n_groups // max_per_dim)
    x = -(-n_groups // y)
    if y > max_per_dim:
        raise ValueError(f"{n_groups} workgroups exceed a {max_per_dim}² grid")
    return (x, y, 1)


def _adapters():
    return wgpu.gpu.enumerate_adapters_sync()


def _vulkan_ids(infos: list[dict]) -> dict[int, dict]:
    """Adapter index → its Vulkan identity (UUID, PCI address: ``backends.vkid``). wgpu lists the
    loader's physical devices in the loader's order, so the k-th Vulkan adapter of a (name,
    vendor id) is the k-th physical device of it — trusted only where both list as many of that
    (name, vendor id); otherwise those adapters get none and are attributed by name alone
    (suite/identity.py: on a host with several such cards, not at all)."""
    from backends.vkid import vulkan_identities

    phys: dict[tuple, list[dict]] = {}
    for v in vulkan_identities():
        phys.setdefault((v["name"], v["vendor_id"]), []).append(v)
    adapters: dict[tuple, list[int]] = {}
    for i, info in enumerate(infos):
        if info.get("backend_type") == "Vulkan":
            adapters.setdefault((info.get("device"), info.get("vendor_id")), []).append(i)
    return {i: v for k, idx in adapters.items() if len(idx) == len(phys.get(k, []))
            for i, v in zip(idx, phys[k], strict=True)}


class WebGPUBackend(Backend):
    name = "webgpu"
    timer = "webgpu-timestamp"
    #: how a timed window opens (backends/window.py): one submission after fn has recorded
    start_method = "single-submit"

    @classmethod
    def devices(cls) -> list[Device]:
        out = []
        adapters = _adapters()
        infos = [a.info for a in adapters]
        ids = _vulkan_ids(infos)
        for i, (a, info) in enumerate(zip(adapters, infos, strict=True)):
            api = info.get("backend_type", "")
            cpu = info.get("adapter_type", "") == "CPU"
            vendor = _VENDORS.get(info.get("vendor_id", 0)) or info.get("vendor", "")
            d = Device("webgpu", i, info["device"], "cpu" if cpu else "gpu", vendor,
                       memory_bytes=host_memory_bytes() if cpu else 0, driver=info.get("description", ""),
                       uuid=ids.get(i, {}).get("uuid"), pci_bus_id=ids.get(i, {}).get("pci_bus_id"),
                       features=sorted(a.features),
                       versions={"wgpu": wgpu.__version__, "backend_type": api})
            # the same device through a less preferred API (e.g. OpenGL beside Vulkan) is listed
            # but not used, so one device is not benchmarked twice
            # (OpenGL names a GPU differently, e.g. "NVIDIA H200/PCIe/SSE2": match the vendor id too)
            same = [j for j, o in enumerate(infos) if o["device"] == info["device"]
                    or (info.get("vendor_id") and o.get("vendor_id") == info.get("vendor_id"))]
            better = [j for j in same
                      if _API_RANK.get(infos[j].get("backend_type"), 9) < _API_RANK.get(api, 9)]
            if better:
                d.reason = f"{api} adapter; the same device is used through " \
                           f"{infos[better[0]].get('backend_type')} (webgpu device {better[0]})"
            elif api not in _API_RANK:
                d.reason = f"wgpu backend {api!r} is not benchmarked"
            out.append(d)
        return out

    def __init__(self, device: Device):
        super().__init__(device)
        adapters = _adapters()
        if device.index >= len(adapters) or adapters[device.index].info["device"] != device.name:
            raise RuntimeError(f"WebGPU adapter {device.index} ({device.name}) is no longer present")
        self.adapter = adapters[device.index]
        self.features = {f for f in FEATURES if f in self.adapter.features}
        alim = self.adapter.limits
        self.wdev = self.adapter.request_device_sync(
            required_features=sorted(self.features),
            required_limits={k: alim[k] for k in LIMITS if k in alim})
        self.queue = self.wdev.queue
        self.limits = dict(self.wdev.limits)
        cap = os.environ.get(GRID_LIMIT_ENV)
        if cap:  # test hook: make modest sizes use the 2-D grid (see GRID_LIMIT_ENV)
            key = "max-compute-workgroups-per-dimension"
            self.limits[key] = min(self.limits[key], int(cap))
        self._pending: list[tuple] = []
        self._pipelines: dict[tuple, Any] = {}
        self._layouts: dict[int, Any] = {}
        self._uniforms: dict[bytes, Any] = {}
        if "timestamp-query" in self.features:
            from wgpu.backends.wgpu_native import lib

            #: nanoseconds per timestamp tick (1.0 where wgpu normalises)
            self.ts_period = float(lib.wgpuQueueGetTimestampPeriod(self.queue._internal))
            self._qs = self.wdev.create_query_set(type=wgpu.QueryType.timestamp, count=2)
            self._qbuf = self.wdev.create_buffer(
                size=16, usage=wgpu.BufferUsage.QUERY_RESOLVE | wgpu.BufferUsage.COPY_SRC)
        else:
            self.timer = "host"
        self.gpu = device.kind == "gpu"
        size = flush_bytes(device)
        if self.gpu and not device.l2_bytes:
            size = max(size, 256 * 2**20)  # L2 unknown through WebGPU: 256 MiB covers today's GPUs
        self._flush_size = min(size, self.limits["max-buffer-size"]) // 16 * 16
        self._flush = self._alloc((self._flush_size // 4,), np.uint32)  # zeroed by WebGPU
        self._flush_sink = self._alloc((4,), np.uint32)
        self._flush_chunked = not self.gpu  # see _FLUSH_READ_WGSL
        self._sync_buf = self.wdev.create_buffer(size=16, usage=wgpu.BufferUsage.COPY_SRC)
        self._fill = self.compile_source(_FILL_WGSL, "fill", "<fill>")
        self._flush_read = self.compile_source(_FLUSH_READ_WGSL, "flush_read", "<flush_read>")
        self._nvml = find_index(name=device.name) if device.vendor == "NVIDIA" else None

    # -- memory ----------------------------------------------------------------------------
    def _alloc(self, shape, dtype) -> WgpuBuffer:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        size = max(_ALIGN, -(-nbytes // _ALIGN) * _ALIGN)
        cap = self.limits["max-buffer-size"]
        if size > cap:
            raise Unsupported(f"a {size / 2**20:.0f} MiB buffer exceeds this adapter's buffer size limit "
                              f"({cap / 2**20:.0f} MiB)")
        # larger than the storage-binding limit is allowed: kernels bind windows of it (be.window)
        buf = self.wdev.create_buffer(
            size=size, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
        return WgpuBuffer(buf, tuple(shape), dtype)

    def upload(self, arr: np.ndarray) -> WgpuBuffer:
        arr = np.ascontiguousarray(arr)
        b = self._alloc(arr.shape, arr.dtype)
        if arr.nbytes:
            self._submit()  # keep queue order: recorded work first
            if arr.nbytes % 4:
                pad = np.zeros(-(-arr.nbytes // 4) * 4, np.uint8)
                pad[: arr.nbytes] = arr.reshape(-1).view(np.uint8)
                arr = pad
            self.queue.write_buffer(b.buf, 0, arr)
        return b

    def empty(self, shape, dtype) -> WgpuBuffer:
        return self._alloc(shape, dtype)

    def download(self, buf: WgpuBuffer) -> np.ndarray:
        self._submit()
        n = buf.nbytes
        if n == 0:
            return np.empty(buf.shape, buf.dtype)
        data = self.queue.read_buffer(buf.buf, 0, -(-n // 4) * 4)
        return np.frombuffer(data, np.uint8, count=n).view(buf.dtype).reshape(buf.shape).copy()

    def fill_bytes(self, buf: WgpuBuffer, value: int) -> None:
        """Every byte of the buffer (padding included) := ``value``, by a small compute shader."""
        pattern = (value & 0xFF) * 0x01010101
        for part, size in self._windows(buf):
            words = size // 4
            self.launch(self._fill, self.grid_2d(-(-words // 256)), None,
                        [part, np.array([words, pattern], np.uint32)])
        self._submit()

    def _windows(self, buf: WgpuBuffer):
        """(binding, bytes) covering every byte of ``buf`` (padding included): the buffer itself
        where it fits one binding, else consecutive windows of ``_window_step`` bytes."""
        step, total = self._window_step(), buf.buf.size
        for off in range(0, total, step):
            size = min(step, total - off)
            yield (buf if size == total else Window(buf, off, size)), size

    def binding_limit(self) -> int:
        """Largest storage binding (bytes): a bigger buffer is bound through windows."""
        return int(self.limits["max-storage-buffer-binding-size"])

    def storage_offset_alignment(self) -> int:
        return int(self.limits.get("min-storage-buffer-offset-alignment", 256))

    def _window_step(self) -> int:
        """The largest window size that is a multiple of the offset alignment (and of 4)."""
        align = self.storage_offset_alignment()
        return max(align, self.binding_limit() // align * align)

    def window(self, buf: WgpuBuffer, offset: int, size: int) -> Window:
        """Bytes [offset, offset + size) of ``buf`` as a binding (``launch`` takes it in place of a
        buffer): offset a multiple of the adapter's storage offset alignment, size of 4 and at most
        the binding limit; a kernel indexes it from 0."""
        align, limit = self.storage_offset_alignment(), self.binding_limit()
        if offset % align or size % 4 or not 0 < size <= limit or offset + size > buf.buf.size:
            raise ValueError(f"window [{offset}, {offset + size}) of a {buf.buf.size}-byte buffer: the "
                             f"offset must be a multiple of {align}, the size a multiple of 4 in "
                             f"(0, {limit}] and inside the buffer")
        return Window(buf, int(offset), int(size))

    # -- compile and launch ----------------------------------------------------------------
    def compile(self, path: Path, entry: str, defines: dict[str, Any] | None = None,
                options: tuple[str, ...] = ()):
        """Compute pipeline of ``entry`` in the WGSL file ``path`` with each ``{{NAME}}`` replaced
        by ``defines[NAME]``: a placeholder without a define, or a define the source does not
        use, raises ValueError. Cached on path, mtime, defines and entry. WGSL has no compiler
        options: ``options`` must be empty."""
        if options:
            raise ValueError(f"webgpu compile: WGSL takes no compiler options (got {options})")
        path = Path(path)
        defs = tuple(sorted((str(k), str(v)) for k, v in (defines or {}).items()))
        key = (str(path), path.stat().st_mtime_ns, defs, entry)
        if key not in self._pipelines:
            src = read_source(path)
            used = set(_PLACEHOLDER.findall(src))
            unused = sorted(k for k, _ in defs if k not in used)
            if unused:
                raise ValueError(f"{path.name}: defines {unused} are not used; placeholders: {sorted(used)}")
            values = dict(defs)
            missing = sorted(used - set(values))
            if missing:
                raise ValueError(f"{path.name}: placeholders {missing} have no define")
            src = unroll(_PLACEHOLDER.sub(lambda m: values[m.group(1)], src))
            self._pipelines[key] = self.compile_source(src, entry, f"{path.name} {defs}")
        return self._pipelines[key]

    def compile_source(self, src: str, entry: str, label: str = ""):
        """Compute pipeline of ``entry`` in WGSL source text; errors raise RuntimeError."""
        try:
            module = self.wdev.create_shader_module(code=src, label=label)
            return self.wdev.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": entry}, label=f"{label}:{entry}")
        except wgpu.GPUError as e:
            raise RuntimeError(f"WGSL {label} entry {entry!r} failed on {self.device.name}:\n{e}") from None

    def grid_2d(self, n_groups: int) -> tuple[int, int, int]:
        return grid_2d(n_groups, self.limits["max-compute-workgroups-per-dimension"])

    def launch(self, pipeline, groups: tuple[int, ...], block: tuple[int, ...] | None, args: list,
               *, shared_mem: int = 0) -> None:
        """Record a dispatch of ``groups`` (x, y, z) workgroups. ``args``: buffers bind to
        @binding(0..k-1) of @group(0); a trailing NumPy array or record (u32/f32 params) goes to
        a uniform at @binding(k). ``block`` is fixed by the shader's @workgroup_size (pass None);
        workgroup memory is declared in the shader (``shared_mem`` must be 0)."""
        if shared_mem:
            raise ValueError("webgpu launch: declare var<workgroup> arrays; shared_mem must be 0")
        params = args[-1] if args and isinstance(args[-1], np.ndarray | np.void) else None
        buffers: list[WgpuBuffer | Window] = list(args[:-1] if params is not None else args)
        limit = self.binding_limit()
        for b in buffers:
            if not isinstance(b, Window) and b.buf.size > limit:
                raise Unsupported(f"a {b.buf.size / 2**20:.0f} MiB buffer is above this adapter's storage "
                                  f"binding limit ({limit / 2**20:.0f} MiB) and this kernel binds it whole "
                                  "(a kernel that binds windows of it, be.window, can run)")
        wg = tuple(int(w) for w in groups) + (1,) * (3 - len(groups))
        lim = self.limits["max-compute-workgroups-per-dimension"]
        if max(wg) > lim:
            raise ValueError(f"dispatch {wg} exceeds {lim} groups per dimension; use grid_2d()")
        pbytes = b"" if params is None else np.ascontiguousarray(params).tobytes()
        spans = [(b.offset, b.size) if isinstance(b, Window) else (0, b.buf.size) for b in buffers]
        key = (id(pipeline), tuple((id(b.buf), *sp) for b, sp in zip(buffers, spans, strict=True)), pbytes)
        owner = buffers[0].base if isinstance(buffers[0], Window) else buffers[0]
        hit = owner._bind.get(key)
        if hit is None:
            layout = self._layouts.get(id(pipeline))
            if layout is None:
                layout = self._layouts[id(pipeline)] = (pipeline, pipeline.get_bind_group_layout(0))
            entries = [{"binding": i, "resource": {"buffer": b.buf, "offset": off, "size": size}}
                       for i, (b, (off, size)) in enumerate(zip(buffers, spans, strict=True))]
            keep = [b.buf for b in buffers]
            if params is not None:
                ubuf = self._uniform(pbytes)
                entries.append({"binding": len(buffers),
                                "resource": {"buffer": ubuf, "offset": 0, "size": ubuf.size}})
                keep.append(ubuf)
            bg = self.wdev.create_bind_group(layout=layout[1], entries=entries)
            hit = owner._bind[key] = (bg, keep)  # keep: the ids in key stay unique while cached
        self._pending.append((pipeline, hit[0], wg))

    def _uniform(self, data: bytes):
        ubuf = self._uniforms.get(data)
        if ubuf is None:
            if len(self._uniforms) > 256:
                self._uniforms.clear()
            padded = data.ljust(max(16, -(-len(data) // 16) * 16), b"\0")
            ubuf = self.wdev.create_buffer_with_data(
                data=padded, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
            self._uniforms[data] = ubuf
        return ubuf

    def _encode(self, dispatches: list[tuple], timestamps: bool = False):
        enc = self.wdev.create_command_encoder()
        last = len(dispatches) - 1
        for i, (pipeline, bg, wg) in enumerate(dispatches):
            tw = None
            if timestamps:
                tw = {"query_set": self._qs}
                if i == 0:
                    tw["beginning_of_pass_write_index"] = 0
                if i == last:
                    tw["end_of_pass_write_index"] = 1
                if len(tw) == 1:
                    tw = None
            cpass = enc.begin_compute_pass(timestamp_writes=tw)
            cpass.set_pipeline(pipeline)
            cpass.set_bind_group(0, bg)
            cpass.dispatch_workgroups(*wg)
            cpass.end()
        return enc

    def _submit(self) -> None:
        if self._pending:
            work, self._pending = self._pending, []
            self.queue.submit([self._encode(work).finish()])

    # -- execution -------------------------------------------------------------------------
    def synchronize(self) -> None:
        self._submit()
        self._wait()

    def _wait(self) -> None:
        """Block until submitted work is done. (wgpu-py 0.32's on_submitted_work_done_sync fails
        with wgpu-native 29: a callback signature mismatch; a blocking device poll does it.)"""
        poll = getattr(self.wdev, "_poll_wait", None)
        if poll is not None:
            poll()
        else:
            self.queue.read_buffer(self._sync_buf)  # a map waits for all submitted work

    def _direct(self, fn) -> list[str]:
        """Run ``fn`` with the queue's submit/write_buffer shadowed: the names of the calls it
        made on the queue directly (work that would run before, outside, the timed window)."""
        calls: list[str] = []
        q = self.queue
        for name in ("submit", "write_buffer"):
            orig = getattr(q, name)
            setattr(q, name, lambda *a, _n=name, _o=orig, **k: (calls.append(_n), _o(*a, **k))[1])
        try:
            fn()
        finally:
            for name in ("submit", "write_buffer"):
                delattr(q, name)
        return calls

    def time(self, fn) -> float:
        """One sample. The dispatches ``fn`` records are encoded into one command buffer with a
        timestamp at the beginning of the first pass and the end of the last, and submitted
        once after ``fn`` returns: the host's recording is outside the window by construction
        (``start_method``). Work ``fn`` submits or writes to the queue itself would run before
        the window: rejected (``OutsideWindow``)."""
        from backends.window import OutsideWindow

        self._submit()
        direct = self._direct(fn)
        if direct:
            self._pending = []
            self._wait()
            raise OutsideWindow(f"fn called queue.{', queue.'.join(sorted(set(direct)))} directly: that "
                                "work runs outside the timed window (launch through the backend)")
        work, self._pending = self._pending, []
        if not work:
            raise RuntimeError("time(fn): fn launched no kernel through this backend")
        if self.timer == "host":
            cb = self._encode(work).finish()
            t0 = _time.perf_counter()
            self.queue.submit([cb])
            self._wait()
            return _time.perf_counter() - t0
        enc = self._encode(work, timestamps=True)
        enc.resolve_query_set(self._qs, 0, 2, self._qbuf, 0)
        self.queue.submit([enc.finish()])
        t0, t1 = np.frombuffer(self.queue.read_buffer(self._qbuf, 0, 16), np.uint64)
        if t1 <= t0:
            raise RuntimeError(f"timestamp query gave end {t1} <= start {t0}")
        return float(t1 - t0) * self.ts_period * 1e-9

    def flush_l2(self) -> None:
        """A read of the whole flush buffer, window by window (see Backend.flush_l2)."""
        groups = 8 * max(1, self.device.compute_units or 16)
        # whole vec4s: the buffer is a multiple of 16 bytes and so is every window (the offset
        # alignment is a power of two of at least 32 in WebGPU)
        for part, size in self._windows(self._flush):
            n = size // 16
            run = -(-n // (groups * 256)) if self._flush_chunked else 1
            self.launch(self._flush_read, (groups, 1, 1), None,
                        [part, self._flush_sink, np.array([n, groups * 256, run], np.uint32)])
        self._submit()

    def clocks(self) -> dict:
        if self._nvml is None:
            return {}
        return gpu_clocks(self._nvml)
