"""The ``solbench`` command line (typer + rich): run, list, doctor, peaks."""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from typer.core import TyperGroup, TyperOption

from backends import BACKENDS
from suite import report
from suite import results as res
from suite.registry import REGISTRY, SPECS, discover, select
from suite.runner import execute, new_run, plan, work, write_run
from suite.spec import DTYPES
from suite.worker import FIX, Pool


class _Group(TyperGroup):
    """The app's command group: flags show no ``<bool>`` type in ``--help`` (a flag takes no
    value), for every command, including ones added later."""

    def get_command(self, ctx, cmd_name):
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            _blank_flag_types(cmd, ctx)
        return cmd

    def format_help(self, ctx, formatter):
        _blank_flag_types(self, ctx)
        return super().format_help(ctx, formatter)


def _blank_flag_types(cmd, ctx) -> None:
    for p in [*cmd.params, cmd.get_help_option(ctx)]:
        if isinstance(p, TyperOption) and p.is_flag and p.metavar is None:
            p.metavar = ""


#: a run file is rewritten after a row only once this many times the last rewrite's duration
#: has passed since it (rewrites then take at most ~1/(1 + ratio) of a run's wall time)
PARTIAL_WRITE_RATIO = 10

app = typer.Typer(cls=_Group, add_completion=False, no_args_is_help=True,
                  help="solbench: one spec per operator, kernels in CUDA, Triton, OpenCL and WGSL, "
                       "checked against float64 references, timed against the device's speed of light.")
console = Console(width=None if sys.stdout.isatty() else 180)
#: errors, warnings and the interrupt notice: stderr, like typer's own usage errors
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 180)
BAD = report.BAD

OpOpt = Annotated[list[str] | None, typer.Option("--op", help="operator (repeatable)")]
BackendOpt = Annotated[list[str] | None, typer.Option("--backend", help="backend (repeatable)")]
VariantOpt = Annotated[list[str] | None, typer.Option("--variant", help="variant (repeatable)")]
DeviceOpt = Annotated[str | None, typer.Option("--device", help="device slug, gpu0|gpu1|… (CUDA order), "
                                                "gpu, cpu, all (every GPU; the CPU-side devices when "
                                                "there is none, the default), or a comma list")]
DevicesOpt = Annotated[str | None, typer.Option(
    "--devices", help="like --device, and run the selected devices in parallel, one worker per device; "
                      "identical cards share the work, each item runs once (`--devices all`: every "
                      "GPU of the host at once)")]
ReplicateOpt = Annotated[bool, typer.Option(
    "--replicate", help="with --devices: every item on every selected card (per-card results) instead "
                        "of once on the first free card of its model")]
SplitCpuOpt = Annotated[bool, typer.Option(
    "--split-cpu", help="treat each CPU-side API (PoCL, lavapipe, torch CPU, ...) as its own device "
                        "cpu-<model>-<backend> (SOLBENCH_SPLIT_CPU=1): to test sharding, not for numbers")]


def _fail(msg: str, code: int = 2):
    """One line on stderr, then exit (2: bad input, the usage-error code typer uses too)."""
    err_console.print(f"[red]error:[/red] {escape(msg)}", soft_wrap=True)
    raise typer.Exit(code)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        v = version("solbench")
    except PackageNotFoundError:
        v = "unknown (not installed: pip install -e .)"
    sha = (res.git_info().get("git_sha") or "")[:7]
    return f"solbench {v}" + (f" (git {sha})" if sha else "")


def _version_cb(value: bool) -> None:
    if value:
        console.print(_version(), highlight=False)
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", help="print the version and exit",
                                                callback=_version_cb, is_eager=True)] = False) -> None:
    """solbench: one spec per operator, kernels in CUDA, Triton, OpenCL and WGSL, checked against
    float64 references, timed against the device's speed of light."""


def print_table(rows: list[dict], title: str = "results") -> None:
    """The run table (``suite.report.run_tables``: fits 80 columns, notes under it)."""
    console.print(report.run_tables(rows, title))


