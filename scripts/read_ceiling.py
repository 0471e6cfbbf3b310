"""Which form of a plain CUDA read gets closest to the bandwidth ceiling at a GEMV's byte count?

scripts/size_ceiling.py times torch's reads (``torch.sum``, cuBLAS's GEMV) of each gemv_lowbit case's
bytes; this times our own read kernels (scripts/read_ceiling.cu: grid-stride 16-byte loads with
1–16 in flight per thread, the no-L1/256-byte-L2 form, contiguous chunks per block, TMA bulk copies
into a shared-memory ring) of the same byte counts with the harness's protocol
(suite.timing.measure: cold, L2 read-flushed, median), plus an empty kernel: the timed window's
fixed cost. Each form is checked first (the XOR of every word it read against the host's). One
JSON file (atomic) under --out. ``--backend opencl`` / ``webgpu``: the plain-load forms in OpenCL C
(scripts/read_ceiling.cl, with the full-grid empty launches) or WGSL (scripts/read_ceiling.wgsl),
timed by that backend's sample — what a vendor's OpenCL or WebGPU path allows at the same byte
counts (they run on PoCL and lavapipe too); a size a backend cannot hold in one buffer or binding
is left out, with the reason.

    python scripts/read_ceiling.py [--backend cuda|opencl|webgpu] [--out DIR] [--cap SECONDS]
                                   [--sizes BYTES,...] [--only REGEX]

Without a CUDA GPU (the compile-only NVRTC device) every CUDA form is compiled, nothing is timed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: label → (entry, defines, blocks per SM, threads per block); rd_bulk's ring is dynamic shared memory
FORMS: dict[str, tuple[str, dict, int, int]] = {
    "empty": ("rd_empty", {}, 0, 32),
    # no reads either, a full grid of work-groups with static local memory (GEMV fused_packed's
    # OpenCL launch shape: two per SM of 288 threads, 34 KiB): the launch's fixed cost in each dialect
    "empty grid 2x288": ("rd_lmem", {"LMEM": 16}, 2, 288),
    "empty grid lmem34K 2x288": ("rd_lmem", {"LMEM": 34848}, 2, 288),
    "ldg u1 2x512": ("rd_ldg", {"U": 1}, 2, 512),
    "ldg u4 2x512": ("rd_ldg", {"U": 4}, 2, 512),
    "ldg u8 2x512": ("rd_ldg", {"U": 8}, 2, 512),
    "ldg u4 4x256": ("rd_ldg", {"U": 4}, 4, 256),
    "ldg u16 1x256": ("rd_ldg", {"U": 16}, 1, 256),
    "ldg u8 8x256": ("rd_ldg", {"U": 8}, 8, 256),
    "nc u4 2x512": ("rd_ldg", {"U": 4, "NC": 1}, 2, 512),
    "nc u8 2x512": ("rd_ldg", {"U": 8, "NC": 1}, 2, 512),
    "chunk u4 2x512": ("rd_ldg", {"U": 4, "CHUNK": 1}, 2, 512),
    "bulk 4x16K 1x256": ("rd_bulk", {"STAGES": 4, "STAGE_BYTES": 16384}, 1, 256),
    "bulk 8x16K 1x256": ("rd_bulk", {"STAGES": 8, "STAGE_BYTES": 16384}, 1, 256),
    "bulk 4x32K 1x256": ("rd_bulk", {"STAGES": 4, "STAGE_BYTES": 32768}, 1, 256),
    "bulk 4x32K chunk 1x256": ("rd_bulk", {"STAGES": 4, "STAGE_BYTES": 32768, "CHUNK": 1}, 1, 256),
    "bulk 4x33K chunk 1x288": ("rd_bulk", {"STAGES": 4, "STAGE_BYTES": 33792, "CHUNK": 1}, 1, 288),
    "bulk 4x33K 1x288": ("rd_bulk", {"STAGES": 4, "STAGE_BYTES": 33792}, 1, 288),
    "bulk 6x32K 1x512": ("rd_bulk", {"STAGES": 6, "STAGE_BYTES": 32768}, 1, 512),
    "bulk 4x16K 2x256": ("rd_bulk", {"STAGES": 4, "STAGE_BYTES": 16384}, 2, 256),
    "bulk 2x32K 3x256": ("rd_bulk", {"STAGES": 2, "STAGE_BYTES": 32768}, 3, 256),
    # a GEMV tile's chunk: 16 copies of 512 bytes, contiguous or from 16 rows of 8 KiB (K = 16384
    # int4), issued by one thread or by 16 lanes
    "bulk 8x8K seg512 1x256": ("rd_bulk", {"STAGES": 8, "STAGE_BYTES": 8192, "SEG": 512}, 1, 256),
    "bulk 8x8K rows 1x256": ("rd_bulk", {"STAGES": 8, "STAGE_BYTES": 8192, "SEG": 512, "ROWB": 8192}, 1, 256),
    "bulk 8x8K rows par 1x256": ("rd_bulk", {"STAGES": 8, "STAGE_BYTES": 8192, "SEG": 512, "ROWB": 8192,
                                             "PAR": 1}, 1, 256),
    "bulk 8x8K 1x256": ("rd_bulk", {"STAGES": 8, "STAGE_BYTES": 8192}, 1, 256),
    "bulk 4x32K rows2K 1x256": ("rd_bulk", {"STAGES": 4, "STAGE_BYTES": 32768, "SEG": 2048, "ROWB": 8192},
                                1, 256),
}


#: the forms read_ceiling.cl and .wgsl both have (no PTX: plain loads only)
PLAIN_FORMS = [f for f, (entry, d, _, _) in FORMS.items()
               if entry in ("rd_empty", "rd_ldg") and not d.get("NC")]
#: the full-grid empty launches with static local memory (read_ceiling.cl and .cu, not .wgsl)
LMEM_FORMS = [f for f, (entry, _, _, _) in FORMS.items() if entry == "rd_lmem"]
#: forms that read nothing (their XOR is not checked)
NO_READ = ("rd_empty", "rd_lmem")


class Dialect(NamedTuple):
    """One backend's read kernels: the source, its forms, the defines every build gets (with
    ``block``, the form's threads as BLOCK: a work-group size fixed in the source), how a launch
    takes (buffer, 16-byte words, out) and the grid, and the largest default size."""
    src: Path
    forms: list[str]
    defaults: dict
    block: bool
    args: Callable
    grid: Callable
    largest: tuple[str, int]


def _scalars(a, n16, out):
    return [a, np.int64(n16), out]


def _linear(blocks, threads):
    return (blocks,), (threads,)


DIALECTS = {
    "cuda": Dialect(ROOT / "scripts" / "read_ceiling.cu", list(FORMS), {}, False, _scalars, _linear,
                    ("2 GiB", 2**31)),
    # NVIDIA's OpenCL takes buffers below 2^31 bytes only; WGSL indexes in u32 and binds buffers whole
    "opencl": Dialect(ROOT / "scripts" / "read_ceiling.cl", PLAIN_FORMS + LMEM_FORMS, {}, True, _scalars,
                      _linear, ("2 GiB - 4 KiB", 2**31 - 4096)),
    "webgpu": Dialect(ROOT / "scripts" / "read_ceiling.wgsl", PLAIN_FORMS, {"U": 1, "CHUNK": 0}, True,
                      lambda a, n16, out: [a, out, np.array([n16], dtype=np.uint32)],
                      lambda blocks, threads: ((blocks, 1, 1), None), ("2 GiB - 4 KiB", 2**31 - 4096)),
}


def launch_shape(form: str, sms: int) -> tuple[int, int, int]:
    """(blocks, threads, dynamic shared bytes) of ``form`` on a device with ``sms`` SMs."""
    entry, d, per_sm, threads = FORMS[form]
    smem = d["STAGES"] * d["STAGE_BYTES"] if entry == "rd_bulk" else 0
    return max(1, per_sm * sms), threads, smem


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cuda", choices=sorted(DIALECTS))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--cap", type=float, default=1.0, help="seconds of samples per row")
    ap.add_argument("--sizes", default="", help="byte counts instead of the batch-1 GEMV cases' + 2 GiB")
    ap.add_argument("--only", default="", help="regex over the form labels")
    args = ap.parse_args()

    from backends.base import Unsupported
    from suite.registry import discover, get_spec
    from suite.results import RESULTS_DIR, atomic_write_json
    from suite.sol import load_peaks
    from suite.timing import Protocol, measure
    from suite.worker import probe_backend

    dia = DIALECTS[args.backend]
    forms = [f for f in dia.forms if re.search(args.only, f)]
    be = probe_backend(args.backend)
    kernels = {}
    for f in forms:  # TMA bulk copies are sm_90's: elsewhere those forms are left out, with the reason
        entry, defs, _, threads = FORMS[f]
        try:
            block = {"BLOCK": threads} if dia.block else {}
            kernels[f] = be.compile(dia.src, entry, {**dia.defaults, **defs, **block},
                                    ("-arch=sm_90",) if entry == "rd_bulk" else ())
        except Exception as e:  # noqa: BLE001 - Unsupported (another arch), a compile error
            print(f"{f:20s} left out: {type(e).__name__}: {str(e)[:300]}")
    if be.device.mode == "compile":  # (CUDA without a GPU: NVRTC only)
        for f in kernels:
            print(f"{f:20s} compiled ({FORMS[f][0]} {FORMS[f][1]})")
        sys.exit(0 if len(kernels) == len(forms) else 1)
    forms = list(kernels)
    discover()
    spec = get_spec("gemv_lowbit")
    if args.sizes:
        sizes = {f"{int(b)} B": int(b) for b in args.sizes.split(",")}
    else:
        sizes = {c.name: spec.bytes_moved(c) for c in spec.cases("bench")
                 if c.name.endswith(",b1,bf16")}
        sizes[dia.largest[0]] = dia.largest[1]
    measured = (load_peaks(be.device.slug, RESULTS_DIR) or {}).get("measured", {})
    ceiling = (measured.get("bandwidth") or {}).get("value")
    sms = be.device.compute_units or 128  # (WebGPU reports none)
    rng = np.random.default_rng(0)
    rows: list[dict] = []
    path = Path(args.out) / ("read-ceiling.json" if args.backend == "cuda"
                             else f"read-ceiling-{args.backend}.json")

    def save() -> None:  # after every row: a hang in a later form keeps the rows before it
        atomic_write_json(path, {"device": be.device.name, "backend": args.backend, "ceiling_gbs": ceiling,
                                 "sms": sms, "rows": rows})

    for name, nbytes in sizes.items():
        host = rng.integers(0, 2**32, size=nbytes // 16 * 4, dtype=np.uint32)
        want = int(np.bitwise_xor.reduce(host))
        out = be.empty((1,), np.uint32)
        try:
            a = be.upload(host)
        except Unsupported as e:  # more than one buffer takes (OpenCL); a binding's limit shows at launch
            print(f"{name:28s} left out: {e}", flush=True)
            continue
        for f in forms:
            blocks, threads, smem = launch_shape(f, sms)  # "empty": one block (0 per SM)

            grid, launch_args = dia.grid(blocks, threads), dia.args(a, host.size // 4, out)

            def fn(k=kernels[f], grid=grid, s=smem, args=launch_args):
                be.launch(k, *grid, list(args), shared_mem=s)

            be.fill_bytes(out, 0)
            try:
                fn()
            except Unsupported as e:  # WebGPU: a buffer above the adapter's storage binding limit
                print(f"{name:28s} {f:20s} left out: {e}", flush=True)
                break
            got = int(be.download(out)[0])
            ok = FORMS[f][0] in NO_READ or got == want
            row = {"case": name, "form": f, "bytes": host.nbytes, "blocks": blocks, "threads": threads,
                   "smem": smem, "checked": ok}
            if not ok:
                print(f"{name:28s} {f:20s} WRONG: xor {got:#010x}, want {want:#010x}", flush=True)
                rows.append(row)
                save()
                continue
            tm = measure(be, fn, Protocol(time_cap_s=args.cap))
            gbs = host.nbytes / tm.median_s / 1e9
            pct = 100 * gbs * 1e9 / ceiling if ceiling else None
            row.update(median_s=tm.median_s, rse=tm.rse, gbs=gbs, pct_of_ceiling=pct, clocks=tm.clocks,
                       flags=tm.flags)
            rows.append(row)
            save()
            print(f"{name:28s} {f:20s} {host.nbytes / 1e6:8.1f} MB {tm.median_s * 1e6:8.1f} us"
                  f" {gbs:7.0f} GB/s"
                  + (f" {pct:5.1f} %" if pct else "") + f" sm {tm.clocks.get('sm_mhz_median', '?')} MHz",
                  flush=True)
        a = None  # the next size's buffer replaces this one
    print(f"# wrote {path}")


if __name__ == "__main__":
    main()
