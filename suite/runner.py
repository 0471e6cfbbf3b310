"""plan() → (kernel, case, device) items; execute() → rows; write_run() → run files.

Shared by ``solbench run``, ``solbench peaks``, ``solbench nightly`` and the pytest plugin.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from suite import results as res
from suite import sol
from suite.provenance import git_info
from suite.registry import get_spec, select
from suite.worker import Item, Pool

DEVICE_CLASSES = ("all", "gpu", "cpu")


@dataclass
class Plan:
    items: list[Item] = field(default_factory=list)
    #: rows that need no execution (backend unavailable, no matching device, ...)
    notes: list[dict[str, Any]] = field(default_factory=list)
    #: slug → device record for the run file
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)


def _pick_devices(devs: list[dict], selector: str | None) -> list[dict]:
    """Devices a selector names: default, all, gpu, cpu, a slug, or a comma-separated list of those."""
    usable = [d for d in devs if d["reason"] is None]
    if selector in (None, "default"):
        gpus = [d for d in usable if d["kind"] == "gpu"]
        return gpus or usable  # GPU if there is one, else everything CPU-side
    if "," in selector:
        picked = [d for part in selector.split(",") for d in _pick_devices(devs, part.strip())]
        return [d for i, d in enumerate(picked) if d not in picked[:i]]
    if selector == "all":
        return usable
    if selector in ("gpu", "cpu"):
        return [d for d in usable if (d["kind"] == "gpu") == (selector == "gpu")]
    return [d for d in usable if d["slug"] == selector]


def plan(pool: Pool, ops=None, backends=None, variants=None, device: str | None = None,
         size: str = "test", check_only: bool = False, hot: bool = False, seed: int | None = None,
         dtypes=None, cases=None, timing: dict | None = None) -> Plan:
    """Expand the filters into work items on every selected device.

    Unknown names raise ValueError listing the valid ones (the CLI turns that into exit 2).
    """
    if size not in ("test", "bench"):
        raise ValueError(f"unknown size {size!r}; valid: test, bench")
    entries = select(ops, backends, variants)
    if not entries:
        raise ValueError("no kernel matches the filters (see `solbench list`)")
    if cases:
        known = {c.name for op in {e.op for e in entries} for kind in ("gpu", "cpu")
                 for c in get_spec(op).cases(size, kind)}
        unknown = [c for c in cases if c not in known]
        if unknown:
            raise ValueError(f"unknown case {unknown[0]!r} for size {size}; "
                             f"valid: {', '.join(sorted(known))}")
    probed = pool.probe_all(sorted({e.backend for e in entries}))
    seen = {d["slug"] for devs in probed.values() if isinstance(devs, list) for d in devs}
    valid = [*DEVICE_CLASSES, *sorted(seen)]
    for part in (device or "default").split(","):
        if part.strip() not in ("default", *valid):
            raise ValueError(f"unknown device {part.strip()!r}; valid: {', '.join(valid)}")
    p = Plan()
    for e in entries:
        devs = probed[e.backend]
        base = {"backend": e.backend, "op": e.op, "variant": e.variant, "case": "-", "size": size}
        if isinstance(devs, str):
            p.notes.append({**base, "device": "-", "status": "skipped",
                            "message": f"backend unavailable: {devs}"})
            continue
        chosen = _pick_devices(devs, device)
        if not chosen:
            why = "; ".join(f"{d['name']}: {d['reason']}" for d in devs if d["reason"]) or "none matches"
            p.notes.append({**base, "device": device or "-", "status": "skipped",
                            "message": f"no usable {e.backend} device ({why})"})
            continue
        spec = get_spec(e.op)
        for d in chosen:
            if size == "bench" and d["mode"] == "interpret":
                p.notes.append({**base, "device": d["slug"], "status": "skipped",
                                "message": f"{d['name']}: correctness only, bench sizes are not run"})
                continue
            _record_device(p.devices, d)
            for c in spec.cases(size, "gpu" if d["kind"] == "gpu" else "cpu"):
                if (e.dtypes and c.dtype not in e.dtypes) or (dtypes and c.dtype not in dtypes):
                    continue
                if (cases and c.name not in cases) or (size == "test" and e.test_cases
                                                         and c.name not in e.test_cases):
                    continue
                p.items.append(Item(e.op, e.backend, e.variant, c.name, d["index"], d["slug"], size,
                                    check_only, hot, seed, dict(timing or {})))
    # a case that several workers (backend × device) check shares its (large) inputs through files
    users: dict[tuple, set] = {}
    for it in p.items:
        users.setdefault((it.op, it.case, it.seed), set()).add((it.backend, it.device_slug))
    p.items = [replace(it, share_inputs=len(users[(it.op, it.case, it.seed)]) > 1)
               for it in p.items]
    # group by backend (one worker at a time), then by case so inputs are generated once
    order = {b: i for i, b in enumerate(["torch", "cuda", "triton", "opencl", "webgpu"])}
    p.items.sort(key=lambda it: (order.get(it.backend, 9), it.device_slug, it.op, it.case, it.variant))
    return p


def _record_device(devices: dict, d: dict) -> None:
    rec = devices.setdefault(d["slug"], {
        "name": d["name"] if d["kind"] == "gpu" or d["backend"] == "torch" else "",
        "kind": "gpu" if d["kind"] == "gpu" else "cpu", "vendor": d["vendor"], "driver": d["driver"],
        "memory": d["memory_bytes"], "compute_units": d["compute_units"], "l2_bytes": d["l2_bytes"],
        "pci_bus_id": d["pci_bus_id"], "uuid": d["uuid"], "backend_versions": {}, "seen_as": {}})
    rec["backend_versions"][d["backend"]] = d["versions"]
    rec["seen_as"][d["backend"]] = {"name": d["name"], "mode": d["mode"]}
    for k, v in (("name", d["name"]), ("pci_bus_id", d["pci_bus_id"]), ("uuid", d["uuid"]),
                 ("l2_bytes", d["l2_bytes"]), ("driver", d["driver"])):
        rec[k] = rec[k] or v


def shards(items: list[Item]) -> dict[str, list[int]]:
    """Positions of the items per physical device (its slug), each device's in plan order."""
    out: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        out.setdefault(it.device_slug, []).append(i)
    return out


