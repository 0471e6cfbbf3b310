"""cuda: CUDA C kernels through CuPy (``RawModule``), or compiled only through NVRTC.

With CuPy and a GPU, each GPU is a ``run`` device: buffers are CuPy arrays, ``compile`` builds a
``RawModule`` with NVRTC for the device's own architecture, ``time`` brackets the launch with CUDA
events. Without them (CI, a laptop) there is one ``compile`` device: every source is compiled
with NVRTC (``cuda-bindings`` + ``nvidia-cuda-nvrtc``, no driver needed) for sm_80 and sm_90,
and the ptxas resource report (registers, shared memory, spills) lands in ``compile_reports``;
nothing runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time as _time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from backends.base import (
    Backend,
    Device,
    Unsupported,
    canonical_pci,
    cuda_visible_env,
    flush_bytes,
    read_source,
)
from backends.nvml import gpu_clocks, nvml_identity

#: options of every compile (run and compile-only): no fast math, line info for profilers
BASE_OPTIONS = ("-std=c++17", "-lineinfo")
#: architectures of the compile-only device (Ampere A100, Hopper H100/H200)
COMPILE_ARCHS = ("sm_80", "sm_90")
COMPILE_FIX = "pip install cuda-bindings nvidia-cuda-nvrtc"

_ENTRY = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
# a spin kernel that keeps the stream busy while the host enqueues the timed work (see ``time``)
_SPIN_SRC = r"""extern "C" __global__ void solbench_spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
}"""


def _define_options(defines: dict | None) -> tuple[str, ...]:
    return tuple(f"-D{k}={int(v) if isinstance(v, bool) else v}" for k, v in sorted((defines or {}).items()))


def cuda_include_dirs() -> list[str]:
    """Directories holding the CUDA headers (cuda_fp16.h, cuda_bf16.h, mma.h): the pip wheels
    (``nvidia-cuda-runtime``, ``nvidia-cuda-crt``), then $CUDA_PATH/$CUDA_HOME, /usr/local/cuda."""
    import os
    import sys

    found = []
    roots = [Path(p) / "nvidia" for p in sys.path if p]
    for root in roots:
        found += [str(d) for d in sorted(root.glob("cu*/include")) if (d / "cuda_fp16.h").is_file()]
    for env in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(env):
            found.append(str(Path(os.environ[env]) / "include"))
    found.append("/usr/local/cuda/include")
    return [d for i, d in enumerate(found) if d not in found[:i] and (Path(d) / "cuda_fp16.h").is_file()]


def split_arch(options: tuple[str, ...] | list[str]) -> tuple[str | None, tuple[str, ...]]:
    """(the ``-arch=`` a kernel asks for, the other options)."""
    arch, rest = None, []
    for o in options:
        if o.startswith(("-arch=", "--gpu-architecture=")):
            arch = o.split("=", 1)[1]
        else:
            rest.append(o)
    return arch, tuple(rest)


def _entries(src: str) -> list[str]:
    return _ENTRY.findall(src)


@dataclass
class CompiledOnly:
    """What ``compile`` returns on the compile-only device: nothing can launch it."""

    path: Path
    entry: str
    reports: list[dict[str, Any]] = field(default_factory=list)


# ---- NVRTC (compile-only device) ------------------------------------------------------------

def nvrtc_available() -> str | None:
    """None when NVRTC can be used here, else why not."""
    try:
        from cuda.bindings import nvrtc

        err, *_ = nvrtc.nvrtcVersion()
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return f"nvrtcVersion failed: {err}"
    except Exception as e:  # noqa: BLE001 - missing wheel, missing libnvrtc
        return f"{type(e).__name__}: {e}"
    return None


def nvrtc_version() -> str:
    from cuda.bindings import nvrtc

    _, major, minor = nvrtc.nvrtcVersion()
    return f"{major}.{minor}"


def _nvrtc_compile(src: str, name: str, options: list[str]) -> tuple[bool, str, str]:
    """Compile ``src`` with NVRTC; returns (ok, log, ptx)."""
    from cuda.bindings import nvrtc

    ok_code = nvrtc.nvrtcResult.NVRTC_SUCCESS
    err, prog = nvrtc.nvrtcCreateProgram(src.encode(), name.encode(), 0, [], [])
    if err != ok_code:
        raise RuntimeError(f"nvrtcCreateProgram: {err}")
    try:
        opts = [o.encode() for o in options]
        (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        ptx = ""
        if res == ok_code:
            _, size = nvrtc.nvrtcGetPTXSize(prog)
            buf = b" " * size
            nvrtc.nvrtcGetPTX(prog, buf)
            ptx = buf.rstrip(b"\0").decode()
        return res == ok_code, log.rstrip(b"\0").decode(errors="replace").strip(), ptx
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def parse_ptxas_report(log: str, entry: str) -> dict[str, Any]:
    """Registers, shared memory and spill bytes of ``entry`` from a ``ptxas -v`` log."""
    out: dict[str, Any] = {"registers": None, "smem_bytes": None, "spill_bytes": None, "stack_bytes": None}
    blocks = re.split(r"ptxas info\s*: Compiling entry function", log)
    for block in blocks[1:]:
        if not re.match(rf"\s*'{re.escape(entry)}'", block):
            continue
        if m := re.search(r"Used (\d+) registers", block):
            out["registers"] = int(m.group(1))
        m = re.search(r"(\d+) bytes smem", block)
        out["smem_bytes"] = int(m.group(1)) if m else 0
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", block)
        if m:
            out["stack_bytes"] = int(m.group(1))
            out["spill_bytes"] = int(m.group(2)) + int(m.group(3))
    return out


def bundled_ptxas() -> str | None:
    """ptxas shipped in Triton's wheel (used only when NVRTC cannot run ptxas itself)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        if spec and spec.origin:
            p = Path(spec.origin).parent / "backends" / "nvidia" / "bin" / "ptxas"
            if p.is_file():
                return str(p)
    except (ImportError, ValueError):
        pass
    return shutil.which("ptxas")


