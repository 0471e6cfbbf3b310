"""Dump the PTX NVIDIA's OpenCL compiler returns for an op's kernels, with ptxas's resource report
(registers, spills, local memory) where ptxas is on PATH or under /usr/local/cuda/bin.

    python scripts/cl_ptx.py softmax --case 65536x1024 --out DIR
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("op")
    ap.add_argument("--case")
    ap.add_argument("--out", default=".")
    ap.add_argument("--arch", default="sm_90")
    a = ap.parse_args()
    from suite.inspection import inspect_kernels

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cuda_ptxas = Path("/usr/local/cuda/bin/ptxas")
    ptxas = shutil.which("ptxas") or (str(cuda_ptxas) if cuda_ptxas.exists() else None)
    for r in inspect_kernels(a.op, "opencl", case_name=a.case):
        text = r.get("stages", {}).get("binary", "")
        name = f"cl-{a.op}-{r['variant']}-{r['entry']}"
        (out / f"{name}.ptx").write_text(text or r.get("error", ""))
        rep = "no ptxas" if not ptxas else subprocess.run(
            [ptxas, "-v", f"-arch={a.arch}", "-o", "/dev/null", str(out / f"{name}.ptx")],
            capture_output=True, text=True).stderr
        nlocal = text.count("ld.local") + text.count("st.local")
        print(f"== {name}: {nlocal} local ld/st in PTX\n{rep.strip()}")


if __name__ == "__main__":
    main()
