"""Per-(backend, device) worker processes: crash isolation for plan → check → time.

Every backend runs in its own spawned process (CuPy, Triton, PoCL and wgpu each bring an LLVM or a
driver). The parent sends work items and waits with a per-item timeout; a segfault, device fault,
hang or compile error becomes a row with a status and a message, the worker is restarted, and the
run goes on.

``Pool[backend]`` is the backend's probe worker: it sees every device and answers ``plan()``.
Items run in ``Pool.for_item(item)``: one worker per (backend, physical device), pinned to that
device before the backend is imported (the adapter's ``pin_env``, e.g. CUDA_VISIBLE_DEVICES=<UUID>
for CUDA, Triton and torch), so that the devices of a host can be driven in parallel
(``runner.execute(parallel=True)``) without two devices ever sharing a process.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import queue
import signal
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any

from suite.identity import unify

FIX = {  # what a user runs when a backend's package is missing
    "cuda": "pip install 'solbench[cuda]' (cupy-cuda13x); for compile-only: "
            "pip install cuda-bindings nvidia-cuda-nvrtc",
    "triton": "pip install 'solbench[triton]'",
    "opencl": "pip install 'solbench[opencl]' and an ICD: apt-get install pocl-opencl-icd ocl-icd-libopencl1",
    "webgpu": "pip install 'solbench[webgpu]' and a Vulkan driver: apt-get install mesa-vulkan-drivers",
    "torch": "pip install 'torch>=2.4'",
}


#: seed offset of the second input set every kernel is checked on (after the timed launches)
SECOND_SEED = 7919
#: seconds a worker (or, in Pool.close, all of them together) gets to exit when asked, then killed
CLOSE_GRACE_S = 10.0


@dataclass(frozen=True)
class Item:
    """One unit of work: a kernel on a case on a device."""

    op: str
    backend: str
    variant: str
    case: str
    device: int  # index into the backend's device list
    device_slug: str
    size: str = "test"
    check_only: bool = False
    hot: bool = False
    seed: int | None = None  # overrides the case's seed (fresh inputs)
    timing: dict = field(default_factory=dict)  # overrides of timing.Protocol
    share_inputs: bool = False  # other backend workers check this case too: share its inputs by file

    @property
    def id(self) -> str:
        return f"{self.op}/{self.backend}/{self.variant}/{self.case}@{self.device_slug}"


def base_row(item: Item) -> dict[str, Any]:
    return {"device": item.device_slug, "backend": item.backend, "op": item.op, "variant": item.variant,
            "case": item.case, "size": item.size, "status": "error", "message": ""}


# ------------------------------------------------------------------------------------------------
# child side


def assign_slugs(devices) -> None:
    """Give each device its results slug: the host CPU for CPU-side devices (one per backend
    under SOLBENCH_SPLIT_CPU=1), the GPU's name (plus PCI id when the host has several of one
    name) for GPUs."""
    from backends.base import gpu_slug, host_cpu_slug

    names = [d.name for d in devices if d.kind == "gpu"]
    for d in devices:
        d.slug = (host_cpu_slug(d.backend) if d.kind != "gpu"
                  else gpu_slug(d.name, d.pci_bus_id, names.count(d.name) == 1))


def probe_backend(name: str):
    """Backend ``name`` on its first GPU, else its first usable device, slug assigned: the device a
    probe script (scripts/probe.py, scan_probe.py, size_ceiling.py) measures on."""
    from backends import backend_class

    cls = backend_class(name)
    found = cls.devices()
    usable = [d for d in found if d.usable]
    devs = [d for d in usable if d.kind == "gpu"] or usable
    if not devs:
        why = "; ".join(f"{d.name}: {d.reason}" for d in found) or "none found"
        raise RuntimeError(f"{name}: no usable device ({why}); `solbench doctor` says what to install")
    assign_slugs(devs)
    return cls(devs[0])


def find_device(devices, target: dict) -> int:
    """Index, in this process's device list, of the device the probe worker listed as ``target``.

    A pinned process enumerates differently (under CUDA_VISIBLE_DEVICES=<UUID> the GPU is index
    0), so match by UUID, then PCI bus id; a process without an identity to match (OpenCL on the
    CPU, wgpu) enumerates like the probe did: same index, same name."""
    for key in ("uuid", "pci_bus_id"):
        if target.get(key):
            hits = [i for i, d in enumerate(devices) if getattr(d, key) == target[key]]
            if hits:
                return hits[0]
    i = target["index"]
    if not (target.get("uuid") or target.get("pci_bus_id")) and i < len(devices) \
            and devices[i].name == target["name"] and devices[i].kind == target["kind"]:
        return i
    raise RuntimeError(f"{target['backend']} device {target['name']} ({target['slug']}) is not visible "
                       f"to the pinned worker; it sees {[d.name for d in devices]}")


class Executor:
    """Runs items for one backend, inside the worker process. ``target``: the probe's record of
    the one device a pinned worker serves (items name devices by the probe's index)."""

    def __init__(self, backend: str, target: dict | None = None):
        from backends import backend_class

        self.backend = backend
        self.cls = backend_class(backend)
        self.devices = self.cls.devices()
        assign_slugs(self.devices)
        self.local: dict[int, int] = {}  # probe index → index here
        if target is not None:
            i = find_device(self.devices, target)
            self.devices[i].slug = target["slug"]
            self.local[target["index"]] = i
        self.opened: dict[int, Any] = {}
        self._data_key = None
        self._data = None
        self._second_key = None
        self._second = None

    def open(self, index: int):
        if index not in self.opened:
            self.opened[index] = self.cls(self.devices[index])
        return self.opened[index]

    def data(self, spec, case, seed, share: bool = False):
        """Inputs and reference of a case (kept for the next item on the same case); ``share``:
        large inputs through refcache's files (other workers check the case too)."""
        import dataclasses

        if seed is not None:
            case = dataclasses.replace(case, seed=seed)
        key = (spec.name, case)
        if self._data_key != key:
            self._data = None  # free the previous case first
            from suite import refcache

            inputs = refcache.inputs(spec, case) if share else spec.inputs(case)
            self._data = (inputs, refcache.reference(spec, case, inputs))
            self._data_key = key
        return self._data

    def second_data(self, spec, case, seed, share: bool = False):
        """Inputs and reference of a second, different input set of the case (seed + ``SECOND_SEED``),
        kept apart from ``data``'s cache so the first set stays cached for the next item."""
        s = (seed if seed is not None else case.seed) + SECOND_SEED
        if self._second_key != (spec.name, case, s):
            self._second = None
            saved = (self._data_key, self._data)
            try:
                self._second = self.data(spec, case, s, share)
            finally:
                self._data_key, self._data = saved
            self._second_key = (spec.name, case, s)
        return self._second

    def run(self, item: Item) -> dict[str, Any]:
        from backends.base import Unsupported
        from backends.window import OutsideWindow
        from suite import guard
        from suite.check import checked_launch, verify
        from suite.provenance import kernel_source, recording_compiles
        from suite.registry import REGISTRY, get_spec
        from suite.timing import Protocol, measure_flagged, soaked

        row = base_row(item)
        spec = get_spec(item.op)
        entry = REGISTRY[(item.op, item.backend, item.variant)]
        case = spec.case(item.case)
        index = self.local.get(item.device, item.device)
        dev = self.devices[index]
        row.update(dims=dict(case.dims), dtype=case.dtype, precision=case.prec, mode=dev.mode,
                   device_name=dev.name, bytes=spec.bytes_moved(case), flops=spec.flops(case),
                   read_dominated=spec.reads_only(case), seed=item.seed or case.seed)
        if entry.disabled:
            return {**row, "status": "skipped", "message": entry.disabled}
        need = spec.footprint(case)
        if dev.mode != "compile" and dev.memory_bytes and need > 0.8 * dev.memory_bytes:
            return {**row, "status": "skipped",
                    "message": f"needs {need / 2**30:.2f} GiB, device {dev.name} has "
                               f"{dev.memory_bytes / 2**30:.2f}"}
        missing = [f for f in entry.requires if f not in dev.features]
        if missing:
            return {**row, "status": "unsupported", "message": f"device lacks {', '.join(missing)}"}
        try:
            be = self.open(index)
            t0 = time.perf_counter()
            with recording_compiles(be) as compiles:
                run = entry.factory(be, case)
            row["compile_s"] = time.perf_counter() - t0
            row["source"] = kernel_source(item.op, compiles)
            if getattr(run, "info", None):  # what the factory chose (e.g. the autotune winner)
                row["kernel_info"] = run.info
        except Unsupported as e:
            return {**row, "status": "unsupported", "message": str(e)}
        except Exception as e:  # noqa: BLE001 - compile errors become rows
            return {**row, "status": "error", "message": _describe(e)}
        if dev.mode == "compile":
            reports = getattr(be, "compile_reports", [])
            row["compile_reports"] = list(reports)
            reports.clear()
            return {**row, "status": "compiled", "message": "compiled only (no device to run on)"}
        phases = row["phases_s"] = {}  # where a row's wall time goes on the host (wall_s: the total)
        lap = [time.perf_counter()]

        def done(phase: str) -> None:
            now = time.perf_counter()
            phases[phase] = round(phases.get(phase, 0.0) + now - lap[0], 3)
            lap[0] = now

        try:
            inputs, refs = self.data(spec, case, item.seed, item.share_inputs)
            done("data")
            sig = spec.signature(case)
            bufs = guard.allocate(be, sig, inputs)  # every buffer inside canary guard regions
            done("allocate")
            ins, outs = bufs.ins, bufs.outs
            tol = spec.tolerance(case)
            row["tolerance"] = {"atol": tol.atol, "rtol": tol.rtol, "rel_norm": tol.rel_norm,
                                "reason": tol.reason}
            row["checks"] = {}

            def check(stage: str, ins: dict, inputs: dict, refs: dict, guards: dict,
                      launch: bool = True) -> bool:
                """``launch``: poison, launch once, verify; else verify what is in the outputs
                now (the last timed launch's result). Then the guard regions and the inputs."""
                t = time.perf_counter()
                if launch:
                    res = checked_launch(be, spec, case, run, ins, outs, inputs, refs, tol)
                else:
                    be.synchronize()
                    res = verify(spec, case, inputs, {k: be.download(v) for k, v in outs.items()}, refs, tol)
                if stage == "first":
                    row["first_launch_check_s"] = time.perf_counter() - t
                row["check"] = res.to_dict()
                row["checks"][stage] = {"ok": res.ok, "max_abs_err": res.max_abs_err, "n_bad": res.n_bad}
                ok = res.ok
                if not ok:
                    row.update(status="failed", message=f"{stage} check: {res.message}")
                elif bad := guard.violations(be, guards, ins, inputs):
                    ok = row["checks"][stage]["ok"] = False
                    row.update(status="failed", message=f"{stage} check: {'; '.join(bad)}")
                done("check")
                return ok

            row["guards"] = "canary" if bufs.guarded else "none (bounds-checked by the API)"
            row["device_kind"] = dev.kind  # the SOL rule (suite.sol.faster_than_light) needs it
            if not check("first", ins, inputs, refs, bufs.guards):
                return row
            if not item.check_only:
                proto = soaked(Protocol(hot=item.hot, **item.timing), spec.flops(case),
                               spec.bytes_moved(case), dev.kind == "gpu")
                before = be.clocks()
                try:
                    timing = measure_flagged(be, lambda: run(ins, outs), proto)
                except OutsideWindow as e:
                    return {**row, "status": "invalid", "message": f"work outside the timed window: {e}"}
                row["clocks"] = {"before": before, "after": be.clocks()}
                done("timing")
                row["timing"] = timing.to_dict()
                row["flags"] = list(timing.flags)
                # what the last timed launch left, before anything touches it (a kernel that
                # races, or reuses state across launches, shows it here)
                if not check("timed", ins, inputs, refs, bufs.guards, launch=False):
                    return row
            # once more on a second input set the kernel has not seen (replayed answers, state
            # carried over from earlier launches, carries from the previous launch)
            ins = bufs.ins = {}  # free the first set's device buffers
            inputs2, refs2 = self.second_data(spec, case, item.seed, item.share_inputs)
            done("data")
            ins2, guards2 = guard.allocate_inputs(be, sig, inputs2)
            done("allocate")
            if not check("second-input", ins2, inputs2, refs2, guards2):
                return row
            if item.check_only:
                return {**row, "status": "ok", "message": "checked (twice: second on fresh inputs)"}
            row["status"] = "ok"
            if dev.mode == "interpret":
                row["message"] = "interpreted: timing excluded from performance"
            return row
        except Unsupported as e:
            return {**row, "status": "unsupported", "message": str(e)}
        except Exception as e:  # noqa: BLE001
            return {**row, "status": "error", "message": _describe(e)}


def _describe(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    where = f" (at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno})" if tb else ""
    return f"{type(e).__name__}: {e}{where}"


def _exit_with_parent() -> None:
    """A worker never outlives the run: if the parent dies without closing the queues (killed
    outright), the worker would wait on its queue forever, holding its device's memory; a daemon
    thread waits on the parent's sentinel and ends the process instead (even mid-kernel)."""
    from multiprocessing.connection import wait

    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="solbench-parent-watch").start()


def _child(backend: str, env: dict[str, str], requests, responses, target: dict | None = None) -> None:
    os.environ.update(env)  # before the backend is imported: pinning (CUDA_VISIBLE_DEVICES) and options
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _exit_with_parent()
    try:
        ex = Executor(backend, target)
        from suite.registry import discover

        discover()
        responses.put(("devices", [{**asdict(d), "pin": ex.cls.pin_env(d)} for d in ex.devices]))
    except Exception as e:  # noqa: BLE001
        responses.put(("unavailable", f"{_describe(e)}; fix: {FIX[backend]}"))
        return
    while True:
        msg = requests.get()
        if msg is None:
            return
        kind, payload = msg
        if kind == "item":
            responses.put(("row", ex.run(payload)))
        elif kind == "call":  # ("call", (module, function, kwargs)) → function(executor, **kwargs)
            import importlib

            mod, fn, kwargs = payload
            try:
                responses.put(("result", getattr(importlib.import_module(mod), fn)(ex, **kwargs)))
            except Exception as e:  # noqa: BLE001
                responses.put(("result", {"error": _describe(e)}))


# ------------------------------------------------------------------------------------------------
# parent side


class BackendUnavailable(RuntimeError):
    pass


class Worker:
    """Parent-side handle of one worker process: a backend's probe worker (every device), or one
    pinned to ``target`` (the probe's device record) with ``env`` holding the pinning."""

    def __init__(self, backend: str, env: dict[str, str] | None = None, start_timeout: float = 300,
                 target: dict | None = None):
        self.backend = backend
        self.env = env or {}
        self.target = target
        self.start_timeout = start_timeout
        self.proc = None
        self._greeted = False
        self.devices: list[dict] | None = None
        self.reason: str | None = None

    def start(self) -> None:
        ctx = mp.get_context("spawn")
        self.req, self.resp = ctx.Queue(), ctx.Queue()
        name = f"solbench-{self.backend}" + (f"@{self.target['slug']}" if self.target else "")
        self.proc = ctx.Process(target=_child, daemon=True, name=name,
                                args=(self.backend, self.env, self.req, self.resp, self.target))
        self.proc.start()
        self._greeted = False  # its first message (devices, or why unavailable) is still to be read

    def probe(self) -> list[dict]:
        """Start the process (if needed) and return its devices; raises BackendUnavailable."""
        if self.proc is None or not self.proc.is_alive():
            if self.reason:
                raise BackendUnavailable(self.reason)
            self.start()
        if not self._greeted:
            self._greeted = True
            try:
                kind, payload = self._get(self.start_timeout)
            except (TimeoutError, ChildProcessError) as e:
                kind, payload = "unavailable", f"worker did not start: {e}"
            if kind == "unavailable":
                self.reason = payload
                self.kill()
                raise BackendUnavailable(payload)
            self.devices = payload
        return self.devices

    def _get(self, timeout: float):
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.resp.get(timeout=0.2)
            except queue.Empty:
                if not self.proc.is_alive():
                    code = self.proc.exitcode
                    sig = f" (signal {signal.Signals(-code).name})" if code and code < 0 else ""
                    raise ChildProcessError(f"worker process died with exit code {code}{sig}") from None
                if time.monotonic() > deadline:
                    raise TimeoutError(f"no answer within {timeout:.0f} s") from None

    def run(self, item: Item, timeout: float) -> dict[str, Any]:
        """Run one item; a crash or timeout becomes a row and the worker is restarted on next use."""
        try:
            self.probe()
        except BackendUnavailable as e:
            return {**base_row(item), "status": "skipped", "message": f"backend unavailable: {e}"}
        self.req.put(("item", item))
        try:
            row = self._get(timeout)[1]
            if row.get("status") == "error":
                # a device fault (illegal address, trap) leaves a sticky error in the process's
                # context: every later kernel would fail too. Start afresh on the next item.
                self.kill()
                row["worker_restarted"] = True
            return row
        except TimeoutError:
            self.kill()
            return {**base_row(item), "status": "timeout", "message": f"killed after {timeout:.0f} s"}
        except ChildProcessError as e:
            self.kill()
            return {**base_row(item), "status": "error", "message": f"crashed: {e}"}

    def call(self, module: str, function: str, timeout: float, **kwargs):
        self.probe()
        self.req.put(("call", (module, function, kwargs)))
        try:
            return self._get(timeout)[1]
        except (TimeoutError, ChildProcessError) as e:
            self.kill()
            return {"error": str(e)}

    def kill(self) -> None:
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(timeout=5)
        self.proc = None

    def stop(self) -> None:
        """Ask the worker to exit (it finishes its current request first)."""
        if self.proc is not None and self.proc.is_alive():
            with contextlib.suppress(OSError, ValueError):
                self.req.put(None)

    def reap(self, grace: float) -> None:
        """After ``stop``: wait up to ``grace`` seconds for the exit, then kill."""
        if self.proc is not None:
            with contextlib.suppress(OSError, ValueError):
                self.proc.join(timeout=max(0.0, grace))
        self.kill()

    def close(self) -> None:
        """Stop, wait up to CLOSE_GRACE_S for the exit, then kill."""
        self.stop()
        self.reap(CLOSE_GRACE_S)


class Pool:
    """Workers, started lazily: ``pool[backend]`` probes (and serves calls such as peaks);
    ``pool.for_item(item)`` is the worker of the item's (backend, physical device)."""

    def __init__(self, env: dict[str, str] | None = None):
        self.env = env
        self.workers: dict[str, Worker] = {}  # probe workers, one per backend
        self.device_workers: dict[tuple[str, str], Worker] = {}  # (backend, device slug) → worker
        self._lock = threading.Lock()  # device threads ask for workers concurrently
        self._current: dict[int, Worker] = {}  # thread → the worker it ran its last item in

    def for_item(self, item: Item) -> Worker:
        return self.device_worker(item.backend, item.device, item.device_slug)

    def run(self, item: Item, timeout: float) -> dict[str, Any]:
        """Run an item in its (backend, device) worker. The worker this thread used before, if it
        is another one, is done (plans group a device's items by backend) and is stopped first."""
        w = self.for_item(item)
        prev = self._current.get(threading.get_ident())
        if prev is not None and prev is not w:
            self.release(prev)
        self._current[threading.get_ident()] = w
        return w.run(item, timeout)

    def finish(self) -> None:
        """Stop the worker this thread used last (see ``run``)."""
        prev = self._current.pop(threading.get_ident(), None)
        if prev is not None:
            self.release(prev)

    def device_worker(self, backend: str, index: int, slug: str) -> Worker:
        """The worker that runs ``backend`` on device ``slug`` (``index`` in the probe's list).

        The probe process itself serves one device: the backend's only device with a pinning
        environment (a one-GPU host starts no extra process), else its first device that needs
        none. Every other device gets a process of its own, started with its ``pin_env``."""
        with self._lock:
            key = (backend, slug)
            if key not in self.device_workers:
                probe = self[backend]
                usable = [d for d in probe.devices or [] if d["reason"] is None]
                dev = next((d for d in usable if d["index"] == index and d["slug"] == slug), None)
                pinned = [d for d in usable if d.get("pin")]
                owner = pinned[0] if len(pinned) == 1 else next((d for d in usable if not d.get("pin")), None)
                if dev is None or dev is owner:
                    w = probe
                else:
                    env = {**(self.env or {}), **dev.get("pin", {})}
                    w = Worker(backend, env, probe.start_timeout, target=dev)
                self.device_workers[key] = w
            return self.device_workers[key]

    def release(self, worker: Worker) -> None:
        """Stop a device worker that is done (probe workers stay: they serve calls and plans)."""
        if worker not in self.workers.values():
            worker.close()

    def __getitem__(self, backend: str) -> Worker:
        if backend not in self.workers:
            self.workers[backend] = Worker(backend, self.env)
        return self.workers[backend]

    def probe_all(self, backends) -> dict[str, list[dict] | str]:
        """Devices of every backend (the processes start together, so they probe in parallel), or
        the reason it is unavailable."""
        for b in backends:
            w = self[b]
            if w.proc is None and not w.reason:
                w.start()
        out: dict[str, list[dict] | str] = {}
        for b in backends:
            try:
                out[b] = self[b].probe()
            except BackendUnavailable as e:
                out[b] = str(e)
        # one slug per physical GPU across every backend probed so far (suite/identity.py)
        unify([d for w in self.workers.values() for d in w.devices or []])
        return out

    def close(self) -> None:
        """Every worker asked to exit at once, then each given what is left of one CLOSE_GRACE_S
        (a driver's teardown can take seconds; one after another they added up)."""
        ws = list({id(w): w for w in [*self.workers.values(), *self.device_workers.values()]}.values())
        for w in ws:
            w.stop()
        deadline = time.monotonic() + CLOSE_GRACE_S
        for w in ws:
            w.reap(deadline - time.monotonic())
