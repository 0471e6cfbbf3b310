"""The command line and the result store (issue 10): bad input is refused up front, bad files do
not crash the loader, files honour the umask, user runs stay out of the committed tree, and the
output people read fits 80 columns and ends with a summary.

Most tests run in-process through typer's runner and never start a worker: the ``no_pool``
fixture makes starting one an error, which proves a refusal happened before the first kernel.
The few real runs are torch-on-CPU check-only runs of three small cases.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from suite import cli, cudawheel, report, sol
from suite import results as res
from suite.registry import REGISTRY, SPECS, discover
from suite.spec import DTYPES

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SMALL = ["run", "--op", "vector_add", "--backend", "torch", "--variant", "eager", "--size", "test",
         "--check-only", "--dtype", "fp16"]  # a few small cases, a few seconds


@pytest.fixture
def runner() -> CliRunner:
    discover()
    return CliRunner()


@pytest.fixture
def no_pool(monkeypatch):
    """Any worker start is a test failure: the command must have refused before running anything."""
    def boom(*a, **k):
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(cli, "Pool", boom)


def _one_error_line(result) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stdout + result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "error" not in result.stdout  # item 7: errors go to stderr only
    return lines[0]


# -- item 1: output locations are checked before the first kernel runs -------------------------

@pytest.mark.parametrize("args, why", [
    (["--results-dir", "{file}/sub"], "is not a folder"),          # a path under a regular file
    (["--results-dir", "/proc/solbench-x/y"], "cannot write"),      # under a special folder
    (["--results-dir", "/sys/solbench-x"], "cannot write"),         # a read-only/special file system
    (["--json", ""], "empty"),
    (["--json", "{dir}"], "is a folder"),
    (["--json", "{file}/x.json"], "is not a folder"),
    (["--csv", "{dir}/missing/{file_name}/x.csv"], "is not a folder"),
    (["--csv", "/dev/null"], "not a regular file"),
])
def test_unwritable_outputs_refused_before_running(runner, no_pool, tmp_path, monkeypatch, args, why):
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "plain"
    f.write_text("x")
    (tmp_path / "missing").mkdir()
    (tmp_path / "missing" / "plain").write_text("x")
    args = [a.format(file=f, dir=tmp_path, file_name="plain") for a in args]
    r = runner.invoke(cli.app, [*SMALL, *args])
    line = _one_error_line(r)
    assert why in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["missing", "plain"]  # no temp file left


def test_read_only_results_dir_refused(runner, no_pool, tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    if os.geteuid() == 0:  # root writes into read-only folders: the file system refuses instead
        from suite import results

        real = results.tempfile.mkstemp

        def refuse(*args, dir=None, **kw):
            if dir is not None and Path(dir).is_relative_to(ro):
                raise PermissionError(13, "Permission denied")
            return real(*args, dir=dir, **kw)

        monkeypatch.setattr(results.tempfile, "mkstemp", refuse)
    line = _one_error_line(runner.invoke(cli.app, [*SMALL, "--results-dir", str(ro)]))
    assert "cannot write" in line and str(ro) in line, line


def test_peaks_checks_its_folder_first(runner, no_pool, tmp_path):
    f = tmp_path / "plain"
    f.write_text("x")
    assert "is not a folder" in _one_error_line(runner.invoke(cli.app, ["peaks", "--results-dir", f"{f}/x"]))


def test_a_write_that_fails_at_the_end_rescues_the_rows(runner, tmp_path, monkeypatch):
    """Items 1, 3, 9, 11: a real small run; its run file cannot be written at the end (after the
    up-front check passed), so the rows go to a rescue folder, and the output says where."""
    target, rescue_root = tmp_path / "results", tmp_path / "tmp"
    rescue_root.mkdir()
    monkeypatch.setattr(cli.tempfile, "gettempdir", lambda: str(rescue_root))
    real = cli.write_run

    def failing(meta, devices, rows, root):
        if Path(root) == target:
            raise OSError(30, "Read-only file system")
        return real(meta, devices, rows, root)

    monkeypatch.setattr(cli, "write_run", failing)
    old = os.umask(0o022)
    try:
        r = runner.invoke(cli.app, [*SMALL, "--results-dir", str(target), "--json", str(tmp_path / "o.json")])
    finally:
        os.umask(old)
    assert r.exit_code == 1, (r.stdout, r.stderr)
    assert "could not write the run files" in r.stderr and "saved to" in r.stderr
    saved = list(rescue_root.rglob("run-*.json"))
    n = sum(c.dtype == "fp16" for c in SPECS["vector_add"].test_cases)  # the run's items
    assert len(saved) == 1 and len(res.load(saved[0].parent.parent)) == n
    # item 3: mode 0644 under umask 022 (not mkstemp's 0600)
    assert stat.S_IMODE((tmp_path / "o.json").stat().st_mode) == 0o644
    assert stat.S_IMODE(saved[0].stat().st_mode) == 0o644
    out = r.stdout.splitlines()
    # item 11: one line per finished item when the output is not a terminal
    progress = [ln for ln in out if ln.startswith("[") and f"/{n} " in ln.split("]")[0]]
    assert len(progress) == n and all(": ok" in ln for ln in progress)
    # item 9: the paths written, then one line of counts last
    assert f"wrote {saved[0]}" in out and f"wrote {tmp_path / 'o.json'}" in out
    assert out[-1].startswith(f"{n} ok · 0 failed · 0 error · 0 timeout · 0 unsupported · 0 compiled · "
                              "0 skipped")


# -- item 2: corrupt or foreign files are skipped with a warning naming each --------------------

def _run_doc(run_id: str, rows: list[dict]) -> dict:
    return {"schema_version": res.SCHEMA_VERSION, "devices": {},
            "run": {"id": run_id, "started_utc": "2026-01-01T00:00:00+00:00", "git_sha": "abc"},
            "results": rows}


ROW = {"device": "dev-a", "backend": "torch", "op": "vector_add", "variant": "eager", "case": "n=2^20",
       "size": "bench", "status": "ok", "message": "", "dtype": "fp32", "bytes": 12 << 20,
       "timing": {"median_s": 1e-3, "rse": 0.02, "converged": False, "n": 10}, "gbps": 12.6, "pct_sol": 50.0}


def test_load_skips_bad_files_with_one_warning_each(tmp_path):
    d = tmp_path / "dev-a"
    d.mkdir()
    res.atomic_write_json(d / "run-1-good.json", _run_doc("1-good", [ROW]))
    bad = {"run-2-trunc.json": '{"schema_version": 1, "run": {', "run-3-list.json": "[1, 2]",
           "run-4-future.json": json.dumps(_run_doc("4", [ROW]) | {"schema_version": 99}),
           "run-5-norows.json": '{"schema_version": 1}', "run-6-binary.json": b"\xff\xfe\x00"}
    for name, text in bad.items():
        (d / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.warns(UserWarning) as w:
        df = res.load(tmp_path)
    assert len(df) == 1 and df.loc[0, "run_id"] == "1-good"
    msgs = [str(x.message) for x in w]
    for name in bad:
        assert sum(name in m for m in msgs) == 1, msgs
    assert any("schema_version 99" in m for m in msgs)
    with pytest.warns(UserWarning):
        md = report.markdown("dev-a", root=tmp_path)  # the report does not crash either
    assert "| vector_add | n=2^20 | torch | eager | 1.000 ms* |" in md  # item 10 in the report too


# -- item 3: files honour the umask ---------------------------------------------------------------

@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_written_files_honour_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        res.atomic_write_json(tmp_path / "a.json", {"a": 1})
        res.write_csv(tmp_path / "b.csv", [ROW], {"id": "x"})
        p = sol.save_peaks("dev-a", {"measured": {}}, tmp_path)
    finally:
        os.umask(old)
    for f in (tmp_path / "a.json", tmp_path / "b.csv", p):
        assert stat.S_IMODE(f.stat().st_mode) == mode, f


def test_replacing_a_file_keeps_its_mode(tmp_path):
    f = tmp_path / "peaks.json"
    f.write_text("{}")
    f.chmod(0o644)
    old = os.umask(0o077)
    try:
        res.atomic_write_json(f, {"a": 1})
    finally:
        os.umask(old)
    assert stat.S_IMODE(f.stat().st_mode) == 0o644 and json.loads(f.read_text()) == {"a": 1}


# -- item 4: user runs and peaks stay out of the committed tree ----------------------------------

def test_user_results_default_to_an_ignored_folder():
    env = {k: v for k, v in os.environ.items() if k != "SOLBENCH_RESULTS"}
    out = subprocess.run([sys.executable, "-c", "from suite import results, sol; print(results.RESULTS_DIR);"
                          "print(sol.peaks_path('cpu-x'))"], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == [str(ROOT / "results-local"), str(ROOT / "results-local" / "cpu-x" / "peaks.json")]
    ignored = subprocess.run(["git", "check-ignore", "-q", "results-local/cpu-x/peaks.json"], cwd=ROOT)
    assert ignored.returncode == 0
    bench = ROOT.joinpath("Makefile").read_text().split("\nbench:")[1].split("\n\n")[0]
    assert "suite.cli peaks" in bench and "--results-dir" not in bench


def test_peaks_lookup_prefers_the_users_then_the_committed(tmp_path, monkeypatch):
    committed, local = tmp_path / "results", tmp_path / "results-local"
    sol.save_peaks("dev-a", {"who": "committed"}, committed)
    monkeypatch.setattr(res, "COMMITTED_DIR", committed)
    monkeypatch.setattr(res, "RESULTS_DIR", local)
    monkeypatch.setattr(sol, "PEAKS_FIRST", None)
    assert sol.load_peaks("dev-a")["who"] == "committed"
    path = sol.save_peaks("dev-a", {"who": "user"})  # default: the user's folder
    assert path == local / "dev-a" / "peaks.json"
    assert sol.load_peaks("dev-a")["who"] == "user"
    assert json.loads((committed / "dev-a" / "peaks.json").read_text()) == {"who": "committed"}
    monkeypatch.setattr(sol, "PEAKS_FIRST", committed)  # `--results-dir results`
    assert sol.load_peaks("dev-a")["who"] == "committed"


def test_loader_reads_committed_and_user_runs(tmp_path, monkeypatch):
    committed, local = tmp_path / "results", tmp_path / "results-local"
    res.atomic_write_json(committed / "dev-a" / "run-1.json", _run_doc("1", [ROW]))
    res.atomic_write_json(local / "dev-a" / "run-2.json", _run_doc("2", [ROW]))
    res.atomic_write_json(local / "dev-a" / "run-1.json", _run_doc("1", [ROW]))  # a copy: read once
    monkeypatch.setattr(res, "COMMITTED_DIR", committed)
    monkeypatch.setattr(res, "RESULTS_DIR", local)
    assert sorted(res.load().run_id) == ["1", "2"]


# -- items 5 and 6: input accepted that should not be --------------------------------------------

@pytest.mark.parametrize("args, expect", [
    (["--dtype", "float128"], "unknown dtype 'float128'; valid: " + ", ".join(DTYPES)),
    (["--op", "grayscale", "--dtype", "i32"], "no case of grayscale has dtype i32"),
    (["--timeout", "-1"], "--timeout -1.0: give a number of seconds > 0"),
    (["--timeout", "0"], "--timeout 0.0: give a number of seconds > 0"),
    (["--timeout", "nan"], "--timeout nan: give a number of seconds > 0"),
    (["--time-cap", "0"], "--time-cap 0.0: give a number of seconds > 0"),
    (["--device", ""], "--device '' names no device; valid: all, gpu, cpu"),
    (["--seed", "-1"], "--seed -1: give an integer in 0.."),
    (["--size", "huge"], "unknown size 'huge'; valid: test, bench"),
])
def test_bad_values_refused_up_front(runner, no_pool, tmp_path, args, expect):
    r = runner.invoke(cli.app, ["run", "--backend", "torch", *args, "--results-dir", str(tmp_path)])
    assert expect in _one_error_line(r)
    assert not list(tmp_path.iterdir())


def test_nothing_to_run_writes_no_file(runner, tmp_path, monkeypatch):
    """A selection with nothing runnable here (e.g. --device gpu on a CPU host) shows the reasons
    and writes no run file of skipped rows (which would show up as the latest results)."""
    from suite.runner import Plan

    note = {"op": "vector_add", "backend": "torch", "variant": "eager", "case": "-", "size": "test",
            "device": "gpu", "status": "skipped", "message": "no usable torch device (none matches)"}
    monkeypatch.setattr(cli, "Pool", lambda *a, **k: type("P", (), {"close": lambda self: None})())
    monkeypatch.setattr(cli, "plan", lambda *a, **k: Plan(notes=[note]))
    r = runner.invoke(cli.app, [*SMALL, "--device", "gpu", "--results-dir", str(tmp_path)])
    assert "no kernel of the selection can run here" in _one_error_line(r)
    assert "no usable torch device" in r.stdout and not list(tmp_path.iterdir())


def test_list_shows_dtypes(runner):
    r = runner.invoke(cli.app, ["list"])
    assert r.exit_code == 0, r.stderr
    assert "op [dtypes]" in r.stdout
    for name in {e.op for e in REGISTRY.values()}:
        spec = SPECS[name]
        dts = dict.fromkeys(c.dtype for c in [*spec.test_cases, *[c for cs in spec.bench_cases.values()
                                                                    for c in cs]])
        assert f"{name} [{','.join(dts)}]" in r.stdout


@pytest.mark.parametrize("opt, expect", [
    ("--solbench-op=nope", "unknown op 'nope'; valid: "),
    ("--solbench-backend=metal", "unknown backend 'metal'; valid: "),
    ("--solbench-timeout=0", "--solbench-timeout 0.0: give a number of seconds > 0"),
    ("--solbench-seed=-1", "--solbench-seed -1: give an integer"),
    ("--solbench-device=", "--solbench-device '' names no device"),
    ("--solbench-device=nope", "unknown device 'nope'; valid: all, gpu, cpu"),
])
def test_bad_pytest_options_are_usage_errors(opt, expect):
    """Exit code 2 (as the CLI's bad input), one line, no collection traceback."""
    r = subprocess.run([sys.executable, "-m", "pytest", "tests/test_kernels.py", opt, "-q",
                        "-p", "no:randomly"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"solbench: {expect}" in r.stderr and "Traceback" not in r.stdout + r.stderr


# -- items 8-10 and 13: the run table --------------------------------------------------------------

def _timed(backend, variant, case, t, gbps, pct, **kw) -> dict:
    return {"device": "cpu-x", "op": kw.pop("op", "vector_add"), "backend": backend, "variant": variant,
            "case": case, "status": "ok", "message": "", "mode": "run", "bound": kw.pop("bound", "memory"),
            "timing": {"median_s": t, "converged": kw.pop("converged", True), "rse": kw.pop("rse", 0.001)},
            "gbps": gbps, "pct_sol": pct, "check": {"max_abs_err": 0.0}, **kw}


SAMPLE = [
    _timed("opencl", "vec4", "n=1025", 2.0e-6, 6.1, 30.0),
    _timed("torch", "eager", "n=1025", 4.0e-6, 3.1, 15.0),
    _timed("opencl", "vec4", "n=2", 1.5e-6, 0.01, 0.1, converged=False, rse=0.024),
    _timed("torch", "eager", "n=2", 1.2e-6, 0.02, 0.1),
    _timed("opencl", "decoupled_lookback", "n=3", 1.8e-6, 0.02, 0.1),
    {"device": "cpu-x", "op": "vector_add", "backend": "webgpu", "variant": "naive", "case": "n=1025,fp16",
     "status": "unsupported", "message": "device lacks shader-f16: WGSL f16 needs the shader-f16 feature, "
     "which lavapipe does not expose on this Mesa version; the kernel is not run"},
    {"device": "cpu-x", "op": "vector_add", "backend": "cuda", "variant": "vec4", "case": "n=1025",
     "status": "compiled", "message": "compiled only (no device to run on)"},
    {"device": "cpu-x", "op": "vector_add", "backend": "cuda", "variant": "naive", "case": "n=2",
     "status": "compiled", "message": "compiled only (no device to run on)"},
    _timed("torch", "mm", "512x512x512", 2.0e-3, 0.8, 40.0, op="matmul", bound="compute", tflops=0.134),
    # a read-dominated op: % of the read-only ceiling beside % of copy's (read 1.25× copy here)
    _timed("opencl", "coarsened", "n=2^24", 4.0e-3, 16.8, 83.2, op="reduction", pct_sol_read=66.6),
    _timed("torch", "sum", "n=2^24", 5.0e-3, 13.4, 66.6, op="reduction", pct_sol_read=53.3),
]


def _render(rows, width=80) -> str:
    c = Console(file=io.StringIO(), width=width, color_system=None)
    c.print(report.run_tables(rows, "solbench run test"))
    return c.file.getvalue()


def test_run_file_is_complete_before_the_workers_stop(runner, tmp_path, monkeypatch):
    """Stopping the workers can take seconds (a driver's teardown): the finished run's file is
    written before they are asked to exit, so a time limit landing then (the device sweeps'
    `timeout`) cannot leave a complete run marked partial (seen on the H200, run 8df286)."""
    from suite import worker

    seen = []
    close = worker.Pool.close

    def spy(self):
        seen.append([json.loads(f.read_text())["run"] for f in tmp_path.rglob("run-*.json")])
        close(self)

    monkeypatch.setattr(worker.Pool, "close", spy)
    r = runner.invoke(cli.app, ["run", "--backend", "torch", "--op", "vector_add", "--size", "test",
                                     "--check-only", "--results-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output[-2000:]
    assert len(seen) == 1 and len(seen[0]) == 1, seen
    assert "partial" not in seen[0][0] and "interrupted" not in seen[0][0], seen[0][0]


def test_run_table_golden_80_columns():
    text = _render(SAMPLE)
    golden = GOLDEN / "run_table_80.txt"
    if os.environ.get("SOLBENCH_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()
    lines = text.splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in text
    va_lines = text.split("vector_add on")[1].splitlines()
    cases = [ln.split()[2] for ln in va_lines if ln.startswith(("opencl ", "torch ", "cuda ", "webgpu "))]
    assert cases == ["n=2", "n=2", "n=2", "n=3", "n=1025", "n=1025", "n=1025", "n=1025,fp16"]
    va, mm = text.split("vector_add on")[1], text.split("reduction on")[0]
    assert "TFLOP/s" not in va and "GB/s" in va           # memory-bound op: its bound's unit
    assert "TFLOP/s" in mm and "GB/s" not in mm
    assert "×" in va and "1.00" in va and "2.00" in va    # × torch (opencl 2 µs vs torch 4 µs)
    assert " 1.5* " in text and "* timing did not converge" in text
    assert "compiled compiled" not in text and "compiled: compiled" not in text
    assert "which lavapipe does not expose on this Mesa version; the kernel is not run" in " ".join(lines)
    # % read only where a row has it (reduction), not for vector_add or matmul
    red = text.split("reduction on")[1].split("vector_add on")[0]
    assert "read" in red.splitlines()[2] and " 66.6 " in red and " 53.3 " in red
    assert "read" not in "".join(va.splitlines()[:3]) and "read" not in mm
    assert "% read: of the read-only (dot) ceiling" in text
    assert "× torch: speed-up over the fastest torch variant of the case" in text


def test_times_torch_is_against_the_fastest_torch_variant():
    """The strongest peer: with several torch variants of a case, × torch divides by the fastest."""
    rows = [_timed("opencl", "vec4", "n=9", 2.0e-6, 1, 1), _timed("torch", "eager", "n=9", 4.0e-6, 1, 1),
            _timed("torch", "compiled", "n=9", 3.0e-6, 1, 1), _timed("torch", "eager", "n=8", 1.0e-6, 1, 1)]
    lines = {tuple(ln.split()[:2]): ln.split() for ln in _render(rows).splitlines()
             if ln.startswith(("opencl ", "torch "))}
    assert lines[("opencl", "vec4")][-2] == "1.50" and lines[("torch", "eager")][-2] == "0.75"
    assert lines[("torch", "compiled")][-2] == "1.00"


def test_summary_counts_every_status():
    assert report.summary_line(SAMPLE) == ("8 ok · 0 failed · 0 error · 0 timeout · 1 unsupported · "
                                           "2 compiled · 0 skipped")


def test_natural_case_order():
    names = ["n=1025", "n=2^20", "n=3", "n=2", "31x33", "7x13", "n=2,neg"]
    assert sorted(names, key=report.natural_key) == ["7x13", "31x33", "n=2", "n=2,neg", "n=3", "n=1025",
                                                     "n=2^20"]


def test_help_shows_values_not_bool(runner):
    r = runner.invoke(cli.app, ["run", "--help"], terminal_width=120)
    assert r.exit_code == 0 and "<bool>" not in r.stdout
    assert "[test|bench]" in r.stdout and all(d in r.stdout for d in DTYPES)
    top = runner.invoke(cli.app, ["--help"])
    assert "<bool>" not in top.stdout and "--version" in top.stdout


def test_doctor_says_not_used_for_a_duplicate_adapter():
    dup = {"reason": "OpenGL adapter; the same device is used through Vulkan (webgpu device 0)"}
    assert cli.device_status(dup).startswith("[dim]not used[/dim]")
    assert cli.device_status({"reason": "no ICD"}).startswith("[red]unusable")
    assert cli.device_status({"reason": None}) == "[green]usable[/green]"


# -- items 11 and 12: progress and version -----------------------------------------------------

def test_progress_bar_has_eta_and_a_total(monkeypatch):
    from rich.progress import TimeRemainingColumn

    monkeypatch.setattr(cli, "console", Console(file=io.StringIO(), force_terminal=True))
    with cli._Reporter("peaks") as rep:
        assert any(isinstance(c, TimeRemainingColumn) for c in rep.prog.columns)
        rep.start(5)
        rep.step("x")
        assert rep.prog.tasks[0].total == 5 and rep.prog.tasks[0].completed == 1


def test_peaks_progress_lines_have_a_total(runner, tmp_path, monkeypatch):
    import suite.peaks

    def fake(pool, device, timeout, on_row, root, on_start, **kw):
        on_start(2)
        on_row("vector_add/opencl/vec4/n=2^25@cpu-x", {"status": "ok"})
        on_row("torch copy + GEMM @cpu-x", {"copy": {}})
        return {}

    monkeypatch.setattr(suite.peaks, "measure_peaks", fake)
    monkeypatch.setattr(cli, "Pool", lambda *a, **k: type("P", (), {"close": lambda self: None})())
    r = runner.invoke(cli.app, ["peaks", "--results-dir", str(tmp_path)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("[1/2") and "\n[2/2" in r.stdout


def test_version(runner):
    r = runner.invoke(cli.app, ["--version"])
    assert r.exit_code == 0 and r.stdout.startswith("solbench 0.")
    w = subprocess.run([str(ROOT / "solbench"), "--version"], capture_output=True, text=True, timeout=60)
    assert w.returncode == 0 and w.stdout.startswith("solbench ")
    assert "./solbench" in ROOT.joinpath("README.md").read_text()


# -- item 14: the summary after pytest-benchmark's table ----------------------------------------

def test_pytest_summary_section():
    from suite import pytest_plugin

    lines: list[str] = []

    class TR:
        class _tw:
            fullwidth = 80

        def ensure_newline(self):
            lines.append("<newline>")

        def section(self, title, **kw):
            lines.append(f"== {title}")

        def write_line(self, line, **kw):
            lines.append(line)

    cfg = type("C", (), {"_sb_rows": SAMPLE[:4], "_sb_written": [Path("/x/run-1.json")]})()
    pytest_plugin.pytest_terminal_summary(TR(), 0, cfg)
    assert lines[:2] == ["<newline>", "== solbench"]
    text = "\n".join(lines)
    assert "GB/s" in text and "SOL" in text and "torch" in text
    assert lines[-2].startswith("solbench: 4 ok") and lines[-1] == "solbench: wrote /x/run-1.json"


# -- item 15: the CuPy wheel from the driver's CUDA version --------------------------------------

def _smi(version: str) -> str:
    return ("+-----------------------------------------------------------------------------+\n"
            f"| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: {version}     |\n")


@pytest.mark.parametrize("version, cupy, nvrtc", [
    ("13.0", "cupy-cuda13x", "nvidia-cuda-nvrtc>=13.0,<13.1"),
    ("12.4", "cupy-cuda12x", "nvidia-cuda-nvrtc-cu12>=12.0,<12.5"),
    ("12.9", "cupy-cuda12x", "nvidia-cuda-nvrtc-cu12>=12.0,<12.10"),
    ("14.1", "cupy-cuda13x", "nvidia-cuda-nvrtc>=13.0"),
    ("11.8", "cupy-cuda11x", "nvidia-cuda-nvrtc-cu11>=11.0,<11.9"),
])
def test_cupy_wheel_follows_the_driver(version, cupy, nvrtc):
    c = cudawheel.choose(_smi(version))
    assert c.cupy == cupy and nvrtc in c.requirements and c.cuda_version == version
    assert f"CUDA {version}" in c.reason
    line = cli.cuda_wheel_line(_smi(version))
    assert f"CuPy wheel: {cupy}, because the driver supports CUDA {version}" in line


@pytest.mark.parametrize("out, why", [(None, "no NVIDIA driver"),
                                      ("NVIDIA-SMI has failed", "no \"CUDA Version\""),
                                      (_smi("10.2"), "update the driver")])
def test_no_cupy_wheel_without_a_fitting_driver(out, why):
    c = cudawheel.choose(out)
    assert c.requirements == () and c.cupy is None and why in c.reason
    assert cli.cuda_wheel_line(out).startswith("CuPy wheel: none")


def test_setup_uses_the_choice_with_a_fake_nvidia_smi(tmp_path):
    """What setup.sh runs: the system Python on suite/cudawheel.py, with nvidia-smi on PATH."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\ncat <<'EOF'\n{_smi('12.2')}EOF\n")
    smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    r = subprocess.run(["python3", "suite/cudawheel.py"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0
    assert r.stdout.split() == ["cupy-cuda12x>=13", "nvidia-cuda-nvrtc-cu12>=12.0,<12.3",
                                "cuda-bindings>=12,<13"]
    assert "the driver supports CUDA 12.2" in r.stderr
    assert "suite/cudawheel.py" in ROOT.joinpath("scripts/setup.sh").read_text()


@pytest.mark.parametrize("args,why", [(["--check-only", "--hot"], "--hot has no effect"),
                                      (["--check-only", "--time-cap", "1"], "--time-cap has no effect")])
def test_check_only_refuses_timing_options(runner, no_pool, args, why):
    assert why in _one_error_line(runner.invoke(cli.app, [*SMALL, *args]))


def test_peaks_repeats_bounded(runner, no_pool):
    line = _one_error_line(runner.invoke(cli.app, ["peaks", "--repeats", "99999999999999999999"]))
    assert "--repeats" in line and "1..100" in line


def test_two_outputs_may_not_be_one_file(runner, no_pool, tmp_path):
    f = tmp_path / "same.out"
    line = _one_error_line(runner.invoke(cli.app, [*SMALL, "--no-save", "--json", str(f), "--csv", str(f)]))
    assert "--csv" in line and "the same file as --json" in line and not f.exists()


@pytest.mark.parametrize("args", [
    ["run", "--backend", "torch", "--results-dir", ""],
    ["peaks", "--results-dir", ""],
    ["nightly", "--reports-dir", ""],
    ["nightly", "--dashboard", " "],
    ["dashboard", "--out", ""],
    ["dashboard", "--results-dir", ""],
    ["compare", "a", "b", "--thresholds", ""],
])
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(runner, no_pool, tmp_path, monkeypatch,
                                                                    args):
    from suite import nightly

    def no_child(*a, **k):
        raise AssertionError("a solbench child (peaks or run) was started")

    monkeypatch.setattr(nightly, "_solbench", no_child)
    monkeypatch.setattr(nightly, "current_devices", no_child)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(cli.app, args)
    assert r.exit_code == 2 and "the path is empty" in r.output + r.stderr
    assert not list(tmp_path.iterdir())  # nothing written where the empty path would have pointed


@pytest.mark.parametrize("args, expect", [
    (["--op", "vector_add", "--variant", "nope"],
     "unknown variant 'nope' for vector_add; valid: compiled, eager, grid_stride, large_block, naive, "
     "vec4, vec4_unroll"),
    (["--op", "vector_add", "--backend", "webgpu", "--variant", "cupy"],
     "unknown variant 'cupy' for vector_add on webgpu; valid: grid_stride, naive, vec4 "
     "(cupy is a variant of reduction/cuda, scan/cuda)"),
])
def test_an_unknown_variant_lists_the_selections_variants(runner, no_pool, args, expect):
    assert _one_error_line(runner.invoke(cli.app, ["run", *args])) == f"error: {expect}"


@pytest.mark.parametrize("args, expect", [
    (["--backend", "cuda", "--arch", "sm_xx"], "--arch 'sm_xx': give a CUDA target such as sm_80"),
    (["--backend", "opencl", "--case", "nope"], "vector_add: unknown case 'nope'; valid: n=1, n=1,fp16,"),
    (["--backend", "opencl", "--variant", "cupy"], "unknown variant 'cupy' for vector_add on opencl"),
])
def test_inspect_refuses_bad_names(runner, args, expect):
    assert expect in _one_error_line(runner.invoke(cli.app, ["inspect", "vector_add", *args]))
