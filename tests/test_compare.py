"""`solbench compare`: verdicts from real run files (synthetic), thresholds, exit codes, outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from suite import compare as cmp
from suite.cli import app
from tests.synth_history import row, samples_around, write_run


def _two_runs(tmp_path: Path, after_level: float, after_status: str = "ok",
              seed: int = 1, after_flush: str | None = None) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    s0, s1 = samples_around(rng, 1e-3), samples_around(rng, after_level)
    a = write_run(tmp_path, 0, [row(median_s=float(np.median(s0)), samples=s0),
                                row(variant="naive", median_s=2e-3, samples=samples_around(rng, 2e-3))])
    after_rows = [row(median_s=float(np.median(s1)), samples=s1, status=after_status, flush=after_flush,
                      message="3 of 1048576 elements differ" if after_status == "failed" else "")]
    after_rows.append(row(variant="grid_stride", median_s=1.5e-3, samples=samples_around(rng, 1.5e-3)))
    b = write_run(tmp_path, 1, after_rows)
    return a, b


def _by_variant(out: dict) -> dict[str, dict]:
    return {e["variant"]: e for e in out["entries"]}


def test_regression_is_significant_and_blocking(tmp_path: Path) -> None:
    a, b = _two_runs(tmp_path, 1.10e-3)
    out = cmp.compare(str(a), str(b), thresholds=cmp.Thresholds())
    e = _by_variant(out)["vec4"]
    assert e["verdict"] == "regression"
    assert e["ratio"] == pytest.approx(1.10, rel=0.02)
    assert e["p_value"] < 1e-3
    assert _by_variant(out)["naive"]["verdict"] == "vanished"
    assert _by_variant(out)["grid_stride"]["verdict"] == "new"
    assert out["has_blocking"]


def test_small_change_is_unchanged_and_big_change_needs_significance(tmp_path: Path) -> None:
    a, b = _two_runs(tmp_path, 1.02e-3)
    out = cmp.compare(str(a), str(b), thresholds=cmp.Thresholds())
    assert _by_variant(out)["vec4"]["verdict"] == "unchanged"
    assert not out["has_blocking"]
    # an effect beyond the threshold on too few samples is not significant
    assert cmp.judge(1e-3, 1.2e-3, None, 0.05, 0.01) == "not significant"
    assert cmp.rank_test([1.0, 1.1], [2.0, 2.1]) is None


def test_improvement_and_new_failure(tmp_path: Path) -> None:
    a, b = _two_runs(tmp_path, 0.8e-3)
    assert _by_variant(cmp.compare(str(a), str(b)))["vec4"]["verdict"] == "improvement"
    a, b = _two_runs(tmp_path / "f", 1e-3, after_status="failed")
    out = cmp.compare(str(a), str(b))
    e = _by_variant(out)["vec4"]
    assert e["verdict"] == "new failure" and "differ" in e["message"]
    assert out["has_blocking"]


def test_a_changed_timing_method_is_not_a_regression(tmp_path: Path) -> None:
    """Before the read flush (no timing.flush) vs after it: a significant shift is "method
    changed", named with both methods, and does not block."""
    a, b = _two_runs(tmp_path, 1.3e-3, after_flush="read")
    out = cmp.compare(str(a), str(b))
    e = _by_variant(out)["vec4"]
    assert e["verdict"] == "method changed" and not out["has_blocking"]
    assert e["message"].endswith("flush write → cuda-event, start ?, flush read")
    assert "method changed" in cmp.to_markdown(out, only_changes=True)


def test_thresholds_yaml_per_series(tmp_path: Path) -> None:
    y = tmp_path / "th.yaml"
    y.write_text("default: {min_effect: 0.05, alpha: 0.01}\nseries:\n"
                 "  - match: {backend: cuda, variant: 'vec*'}\n    min_effect: 0.2\n"
                 "  - match: {op: scan}\n    ignore: true\n")
    th = cmp.load_thresholds(y)
    assert th.for_series({"backend": "cuda", "variant": "vec4", "op": "vector_add"})[0] == 0.2
    assert th.for_series({"backend": "cuda", "variant": "naive", "op": "vector_add"})[0] == 0.05
    assert th.for_series({"backend": "opencl", "variant": "x", "op": "scan"})[2] is True
    a, b = _two_runs(tmp_path / "r", 1.10e-3)
    assert _by_variant(cmp.compare(str(a), str(b), thresholds=th))["vec4"]["verdict"] == "unchanged"
    y.write_text("series:\n  - match: {colour: red}\n")
    with pytest.raises(ValueError, match="unknown field"):
        cmp.load_thresholds(y)


