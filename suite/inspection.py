"""``solbench inspect``: what each backend compiled, on any machine (no GPU needed).

For each registered kernel of an op and backend, the factory is run on a case (the op's first GPU
bench case unless ``--case`` names one) with every compile call recorded, and the recorded
program is compiled again for inspection:

* cuda: NVRTC for ``--arch`` (an ``-arch=`` in the kernel's own options wins): PTX, SASS from
  the CUBIN through ``cuobjdump -sass`` (the copy in Triton's wheel or on PATH; said so where
  absent), and the ptxas resource report (registers, shared memory, spills);
* triton: the launch the factory makes is captured in the interpreter (not run) and compiled
  ahead of time for ``--arch``: TTIR, TTGIR, LLVM IR, PTX, SASS, with num_warps, num_stages,
  shared memory, registers and spills;
* opencl: the platform's program binary (PTX text on NVIDIA; PoCL's is a binary, shown by size)
  and the build log;
* webgpu: the WGSL after placeholder substitution; what naga translates it to is not exposed by
  wgpu-py (the naga CLI, where installed, gives SPIR-V).

``summary`` rows carry registers, spills, shared memory and whether the intended instructions are
present: 16-byte vector loads (``ld.global.v4``/``LDG.E.128``), warp shuffles (``shfl``/``SHFL``),
tensor-core MMAs (``mma``/``wgmma``, ``HMMA``/``HGMMA``), and the instructions per iteration of
the main SASS loop (``main_loop_instructions``). The ``loops`` stage lists every loop of the SASS
(a backward branch and its target): instructions per iteration and their opcodes, most frequent
first — the issue-slot budget of a kernel's main loop, read without a GPU.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

STAGES = {"cuda": ("ptx", "sass", "loops", "log"),
          "triton": ("ttir", "ttgir", "llir", "ptx", "sass", "loops"),
          "opencl": ("binary", "log"), "webgpu": ("wgsl",)}

#: intended instructions, searched in PTX and SASS
MARKERS = {"vec_load": (r"ld\.global(?:\.nc)?(?:\.L\w+::\w+)*\.v[248]", r"LDG\.E\.(?:64|128)"),
           "shfl": (r"\bshfl\.sync", r"\bSHFL\."),
           "mma": (r"\b(?:w?gmma|mma)\.", r"\b(?:HMMA|HGMMA|IMMA|QGMMA)\b")}


def markers(ptx: str = "", sass: str = "") -> dict[str, bool]:
    return {k: bool(re.search(p, ptx or "")) or bool(re.search(s, sass or ""))
            for k, (p, s) in MARKERS.items()}


def ptx_of_entry(ptx: str, entry: str) -> str:
    """The ``.entry entry(...) { ... }`` of a PTX module (the whole text if not found)."""
    m = re.search(rf"\.entry\s+{re.escape(entry)}\s*\(", ptx)
    if not m:
        return ptx
    nxt = re.search(r"\.entry\s+\w+\s*\(", ptx[m.end():])
    return ptx[m.start(): m.end() + nxt.start() if nxt else len(ptx)]


def sass_of_entry(sass: str, entry: str) -> str:
    """The ``Function : entry`` section of ``cuobjdump -sass`` output (the whole text if not found)."""
    parts = re.split(r"(?=\n\s*Function : )", sass)
    hit = [p for p in parts if re.search(rf"Function : {re.escape(entry)}\s", p)]
    return hit[0] if hit else sass


_SASS_LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")


def sass_loops(sass: str) -> list[dict[str, Any]]:
    """Each loop of ``cuobjdump -sass`` text: a branch back to a lower address of its function.
    Per loop: ``start``/``end`` addresses, ``instructions`` per iteration (target to branch, both
    included; NOPs counted, they take issue slots too), ``own`` (those not inside a loop nested in
    it: a spin-wait inside a main loop does not hide the main loop), ``innermost``, ``exits`` (an
    unconditional EXIT inside: a branch back into shared exit or warp-collective code, not a loop
    of the kernel's) and ``ops`` (opcode without modifiers → count, most frequent first)."""
    loops = []
    for fn in re.split(r"\n\s*Function : ", sass):  # addresses restart in each function
        ins = [(int(m[1], 16), m[3].split(".")[0], bool(m[2]), m[4]) for m in _SASS_LINE.finditer(fn)]
        found = []
        for addr, op, _, args in ins:
            t = re.match(r"\s*(?:`\()?(0x[0-9a-f]+)", args) if op in ("BRA", "JMP") else None
            if not t or int(t[1], 16) >= addr:  # not a branch, forward, or the trap's to itself
                continue
            start = int(t[1], 16)
            body = [(a, o, p) for a, o, p, _ in ins if start <= a <= addr]
            ops: dict[str, int] = {}
            for _, o, _ in body:
                ops[o] = ops.get(o, 0) + 1
            found.append({"start": start, "end": addr, "instructions": len(body),
                          "exits": any(o == "EXIT" and not p for _, o, p in body),
                          "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])))})
        for lp in found:
            inner = [o for o in found if o is not lp and lp["start"] <= o["start"] and o["end"] <= lp["end"]]
            lp["innermost"] = not inner
            lp["own"] = sum(1 for a, *_ in ins if lp["start"] <= a <= lp["end"]
                            and not any(o["start"] <= a <= o["end"] for o in inner))
        loops += found
    return loops


def loops_text(sass: str) -> str:
    """``sass_loops`` as text, one loop per line (the ``loops`` stage)."""
    loops = sass_loops(sass)
    if not loops:
        return "(no loop in the SASS)" if _SASS_LINE.search(sass) else "(no SASS)"
    lines = []
    for lp in loops:
        kind = "innermost" if lp["innermost"] else f"outer ({lp['own']} outside its inner loops)"
        kind += ", an EXIT inside" if lp["exits"] else ""
        ops = " ".join(f"{o} {n}" for o, n in lp["ops"].items())
        span = f"0x{lp['start']:04x}-0x{lp['end']:04x}"
        lines.append(f"{span}: {lp['instructions']} instructions, {kind}: {ops}")
    return "\n".join(lines)


def main_loop_instructions(sass: str) -> int | None:
    """Instructions per iteration of the main loop (None without one): of the loops without an
    unconditional EXIT inside and with at least 3/4 of their instructions outside nested loops (a
    spin-wait inside a main loop does not hide it; an outer loop around the main one is not it),
    the one with the most."""
    loops = [lp for lp in sass_loops(sass) if not lp["exits"] and lp["own"] >= 0.75 * lp["instructions"]]
    return max((lp["own"] for lp in loops), default=None)


def _cuobjdump() -> str | None:
    try:
        from backends.triton import _nvidia_tool

        return _nvidia_tool("cuobjdump")
    except Exception:  # noqa: BLE001 - no triton: PATH only
        return shutil.which("cuobjdump")


def sass_of(cubin: bytes) -> str:
    tool = _cuobjdump()
    if not tool:
        return "(no cuobjdump here: install the CUDA toolkit or triton to see SASS)"
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "k.cubin"
        p.write_bytes(cubin)
        r = subprocess.run([tool, "-sass", str(p)], capture_output=True, text=True, timeout=120)
    return r.stdout if r.returncode == 0 else f"(cuobjdump -sass failed: {r.stderr.strip()[:300]})"


def _nvrtc(src: str, name: str, opts: list[str]) -> tuple[str, bytes, str]:
    """(ptx, cubin, log) of one NVRTC compile; RuntimeError with the log on failure."""
    from cuda.bindings import nvrtc

    ok = nvrtc.nvrtcResult.NVRTC_SUCCESS
    _, prog = nvrtc.nvrtcCreateProgram(src.encode(), name.encode(), 0, [], [])
    try:
        (res,) = nvrtc.nvrtcCompileProgram(prog, len(opts), [o.encode() for o in opts])
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        log_s = log.rstrip(b"\0").decode(errors="replace").strip()
        if res != ok:
            raise RuntimeError(f"NVRTC: {name} failed ({' '.join(opts)}):\n{log_s}")
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        ptx = b" " * size
        nvrtc.nvrtcGetPTX(prog, ptx)
        cubin = b""
        err, size = nvrtc.nvrtcGetCUBINSize(prog)
        if err == ok and size:
            cubin = b" " * size
            nvrtc.nvrtcGetCUBIN(prog, cubin)
        return ptx.rstrip(b"\0").decode(), cubin, log_s
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


# ---- per backend --------------------------------------------------------------------------------

def _cuda(calls, arch: str) -> list[dict[str, Any]]:
    from backends import cuda as cu

    out = []
    for args, kwargs in calls:
        path, entry = Path(args[0]), args[1]
        defines = args[2] if len(args) > 2 else kwargs.get("defines")
        options = tuple(args[3] if len(args) > 3 else kwargs.get("options", ()))
        want, extra = cu.split_arch(options)
        a = want or arch
        inc = tuple(f"-I{d}" for d in cu.cuda_include_dirs())
        opts = [*cu.BASE_OPTIONS, *cu._define_options(defines), *extra, *inc, f"-arch={a}",
                "--ptxas-options=-v"]
        from backends.base import read_source

        ptx, cubin, log = _nvrtc(read_source(path), path.name, opts)
        rep = cu.parse_ptxas_report(log, entry)
        sass = sass_of(cubin) if cubin else "(NVRTC gave no CUBIN)"
        out.append({"entry": entry, "file": path.name, "arch": a, "options": " ".join(opts[:-1]),
                    "registers": rep["registers"], "spill_bytes": rep["spill_bytes"],
                    "smem_bytes": rep["smem_bytes"],
                    "stages": {"ptx": ptx_of_entry(ptx, entry), "sass": sass_of_entry(sass, entry),
                               "log": log}})
    return out


def _triton_sig(v) -> str:
    import torch

    if isinstance(v, torch.Tensor):
        t = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.int32: "i32",
             torch.uint8: "u8", torch.int64: "i64", torch.uint32: "u32", torch.int8: "i8",
             torch.float64: "fp64", torch.uint16: "u16"}[v.dtype]
        return "*" + t
    if isinstance(v, bool):
        return "i1"
    if isinstance(v, int):
        return "i32" if -(2**31) <= v < 2**31 else "i64"
    if isinstance(v, float):
        return "fp32"
    from triton.runtime.jit import mangle_type  # Triton's own typing: tensor descriptors and the rest

    return mangle_type(v)


#: the keyword under which a recorded launch of an autotuned function carries its config
CONFIG_KEY = "_solbench_config"


@contextlib.contextmanager
def triton_launches_recorded():
    """While the block runs, every Triton launch is recorded, not run, as (jit function, args,
    kwargs) in the yielded list: interpreted and compiled functions alike, and an autotuned
    function once per config (with the config's meta-parameters, num_warps and num_stages; its
    first config stands in as the tuned one, ``best_config``)."""
    from dataclasses import replace

    from triton.runtime.autotuner import Autotuner
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction
    from triton.tools.tensor_descriptor import TensorDescriptor

    seen: list[tuple] = []

    def record(self, *args, grid=None, warmup=False, **kwargs):
        # a descriptor as it is now (the next config's pre-hook sets its block shape again)
        seen.append((self, tuple(replace(a, block_shape=list(a.block_shape))
                                 if isinstance(a, TensorDescriptor) else a for a in args), kwargs))

    def each_config(self, *args, **kwargs):
        for cfg in self.configs:
            full = {**dict(zip(self.arg_names, args, strict=False)), **kwargs, **cfg.all_kwargs()}
            if cfg.pre_hook:  # e.g. the descriptors' block shapes, as the autotuner sets them
                cfg.pre_hook(full)
            shown = ", ".join([*(f"{k}={v}" for k, v in cfg.kwargs.items()),
                               f"num_warps={cfg.num_warps}", f"num_stages={cfg.num_stages}"])
            self.fn.run(*args, **{**kwargs, **cfg.all_kwargs(), CONFIG_KEY: shown})
        self.best_config = self.configs[0]

    patched = [(InterpretedFunction, "run", record), (JITFunction, "run", record),
               (Autotuner, "run", each_config)]
    saved = [(cls, name, cls.__dict__[name]) for cls, name, _ in patched]
    for cls, name, fn in patched:
        setattr(cls, name, fn)
    try:
        yield seen
    finally:
        for cls, name, fn in saved:
            setattr(cls, name, fn)


#: SM count of the GPU host the Triton factory is shown during inspection (H100 / H200 SXM): kernels
#: that size their grids or parts by the device (softmax split_row's parts, persistent grids) are
#: then compiled in the shapes they take there
GPU_SMS = 132


@contextlib.contextmanager
def _triton_as_on_a_gpu(be, arch: str, sms: int | None = None):
    """The Triton factory sees the device as a GPU host's of ``sms`` SMs (default: this GPU's own,
    or GPU_SMS on a machine without one) in mode ``run``: the compiled paths, their block shapes
    and autotune configs (not the interpreter's stand-ins such as fp32 upcasts or plain-arithmetic
    dp4a), grids and parts sized by the SM count (not by this machine's CPU cores). Nothing runs:
    launches are recorded (the factory's own, e.g. tuning on scratch tensors, are dropped) and
    ``synchronize`` does nothing."""
    from dataclasses import replace

    device = be.device
    be.device = replace(device, mode="run",
                        compute_units=sms or (device.compute_units if be.gpu else GPU_SMS))
    be.synchronize = lambda: None
    try:
        with triton_launches_recorded():
            yield
    finally:
        be.device = device
        del be.synchronize  # the instance attribute: the class's method shows again


def capture_triton(run, ins, outs) -> list[tuple]:
    """The Triton launches ``run`` makes, recorded instead of executed."""
    with triton_launches_recorded() as seen:
        run(ins, outs)
    return seen


def _triton_jobs(launches, arch: str, stages: bool = True) -> tuple[list[tuple], list[str]]:
    """compile_many_for_hopper's jobs for recorded launches, and each one's autotune config note."""
    from backends.triton import _jit_function

    jobs, notes = [], []
    for fn, args, kwargs in launches:
        jit = _jit_function(fn)
        names = jit.arg_names
        cexpr = {p.name for p in jit.params if p.is_constexpr}
        sig, constexprs, div16 = {}, {}, []
        bound = dict(zip(names, args, strict=False))
        bound.update({k: v for k, v in kwargs.items() if k in names})
        for k, v in bound.items():
            if k in cexpr:
                constexprs[k] = v
                continue
            sig[k] = _triton_sig(v)
            if sig[k].startswith("*") or (isinstance(v, int) and not isinstance(v, bool) and v % 16 == 0):
                div16.append(k)
        constexprs.update({p.name: p.default for p in jit.params
                           if p.is_constexpr and p.has_default and p.name not in bound})
        opts = {"num_warps": kwargs.get("num_warps", 4), "num_stages": kwargs.get("num_stages", 3),
                "maxnreg": kwargs.get("maxnreg"), "arch": int(arch.removeprefix("sm_").rstrip("a")),
                "divisible_by_16": div16, "stages": stages}
        jobs.append((fn, sig, constexprs, opts))
        notes.append(kwargs.get(CONFIG_KEY, ""))
    return jobs, notes


def _triton(launches, arch: str) -> list[dict[str, Any]]:
    from backends.triton import compile_many_for_hopper

    jobs, notes = _triton_jobs(launches, arch)
    out = []
    for (fn, _, cx, o), r, note in zip(jobs, compile_many_for_hopper(jobs), notes, strict=True):
        if "error" in r:
            out.append({"entry": getattr(getattr(fn, "fn", fn), "__name__", "?"),
                        "error": f"{note}: {r['error']}" if note else r["error"]})
            continue
        out.append({"entry": r["name"], "arch": r["arch"], "num_warps": r["num_warps"],
                    "num_stages": o["num_stages"], "constexprs": cx, "note": note,
                    "registers": r["registers"],
                    "spill_bytes": r["spill_bytes"], "smem_bytes": r["smem_bytes"],
                    "stages": r.get("asm", {"ptx": r["ptx"]})})
    return out


def _opencl(be, calls) -> list[dict[str, Any]]:
    import pyopencl as cl

    out = []
    for args, kwargs in calls:
        path, entry = Path(args[0]), args[1]
        k = be.compile(*args, **kwargs)
        prog = k.program
        binary = prog.get_info(cl.program_info.BINARIES)[0]
        log = prog.get_build_info(be.cl_device, cl.program_build_info.LOG)
        # NVIDIA's PTX text comes NUL-terminated (ptxas stops at the NUL: "Unexpected EOF")
        text = binary.rstrip(b"\0").decode(errors="replace") if binary[:64].isascii() else \
            f"({len(binary)} bytes of {be.device.vendor or 'platform'} binary; not text)"
        out.append({"entry": entry, "file": path.name, "stages": {"binary": text, "log": log.strip()},
                    "registers": None, "spill_bytes": None, "smem_bytes": None})
    return out


def _webgpu(be, calls) -> list[dict[str, Any]]:
    out = []
    for src, entry, *rest in calls:
        naga = shutil.which("naga")
        note = "" if naga else "(naga's translation is not exposed by wgpu-py; install naga-cli for SPIR-V)"
        out.append({"entry": entry, "file": rest[0] if rest else "", "stages": {"wgsl": src}, "note": note,
                    "registers": None, "spill_bytes": None, "smem_bytes": None})
    return out


# ---- driver -------------------------------------------------------------------------------------

class _Built:
    """What one factory call left to look at: its backend, case and ``run``, the compile calls it
    made (``recording_compiles``), the WGSL it compiled (``_record_sources``) and the target."""

    def __init__(self, be, spec, case, run, calls: list, wgsl: list, arch: str):
        self.be, self.spec, self.case, self.run = be, spec, case, run
        self.calls, self.wgsl, self.arch = calls, wgsl, arch


def _triton_launches(b: _Built) -> list[tuple]:
    """The launches of ``b.run``, recorded. Nothing runs: host tensors of the arguments' shapes and
    dtypes stand in for the buffers (allocated, never written: the pages stay untouched unless the
    run copies them)."""
    import torch

    from backends.torch import TORCH_DTYPES
    from suite.spec import np_dtype

    sig = b.spec.signature(b.case)
    bufs = {k: torch.empty(a.shape, dtype=TORCH_DTYPES[np_dtype(a.dtype).name]) for k, a in sig.items()}
    ins = {k: v for k, v in bufs.items() if sig[k].role == "in"}
    outs = {k: v for k, v in bufs.items() if sig[k].role == "out"}
    return capture_triton(b.run, ins, outs)


def _triton_built(b: _Built) -> list[dict[str, Any]]:
    return _triton(_triton_launches(b), b.arch)


def _torch_note(b: _Built) -> list[dict[str, Any]]:
    return [{"entry": "-", "note": "torch: the baseline compiles nothing of ours", "stages": {}}]


#: backend → what its factory compiled, as records (torch and anything else: a note)
_COLLECT = {
    "cuda": lambda b: _cuda(b.calls, b.arch),
    "opencl": lambda b: _opencl(b.be, b.calls),
    "webgpu": lambda b: _webgpu(b.be, b.wgsl),
    "triton": _triton_built,
}


@contextlib.contextmanager
def _cuda_for(be, arch: str, sms: int | None):
    """The CUDA factory builds for ``arch`` (compile-only device): a kernel whose PTX needs a
    newer one is refused by its factory (``require_arch``), as on such a GPU."""
    saved = be.compile_archs
    if be.compile_only:
        be.compile_archs = (arch,)
    try:
        yield
    finally:
        be.compile_archs = saved


#: backend → how its factory sees the device during inspection (default: as it is)
_FACTORY_VIEW = {"triton": _triton_as_on_a_gpu, "cuda": _cuda_for}


@contextlib.contextmanager
def _as_is(be, arch: str, sms: int | None):
    yield


@contextlib.contextmanager
def _record_sources(be, active: bool = True):
    """While the block runs, record ``compile_source`` (WebGPU: the WGSL after substitution) calls
    on ``be`` into the yielded list; the backend's own method is back afterwards, however the
    block ends. ``active`` False: nothing is patched, the list stays empty."""
    seen: list[tuple] = []
    if not active:
        yield seen
        return
    orig = be.compile_source

    def rec(src, entry, label=""):
        seen.append((src, entry, label))
        return orig(src, entry, label)

    be.compile_source = rec
    try:
        yield seen
    finally:
        del be.compile_source  # the instance attribute: the class's method shows again


def _open(backend: str):
    """``backend`` on its first usable device here."""
    from backends import backend_class

    cls = backend_class(backend)
    devs = [d for d in cls.devices() if d.usable]
    if not devs:
        raise RuntimeError(f"no usable {backend} device here")
    return cls(devs[0])


def inspect_kernels(op: str, backend: str, variants=None, case_name: str | None = None,
                    arch: str = "sm_90", sms: int | None = None) -> list[dict[str, Any]]:
    """One record per compiled program of each selected kernel: backend, variant, case, entry,
    registers/spills/shared memory where known, ``stages`` (stage name → text), ``markers``.
    Triton's factory sees a GPU of ``sms`` SMs (``_triton_as_on_a_gpu``, which says the default).

    Without ``case_name`` each kernel is shown for the first bench case (then test case) it
    supports: a kernel for skinny products, say, for the first skinny case."""
    from backends.base import Unsupported
    from suite.provenance import recording_compiles
    from suite.registry import get_spec, select

    if not re.fullmatch(r"sm_[0-9]{2,3}a?", arch):
        raise ValueError(f"--arch {arch!r}: give a CUDA target such as sm_80, sm_90 or sm_90a")
    spec = get_spec(op)
    cases = [spec.case(case_name)] if case_name else [*spec.cases("bench", "gpu"), *spec.test_cases]
    be = _open(backend)
    out = []
    for e in select([op], [backend], variants):
        usable = [c for c in cases if not e.dtypes or c.dtype in e.dtypes]
        if not usable:
            continue
        try:
            for i, case in enumerate(usable):  # the first case the factory accepts
                base = {"op": op, "backend": backend, "variant": e.variant, "case": case.name}
                try:
                    with _FACTORY_VIEW.get(backend, _as_is)(be, arch, sms):  # collecting may run `run`
                        with _record_sources(be, hasattr(be, "compile_source")) as wgsl, \
                                recording_compiles(be) as calls:
                            run = e.factory(be, case)
                        recs = _COLLECT.get(backend, _torch_note)(_Built(be, spec, case, run, calls,
                                                                         wgsl, arch))
                    break
                except Unsupported:
                    if i == len(usable) - 1:
                        raise
        except Exception as ex:  # noqa: BLE001 - reported per kernel
            out.append({**base, "entry": "-", "error": f"{type(ex).__name__}: {ex}", "stages": {}})
            continue
        for r in recs:
            st = r.get("stages", {})
            r["markers"] = markers(st.get("ptx", "") or st.get("binary", ""), st.get("sass", ""))
            if "sass" in st:
                st["loops"] = loops_text(st["sass"])
                r["loop_instructions"] = main_loop_instructions(st["sass"])
            out.append({**base, **r})
    return out


def triton_compile_failures(op: str, arch: str = "sm_90", sms: int | None = None) -> tuple[int, list[str]]:
    """Every Triton launch of every registered Triton kernel of ``op`` at each of its test cases, as
    the factory makes it on a GPU of ``sms`` SMs (``_triton_as_on_a_gpu``: the compiled paths, not
    the interpreter's), compiled ahead of time for ``arch``; nothing runs. Returns (distinct
    programs compiled, one line per failure). The CPU's Triton tests run the interpreter, which
    never takes the PTX-only branches (back-off sleeps, L2 prefetches): session 38 found such a
    branch failing to compile at narrow test cases, on the GPU only. A factory declining a case
    (Unsupported) is no failure; any other factory error is."""
    from backends.base import Unsupported
    from backends.triton import compile_many_for_hopper
    from suite.registry import get_spec, select

    spec = get_spec(op)
    be = _open("triton")
    jobs, where, fails = {}, {}, []
    for e in select([op], ["triton"], None):
        for case in spec.test_cases:
            if e.dtypes and case.dtype not in e.dtypes:
                continue
            label = f"{e.variant} {case.name}"
            try:
                with _triton_as_on_a_gpu(be, arch, sms):
                    launches = _triton_launches(_Built(be, spec, case, e.factory(be, case), [], [], arch))
            except Unsupported:
                continue
            except Exception as ex:  # noqa: BLE001 - reported per case
                fails.append(f"{label}: {type(ex).__name__}: {ex}"[:2000])
                continue
            for job, note in zip(*_triton_jobs(launches, arch, stages=False), strict=True):
                fn, sig, cx, opts = job
                key = repr((getattr(fn, "fn", fn), *(sorted(d.items()) for d in (sig, cx, opts))))
                jobs.setdefault(key, job)
                where.setdefault(key, label + (f" ({note})" if note else ""))
    for key, r in zip(list(jobs), compile_many_for_hopper(list(jobs.values())), strict=True):
        if "error" in r:
            fails.append(f"{where[key]}: {r['error']}"[:2000])
    return len(jobs), fails