def compile_nvrtc(src: str, name: str, entry: str, defines: dict | None = None,
                  archs=COMPILE_ARCHS, options: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Compile ``src`` for each architecture with NVRTC and return one resource report per arch.

    ``options``: the kernel's own NVRTC options; an ``-arch=`` among them (e.g. ``sm_90a`` for
    wgmma) replaces ``archs``. The CUDA headers (``cuda_include_dirs``) are on the include path.

    NVRTC compiles straight to SASS (``-arch=sm_XX``) and runs its built-in ptxas with ``-v``, so
    the report needs no ptxas binary. (The PTX of NVRTC 13 is ISA 9.x, newer than the ptxas 12.x
    in Triton's wheel accepts; that ptxas is only a fallback for an NVRTC without ptxas options.)
    Raises RuntimeError with the compiler log on an error or when ``entry`` is not a kernel.
    """
    want, extra = split_arch(options)
    inc = tuple(f"-I{d}" for d in cuda_include_dirs())

    def one(arch: str) -> dict[str, Any]:
        opts = [*BASE_OPTIONS, *_define_options(defines), *extra, *inc, f"-arch={arch}", "--ptxas-options=-v"]
        ok, log, ptx = _nvrtc_compile(src, name, opts)
        if not ok and "ptxas-options" in log:  # an NVRTC without built-in ptxas options
            opts = [*BASE_OPTIONS, *_define_options(defines), *extra, *inc, f"-arch=compute_{arch[3:]}"]
            ok, log, ptx = _nvrtc_compile(src, name, opts)
            if ok:
                log = _external_ptxas(ptx, arch) or log
        if not ok:
            raise RuntimeError(f"NVRTC {arch}: {name} failed to compile ({' '.join(opts)}):\n{log}")
        if not re.search(rf"\.entry\s+{re.escape(entry)}\s*\(", ptx):
            raise RuntimeError(f"{name}: no kernel {entry!r} (extern \"C\" __global__); "
                               f"kernels found: {', '.join(_entries(src)) or 'none'}")
        return {"entry": entry, "arch": arch, **parse_ptxas_report(log, entry), "options": " ".join(opts),
                "log": log}

    arch_list = [want] if want else list(archs)
    if len(arch_list) == 1:
        return [one(arch_list[0])]
    # the architectures in parallel: NVRTC runs without the GIL (~1.7 × faster for two on 2 cores)
    with ThreadPoolExecutor(len(arch_list)) as ex:
        return list(ex.map(one, arch_list))


def _external_ptxas(ptx: str, arch: str) -> str | None:
    exe = bundled_ptxas()
    if not exe:
        return None
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "k.ptx").write_text(ptx)
        r = subprocess.run([exe, "-v", f"--gpu-name={arch}", "k.ptx", "-o", "k.cubin"], cwd=d,
                           capture_output=True, text=True, timeout=120)
    return (r.stdout + r.stderr).strip()


# ---- the backend ----------------------------------------------------------------------------

#: CUtensorMapDataType of the element types tensor_map_2d takes, with their sizes in bytes
TMAP_TYPES = {"fp16": (6, 2), "bf16": (9, 2), "u16": (1, 2), "u64": (4, 8)}


def tensor_map_2d(ptr: int, bf16: bool, rows: int, cols: int, box_rows: int, box_cols: int,
                  *, elem: str = "", swizzle: int = 3) -> bytes:
    """The 128-byte CUtensorMap (driver API ``cuTensorMapEncodeTiled``, through ctypes: no binding
    package needed) of a row-major [rows, cols] matrix at device address ``ptr`` of fp16/bf16
    (``bf16``) or ``elem`` (a TMAP_TYPES key) elements: boxes of box_rows × box_cols elements,
    ``swizzle`` a CUtensorMapSwizzle (3: 128-byte, box_cols·size ≤ 128; 0: none, box_cols ≤ 256),
    zeros read out of bounds. Needs a CUDA driver (sm_90+: TMA); the row stride must be a multiple
    of 16 bytes."""
    import ctypes

    lib = ctypes.CDLL("libcuda.so.1")
    f = lib.cuTensorMapEncodeTiled
    f.restype = ctypes.c_int
    u32, u64, ptr_t = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_void_p
    p64, p32, enum = ctypes.POINTER(u64), ctypes.POINTER(u32), ctypes.c_int
    f.argtypes = [ptr_t, enum, u32, ptr_t, p64, p64, p32, p32, enum, enum, enum, enum]
    buf = ctypes.create_string_buffer(128 + 64)
    out = (ctypes.addressof(buf) + 63) & ~63  # the map must be 64-byte aligned
    # CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9 / FLOAT16 = 6; INTERLEAVE_NONE = 0, SWIZZLE_128B = 3,
    # L2_PROMOTION_L2_128B = 2, FLOAT_OOB_FILL_NONE = 0 (out-of-bounds elements read as zeros)
    dtype, size = TMAP_TYPES[elem or ("bf16" if bf16 else "fp16")]
    res = f(out, dtype, 2, ptr, (u64 * 2)(cols, rows), (u64 * 1)(cols * size),
            (u32 * 2)(box_cols, box_rows), (u32 * 2)(1, 1), 0, swizzle, 2, 0)
    if res != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled: CUresult {res} for [{rows}, {cols}], "
                           f"boxes {box_rows}×{box_cols}")
    return ctypes.string_at(out, 128)


class CudaBackend(Backend):
    """CUDA C through CuPy on a GPU; compile-only through NVRTC elsewhere.

    ``compile(path, entry, defines)`` → a CuPy ``RawKernel`` (or a ``CompiledOnly`` record),
    cached by (path, mtime, defines, entry). ``launch(fn, grid, block, args, shared_mem)``
    enqueues on the current stream; ``args`` are CuPy arrays and NumPy scalars (``np.int64`` for
    ``long long`` parameters). ``compile_reports`` collects one dict per compile and arch: entry,
    arch, registers, smem_bytes, spill_bytes, stack_bytes, log.
    """

    name = "cuda"
    timer = "cuda-event"
    #: device time the stream is kept busy before each timed launch, so the host's launch
    #: overhead is hidden rather than timed (0 disables it)
    launch_lead_s = 100e-6
    #: how a timed window opens (backends/window.py); set when the blocking kernel is built
    start_method = "blocking-kernel"

    @classmethod
    def pin_env(cls, device: Device) -> dict[str, str]:
        return cuda_visible_env(device)

    @classmethod
    def devices(cls) -> list[Device]:
        try:
            import cupy

            count = cupy.cuda.runtime.getDeviceCount()
            why = f"{cupy.__version__}, no CUDA GPU"
        except Exception as e:  # noqa: BLE001 - no cupy, no driver, no device
            count, why = 0, f"unavailable: {type(e).__name__}: {e}"
        if count > 0:
            return [cls._gpu_device(i) for i in range(count)]
        # no GPU: compile-only; versions["cupy"] says why CuPy could not run anything
        reason = nvrtc_available()
        versions = {"cupy": why, **({} if reason else {"nvrtc": nvrtc_version()})}
        return [Device("cuda", 0, "NVRTC sm_80+sm_90 (compile only)", "cpu", "NVIDIA", mode="compile",
                       reason=f"{reason}; fix: {COMPILE_FIX}" if reason else None, versions=versions)]

    @staticmethod
    def _gpu_device(i: int) -> Device:
        import cupy

        rt = cupy.cuda.runtime
        p = rt.getDeviceProperties(i)
        name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
        try:
            pci = canonical_pci(rt.deviceGetPCIBusId(i))  # "0000:19:00.0"
        except Exception:  # noqa: BLE001
            pci = canonical_pci(domain=p.get("pciDomainID", 0), bus=p.get("pciBusID", 0),
                                device=p.get("pciDeviceID", 0))
        ident = nvml_identity(i, pci)
        rv, dv = rt.runtimeGetVersion(), rt.driverGetVersion()
        uuid = ident.get("uuid")
        if not uuid and isinstance(p.get("uuid"), bytes) and len(p["uuid"]) == 16:
            h = p["uuid"].hex()
            uuid = f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return Device("cuda", i, name, "gpu", "NVIDIA", memory_bytes=int(p["totalGlobalMem"]),
                      compute_units=int(p["multiProcessorCount"]), l2_bytes=int(p.get("l2CacheSize", 0)),
                      driver=ident.get("driver") or f"CUDA driver API {dv // 1000}.{dv % 1000 // 10}",
                      pci_bus_id=pci, uuid=uuid, features=[f"sm_{p['major']}{p['minor']}"],
                      versions={"cupy": cupy.__version__, "cuda_runtime": f"{rv // 1000}.{rv % 1000 // 10}"})

    def __init__(self, device: Device):
        super().__init__(device)
        self.compile_only = device.mode == "compile"
        #: what compile-only builds for (``require_arch`` checks the oldest; inspect sets --arch)
        self.compile_archs: tuple[str, ...] = COMPILE_ARCHS
        self.compile_reports: list[dict[str, Any]] = []
        self._cache: dict[tuple, Any] = {}
        self._smem_optin: dict[int, int] = {}  # id(kernel) → dynamic shared memory opted in
        self._flush = None
        self._spin = None
        self._blocker, self._blocker_why = None, ""
        #: blocking starts that opened on their timeout; device time busy after the last window
        self.start_timeouts, self.outside_s = 0, 0.0
        if self.compile_only:
            if device.reason:
                raise RuntimeError(device.reason)
            self.timer = "none"
            return
        import cupy

        self.cp = cupy
        self._dev = cupy.cuda.Device(device.index)
        self._dev.use()
        # SM clock, only to size the spin lead (cudaDeviceProp.clockRate is gone in CUDA 13)
        mhz = nvml_identity(device.index, device.pci_bus_id).get("sm_clock_max_mhz")
        self._clock_khz = int(mhz * 1000) if mhz else 2_000_000

    # -- compile / launch ------------------------------------------------------------------
    def compile(self, path: Path, entry: str, defines: dict | None = None, options: tuple[str, ...] = ()):
        path = Path(path)
        key = (str(path), path.stat().st_mtime_ns, tuple(sorted((defines or {}).items())), tuple(options),
               entry)
        if key in self._cache:
            return self._cache[key]
        src = read_source(path)
        if self.compile_only:
            prog = CompiledOnly(path, entry, compile_nvrtc(src, path.name, entry, defines,
                                                           archs=self.compile_archs, options=options))
            self.compile_reports.extend(prog.reports)
        else:
            prog = self._compile_cupy(src, path.name, entry, defines, tuple(options))
        self._cache[key] = prog
        return prog

    def require_arch(self, least: int, needs: str) -> None:
        """Unsupported, with ``needs`` as the reason, where the target is older than sm_``least``:
        this GPU, or compile-only the oldest of ``compile_archs``. For kernels whose PTX needs it
        (an ``-arch=`` in the compile options pins one architecture instead)."""
        have = (min(int(a.removeprefix("sm_").rstrip("a")) for a in self.compile_archs) if self.compile_only
                else int(self._dev.compute_capability))
        if have < least:
            raise Unsupported(f"{needs}: needs sm_{least} or newer; the target is sm_{have}")

    def require_mma_sync(self) -> None:
        """``require_arch`` for the kernels of ops/common/mma_sm80.cuh and their like."""
        self.require_arch(80, "mma.sync m16n8k16 on fp16/bf16 and cp.async")

    def _compile_cupy(self, src: str, name: str, entry: str, defines: dict | None, options: tuple[str, ...]):
        cp = self.cp
        want, extra = split_arch(options)
        have = f"sm_{self._dev.compute_capability}"
        if want and want.rstrip("a") != have:
            raise Unsupported(f"{name}: {entry} is built for {want}; this device is {have}")
        # CuPy puts the CUDA headers on the path itself; ours cover a CuPy without them
        opts = (*BASE_OPTIONS, *_define_options(defines), *extra,
                *(f"-I{d}" for d in cuda_include_dirs()), *((f"-arch={want}",) if want else ()))
        try:
            fn = cp.RawModule(code=src, options=opts).get_function(entry)
            attrs = {"registers": fn.num_regs, "smem_bytes": fn.shared_size_bytes,
                     "spill_bytes": None, "stack_bytes": fn.local_size_bytes}
        except cp.cuda.compiler.CompileException as e:
            raise RuntimeError(f"{name}: {entry}: compile failed ({' '.join(opts)}):\n{e}") from None
        except cp.cuda.driver.CUDADriverError as e:
            if "NOT_FOUND" not in str(e):
                raise
            raise RuntimeError(f"{name}: no kernel {entry!r} (extern \"C\" __global__); "
                               f"kernels found: {', '.join(_entries(src)) or 'none'}") from None
        self.compile_reports.append({"entry": entry, "arch": want or have, **attrs,
                                     "options": " ".join(opts), "log": ""})
        return fn

    def launch(self, fn, groups: tuple, block: tuple, args: list, *, shared_mem: int = 0) -> None:
        """``groups`` blocks of ``block`` threads on the current stream; ``shared_mem`` bytes of
        dynamic shared memory (beyond 48 KiB the kernel is opted in once, up to the device's
        per-block limit; more raises Unsupported)."""
        if self.compile_only:
            raise Unsupported("compile-only device (no CUDA GPU): kernels compile but cannot run")
        if shared_mem > 48 * 1024 and self._smem_optin.get(id(fn), 0) < shared_mem:
            limit = self.smem_per_block()
            if shared_mem + fn.shared_size_bytes > limit:
                raise Unsupported(f"needs {shared_mem + fn.shared_size_bytes} bytes of shared memory; "
                                  f"the device allows {limit} per block")
            fn.max_dynamic_shared_size_bytes = shared_mem
            self._smem_optin[id(fn)] = shared_mem  # (compiled functions live in self._cache)
        fn(tuple(groups), tuple(block), tuple(args), shared_mem=shared_mem)

    def smem_per_block(self) -> int:
        """Dynamic shared memory one block may opt in to (bytes); compile-only: an sm_90 part's."""
        if self.compile_only:
            return 227 * 1024
        return int(self._dev.attributes.get("MaxSharedMemoryPerBlockOptin", 48 * 1024))

    # -- memory ----------------------------------------------------------------------------
    def upload(self, arr: np.ndarray):
        arr = np.ascontiguousarray(arr)
        return arr.copy() if self.compile_only else self.cp.asarray(arr)

    def empty(self, shape, dtype):
        return (np if self.compile_only else self.cp).empty(tuple(shape), dtype=np.dtype(dtype))

    def download(self, buf) -> np.ndarray:
        return np.asarray(buf) if self.compile_only else self.cp.asnumpy(buf)

    def fill_bytes(self, buf, value: int) -> None:
        buf.reshape(-1).view(np.uint8).fill(value)

    def alloc_guarded(self, shape, dtype, guard: int, canary: int, data: np.ndarray | None = None):
        """A buffer of ``shape`` × ``dtype`` (holding ``data`` if given) inside a larger one whose
        ``guard`` bytes on each side hold ``canary``; returns (buffer, a function that downloads
        both guard regions). See suite/guard.py."""
        cp, dtype = self.cp, np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        whole = cp.full(n + 2 * guard, canary, dtype=cp.uint8)
        inner = whole[guard:guard + n].view(dtype).reshape(tuple(shape))
        if data is not None:
            inner.set(np.ascontiguousarray(data).reshape(tuple(shape)))
        return inner, lambda: cp.asnumpy(cp.concatenate([whole[:guard], whole[guard + n:]]))

    # -- execution -------------------------------------------------------------------------
    def synchronize(self) -> None:
        if not self.compile_only:
            self.cp.cuda.Device().synchronize()  # the whole device: work on any stream

    def _lead(self) -> None:
        """Enqueue a short spin so that the start event fires after ``fn`` has been enqueued."""
        if self.launch_lead_s <= 0:
            return
        if self._spin is None:
            self._spin = self.cp.RawModule(code=_SPIN_SRC).get_function("solbench_spin")
        cycles = int(self.launch_lead_s * self._clock_khz * 1e3)
        self._spin((1,), (1,), (np.int64(cycles),))

    def _blocking(self):
        """The device's blocking start kernel (backends/window.py), built on first use; None (and
        the fixed spin lead, labelled) where CuPy cannot build it."""
        if self._blocker is None and not self._blocker_why:
            from backends.window import cuda_blocking_start

            self._blocker, self._blocker_why = cuda_blocking_start()
            self.start_method = "blocking-kernel" if self._blocker else f"spin-lead ({self._blocker_why})"
        return self._blocker

    def time(self, fn) -> float:
        """One sample: the stream is held by the blocking kernel while the start event and
        ``fn``'s work are enqueued, then released; CUDA events on the current stream give the
        time. The whole device is then synchronised and the time it stayed busy after the end
        event is kept in ``outside_s`` (work on another stream; see suite.timing)."""
        if self.compile_only:
            raise Unsupported("compile-only device (no CUDA GPU): nothing to time")
        cp = self.cp
        stream = cp.cuda.get_current_stream()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        blocker = self._blocking()
        if blocker is not None:
            blocker.hold()
        else:
            self._lead()
        start.record(stream)
        try:
            fn()
        finally:
            end.record(stream)
            if blocker is not None:
                blocker.release()
        end.synchronize()
        t0 = _time.perf_counter()
        cp.cuda.Device().synchronize()
        self.outside_s = _time.perf_counter() - t0
        if blocker is not None and blocker.timed_out():
            self.start_timeouts += 1
        return cp.cuda.get_elapsed_time(start, end) * 1e-3

    def flush_l2(self) -> None:
        if self.compile_only:
            return
        if self._flush is None:
            words = flush_bytes(self.device) // 8
            self._flush = self.cp.full(words, 0x5A5A5A5A5A5A5A5A, dtype=self.cp.uint64)
        self._flush.sum()  # a read of the whole buffer (see Backend.flush_l2)

    def clocks(self) -> dict:
        return {} if self.compile_only else gpu_clocks(self.device.index, self.device.pci_bus_id)
