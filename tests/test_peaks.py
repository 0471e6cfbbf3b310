"""Ceilings (issue 9): a read-only (dot) bandwidth ceiling beside copy's, measured for real on the
CPU; each ceiling the median of repeated measurements; read-dominated rows rated against it; old
peaks files (no read ceiling) still load."""

from __future__ import annotations

import json
import statistics

import pytest

from suite import peaks, report, sol
from suite.registry import get_spec
from suite.runner import execute, plan
from suite.worker import Pool

FAST = {"warmup_s": 0.02, "min_samples": 5, "time_cap_s": 0.2}


@pytest.fixture(scope="module")
def pool():
    p = Pool()
    yield p
    p.close()


def test_ceiling_is_the_median_of_fresh_repeats():
    """A lucky first draw picks the candidate but is not its ceiling; an outlier among the repeats
    moves the median, not the max."""
    cands = [{"value": 9.0, "how": "b"}, {"value": 12.0, "how": "a (lucky)"}, {"value": 3.0, "how": "c"}]
    asked = []

    def remeasure(c, n):
        asked.append((c["how"], n))
        return [10.0, 10.4, 30.0, 9.6, 10.2]

    c = peaks.ceiling_of(cands, remeasure, 5)
    assert asked == [("a (lucky)", 5)]  # only the fastest is measured again
    assert c["value"] == 10.2 and c["how"] == "a (lucky)" and c["method"] == "median of 5 repeats"
    assert c["repeats"] == [10.0, 10.4, 30.0, 9.6, 10.2]
    assert c["spread"]["min"] == 9.6 and c["spread"]["max"] == 30.0
    assert c["spread"]["q1"] == 10.0 and c["spread"]["q3"] == 10.4
    assert c["selected"] == {"from": 3, "first_value": 12.0, "skipped": []}
    # a candidate whose re-measurements all fail hands over to the next fastest
    c = peaks.ceiling_of(cands, lambda c, n: [] if c["how"].startswith("a") else [c["value"]] * n, 3)
    assert c["how"] == "b" and c["value"] == 9.0 and c["selected"]["skipped"] == ["a (lucky)"]
    with pytest.raises(ValueError, match="every candidate failed"):
        peaks.ceiling_of(cands, lambda c, n: [], 3)


def test_read_ceiling_measured_on_the_cpu(pool, tmp_path, monkeypatch):
    """The peaks code path on the CPU (tiny arrays: the path, not a ceiling): copy and read-only
    ceilings, each from the OpenCL kernels and torch's copy/dot, stored with method and repeats;
    a run then rates the reduction (read-dominated) against the read ceiling, vector_add not."""
    p = plan(pool, ops=["reduction"], backends=["opencl"], device="cpu", size="test")
    if not p.items:
        pytest.skip(f"no OpenCL CPU device: {[n['message'] for n in p.notes]}")
    out = peaks.measure_peaks(pool, "cpu", timeout=300, root=tmp_path, size="test", repeats=3,
                              backends=["opencl"])
    (slug, pk), = out.items()
    stored = json.loads((tmp_path / slug / "peaks.json").read_text())
    assert stored["measured"].keys() >= {"bandwidth", "read_bandwidth", "fp32"}
    for key in ("bandwidth", "read_bandwidth", "fp32"):
        m = stored["measured"][key]
        assert m["method"] == "median of 3 repeats" and len(m["repeats"]) == 3
        assert m["value"] == statistics.median(m["repeats"]) > 0 and m["source"] == "measured"
    hows = {c["ceiling"]: [] for c in stored["candidates"]}
    for c in stored["candidates"]:
        hows[c["ceiling"]].append(c["how"])
    assert any(h.startswith("opencl/reduction/") for h in hows["read_bandwidth"])
    assert any(h.startswith("torch.dot") for h in hows["read_bandwidth"])
    assert any(h.startswith("opencl/vector_add/") for h in hows["bandwidth"])
    assert any(h.startswith("torch copy_") for h in hows["bandwidth"])
    assert stored["measured"]["read_bandwidth"]["how"] in hows["read_bandwidth"]

    monkeypatch.setattr(sol, "PEAKS_FIRST", tmp_path)
    p = plan(pool, ops=["reduction", "vector_add"], backends=["torch"], device="cpu", size="test",
             cases=["n=65537"], dtypes=["fp32"], timing=FAST)
    rows = {r["op"]: r for r in execute(pool, p.items, timeout=300)}
    red, va = rows["reduction"], rows["vector_add"]
    assert red["status"] == va["status"] == "ok"
    assert red["read_dominated"] and not va["read_dominated"]
    rbw, fp32 = stored["measured"]["read_bandwidth"]["value"], stored["measured"]["fp32"]["value"]
    # the tiny test GEMM's rate can make the compute term the larger one: the same max() as pct_sol
    sol_read = max(red["bytes"] / rbw, red["flops"] / fp32)
    assert red["pct_sol_read"] == pytest.approx(100 * sol_read / red["timing"]["median_s"])
    assert red["peaks_used"]["read_bandwidth"] == rbw and "pct_sol_read" not in va


