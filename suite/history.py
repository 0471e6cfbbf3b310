"""The result history for `compare`, `nightly` and the dashboard: every run file under a results
folder, flattened like ``suite.results.load()`` (same columns, same ``flat()``), plus what a
regression check needs and the flat table leaves out: the raw timing samples, the clocks before
and after sampling, the run's file and git state, and the device records of each run.

It reads the same folders as ``results.load()`` (the committed ``results/`` and the user's
results folder) with the same file check (``results.read_run``). A run file that cannot be read
(missing, truncated, not JSON, wrong shape) is skipped with a ``HistoryWarning`` that names it; the
skipped paths are kept so a report can list them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from suite import results as res

#: what identifies one series across runs
SERIES = ["device", "op", "backend", "variant", "case", "dtype"]
#: statuses that mean the kernel is wrong or did not finish
BAD = ("failed", "error", "timeout")
#: columns added to ``results.COLUMNS``
EXTRA = ["samples", "sm_mhz_before", "mem_mhz_before", "throttle_before", "git_dirty", "file",
         "precision", "method"]


class HistoryWarning(UserWarning):
    """A run file in the history was skipped."""


@dataclass
class History:
    """Rows (one per result, ``results.COLUMNS`` + ``EXTRA``), run records and skipped files."""

    rows: pd.DataFrame
    #: run id → {"git_sha", "git_dirty", "started_utc", "argv", "host", "devices": {slug: record}, "files"}
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (path, reason) of every run file that was skipped
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def perf(self) -> pd.DataFrame:
        """Rows that carry a comparable device timing: status ok, really run (not interpreted or
        compile-only), with a median."""
        r = self.rows
        return r[(r.status == "ok") & (r["mode"] == "run") & r.median_s.notna()]


#: the read flush landed in commit 499b4ef (first run 2026-12-01T16:39Z); ``timing.flush`` was
#: recorded from 1c61ab8 on. A cold row without the field is "read" from this instant, else "write"
READ_FLUSH_SINCE = "2026-12-01T16:37:00+00:00"


def timing_method(timing: dict[str, Any], started_utc: str | None = None) -> str | None:
    """How a row was timed, as far as it changes what a kernel's time means: the timer, how the
    window opened, what preceded each sample (see READ_FLUSH_SINCE for files without
    ``timing.flush``) and whether it was soaked into the power-capped state first
    (``timing.warmup_s`` ≥ ``suite.timing.SOAK_S``; files before it have no field: not soaked),
    and with a fixed sample count (``timing.sampling`` "fixed N"; older files: adaptive).
    None for a row without a timing."""
    from suite.timing import SOAK_S

    if not timing:
        return None
    flush = timing.get("flush")
    if not flush:
        read = str(started_utc or "") >= READ_FLUSH_SINCE
        flush = "none" if not timing.get("cold", True) else "read" if read else "write"
    soak = ", soaked" if (timing.get("warmup_s") or 0) >= SOAK_S else ""
    sampling = timing.get("sampling") or ""
    fixed = f", {sampling[len('fixed '):]} samples" if sampling.startswith("fixed ") else ""
    return f"{timing.get('method') or '?'}, start {timing.get('start') or '?'}, flush {flush}{soak}{fixed}"


def _row(r: dict[str, Any], run: dict[str, Any], path: Path) -> dict[str, Any]:
    out = res.flat(r, run)
    timing = r.get("timing") or {}
    before = (r.get("clocks") or {}).get("before") or {}
    out.update(samples=list(timing.get("samples") or []), sm_mhz_before=before.get("sm_mhz"),
               mem_mhz_before=before.get("mem_mhz"),
               throttle_before=",".join(before.get("throttle", [])) or None,
               git_dirty=run.get("git_dirty"), file=str(path), precision=r.get("precision"),
               method=timing_method(timing, run.get("started_utc")))
    return out


def read_run(path: Path) -> dict[str, Any]:
    """``results.read_run`` plus the run fields the history needs; ValueError if unusable."""
    doc = res.read_run(path)
    for k in ("id", "started_utc"):
        if not doc["run"].get(k):
            raise ValueError(f"run record lacks {k!r}")
    return doc


Roots = Path | str | Iterable[Path | str] | None


def load_history(root: Roots = None, files: list[Path] | None = None) -> History:
    """Read every run file under ``root`` (a folder, several, or None for the committed
    ``results/`` and the user's results folder, like ``results.load``) or the given files; skip
    unreadable ones with a ``HistoryWarning`` naming each. A run file present in two folders
    (same device folder and name) is read once."""
    paths = list(files) if files is not None else res.run_files(root)
    rows: list[dict[str, Any]] = []
    runs: dict[str, dict[str, Any]] = {}
    skipped: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for p in map(Path, paths):
        if (p.parent.name, p.name) in seen:
            continue
        try:
            doc = read_run(p)
            new = [_row(r, doc["run"], p) for r in doc["results"]]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            reason = f"{type(e).__name__}: {e}"
            skipped.append((str(p), reason))
            warnings.warn(f"solbench: skipped run file {p}: {reason}", HistoryWarning, stacklevel=2)
            continue
        seen.add((p.parent.name, p.name))
        rows += new
        run = doc["run"]
        rec = runs.setdefault(run["id"], {k: run.get(k) for k in
                                          ("git_sha", "git_dirty", "started_utc", "argv", "host")}
                              | {"devices": {}, "files": []})
        rec["devices"].update(doc.get("devices") or {})
        rec["files"].append(str(p))
    df = pd.DataFrame(rows, columns=res.COLUMNS + EXTRA)
    if not df.empty:
        df["started_utc"] = pd.to_datetime(df["started_utc"], utc=True, errors="coerce")
        df = df.sort_values(["started_utc", "run_id"], kind="stable").reset_index(drop=True)
    return History(df, runs, skipped)


def series_key(row: Any) -> tuple:
    """The series a row belongs to (works on a dict or a pandas row)."""
    return tuple(row[k] for k in SERIES)


def series_label(key: tuple) -> str:
    return " ".join(str(k) for k in key)


def latest_per_series(df: pd.DataFrame) -> pd.DataFrame:
    """The newest row of every series."""
    if df.empty:
        return df
    return df.sort_values("started_utc", kind="stable").groupby(SERIES, as_index=False, dropna=False).tail(1)
