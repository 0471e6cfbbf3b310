"""NVIDIA identity and clock/power/throttle readings through NVML (nvidia-ml-py), best effort:
no NVML → empty dicts."""

from __future__ import annotations

from typing import Any

from backends.base import canonical_pci

_THROTTLE = {
    0x1: "gpu_idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
    0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clocks",
}
_handles: dict[int | str, Any] = {}
_max_clocks: dict[Any, tuple[int, int]] = {}


def _handle(index: int, pci_bus_id: str | None = None):
    """NVML handle of a GPU: by PCI bus id when known (CUDA and NVML indices differ under
    CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER=FASTEST_FIRST), else by index."""
    key = pci_bus_id or index  # NVML takes the canonical "dddd:bb:dd.f" form
    if key not in _handles:
        import pynvml

        pynvml.nvmlInit()
        _handles[key] = (pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode()) if pci_bus_id
                         else pynvml.nvmlDeviceGetHandleByIndex(index))
    return _handles[key]


def _s(x) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def find_index(pci_bus_id: str | None = None, name: str | None = None) -> int | None:
    """NVML index of the GPU at ``pci_bus_id`` or, when that is unknown or matches nothing (WebGPU,
    some OpenCL drivers), of the only GPU called ``name``; None without NVML or a match."""
    try:
        import pynvml

        pynvml.nvmlInit()
        named = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            if pci_bus_id and canonical_pci(_s(pynvml.nvmlDeviceGetPciInfo(h).busId)) == pci_bus_id:
                return i
            if name and _s(pynvml.nvmlDeviceGetName(h)) == name:
                named.append(i)
        # a PCI id that matched nothing (OpenCL's NVIDIA driver reported one in another form on the
        # H200: no OpenCL row had clocks) still falls back to a unique name
        return named[0] if len(named) == 1 else None
    except Exception:  # noqa: BLE001 - NVML is optional
        return None


def nvml_identity(index: int, pci_bus_id: str | None = None) -> dict[str, Any]:
    """UUID, PCI bus id ("bb:dd.f"), driver, memory bus width and max memory clock of CUDA device
    ``index``; pass the device's PCI bus id (from the CUDA runtime) to match NVML's device by it,
    since NVML and CUDA indices agree only when CUDA_DEVICE_ORDER=PCI_BUS_ID and nothing is hidden."""
    try:
        import pynvml

        h = _handle(index, pci_bus_id)
        return {"uuid": _s(pynvml.nvmlDeviceGetUUID(h)),
                "pci_bus_id": canonical_pci(_s(pynvml.nvmlDeviceGetPciInfo(h).busId)),
                "driver": _s(pynvml.nvmlSystemGetDriverVersion()),
                "mem_bus_width_bits": int(pynvml.nvmlDeviceGetMemoryBusWidth(h)),
                "mem_clock_max_mhz": int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)),
                "sm_clock_max_mhz": int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM))}
    except Exception:  # noqa: BLE001 - NVML is optional
        return {}


def gpu_clocks(index: int, pci_bus_id: str | None = None) -> dict[str, Any]:
    """SM/memory clocks (MHz), power (W), temperature and active throttle reasons now (the GPU
    found by ``pci_bus_id`` when given, see ``nvml_identity``)."""
    try:
        import pynvml

        h = _handle(index, pci_bus_id)
        mask = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)
        key = (index, pci_bus_id)  # NVML handles are ctypes pointers: unhashable
        if key not in _max_clocks:  # the ceilings a low clock is judged against (suite.timing)
            _max_clocks[key] = (pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
                                pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM))
        return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "sm_max_mhz": _max_clocks[key][0], "mem_max_mhz": _max_clocks[key][1],
                "power_w": round(pynvml.nvmlDeviceGetPowerUsage(h) / 1000, 1),
                "temp_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU),
                "throttle": [n for bit, n in _THROTTLE.items() if mask & bit]}
    except Exception:  # noqa: BLE001
        return {}
