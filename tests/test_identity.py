"""One identity per physical GPU (issue 13): the spellings each API gives one card's PCI address
and UUID name one device; every backend's record of a card gets that card's slug and ordinal;
records that cannot be tied to one card are labelled and run alone; identical cards share a
spread run's work (each item once) or each run all of it (replicate); a card without peaks of
its own inherits another card's of its model and driver, labelled."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import replace

import pytest

from backends.base import canonical_pci
from suite import sol
from suite.identity import canonical_uuid, unify
from suite.runner import _pick_devices, execute, work
from suite.worker import Item

UUID_A, UUID_B = "GPU-b90d744f-a88e-aed0-72c6-c4359d66fda8", "GPU-0c1a2b3c-4d5e-6f70-8192-a3b4c5d6e7f8"


def test_one_pci_address_in_every_spelling():
    # NVML, CUDA (cudaDeviceGetPCIBusId), the short form, OpenCL's NVIDIA fields (bus, "slot" =
    # the device number: the H200 CUDA calls 0000:00:06.0 reported bus 0, slot 6), torch's fields
    spellings = [canonical_pci("00000000:1A:00.0"), canonical_pci("0000:1a:00.0"), canonical_pci("1a:00.0"),
                 canonical_pci(domain=0, bus=0x1A, device=0), canonical_pci(bus=26)]
    assert set(spellings) == {"0000:1a:00.0"}
    assert canonical_pci(domain=0, bus=0, device=6) == canonical_pci("00000000:00:06.0") == "0000:00:06.0"
    assert canonical_pci("0000:00:06.0") != canonical_pci("0000:00:00.6")  # the old OpenCL misreading
    assert canonical_pci("not a bus id") is None and canonical_pci(None) is None


def test_one_uuid_in_every_spelling():
    vulkan = UUID_A.removeprefix("GPU-").replace("-", "")  # VkPhysicalDeviceIDProperties.deviceUUID
    assert canonical_uuid(UUID_A) == canonical_uuid(vulkan) == canonical_uuid(UUID_A.lower()) == vulkan
    assert canonical_uuid("GPU-1234") is None and canonical_uuid(None) is None


def rec(backend, index, uuid=None, pci=None, name="NVIDIA H200", kind="gpu", reason=None):
    return {"backend": backend, "index": index, "name": name, "kind": kind, "uuid": uuid, "pci_bus_id": pci,
            "reason": reason, "slug": f"{backend}-own-{index}"}


def two_h200(webgpu_ids=True):
    """A two-H200 host as each backend reports it; CUDA enumerates the card at 1a first."""
    vk = {u: u.removeprefix("GPU-").replace("-", "") for u in (UUID_A, UUID_B)}
    return [
        rec("cuda", 0, UUID_B, "0000:1a:00.0"), rec("cuda", 1, UUID_A, "0000:19:00.0"),
        rec("torch", 0, UUID_B, "0000:1a:00.0"), rec("torch", 1, UUID_A, "0000:19:00.0"),
        rec("torch", 2, name="AMD EPYC", kind="cpu"),
        rec("opencl", 0, pci=canonical_pci(domain=0, bus=0x19, device=0)),
        rec("opencl", 1, pci=canonical_pci(domain=0, bus=0x1A, device=0)),
        rec("webgpu", 0, vk[UUID_A] if webgpu_ids else None),
        rec("webgpu", 1, vk[UUID_B] if webgpu_ids else None),
        rec("webgpu", 2, name="NVIDIA H200/PCIe/SSE2", reason="OpenGL adapter; used through Vulkan"),
    ]


def test_every_backend_names_each_card_the_same():
    records = two_h200()
    cards = unify(records)
    assert [(c["slug"], c["ordinal"]) for c in cards] == [("nvidia-h200-1a-00-0", "gpu0"),
                                                          ("nvidia-h200-19-00-0", "gpu1")]
    for c in cards:
        assert sorted(r["backend"] for r in c["records"]) == ["cuda", "opencl", "torch", "webgpu"]
        assert {r["slug"] for r in c["records"]} == {c["slug"]} and {r["model"] for r in c["records"]} == {
            "nvidia-h200"}
        assert all(r["attribution"] is None for r in c["records"])
    by = {(r["backend"], r["index"]): r for r in records}
    assert by["opencl", 0]["slug"] == by["cuda", 1]["slug"] == by["webgpu", 0]["slug"] \
        == "nvidia-h200-19-00-0"
    assert by["torch", 2]["slug"] == "torch-own-2" and "ordinal" not in by["torch", 2]  # the CPU: untouched
    assert by["webgpu", 2]["slug"] == "webgpu-own-2"  # an unusable adapter: untouched

    # --device gpu1 / a slug / gpu select the same card in every backend
    for backend in ("cuda", "opencl", "webgpu"):
        mine = [r for r in records if r["backend"] == backend]
        picked = _pick_devices(mine, "gpu1")
        assert len(picked) == 1 and picked == _pick_devices(mine, "nvidia-h200-19-00-0")
        assert picked[0]["pci_bus_id"] in (canonical_pci("19:00.0"), None)
        assert len(_pick_devices(mine, "gpu")) == 2
    # all: every GPU; the CPU joins when asked
    assert {r["kind"] for r in _pick_devices(records, "all")} == {"gpu"}
    assert len(_pick_devices(records, "all,cpu")) == len(_pick_devices(records, "all")) + 1


def test_one_card_keeps_the_model_slug_and_a_nameless_record_joins_it():
    records = [rec("cuda", 0, UUID_A, "0000:19:00.0"), rec("opencl", 0, pci="0000:19:00.0"), rec("webgpu", 0)]
    unify(records)
    assert {r["slug"] for r in records} == {"nvidia-h200"} and {r["ordinal"] for r in records} == {"gpu0"}


def test_records_that_name_no_card_are_labelled_and_run_alone():
    records = two_h200(webgpu_ids=False)
    unify(records)
    web = [r for r in records if r["backend"] == "webgpu" and r["reason"] is None]
    assert {r["slug"] for r in web} == {"nvidia-h200-unattributed"} and {r["ordinal"] for r in web} == {None}
    assert all("cannot be attributed" in r["attribution"] for r in web)
    assert _pick_devices(web, "gpu0") == []  # not per-GPU


# -- spread and replicate -------------------------------------------------------------------------

class FakePool:
    """Stands in for the worker pool to check the scheduler: which thread ran which item when."""

    def __init__(self, delay=0.02):
        self.delay, self.log, self.lock = delay, [], threading.Lock()

    def run(self, item, timeout):
        t0 = time.monotonic()
        time.sleep(self.delay)
        with self.lock:
            self.log.append((item.device_slug, item.id, t0, time.monotonic()))
        return {"device": item.device_slug, "op": item.op, "backend": item.backend, "variant": item.variant,
                "case": item.case, "status": "ok", "message": ""}

    def finish(self):
        pass


DEVS = {"h200-a": {"model": "h200", "ordinal": "gpu0"}, "h200-b": {"model": "h200", "ordinal": "gpu1"},
        "h100": {"model": "h100", "ordinal": "gpu2"},
        "h200-unattributed": {"model": "h200", "attribution": "no identity"}}


def items_on(slugs, n=12):
    base = [Item("vector_add", "cuda", f"v{k}", "n=1", 0, "", "test") for k in range(n)]
    return [replace(it, device_slug=s) for s in slugs for it in base]


def test_spread_runs_each_item_once_on_the_cards_of_its_model():
    items = items_on(["h200-a", "h200-b", "h100"])
    tasks, last = work(items, DEVS, spread=True)
    assert sorted(map(len, tasks.values())) == [12, 12] and last == []
    pool = FakePool()
    rows = execute(pool, items, parallel=True, rate=False, devices=DEVS, spread=True)
    ran = [(s, i.rsplit("@", 1)[0]) for s, i, *_ in pool.log]
    h200 = sorted(i for s, i in ran if s.startswith("h200"))
    assert h200 == sorted(it.id.rsplit("@", 1)[0] for it in items if it.device_slug == "h200-a")  # once each
    assert {s for s, _ in ran} == {"h200-a", "h200-b", "h100"}  # both H200s took work
    assert sorted(i for s, i in ran if s == "h100") == h200  # another model runs everything
    executed = {(s, i) for s, i, *_ in pool.log}
    assert [(r["device"], r["variant"]) for r in rows] == [  # plan order, the copies not run left out
        (it.device_slug, it.variant) for it in items if (it.device_slug, it.id) in executed]
    assert len(rows) == 24
    per_card = Counter(s for s, _ in ran if s.startswith("h200"))
    assert min(per_card.values()) >= 4, per_card  # the two cards shared it (about 6 each)
    first = {i.split("/")[2]: s for s, i in ran if s.startswith("h200")}
    assert first["v0"] == "h200-a" and first["v6"] == "h200-b"  # each began on its own half
    for slug in ("h200-a", "h200-b"):  # a card never runs two items at once
        spans = sorted((a, b) for s, _, a, b in pool.log if s == slug)
        assert all(y[0] >= x[1] for x, y in zip(spans, spans[1:], strict=False))


def test_replicate_runs_every_item_on_every_card_and_unattributed_rows_last():
    items = items_on(["h200-a", "h200-b", "h200-unattributed"], n=4)
    pool = FakePool()
    rows = execute(pool, items, parallel=True, rate=False, devices=DEVS, spread=False)
    assert len(rows) == 12 and [r["device"] for r in rows] == [it.device_slug for it in items]
    assert all(r["attribution"] == "no identity" for r in rows if r["device"] == "h200-unattributed")
    alone = [(a, b) for s, _, a, b in pool.log if s == "h200-unattributed"]
    others = [(a, b) for s, _, a, b in pool.log if s != "h200-unattributed"]
    assert min(a for a, _ in alone) >= max(b for _, b in others)  # after every per-card item


# -- peaks ----------------------------------------------------------------------------------------

def test_a_card_without_peaks_inherits_its_models_labelled(tmp_path, monkeypatch):
    monkeypatch.setattr(sol, "peaks_search", lambda root=None: [tmp_path])  # not the committed ones

    def peaks(slug, **kw):
        (tmp_path / slug).mkdir()
        (tmp_path / slug / "peaks.json").write_text(json.dumps({"device": slug, "measured": {
            "bandwidth": {"value": 4.2e12}}, **kw}))

    peaks("nvidia-h200")  # measured on a one-card host: no model, no driver recorded (older file)
    pk = sol.load_peaks("nvidia-h200-19-00-0", tmp_path, model="nvidia-h200", driver="580.159.04")
    assert pk["inherited_from"] == "nvidia-h200" and pk["file"].endswith("nvidia-h200/peaks.json")
    assert sol.load_peaks("nvidia-h200-19-00-0", tmp_path) is None  # no model: nothing to inherit
    assert "inherited_from" not in sol.load_peaks("nvidia-h200", tmp_path, model="nvidia-h200")

    (tmp_path / "nvidia-h200" / "peaks.json").unlink()
    peaks("nvidia-h200-nvl", model="nvidia-h200-nvl")  # another model whose slug shares the prefix
    peaks("nvidia-h200-1a-00-0", model="nvidia-h200", driver="570.1")  # same model, other driver
    assert sol.load_peaks("nvidia-h200-19-00-0", tmp_path, model="nvidia-h200", driver="580.159.04") is None
    pk = sol.load_peaks("nvidia-h200-19-00-0", tmp_path, model="nvidia-h200", driver="570.1")
    assert pk["inherited_from"] == "nvidia-h200-1a-00-0"
    row = {"timing": {"median_s": 1e-3}, "bytes": 2.1e9, "flops": 0, "dtype": "fp32"}
    sol.derive(row, pk)
    assert row["peaks_used"]["inherited_from"] == "nvidia-h200-1a-00-0"
    assert row["pct_sol"] == pytest.approx(50)


def test_peaks_of_another_physical_card_in_the_same_folder_are_labelled(tmp_path, monkeypatch):
    """A fleet hands out a different card of the model each time: the one folder's peaks then
    name the card they were measured on, and rows on another card say so."""
    from suite.runner import device_peaks

    monkeypatch.setattr(sol, "peaks_search", lambda root=None: [tmp_path])
    (tmp_path / "nvidia-h200").mkdir()
    (tmp_path / "nvidia-h200" / "peaks.json").write_text(json.dumps(
        {"device": "nvidia-h200", "uuid": UUID_A, "measured": {"bandwidth": {"value": 4.2e12}}}))
    assert "measured_on_card" not in device_peaks("nvidia-h200", {"uuid": UUID_A})
    pk = device_peaks("nvidia-h200", {"uuid": UUID_B.lower().removeprefix("gpu-").replace("-", "")})
    assert pk["measured_on_card"] == UUID_A
    row = {"timing": {"median_s": 1e-3}, "bytes": 2.1e9, "flops": 0, "dtype": "fp32"}
    sol.derive(row, pk)
    assert row["peaks_used"]["measured_on_card"] == UUID_A
