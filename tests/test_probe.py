"""scripts/probe.py checks every configuration before timing it: the tuned shapes that only a
GPU picks by default (WebGPU matmul's 128×128 register tiles, softmax split_row in batches of
rows) are checked here on lavapipe through it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def probe(tmp_path, *args) -> list[dict]:
    cmd = [sys.executable, str(ROOT / "scripts" / "probe.py"), *args, "--out", str(tmp_path), "--cap", "0.05",
           "--batch", "1"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    (path,) = tmp_path.glob("probe-*.json")
    return json.loads(path.read_text())["rows"]


@pytest.mark.parametrize("args", [
    ("matmul", "webgpu", "--case", "130x257x129,bf16", "--only", "tiles=(128, 128"),
    ("softmax", "webgpu", "--case", "5x70000", "--only", "two_pass"),
])
def test_gpu_shapes_checked_on_the_cpu(tmp_path, args):
    pytest.importorskip("wgpu")
    rows = probe(tmp_path, *args)
    assert rows and all(r.get("checked") == "ok" for r in rows), rows


def test_only_selects_by_text_and_end():
    from scripts.probe import selected

    assert selected("mma_sync", "mma_sync$|PIPE") and selected("mma_sync BK=64 PIPE=1", "mma_sync$|PIPE")
    assert not selected("mma_sync BK=32 STAGES=4", "mma_sync$|PIPE")
    assert selected("register_blocked tiles=(64, 64, 16, 4, 4)", "tiles=(64") and selected("anything", "")


def test_ab_rounds_time_every_checked_form(tmp_path):
    """--ab: every checked configuration timed once per round, the rotation's ratios to the first
    (its own ratio exactly 1) with their quartiles, in the JSON beside the rows."""
    pytest.importorskip("pyopencl")
    cmd = [sys.executable, str(ROOT / "scripts" / "probe.py"), "vector_add", "opencl", "--case",
           "n=1025,fp16", "--out", str(tmp_path), "--cap", "0.05", "--batch", "1", "--ab", "5"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-2000:]
    (path,) = tmp_path.glob("probe-*.json")
    out = json.loads(path.read_text())
    ab, labels = out["ab"], [r["label"] for r in out["rows"] if r.get("checked") == "ok"]
    assert len(labels) == 3 and ab["baseline"] == labels[0] and list(ab["forms"]) == labels
    assert ab["forms"][labels[0]]["ratio_median"] == 1.0
    assert all(f["n"] == 5 and f["median_s"] > 0 and f["ratio_q1"] <= f["ratio_median"] <= f["ratio_q3"]
               for f in ab["forms"].values())
    assert "interleaved: 5 rounds" in res.stdout


def test_fixed_cost_fit_recovers_a_known_line(tmp_path):
    """scripts/fixed_cost.py on probe files whose times are 5 µs + bytes at 3 TB/s (and a second
    label 2 µs + bytes at 1 TB/s, one row failed, one label timed at one size): the fits give
    those numbers back; the JSON holds them."""
    for i, nbytes in enumerate((1e8, 2e8, 4e8)):
        rows = [{"label": "a", "median_s": 5e-6 + nbytes / 3e12},
                {"label": "b", "median_s": 2e-6 + nbytes / 1e12}, {"label": "failed", "median_s": None}]
        if i == 0:
            rows.append({"label": "once", "median_s": 1e-5})
        (tmp_path / f"probe-{i}.json").write_text(json.dumps({"bytes": nbytes, "rows": rows}))
    out = tmp_path / "fit.json"
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "fixed_cost.py"),
                          *map(str, sorted(tmp_path.glob("probe-*.json"))), "--json", str(out)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    fits = json.loads(out.read_text())
    assert fits["a"]["fixed_s"] == pytest.approx(5e-6) and fits["a"]["marginal_bps"] == pytest.approx(3e12)
    assert fits["b"]["fixed_s"] == pytest.approx(2e-6) and fits["b"]["marginal_bps"] == pytest.approx(1e12)
    assert set(fits) == {"a", "b"} and "once" in res.stdout and "no fit" in res.stdout


def test_pk_timeline_summary_reads_a_known_record():
    """scripts/pk_timeline.py's summary of a PTIMELINE record written by hand (two blocks, 1000 MHz
    — given, or read off the counters against %globaltimer — so a clock is a ns; block 1 enters
    2 µs late; 10 chunks 1 µs apart, warp 0 computing 0.25 µs of each in block 0 and 0.75 µs in
    block 1): skew, span, first chunk, gap, busy and drain come back; a zeroed row (a block that did
    not run) is ignored."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from pk_timeline import summarize

    from ops.gemv_lowbit.kernels import PK_TL_MAX, PK_TL_STRIDE

    rec = np.zeros((3, PK_TL_STRIDE), np.uint64)
    for b, (entry_ns, work) in enumerate(((0, 250), (2000, 750))):
        clk0 = 10**6 * (b + 1)  # each SM's counter starts elsewhere
        f = clk0 + 3000 + 1000 * np.arange(10)
        rec[b, 0], rec[b, 2], rec[b, 3], rec[b, 5] = 5000 + entry_ns, clk0, clk0 + 1500, 10
        rec[b, 32:42] = f
        rec[b, 32 + PK_TL_MAX:42 + PK_TL_MAX] = f + work
        rec[b, 4] = f[-1] + 400  # warp 0 ends 0.4 µs after the last chunk came
        rec[b, 8:16] = f[-1] + 400 + np.arange(8) * 100  # the last warp 0.7 µs after warp 0
        rec[b, 1] = 5000 + entry_ns + (int(rec[b, 4]) - clk0)  # globaltimer at warp 0's end
    s = summarize(rec, kw=8, mhz=1000.0)
    assert s["skew_us"] == pytest.approx(2.0) and s["span_us"] == pytest.approx(2.0 + 12.4)
    assert s["first_med"] == pytest.approx(3.0) and s["x_med"] == pytest.approx(1.5)
    assert s["gap_med"] == pytest.approx(1.0) and s["drain_max"] == pytest.approx(0.4)
    assert s["lastw_max"] == pytest.approx(1.1) and s["clk_mhz"] == pytest.approx(1000.0)
    # busy: 10 chunks × work over (last release − first arrival) = 9 µs + work
    assert s["busy_med"] == pytest.approx(np.median([2.5 / 9.25, 7.5 / 9.75]))
    assert s["busy_max"] == pytest.approx(7.5 / 9.75)
    # without a clock given, the counters' own rate against %globaltimer (here 1000 MHz) converts
    assert summarize(rec, kw=8)["first_med"] == pytest.approx(3.0)
