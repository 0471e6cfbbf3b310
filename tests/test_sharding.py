"""Sharding one suite across the devices of a host (issue #4), proven on a CPU-only host.

With SOLBENCH_SPLIT_CPU=1 the host CPU splits into one device per API, so PoCL (OpenCL) and
lavapipe (WebGPU) stand in for two GPUs: every planned item must run exactly once, on its own
device's worker process, the two devices concurrently and each device's items one at a time, and
the rows must land in one run file per device. The GPU-only part (CUDA_VISIBLE_DEVICES pinning)
is checked at the level that does not need a GPU: the environment, the pool's choice of workers
and the pinned process finding its device.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from backends.base import SPLIT_CPU_ENV, Device, cuda_visible_env, host_cpu_slug
from suite.runner import execute, new_run, plan, write_run
from suite.worker import Item, Pool, Worker, find_device

ROOT = Path(__file__).resolve().parent.parent
SPLIT = {SPLIT_CPU_ENV: "1"}
BACKENDS = ["opencl", "webgpu"]
VOLATILE = ("compile_s", "first_launch_check_s", "wall_s", "phases_s")  # wall-clock figures


@pytest.fixture(scope="module")
def pool():
    p = Pool(env=SPLIT)
    yield p
    p.close()


def _key(x) -> tuple:
    if isinstance(x, Item):
        return x.op, x.backend, x.variant, x.case, x.device_slug
    return x["op"], x["backend"], x["variant"], x["case"], x["device"]


def _plan(pool, **kw):
    p = plan(pool, ops=["vector_add", "grayscale"], backends=BACKENDS, device="all", size="test",
             check_only=True, **kw)
    if len({it.device_slug for it in p.items}) < 2:
        pytest.skip(f"needs both PoCL and lavapipe; notes: {[n['message'] for n in p.notes]}")
    return p


def test_sharded_run_every_item_once_on_its_device(pool, tmp_path, monkeypatch):
    p = _plan(pool)
    slugs = {it.device_slug for it in p.items}
    assert slugs == {f"{host_cpu_slug()}-{b}" for b in BACKENDS}  # two devices, told apart

    spans: list[tuple[str, int, float, float, str]] = []  # device, worker pid, start, end, thread
    real_run = Worker.run

    def timed_run(self, item, timeout):
        t0 = time.perf_counter()
        row = real_run(self, item, timeout)
        thread = threading.current_thread().name
        spans.append((item.device_slug, self.proc.pid, t0, time.perf_counter(), thread))
        return row

    monkeypatch.setattr(Worker, "run", timed_run)
    t0 = time.perf_counter()
    rows = execute(pool, p.items, timeout=120, parallel=True)
    wall = time.perf_counter() - t0

    # every planned item ran exactly once, rows merged back in plan order, all passed
    assert [_key(r) for r in rows] == [_key(it) for it in p.items]
    assert set(Counter(_key(r) for r in rows).values()) == {1} and len(rows) == len(p.items) > 20
    assert all(r["status"] == "ok" for r in rows), [(_key(r), r["status"], r["message"]) for r in rows
                                                    if r["status"] != "ok"]
    assert all({"data", "allocate", "check"} <= set(r["phases_s"]) and r["wall_s"] > 0 for r in rows)
    # each device: one worker process and one thread of its own; its items one at a time
    busy = {}
    for slug in slugs:
        mine = sorted((s for s in spans if s[0] == slug), key=lambda s: s[2])
        assert len(mine) == sum(it.device_slug == slug for it in p.items)
        assert len({s[1] for s in mine}) == 1 and len({s[4] for s in mine}) == 1
        assert all(b[2] >= a[3] for a, b in zip(mine, mine[1:], strict=False)), f"{slug}: 2 items at once"
        busy[slug] = mine
    a, b = busy.values()
    assert a[0][1] != b[0][1] and a[0][4] != b[0][4]
    # ... and the two devices ran at the same time
    overlap = sum(max(0.0, min(x[3], y[3]) - max(x[2], y[2])) for x in a for y in b)
    assert overlap > 0, "the two devices never ran concurrently"
    print(f"\n{len(rows)} items on {len(slugs)} devices: wall {wall:.2f} s, busy "
          + ", ".join(f"{s}={sum(x[3] - x[2] for x in v):.2f} s" for s, v in busy.items())
          + f", overlap {overlap:.2f} s")

    # one run file per device, holding exactly that device's rows
    paths = write_run(new_run(["test"]), p.devices, rows, tmp_path)
    assert sorted(path.parent.name for path in paths) == sorted(slugs)
    for path in paths:
        doc = json.loads(path.read_text())
        slug = path.parent.name
        assert list(doc["devices"]) == [slug]
        assert Counter(_key(r) for r in doc["results"]) == Counter(_key(it) for it in p.items
                                                                   if it.device_slug == slug)


def test_parallel_equals_sequential(pool):
    p = _plan(pool, cases=["n=1025", "257x255"])
    seq = execute(pool, p.items, timeout=120)
    par = execute(pool, p.items, timeout=120, parallel=True)

    def strip(r):
        return {k: v for k, v in r.items() if k not in VOLATILE}

    assert [strip(r) for r in par] == [strip(r) for r in seq]


# -- pinning ------------------------------------------------------------------------------------

def test_cuda_visible_env(monkeypatch):
    gpu = Device("cuda", 1, "NVIDIA H200", "gpu", uuid="GPU-1234")
    assert cuda_visible_env(gpu) == {"CUDA_VISIBLE_DEVICES": "GPU-1234"}
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    gpu.uuid = None  # no identity: the CUDA index, through the inherited mask
    assert cuda_visible_env(gpu) == {"CUDA_VISIBLE_DEVICES": "5"}
    assert cuda_visible_env(Device("torch", 2, "AMD EPYC", "cpu")) == {}


def test_find_device_in_a_pinned_enumeration():
    seen = [Device("cuda", 0, "NVIDIA H200", "gpu", pci_bus_id="1a:00.0", uuid="GPU-b")]
    assert find_device(seen, {"index": 3, "uuid": "GPU-b", "pci_bus_id": None, "name": "NVIDIA H200",
                              "kind": "gpu", "backend": "cuda", "slug": "x"}) == 0
    assert find_device(seen, {"index": 3, "uuid": None, "pci_bus_id": "1a:00.0", "name": "NVIDIA H200",
                              "kind": "gpu", "backend": "cuda", "slug": "x"}) == 0
    cpu = [Device("opencl", 0, "pthread", "cpu"), Device("opencl", 1, "other", "cpu")]
    assert find_device(cpu, {"index": 1, "uuid": None, "pci_bus_id": None, "name": "other", "kind": "cpu",
                             "backend": "opencl", "slug": "x"}) == 1
    with pytest.raises(RuntimeError, match="not visible"):
        find_device(seen, {"index": 0, "uuid": "GPU-a", "pci_bus_id": "19:00.0", "name": "NVIDIA H200",
                           "kind": "gpu", "backend": "cuda", "slug": "nvidia-h200-19-00-0"})


def test_pool_pins_each_gpu_and_reuses_the_probe_otherwise():
    pool = Pool(env=SPLIT)
    probe = pool["cuda"]

    def dev(i, kind, slug, uuid=None):
        return {"index": i, "kind": kind, "slug": slug, "uuid": uuid, "pci_bus_id": None, "name": slug,
                "reason": None, "pin": {"CUDA_VISIBLE_DEVICES": uuid} if uuid else {}}

    probe.devices = [dev(0, "gpu", "h200-19", "GPU-a"), dev(1, "gpu", "h200-1a", "GPU-b"),
                     dev(2, "cpu", "cpu")]
    w0, w1, wc = (pool.device_worker("cuda", i, s) for i, s in ((0, "h200-19"), (1, "h200-1a"), (2, "cpu")))
    assert len({id(w0), id(w1), id(wc)}) == 3 and pool.device_worker("cuda", 0, "h200-19") is w0
    assert w0.env == {**SPLIT, "CUDA_VISIBLE_DEVICES": "GPU-a"} and w0.target["slug"] == "h200-19"
    assert w1.env == {**SPLIT, "CUDA_VISIBLE_DEVICES": "GPU-b"}
    assert wc is probe  # nothing to pin: the probe process serves it
    assert all(w.proc is None for w in (w0, w1, wc))  # nothing was started

    one = Pool()  # a one-GPU host starts no extra process
    one["torch"].devices = [dev(0, "gpu", "h200", "GPU-a"), dev(1, "cpu", "cpu")]
    assert one.device_worker("torch", 0, "h200") is one["torch"]
    assert one.device_worker("torch", 1, "cpu") is not one["torch"]


def _child_view(ex, name):  # runs in a worker process (Worker.call)
    return {"env": os.environ.get(name), "local": ex.local, "pid": os.getpid()}


def test_pinned_worker_process_gets_its_env_and_device(pool):
    p = _plan(pool, cases=["n=1025"])
    it = next(i for i in p.items if i.backend == "opencl")
    target = next(d for d in pool["opencl"].devices if d["index"] == it.device)
    w = Worker("opencl", {**SPLIT, "SOLBENCH_TEST_PIN": "device-7"}, target=target)
    try:
        view = w.call("tests.test_sharding", "_child_view", 120, name="SOLBENCH_TEST_PIN")
        assert view["env"] == "device-7" and view["local"] == {it.device: it.device}
        assert view["pid"] != pool["opencl"].proc.pid
        row = w.run(it, 120)
        assert row["status"] == "ok" and row["device"] == it.device_slug
    finally:
        w.close()


# -- pytest -n N ----------------------------------------------------------------------------------

def test_pytest_xdist_one_worker_per_device():
    pytest.importorskip("xdist")
    args = [sys.executable, "-m", "pytest", "tests/test_kernels.py::test_kernel", "-p", "no:cacheprovider",
            "--solbench-op", "vector_add", *[a for b in BACKENDS for a in ("--solbench-backend", b)]]
    env = {**os.environ, **SPLIT}
    co = subprocess.run([*args, "--co", "-q"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    planned = [ln for ln in co.stdout.splitlines() if ln.startswith("tests/test_kernels.py::")]
    r = subprocess.run([*args, "-n", "2", "-v"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "scheduling tests via DeviceScheduling" in r.stdout
    ran = re.findall(r"^\[(gw\d+)\] \[\s*\d+%\] (\w+) (tests/test_kernels.py::\S+)", r.stdout, re.M)
    assert sorted(n for _, _, n in ran) == sorted(planned) and len(planned) > 20  # each exactly once
    assert {s for _, s, _ in ran} == {"PASSED"}
    by_device: dict[str, set[str]] = {}
    for gw, _, nodeid in ran:
        by_device.setdefault(nodeid.rsplit("@", 1)[1].rstrip("]"), set()).add(gw)
    assert len(by_device) == 2 and all(len(g) == 1 for g in by_device.values()), by_device
    assert len(set.union(*by_device.values())) == 2  # one xdist worker per device
