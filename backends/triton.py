"""triton: Triton kernels on torch tensors; the interpreter where there is no CUDA GPU.

With a CUDA GPU this is the torch backend's machinery (buffers, CUDA-event timing, L2 flush,
NVML clocks) under another name; kernels are ``@triton.jit`` functions launched as
``kernel[grid](...)`` by the factories in ``ops/*/kernels.py``. Without one, there is a single
``interpret`` device: importing this module sets ``TRITON_INTERPRET=1`` (it must precede the
import of any ``@triton.jit`` module, which is why kernel modules are imported inside the
factories), kernels run on CPU tensors through Triton's NumPy interpreter, and timings are host
time, labelled and excluded from performance.

``compile_for_hopper`` compiles a kernel for sm_90 without a GPU (``triton.compile`` on an
``ASTSource`` with ``GPUTarget("cuda", 90, 32)``): CI uses it to catch Triton compile errors for
the H100/H200 on machines that only interpret.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import torch

from backends.base import Device, host_cpu_name, host_memory_bytes
from backends.nvml import canonical_pci, nvml_identity
from backends.torch import TorchBackend

HAS_CUDA = torch.cuda.is_available()
if not HAS_CUDA:
    if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
        import warnings

        warnings.warn("triton was imported before backends.triton on a machine without CUDA: "
                      "kernels decorated before now are not interpreted", stacklevel=2)
    os.environ.setdefault("TRITON_INTERPRET", "1")


def _version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


class TritonBackend(TorchBackend):
    """Triton on torch tensors. Same buffer/timing API as ``TorchBackend`` (``upload``, ``empty``,
    ``download``, ``fill_bytes``, ``synchronize``, ``time``, ``flush_l2``, ``clocks``); launches
    are ``kernel[grid](*args, **constexprs)`` in the factories."""

    name = "triton"
    timer = "host"
    #: device time the stream is kept busy (torch.cuda._sleep) before each timed launch, so that
    #: Triton's Python launch overhead is hidden rather than timed (0 disables it)
    launch_lead_s = 50e-6

    @classmethod
    def devices(cls) -> list[Device]:
        v = {"triton": _version("triton"), "torch": torch.__version__}
        mode = "interpret" if interpreting() else "run"
        if HAS_CUDA:
            out = []
            for i in range(torch.cuda.device_count()):
                p = torch.cuda.get_device_properties(i)
                pci = None
                if hasattr(p, "pci_bus_id"):
                    pci = canonical_pci(f"{p.pci_bus_id:02x}:{getattr(p, 'pci_device_id', 0):02x}.0")
                ident = nvml_identity(i, pci)
                out.append(Device("triton", i, p.name, "gpu", "NVIDIA", p.total_memory, p.multi_processor_count,
                                  getattr(p, "L2_cache_size", 0), ident.get("driver") or torch.version.cuda or "",
                                  pci or ident.get("pci_bus_id"), ident.get("uuid"), mode=mode,
                                  features=[f"sm_{p.major}{p.minor}"], versions=v))
            return out
        if not interpreting():
            return [Device("triton", 0, f"Triton on {host_cpu_name()}", "cpu", mode="run", versions=v,
                           reason="no CUDA GPU and TRITON_INTERPRET is not 1 (it was set to something else "
                                  "before backends.triton was imported)")]
        return [Device("triton", 0, f"Triton interpreter on {host_cpu_name()}", "cpu", "", host_memory_bytes(),
                       os.cpu_count() or 1, mode="interpret", versions=v)]

    def __init__(self, device: Device):
        super().__init__(device)
        if self.gpu:
            nvml = nvml_identity(device.index, device.pci_bus_id)
            self._sleep_cycles = int(self.launch_lead_s * (nvml.get("sm_clock_max_mhz") or 2000) * 1e6)

    def time(self, fn) -> float:
        if self.gpu and self.launch_lead_s > 0 and hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(self._sleep_cycles)  # start event fires after fn() is enqueued
        return super().time(fn)

    def clocks(self) -> dict:
        from backends.nvml import gpu_clocks

        return gpu_clocks(self.device.index, self.device.pci_bus_id) if self.gpu else {}


# ---- ahead-of-time compile for Hopper (no GPU needed) -----------------------------------------

def _jit_function(fn):
    """The JITFunction behind ``fn`` (under TRITON_INTERPRET=1, @triton.jit gives an
    InterpretedFunction, which keeps the Python function as ``.fn``)."""
    from triton.runtime.jit import JITFunction

    if isinstance(fn, JITFunction):
        return fn
    inner = getattr(fn, "fn", None)
    if inner is None:
        raise TypeError(f"{fn!r} is not a @triton.jit function")
    return JITFunction(inner)


def _nvidia_tool(name: str) -> str | None:
    import triton

    p = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
    return str(p) if p.is_file() else shutil.which(name)


def compile_for_hopper(jit_fn, signature: dict[str, str], constexprs: dict[str, Any] | None = None, *,
                       num_warps: int = 4, num_stages: int = 3, arch: int = 90,
                       divisible_by_16: tuple[str, ...] = ()) -> dict[str, Any]:
    """Compile a ``@triton.jit`` kernel for ``GPUTarget("cuda", arch, 32)`` without a GPU.

    ``signature`` maps every parameter to its Triton type (``"*fp32"``, ``"i64"``, ...;
    constexpr parameters may be left out: they are filled in as ``"constexpr"``), ``constexprs``
    gives the constexpr values, ``divisible_by_16`` names the pointer/integer parameters to
    specialise as multiples of 16 (what the launcher does for aligned pointers and such sizes).
    Returns ``{"name", "arch", "ptx", "registers", "spill_bytes", "smem_bytes", "vector_loads",
    "vector_stores", "resource_log"}``; registers/spills come from ``cuobjdump -res-usage`` on the
    cubin (None if the tool is missing). Raises the compiler's exception on a compile error.
    Works under TRITON_INTERPRET=1 too (the interpreter flag is lifted while compiling).
    """
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = _jit_function(jit_fn)
    constexprs = dict(constexprs or {})
    sig = {name: signature.get(name, "constexpr" if name in constexprs else None) for name in fn.arg_names}
    missing = [k for k, t in sig.items() if t is None]
    if missing:
        raise ValueError(f"{fn.__name__}: no type for parameters {missing}; give them in signature")
    attrs = {(fn.arg_names.index(a),): [["tt.divisibility", 16]] for a in divisible_by_16}
    saved = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "0"
    try:
        src = ASTSource(fn, sig, constexprs, attrs)
        kernel = triton.compile(src, target=GPUTarget("cuda", arch, 32),
                                options={"num_warps": num_warps, "num_stages": num_stages})
    finally:
        if saved is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = saved
    ptx = kernel.asm["ptx"]
    out = {"name": kernel.metadata.name, "arch": f"sm_{arch}", "ptx": ptx,
           "smem_bytes": int(getattr(kernel.metadata, "shared", 0)),
           "vector_loads": len(re.findall(r"ld\.global(?:\.\w+)*\.v[248]\.", ptx)),
           "vector_stores": len(re.findall(r"st\.global(?:\.\w+)*\.v[248]\.", ptx)),
           "registers": None, "spill_bytes": None, "resource_log": ""}
    tool = _nvidia_tool("cuobjdump")
    if tool and "cubin" in kernel.asm:
        with tempfile.TemporaryDirectory() as d:
            cubin = Path(d) / "k.cubin"
            cubin.write_bytes(kernel.asm["cubin"])
            r = subprocess.run([tool, "-res-usage", str(cubin)], capture_output=True, text=True, timeout=60)
        log = (r.stdout + r.stderr).strip()
        out["resource_log"] = log
        if m := re.search(r"REG:(\d+)", log):
            out["registers"] = int(m.group(1))
        if m := re.search(r"LOCAL:(\d+)", log):
            out["spill_bytes"] = int(m.group(1))
    return out
