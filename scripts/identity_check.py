"""Does each backend's device really sit on the card the suite attributes it to? For every backend
and every GPU it lists, the device's own worker (the one a run uses) allocates and fills 1.5 GiB on
it, and NVML says which card's used memory grew; the row is right when that card is the one whose
slug the record carries (suite/identity.py). Also prints every backend's identity of each card.

    python scripts/identity_check.py [--out DIR] [--gib 1.5]

Needs NVIDIA GPUs and NVML (nvidia-ml-py); on a host with one card it checks that one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from suite.identity import canonical_uuid  # noqa: E402
from suite.worker import Pool  # noqa: E402

BACKENDS = ["cuda", "torch", "triton", "opencl", "webgpu"]
_held: list = []  # the worker's allocation, kept until _release


def _hold(ex, index: int, nbytes: int) -> dict:  # runs in the device's worker (Worker.call)
    import numpy as np

    local = ex.local.get(index, index)
    be = ex.open(local)
    buf = be.empty((nbytes,), np.uint8)
    be.fill_bytes(buf, 1)  # touched, so lazily allocating drivers (OpenCL) place it now
    be.synchronize()
    _held.append((be, buf))
    return {"device": be.device.name, "local_index": local}


def _release(ex) -> dict:
    _held.clear()
    return {}


def _used() -> dict[str, int]:
    import pynvml

    out = {}
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        u = pynvml.nvmlDeviceGetUUID(h)
        u = canonical_uuid(u.decode() if isinstance(u, bytes) else u)
        out[u] = pynvml.nvmlDeviceGetMemoryInfo(h).used
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--gib", type=float, default=1.5)  # under OpenCL's 2 GiB-per-buffer limit on NVIDIA
    args = ap.parse_args()
    import pynvml

    pynvml.nvmlInit()
    nbytes = int(args.gib * 2**30)
    pool = Pool()
    rows = []
    try:
        probed = pool.probe_all(BACKENDS)
        recs = [r for b in BACKENDS if isinstance(probed[b], list) for r in probed[b]
                if r["kind"] == "gpu" and r["reason"] is None]
        card_uuid = {r["slug"]: canonical_uuid(r["uuid"]) for r in recs
                     if r["backend"] == "cuda" and r["uuid"]}
        print(f"{'backend':8} {'idx':>3} {'ordinal':7} {'slug':24} {'pci':13} {'uuid':34} grew on")
        for r in recs:
            w = pool.device_worker(r["backend"], r["index"], r["slug"])
            before = _used()
            got = w.call("scripts.identity_check", "_hold", 300, index=r["index"], nbytes=nbytes)
            time.sleep(0.5)
            grown = {u: after - before.get(u, 0) for u, after in _used().items()}
            w.call("scripts.identity_check", "_release", 60)
            card = max(grown, key=grown.get)
            hit = grown[card] >= 0.9 * nbytes
            row = {k: r.get(k) for k in ("backend", "index", "name", "slug", "ordinal", "pci_bus_id", "uuid",
                                         "attribution")}
            row.update(worker=got, grew_mib={u: round(g / 2**20) for u, g in grown.items()},
                       card=card if hit else None, expected=card_uuid.get(r["slug"]),
                       ok=hit and card == card_uuid.get(r["slug"]))
            rows.append(row)
            print(f"{r['backend']:8} {r['index']:>3} {r.get('ordinal') or '-':7} {r['slug']:24} "
                  f"{r['pci_bus_id'] or '-':13} {r['uuid'] or '-':34} "
                  f"{(card[:8] if hit else 'nothing ≥ 90 %')} {'ok' if row['ok'] else 'WRONG'}")
            pool.release(w)
    finally:
        pool.close()
    bad = [r for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)} of {len(rows)} (backend, GPU) records on the card they are attributed to")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "identity_check.json").write_text(json.dumps(rows, indent=1))
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
