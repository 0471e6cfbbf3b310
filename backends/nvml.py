"""NVIDIA identity and clock/power/throttle readings through NVML (nvidia-ml-py), best effort:
no NVML → empty dicts."""

from __future__ import annotations

from typing import Any

_THROTTLE = {
    0x1: "gpu_idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
    0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clocks",
}
_handles: dict[int, Any] = {}


def _handle(index: int):
    if index not in _handles:
        import pynvml

        pynvml.nvmlInit()
        _handles[index] = pynvml.nvmlDeviceGetHandleByIndex(index)
    return _handles[index]


def _s(x) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def nvml_identity(index: int) -> dict[str, Any]:
    """UUID, PCI bus id, driver, memory bus width and max memory clock of CUDA device ``index``
    (NVML and CUDA order agree when CUDA_DEVICE_ORDER=PCI_BUS_ID; we match by PCI id anyway)."""
    try:
        import pynvml

        h = _handle(index)
        return {"uuid": _s(pynvml.nvmlDeviceGetUUID(h)),
                "pci_bus_id": _s(pynvml.nvmlDeviceGetPciInfo(h).busId).lower()[-12:],
                "driver": _s(pynvml.nvmlSystemGetDriverVersion()),
                "mem_bus_width_bits": int(pynvml.nvmlDeviceGetMemoryBusWidth(h)),
                "mem_clock_max_mhz": int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)),
                "sm_clock_max_mhz": int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM))}
    except Exception:  # noqa: BLE001 - NVML is optional
        return {}


def gpu_clocks(index: int) -> dict[str, Any]:
    """SM/memory clocks (MHz), power (W), temperature and active throttle reasons now."""
    try:
        import pynvml

        h = _handle(index)
        mask = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)
        return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "power_w": round(pynvml.nvmlDeviceGetPowerUsage(h) / 1000, 1),
                "temp_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                "throttle": [n for bit, n in _THROTTLE.items() if mask & bit]}
    except Exception:  # noqa: BLE001
        return {}
