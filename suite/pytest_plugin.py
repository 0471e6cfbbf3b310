"""pytest integration.

* ``pytest``: correctness of every registered (op, backend, variant) on the test cases, on every
  available device, each kernel in its backend's worker process; absent backends/devices skip
  with the reason — unless ``SOLBENCH_REQUIRE`` names them (a comma list; CI names every backend
  a CPU-only machine has): then pytest stops at once with exit code 1 and the reason, so a broken
  install or a backend that no longer starts cannot pass as a run of skips.
* ``pytest --benchmark-only`` (or ``--benchmark``, which this plugin adds as the same switch):
  the bench cases through pytest-benchmark's fixture, fed with the device-timed samples of the
  one timing protocol; GB/s, TFLOP/s and % SOL go to ``extra_info``, GPU identity to
  ``machine_info``, and the rows are also written as a run file to the results folder
  (``results-local/`` unless ``SOLBENCH_RESULTS`` says otherwise).
* ``pytest -n N`` (pytest-xdist): one worker per device. Every xdist worker collects the same items
  (each probes the same host, so ids and order agree, as xdist requires; the id ends in
  ``@<device slug>``), and the plugin's scheduler (``DeviceScheduling``, used for xdist's default
  ``--dist load``) hands all of one device's items to one xdist worker as a single unit. So each
  item runs exactly once, one device's items never run concurrently (clean timings), different
  devices run in parallel, and inside the xdist worker each (backend, device) runs in a process
  pinned to that device (CUDA_VISIBLE_DEVICES=<UUID> for CUDA, Triton, torch; see
  ``suite.worker``). Why not the alternatives: skipping items "not of this worker's GPU" breaks
  exactly-once (xdist gives each id to one worker only), and ids naming a logical "gpu" would file
  one card's results under whichever card ran them. xdist's own ``--dist loadgroup`` would do, but
  its node-id suffix is lost on pytest 9. An explicit ``--dist`` is the user's choice and stands.
  On a host without GPUs all CPU-side items are one device (one worker); ``SOLBENCH_SPLIT_CPU=1``
  splits the CPU per API.
"""

from __future__ import annotations

import io
import math
import os
import re

import pytest
from rich.console import Console

from suite import report
from suite import results as res
from suite.registry import select
from suite.runner import device_peaks, new_run, plan, rate_row, write_run
from suite.worker import BackendUnavailable, Pool

#: environment variable: backends that must be found with a usable device (comma list)
REQUIRE_ENV = "SOLBENCH_REQUIRE"

OK = ("ok", "compiled")
SKIP = ("skipped", "unsupported")


def pytest_addoption(parser):
    g = parser.getgroup("solbench")
    g.addoption("--benchmark", action="store_true", dest="sb_benchmark",
                help="run only the benchmarks (same as --benchmark-only; composes with --benchmark-*)")
    g.addoption("--solbench-device", default=None, help="device slug, or all|gpu|cpu")
    g.addoption("--solbench-backend", action="append", default=None, help="only this backend (repeatable)")
    g.addoption("--solbench-op", action="append", default=None, help="only this op (repeatable)")
    g.addoption("--solbench-timeout", type=float, default=300.0, help="seconds per kernel")
    g.addoption("--solbench-time-cap", type=float, default=None,
                help="seconds of timed samples per benchmark (default 5)")
    g.addoption("--solbench-seed", type=int, default=None, help="override the cases' seeds")
    g.addoption("--solbench-no-save", action="store_true",
                help="do not write benchmark rows to the results folder (results-local/, $SOLBENCH_RESULTS)")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if config.getoption("sb_benchmark", False):
        config.option.benchmark_only = True
    config._sb_pool = Pool()
    config._sb_rows = []
    config._sb_devices = {}
    config._sb_written = []
    config.addinivalue_line("markers", "solbench: a solbench kernel check or benchmark")
    try:
        _validate_options(config)
    except pytest.UsageError as e:  # exit 2 like the CLI's own bad input (pytest's usage code is 4)
        pytest.exit(str(e), returncode=2)  # one line on stderr: "Exit: solbench: ..."
    if not hasattr(config, "workerinput"):  # xdist workers: their controller checked
        _require_backends(config)


