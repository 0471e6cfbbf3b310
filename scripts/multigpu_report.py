"""Issue 13's verification, from the JSON of three runs of one sweep (``--json`` of
``solbench run``): on one GPU, spread over the host's GPUs, and replicated on each.

    python scripts/multigpu_report.py ONE_GPU.json SPREAD.json [REPLICATE.json]

Prints: each run's wall time and rows per card; the spread run's wall time against the one-GPU
run's; that every row names exactly one card, known to the run, with % SOL; and, per kernel
(op, backend, variant, case), the medians on each card — the replicated run's two cards against
each other, and the spread run's rows against the one-GPU run's, split by the card they ran on
(the same card twice measures run-to-run noise, the other card adds the card-to-card spread).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter


def load(path: str) -> dict:
    doc = json.load(open(path))
    doc["rows"] = [r for r in doc["results"] if r.get("device") not in (None, "-")]
    return doc


def key(r: dict) -> tuple:
    return r["op"], r["backend"], r["variant"], r["case"]


def med(r: dict) -> float | None:
    return (r.get("timing") or {}).get("median_s") if r.get("status") == "ok" else None


def spread_line(name: str, ratios: list[float]) -> str:
    if not ratios:
        return f"{name}: no pairs"
    q = statistics.quantiles(ratios, n=20) if len(ratios) > 1 else [ratios[0]] * 19
    dev = sorted(abs(x - 1) for x in ratios)
    return (f"{name}: {len(ratios)} kernels, median ratio {statistics.median(ratios):.4f}, 5–95 % "
            f"{q[0]:.3f}–{q[-1]:.3f}, |ratio − 1| median {100 * statistics.median(dev):.2f} %, "
            f"max {100 * dev[-1]:.1f} %")


def main(argv: list[str]) -> int:
    one, spread = load(argv[0]), load(argv[1])
    rep = load(argv[2]) if len(argv) > 2 else None
    ok = True
    for name, d in (("one GPU", one), ("spread", spread), ("replicate", rep)):
        if d is None:
            continue
        run, devs = d["run"], d["devices"]
        per = Counter(r["device"] for r in d["rows"])
        bad = [r for r in d["rows"] if r["device"] not in devs or devs[r["device"]].get("attribution")
               or (r["status"] == "ok" and r.get("mode") == "run" and r.get("pct_sol") is None)]
        status = Counter(r["status"] for r in d["rows"])
        sha = run.get("git_sha", "")[:7] + ("+dirty" if run.get("git_dirty") else "")
        print(f"{name:9}: run {run['id']} ({sha}), {run.get('devices_mode')}, "
              f"wall {run.get('wall_s', 0):.1f} s, {len(d['rows'])} rows of "
              f"{run.get('rows_planned')} planned, {dict(status)}")
        for slug, n in sorted(per.items()):
            rec = devs.get(slug, {})
            inh = {(r.get("peaks_used") or {}).get("inherited_from") for r in d["rows"]
                   if r["device"] == slug}
            print(f"           {slug} ({rec.get('ordinal')}, {rec.get('pci_bus_id')}, {rec.get('uuid')}): "
                  f"{n} rows, backends {sorted(rec.get('seen_as', {}))}, "
                  f"peaks inherited from {sorted(map(str, inh))}")
        if bad:
            ok = False
            print(f"           {len(bad)} rows not attributed to one known card or without % SOL: "
                  f"{[(r['device'], *key(r)) for r in bad[:5]]}")
    w1, ws = one["run"].get("wall_s"), spread["run"].get("wall_s")
    if w1 and ws:
        print(f"wall time, spread over {len({r['device'] for r in spread['rows']})} GPUs / one GPU: "
              f"{ws:.1f} / {w1:.1f} s = {ws / w1:.3f} (target ≤ 0.6)")
    base = {key(r): (r["device"], med(r)) for r in one["rows"]}
    same, other = [], []
    for r in spread["rows"]:
        b = base.get(key(r))
        if b and b[1] and med(r):
            (same if r["device"] == b[0] else other).append(med(r) / b[1])
    print(spread_line("spread vs one GPU, same card", same))
    print(spread_line("spread vs one GPU, other card", other))
    if rep:
        by: dict[tuple, dict[str, float]] = {}
        for r in rep["rows"]:
            if med(r):
                by.setdefault(key(r), {})[r["device"]] = med(r)
        cards = sorted({r["device"] for r in rep["rows"]},
                       key=lambda s: rep["devices"][s].get("ordinal") or s)
        pairs = [(k, v[cards[1]] / v[cards[0]]) for k, v in by.items() if len(cards) > 1 and len(v) == 2]
        print(spread_line(f"replicate, {cards[-1]} / {cards[0]}", [x for _, x in pairs]))
        for k, x in sorted(pairs, key=lambda p: -abs(p[1] - 1))[:8]:
            print(f"           {'/'.join(k)}: {x:.3f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