def _row(op: str, t: float = 1e-3) -> dict:
    spec = get_spec(op)
    case = spec.cases("bench", "gpu")[0]
    return {"op": op, "case": case.name, "backend": "cuda", "variant": "v", "device": "dev-a",
            "status": "ok", "mode": "run", "dtype": case.dtype, "precision": case.prec,
            "bytes": spec.bytes_moved(case), "flops": spec.flops(case),
            "read_dominated": spec.reads_only(case), "timing": {"median_s": t}}


@pytest.mark.parametrize("op, read", [("reduction", True), ("gemv_lowbit", True), ("vector_add", False),
                                      ("softmax", False), ("grayscale", False)])
def test_read_dominated_ops_declared(op, read):
    spec = get_spec(op)
    assert all(spec.reads_only(c) is read for c in spec.cases("bench", "gpu") + spec.test_cases)


def test_read_dominated_row_against_the_read_ceiling():
    pk = {"measured": {"bandwidth": {"value": 4.0e12}, "read_bandwidth": {"value": 5.0e12}}}
    red, va = _row("reduction"), _row("vector_add")
    red["timing"]["median_s"] = red["bytes"] / 4.5e12  # 4.5 TB/s: above copy's ceiling, below read's
    sol.derive(red, pk)
    sol.derive(va, pk)
    assert red["pct_sol"] == pytest.approx(112.5) and red["pct_sol_read"] == pytest.approx(90.0)
    assert red["status"] == "ok"  # a read-only op's speed of light is the read ceiling
    assert "pct_sol_read" not in va
    red2 = {**_row("reduction"), "timing": {"median_s": red["bytes"] / 5.5e12}}
    sol.derive(red2, pk)  # 110 % of the read ceiling: faster than light
    assert red2["status"] == "invalid" and red2["pct_sol_read"] == pytest.approx(110.0)


def test_old_peaks_file_without_read_ceiling_loads(tmp_path):
    """A peaks.json from before the read ceiling (the committed CPU one has none): rows derive,
    the read figure stays empty, the tables render without a % read column."""
    old = {"device": "dev-a", "measured": {"bandwidth": {"value": 4.0e12, "how": "x", "source": "measured"}},
           "candidates": [{"value": 4.0e12, "how": "x"}], "theoretical": {}}
    sol.save_peaks("dev-a", old, tmp_path)
    pk = sol.load_peaks("dev-a", tmp_path)
    red = _row("reduction")
    sol.derive(red, pk)
    assert red["pct_sol"] > 0 and red["pct_sol_read"] is None and red["status"] == "ok"
    assert red["peaks_used"]["read_bandwidth"] is None
    assert sol.peak_for(pk, "read_bandwidth") == (None, "none")
    from io import StringIO

    from rich.console import Console

    c = Console(file=StringIO(), width=80, color_system=None)
    c.print(report.run_tables([red], "t"))
    assert "read" not in c.file.getvalue()
