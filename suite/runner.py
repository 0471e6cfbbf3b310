"""plan() → (kernel, case, device) items; execute() → rows; write_run() → run files.

Shared by ``solbench run``, ``solbench peaks``, ``solbench nightly`` and the pytest plugin.
"""

from __future__ import annotations

import datetime as _dt
import platform
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from suite import results as res
from suite import sol
from suite.identity import canonical_uuid
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
    """Devices a selector names: default or all (every GPU, else every CPU-side device), gpu, cpu,
    a slug, an ordinal (gpu0, gpu1, … in CUDA order, see suite/identity.py), or a comma-separated
    list of those."""
    usable = [d for d in devs if d["reason"] is None]
    if selector in (None, "default", "all"):
        # every GPU; CPU-side devices only when the host has none, or when asked (cpu, gpu,cpu, a
        # slug): a CPU device's thread beside the GPUs' would take host cores from their launches
        gpus = [d for d in usable if d["kind"] == "gpu"]
        return gpus or usable
    if "," in selector:
        picked = [d for part in selector.split(",") for d in _pick_devices(devs, part.strip())]
        return [d for i, d in enumerate(picked) if d not in picked[:i]]
    if selector in ("gpu", "cpu"):
        return [d for d in usable if (d["kind"] == "gpu") == (selector == "gpu")]
    return [d for d in usable if selector in (d["slug"], d.get("ordinal"))]


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
    listed = [d for devs in probed.values() if isinstance(devs, list) for d in devs]
    valid = [*DEVICE_CLASSES, *sorted({d["ordinal"] for d in listed if d.get("ordinal")}),
             *sorted({d["slug"] for d in listed})]
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
        "pci_bus_id": d["pci_bus_id"], "uuid": d["uuid"], "model": d.get("model"),
        "ordinal": d.get("ordinal"), "attribution": d.get("attribution"),
        "backend_versions": {}, "seen_as": {}})
    rec["backend_versions"][d["backend"]] = d["versions"]
    rec["seen_as"][d["backend"]] = {"name": d["name"], "mode": d["mode"]}
    rec["seen_as"][d["backend"]].update({k: d[k] for k in ("pci_bus_id", "uuid") if d.get(k)})
    for k, v in (("name", d["name"]), ("pci_bus_id", d["pci_bus_id"]), ("uuid", d["uuid"]),
                 ("l2_bytes", d["l2_bytes"]), ("driver", d["driver"])):
        rec[k] = rec[k] or v


def work(items: list[Item], devices: dict[str, dict] | None = None,
         spread: bool = False) -> tuple[dict[str, list[dict[str, int]]], list[int]]:
    """How ``execute`` runs ``items``: (tasks per group of devices, positions run last). A task is
    the copies of one item on the devices of its group ({slug: position}), run once, by one of
    them. A group is one device, or with ``spread`` all cards of one model; devices whose rows
    cannot be attributed to one card (``attribution`` in their record) run last, alone."""
    devices = devices or {}
    after = [i for i, it in enumerate(items) if (devices.get(it.device_slug) or {}).get("attribution")]
    last = set(after)
    tasks: dict[str, list[dict[str, int]]] = {}
    seen: dict[tuple, dict[str, int]] = {}
    for i, it in enumerate(items):
        if i in last:
            continue
        g = ((devices.get(it.device_slug) or {}).get("model") or it.device_slug) if spread else it.device_slug
        key = (g, it.id.rsplit("@", 1)[0], it.seed, it.check_only, it.hot, it.size)
        n = 0  # an item planned twice on one card (peaks' re-measurements) runs twice
        while it.device_slug in seen.get((*key, n), {}):
            n += 1
        if (*key, n) not in seen:
            seen[(*key, n)] = {}
            tasks.setdefault(g, []).append(seen[(*key, n)])
        seen[(*key, n)][it.device_slug] = i
    return tasks, after


