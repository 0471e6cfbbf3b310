"""``solbench nightly``: the continuous-benchmarking job, and its regression detection.

Detection runs over each series' whole history, not against one previous run:

1. The run medians of a series (ok, device-timed rows, oldest first) go through ruptures' PELT
   search with the robust L1 cost on log-time (a single outlier moves a median little), segments of
   at least ``min_runs`` runs, and a penalty scaled by the series' own run-to-run noise (the
   normal-consistent MAD of successive differences, scipy) times log n.
2. Each candidate change point is then confirmed, in time order, against the segment since the
   last confirmed change: the median moved by at least the series' minimum effect, at least
   ``min_runs`` runs after it (and most of them) moved that way by half the effect or more, the
   effect survives leaving out any one run on either side (an outlier cannot carry it), and a
   two-sided Mann–Whitney U test (scipy) on the raw timing samples of up to ``CONFIRM_RUNS`` runs on
   each side rejects "same distribution" at alpha. A rejected candidate merges its segments.
3. A newest run that differs from its level but has no second run after it yet is *pending*:
   listed, never blocking (one run cannot tell a step from an outlier).

Clocks (SM/memory MHz, power, throttle reasons) of the runs on both sides are put beside every
change, so a throttled run is not mistaken for a slower kernel.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from suite import results as res
from suite import sol
from suite.compare import Thresholds, rank_test
from suite.history import BAD, SERIES, History, series_key, series_label

#: runs per side whose raw samples the rank test pools
CONFIRM_RUNS = 5
#: PELT penalty = PEN_SCALE · noise · log(n), in units of L1 cost on log-time (1.0: no false change in
#: 60 synthetic ±3 % noise histories, every 10 % step found; see tests/test_nightly.py)
PEN_SCALE = 1.0
#: floor of the noise estimate (log-time): quieter series are treated as 0.5 % noisy
NOISE_FLOOR = 0.005
#: where ``write_report`` puts reports unless told (the committed results folder)
REPORTS_DIR = res.COMMITTED_DIR / "reports"


@dataclass
class Change:
    """A confirmed level shift (or a pending one) in one series."""

    series: dict[str, Any]
    #: regression | improvement | pending; "method" when the timing method (timer, start rule,
    #: flush: history.timing_method) differs across the shift: the protocol moved, not the kernel
    kind: str
    index: int  # position of the first run after the change in the series' timed history
    run_id: str
    started_utc: str
    before_median_s: float
    after_median_s: float
    ratio: float
    p_value: float | None
    runs_before: int
    runs_after: int
    current: bool  # the newest run of the series is in the changed level
    git_range: str
    clocks_before: dict[str, Any] = field(default_factory=dict)
    clocks_after: dict[str, Any] = field(default_factory=dict)
    ignored: bool = False
    method_before: str = ""
    method_after: str = ""

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["confidence"] = None if self.p_value is None else 1.0 - self.p_value
        d["label"] = series_label(tuple(self.series[k] for k in SERIES))
        return d


def noise_scale(y: np.ndarray) -> float:
    """Run-to-run noise of a log-time series: MAD of successive differences / √2 (normal scale)."""
    from scipy.stats import median_abs_deviation

    if len(y) < 3:
        return NOISE_FLOOR
    return max(float(median_abs_deviation(np.diff(y), scale="normal")) / math.sqrt(2), NOISE_FLOOR)


def candidates(y: np.ndarray, min_runs: int) -> list[int]:
    """Change-point candidates of a log-time series by ruptures' PELT (L1 cost): the index of the
    first run of every new segment."""
    import ruptures as rpt

    n = len(y)
    if n < 2 * min_runs:
        return []
    algo = rpt.Pelt(model="l1", min_size=min_runs, jump=1).fit(y.reshape(-1, 1))
    bkps = algo.predict(pen=PEN_SCALE * noise_scale(y) * math.log(n))
    return [b for b in bkps if 0 < b < n]


def _worst_shift(before: np.ndarray, after: np.ndarray, sign: float) -> float:
    """The smallest signed shift of the medians when any one run is left out of either side."""
    out = sign * (float(np.median(after)) - float(np.median(before)))
    for side, other, flip in ((before, after, -1.0), (after, before, 1.0)):
        if len(side) < 2:
            continue
        for i in range(len(side)):
            m = float(np.median(np.delete(side, i)))
            out = min(out, sign * flip * (m - float(np.median(other))))
    return out


def _clocks(g: pd.DataFrame) -> dict[str, Any]:
    """Clock summary of some runs: median SM/memory MHz (before and after sampling), power, throttle."""
    def med(col: str) -> float | None:
        v = pd.to_numeric(g[col], errors="coerce").dropna()
        return None if v.empty else float(v.median())

    thr = sorted({t for col in ("throttle", "throttle_before") for s in g[col].dropna()
                  for t in str(s).split(",") if t})
    return {"sm_mhz": med("sm_mhz"), "sm_mhz_before": med("sm_mhz_before"), "mem_mhz": med("mem_mhz"),
            "power_w": med("power_w"), "throttle": thr, "runs": int(len(g))}


def _pooled(g: pd.DataFrame) -> list[float]:
    out: list[float] = []
    for s in g.samples:
        out += list(s or [])
    return out


def _methods(g: pd.DataFrame) -> str:
    return " | ".join(sorted({str(m) for m in g["method"].dropna()})) if "method" in g else ""


def _change(g: pd.DataFrame, gb: pd.DataFrame, ga: pd.DataFrame, kind: str, **kw: Any) -> Change:
    """A Change between the runs ``gb`` and ``ga`` of series ``g``; kind "method" when their timing
    methods differ."""
    mb, ma = _methods(gb), _methods(ga)
    return Change(series={k: g.iloc[0][k] for k in SERIES}, kind="method" if mb != ma else kind,
                  clocks_before=_clocks(gb), clocks_after=_clocks(ga), method_before=mb, method_after=ma,
                  **kw)


def _git_range(before: pd.Series, after: pd.Series) -> str:
    def short(s: Any) -> str:
        return str(s)[:10] if isinstance(s, str) and s else "?"

    return f"{short(before.git_sha)}..{short(after.git_sha)}"


def series_changes(g: pd.DataFrame, min_effect: float, alpha: float, min_runs: int = 2) -> list[Change]:
    """Confirmed changes (and a pending one) in one series' timed rows, oldest first."""
    g = g.sort_values("started_utc", kind="stable").reset_index(drop=True)
    n = len(g)
    if n < 2:
        return []
    y = np.log(g.median_s.to_numpy(float))
    out: list[Change] = []
    start = 0
    cps = candidates(y, min_runs)
    for i, b in enumerate(cps):
        end = cps[i + 1] if i + 1 < len(cps) else n
        before, after = y[start:b], y[b:end]
        ref = float(np.median(before))
        shift = float(np.median(after)) - ref
        ratio = math.exp(shift)
        if abs(ratio - 1) < min_effect:
            continue
        sign = 1.0 if shift > 0 else -1.0
        moved = int(np.sum(sign * (after - ref) >= math.log1p(min_effect / 2)))
        if moved < min_runs or moved * 2 <= len(after):
            continue
        need = math.log1p(min_effect) if sign > 0 else -math.log1p(-min_effect)
        if _worst_shift(before, after, sign) < need:
            continue  # one run on either side carries the change: an outlier, not a level shift
        gb, ga = g.iloc[max(start, b - CONFIRM_RUNS):b], g.iloc[b:min(end, b + CONFIRM_RUNS)]
        p = rank_test(_pooled(gb), _pooled(ga))
        if p is None:  # no raw samples stored: rank the run medians instead
            p = rank_test(gb.median_s.to_list(), ga.median_s.to_list())
        if p is None or p >= alpha:
            continue
        out.append(_change(g, gb, ga, "regression" if ratio > 1 else "improvement", index=b,
                           run_id=str(g.run_id.iloc[b]), started_utc=str(g.started_utc.iloc[b]),
                           before_median_s=math.exp(ref), after_median_s=math.exp(float(np.median(after))),
                           ratio=ratio, p_value=p, runs_before=b - start, runs_after=end - b,
                           current=end == n, git_range=_git_range(g.iloc[b - 1], g.iloc[b])))
        start = b
    # the newest run against the level it follows: pending until a second run confirms it
    if n - 1 > start:
        level = y[start:n - 1]
        ref = float(np.median(level))
        ratio = math.exp(y[-1] - ref)
        if abs(ratio - 1) >= min_effect:
            gb = g.iloc[max(start, n - 1 - CONFIRM_RUNS):n - 1]
            p = rank_test(_pooled(gb), _pooled(g.iloc[n - 1:]))
            if p is not None and p < alpha:
                out.append(_change(g, gb, g.iloc[n - 1:], "pending", index=n - 1,
                                   run_id=str(g.run_id.iloc[-1]), started_utc=str(g.started_utc.iloc[-1]),
                                   before_median_s=math.exp(ref), after_median_s=float(g.median_s.iloc[-1]),
                                   ratio=ratio, p_value=p, runs_before=n - 1 - start, runs_after=1,
                                   current=True, git_range=_git_range(g.iloc[-2], g.iloc[-1])))
    return out


