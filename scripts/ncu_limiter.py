"""What limits a kernel? Nsight Compute's own reading of one cold launch (L2 flushed before it).

For each ``op/backend/variant/case`` key (variant: a registered one, or a configuration of
scripts/probe.py by its label, e.g. ``softmax/triton/split_row ahead=0/4096x131072``): a child
process builds the kernel, checks it against the reference (a wrong kernel is not profiled), and
launches it once inside an NVTX range after an L2 flush; ``ncu --clock-control none`` (the clocks
are left alone) profiles the kernels of that range with the sections that name a limiter:
SpeedOfLight (DRAM / SM throughput), MemoryWorkloadAnalysis (with its tables: requests, sectors and
hit rates per memory operation), ComputeWorkloadAnalysis (pipe utilisation), Occupancy, LaunchStats
(registers, shared memory, waves), WarpStateStats and SchedulerStats (issue slots, stall reasons),
plus the headline and stall metrics by name — all from the same launch (one exported report, read
as the details page and as CSV). Prints a short table of the headline metrics and writes ncu's full
details page per key under --out.

    python3 scripts/ncu_limiter.py --out DIR KEY [KEY ...]
"""

from __future__ import annotations

import argparse
import csv
import io
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

SECTIONS = ["SpeedOfLight", "MemoryWorkloadAnalysis", "MemoryWorkloadAnalysis_Tables",
            "ComputeWorkloadAnalysis", "Occupancy", "LaunchStats", "WarpStateStats", "SchedulerStats"]
#: headline metrics of the table (ncu names; all in the sections above or cheap)
METRICS = {
    "gpu__time_duration.sum": "time",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM %",
    "dram__bytes_read.sum": "DRAM read",
    "lts__throughput.avg.pct_of_peak_sustained_elapsed": "L2 %",
    "lts__t_sectors.sum": "L2 sectors",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "SM %",
    "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue %",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy %",
    "launch__registers_per_thread": "regs",
    "launch__waves_per_multiprocessor": "waves",
    "smsp__cycles_active.avg.per_second": "SM clock",
}
#: stall reasons, cycles per issued instruction (the WarpStateStats breakdown), in the details page
STALLS = [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio" for r in (
    "long_scoreboard", "short_scoreboard", "wait", "math_pipe_throttle", "mio_throttle", "lg_throttle",
    "barrier", "membar", "not_selected", "selected", "dispatch_stall", "no_instruction", "tex_throttle",
    "drain", "branch_resolving", "imc_miss", "misc", "sleeping")]
from crosscheck import NVTX  # noqa: E402  (the range ncu_child puts each cold launch in)


def profile(key: str, out: Path) -> list[dict]:
    exe = shutil.which("ncu")
    if not exe:
        raise RuntimeError("ncu not on PATH")
    base = [exe, "--clock-control", "none", "--nvtx", "--nvtx-include", f"{NVTX}/",
            "--target-processes", "all"]
    secs = [a for s in SECTIONS for a in ("--section", s)]
    me = [sys.executable, __file__, "--child", key]
    safe = "".join(ch if ch.isalnum() else "_" for ch in key)
    # one profiled launch (one child process, so one build and one autotuner pick), exported, then
    # read twice: the details page for people, the same page as CSV for the table
    rep = out / f"ncu-{safe}"
    metrics = ["--metrics", ",".join([*STALLS, *METRICS])]
    run = subprocess.run(base + secs + metrics + ["--export", str(rep), "--force-overwrite"] + me,
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    report = rep.with_name(rep.name + ".ncu-rep")
    if not report.exists():
        raise RuntimeError(f"ncu wrote no report (exit {run.returncode}): {(run.stdout + run.stderr)[-600:]}")
    try:
        page = [exe, "--import", str(report), "--page", "details"]
        # the sections' tables too (an ncu without --print-details: the headers alone)
        details = subprocess.run(page + ["--print-details", "all"], capture_output=True, text=True,
                                 timeout=300)
        if details.returncode:
            details = subprocess.run(page, capture_output=True, text=True, timeout=300)
        (out / f"ncu-{safe}.txt").write_text(details.stdout + details.stderr[-4000:])
        r = subprocess.run([exe, "--import", str(report), "--page", "details", "--csv"], capture_output=True,
                           text=True, timeout=300)
    finally:
        report.unlink()
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith('"')]
    if not lines:
        raise RuntimeError(f"ncu gave no rows (exit {r.returncode}): {(r.stdout + r.stderr)[-600:]}")
    rows: dict[str, dict] = {}
    for rec in csv.DictReader(io.StringIO("\n".join(lines))):
        k = f"{rec.get('ID')} {rec.get('Kernel Name', '')[:60]}"
        rows.setdefault(k, {"kernel": k})[METRICS.get(rec["Metric Name"], rec["Metric Name"])] = \
            f"{rec['Metric Value']} {rec.get('Metric Unit', '')}".strip()
    return list(rows.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("keys", nargs="*")
    ap.add_argument("--child")
    ap.add_argument("--out", type=Path, default=Path("."))
    a = ap.parse_args()
    if a.child:
        from crosscheck import ncu_child

        ncu_child(a.child, 1)  # build, check, warm up, then one cold launch inside the range
        return
    a.out.mkdir(parents=True, exist_ok=True)
    cols = list(METRICS.values())
    table = ["| key | kernel | " + " | ".join(cols) + " |", "|---|---|" + "---:|" * len(cols)]
    for key in a.keys:
        try:
            rows = profile(key, a.out)
        except Exception as e:  # noqa: BLE001 - a key that cannot be profiled is a row saying why
            rows = [{"kernel": f"ERROR {type(e).__name__}: {str(e)[:300]}"}]
        for row in rows:
            table.append(f"| {key} | {row['kernel']} | " + " | ".join(row.get(c, "") for c in cols) + " |")
        print(table[-1], flush=True)
    (a.out / "ncu_limiter.md").write_text("\n".join(table) + "\n")
    print("\n".join(table))


if __name__ == "__main__":
    main()
