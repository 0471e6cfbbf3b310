"""Run files: one schema-versioned JSON per run and device under ``<results dir>/<device-slug>/``,
written atomically (temp file + rename, honouring the umask); ``load()`` reads them all into one
DataFrame, skipping (with a warning naming each) files that are not solbench run files.

Two folders hold results. ``results/`` is committed reference data (the maintainers' headline
runs and peaks); ``results-local/`` (git-ignored) is where a user's own runs and peaks go by
default, so ``make bench`` never rewrites committed data. ``SOLBENCH_RESULTS`` or ``--results-dir``
points elsewhere (``--results-dir results`` for a deliberate headline run). The loader and the
peak lookup read both.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: committed reference data: headline runs and peaks (written only when asked for by name)
COMMITTED_DIR = ROOT / "results"
#: the user's own runs and peaks by default (git-ignored)
LOCAL_DIR = ROOT / "results-local"
#: where run files and peaks go (SOLBENCH_RESULTS overrides, e.g. to collect them from a remote run)
RESULTS_DIR = Path(os.environ["SOLBENCH_RESULTS"]) if os.environ.get("SOLBENCH_RESULTS") else LOCAL_DIR
SCHEMA_VERSION = 1

#: columns of the flat table (CLI table, CSV, DataFrame)
COLUMNS = ["run_id", "started_utc", "git_sha", "device", "backend", "op", "variant", "case", "dtype",
           "size", "mode", "status", "message", "median_s", "min_s", "q1_s", "q3_s", "n", "rse", "timer",
           "cold", "gbps", "tflops", "pct_sol", "pct_sol_read", "peak_source", "bound", "bytes", "flops",
           "max_abs_err", "max_rel_err", "rel_norm_err", "sm_mhz", "mem_mhz", "power_w", "throttle",
           "compile_s", "flags", "sm_mhz_min_window", "mem_mhz_min_window", "start", "source_hash"]


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write JSON to ``path`` via a temp file in the same folder and an atomic rename."""
    atomic_write_text(path, json.dumps(obj, indent=1, default=_jsonable) + "\n")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temp file in the same folder and an atomic rename.

    The file gets the mode a plain ``open()`` would give it (0666 less the umask), or keeps the
    mode of the file it replaces; ``mkstemp``'s private 0600 never leaks into results.
    """
    path = Path(path)
    if not path.name:
        raise IsADirectoryError(f"{str(path)!r} names no file")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777 if path.is_file() else 0o666 & ~current_umask()
    except OSError:
        mode = 0o666 & ~current_umask()
    if os.path.lexists(path) and not path.is_file():  # a folder, a device (/dev/null), a socket ...
        raise IsADirectoryError(f"{path} exists and is not a regular file") if path.is_dir() else \
            FileExistsError(f"{path} exists and is not a regular file")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            os.fchmod(f.fileno(), mode)
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def current_umask() -> int:
    """The process umask, read without changing it where /proc allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# -- output locations: checked before the first kernel runs --------------------------------------

def _nearest_existing(path: Path) -> Path:
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def check_dir(path: Path | str) -> str | None:
    """Why files cannot be created under folder ``path`` (created if missing), or None if they can.

    Finds the nearest existing ancestor and creates (and removes) a probe file there, so a
    read-only or special file system, a missing parent under one, or a regular file in the way
    is found before any work is done.
    """
    if str(path) == "":
        return "the folder name is empty"
    path = Path(path)  # literally, as it is written (no ~ expansion: the shell's job)
    base = _nearest_existing(path.absolute())
    if not base.is_dir():
        return f"{base} is not a folder"
    try:
        fd, probe = tempfile.mkstemp(prefix=".solbench-probe-", dir=base)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        return f"cannot write in {base}: {e.strerror or e}"
    return None


def check_file(path: Path | str) -> str | None:
    """Why ``path`` cannot be written as a file (atomically), or None if it can."""
    if str(path).strip() == "":
        return "the file name is empty"
    path = Path(path)
    if path.is_dir() or str(path).endswith(os.sep):
        return f"{path} is a folder; give a file name"
    if os.path.lexists(path) and not path.is_file():
        return f"{path} exists and is not a regular file"
    if path.is_file() and not os.access(path, os.W_OK):
        return f"{path} is not writable"
    return check_dir(path.absolute().parent)


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
           "throttle": ",".join(clk.get("throttle", [])) or None,
           # measurement integrity (issue 9): why a timing is suspect, clocks during the window,
           # how the window opened, the kernel source that produced the row
           "flags": "; ".join(row.get("flags") or timing.get("flags") or []) or None,
           "sm_mhz_min_window": (timing.get("clocks") or {}).get("sm_mhz_min"),
           "mem_mhz_min_window": (timing.get("clocks") or {}).get("mem_mhz_min"),
           "start": timing.get("start"), "source_hash": (row.get("source") or {}).get("hash")}
    if run:
        out.update(run_id=run.get("id"), started_utc=run.get("started_utc"), git_sha=run.get("git_sha"))
    return {k: out.get(k) for k in COLUMNS}


def run_files(root: Path | str | None = None) -> list[Path]:
    """Run files under ``root`` (default: the committed and the user's results folders)."""
    out: list[Path] = []
    for r in _roots(root):
        out += sorted(r.glob("*/run-*.json"))
    return out


def _roots(root: Path | str | Iterable[Path | str] | None) -> list[Path]:
    if root is None:
        roots = [COMMITTED_DIR, RESULTS_DIR]
    elif isinstance(root, (str, Path)):
        roots = [Path(root)]
    else:
        roots = [Path(r) for r in root]
    seen: list[Path] = []
    for r in roots:
        if r.resolve() not in [s.resolve() for s in seen]:
            seen.append(r)
    return seen


def read_run(path: Path) -> dict[str, Any]:
    """One run file's document; ValueError (with the reason) if it is not a solbench run file
    of this schema version."""
    try:
        doc = json.loads(Path(path).read_text())
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8 text ({e.reason})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"a JSON {type(doc).__name__}, not a run document")
    version = doc.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ValueError(f"schema_version {version!r}; this solbench reads {SCHEMA_VERSION}")
    if not isinstance(doc.get("run"), dict) or not isinstance(doc.get("results"), list) \
            or not all(isinstance(r, dict) for r in doc["results"]):
        raise ValueError("no 'run' object or no 'results' list of rows")
    return doc


def load(root: Path | str | Iterable[Path | str] | None = None):
    """Every run under ``root`` as one pandas DataFrame (one row per result, COLUMNS).

    ``root``: a folder, several, or None for both the committed ``results/`` and the user's
    results folder. A file that is not a readable run file of this schema version is skipped
    with one warning naming it; a run present in both folders is read once.
    """
    import pandas as pd

    rows = []
    seen: set[tuple[str, str]] = set()
    for p in run_files(root):
        try:
            doc = read_run(p)
            key = (p.parent.name, p.name)
            if key in seen:
                continue
            rows += [flat(r, doc["run"]) for r in doc["results"]]
            seen.add(key)
        except (OSError, ValueError, TypeError, AttributeError) as e:
            warnings.warn(f"solbench: skipped {p}: {e}", stacklevel=2)
    df = pd.DataFrame(rows, columns=COLUMNS)
    if not df.empty:
        df["started_utc"] = pd.to_datetime(df["started_utc"], errors="coerce", utc=True)
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