def _cell(r: pd.Series) -> dict[str, Any]:
    return {**{k: r[k] for k in SERIES}, "status": r.status, "run_id": r.run_id,
            "message": str(r.message or ""), "git_sha": r.git_sha,
            "median_s": None if pd.isna(r.median_s) else float(r.median_s)}


def analyse(history: History, device: str, target_runs: list[str] | None, thresholds: Thresholds,
            min_runs: int = 2, window: int | None = None) -> dict[str, Any]:
    """The nightly report of one device as a JSON-able dict.

    ``target_runs``: the runs this nightly made (None: the device's newest run). Changes are found
    over the whole history (the newest ``window`` runs of each series when given); new/vanished
    cells and failures are judged on the target runs; ``blocking`` counts current, not ignored
    regressions of series the target runs measured, and new failures.
    """
    rows = history.rows[history.rows.device == device]
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    if target_runs is None:
        newest = rows.sort_values("started_utc").run_id.iloc[-1:] if len(rows) else []
        target_runs = list(newest)
    target = rows[rows.run_id.isin(target_runs)]
    earlier = rows[~rows.run_id.isin(target_runs)]
    perf = rows[(rows.status == "ok") & (rows["mode"] == "run") & rows.median_s.notna()]
    changes: list[Change] = []
    for _, g in perf.groupby(SERIES, dropna=False, sort=True):
        if window:
            g = g.sort_values("started_utc").tail(window)
        me, alpha, ignore = thresholds.for_series({k: g.iloc[0][k] for k in SERIES})
        for c in series_changes(g, me, alpha, min_runs):
            c.ignored = ignore
            changes.append(c)
    measured = {series_key(r) for _, r in target.iterrows()}
    prev = {series_key(r): r for _, r in earlier.sort_values("started_utc").iterrows()}
    failures, new_failures, fixed, new_cells = [], [], [], []
    for _, r in target.iterrows():
        k = series_key(r)
        p = prev.get(k)
        if r.status in BAD:
            (failures if p is not None and p.status in BAD else new_failures).append(_cell(r))
        elif p is not None and p.status in BAD:
            fixed.append(_cell(r))
        if p is None:
            new_cells.append(_cell(r))
    scope = {(r.op, r.backend) for _, r in target.iterrows()}
    vanished = [_cell(r) for k, r in sorted(prev.items(), key=lambda kv: tuple(map(str, kv[0])))
                if k not in measured and (r.op, r.backend) in scope]
    regs = [c for c in changes if c.kind == "regression"]
    blocking = [c for c in regs if c.current and not c.ignored
                and tuple(c.series[k] for k in SERIES) in measured]
    runs = sorted({str(r) for r in rows.run_id.dropna()})
    shas = [history.runs.get(r, {}).get("git_sha") for r in runs]
    dev_rec = {}
    for r in reversed(runs):
        dev_rec = history.runs.get(r, {}).get("devices", {}).get(device) or {}
        if dev_rec:
            break
    return {
        "generated_utc": now, "device": device, "device_record": dev_rec,
        "history": {"runs": len(runs), "first": runs[0] if runs else None, "last": runs[-1] if runs else None,
                    "git_range": f"{str(shas[0])[:10]}..{str(shas[-1])[:10]}" if shas else "",
                    "series": int(perf.groupby(SERIES, dropna=False).ngroups) if len(perf) else 0,
                    "skipped_files": [{"file": f, "reason": why} for f, why in history.skipped]},
        "target_runs": list(target_runs), "thresholds": thresholds.as_dict(), "min_runs": min_runs,
        "regressions": [c.as_dict() for c in regs],
        "improvements": [c.as_dict() for c in changes if c.kind == "improvement"],
        "pending": [c.as_dict() for c in changes if c.kind == "pending"],
        "method_changes": [c.as_dict() for c in changes if c.kind == "method"],
        "new_failures": new_failures, "failures": failures, "fixed": fixed,
        "new_cells": new_cells, "vanished_cells": vanished,
        "blocking": len(blocking) + len(new_failures),
    }


