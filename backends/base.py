"""The contract every backend adapter fulfils (tinygrad's runtime is the model).

A backend is opened on one ``Device``. Kernels (``ops/*/kernels.py``) receive the opened backend
and a case, compile once, and return a launcher ``run(ins, outs)`` that enqueues work on the
device. The harness owns everything else: allocation, poisoning, checking and timing, through
the methods below. ``time(fn)`` returns one device-side sample in seconds.

Two verbs carry the kernels: ``compile(path, entry, defines, options)`` → a program, and
``launch(program, groups, block, args, shared_mem=...)``. The grid convention is the same on
every backend: ``groups`` counts workgroups (CUDA blocks, OpenCL work-groups, WebGPU
workgroups; up to 3 dimensions), ``block`` is the threads per workgroup. What each backend does
with them:

=========  ====================================  ==============================================
backend    compile                               launch
=========  ====================================  ==============================================
cuda       NVRTC via CuPy; ``options`` are NVRTC  ``groups`` blocks × ``block`` threads;
           flags (``-arch=sm_90a`` replaces the   ``shared_mem`` bytes of dynamic shared memory
           device's arch; the CUDA headers —      (above 48 KiB opted in per kernel); args: CuPy
           cuda_fp16.h, cuda_bf16.h, mma.h — are  arrays, NumPy scalars
           always on the include path)
opencl     ``clBuildProgram``; ``options`` are    NDRange of ``groups × block`` work-items in
           build options (``-cl-std=CL2.0``)      work-groups of ``block``; args: buffers, scalars
webgpu     WGSL with ``{{NAME}}`` := defines;     ``groups`` workgroups (``block`` is the
           ``options`` must be empty              shader's @workgroup_size: None or equal);
                                                  buffers bind to 0..k-1, a trailing NumPy
                                                  array/record to a uniform at k
triton     not used: ``kernel[grid](...)``, grid  —
           in programs (= workgroups)
torch      not used                               —
=========  ====================================  ==============================================
"""

from __future__ import annotations

import abc
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np


@dataclass
class Device:
    """A device as one backend sees it. ``mode``: ``run`` (checked and timed), ``interpret``
    (checked; timings labelled and excluded from performance) or ``compile`` (compiled only)."""

    backend: str
    index: int
    name: str
    kind: str  # "gpu" | "cpu"
    vendor: str = ""
    memory_bytes: int = 0
    compute_units: int = 0
    l2_bytes: int = 0
    driver: str = ""
    pci_bus_id: str | None = None
    uuid: str | None = None
    mode: str = "run"
    reason: str | None = None  # set when the device is unusable
    features: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    slug: str = ""

    @property
    def usable(self) -> bool:
        return self.reason is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: shared kernel snippets (one per dialect and purpose), pulled in by ``#include "name"`` lines
COMMON_SOURCES = Path(__file__).resolve().parent.parent / "ops" / "common"
_INCLUDE = re.compile(r'^[ \t]*#include[ \t]+"([\w.\-]+)"[ \t]*$', re.M)


def read_source(path: Path | str) -> str:
    """A kernel file's text with each ``#include "name"`` line (quoted form, own line) replaced by
    the file ``name`` from the kernel's folder or ``ops/common/``, recursively, each file once
    (WGSL and OpenCL through the same rule; ``<...>`` includes are left to the compiler). The
    compile steps and the row provenance both read sources through this."""
    seen: set[Path] = set()

    def expand(p: Path) -> str:
        def one(m: re.Match) -> str:
            for d in (p.parent, COMMON_SOURCES):
                f = (d / m.group(1)).resolve()
                if f.is_file():
                    if f in seen:
                        return f"// (#include \"{m.group(1)}\": already included)"
                    seen.add(f)
                    return f"// ---- begin {m.group(1)}\n{expand(f)}\n// ---- end {m.group(1)}"
            raise FileNotFoundError(f"{p.name}: #include \"{m.group(1)}\" not found in {p.parent} "
                                    f"or {COMMON_SOURCES}")

        return _INCLUDE.sub(one, p.read_text())

    path = Path(path).resolve()
    seen.add(path)
    return expand(path)


def slugify(text: str) -> str:
    s = re.sub(r"\(r\)|\(tm\)|\bcorporation\b|\binc\b", "", text.lower())
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def host_cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()


#: set to 1 to split the host CPU into one device per API (``cpu-<model>-<backend>``): PoCL,
#: lavapipe, torch's CPU, ... become separate devices, so that device sharding (``solbench run
#: --devices all``, ``pytest -n N``) can be exercised and proven on a host without GPUs. Their
#: timings then share the CPU's cores: use it for correctness and for the sharding, not for numbers.
SPLIT_CPU_ENV = "SOLBENCH_SPLIT_CPU"


def host_cpu_slug(backend: str | None = None) -> str:
    """Slug of the host CPU: every backend that runs on the CPU reports into this device (into
    ``cpu-<model>-<backend>`` when ``SOLBENCH_SPLIT_CPU=1``, see ``SPLIT_CPU_ENV``)."""
    split = backend and os.environ.get(SPLIT_CPU_ENV, "0") not in ("", "0")
    return "cpu-" + slugify(host_cpu_name()) + (f"-{backend}" if split else "")


def canonical_pci(bus_id: str | None = None, *, domain: int = 0, bus: int | None = None,
                  device: int = 0, function: int = 0) -> str | None:
    """A PCI address in the one form every backend's device carries, ``dddd:bb:dd.f`` (lowercase
    hex, 4-digit domain): from a string in any of the spellings the APIs use — NVML
    "00000000:19:00.0", CUDA "0000:19:00.0", the short "19:00.0" — or from its numbers (OpenCL's
    and torch's bus/device fields). None when there is nothing to parse."""
    if bus_id is not None:
        m = re.fullmatch(r"(?:([0-9a-f]+):)?([0-9a-f]+):([0-9a-f]+)\.([0-7])", str(bus_id).strip().lower())
        if not m:
            return None
        domain, bus, device, function = (int(g, 16) if g else 0 for g in m.groups())
    if bus is None:
        return None
    return f"{domain:04x}:{bus:02x}:{device:02x}.{function:x}"


