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
from backends.nvml import gpu_clocks
from backends.torch import TorchBackend, cuda_devices

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

    @classmethod
    def devices(cls) -> list[Device]:
        v = {"triton": _version("triton"), "torch": torch.__version__}
        mode = "interpret" if interpreting() else "run"
        if HAS_CUDA:
            out = cuda_devices("triton", v)
            for d in out:
                d.mode = mode
            return out
        if not interpreting():
            return [Device("triton", 0, f"Triton on {host_cpu_name()}", "cpu", mode="run", versions=v,
                           reason="no CUDA GPU and TRITON_INTERPRET is not 1 (it was set to something else "
                                  "before backends.triton was imported)")]
        return [Device("triton", 0, f"Triton interpreter on {host_cpu_name()}", "cpu",
                       memory_bytes=host_memory_bytes(), compute_units=os.cpu_count() or 1,
                       mode="interpret", versions=v)]

    # time(): TorchBackend's, whose blocking start hides Triton's Python launch overhead

    def clocks(self) -> dict:
        return gpu_clocks(self.device.index, self.device.pci_bus_id) if self.gpu else {}

    def smem_per_block(self) -> int:
        """Shared memory one program may use (bytes, the opt-in limit): this GPU's; without one an
        sm_90 part's (what ``solbench inspect`` compiles for)."""
        if self.gpu:
            return int(torch.cuda.get_device_properties(self.dev).shared_memory_per_block_optin)
        return 227 * 1024

    def occupancy(self, jit_fn, args: tuple, kwargs: dict, programs: int) -> dict:
        """The waves a launch of ``programs`` programs of ``jit_fn`` makes on this GPU: {"per_sm"
        (programs one SM holds at once: the compiled kernel's registers, allocated per warp in
        units of 256, shared memory and threads against the SM's — ``resident_programs``), "wave"
        (SMs × per_sm), "waves"}, from ``jit_fn.warmup(*args, **kwargs)`` (the cached compile of a
        tuned launch); {} where not known (no GPU; ROCm: 64-wide wavefronts and another register
        file are not modelled; torch or Triton not telling), {"occupancy_error": ...} where the
        lookup failed."""
        if not self.gpu or torch.version.hip or not self.device.compute_units:
            return {}
        try:
            compiled = jit_fn.warmup(*args, grid=(1,), **kwargs)
        except Exception as e:  # noqa: BLE001 - a row's extra information, never its failure
            return {"occupancy_error": f"{type(e).__name__}: {e}"[:300]}
        p = torch.cuda.get_device_properties(self.dev)
        try:
            compiled._init_handles()
            md = compiled.metadata
            per_sm = resident_programs(md.num_warps, compiled.n_regs, md.shared, p.regs_per_multiprocessor,
                                       p.shared_memory_per_multiprocessor, p.max_threads_per_multi_processor)
        except (AttributeError, TypeError):
            return {}
        wave = per_sm * self.device.compute_units
        return {"per_sm": per_sm, "wave": wave, "waves": round(programs / wave, 3)}

    def capability(self) -> tuple[int, int]:
        """Compute capability: this GPU's; without one sm_90's (as for ``smem_per_block``)."""
        if self.gpu:
            return tuple(torch.cuda.get_device_capability(self.dev))
        return (9, 0)


