"""The ``solbench`` command line (typer + rich): run, list, doctor, peaks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from backends import BACKENDS
from suite import results as res
from suite.registry import SPECS, discover, select
from suite.runner import execute, new_run, plan, write_run
from suite.worker import FIX, Pool

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="solbench: one spec per operator, kernels in CUDA, Triton, OpenCL and WGSL, "
                       "checked against float64 references, timed against the device's speed of light.")
console = Console(width=None if sys.stdout.isatty() else 180)
BAD = ("failed", "error", "timeout")

OpOpt = Annotated[list[str] | None, typer.Option("--op", help="operator (repeatable)")]
BackendOpt = Annotated[list[str] | None, typer.Option("--backend", help="backend (repeatable)")]
VariantOpt = Annotated[list[str] | None, typer.Option("--variant", help="variant (repeatable)")]
DeviceOpt = Annotated[str | None, typer.Option("--device", help="device slug, or all|gpu|cpu, or a comma "
                                                "list (default: GPUs if present, else the CPU)")]
DevicesOpt = Annotated[str | None, typer.Option(
    "--devices", help="like --device, and shard the work across the selected devices: one worker per "
                      "device, the devices in parallel (`--devices all`: every GPU of the host at once)")]
SplitCpuOpt = Annotated[bool, typer.Option(
    "--split-cpu", help="treat each CPU-side API (PoCL, lavapipe, torch CPU, ...) as its own device "
                        "cpu-<model>-<backend> (SOLBENCH_SPLIT_CPU=1): to test sharding, not for numbers")]


def _fail(msg: str, code: int = 2):
    console.print(f"[red]error:[/red] {msg}")
    raise typer.Exit(code)


def _fmt(x, spec: str) -> str:
    return "" if x is None else format(x, spec)


def _time(s) -> str:
    if s is None:
        return ""
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.3f} ms"


def print_table(rows: list[dict], title: str = "results") -> None:
    t = Table(title=title, show_lines=False)
    for c in ("op", "backend", "variant", "case", "device", "time", "GB/s", "TFLOP/s", "% SOL",
              "max err", "status"):
        t.add_column(c, justify="right" if c in ("time", "GB/s", "TFLOP/s", "% SOL", "max err") else "left")
    for r in rows:
        tm = r.get("timing") or {}
        st = r.get("status", "")
        color = {"ok": "green", "compiled": "cyan", "failed": "red", "error": "red",
                 "timeout": "red"}.get(st, "yellow")
        msg = r.get("message") or ""
        status = f"[{color}]{st}[/{color}]" + (f" {msg[:90]}" if st not in ("ok",) and msg else "")
        if st == "ok" and r.get("mode") == "interpret":
            status += " (interpreted)"
        t.add_row(r["op"], r["backend"], r["variant"], r.get("case", ""), r.get("device", ""),
                  _time(tm.get("median_s")), _fmt(r.get("gbps"), ".1f"), _fmt(r.get("tflops"), ".3f"),
                  _fmt(r.get("pct_sol"), ".1f"), _fmt((r.get("check") or {}).get("max_abs_err"), ".2g"),
                  status)
    console.print(t)


def _progress() -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True)


@app.command()
def run(
    op: OpOpt = None, backend: BackendOpt = None, variant: VariantOpt = None, device: DeviceOpt = None,
    devices: DevicesOpt = None, split_cpu: SplitCpuOpt = False,
    size: Annotated[str, typer.Option(help="test | bench")] = "bench",
    dtype: Annotated[list[str] | None,
                     typer.Option("--dtype", help="only cases of this dtype (repeatable)")] = None,
    hot: Annotated[bool, typer.Option("--hot", help="no L2 flush between samples")] = False,
    check_only: Annotated[bool, typer.Option("--check-only", help="check, do not time")] = False,
    seed: Annotated[int | None, typer.Option(help="override every case's seed (fresh inputs)")] = None,
    timeout: Annotated[float, typer.Option(help="seconds per kernel before it is killed")] = 300.0,
    json_out: Annotated[Path | None, typer.Option("--json", help="also write all rows to this JSON")] = None,
    csv_out: Annotated[Path | None,
                       typer.Option("--csv", help="also write the flat table to this CSV")] = None,
    save: Annotated[bool, typer.Option(help="write run files under results/<device>/")] = True,
    results_dir: Annotated[Path, typer.Option(help="where run files go")] = res.RESULTS_DIR,
):
    """Check, then time, every selected kernel on every selected device."""
    from backends.base import SPLIT_CPU_ENV

    if device and devices:
        _fail("give --device or --devices, not both")
    pool = Pool(env={SPLIT_CPU_ENV: "1"} if split_cpu else None)
    try:
        try:
            p = plan(pool, op, backend, variant, devices or device, size, check_only, hot, seed, dtype)
        except ValueError as e:
            _fail(str(e))
        meta = new_run()
        rows = list(p.notes)
        with _progress() as prog:
            task = prog.add_task("running", total=len(p.items))

            def on_row(it, row):
                prog.update(task, advance=1, description=it.id[:70])

            rows += execute(pool, p.items, timeout, on_row, parallel=devices is not None)
    except KeyboardInterrupt:
        pool.close()
        console.print("[yellow]interrupted: no result file written[/yellow]")
        raise typer.Exit(130) from None
    finally:
        pool.close()
    print_table(rows, f"solbench run {meta['id']}")
    if save:
        for path in write_run(meta, p.devices, rows, results_dir):
            console.print(f"wrote {path}")
    if json_out:
        res.atomic_write_json(json_out, {"schema_version": res.SCHEMA_VERSION, "run": meta,
                                         "devices": p.devices, "results": rows})
    if csv_out:
        res.write_csv(csv_out, rows, meta)
    bad = [r for r in rows if r["status"] in BAD]
    if bad:
        console.print(f"[red]{len(bad)} kernel(s) failed, errored or timed out[/red]")
        raise typer.Exit(1)


@app.command("list")
def list_(op: OpOpt = None, backend: BackendOpt = None):
    """The op × backend matrix of registered variants."""
    try:
        entries = select(op, backend)
    except ValueError as e:
        _fail(str(e))
    t = Table(title=escape("registered kernels (variant [dtypes])"))
    t.add_column("op")
    for b in BACKENDS:
        t.add_column(b)
    for name in sorted({e.op for e in entries}):
        cells = []
        for b in BACKENDS:
            vs = [e for e in entries if e.op == name and e.backend == b]
            names = (e.variant + (f" [{','.join(e.dtypes)}]" if e.dtypes else "") for e in vs)
            cells.append(escape("\n".join(names)))
        t.add_row(name, *cells)
    console.print(t)
    console.print(f"{len(entries)} kernels over {len(SPECS)} ops")


def _doctor_hints(backend: str, devices) -> list[str]:
    """Exact fixes for the usual set-up gaps."""
    hints = []
    has_nvidia = shutil.which("nvidia-smi") is not None
    if backend == "opencl" and has_nvidia and not Path("/etc/OpenCL/vendors/nvidia.icd").exists():
        hints.append("NVIDIA's OpenCL ICD is not registered: "
                     "echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd")
    if backend == "webgpu":
        out = (subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
               if shutil.which("ldconfig") else "")
        if "libvulkan.so.1" not in out:
            hints.append("no Vulkan loader: apt-get install libvulkan1 mesa-vulkan-drivers")
    if backend == "cuda" and isinstance(devices, list) and all(d["mode"] == "compile" for d in devices):
        hints.append("no CUDA driver/GPU: CUDA kernels are compiled through NVRTC only"
                     + (" (nvidia-smi exists: is cupy-cuda13x installed?)" if has_nvidia else ""))
    if backend == "triton" and isinstance(devices, list) and all(d["mode"] == "interpret" for d in devices):
        hints.append("no CUDA GPU for torch: Triton runs in its interpreter (correctness only)")
    return hints


@app.command()
def doctor():
    """Every backend: found or not, its devices, the reason and the exact fix."""
    pool = Pool()
    try:
        probed = pool.probe_all(list(BACKENDS))
    finally:
        pool.close()
    t = Table(title="solbench doctor")
    for c in ("backend", "device", "slug", "kind", "mode", "status / fix"):
        t.add_column(c)
    for b, devs in probed.items():
        hints = _doctor_hints(b, devs)
        if isinstance(devs, str):
            t.add_row(b, "", "", "", "",
                      f"[red]unavailable[/red]: {devs}" + "".join(f"\nfix: {h}" for h in hints))
            continue
        if not devs:
            t.add_row(b, "", "", "", "",
                      f"[red]no devices[/red]; fix: {FIX[b]}" + "".join(f"\n{h}" for h in hints))
        for i, d in enumerate(devs):
            st = "[green]usable[/green]" if d["reason"] is None else f"[red]unusable[/red]: {d['reason']}"
            if i == len(devs) - 1 and hints:
                st += "".join(f"\n[yellow]note[/yellow]: {h}" for h in hints)
            t.add_row(b, d["name"], d["slug"], d["kind"], d["mode"], st)
    console.print(t)


@app.command()
def peaks(device: DeviceOpt = None,
          timeout: Annotated[float, typer.Option(help="seconds per measurement")] = 600.0):
    """Measure bandwidth and FLOP/s ceilings; store results/<device>/peaks.json."""
    from suite.peaks import measure_peaks

    pool = Pool()
    try:
        with _progress() as prog:
            task = prog.add_task("peaks", total=None)
            out = measure_peaks(pool, device, timeout,
                                lambda it, row: prog.update(task, description=it.id[:70]))
    except ValueError as e:
        _fail(str(e))
    finally:
        pool.close()
    t = Table(title="device ceilings")
    for c in ("device", "ceiling", "measured", "how", "theoretical", "source"):
        t.add_column(c)
    for slug, pk in out.items():
        for key in sorted(set(pk["measured"]) | {k for k in pk["theoretical"] if k != "note"}):
            m, th = pk["measured"].get(key, {}), pk["theoretical"].get(key, {})
            unit, scale = ("GB/s", 1e9) if key == "bandwidth" else ("TFLOP/s", 1e12)
            t.add_row(slug, key, f"{m['value'] / scale:.4g} {unit}" if m else "", m.get("how", ""),
                      f"{th['value'] / scale:.4g} {unit}" if th else "", th.get("source", ""))
    console.print(t)


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    discover()
    app()


if __name__ == "__main__":
    sys.exit(main())