def gpu_slug(name: str, pci_bus_id: str | None = None, unique: bool = True) -> str:
    """Slug of a GPU: its name, plus its PCI address when the host has several of that name
    (``nvidia-h200-19-00-0``; the domain only when it is not 0000)."""
    s = slugify(name)
    if unique or not pci_bus_id:
        return s
    return f"{s}-{slugify(pci_bus_id.removeprefix('0000:'))}"


def host_llc_bytes() -> int:
    """Largest CPU cache (for the L2/LLC flush of CPU devices)."""
    best = 0
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in base.glob("index*"):
        try:
            txt = (idx / "size").read_text().strip()
        except OSError:
            continue
        mult = {"K": 1024, "M": 1024**2}.get(txt[-1], 1)
        best = max(best, int(txt.rstrip("KM")) * mult)
    return best or 32 * 1024**2


def host_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


class Backend(abc.ABC):
    """One backend opened on one device."""

    name: ClassVar[str]
    #: how ``time`` measures: "cuda-event", "opencl-profiling", "webgpu-timestamp", "host"
    timer: ClassVar[str]

    def __init__(self, device: Device):
        self.device = device

    # -- discovery -------------------------------------------------------------------------
    @classmethod
    @abc.abstractmethod
    def devices(cls) -> list[Device]:
        """Every device this backend can see, unusable ones with a reason."""

    # -- memory ----------------------------------------------------------------------------
    @abc.abstractmethod
    def upload(self, arr: np.ndarray) -> Any: ...

    @abc.abstractmethod
    def empty(self, shape: tuple[int, ...], dtype: np.dtype) -> Any: ...

    @abc.abstractmethod
    def download(self, buf: Any) -> np.ndarray: ...

    @abc.abstractmethod
    def fill_bytes(self, buf: Any, value: int) -> None:
        """Set every byte of ``buf`` to ``value`` (used to poison outputs)."""

    # -- compile and launch (see the module docstring for each backend's meaning) ------------
    def compile(self, path: Path, entry: str, defines: dict[str, Any] | None = None,
                options: tuple[str, ...] = ()) -> Any:
        """Program of kernel ``entry`` in the source file ``path``, built with ``defines``
        (``-DNAME=VALUE``; WGSL ``{{NAME}}``) and compiler ``options``; cached on path, mtime,
        defines, options and entry. A build error raises RuntimeError with the compiler log."""
        raise Unsupported(f"{self.name}: kernels are not compiled through the backend")

    def launch(self, program: Any, groups: tuple[int, ...], block: tuple[int, ...] | None, args: list,
               *, shared_mem: int = 0) -> None:
        """Enqueue ``program`` on ``groups`` workgroups of ``block`` threads with ``args``;
        ``shared_mem``: dynamic shared memory in bytes (CUDA)."""
        raise Unsupported(f"{self.name}: kernels are not launched through the backend")

    # -- execution -------------------------------------------------------------------------
    @abc.abstractmethod
    def synchronize(self) -> None: ...

    @abc.abstractmethod
    def time(self, fn) -> float:
        """Run ``fn()`` (which enqueues work) once; return its device time in seconds."""

    @abc.abstractmethod
    def flush_l2(self) -> None:
        """Evict the last-level cache by *reading* a buffer of at least twice its size (written once
        when the backend is made). A read leaves only clean lines behind: dirty lines of earlier
        work are written back during the flush, outside the timed window. A flush that writes
        leaves about a cache's worth of its own dirty lines, which the next kernel pays to write
        back while it is timed: on the H200 a 128 MiB bf16 GEMV took 43.3 µs after a write flush
        and 34.5 µs after a read flush (``scripts/flush_probe.py``, 2026-12-01)."""

    def clocks(self) -> dict[str, Any]:
        """Clock/power/throttle state now (NVIDIA only; empty elsewhere)."""
        return {}

    def close(self) -> None:  # noqa: B027 - optional hook
        pass

    # -- pinning ---------------------------------------------------------------------------
    @classmethod
    def pin_env(cls, device: Device) -> dict[str, str]:
        """Environment that pins a fresh worker process to ``device``, set before the backend is
        imported there (the worker then finds the device by UUID/PCI id, see
        ``suite.worker.find_device``). Default: none, the device is opened by index/PCI/name in a
        process that sees every device (OpenCL, wgpu)."""
        return {}


def cuda_visible_env(device: Device) -> dict[str, str]:
    """``pin_env`` of the CUDA-based backends: CUDA_VISIBLE_DEVICES=<UUID> (or the CUDA index,
    mapped through an inherited CUDA_VISIBLE_DEVICES) so the process sees only that GPU."""
    if device.kind != "gpu":
        return {}
    if device.uuid:
        return {"CUDA_VISIBLE_DEVICES": device.uuid}
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    i = device.index
    return {"CUDA_VISIBLE_DEVICES": visible[i] if i < len(visible) else str(i)}


def flush_bytes(device: Device) -> int:
    """Bytes read by an L2 flush: at least twice the cache, 64 MiB minimum."""
    cache = device.l2_bytes or (host_llc_bytes() if device.kind == "cpu" else 0)
    return max(2 * cache, 64 * 1024 * 1024)


class Unsupported(Exception):
    """A kernel cannot run on this device (the reason is the message): becomes a skipped row."""