def test_cli_exit_codes_markdown_json_and_folders(tmp_path: Path) -> None:
    a, b = _two_runs(tmp_path, 1.10e-3)
    runner = CliRunner()
    r = runner.invoke(app, ["compare", str(a), str(b), "--markdown", "-"])
    assert r.exit_code == 1, r.output
    assert "| regression | gpu-synth | vector_add | cuda | vec4 |" in r.output
    j = tmp_path / "c.json"
    r = runner.invoke(app, ["compare", str(a), str(a), "--json", str(j)])
    assert r.exit_code == 0, r.output
    doc = json.loads(j.read_text())
    assert doc["counts"]["unchanged"] == 2 and not doc["has_blocking"]
    # two result folders: the newest row of each series in each
    other = tmp_path / "other"
    write_run(other, 5, [row(median_s=1e-3, samples=[1e-3] * 10)])
    r = runner.invoke(app, ["compare", str(tmp_path), str(other), "--markdown", "-", "--all"])
    assert "gpu-synth" in r.output
    r = runner.invoke(app, ["compare", str(a), "no-such-thing-xyz"])
    assert r.exit_code == 2
    assert "not a run file" in r.output


def test_run_ids_and_git_revisions_resolve_in_a_history(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    head = cmp._git_sha("HEAD")
    assert head
    p0 = write_run(tmp_path, 0, [row(median_s=1e-3, samples=samples_around(rng, 1e-3))], sha="0" * 40)
    write_run(tmp_path, 1, [row(median_s=1.2e-3, samples=samples_around(rng, 1.2e-3))], sha=head)
    rid0 = json.loads(p0.read_text())["run"]["id"]
    out = cmp.compare(rid0[-6:], "HEAD", root=tmp_path)
    assert out["after"]["git_sha"] == head
    assert out["entries"][0]["verdict"] == "regression"


def test_a_soaked_timing_is_its_own_method() -> None:
    """Rows soaked into the power-capped state (timing.warmup_s ≥ SOAK_S) are timed another way
    than the rows before the soak existed (no field) or light rows (short warm-up): a shift
    across it is a method change, not a regression."""
    from suite.history import timing_method
    from suite.timing import SOAK_S

    t = {"method": "cuda-event", "start": "blocking-kernel", "flush": "read"}
    assert timing_method({**t, "warmup_s": SOAK_S}).endswith("flush read, soaked")
    plain = "cuda-event, start blocking-kernel, flush read"
    assert timing_method({**t, "warmup_s": 0.2}) == timing_method(t) == plain
    # soaked rows with a fixed sample count (suite.timing.SOAK_SAMPLES) are a method of their own too
    fixed = timing_method({**t, "warmup_s": SOAK_S, "sampling": "fixed 10"})
    assert fixed.endswith("flush read, soaked, 10 samples")
    assert timing_method({**t, "sampling": "adaptive"}) == plain


def test_cli_refuses_bad_outputs_empty_sides_and_nothing_in_common(tmp_path: Path) -> None:
    """compare checks its output files before comparing (a folder, a device such as /dev/null, an
    empty name: exit 2, nothing written or replaced), rejects an empty side, a significance level
    outside (0, 1), and two sides that share no series."""
    a, b = _two_runs(tmp_path, 1.0e-3)
    runner = CliRunner()
    folder = tmp_path / "adir"
    folder.mkdir()
    for target in (str(folder), "/dev/null", ""):
        r = runner.invoke(app, ["compare", str(a), str(b), "--markdown", target])
        assert r.exit_code == 2 and "--markdown" in r.output, (target, r.output)
    assert folder.is_dir() and Path("/dev/null").is_char_device()
    for args, why in (([str(a), ""], "AFTER is empty"), ([str(a), str(b), "--alpha", "nan"], "--alpha")):
        r = runner.invoke(app, ["compare", *args])
        assert r.exit_code == 2 and why in r.output, r.output
    other = write_run(tmp_path / "o", 7, [row(op="reduction", median_s=1e-3, samples=[1e-3] * 10)])
    r = runner.invoke(app, ["compare", str(a), str(other)])
    assert r.exit_code == 2 and "share no series" in r.output, r.output