def resident_programs(warps: int, regs: int, smem: int, sm_regs: int, sm_smem: int, sm_threads: int) -> int:
    """Programs of ``warps`` warps, ``regs`` registers per thread and ``smem`` bytes of shared
    memory one SM of ``sm_regs`` registers, ``sm_smem`` bytes and ``sm_threads`` threads holds
    (registers allocated per warp in units of 256; SMEM_RESERVED bytes per resident block); at
    least 1."""
    return max(1, min(sm_regs // max(1, warps * -(-32 * regs // 256) * 256),
                      sm_smem // max(1, smem + SMEM_RESERVED), sm_threads // (32 * warps)))


#: shared memory a config's estimate leaves for what it does not count (barriers, scratch)
SMEM_SLACK = 1024
#: shared memory the GPU reserves per resident block (1 KiB on sm_80 and later)
SMEM_RESERVED = 1024


def fitting(configs, smem_of, limit: int, fallback=()) -> list:
    """The autotune configs whose shared memory fits a program's ``limit`` (``smem_of(config)``:
    bytes of the pipelined tiles, as Triton 3.6 allocates them for sm_90), in their order; where
    none does, the ``fallback`` configs that do; else all (the autotuner skips a config that does
    not compile). Tuned on an H200 (227 KiB), kept for parts with less (A100 163 KiB, Ada 99 KiB):
    an untuned shape runs the first of these, not an H200-sized tile that cannot launch."""
    def fit(cs):
        return [c for c in cs if smem_of(c) + SMEM_SLACK <= limit]

    return fit(configs) or fit(fallback) or list(configs)


# ---- ahead-of-time compile for Hopper (no GPU needed) -----------------------------------------

def tma_descriptors(shape: list[int], strides: list[int], block: list[int]):
    """A function of tensors → their host-built TMA descriptors with this shape, strides (in
    elements) and box; built once per set of buffers (their data pointers) and rebuilt when those
    change, so repeated launches on the same buffers do no host work for them."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    cache: dict = {}

    def descriptors(*tensors):
        key = tuple(t.data_ptr() for t in tensors)
        if key not in cache:
            cache.clear()
            cache[key] = [TensorDescriptor(t, shape, strides, block) for t in tensors]
        return cache[key]

    return descriptors


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
    specialise as multiples of 16 (what the launcher does for 16-byte aligned pointers and such
    sizes; it decides whether accesses are vectorised). Returns ``{"name", "arch", "num_warps",
    "ptx", "registers", "spill_bytes", "smem_bytes", "global_accesses", "resource_log"}``:
    ``global_accesses`` counts the PTX global loads/stores by width (``{"ld.global.v4.b32": 12}``),
    registers and spills come from ``cuobjdump -res-usage`` on the cubin (None without the tool).
    A compile error raises RuntimeError with the compiler's message.

    Under TRITON_INTERPRET=1 Triton's own library functions are interpreted objects and cannot be
    compiled in that process, so the compile runs in a child process (``jit_fn`` must then be a
    module-level function of an importable module); ``compile_many_for_hopper`` pays for that
    child (~10 s of imports) once for many kernels.
    """
    opts = {"num_warps": num_warps, "num_stages": num_stages, "arch": arch,
            "divisible_by_16": divisible_by_16}
    (out,) = compile_many_for_hopper([(jit_fn, signature, constexprs or {}, opts)])
    if "error" in out:
        raise RuntimeError(out["error"])
    return out


def compile_many_for_hopper(jobs) -> list[dict[str, Any]]:
    """``compile_for_hopper`` for each ``(jit_fn, signature, constexprs, options)`` job (options:
    its keyword arguments). Results in order; a job that fails to compile gives ``{"error": msg}``."""
    jobs = [(fn, dict(sig), dict(cx or {}), dict(o, divisible_by_16=tuple(o.get("divisible_by_16", ()))))
            for fn, sig, cx, o in jobs]
    if interpreting():
        return _compile_in_child(jobs)
    out = []
    for fn, sig, cx, opts in jobs:
        try:
            out.append(_compile_here(fn, sig, cx, **opts))
        except Exception as e:  # noqa: BLE001 - reported per job
            out.append({"error": str(e) if isinstance(e, RuntimeError) else f"{type(e).__name__}: {e}"})
    return out


def _compile_in_child(jobs) -> list[dict[str, Any]]:
    import json

    payload = []
    for jit_fn, sig, cx, opts in jobs:
        fn = getattr(jit_fn, "fn", jit_fn)
        payload.append({"module": fn.__module__, "name": fn.__name__, "signature": sig, "constexprs": cx,
                        "options": {**opts, "divisible_by_16": list(opts["divisible_by_16"])}})
    code = ("import importlib, json, sys\n"
            "from backends.triton import compile_many_for_hopper\n"
            "jobs = [(getattr(importlib.import_module(j['module']), j['name']), j['signature'],\n"
            "         j['constexprs'], j['options']) for j in json.loads(sys.stdin.read())]\n"
            "sys.stdout.write('\\n@@RESULT@@' + json.dumps(compile_many_for_hopper(jobs)))\n")
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "TRITON_INTERPRET": "0",
           "PYTHONPATH": os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])}
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), capture_output=True,
                       text=True, env=env, cwd=root, timeout=1800)
    if "@@RESULT@@" not in r.stdout:
        names = ", ".join(f"{j['module']}.{j['name']}" for j in payload)
        raise RuntimeError(f"compile child for {names} failed (exit {r.returncode}):\n{r.stderr[-4000:]}")
    return json.loads(r.stdout.rsplit("@@RESULT@@", 1)[1])