def _require_backends(config) -> None:
    """Stop with exit code 1 when a backend named in ``SOLBENCH_REQUIRE`` is not installed, does
    not start, or has no usable device (each reason listed)."""
    from backends import BACKENDS

    names = [n.strip() for n in os.environ.get(REQUIRE_ENV, "").split(",") if n.strip()]
    missing = []
    for name in names:
        if name not in BACKENDS:
            missing.append(f"{name}: not a backend (valid: {', '.join(BACKENDS)})")
            continue
        try:
            devices = config._sb_pool[name].probe()
        except BackendUnavailable as e:
            missing.append(f"{name}: {e}")
            continue
        if not any(d["reason"] is None for d in devices):
            why = "; ".join(d["reason"] for d in devices) or "none found"
            missing.append(f"{name}: no usable device ({why})")
    if missing:
        config._sb_pool.close()
        pytest.exit(f"solbench: required backends ({REQUIRE_ENV}) missing: {' | '.join(missing)}",
                    returncode=1)


def _validate_options(config) -> None:
    """Bad ``--solbench-*`` values stop pytest at once with one line naming the valid ones
    (exit code 2, as the CLI's), not a traceback at collection."""
    o = config.getoption
    if o("solbench_op") or o("solbench_backend"):
        try:
            select(o("solbench_op"), o("solbench_backend"))
        except ValueError as e:
            raise pytest.UsageError(f"solbench: {e}") from None
    t = o("solbench_timeout")
    if not math.isfinite(t) or t <= 0:
        raise pytest.UsageError(f"solbench: --solbench-timeout {t}: give a number of seconds > 0 (finite)")
    cap = o("solbench_time_cap")
    if cap is not None and (not math.isfinite(cap) or cap <= 0):
        raise pytest.UsageError(f"solbench: --solbench-time-cap {cap}: give a number of seconds > 0 (finite)")
    seed = o("solbench_seed")
    if seed is not None and not 0 <= seed <= 2**63 - 1:
        raise pytest.UsageError(f"solbench: --solbench-seed {seed}: give an integer in 0..{2**63 - 1}")
    dev = o("solbench_device")
    if dev is not None:
        if not dev.strip():
            raise pytest.UsageError("solbench: --solbench-device '' names no device; valid: all, gpu, cpu "
                                    "or a device slug (see `solbench doctor`)")
        try:  # probes the backends (as collection would); unknown names raise with the valid ones
            plan(config._sb_pool, ops=o("solbench_op"), backends=o("solbench_backend"), device=dev)
        except ValueError as e:
            raise pytest.UsageError(f"solbench: {e}") from None
    if _benchmarking(config) and not o("solbench_no_save"):
        why = res.check_dir(res.RESULTS_DIR)
        if why:
            raise pytest.UsageError(f"solbench: cannot save benchmark rows under {res.RESULTS_DIR}: {why} "
                                    "(set SOLBENCH_RESULTS, or pass --solbench-no-save)")


#: the device slug at the end of a kernel item's id: test_kernel[op/backend/variant/case@slug]
DEVICE_ID = re.compile(r"\[[^\[\]]*/[^\[\]]*@([^\[\]@/]+)\]$")