def _fmt_t(s: float | None) -> str:
    if s is None:
        return ""
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.3f} ms"


def _fmt_clk(c: dict[str, Any]) -> str:
    if not c or c.get("sm_mhz") is None and c.get("mem_mhz") is None:
        return "no clock reading"
    s = f"SM {c['sm_mhz']:.0f} MHz" if c.get("sm_mhz") is not None else "SM ?"
    if c.get("mem_mhz") is not None:
        s += f", mem {c['mem_mhz']:.0f} MHz"
    if c.get("power_w") is not None:
        s += f", {c['power_w']:.0f} W"
    return s + (f", throttle: {'+'.join(c['throttle'])}" if c.get("throttle") else "")


def to_markdown(rep: dict[str, Any]) -> str:
    """The report as Markdown (the .md beside the .json)."""
    h = rep["history"]
    L = [f"# solbench nightly: {rep['device']}, {rep['generated_utc']}", "",
         f"History: {h['runs']} runs ({h['first']} … {h['last']}, git {h['git_range']}), {h['series']} timed "
         f"series. Target run(s): {', '.join(rep['target_runs']) or 'none'}. Thresholds: min effect "
         f"{rep['thresholds']['min_effect']:.0%}, alpha {rep['thresholds']['alpha']} "
         f"({rep['thresholds']['source']}); a change needs {rep['min_runs']} runs after it.", ""]
    if rep.get("peaks"):
        L += [f"Peaks: {rep['peaks']}", ""]
    if rep.get("dashboard"):
        L += [f"Dashboard: {rep['dashboard']}", ""]
    L += [f"**{rep['blocking']} blocking** (current regressions of measured series + new failures).", ""]

    def changes(title: str, items: list[dict[str, Any]]) -> None:
        L.extend([f"## {title} ({len(items)})", ""])
        if not items:
            L.extend(["None.", ""])
            return
        L.extend(["| series | at run | before | after | ratio | confidence | runs b/a | git range | "
                  "clocks before | clocks after | current |",
                  "|---|---|---:|---:|---:|---:|---|---|---|---|---|"])
        for c in items:
            conf = "" if c["confidence"] is None else f"{c['confidence']:.4f}"
            cur = ("yes" if c["current"] else "no") + (" (ignored)" if c.get("ignored") else "")
            L.append(f"| {c['label']} | {c['run_id']} | {_fmt_t(c['before_median_s'])} | "
                     f"{_fmt_t(c['after_median_s'])} | {c['ratio']:.3f} | {conf} | {c['runs_before']}/"
                     f"{c['runs_after']} | {c['git_range']} | {_fmt_clk(c['clocks_before'])} | "
                     f"{_fmt_clk(c['clocks_after'])} | {cur} |")
            if c.get("kind") == "method":
                L.append(f"| ↳ method | {c['method_before']} → {c['method_after']} | | | | | | | | | |")
        L.append("")

    def cells(title: str, items: list[dict[str, Any]]) -> None:
        L.extend([f"## {title} ({len(items)})", ""])
        if not items:
            L.extend(["None.", ""])
            return
        L.extend(["| series | status | median | run | message |", "|---|---|---:|---|---|"])
        for c in items:
            label = " ".join(str(c[k]) for k in SERIES)
            msg = c["message"].replace("|", "\\|").replace("\n", " ")[:120]
            L.append(f"| {label} | {c['status']} | {_fmt_t(c['median_s'])} | {c['run_id']} | {msg} |")
        L.append("")

    changes("Regressions", rep["regressions"])
    cells("New failures", rep["new_failures"])
    changes("Improvements", rep["improvements"])
    changes("Pending (one run, unconfirmed)", rep["pending"])
    changes("Method changes (the timing protocol differs across the shift; never blocking)",
            rep.get("method_changes", []))
    cells("Still failing", rep["failures"])
    cells("Fixed", rep["fixed"])
    cells("New cells", rep["new_cells"])
    cells("Vanished cells", rep["vanished_cells"])
    sk = h["skipped_files"]
    L += [f"## Skipped run files ({len(sk)})", ""]
    L += [f"- `{s['file']}`: {s['reason']}" for s in sk] or ["None."]
    return "\n".join(L) + "\n"