def _compile_here(jit_fn, signature, constexprs, *, num_warps=4, num_stages=3, arch=90, divisible_by_16=(),
                  stages=False, maxnreg=None):
    from collections import Counter

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = _jit_function(jit_fn)
    sig = {name: signature.get(name, "constexpr" if name in constexprs else None) for name in fn.arg_names}
    missing = [k for k, t in sig.items() if t is None]
    if missing:
        raise ValueError(f"{fn.__name__}: no type for parameters {missing}; give them in signature")
    attrs = {(fn.arg_names.index(a),): [["tt.divisibility", 16]] for a in divisible_by_16}
    try:
        kernel = triton.compile(ASTSource(fn, sig, constexprs, attrs), target=GPUTarget("cuda", arch, 32),
                                options={"num_warps": num_warps, "num_stages": num_stages,
                                         **({"maxnreg": maxnreg} if maxnreg else {})})
    except Exception as e:  # noqa: BLE001 - CompilationError and friends: report with the message
        raise RuntimeError(f"{fn.__name__} for sm_{arch}: {type(e).__name__}: {e}") from e
    ptx = kernel.asm["ptx"]
    out = {"name": kernel.metadata.name, "arch": f"sm_{arch}", "num_warps": num_warps, "ptx": ptx,
           "smem_bytes": int(getattr(kernel.metadata, "shared", 0) or 0),
           "global_accesses": dict(Counter(re.findall(r"\b((?:ld|st)\.global(?:[\w.]|::)*)", ptx))),
           "registers": None, "spill_bytes": None, "resource_log": ""}
    if stages:  # every intermediate form, for `solbench inspect` (SASS below, where cuobjdump runs)
        out["asm"] = {k: v for k, v in kernel.asm.items() if isinstance(v, str)}
        out["num_stages"] = num_stages
    tool = _nvidia_tool("cuobjdump")
    if tool and "cubin" in kernel.asm:
        with tempfile.TemporaryDirectory() as d:
            cubin = Path(d) / "k.cubin"
            cubin.write_bytes(kernel.asm["cubin"])
            r = subprocess.run([tool, "-res-usage", str(cubin)], capture_output=True, text=True, timeout=60)
            if stages:
                sass = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True, timeout=60)
                out["asm"]["sass"] = sass.stdout if sass.returncode == 0 else f"(cuobjdump -sass failed: " \
                                                                                f"{sass.stderr.strip()[:300]})"
        log = (r.stdout + r.stderr).strip()
        out["resource_log"] = log
        if m := re.search(r"REG:(\d+)", log):
            out["registers"] = int(m.group(1))
        if m := re.search(r"LOCAL:(\d+)", log):
            out["spill_bytes"] = int(m.group(1))
    return out