def _dist_given(config) -> bool:
    args = [*config.invocation_params.args, *os.environ.get("PYTEST_ADDOPTS", "").split()]
    return any(str(a) == "-d" or str(a).startswith("--dist") for a in args)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``pytest -n N``: one device's items form one unit of work, i.e. run on one xdist worker,
    in collection order; every other test is scheduled alone, as with ``--dist load``."""
    if config.getvalue("dist") != "load" or _dist_given(config):
        return None
    from xdist.scheduler import LoadScopeScheduling

    class DeviceScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            m = DEVICE_ID.search(nodeid)
            return f"device {m.group(1)}" if m else nodeid

    return DeviceScheduling(config, log)


def pytest_unconfigure(config):
    pool = getattr(config, "_sb_pool", None)
    if pool is not None:
        pool.close()


def _benchmarking(config) -> bool:
    return bool(config.getoption("benchmark_only", False))


def _params(config, size: str):
    o = config.getoption
    p = plan(config._sb_pool, ops=o("solbench_op"), backends=o("solbench_backend"),
             device=o("solbench_device"), size=size, check_only=size == "test", seed=o("solbench_seed"),
             timing={"time_cap_s": o("solbench_time_cap")} if o("solbench_time_cap") is not None else None)
    config._sb_devices.update(p.devices)
    out = [pytest.param(it, id=it.id) for it in p.items]
    for n in p.notes:
        out.append(pytest.param(None, id=f"{n['op']}/{n['backend']}/{n['variant']}@{n['device']}",
                                marks=pytest.mark.skip(reason=n["message"])))
    return out


def pytest_generate_tests(metafunc):
    cfg = metafunc.config
    if "sb_item" in metafunc.fixturenames:
        metafunc.parametrize("sb_item", _params(cfg, "test"))
    if "sb_bench_item" in metafunc.fixturenames:
        if _benchmarking(cfg):
            metafunc.parametrize("sb_bench_item", _params(cfg, "bench"))
        else:
            metafunc.parametrize("sb_bench_item", [pytest.param(
                None, id="bench", marks=pytest.mark.skip(reason="bench sizes run with --benchmark-only"))])


def run_item(config, item):
    """Run one planned item in its worker; return the row (SOL figures derived)."""
    row = config._sb_pool.run(item, config.getoption("solbench_timeout"))
    rate_row(row, device_peaks(item.device_slug, config._sb_devices.get(item.device_slug)))
    return row


def outcome(row) -> None:
    """Turn a row into a pass, a skip with its reason, or a failure with the mismatch report."""
    if row["status"] in SKIP:
        pytest.skip(f"{row['status']}: {row['message']}")
    if row["status"] not in OK:
        mism = (row.get("check") or {}).get("mismatches") or []
        pytest.fail(f"{row['status']}: {row['message']}" + "".join(f"\n  {m}" for m in mism), pytrace=False)


class _Replay:
    """A pytest-benchmark timer that replays device-timed samples (start, start + sample, ...)."""

    def __init__(self, samples):
        self.samples, self.t, self.k = list(samples), 0.0, 0

    def __call__(self) -> float:
        if self.k % 2 == 1:
            self.t += self.samples[(self.k // 2) % len(self.samples)]
        self.k += 1
        return self.t


def benchmark_row(config, benchmark, item) -> dict:
    row = run_item(config, item)
    config._sb_rows.append(row)
    outcome(row)
    timing = row.get("timing") or {}
    samples = timing.get("samples") or []
    if not samples:
        pytest.skip(f"{row['status']}: nothing timed ({row.get('message', '')})")
    benchmark.extra_info.update({
        k: row.get(k) for k in ("device", "backend", "op", "variant", "case", "dtype", "mode", "bytes",
                                "flops", "gbps", "tflops", "pct_sol", "peak_source", "bound")})
    benchmark.extra_info.update(timer=timing.get("method"), cold=timing.get("cold"),
                                median_s=timing.get("median_s"), rse=timing.get("rse"),
                                clocks=row.get("clocks"))
    benchmark._timer = _Replay(samples)
    benchmark.pedantic(lambda: None, rounds=len(samples), iterations=1, warmup_rounds=0)
    return row


def pytest_benchmark_update_machine_info(config, machine_info):
    machine_info["solbench_devices"] = getattr(config, "_sb_devices", {})


def pytest_sessionfinish(session, exitstatus):
    """Write the benchmark rows as a run file (reported in the terminal summary)."""
    cfg = session.config
    rows = getattr(cfg, "_sb_rows", [])
    if rows and not cfg.getoption("solbench_no_save"):
        try:
            cfg._sb_written = write_run(new_run(), cfg._sb_devices, rows)
        except OSError as e:
            cfg._sb_write_error = f"{e}"


def render_text(renderable, width: int) -> list[str]:
    """A rich renderable as plain lines of at most ``width`` characters."""
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False).print(renderable)
    return buf.getvalue().rstrip("\n").splitlines()


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """After pytest-benchmark's time table: solbench's own (GB/s or TFLOP/s, % SOL, × torch per
    case, as the CLI prints it), the counts, and the run file written, each on its own line."""
    rows = getattr(config, "_sb_rows", [])
    tr = terminalreporter
    if not rows:
        return
    tr.ensure_newline()
    tr.section("solbench", sep="-", bold=True)
    for line in render_text(report.run_tables(rows, "solbench benchmarks (device-timed medians)"),
                            min(tr._tw.fullwidth, 120)):
        tr.write_line(line)
    tr.write_line(f"solbench: {report.summary_line(rows)}")
    for path in getattr(config, "_sb_written", []):
        tr.write_line(f"solbench: wrote {path}")
    if getattr(config, "_sb_write_error", None):
        tr.write_line(f"solbench: could not write the run file: {config._sb_write_error}", red=True)
