"""``solbench compare A B``: two runs, two git revisions' latest runs, or two result folders,
series by series (device, op, backend, variant, case, dtype).

For every series present on either side: the before/after medians, their ratio (after / before,
time: > 1 is slower), a two-sided Mann–Whitney U test (scipy) on the stored timing samples, and a
verdict. A change counts only when it is significant (p < alpha) *and* at least the minimum effect
(default 5 %; per series in a YAML file). New correctness failures and vanished/new cells are
verdicts too. ``has_blocking`` is true on a significant regression or a new failure (exit 1).

Thresholds file (YAML; ``results/thresholds.yaml`` when present)::

    default: {min_effect: 0.05, alpha: 0.01}
    series:                      # first match wins; fnmatch patterns on any series field
      - match: {device: "cpu-*", backend: webgpu}
        min_effect: 0.15         # lavapipe timings wander more
      - match: {op: scan, variant: cupy}
        ignore: true             # reported, never blocking
"""

from __future__ import annotations

import fnmatch
import json
import math
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from suite import results as res
from suite.history import BAD, SERIES, History, Roots, latest_per_series, load_history, series_key

DEFAULT_MIN_EFFECT = 0.05
DEFAULT_ALPHA = 0.01
DEFAULT_THRESHOLDS = res.COMMITTED_DIR / "thresholds.yaml"
#: fewest samples per side for the rank test
MIN_SAMPLES = 3

#: verdicts, in the order a report lists them
VERDICTS = ("new failure", "regression", "still failing", "fixed", "improvement", "method changed",
            "not significant", "unchanged", "new", "vanished", "untimed")
BLOCKING = ("new failure", "regression")


@dataclass
class Rule:
    match: dict[str, str]
    min_effect: float | None = None
    alpha: float | None = None
    ignore: bool = False

    def applies(self, key: dict[str, Any]) -> bool:
        return all(fnmatch.fnmatchcase(str(key.get(k, "")), str(p)) for k, p in self.match.items())


@dataclass
class Thresholds:
    """Minimum effect and significance level, per series by the first matching rule."""

    min_effect: float = DEFAULT_MIN_EFFECT
    alpha: float = DEFAULT_ALPHA
    rules: list[Rule] = field(default_factory=list)
    source: str = "defaults"

    def for_series(self, key: dict[str, Any]) -> tuple[float, float, bool]:
        """(min_effect, alpha, ignore) for one series."""
        for r in self.rules:
            if r.applies(key):
                return (self.min_effect if r.min_effect is None else r.min_effect,
                        self.alpha if r.alpha is None else r.alpha, r.ignore)
        return self.min_effect, self.alpha, False

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "min_effect": self.min_effect, "alpha": self.alpha,
                "rules": [r.__dict__ for r in self.rules]}


def load_thresholds(path: Path | str | None = None, min_effect: float | None = None,
                    alpha: float | None = None) -> Thresholds:
    """Thresholds from a YAML file (``path``, else ``results/thresholds.yaml`` if present); the
    ``min_effect``/``alpha`` arguments override the file's defaults."""
    import yaml

    t = Thresholds()
    p = Path(path) if path else DEFAULT_THRESHOLDS
    if path and not p.is_file():
        raise ValueError(f"thresholds file {p} not found")
    if p.is_file():
        doc = yaml.safe_load(p.read_text()) or {}
        if not isinstance(doc, dict):
            raise ValueError(f"{p}: expected a mapping with 'default' and 'series'")
        d = doc.get("default") or {}
        t.min_effect = float(d.get("min_effect", t.min_effect))
        t.alpha = float(d.get("alpha", t.alpha))
        for i, s in enumerate(doc.get("series") or []):
            m = s.get("match") or {}
            bad = set(m) - set(SERIES)
            if bad:
                raise ValueError(f"{p}: series[{i}].match has unknown field(s) {sorted(bad)}; "
                                 f"valid: {', '.join(SERIES)}")
            t.rules.append(Rule(match={k: str(v) for k, v in m.items()},
                                min_effect=None if s.get("min_effect") is None else float(s["min_effect"]),
                                alpha=None if s.get("alpha") is None else float(s["alpha"]),
                                ignore=bool(s.get("ignore", False))))
        t.source = str(p)
    if min_effect is not None:
        t.min_effect = min_effect
    if alpha is not None:
        t.alpha = alpha
    return t