def execute(pool: Pool, items: list[Item], timeout: float = 300.0,
            on_row: Callable[[Item, dict], None] | None = None,
            parallel: bool = False, rate: bool = True, devices: dict[str, dict] | None = None,
            spread: bool = False) -> list[dict[str, Any]]:
    """Run items, each in the worker of its (backend, device); derive SOL figures from the peaks.

    ``parallel``: one thread per physical device driving that device's workers (one backend at a
    time, items in plan order), devices concurrently: a device never runs two items at once, so
    timings stay clean. ``spread`` (with ``parallel``): the cards of one model share their work —
    the copies of an item planned on each of them are one task, run once, by one card (each
    starts on its own contiguous share and then helps the others) — so N identical GPUs take
    about 1/N of one's time; without it every card runs every item planned on it (per-card
    results). Otherwise every item runs in turn.
    ``devices``: the plan's device records (slug → model, driver, attribution): the cards of a
    model, the peaks a card without its own inherits (``sol.load_peaks``), and the devices that
    cannot be attributed to one card — their items run after the others, alone.
    Rows come back in the order of ``items`` (the copies a spread run did not need left out);
    ``on_row`` is called as each finishes (from the device threads, one call at a time).
    ``rate``: derive GB/s and % of SOL from the stored peaks (``solbench peaks`` does not: a
    kernel faster than a stale ceiling is what it looks for, not a row to mark invalid).
    """
    devices = devices or {}

    def rec(slug: str) -> dict:
        return devices.get(slug) or {}

    peaks = {s: device_peaks(s, rec(s)) for s in {it.device_slug for it in items}}
    rows: list[dict[str, Any] | None] = [None] * len(items)
    lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []

    def run_one(i: int) -> None:
        it = items[i]
        t0 = time.monotonic()
        row = pool.run(it, timeout)
        row["wall_s"] = time.monotonic() - t0  # check, compile and timing, as the host saw it
        if rec(it.device_slug).get("attribution"):
            row["attribution"] = rec(it.device_slug)["attribution"]
        if rate:
            rate_row(row, peaks[it.device_slug])
        rows[i] = row
        if on_row:
            with lock:
                on_row(it, row)

    tasks, after = work(items, devices, spread and parallel)
    group = {it.device_slug: g for g, q in tasks.items() for t in q for it in (items[i] for i in t.values())}

    # a spread group's cards start on contiguous shares of its tasks (plan order: by backend, then
    # case), so each backend's worker and each case's inputs are mostly on one card; a card done
    # with its share takes the last task of the largest share left (work stealing)
    members: dict[str, list[str]] = {}
    for slug, g in group.items():
        members.setdefault(g, []).append(slug)
    share: dict[str, list[dict[str, int]]] = {}
    for g, q in tasks.items():
        n = len(members[g])
        for k, slug in enumerate(members[g]):
            share[slug] = q[k * len(q) // n:(k + 1) * len(q) // n]

    def next_task(slug: str) -> dict[str, int] | None:
        mine = [t for t in share[slug] if slug in t]
        if mine:
            task = mine[0]
        else:
            others = [[t for t in share[o] if slug in t] for o in members[group[slug]] if o != slug]
            largest = max(others, key=len, default=[])
            if not largest:
                return None
            task = largest[-1]
        for o in members[group[slug]]:
            if task in share[o]:
                share[o].remove(task)
        return task

    def drive(slug: str) -> None:
        while not stop.is_set():
            with lock:
                task = next_task(slug)
            if task is None:
                break
            run_one(task[slug])
        pool.finish()

    def drive_thread(slug: str) -> None:
        try:
            drive(slug)
        except Exception as e:  # noqa: BLE001 - re-raised in the calling thread
            errors.append(e)
            stop.set()

    if not parallel:
        last = set(after)
        for i in range(len(items)):
            if i not in last:
                run_one(i)
        pool.finish()
    else:
        threads = [threading.Thread(target=drive_thread, args=(slug,), name=f"solbench-{slug}", daemon=True)
                   for slug in group]
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
    for i in after:  # a card the rows cannot be attributed to: alone, nothing else running
        if stop.is_set():
            break
        run_one(i)
    pool.finish()
    return [r for r in rows if r is not None]


def device_peaks(slug: str, record: dict | None = None) -> dict[str, Any] | None:
    """A device's peaks: its own, or inherited from another card of its model and driver (``record``:
    its device record from the plan, see ``sol.load_peaks``); ``measured_on_card`` when the file
    names another card's UUID than the record's (the same folder, another physical card)."""
    record = record or {}
    peaks = sol.load_peaks(slug, model=record.get("model"), driver=record.get("driver"))
    theirs, ours = canonical_uuid((peaks or {}).get("uuid")), canonical_uuid(record.get("uuid"))
    if theirs and ours and theirs != ours:  # measured on another card (a fleet hands out others)
        peaks["measured_on_card"] = peaks["uuid"]
    return peaks


def rate_row(row: dict[str, Any], peaks: dict[str, Any] | None) -> None:
    """GB/s, TFLOP/s and % SOL of a row (``sol.derive``), with the peaks file used (path, sha256,
    the card it was inherited from)."""
    import hashlib

    sol.derive(row, peaks)
    if row.get("peaks_used") is not None:
        p = Path(peaks["file"])
        row["peaks_used"]["file"] = {
            "path": str(p.relative_to(res.ROOT)) if p.resolve().is_relative_to(res.ROOT) else str(p),
            "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}


def new_run(argv: list[str] | None = None) -> dict[str, Any]:
    now = _dt.datetime.now(_dt.UTC)
    return {"id": now.strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6],
            "started_utc": now.isoformat(timespec="seconds"), **git_info(),
            "argv": list(sys.argv if argv is None else argv),
            "host": {"hostname": platform.node(), "python": platform.python_version(),
                     "platform": platform.platform(),
                     "numpy": np.__version__}}  # makes the inputs (suite.spec.InputRng) and references


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
