"""backends.vkid: every Vulkan physical device's identity, in the order of wgpu's Vulkan adapters
(which is how a WebGPU adapter is matched to its deviceUUID). Run in a spawned process, as every
WebGPU test: lavapipe's LLVM must not share the test worker with other runtimes."""

from __future__ import annotations

import ctypes
import re

from tests.spawn import check_in_process


def _identities_vs_wgpu() -> dict:
    from backends.vkid import vulkan_identities

    try:
        import wgpu

        adapters = wgpu.gpu.enumerate_adapters_sync()  # loads libvulkan first, as in a real run
    except Exception as e:  # noqa: BLE001 - a missing package is a skip
        return {"skip": f"wgpu unavailable: {type(e).__name__}: {e}"}
    ids = vulkan_identities()
    vk = [(a.info["device"], a.info["vendor_id"]) for a in adapters if a.info["backend_type"] == "Vulkan"]
    if not ids and not vk:
        try:
            ctypes.CDLL("libvulkan.so.1")
        except OSError as e:
            return {"skip": f"no Vulkan loader (libvulkan.so.1: {e})"}
        return {"skip": "the Vulkan loader lists no physical device"}
    fails = [f"bad uuid {d['uuid']!r} for {d['name']!r}" for d in ids
             if not re.fullmatch(r"[0-9a-f]{32}", d["uuid"])]
    fails += [f"empty name: {d}" for d in ids if not d["name"]]
    fails += [f"bad pci_bus_id {d['pci_bus_id']!r}" for d in ids if d["pci_bus_id"] is not None
              and not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", d["pci_bus_id"])]
    mine = [(d["name"], d["vendor_id"]) for d in ids]
    if mine != vk:
        fails.append(f"vulkan_identities {mine} != wgpu's Vulkan adapters {vk}")
    if vulkan_identities() != ids:
        fails.append("a second call answered differently")
    return {"fails": fails, "ids": ids}


def test_vulkan_identities_match_wgpu_adapters():
    check_in_process(_identities_vs_wgpu, timeout=300)