def rank_test(before: list[float] | np.ndarray, after: list[float] | np.ndarray) -> float | None:
    """Two-sided Mann–Whitney U p-value of two sample sets, or None with too few samples."""
    from scipy.stats import mannwhitneyu

    a, b = np.asarray(before, float), np.asarray(after, float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if len(a) < MIN_SAMPLES or len(b) < MIN_SAMPLES:
        return None
    if np.all(a == a[0]) and np.all(b == b[0]):  # constant sides: identical or trivially apart
        return 1.0 if a[0] == b[0] else 0.0
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def judge(before_median: float, after_median: float, p: float | None, min_effect: float,
          alpha: float) -> str:
    """Verdict of a timed series on both sides (times: a higher after-median is slower)."""
    ratio = after_median / before_median
    if abs(ratio - 1.0) < min_effect:
        return "unchanged"
    if p is None or p >= alpha:
        return "not significant"
    return "regression" if ratio > 1.0 else "improvement"


def _clock(row: pd.Series | None) -> dict[str, Any]:
    if row is None:
        return {}
    out = {k: row.get(k) for k in ("sm_mhz_before", "sm_mhz", "mem_mhz", "power_w", "throttle")}
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def compare_rows(before: pd.DataFrame, after: pd.DataFrame, thresholds: Thresholds) -> list[dict[str, Any]]:
    """One entry per series of either side (each side: at most one row per series)."""
    b = {series_key(r): r for _, r in latest_per_series(before).iterrows()}
    a = {series_key(r): r for _, r in latest_per_series(after).iterrows()}
    out = []
    for key in sorted(set(b) | set(a), key=lambda k: tuple(str(x) for x in k)):
        rb, ra = b.get(key), a.get(key)
        sk = dict(zip(SERIES, key, strict=True))
        min_effect, alpha, ignore = thresholds.for_series(sk)
        e: dict[str, Any] = {**sk, "before_status": None if rb is None else rb.status,
                             "after_status": None if ra is None else ra.status,
                             "before_median_s": None, "after_median_s": None, "ratio": None,
                             "p_value": None, "min_effect": min_effect, "alpha": alpha, "ignored": ignore,
                             "before_run": None if rb is None else rb.run_id,
                             "after_run": None if ra is None else ra.run_id,
                             "before_git": None if rb is None else rb.git_sha,
                             "after_git": None if ra is None else ra.git_sha,
                             "clocks_before": _clock(rb), "clocks_after": _clock(ra),
                             "message": "" if ra is None or ra.status == "ok" else str(ra.message or "")}
        timed = [r is not None and r.status == "ok" and r["mode"] == "run" and _num(r.median_s)
                 for r in (rb, ra)]
        if rb is not None and timed[0]:
            e["before_median_s"] = float(rb.median_s)
        if ra is not None and timed[1]:
            e["after_median_s"] = float(ra.median_s)
        if ra is None:
            e["verdict"] = "vanished"
        elif ra.status in BAD:
            e["verdict"] = "still failing" if rb is not None and rb.status in BAD else "new failure"
        elif rb is None:
            e["verdict"] = "new"
        elif rb.status in BAD:
            e["verdict"] = "fixed"
        elif all(timed):
            e["ratio"] = e["after_median_s"] / e["before_median_s"]
            e["p_value"] = rank_test(rb.samples, ra.samples)
            e["verdict"] = judge(e["before_median_s"], e["after_median_s"], e["p_value"], min_effect, alpha)
            if e["verdict"] in ("regression", "improvement") and rb.get("method") != ra.get("method"):
                # the timer, start rule or flush differ (history.timing_method): not the kernel
                e["verdict"] = "method changed"
                e["message"] = f"{rb.get('method')} → {ra.get('method')}"
        else:
            e["verdict"] = "untimed"
        out.append(e)
    return out


@dataclass
class Side:
    """One side of a comparison: a label and its rows (at most one per series)."""

    label: str
    rows: pd.DataFrame
    git_sha: str | None = None


def _git_sha(rev: str) -> str | None:
    try:
        p = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=res.ROOT,
                           capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() or None


def resolve(spec: str, root: Roots = None, history: History | None = None) -> Side:
    """A run file, a result folder, a run id (or its unique suffix) or a git revision → its rows.

    ``root``: where run ids and revisions are looked up (None: the committed and the user's results).
    Folders and revisions give the newest row of each series (a revision: of runs made at it).
    Raises ValueError naming what was tried.
    """
    p = Path(spec)
    if p.is_file():
        h = load_history(files=[p])
        if h.skipped:
            raise ValueError(f"{spec}: unreadable run file ({h.skipped[0][1]})")
        return Side(str(p), h.rows, h.rows.git_sha.iloc[0] if len(h.rows) else None)
    if p.is_dir():
        h = load_history(p)
        return Side(str(p), latest_per_series(h.rows))
    h = history if history is not None else load_history(root)
    df = h.rows
    ids = sorted({r for r in df.run_id.dropna().unique() if r == spec or str(r).endswith(spec)})
    if len(ids) == 1:
        rows = df[df.run_id == ids[0]]
        return Side(f"run {ids[0]}", rows, rows.git_sha.iloc[0])
    if len(ids) > 1:
        raise ValueError(f"{spec!r} matches several runs: {', '.join(ids)}")
    sha = _git_sha(spec)
    if sha:
        rows = df[df.git_sha.fillna("").astype(str) == sha]
        if rows.empty:
            raise ValueError(f"git revision {spec} ({sha[:10]}) has no runs in the history")
        return Side(f"{spec} ({sha[:10]})", latest_per_series(rows), sha)
    raise ValueError(f"{spec!r} is not a run file, a result folder, a run id in the history, "
                     "or a git revision")


def compare(a: str, b: str, root: Roots = None,
            thresholds: Thresholds | None = None) -> dict[str, Any]:
    """The whole comparison as a JSON-able dict: sides, thresholds, entries, counts, blocking."""
    th = thresholds or load_thresholds()
    needs_history = not (Path(a).exists() and Path(b).exists())
    h = load_history(root) if needs_history else None
    sa, sb = resolve(a, root, h), resolve(b, root, h)
    entries = compare_rows(sa.rows, sb.rows, th)
    counts = {v: sum(e["verdict"] == v for e in entries) for v in VERDICTS}
    blocking = [e for e in entries if e["verdict"] in BLOCKING and not e["ignored"]]
    return {"before": {"label": sa.label, "git_sha": sa.git_sha},
            "after": {"label": sb.label, "git_sha": sb.git_sha},
            "thresholds": th.as_dict(), "entries": entries, "counts": counts,
            "blocking": len(blocking), "has_blocking": bool(blocking)}


def fmt_time(s: float | None) -> str:
    if s is None:
        return ""
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.3f} ms"