def write_report(rep: dict[str, Any], out_dir: Path = REPORTS_DIR) -> list[Path]:
    """``<out_dir>/<date>-<device>.md`` and ``.json`` (atomic); returns both paths."""
    date = rep["generated_utc"][:10]
    base = Path(out_dir) / f"{date}-{rep['device']}"
    md, js = base.with_suffix(".md"), base.with_suffix(".json")
    res.atomic_write_text(md, to_markdown(rep))
    res.atomic_write_text(js, json.dumps(rep, indent=1, default=res._jsonable) + "\n")
    return [md, js]


# --- peaks refresh -------------------------------------------------------------------------------

def _versions(rec: dict[str, Any] | None) -> dict[str, Any]:
    rec = rec or {}
    return {"driver": rec.get("driver"), "backend_versions": rec.get("backend_versions") or {}}


def peaks_stale(peaks: dict[str, Any] | None, current: dict[str, Any] | None,
                at_peaks: dict[str, Any] | None, max_age_days: float,
                now: _dt.datetime | None = None) -> str | None:
    """Why a device's peaks must be measured again, or None if they are fresh.

    ``current``: the device record now; ``at_peaks``: the device record of the newest run made
    before the peaks were measured (None when there is none: versions cannot be compared).
    """
    if not peaks or not peaks.get("measured"):
        return "no peaks.json"
    missing = [k for k in sol.BANDWIDTH_KEYS if k not in peaks["measured"]]
    if missing:
        return f"no {', '.join(missing)} ceiling (peaks.json predates it)"
    now = now or _dt.datetime.now(_dt.UTC)
    try:
        when = _dt.datetime.fromisoformat(peaks["measured_utc"])
    except (KeyError, TypeError, ValueError):
        return "peaks.json has no measured_utc"
    age = (now - when).total_seconds() / 86400
    if age > max_age_days:
        return f"peaks are {age:.1f} days old (> {max_age_days:g})"
    if current and at_peaks:
        a, b = _versions(at_peaks), _versions(current)
        if a != b:
            diff = [k for k in ("driver",) if a[k] != b[k]]
            diff += [f"{be}" for be in sorted(set(a["backend_versions"]) | set(b["backend_versions"]))
                     if a["backend_versions"].get(be) != b["backend_versions"].get(be)]
            return f"versions changed since the peaks were measured: {', '.join(diff)}"
    return None


