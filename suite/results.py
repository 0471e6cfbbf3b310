"""Run files: one schema-versioned JSON per run and device under ``results/<device-slug>/``,
written atomically (temp file + rename); ``load()`` reads them all into one DataFrame."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: where run files and peaks go (SOLBENCH_RESULTS overrides, e.g. to collect them from a remote run)
RESULTS_DIR = Path(os.environ.get("SOLBENCH_RESULTS", ROOT / "results"))
SCHEMA_VERSION = 1

#: columns of the flat table (CLI table, CSV, DataFrame)
COLUMNS = ["run_id", "started_utc", "git_sha", "device", "backend", "op", "variant", "case", "dtype",
           "size", "mode", "status", "message", "median_s", "min_s", "q1_s", "q3_s", "n", "rse", "timer",
           "cold", "gbps", "tflops", "pct_sol", "peak_source", "bound", "bytes", "flops",
           "max_abs_err", "max_rel_err", "rel_norm_err", "sm_mhz", "mem_mhz", "power_w", "throttle",
           "compile_s"]


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write JSON to ``path`` via a temp file in the same folder and an atomic rename."""
    atomic_write_text(path, json.dumps(obj, indent=1, default=_jsonable) + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _jsonable(x):
    if hasattr(x, "item"):
        return x.item()
    if isinstance(x, (set, tuple)):
        return list(x)
    return str(x)


def git_info() -> dict[str, Any]:
    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"git_sha": git("rev-parse", "HEAD") or None,
            "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def flat(row: dict[str, Any], run: dict[str, Any] | None = None) -> dict[str, Any]:
    """One row of the flat table from a nested result row."""
    timing = row.get("timing") or {}
    check = row.get("check") or {}
    clk = (row.get("clocks") or {}).get("after") or {}
    out = {**{k: row.get(k) for k in COLUMNS if k in row},
           **{k: timing.get(k) for k in ("median_s", "min_s", "q1_s", "q3_s", "n", "rse", "cold")},
           "timer": timing.get("method"),
           **{k: check.get(k) for k in ("max_abs_err", "max_rel_err", "rel_norm_err")},
           "sm_mhz": clk.get("sm_mhz"), "mem_mhz": clk.get("mem_mhz"), "power_w": clk.get("power_w"),
           "throttle": ",".join(clk.get("throttle", [])) or None}
    if run:
        out.update(run_id=run.get("id"), started_utc=run.get("started_utc"), git_sha=run.get("git_sha"))
    return {k: out.get(k) for k in COLUMNS}


def run_files(root: Path = RESULTS_DIR) -> list[Path]:
    return sorted(root.glob("*/run-*.json"))


def load(root: Path | str = RESULTS_DIR):
    """Every run under ``root`` as one pandas DataFrame (one row per result, COLUMNS)."""
    import pandas as pd

    rows = []
    for p in run_files(Path(root)):
        doc = json.loads(p.read_text())
        if doc.get("schema_version") != SCHEMA_VERSION:
            continue
        rows += [flat(r, doc["run"]) for r in doc["results"]]
    df = pd.DataFrame(rows, columns=COLUMNS)
    if not df.empty:
        df["started_utc"] = pd.to_datetime(df["started_utc"])
    return df


def write_csv(path: Path, rows: list[dict], run: dict) -> None:
    import csv
    import io

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS)
    w.writeheader()
    for r in rows:
        w.writerow(flat(r, run))
    atomic_write_text(path, buf.getvalue())