def fmt_ratio(r: float | None) -> str:
    return "" if r is None else f"{r:.3f} ({(r - 1) * 100:+.1f} %)"


def fmt_p(p: float | None) -> str:
    return "" if p is None else f"{p:.2g}"


def to_markdown(result: dict[str, Any], only_changes: bool = False) -> str:
    """A Markdown table for a CI comment (``only_changes``: leave unchanged series out)."""
    lines = [f"**solbench compare** `{result['before']['label']}` → `{result['after']['label']}`  ",
             "min effect {min_effect:.0%}, alpha {alpha} ({source}); ".format(**result["thresholds"])
             + ", ".join(f"{n} {v}" for v, n in result["counts"].items() if n), "",
             "| verdict | device | op | backend | variant | case | dtype | before | after | ratio | p |",
             "|---|---|---|---|---|---|---|---:|---:|---:|---:|"]
    order = {v: i for i, v in enumerate(VERDICTS)}
    for e in sorted(result["entries"], key=lambda e: order[e["verdict"]]):
        if only_changes and e["verdict"] in ("unchanged", "not significant", "untimed"):
            continue
        verdict = e["verdict"] + (" (ignored)" if e["ignored"] and e["verdict"] in BLOCKING else "")
        if e["message"]:
            verdict += f": {e['message'][:80]}"
        lines.append(f"| {verdict} | {e['device']} | {e['op']} | {e['backend']} | {e['variant']} | "
                     f"{e['case']} | {e['dtype']} | {fmt_time(e['before_median_s'])} | "
                     f"{fmt_time(e['after_median_s'])} | {fmt_ratio(e['ratio'])} | {fmt_p(e['p_value'])} |")
    return "\n".join(lines) + "\n"


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=1, default=res._jsonable) + "\n"