def device_record_at(history: History, device: str, when: str) -> dict[str, Any] | None:
    """The device record of the newest run of ``device`` started at or before ``when`` (ISO)."""
    t = pd.Timestamp(when)
    t = t.tz_localize("UTC") if t.tzinfo is None else t
    best, best_t = None, None
    for rec in history.runs.values():
        d = (rec.get("devices") or {}).get(device)
        if not d:
            continue
        st = pd.Timestamp(rec["started_utc"])
        st = st.tz_localize("UTC") if st.tzinfo is None else st
        if st <= t and (best_t is None or st > best_t):
            best, best_t = d, st
    return best


# --- the job -------------------------------------------------------------------------------------

@dataclass
class JobOptions:
    """What ``solbench nightly`` was asked to do (the CLI's options, validated there)."""

    results_dir: Path
    reports_dir: Path | None = None
    ops: list[str] | None = None
    backends: list[str] | None = None
    variants: list[str] | None = None
    cases: list[str] | None = None
    device: str = "all"
    size: str = "bench"
    timeout: float = 300.0
    run: bool = True
    peaks: bool = True
    peaks_max_age_days: float = 7.0
    thresholds: Thresholds = field(default_factory=Thresholds)
    min_runs: int = 2
    window: int | None = None
    dashboard_out: Path | None = None


