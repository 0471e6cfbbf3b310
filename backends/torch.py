"""torch: the baseline a user would otherwise pick (eager ops, cuBLAS, SDPA, torch.compile).

Buffers are torch tensors. On CUDA devices ``time`` uses CUDA events on the current stream; on
the CPU it is host time around the call (torch CPU ops are synchronous), labelled ``host``.
"""

from __future__ import annotations

import time as _time

import numpy as np
import torch

from backends.base import (
    Backend,
    Device,
    canonical_pci,
    cuda_visible_env,
    flush_bytes,
    host_cpu_name,
    host_memory_bytes,
)
from backends.nvml import gpu_clocks, nvml_identity

TORCH_DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
                "int32": torch.int32, "uint32": torch.uint32, "uint16": torch.uint16, "int8": torch.int8,
                "uint8": torch.uint8}


def cuda_devices(backend: str, versions: dict[str, str]) -> list[Device]:
    """The CUDA GPUs torch sees, as ``backend``'s devices (torch and Triton share this)."""
    out = []
    for i in range(torch.cuda.device_count() if torch.cuda.is_available() else 0):
        p = torch.cuda.get_device_properties(i)
        # NVML by PCI id: under CUDA_VISIBLE_DEVICES (a pinned worker) CUDA index 0 is not NVML's 0
        pci = None
        if hasattr(p, "pci_bus_id"):
            pci = canonical_pci(domain=getattr(p, "pci_domain_id", 0), bus=p.pci_bus_id,
                                device=getattr(p, "pci_device_id", 0))
        ident = nvml_identity(i, pci)
        out.append(Device(backend, i, p.name, "gpu", "NVIDIA", memory_bytes=p.total_memory,
                          compute_units=p.multi_processor_count, l2_bytes=getattr(p, "L2_cache_size", 0),
                          driver=ident.get("driver") or torch.version.cuda or "",
                          pci_bus_id=pci or ident.get("pci_bus_id"), uuid=ident.get("uuid"),
                          features=[f"sm_{p.major}{p.minor}"], versions=versions))
    return out


def compile_static(fn):
    """``torch.compile(fn, dynamic=False)``: one graph per case, specialised to its shapes as a
    user's compiled model is (the torch baselines' compiled variants). Dynamo's caches are reset
    first, so a run over many cases never reaches its recompile limit."""
    torch._dynamo.reset()
    return torch.compile(fn, dynamic=False)


class TorchBackend(Backend):
    name = "torch"
    timer = "host"
    #: how a timed window opens (backends/window.py): host time on the CPU
    start_method = "host"

    @classmethod
    def pin_env(cls, device: Device) -> dict[str, str]:  # Triton inherits it
        return cuda_visible_env(device)

    @classmethod
    def devices(cls) -> list[Device]:
        v = {"torch": torch.__version__}
        out = cuda_devices("torch", v)
        out.append(Device("torch", len(out), host_cpu_name(), "cpu", "", host_memory_bytes(),
                          torch.get_num_threads(), versions=v))
        return out

    def __init__(self, device: Device):
        super().__init__(device)
        self.gpu = device.kind == "gpu"
        self.dev = torch.device("cuda", device.index) if self.gpu else torch.device("cpu")
        if self.gpu:
            torch.cuda.set_device(self.dev)
            self.timer = "cuda-event"
            self.start_method = "blocking-kernel"
        # int64 words: the CPU sums them at memory speed, int32 ones (widened to int64 one by one)
        # ~12 × slower — 0.65 against 0.05 s per flush of a 480 MiB cache's 960 MiB buffer
        self._flush = torch.full((flush_bytes(device) // 8,), 0x5A5A5A5A5A5A5A5A, dtype=torch.int64,
                                 device=self.dev)
        self._blocker, self._blocker_why = None, ""
        #: blocking starts that opened on their timeout; device time busy after the last window
        self.start_timeouts, self.outside_s = 0, 0.0
        #: the fallback lead without CuPy: ~100 µs of spin at 2 GHz
        self._lead_cycles = 200_000

    def upload(self, arr: np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(arr)).to(self.dev)

    def empty(self, shape, dtype):
        return torch.empty(tuple(shape), dtype=TORCH_DTYPES[np.dtype(dtype).name], device=self.dev)

    def download(self, buf) -> np.ndarray:
        return buf.detach().cpu().numpy()

    def fill_bytes(self, buf, value: int) -> None:
        buf.view(torch.uint8).fill_(value)

    def alloc_guarded(self, shape, dtype, guard: int, canary: int, data: np.ndarray | None = None):
        """A tensor of ``shape`` × ``dtype`` (holding ``data`` if given), a view into a larger
        one whose ``guard`` bytes on each side hold ``canary``; returns (tensor, a function that
        downloads both guard regions). See suite/guard.py."""
        dtype = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        whole = torch.full((n + 2 * guard,), canary, dtype=torch.uint8, device=self.dev)
        inner = whole[guard:guard + n].view(TORCH_DTYPES[dtype.name]).view(tuple(shape))
        if data is not None:
            inner.copy_(torch.from_numpy(np.ascontiguousarray(data).reshape(tuple(shape))))
        return inner, lambda: torch.cat([whole[:guard], whole[guard + n:]]).cpu().numpy()

    def synchronize(self) -> None:
        if self.gpu:
            torch.cuda.synchronize(self.dev)

    def _blocking(self):
        """The blocking start kernel (backends/window.py, through CuPy on torch's stream), built
        on first use; None where CuPy is missing: then a fixed ``torch.cuda._sleep`` lead."""
        if self._blocker is None and not self._blocker_why:
            from backends.window import cuda_blocking_start

            self._blocker, self._blocker_why = cuda_blocking_start()
            self.start_method = "blocking-kernel" if self._blocker else f"spin-lead ({self._blocker_why})"
        return self._blocker

    def time(self, fn) -> float:
        """One sample. CPU: host time around the call. CUDA: the current stream is held by the
        blocking kernel while the start event and ``fn``'s work are enqueued (the same rule as
        the cuda and triton adapters), CUDA events give the time, then the whole device is
        synchronised and the time it stayed busy is kept in ``outside_s``."""
        if not self.gpu:
            t0 = _time.perf_counter()
            fn()
            return _time.perf_counter() - t0
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        blocker = self._blocking()
        if blocker is not None:
            blocker.hold(torch.cuda.current_stream().cuda_stream)
        elif hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(self._lead_cycles)
        start.record()
        try:
            fn()
        finally:
            end.record()
            if blocker is not None:
                blocker.release()
        end.synchronize()
        t0 = _time.perf_counter()
        torch.cuda.synchronize(self.dev)
        self.outside_s = _time.perf_counter() - t0
        if blocker is not None and blocker.timed_out():
            self.start_timeouts += 1
        return start.elapsed_time(end) * 1e-3

    def flush_l2(self) -> None:
        self._flush.sum()  # a read of the whole buffer (see Backend.flush_l2)

    def clocks(self) -> dict:
        return gpu_clocks(self.device.index, self.device.pci_bus_id) if self.gpu else {}
