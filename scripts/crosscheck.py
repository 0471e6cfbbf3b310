"""Cross-check the harness's timings against independent timers (issue 9, item 4).

For each chosen kernel, in one process and on the same buffers: the harness's median
(``suite.timing.measure``, cold), CUPTI kernel records (``torch.profiler``: the sum of the
kernels of one launch, flush kernels excluded, median over launches), Nsight Compute's
``gpu__time_duration`` (``ncu --clock-control none``, NVTX-filtered to the kernel's launches; a
child process) and ``triton.testing.do_bench`` (median, its own L2 flush). Prints a table of
times and ratios to the harness (markdown) and writes JSON; methods that cannot run say why.

    python3 scripts/crosscheck.py --out DIR [--kernel op/backend/variant/case ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT = ["vector_add/cuda/vec4/n=2^28", "vector_add/triton/naive/n=2^28", "vector_add/torch/eager/n=2^28",
           "reduction/cuda/warp_shuffle/n=2^28", "reduction/torch/sum/n=2^28",
           "scan/cuda/decoupled_lookback/n=2^28", "grayscale/cuda/vec16/8192x8192",
           "grayscale/torch/compiled/8192x8192", "grayscale/cuda/vec16/2160x3840"]
NVTX = "solbench_fn"


def factory(op: str, backend: str, variant: str):
    """The factory of a registered variant or of a probe configuration (scripts/probe.py) by its
    label, e.g. ``split_row ahead=0``; an unknown name lists the valid ones."""
    from probe import configurations

    forms = dict(configurations(op, backend))
    if variant not in forms:
        raise KeyError(f"{op}/{backend}: no variant or probe configuration {variant!r}; valid: "
                       + ", ".join(repr(k) for k in forms))
    return forms[variant]


def setup(key: str):
    """(backend object, fn) of ``op/backend/variant/case`` (variant: a registered one or a probe
    configuration's label), inputs uploaded, output checked once."""
    from backends import backend_class
    from suite import guard
    from suite.check import checked_launch
    from suite.registry import discover, get_spec

    discover()
    op, backend, variant, case_name = key.split("/", 3)
    spec = get_spec(op)
    case = spec.case(case_name)
    cls = backend_class(backend)
    dev = next((d for d in cls.devices() if d.usable and d.kind == "gpu"), None)
    if dev is None:
        raise RuntimeError(f"no {backend} GPU here")
    be = cls(dev)
    run = factory(op, backend, variant)(be, case)
    inputs = spec.inputs(case)
    bufs = guard.allocate(be, spec.signature(case), inputs)
    res = checked_launch(be, spec, case, run, bufs.ins, bufs.outs, inputs, spec.reference(case, inputs),
                         spec.tolerance(case))
    if not res.ok:
        raise RuntimeError(f"{key}: check failed: {res.message}")
    return be, (lambda: run(bufs.ins, bufs.outs))


def harness(be, fn) -> float:
    from suite.timing import Protocol, measure

    return measure(be, fn, Protocol()).median_s


#: what the last method call saw beyond its number (kernel names per launch), copied into the row
LAST: dict = {}


def cupti(be, fn, iters: int = 30) -> float:
    """Median over launches of the summed CUDA kernel time of one ``fn`` (torch.profiler/CUPTI).

    Kernels per launch are counted in the profiled loop itself (its kernels, flushes removed by
    name, divided by ``iters``), not in a single first call: a first call may add one-time
    kernels, and the loop's launches would then be summed in pairs (the suspected cause of
    torch.sum reading 1.98 × the harness on the H200, 2026-12-01; the kernel names per launch are
    now kept in the row to show it)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    def kernels(prof):
        return [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]

    fn()  # warm: one-time kernels (lazy init, autotuning) stay out of the profile
    be.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            be.flush_l2()
            be.synchronize()
            fn()
            be.synchronize()
    ks = sorted(kernels(prof), key=lambda e: e.time_range.start)
    flush = re.compile(r"fill|Fill|memset", re.I)
    mine = [e for e in ks if not flush.search(e.name)]
    if not mine or len(mine) % iters:
        raise RuntimeError(f"CUPTI saw {len(mine)} non-flush kernels in {iters} launches: "
                           f"not a whole number per launch ({sorted({e.name for e in mine})[:4]})")
    per = len(mine) // iters
    LAST["cupti_kernels"] = [e.name[:80] for e in mine[:per]]  # one launch's kernels, for the row
    sums = [sum(e.time_range.elapsed_us() for e in mine[i:i + per]) for i in range(0, len(mine), per)]
    return statistics.median(sums) * 1e-6


def do_bench(be, fn) -> float:
    import triton.testing

    return triton.testing.do_bench(fn, return_mode="median") * 1e-3


def ncu_child(key: str, iters: int) -> None:
    """Under ncu: launch fn ``iters`` times inside NVTX ranges (flushes outside them)."""
    import torch

    be, fn = setup(key)
    for _ in range(3):
        fn()
    be.synchronize()
    for _ in range(iters):
        be.flush_l2()
        be.synchronize()
        torch.cuda.nvtx.range_push(NVTX)
        fn()
        be.synchronize()
        torch.cuda.nvtx.range_pop()


def ncu(key: str, iters: int = 5) -> float:
    exe = shutil.which("ncu")
    if not exe:
        raise RuntimeError("ncu not on PATH")
    cmd = [exe, "--clock-control", "none", "--metrics", "gpu__time_duration.sum", "--csv", "--nvtx",
           "--nvtx-include", f"{NVTX}/", "--target-processes", "all", sys.executable, __file__,
           "--ncu-child", key, "--iters", str(iters)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=ROOT)
    rows = [ln for ln in r.stdout.splitlines() if "gpu__time_duration.sum" in ln]
    if not rows:
        raise RuntimeError(f"ncu gave no rows (exit {r.returncode}): {(r.stdout + r.stderr)[-600:]}")
    import csv

    vals, unit = [], "nsecond"
    for rec in csv.reader(rows):
        unit, v = rec[-2], rec[-1]
        vals.append(float(v.replace(",", "")))
    scale = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0}.get(unit, 1e-9)
    per = max(1, len(vals) // iters)
    sums = [sum(vals[i:i + per]) for i in range(0, len(vals) - per + 1, per)]
    return statistics.median(sums) * scale


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--kernel", action="append")
    ap.add_argument("--ncu-child")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--no-ncu", action="store_true")
    a = ap.parse_args()
    if a.ncu_child:
        ncu_child(a.ncu_child, a.iters)
        return
    rows = []
    for key in a.kernel or DEFAULT:
        row: dict = {"kernel": key}
        try:
            be, fn = setup(key)
        except Exception as e:  # noqa: BLE001 - a row that says why
            rows.append({**row, "error": f"{type(e).__name__}: {e}"})
            continue
        methods = {"harness": harness, "cupti": cupti, "do_bench": do_bench,
                   **({} if a.no_ncu else {"ncu": lambda be, fn, key=key: ncu(key)})}
        for name, f in methods.items():
            try:
                LAST.clear()
                row[name] = f(be, fn)
                row.update(LAST)
            except Exception as e:  # noqa: BLE001
                row[f"{name}_error"] = f"{type(e).__name__}: {str(e)[:300]}"
        rows.append(row)
        print(json.dumps(row), flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "crosscheck.json").write_text(json.dumps(rows, indent=1))
    lines = ["| kernel | harness | CUPTI | ncu | do_bench | CUPTI/h | ncu/h | do_bench/h |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        h = r.get("harness")

        def t(k, r=r):
            return f"{r[k] * 1e6:.1f} µs" if r.get(k) else r.get(f"{k}_error", r.get("error", ""))[:40]

        def q(k, r=r, h=h):
            return f"{r[k] / h:.3f}" if r.get(k) and h else ""

        lines.append(f"| {r['kernel']} | {t('harness')} | {t('cupti')} | {t('ncu')} | {t('do_bench')} | "
                     f"{q('cupti')} | {q('ncu')} | {q('do_bench')} |")
    (a.out / "crosscheck.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
