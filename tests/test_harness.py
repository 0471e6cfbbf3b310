"""The harness itself: the checker rejects known-wrong kernels, failures become rows, bad names
get clear errors, files are written atomically."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from suite import registry
from suite.check import compare
from suite.results import atomic_write_json, load
from suite.runner import execute, plan, write_run
from suite.spec import Tolerance
from suite.worker import Pool
from tests.wrong import registered

ROOT = Path(__file__).resolve().parent.parent
EXTRA = {"SOLBENCH_EXTRA_KERNELS": "tests.wrong.kernels"}


@pytest.fixture(scope="module")
def pool():
    """Workers that load the known-wrong kernels, which are registered in this process only for
    this module's tests (registered at import they would join every other test's plan)."""
    with registered("tests.wrong.kernels"):
        p = Pool(env=EXTRA)
        yield p
        p.close()


def _rows(pool, **kw):
    p = plan(pool, size="test", check_only=True, **kw)
    return execute(pool, p.items, timeout=kw.pop("timeout", 120))


# -- checker ------------------------------------------------------------------------------------

def test_nan_never_passes():
    ref = np.ones(10)
    out = np.ones(10, dtype=np.float32)
    out[3] = np.nan
    assert not compare(out, ref, Tolerance(1e9, 1e9, "loose")).ok


def test_inf_never_passes():
    out = np.ones(4, dtype=np.float32)
    out[0] = np.inf
    assert not compare(out, np.ones(4), Tolerance(1e9, 1e9, "loose")).ok


def test_mismatch_report_names_first_index():
    out = np.arange(6, dtype=np.float32).reshape(2, 3)
    out[1, 2] += 1
    r = compare(out, np.arange(6.0).reshape(2, 3), Tolerance.exact())
    assert not r.ok and r.n_bad == 1 and r.mismatches[0]["index"] == (1, 2)


def test_compare_in_pieces_and_passes_counts_like_one_pass():
    """compare works in pieces (one per core) of cache-sized passes (suite.check.SUB): a failure in
    any pass of any piece counts, the first mismatches come in index order across passes, a NaN
    or Inf in a late pass still fails the whole, and an overflowed reference accepts exactly its
    own ±inf; the error figures are those of the whole array."""
    from suite.check import CHUNK, SUB

    n = CHUNK + 3 * SUB + 5
    ref = np.linspace(1.0, 2.0, n)
    out = ref.astype(np.float32)
    tol = Tolerance(1e-6, 1e-6, "fp32 rounding")
    assert compare(out, ref, tol).ok
    bad = [SUB - 1, SUB + 2, CHUNK + 1, CHUNK + 2 * SUB + 7, n - 1]
    wrong = out.copy()
    wrong[bad] += 1.0
    r = compare(wrong, ref, tol, show=3)
    assert not r.ok and r.n_bad == len(bad) and [m["index"][0] for m in r.mismatches] == bad[:3]
    assert r.max_abs_err == pytest.approx(1.0, rel=1e-6)
    late = out.copy()
    late[n - 2] = np.nan
    assert not compare(late, ref, Tolerance(1e9, 1e9, "loose")).ok
    ref_inf, out_inf = ref.copy(), out.copy()
    ref_inf[CHUNK + SUB], out_inf[CHUNK + SUB] = np.inf, np.float32(np.inf)
    assert compare(out_inf, ref_inf, tol).ok
    out_inf[CHUNK + SUB] = np.float32(-np.inf)
    assert compare(out_inf, ref_inf, tol).n_bad == 1


def test_exact_integers():
    assert compare(np.array([1, 2, 3], np.int32), np.array([1, 2, 3]), Tolerance.exact()).ok
    assert not compare(np.array([1, 2, 4], np.int32), np.array([1, 2, 3]), Tolerance.exact()).ok


# -- known-wrong kernels must be rejected -------------------------------------------------------

@pytest.mark.parametrize("variant", ["wrong_noop", "wrong_fp16_accumulate", "wrong_nan"])
def test_wrong_torch_kernels_rejected(pool, variant):
    rows = _rows(pool, ops=["vector_add"], backends=["torch"], variants=[variant], device="all")
    assert rows and all(r["status"] == "failed" for r in rows), [(r["case"], r["status"]) for r in rows]


@pytest.mark.parametrize("variant", ["wrong_skip_tail", "wrong_99_percent", "wrong_oob_read"])
def test_wrong_opencl_kernels_rejected(pool, variant):
    rows = _rows(pool, ops=["vector_add"], backends=["opencl"], variants=[variant], device="all")
    if not rows:
        pytest.skip("no OpenCL device")
    by_case = {r["case"]: r["status"] for r in rows}
    # every case fails its check (not an error: the kernels compile and run) unless the defect
    # cannot show: wrong_99_percent below 100 elements (skip_tail on a whole number of blocks:
    # no such case here)
    shows = {c: s for c, s in by_case.items()
             if not (variant == "wrong_99_percent" and int(c.split("=")[1].split(",")[0]) < 100)}
    assert shows and all(s == "failed" for s in shows.values()), by_case


@pytest.mark.parametrize("variant", ["wrong_truncate", "wrong_fixed_point"])
def test_grayscale_rounding_rule_enforced(pool, variant):
    rows = _rows(pool, ops=["grayscale"], backends=["torch"], variants=[variant], device="all")
    big = [r for r in rows if r["case"] in ("257x255", "480x641")]
    assert big and all(r["status"] == "failed" for r in big)


# -- failures become rows, the run goes on ------------------------------------------------------

def test_inputs_shared_only_by_cases_several_backends_check(pool):
    """refcache stores a case's large inputs for the other workers only where there are some."""
    both = plan(pool, ops=["vector_add"], backends=["torch", "opencl"], size="test", check_only=True,
                cases=["n=5"], variants=["eager", "naive"])
    alone = plan(pool, ops=["vector_add"], backends=["torch"], size="test", check_only=True, cases=["n=5"],
                 variants=["eager"])
    assert {it.backend for it in both.items} == {"torch", "opencl"}
    assert all(it.share_inputs for it in both.items) and not any(it.share_inputs for it in alone.items)