def _solbench(args: list[str], log) -> int:
    """Run a ``solbench`` subcommand in a child process (its own workers, its own exit code)."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "suite.cli", *args]
    log(f"$ solbench {' '.join(args)}")
    return subprocess.run(cmd, cwd=res.ROOT).returncode


class SelectionError(ValueError):
    """An op, backend, variant, case or device the night cannot select (the message lists the
    valid names); raised before anything is measured."""


def current_devices(opt: JobOptions) -> dict[str, dict[str, Any]]:
    """Device records (driver, backend versions) of the devices the night's run will use, by
    planning that run with its filters: an unknown name raises SelectionError here, before any
    peak is measured (the run itself would only refuse it after the peaks)."""
    from suite.registry import discover
    from suite.runner import plan
    from suite.worker import Pool

    discover()
    pool = Pool()
    try:
        return plan(pool, opt.ops, opt.backends, opt.variants, opt.device, opt.size, check_only=True,
                    cases=opt.cases).devices
    except ValueError as e:
        raise SelectionError(str(e)) from e
    finally:
        pool.close()


def run_job(opt: JobOptions, log=print) -> tuple[int, list[Path]]:
    """The whole nightly on this machine; returns (exit code, report paths).

    1. peaks: re-measured per device when missing, older than ``peaks_max_age_days``, or when the
       driver/backend versions differ from those of the newest run made before they were measured;
    2. the suite (``solbench run --devices <device> --replicate --size <size>``, every
       op/backend/variant unless filtered; every card all of it), run files into ``results_dir``;
    3. detection over the history (committed ``results/`` + ``results_dir``), one report per device
       under ``reports_dir`` (default ``<results_dir>/reports``);
    4. the dashboard, when ``dashboard_out`` is set.
    Exit code 1 on a blocking finding (current regression of a measured series, new failure), 0
    otherwise; 2 when the run produced no run file.
    """
    results_dir = Path(opt.results_dir)
    roots = res._roots([res.COMMITTED_DIR, results_dir])
    before = {p.resolve() for p in res.run_files(roots)}
    peaks_note: dict[str, str] = {}
    if opt.run:
        selected = current_devices(opt)
        if opt.peaks:
            hist = load_history_quiet(roots)
            for slug, rec in selected.items():
                # a card without its own inherits another card's of its model and driver
                # (sol.load_peaks): those are judged stale or not by the card that measured them
                pk = sol.load_peaks(slug, results_dir, model=rec.get("model"), driver=rec.get("driver"))
                when = (pk or {}).get("measured_utc")
                src = (pk or {}).get("inherited_from") or slug
                at = device_record_at(hist, src, when) if when else None
                why = peaks_stale(pk, rec, at, opt.peaks_max_age_days)
                if why:
                    log(f"peaks of {slug}: {why}: measuring")
                    rc = _solbench(["peaks", "--device", slug, "--results-dir", str(results_dir)], log)
                    peaks_note[slug] = f"re-measured ({why})" + ("" if rc == 0 else f", exit {rc}")
                else:
                    peaks_note[slug] = f"kept (measured {pk['measured_utc']}" + (
                        f" on {src}, inherited)" if src != slug else ")")
        # --replicate: every card runs the whole suite, so each card's series has a night per night
        args = ["run", "--devices", opt.device, "--replicate", "--size", opt.size, "--timeout",
                str(opt.timeout), "--results-dir", str(results_dir)]
        for flag, vals in (("--op", opt.ops), ("--backend", opt.backends), ("--variant", opt.variants),
                           ("--case", opt.cases)):
            for v in vals or []:
                args += [flag, v]
        rc = _solbench(args, log)
        log(f"solbench run exited {rc} (1: some kernel failed; those rows are in the report)")
    hist = load_history_quiet(roots)
    if opt.run:
        new = [p for p in res.run_files(roots) if p.resolve() not in before]
        if not new:
            log("the run wrote no run file: nothing to analyse")
            return 2, []
        target = sorted({read_run_id(p) for p in new})
        devices = sorted({p.parent.name for p in new})
    else:
        target = None
        devices = sorted(set(hist.rows.device.dropna()))
        if opt.device not in ("all", "gpu", "cpu"):
            devices = [d for d in devices if d in opt.device.split(",")]
        elif opt.device in ("gpu", "cpu"):
            kinds = {d: (hist.runs.get(r, {}).get("devices", {}).get(d) or {}).get("kind")
                     for r in hist.runs for d in hist.runs[r]["devices"]}
            devices = [d for d in devices if kinds.get(d) == opt.device]
        if not devices:
            known = sorted(set(hist.rows.device.dropna()))
            raise SelectionError(f"no run of device {opt.device!r} in the history "
                                 f"({', '.join(map(str, roots))}); devices there: "
                                 f"{', '.join(known) or 'none'}")
    paths: list[Path] = []
    blocking = 0
    dash = None
    reports_dir = Path(opt.reports_dir) if opt.reports_dir else results_dir / "reports"
    reps = []
    for dev in devices:
        dev_runs = set(hist.rows[hist.rows.device == dev].run_id)
        mine = None if target is None else sorted(set(target) & dev_runs)
        rep = analyse(hist, dev, mine, opt.thresholds, opt.min_runs, opt.window)
        rep["peaks"] = peaks_note.get(dev, "not checked (--no-run or --no-peaks)")
        rep["command"] = "solbench nightly" + ("" if opt.run else " --no-run")
        reps.append(rep)
    if opt.dashboard_out:
        from dashboard.build import build

        dash = build(roots, opt.dashboard_out, [reports_dir])
    for rep in reps:
        if dash:
            rep["dashboard"] = str(dash.relative_to(res.ROOT)) if dash.is_relative_to(res.ROOT) else str(dash)
        paths += write_report(rep, reports_dir)
        blocking += rep["blocking"]
        log(f"{rep['device']}: {len(rep['regressions'])} regression(s), {len(rep['new_failures'])} new "
            f"failure(s), {len(rep['improvements'])} improvement(s), {len(rep['pending'])} pending; "
            f"{rep['blocking']} blocking")
    if dash:  # again, so the page carries this night's markers
        build(roots, opt.dashboard_out, [reports_dir])
        log(f"dashboard: {dash}")
    return (1 if blocking else 0), paths


def read_run_id(path: Path) -> str:
    return str(res.read_run(path)["run"]["id"])


def load_history_quiet(roots: list[Path]) -> History:
    """The history; skipped files still warn (once each) and are listed in every report."""
    from suite.history import load_history

    return load_history(roots)