class _Reporter:
    """Progress of a run: a rich bar with ETA on a terminal; elsewhere (CI logs, pipes) one
    plain line per finished item, so a log shows where a run is."""

    def __init__(self, label: str, total: int | None = None):
        self.label, self.total, self.done = label, total, 0
        self.t0 = time.monotonic()
        self.live = console.is_terminal
        self.prog: Progress | None = None

    def __enter__(self) -> _Reporter:
        if self.live:
            self.prog = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                 console=console, transient=True)
            self.prog.__enter__()
            self.task = self.prog.add_task(self.label, total=self.total)
        elif self.total is not None:  # a log shows that the run started, and how much is planned
            console.print(f"[0/{self.total}] {self.label}", highlight=False, markup=False)
        return self

    def __exit__(self, *exc) -> None:
        if self.prog is not None:
            self.prog.__exit__(*exc)

    def start(self, total: int) -> None:
        """The number of steps, once known."""
        self.total = total
        if self.prog is not None:
            self.prog.update(self.task, total=total)

    def step(self, label: str, row: dict | None = None) -> None:
        """One item finished."""
        self.done += 1
        if self.prog is not None:
            self.prog.update(self.task, advance=1, description=label[:70])
            return
        st = (row or {}).get("status", "done") if isinstance(row, dict) else "done"
        extra = ""
        if isinstance(row, dict) and (row.get("timing") or {}).get("median_s"):
            med = row["timing"]["median_s"]
            extra = f" {med * 1e3:.3f} ms" + (f" {row['gbps']:.3g} GB/s" if row.get("gbps") else "")
        total = f"/{self.total}" if self.total is not None else ""
        el = time.monotonic() - self.t0
        console.print(f"[{self.done}{total} {el:.0f} s] {label}: {st}{extra}", highlight=False,
                      markup=False, soft_wrap=True)


def _check_positive_finite(name: str, value: float) -> None:
    if not math.isfinite(value) or value <= 0:
        _fail(f"{name} {value}: give a number of seconds > 0 (finite)")


def _path(value: str) -> Path:
    """A path option's value: an empty one is refused (``Path("")`` is the current folder, where
    nothing was asked to be written or read)."""
    if not str(value).strip():
        raise typer.BadParameter("the path is empty")
    return Path(value)


def _path_option(*decls, **kw):
    return typer.Option(*decls, parser=_path, **kw)


def _check_outputs(targets: list[tuple[str, str | Path, bool]]) -> None:
    """Every output location is checked before the first kernel runs: (option, path, is_dir);
    two output files may not be one file (the second would overwrite the first)."""
    files: dict[Path, str] = {}
    for opt, path, is_dir in targets:
        why = res.check_dir(path) if is_dir else res.check_file(path)
        if why:
            _fail(f"{opt} {str(path)!r}: {why}")
        if not is_dir:
            key = Path(path).absolute()
            if key in files:
                _fail(f"{opt} {str(path)!r}: the same file as {files[key]}")
            files[key] = opt


def _save(what: str, target: Path, rescue: Path,
          write: Callable[[Path], list[Path]]) -> tuple[list[Path], bool]:
    """Write one output to ``target``; if that fails now (after the up-front check), write it to
    ``rescue`` (a fresh temporary folder) instead and say where, so a run's rows are not lost.
    Returns the paths written and whether they are where they were asked for."""
    try:
        return write(target), True
    except OSError as e:
        try:
            paths = write(rescue)
        except OSError as e2:
            err_console.print(f"[red]error:[/red] could not write {what} to {target} ({e}) nor to "
                              f"{rescue} ({e2})", soft_wrap=True)
            return [], False
        err_console.print(f"[red]error:[/red] could not write {what} to {target} ({e.strerror or e}); "
                          f"saved to {', '.join(map(str, paths))} instead", soft_wrap=True)
        return paths, False


def _valid_dtypes() -> list[str]:
    """Dtype names a case can have (the spec's DTYPES, plus any a kernel registers)."""
    names = dict.fromkeys(DTYPES)
    for e in REGISTRY.values():
        names.update(dict.fromkeys(e.dtypes or ()))
    return list(names)


def _check_dtypes(dtype: list[str] | None, ops: list[str] | None) -> None:
    """Unknown dtype names, and dtypes no case of the selected ops has, exit 2 listing the valid ones."""
    if not dtype:
        return
    valid = _valid_dtypes()
    for d in dtype:
        if d not in valid:
            _fail(f"unknown dtype {d!r}; valid: {', '.join(valid)}")
    have = {c.dtype for name, s in SPECS.items() if not ops or name in ops
            for c in [*s.test_cases, *[c for cs in s.bench_cases.values() for c in cs]]}
    if not have & set(dtype):
        _fail(f"no case of {', '.join(ops) if ops else 'any op'} has dtype {', '.join(dtype)}; "
              f"their dtypes: {', '.join(d for d in valid if d in have)}")


class _Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, a CI job's cancel) handled like Ctrl-C: the finished rows are kept."""

    signal = "SIGTERM"