def test_crash_hang_and_compile_error_become_rows(pool):
    p = plan(pool, ops=["vector_add"], backends=["torch"], size="test", check_only=True, device="all",
             variants=["crash_segfault", "broken_compile", "crash_hang", "eager"], cases=["n=5"])
    rows = {r["variant"]: r for r in execute(pool, p.items, timeout=10)}
    assert rows["crash_segfault"]["status"] == "error" and "SIGSEGV" in rows["crash_segfault"]["message"]
    assert rows["broken_compile"]["status"] == "error" and "expected ';'" in rows["broken_compile"]["message"]
    assert rows["crash_hang"]["status"] == "timeout"
    assert rows["eager"]["status"] == "ok"  # the worker was restarted and the run went on


# -- registry and bad input ---------------------------------------------------------------------

def test_registry_rejects_bad_registrations():
    registry.discover()  # the ops' kernels are registered (the duplicate below) and specs known
    with pytest.raises(ValueError, match="valid: cuda, triton, opencl, webgpu, torch"):
        registry.kernel("vector_add", "metal", "naive")
    with pytest.raises(ValueError, match="name it for what it does"):
        registry.kernel("vector_add", "cuda", "v2")
    with pytest.raises(ValueError, match="duplicate"):
        registry.kernel("vector_add", "torch", "eager")(lambda be, case: None)
    with pytest.raises(FileNotFoundError, match="not found"):
        registry.source(__file__, "missing.cu")
    with pytest.raises(ValueError, match="unknown test case 'n=7'; valid: n=1, n=2"):
        registry.kernel("vector_add", "torch", "wrong_cases", test_cases=("n=7",))(lambda be, case: None)
    assert ("vector_add", "torch", "wrong_cases") not in registry.REGISTRY


def test_compiled_torch_variants_checked_on_their_test_cases(pool):
    """A kernel's ``test_cases`` limit the test size only: a compiled torch variant is checked on
    one case per dtype in CI and on every bench case before it is timed."""
    from suite.registry import get_spec

    for op, n in (("vector_add", 2), ("reduction", 3), ("scan", 2), ("grayscale", 2)):
        variants = sorted(k[2] for k in registry.REGISTRY if k[:2] == (op, "torch") and "compiled" in k[2])
        assert variants, op
        for size in ("test", "bench"):
            p = plan(pool, ops=[op], backends=["torch"], variants=variants, size=size, device="cpu")
            cases = {it.case for it in p.items}
            tests = get_spec(op).test_cases
            if size == "test":  # one case per dtype
                assert len(cases) == n and cases <= {c.name for c in tests}
                assert {get_spec(op).case(c).dtype for c in cases} == {c.dtype for c in tests}
            else:
                assert cases == {c.name for c in get_spec(op).cases("bench", "cpu")}


@pytest.mark.parametrize("args, valid", [
    (["--op", "nope"], "valid: attention, gemv_lowbit"), (["--backend", "metal"], "valid: cuda"),
    (["--variant", "v9"], "valid:"), (["--device", "tpu9"], "valid: all, gpu, cpu"),
    (["--size", "huge"], "valid: test, bench")])
