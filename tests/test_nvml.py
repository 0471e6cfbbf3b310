"""NVML readings with a stand-in pynvml whose handles are, like the real ones, unhashable ctypes
pointers: a clock reader that keys a dict by the handle returned {} for every row on the H200."""

from __future__ import annotations

import ctypes
import sys
import types

from backends import nvml


class _Dev(ctypes.Structure):
    _fields_ = [("x", ctypes.c_int)]


def _fake_pynvml() -> types.ModuleType:
    m = types.ModuleType("pynvml")
    handle = ctypes.pointer(_Dev(0))  # unhashable, as pynvml's c_nvmlDevice_t pointers are
    m.NVML_CLOCK_SM, m.NVML_CLOCK_MEM, m.NVML_TEMPERATURE_GPU = 1, 2, 0
    m.nvmlInit = lambda: None
    m.nvmlDeviceGetHandleByIndex = lambda i: handle
    m.nvmlDeviceGetHandleByPciBusId = lambda b: handle
    m.nvmlDeviceGetCurrentClocksEventReasons = lambda h: 0
    m.nvmlDeviceGetMaxClockInfo = lambda h, c: {1: 1980, 2: 3201}[c]
    m.nvmlDeviceGetClockInfo = lambda h, c: {1: 1755, 2: 3201}[c]
    m.nvmlDeviceGetPowerUsage = lambda h: 412_000
    m.nvmlDeviceGetTemperature = lambda h, t: 51
    return m


def test_gpu_clocks_with_unhashable_handles(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml())
    monkeypatch.setattr(nvml, "_handles", {})
    monkeypatch.setattr(nvml, "_max_clocks", {})
    c = nvml.gpu_clocks(0, "19:00.0")
    assert c["sm_mhz"] == 1755 and c["sm_max_mhz"] == 1980 and c["mem_mhz"] == 3201 and c["power_w"] == 412.0
    calls = []
    sys.modules["pynvml"].nvmlDeviceGetMaxClockInfo = lambda h, c: calls.append(c) or 1  # not read again
    assert nvml.gpu_clocks(0, "19:00.0")["sm_max_mhz"] == 1980 and not calls  # cached ceilings