@contextlib.contextmanager
def _on_sigterm(action):
    """While the block runs, SIGTERM gets ``action`` (a handler, or ``signal.SIG_IGN``), then the
    previous one back; outside the main thread SIGTERM is left alone."""
    try:
        old = signal.signal(signal.SIGTERM, action)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _terminate_as_interrupt():
    """While the block runs, SIGTERM raises ``_Terminated`` in the main thread."""
    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a repeat (timeout's to the group) waits
        raise _Terminated()

    return _on_sigterm(handler)


def _sigterm_ignored():
    """While the block runs, SIGTERM is ignored: a run saving its rows after an interrupt is not cut
    short by a repeated signal (``timeout`` signals the child, then its group)."""
    return _on_sigterm(signal.SIG_IGN)


SIZES = ("test", "bench")
SEED_MAX = 2**63 - 1
#: peaks --repeats at most (each repeat measures every ceiling once more)
PEAK_REPEATS_MAX = 100


@app.command()
def run(
    op: OpOpt = None, backend: BackendOpt = None, variant: VariantOpt = None, device: DeviceOpt = None,
    devices: DevicesOpt = None, replicate: ReplicateOpt = False, split_cpu: SplitCpuOpt = False,
    size: Annotated[str, typer.Option(metavar="[test|bench]",
                                      help="test: small edge-case sizes; bench: large, timed")] = "bench",
    dtype: Annotated[list[str] | None, typer.Option(
        "--dtype", metavar="DTYPE",
        help=f"only cases of this dtype (repeatable): {', '.join(DTYPES)}")] = None,
    case: Annotated[list[str] | None, typer.Option(
        "--case", metavar="CASE", help="only the case of this name (repeatable)")] = None,
    hot: Annotated[bool, typer.Option("--hot", help="no L2 flush between samples")] = False,
    check_only: Annotated[bool, typer.Option("--check-only", help="check, do not time")] = False,
    seed: Annotated[int | None, typer.Option(
        help=f"override every case's seed (fresh inputs), 0..{SEED_MAX}")] = None,
    timeout: Annotated[float, typer.Option(help="seconds per kernel before it is killed (> 0)")] = 300.0,
    time_cap: Annotated[float | None, typer.Option(
        help="seconds of timed samples per kernel (> 0; default 5: fewer for a quick look, the "
             "0.5 % convergence target is then reached less often and flagged)")] = None,
    json_out: Annotated[str | None, typer.Option("--json", metavar="FILE",
                                                 help="also write all rows to this JSON")] = None,
    csv_out: Annotated[str | None, typer.Option("--csv", metavar="FILE",
                                                help="also write the flat table to this CSV")] = None,
    save: Annotated[bool, typer.Option(help="write run files under the results folder")] = True,
    results_dir: Annotated[Path | None, _path_option(
        metavar="DIR", help="where run files go (default: results-local/, git-ignored, or $SOLBENCH_RESULTS; "
                            "`--results-dir results` adds to the committed reference data)")] = None,
):
    """Check, then time, every selected kernel on every selected device."""
    from backends.base import SPLIT_CPU_ENV
    from suite import sol

    discover()
    if device and devices:
        _fail("give --device or --devices, not both")
    if replicate and devices is None:
        _fail("--replicate needs --devices (with --device every selected device runs every item anyway)")
    for opt, val in (("--device", device), ("--devices", devices)):
        if val is not None and not val.strip():
            _fail(f"{opt} '' names no device; valid: all, gpu, cpu, a device slug (see `solbench doctor`) "
                  "or a comma list of those")
    if size not in SIZES:
        _fail(f"unknown size {size!r}; valid: {', '.join(SIZES)}")
    _check_positive_finite("--timeout", timeout)
    if time_cap is not None:
        _check_positive_finite("--time-cap", time_cap)
    if check_only and (hot or time_cap is not None):
        _fail(f"--check-only times nothing: {'--hot' if hot else '--time-cap'} has no effect with it")
    if seed is not None and not 0 <= seed <= SEED_MAX:
        _fail(f"--seed {seed}: give an integer in 0..{SEED_MAX}")
    try:
        select(op, backend, variant)
    except ValueError as e:
        _fail(str(e))
    _check_dtypes(dtype, op)
    results_dir = Path(results_dir) if results_dir is not None else res.RESULTS_DIR
    outputs: list[tuple[str, str | Path, bool]] = [("--results-dir", results_dir, True)] if save else []
    outputs += [(o, v, False) for o, v in (("--json", json_out), ("--csv", csv_out)) if v is not None]
    _check_outputs(outputs)
    sol.PEAKS_FIRST = results_dir
    pool = Pool(env={SPLIT_CPU_ENV: "1"} if split_cpu else None)
    try:
        try:
            p = plan(pool, op, backend, variant, devices or device, size, check_only, hot, seed, dtype, case,
                     timing={"time_cap_s": time_cap} if time_cap is not None else None)
        except ValueError as e:
            _fail(str(e))
        if not p.items:
            print_table(p.notes, "nothing to run")
            _fail("no kernel of the selection can run here (reasons above); no file written")
        meta = new_run()
        parallel, spread = devices is not None, devices is not None and not replicate
        tasks, last = work(p.items, p.devices, spread)
        planned = sum(map(len, tasks.values())) + len(last)
        meta.update(devices_mode="spread" if spread else "replicate" if parallel else "sequential",
                    rows_planned=planned)
        rows = list(p.notes)
        done: list[dict] = []  # rows finished so far: what an interrupted run still saves
        last_write = {"at": -math.inf, "took": 0.0}

        def on_row(it, row: dict) -> None:
            done.append(row)
            # the run file so far, rewritten as rows finish, so a killed run keeps them: after
            # every row, unless the last rewrite took more than a tenth of the time since (each
            # rewrite holds every row's samples, so a long run would write O(rows²) bytes)
            now = time.monotonic()
            if save and now - last_write["at"] >= PARTIAL_WRITE_RATIO * last_write["took"]:
                meta["partial"] = {"rows_done": len(done), "rows_planned": planned}
                with contextlib.suppress(OSError):  # the final save reports (and rescues)
                    write_run(meta, p.devices, [*p.notes, *done], results_dir)
                last_write["at"] = time.monotonic()
                last_write["took"] = last_write["at"] - now
            prog.step(it.id, row)

        interrupted = None
        with _Reporter("running", planned) as prog, _terminate_as_interrupt():
            t0 = time.monotonic()
            try:
                rows += execute(pool, p.items, timeout, on_row, parallel=parallel, devices=p.devices,
                                spread=spread)
            except KeyboardInterrupt as e:
                interrupted = e
            meta["wall_s"] = time.monotonic() - t0  # planning and worker start-up not included
    except BaseException:
        pool.close()
        raise
    try:  # the workers stop after the files are written: their teardown (drivers) can take seconds,
        with _sigterm_ignored():
            _finish_run(meta, p, rows, done, interrupted, prog, save, results_dir, json_out, csv_out)
    finally:  # and a time limit landing then must not leave a finished run marked partial
        pool.close()


def _finish_run(meta, p, rows, done, interrupted, prog, save, results_dir, json_out, csv_out) -> None:
    """An executed run's table, files (run files, --json, --csv; rescued to a temporary folder
    where a target cannot be written) and summary line; exit 130 if interrupted, 1 on bad rows or
    a file not saved."""
    if interrupted is not None:
        sig = getattr(interrupted, "signal", "SIGINT")
        if not done:
            err_console.print(f"[yellow]interrupted ({sig}) before any row finished: no result file "
                              "written[/yellow]")
            raise typer.Exit(130)
        meta["interrupted"] = {"signal": sig, "rows_done": len(done), "rows_planned": meta["rows_planned"]}
        rows += done
        err_console.print(f"[yellow]interrupted ({sig}) after {len(done)} of {meta['rows_planned']} rows: "
                          "saving those (run.interrupted in the file)[/yellow]")
    meta.pop("partial", None)  # complete, or marked interrupted
    print_table(rows, f"solbench run {meta['id']}")
    rescue = Path(tempfile.gettempdir()) / f"solbench-{meta['id']}"
    doc = {"schema_version": res.SCHEMA_VERSION, "run": meta, "devices": p.devices, "results": rows}
    def run_files(root: Path) -> list[Path]:
        return write_run(meta, p.devices, rows, root)

    def json_file(f: Path) -> list[Path]:
        res.atomic_write_json(f, doc)
        return [f]

    def csv_file(f: Path) -> list[Path]:
        res.write_csv(f, rows, meta)
        return [f]

    jobs: list[tuple[str, Path, Path, Callable[[Path], list[Path]]]] = []
    if save:
        jobs.append(("the run files", results_dir, rescue, run_files))
    for opt, val, fn in (("--json", json_out, json_file), ("--csv", csv_out, csv_file)):
        if val is not None:
            jobs.append((opt, Path(val), rescue / Path(val).name, fn))
    written: list[Path] = []
    all_saved = True
    for what, target, alt, fn in jobs:
        paths, ok = _save(what, target, alt, fn)
        written += paths
        all_saved &= ok
    for path in written:
        console.print(f"wrote {path}", highlight=False)
    bad = [r for r in rows if r["status"] in BAD]
    color = "red" if bad else "green"
    console.print(f"[{color}]{report.summary_line(rows)}[/{color}] "
                  f"({len(rows)} rows, {time.monotonic() - prog.t0:.0f} s)", highlight=False)
    if interrupted is not None:
        raise typer.Exit(130)
    if bad or not all_saved:
        raise typer.Exit(1)


@app.command("list")
def list_(op: OpOpt = None, backend: BackendOpt = None):
    """The op × backend matrix of registered variants."""
    try:
        entries = select(op, backend)
    except ValueError as e:
        _fail(str(e))
    t = Table(title=escape("registered kernels: op [its dtypes], variant [dtypes, where fewer]"))
    t.add_column(escape("op [dtypes]"))
    for b in BACKENDS:
        t.add_column(b)
    for name in sorted({e.op for e in entries}):
        spec = SPECS[name]
        op_dtypes = list(dict.fromkeys(c.dtype for c in [*spec.test_cases, *[
            c for cs in spec.bench_cases.values() for c in cs]]))
        cells = []
        for b in BACKENDS:
            vs = [e for e in entries if e.op == name and e.backend == b]
            names = (e.variant + (f" [{','.join(e.dtypes)}]" if e.dtypes and set(e.dtypes) != set(op_dtypes)
                                  else "") for e in vs)
            cells.append(escape("\n".join(names)))
        t.add_row(escape(f"{name} [{','.join(op_dtypes)}]"), *cells)
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
        from suite import cudawheel

        wheel = cudawheel.choose(cudawheel.nvidia_smi()).cupy if has_nvidia else None
        hints.append("no CUDA driver/GPU: CUDA kernels are compiled through NVRTC only"
                     + (f" (nvidia-smi exists: is {wheel} installed?)" if wheel else ""))
    if backend == "triton" and isinstance(devices, list) and all(d["mode"] == "interpret" for d in devices):
        hints.append("no CUDA GPU for torch: Triton runs in its interpreter (correctness only)")
    return hints


#: reasons that mean "listed, deliberately not benchmarked" rather than "broken"
NOT_USED = ("the same device is used through", "is not benchmarked")


def device_status(d: dict) -> str:
    """Doctor's status cell of one device: usable (green), not used (neutral: e.g. the OpenGL
    adapter of a device benchmarked through Vulkan), or unusable (red) with the reason."""
    if d["reason"] is None:
        return "[green]usable[/green]"
    if any(k in d["reason"] for k in NOT_USED):
        return f"[dim]not used[/dim]: {escape(d['reason'])}"
    return f"[red]unusable[/red]: {escape(d['reason'])}"


def cuda_wheel_line(smi_output: str | None) -> str:
    """Doctor's line on the CuPy wheel for this driver: which, why, and whether it is installed."""
    from suite import cudawheel

    c = cudawheel.choose(smi_output)
    if not c.requirements:
        return f"CuPy wheel: none: {c.reason}"
    have = cudawheel.installed(c.cupy)
    others = [n for n in ("cupy-cuda11x", "cupy-cuda12x", "cupy-cuda13x")
              if n != c.cupy and cudawheel.installed(n)]
    state = f"{c.cupy} {have} installed" if have else f"not installed: pip install {' '.join(c.requirements)}"
    if others:
        state += f"; also installed: {', '.join(others)} (remove it: two CuPy wheels conflict)"
    return f"CuPy wheel: {c.cupy}, because {c.reason} ({state})"


@app.command()
def doctor():
    """Every backend: found or not, its devices, the reason and the exact fix."""
    from suite import cudawheel

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
            st = device_status(d)
            if i == len(devs) - 1 and hints:
                st += "".join(f"\n[yellow]note[/yellow]: {h}" for h in hints)
            if d.get("attribution"):
                st += f"\n[yellow]not attributable[/yellow]: {d['attribution']}"
            slug = d["slug"] + (f" ({d['ordinal']})" if d.get("ordinal") else "")
            t.add_row(b, d["name"], slug, d["kind"], d["mode"], st)
    console.print(t)
    console.print(cuda_wheel_line(cudawheel.nvidia_smi()), highlight=False)


@app.command()
def peaks(device: DeviceOpt = None,
          timeout: Annotated[float, typer.Option(help="seconds per measurement (> 0)")] = 600.0,
          results_dir: Annotated[Path | None, _path_option(
              metavar="DIR", help="where peaks.json goes (default: results-local/<device>/, git-ignored, "
                                  "or $SOLBENCH_RESULTS; the committed results/ only when named)")] = None,
          gemm_only: Annotated[bool, typer.Option(
              "--gemm-only", help="only the GEMM FLOP/s ceilings; keep the bandwidth ones")] = False,
          repeats: Annotated[int, typer.Option(
              help="measurements per ceiling; the ceiling is their median")] = 5):
    """Measure bandwidth and FLOP/s ceilings; store <results dir>/<device>/peaks.json."""
    from suite import sol
    from suite.peaks import measure_peaks

    if device is not None and not device.strip():
        _fail("--device '' names no device; valid: all, gpu, cpu or a device slug (see `solbench doctor`)")
    _check_positive_finite("--timeout", timeout)
    if not 1 <= repeats <= PEAK_REPEATS_MAX:
        _fail(f"--repeats {repeats}: give 1..{PEAK_REPEATS_MAX} (each repeat is a full measurement)")
    root = Path(results_dir) if results_dir is not None else res.RESULTS_DIR
    _check_outputs([("--results-dir", root, True)])
    sol.PEAKS_FIRST = root
    pool = Pool()
    try:
        with _Reporter("peaks") as prog:
            out = measure_peaks(pool, device, timeout,
                                lambda it, row: prog.step(getattr(it, "id", str(it)), row),
                                root=root, on_start=prog.start, gemm_only=gemm_only, repeats=repeats)
    except ValueError as e:
        _fail(str(e))
    finally:
        pool.close()
    t = Table(title="device ceilings")
    for c in ("device", "ceiling", "measured", "spread", "how", "theoretical", "source"):
        t.add_column(c)
    for slug, pk in out.items():
        for key in sorted(set(pk["measured"]) | {k for k in pk["theoretical"] if k != "note"}):
            m, th = pk["measured"].get(key, {}), pk["theoretical"].get(key, {})
            unit, scale = ("GB/s", 1e9) if key in sol.BANDWIDTH_KEYS else ("TFLOP/s", 1e12)
            sp = m.get("spread")
            spread = f"median of {len(m['repeats'])}, IQR {100 * sp['rel_iqr']:.1f} %" if sp else ""
            t.add_row(slug, key, f"{m['value'] / scale:.4g} {unit}" if m else "", spread, m.get("how", ""),
                      f"{th['value'] / scale:.4g} {unit}" if th else "", th.get("source", ""))
    console.print(t)
    for slug, pk in out.items():
        if pk["measured"]:
            console.print(f"wrote {sol.peaks_path(slug, root)}", highlight=False)


# --- compare, nightly, dashboard (issue 11) ------------------------------------------------------

ThresholdsOpt = Annotated[Path | None, _path_option(
    "--thresholds", metavar="YAML",
    help="per-series minimum effect / alpha (default: results/thresholds.yaml if present)")]
MinEffectOpt = Annotated[float | None, typer.Option(
    "--min-effect", help="default minimum relative change that counts (0.05 = 5 %)")]


def _cell(x) -> str:
    """A table cell: missing fields (NaN from older or probe run files) print empty."""
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def _thresholds(path: Path | None, min_effect: float | None, alpha: float | None = None):
    from suite.compare import load_thresholds

    if min_effect is not None and not 0 < min_effect < 1:
        _fail(f"--min-effect {min_effect}: give a fraction in (0, 1), e.g. 0.05")
    if alpha is not None and not 0 < alpha < 1:
        _fail(f"--alpha {alpha}: give a significance level in (0, 1), e.g. 0.01")
    try:
        return load_thresholds(path, min_effect, alpha)
    except (ValueError, OSError) as e:
        _fail(str(e))


@app.command()
def compare(
    before: Annotated[str, typer.Argument(
        help="run file, result folder, run id (or suffix) or git revision")],
    after: Annotated[str, typer.Argument(help="the same kinds as BEFORE")],
    thresholds: ThresholdsOpt = None, min_effect: MinEffectOpt = None,
    alpha: Annotated[float | None, typer.Option(
        help="significance level of the rank test (default 0.01)")] = None,
    json_out: Annotated[str | None, typer.Option(
        "--json", metavar="FILE", help="write the comparison as JSON ('-': stdout)")] = None,
    markdown: Annotated[str | None, typer.Option("--markdown", metavar="FILE", help="write a Markdown table "
                                                 "('-': stdout), e.g. for a CI comment")] = None,
    all_rows: Annotated[bool, typer.Option("--all", help="list unchanged series too")] = False,
):
    """Compare two runs series by series: medians, ratio, Mann–Whitney U on the samples.
    Exit 1 on a significant regression or a new correctness failure."""
    from suite import compare as cmp

    for name, spec in (("BEFORE", before), ("AFTER", after)):
        if not spec.strip():
            _fail(f"{name} is empty: give a run file, result folder, run id or git revision")
    _check_outputs([(opt, t, False) for opt, t in (("--json", json_out), ("--markdown", markdown))
                    if t is not None and t != "-"])
    th = _thresholds(thresholds, min_effect, alpha)
    try:
        out = cmp.compare(before, after, thresholds=th)
    except ValueError as e:
        _fail(str(e))
    if out["entries"] and all(e["verdict"] in ("new", "vanished") for e in out["entries"]):
        _fail(f"the two sides share no series ({len(out['entries'])} appear on one side only): "
              "nothing to compare")
    quiet = ("unchanged", "not significant", "untimed")
    if json_out != "-" and markdown != "-":
        t = Table(title=f"{out['before']['label']} → {out['after']['label']}")
        for c in ("verdict", "device", "op", "backend", "variant", "case", "dtype", "before", "after",
                  "ratio", "p"):
            t.add_column(c, justify="right" if c in ("before", "after", "ratio", "p") else "left")
        for e in out["entries"]:
            if not all_rows and e["verdict"] in quiet:
                continue
            color = {"regression": "red", "new failure": "red", "still failing": "red",
                     "improvement": "green", "fixed": "green"}.get(e["verdict"], "yellow")
            t.add_row(f"[{color}]{e['verdict']}[/{color}]" + (" (ignored)" if e["ignored"] else ""),
                      *(_cell(e[k]) for k in ("device", "op", "backend", "variant", "case", "dtype")),
                      cmp.fmt_time(e["before_median_s"]), cmp.fmt_time(e["after_median_s"]),
                      cmp.fmt_ratio(e["ratio"]), cmp.fmt_p(e["p_value"]))
        console.print(t)
        counts = ", ".join(f"{n} {v}" for v, n in out["counts"].items() if n)
        console.print(counts or "no series", highlight=False)
    for target, text in ((json_out, cmp.to_json(out)), (markdown, cmp.to_markdown(out, not all_rows))):
        if target == "-":
            sys.stdout.write(text)
        elif target:
            res.atomic_write_text(Path(target), text)
            err_console.print(f"wrote {target}", highlight=False)
    if out["has_blocking"]:
        raise typer.Exit(1)


@app.command()
def nightly(
    op: OpOpt = None, backend: BackendOpt = None, variant: VariantOpt = None,
    case: Annotated[list[str] | None, typer.Option(
        "--case", metavar="CASE", help="only the case of this name (repeatable)")] = None,
    device: Annotated[str, typer.Option("--device", help="all | gpu | cpu | slug[,slug]: the devices to "
                                        "run (and report)")] = "all",
    size: Annotated[str, typer.Option(metavar="[test|bench]", help="case sizes to run")] = "bench",
    timeout: Annotated[float, typer.Option(help="seconds per kernel before it is killed (> 0)")] = 300.0,
    no_run: Annotated[bool, typer.Option("--no-run", help="run nothing: analyse the history as it is "
                                         "(each device's newest run is the night's)")] = False,
    no_peaks: Annotated[bool, typer.Option("--no-peaks", help="never re-measure peaks")] = False,
    peaks_max_age: Annotated[float, typer.Option(help="re-measure peaks older than this many days")] = 7.0,
    thresholds: ThresholdsOpt = None, min_effect: MinEffectOpt = None,
    min_runs: Annotated[int, typer.Option(help="runs needed after a change to confirm it (≥ 2)")] = 2,
    window: Annotated[int | None, typer.Option(help="analyse only each series' newest N runs")] = None,
    results_dir: Annotated[Path | None, _path_option(
        metavar="DIR", help="where the night's run files (and peaks) go; the history is results/ plus "
                            "this (default: results-local/ or $SOLBENCH_RESULTS)")] = None,
    reports_dir: Annotated[Path | None, _path_option(
        metavar="DIR", help="default: <results dir>/reports")] = None,
    dashboard_out: Annotated[Path | None, _path_option(
        "--dashboard", metavar="DIR", help="build the dashboard here (default: build/dashboard)")] = None,
    no_dashboard: Annotated[bool, typer.Option("--no-dashboard", help="do not build the dashboard")] = False,
):
    """The nightly job: refresh stale peaks, run the suite, find level shifts over the history
    (ruptures, confirmed by Mann–Whitney U), write <results dir>/reports/<date>-<device>.md/.json,
    build the dashboard. Exit 1 on a confirmed current regression or a new failure."""
    from dashboard.build import DEFAULT_OUT
    from suite.nightly import JobOptions, SelectionError, run_job

    if size not in SIZES:
        _fail(f"unknown size {size!r}; valid: {', '.join(SIZES)}")
    _check_positive_finite("--timeout", timeout)
    if min_runs < 2:
        _fail(f"--min-runs {min_runs}: at least 2 (one run cannot tell a step from an outlier)")
    if window is not None and window < 2 * min_runs:
        _fail(f"--window {window}: at least 2 × --min-runs ({2 * min_runs})")
    if not (math.isfinite(peaks_max_age) and peaks_max_age >= 0):
        _fail(f"--peaks-max-age {peaks_max_age}: give a number of days ≥ 0 (finite)")
    outs = (("--results-dir", results_dir), ("--reports-dir", reports_dir),
            ("--dashboard", None if no_dashboard else dashboard_out))
    _check_outputs([(opt, d, True) for opt, d in outs if d is not None])
    try:
        select(op, backend, variant)
    except ValueError as e:
        _fail(str(e))
    opt = JobOptions(results_dir=Path(results_dir) if results_dir else res.RESULTS_DIR,
                     reports_dir=reports_dir,
                     ops=op, backends=backend, variants=variant, cases=case, device=device, size=size,
                     timeout=timeout,
                     run=not no_run, peaks=not no_peaks, peaks_max_age_days=peaks_max_age,
                     thresholds=_thresholds(thresholds, min_effect), min_runs=min_runs, window=window,
                     dashboard_out=None if no_dashboard else (dashboard_out or DEFAULT_OUT))
    try:
        code, paths = run_job(opt, log=lambda m: console.print(m, highlight=False, markup=False))
    except SelectionError as e:
        _fail(str(e))
    for p in paths:
        console.print(f"wrote {p}", highlight=False)
    if code:
        raise typer.Exit(code)


@app.command()
def dashboard(
    out: Annotated[Path | None, _path_option("--out", metavar="DIR", help="default: build/dashboard")] = None,
    results_dir: Annotated[list[Path] | None, _path_option(
        "--results-dir", metavar="DIR", help="results folder (repeatable; default: results/ and "
                                             "results-local/)")] = None,
):
    """Build the static dashboard (one index.html, opens from file://, no network)."""
    from dashboard.build import DEFAULT_OUT, build

    _check_outputs([("--out", out or DEFAULT_OUT, True)])
    for d in results_dir or []:
        if not Path(d).is_dir():
            _fail(f"--results-dir {str(d)!r}: not a folder")
    page = build(results_dir or None, out or DEFAULT_OUT)
    console.print(f"wrote {page}  (open file://{page.resolve()})", highlight=False)


@app.command("inspect")
def inspect_(
    op: Annotated[str, typer.Argument(help="operator")],
    backend: Annotated[str, typer.Option("--backend", help="cuda | triton | opencl | webgpu")],
    variant: Annotated[list[str] | None, typer.Option("--variant", help="variant (repeatable)")] = None,
    stage: Annotated[str | None, typer.Option(
        "--stage", help="print this stage: cuda ptx|sass|loops|log; triton ttir|ttgir|llir|ptx|sass|loops; "
                        "opencl binary|log; webgpu wgsl")] = None,
    arch: Annotated[str, typer.Option("--arch", help="CUDA/Triton target (no GPU needed)")] = "sm_90",
    case: Annotated[str | None, typer.Option("--case", help="case (default: first GPU bench case)")] = None,
    summary: Annotated[bool, typer.Option("--summary", help="one table: registers, spills, shared memory, "
                                                             "vector loads / shfl / mma present")] = False,
    sms: Annotated[int | None, typer.Option("--sms", min=1, help="SM count the Triton kernels are shaped "
                                                          "for (grids, split parts); default: this GPU's, "
                                                          "132 without one")] = None,
):
    """What each backend compiled (measurement integrity, issue 9): IR, PTX, SASS, binaries, WGSL."""
    from suite.inspection import STAGES, inspect_kernels

    if backend not in STAGES:
        _fail(f"unknown backend {backend!r} for inspect; valid: {', '.join(STAGES)}")
    if stage and stage not in STAGES[backend]:
        _fail(f"unknown stage {stage!r} for {backend}; valid: {', '.join(STAGES[backend])}")
    try:
        recs = inspect_kernels(op, backend, variant, case, arch, sms)
    except (ValueError, KeyError, RuntimeError) as e:
        _fail(str(e))
    if summary or not stage:
        t = Table(title=f"solbench inspect {op} --backend {backend} ({arch})")
        for c in ("variant", "entry", "regs", "spill B", "smem B", "loop", "vec ld", "shfl", "mma", "note"):
            t.add_column(c)
        for r in recs:
            m = r.get("markers") or {}
            yes = {True: "yes", False: "no"}
            num = ["" if r.get(k) is None else str(r[k])
                   for k in ("registers", "spill_bytes", "smem_bytes", "loop_instructions")]
            t.add_row(r["variant"], r.get("entry", ""), *num,
                      *(yes.get(m.get(k), "") for k in ("vec_load", "shfl", "mma")),
                      escape((r.get("error") or r.get("note") or "")[:80]))
        console.print(t)
        if not stage:
            console.print(f"stages: {', '.join(STAGES[backend])} (--stage S prints one)")
            return
    for r in recs:
        cfg = f" [{r['note']}]" if r.get("note") and not r.get("error") else ""
        head = f"// {op}/{backend}/{r['variant']} {r.get('entry', '')} ({r['case']}){cfg}"
        console.print(f"[bold]{escape(head)}[/bold]")
        console.print(escape(r.get("stages", {}).get(stage) or r.get("error") or "(not available)"),
                      highlight=False, soft_wrap=True)


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    discover()
    app()


if __name__ == "__main__":
    sys.exit(main())