def test_cli_unknown_names_list_valid_ones(args, valid):
    r = subprocess.run([sys.executable, "-m", "suite.cli", "run", "--backend", "torch", *args, "--no-save"]
                       if "--backend" not in args else [sys.executable, "-m", "suite.cli", "run", *args,
                                                        "--no-save"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stdout + r.stderr
    assert valid in r.stderr and "Traceback" not in r.stdout + r.stderr  # errors go to stderr


def test_too_large_for_device_is_skipped():
    from suite.worker import Executor, Item

    ex = Executor("torch")
    cpu = next(d for d in ex.devices if d.kind == "cpu")
    cpu.memory_bytes = 1000  # pretend the device is tiny
    row = ex.run(Item("vector_add", "torch", "eager", "n=300007", cpu.index, cpu.slug, check_only=True))
    assert row["status"] == "skipped" and "needs" in row["message"]


# -- results ------------------------------------------------------------------------------------

def test_run_files_atomic_and_loadable(pool, tmp_path):
    p = plan(pool, ops=["vector_add"], backends=["torch"], variants=["eager"], size="test", device="all",
             cases=["n=1025"], timing={"time_cap_s": 0.2, "min_samples": 3, "warmup_s": 0.01})
    rows = execute(pool, p.items)
    from suite.runner import new_run

    paths = write_run(new_run(), p.devices, rows, tmp_path)
    assert paths and not list(tmp_path.rglob("*.tmp"))
    doc = json.loads(paths[0].read_text())
    assert doc["schema_version"] == 1 and doc["results"][0]["timing"]["n"] >= 3
    assert doc["run"]["host"]["numpy"] == np.__version__  # the inputs and references depend on it
    df = load(tmp_path)
    assert len(df) == 1 and df.loc[0, "status"] == "ok" and df.loc[0, "gbps"] > 0


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    """An interrupted write (during the data's fsync, or at the rename) leaves the old file whole
    and no temp file behind."""
    from suite import results

    path = tmp_path / "x.json"
    atomic_write_json(path, {"a": 1})
    real_replace = os.replace

    def boom(*args):
        raise KeyboardInterrupt

    for where in ("fsync", "replace"):
        monkeypatch.setattr(results.os, where, boom)
        with pytest.raises(KeyboardInterrupt):
            atomic_write_json(path, {"a": 2, "long": "x" * 100_000})
        monkeypatch.undo()
        assert json.loads(path.read_text()) == {"a": 1}, where
        assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"], where
    atomic_write_json(path, {"a": 3})
    assert json.loads(path.read_text()) == {"a": 3} and os.replace is real_replace


# -- the --benchmark switch ---------------------------------------------------------------------

def _plain_env() -> dict[str, str]:
    """This environment without an xdist worker's variables: a pytest started from a test under
    `pytest -n` would otherwise take itself for an xdist worker (pytest-benchmark then turns
    itself off)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}


def test_benchmark_flag_selects_only_benchmarks(tmp_path):
    from backends.base import host_cpu_slug

    out = tmp_path / "bench.json"
    # a ceiling for the host CPU in the run's results folder, so the % SOL column does not depend
    # on whether the committed results/ happen to hold this CPU model's peaks
    slug = host_cpu_slug("torch")
    (tmp_path / slug).mkdir()
    (tmp_path / slug / "peaks.json").write_text(json.dumps(
        {"device": slug, "measured": {"bandwidth": {"value": 2e10, "how": "test", "source": "measured"}}}))
    r = subprocess.run([sys.executable, "-m", "pytest", "tests/test_kernels.py", "--benchmark", "-q",
                        "--solbench-backend", "torch", "--solbench-op", "vector_add",
                        "-k", "not fp16 and eager", "--solbench-time-cap", "0.5",
                        f"--benchmark-json={out}", "-rs"],
                       env={**_plain_env(), "SOLBENCH_RESULTS": str(tmp_path)}, cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.loads(out.read_text())
    names = [b["name"] for b in doc["benchmarks"]]
    assert names and all(n.startswith("test_bench[") for n in names)
    assert "--benchmark-only active" in r.stdout  # every correctness test was deselected by skip
    assert doc["benchmarks"][0]["extra_info"]["gbps"] > 0
    # issue 10 item 14: solbench's own table (GB/s, % SOL, x torch) after pytest-benchmark's
    assert r.stdout.index("benchmark: 1 tests") < r.stdout.index("solbench benchmarks (device-timed")
    table = r.stdout.split("solbench benchmarks (device-timed")[1]
    assert "GB/s" in table and "SOL" in table and "torch" in table and "\nsolbench: 1 ok · 0 failed" in table
    # item 13: the "wrote" line is a line of its own
    written = list(tmp_path.rglob("run-*.json"))
    assert len(written) == 1 and f"\nsolbench: wrote {written[0]}\n" in r.stdout


def _start_run(tmp_path, *args: str, **popen) -> subprocess.Popen:
    """`solbench run --backend torch --op vector_add ARGS` writing under tmp_path, its output
    unbuffered on one text pipe (not a terminal: one plain line per finished item)."""
    return subprocess.Popen([sys.executable, "-m", "suite.cli", "run", "--backend", "torch",
                             "--op", "vector_add", *args, "--results-dir", str(tmp_path)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"}, **popen)


def _read_until(proc: subprocess.Popen, prefix: str) -> list[str]:
    """Lines of ``proc``'s output up to and including the first that starts with ``prefix``."""
    head = []
    for line in proc.stdout:
        head.append(line)
        if line.startswith(prefix):
            break
    return head


def test_ctrl_c_writes_no_file(tmp_path):
    import signal
    import time

    # SIGINT's default action in the child, however pytest was started: a shell's background job
    # ignores SIGINT, the child inherits that, and Python then installs no Ctrl-C handler
    proc = _start_run(tmp_path, "--size", "bench",
                      preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    head = _read_until(proc, "[0/")  # "[0/N] running": planned, the first bench item (2^28) under way
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out = "".join(head) + proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, out[-2000:]
    assert "no result file written" in out and not list(tmp_path.rglob("*"))


def test_sigterm_keeps_finished_rows(tmp_path):
    """`timeout` (SIGTERM) mid-run: the rows finished so far are saved, marked interrupted."""
    import signal

    proc = _start_run(tmp_path, "--size", "test", "--check-only")
    head = _read_until(proc, "[1/")
    proc.send_signal(signal.SIGTERM)
    out = "".join(head) + proc.communicate(timeout=120)[0]
    assert proc.returncode == 130, out[-2000:]
    files = list(tmp_path.rglob("run-*.json"))
    assert len(files) == 1, out[-2000:]
    doc = json.loads(files[0].read_text())
    info = doc["run"]["interrupted"]
    assert info["signal"] == "SIGTERM" and 1 <= info["rows_done"] < info["rows_planned"], info
    assert len(doc["results"]) == info["rows_done"] and all(r["status"] for r in doc["results"])
    assert "partial" not in doc["run"]


def test_pool_close_asks_every_worker_first_then_one_grace(monkeypatch):
    """Pool.close asks all workers to exit before waiting on any, and the waits share one
    CLOSE_GRACE_S instead of adding up."""
    from suite import worker

    calls = []

    class W:
        def __init__(self, name):
            self.name = name

        def stop(self):
            calls.append(("stop", self.name))

        def reap(self, grace):
            calls.append(("reap", self.name, grace))

    p = worker.Pool()
    p.workers = {"a": W("a"), "b": W("b")}
    p.device_workers = {("b", "dev"): p.workers["b"], ("c", "dev"): W("c")}
    p.close()
    assert [c[:2] for c in calls] == [("stop", "a"), ("stop", "b"), ("stop", "c"),
                                      ("reap", "a"), ("reap", "b"), ("reap", "c")]
    graces = [c[2] for c in calls if c[0] == "reap"]
    assert all(0 <= g <= worker.CLOSE_GRACE_S for g in graces) and graces == sorted(graces, reverse=True)


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process from /proc, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return fields[0], int(fields[1])


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid``."""
    pids = (int(d.name) for d in Path("/proc").glob("[0-9]*"))
    return [c for c in pids if (st := _proc_stat(c)) is not None and st[1] == pid]


def _alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` still running (neither gone nor zombies)."""
    return [p for p in pids if (st := _proc_stat(p)) is not None and st[0] != "Z"]


def test_sigkill_keeps_rows_written_so_far(tmp_path):
    """A run killed outright (a machine's time limit, `kill -9`) still leaves its finished rows:
    the run file is rewritten as rows finish (after every row unless rewrites grow costly,
    cli.PARTIAL_WRITE_RATIO) and says how far it got; and its worker processes
    end with it instead of waiting on their queues forever (holding a GPU's memory)."""
    import signal
    import time

    proc = _start_run(tmp_path, "--size", "test", "--check-only", start_new_session=True)
    try:
        _read_until(proc, "[2/")
        workers = _children(proc.pid)
        assert workers, "no worker process found"
        proc.send_signal(signal.SIGKILL)  # the run alone: its workers are left to notice
        proc.wait(timeout=60)
        deadline = time.monotonic() + 30
        while _alive(workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(workers), f"workers {_alive(workers)} outlived their killed run"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stdout.close()
    files = list(tmp_path.rglob("run-*.json"))
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    part = doc["run"]["partial"]
    assert 1 <= part["rows_done"] < part["rows_planned"] and len(doc["results"]) >= part["rows_done"]