def execute(pool: Pool, items: list[Item], timeout: float = 300.0,
            on_row: Callable[[Item, dict], None] | None = None,
            parallel: bool = False, rate: bool = True) -> list[dict[str, Any]]:
    """Run items, each in the worker of its (backend, device); derive SOL figures from the peaks.

    ``parallel``: shard by physical device, one thread per device driving that device's workers
    (one backend at a time, items in plan order), devices concurrently: a device never runs two
    items at once, so timings stay clean, and a host's N GPUs take about 1/N of the time.
    Otherwise every item runs in turn. Rows come back in the order of ``items`` either way;
    ``on_row`` is called as each finishes (from the device threads, one call at a time).
    ``rate``: derive GB/s and % of SOL from the stored peaks (``solbench peaks`` does not: a
    kernel faster than a stale ceiling is what it looks for, not a row to mark invalid).
    """
    peaks = {slug: sol.load_peaks(slug) for slug in {it.device_slug for it in items}}
    peaks_files = {slug: peaks_file(slug) for slug in peaks}
    rows: list[dict[str, Any] | None] = [None] * len(items)
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []

    def drive(queue: list[int]) -> None:
        for i in queue:
            if stop.is_set():
                return
            it = items[i]
            row = pool.run(it, timeout)
            if rate:
                sol.derive(row, peaks[it.device_slug])
            if row.get("peaks_used") is not None:
                row["peaks_used"]["file"] = peaks_files[it.device_slug]
            rows[i] = row
            if on_row:
                with lock:
                    on_row(it, row)
        pool.finish()

    def drive_thread(queue: list[int]) -> None:
        try:
            drive(queue)
        except Exception as e:  # noqa: BLE001 - re-raised in the calling thread
            errors.append(e)
            stop.set()

    if not parallel:
        drive(list(range(len(items))))
    else:
        threads = [threading.Thread(target=drive_thread, args=(q,), name=f"solbench-{slug}", daemon=True)
                   for slug, q in shards(items).items()]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.5)
        except BaseException:  # Ctrl-C: the threads stop after their current item
            stop.set()
            raise
    if errors:
        raise errors[0]
    return rows  # type: ignore[return-value]


def peaks_file(slug: str) -> dict[str, Any] | None:
    """The peaks file ``sol.load_peaks`` reads for ``slug`` (first hit of its search folders):
    path and sha256, recorded with every row's % SOL."""
    import hashlib

    for root in sol.peaks_search():
        p = Path(root) / slug / "peaks.json"
        if p.is_file():
            return {"path": str(p.relative_to(res.ROOT)) if p.resolve().is_relative_to(res.ROOT) else str(p),
                    "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
    return None


def new_run(argv: list[str] | None = None) -> dict[str, Any]:
    now = _dt.datetime.now(_dt.UTC)
    return {"id": now.strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6],
            "started_utc": now.isoformat(timespec="seconds"), **git_info(),
            "argv": list(sys.argv if argv is None else argv),
            "host": {"hostname": platform.node(), "python": platform.python_version(),
                     "platform": platform.platform()}}


def write_run(run: dict, devices: dict, rows: list[dict], root: Path = res.RESULTS_DIR) -> list[Path]:
    """One run file per device slug, written atomically; returns the paths."""
    paths = []
    for slug in sorted({r["device"] for r in rows if r.get("device") not in (None, "-")}):
        doc = {"schema_version": res.SCHEMA_VERSION, "run": run,
               "devices": {slug: devices.get(slug, {})},
               "results": [r for r in rows if r["device"] == slug]}
        path = Path(root) / slug / f"run-{run['id']}.json"
        res.atomic_write_json(path, doc)
        paths.append(path)
    return paths
