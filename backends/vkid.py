"""The identity (name, ids, deviceUUID, PCI address) of every Vulkan physical device, read with
ctypes from the Vulkan loader.

wgpu-py's adapter info has no UUID and no PCI address, so on a host with several GPUs of one model
a WebGPU adapter cannot be told apart from its siblings. Vulkan can: on NVIDIA the
``VkPhysicalDeviceIDProperties.deviceUUID`` is the same UUID as CUDA's and NVML's, which is how
WebGPU rows are attributed to one physical GPU. wgpu's Vulkan adapters come in the loader's
``vkEnumeratePhysicalDevices`` order, which is the order returned here."""

from __future__ import annotations

import ctypes as C

from backends.base import canonical_pci

_P, _U32 = C.c_void_p, C.c_uint32
_ST_APP_INFO, _ST_INSTANCE_INFO = 0, 1
_ST_PROPS2, _ST_ID_PROPS, _ST_PCI_BUS = 1000059001, 1000071004, 1000212000
_API_1_1 = (1 << 22) | (1 << 12)  # VK_MAKE_API_VERSION(0, 1, 1, 0)
_PCI_EXT = b"VK_EXT_pci_bus_info"


class _AppInfo(C.Structure):
    _fields_ = [("sType", _U32), ("pNext", _P), ("pApplicationName", C.c_char_p),
                ("applicationVersion", _U32), ("pEngineName", C.c_char_p),
                ("engineVersion", _U32), ("apiVersion", _U32)]


class _InstanceInfo(C.Structure):
    _fields_ = [("sType", _U32), ("pNext", _P), ("flags", _U32), ("pApplicationInfo", _P),
                ("enabledLayerCount", _U32), ("ppEnabledLayerNames", _P),
                ("enabledExtensionCount", _U32), ("ppEnabledExtensionNames", _P)]


class _ExtensionProps(C.Structure):
    _fields_ = [("extensionName", C.c_char * 256), ("specVersion", _U32)]


class _Props2(C.Structure):
    # VkPhysicalDeviceProperties (824 bytes on x86-64, 8-byte aligned) is read from an oversized
    # buffer: apiVersion @0, vendorID @8, deviceID @12, deviceType @16, deviceName[256] @20.
    _fields_ = [("sType", _U32), ("pNext", _P), ("properties", C.c_uint64 * 256)]


class _IDProps(C.Structure):
    _fields_ = [("sType", _U32), ("pNext", _P), ("deviceUUID", C.c_uint8 * 16),
                ("driverUUID", C.c_uint8 * 16), ("deviceLUID", C.c_uint8 * 8),
                ("deviceNodeMask", _U32), ("deviceLUIDValid", _U32)]


class _PCIBusProps(C.Structure):
    _fields_ = [("sType", _U32), ("pNext", _P), ("pciDomain", _U32), ("pciBus", _U32),
                ("pciDevice", _U32), ("pciFunction", _U32)]


def _load():
    for name in ("libvulkan.so.1", "libvulkan.so"):
        try:
            return C.CDLL(name)
        except OSError:
            pass
    return None


def _check(res: int, what: str) -> None:
    if res != 0:  # VK_SUCCESS; VK_INCOMPLETE or an error would leave a partial answer
        raise RuntimeError(f"{what} returned VkResult {res}")


def _device(vk, get_props2, dev) -> dict:
    n = _U32()
    _check(vk.vkEnumerateDeviceExtensionProperties(dev, None, C.byref(n), None), "extensions")
    exts = (_ExtensionProps * n.value)()
    _check(vk.vkEnumerateDeviceExtensionProperties(dev, None, C.byref(n), exts), "extensions")
    has_pci = any(e.extensionName == _PCI_EXT for e in exts[:n.value])
    pci = _PCIBusProps(sType=_ST_PCI_BUS) if has_pci else None
    ids = _IDProps(sType=_ST_ID_PROPS, pNext=C.addressof(pci) if has_pci else None)
    props = _Props2(sType=_ST_PROPS2, pNext=C.addressof(ids))
    get_props2(dev, C.byref(props))
    raw = bytes(props.properties)
    api, _drv, vendor, device, dtype = (int.from_bytes(raw[i:i + 4], "little") for i in range(0, 20, 4))
    return {"name": raw[20:276].split(b"\0", 1)[0].decode("utf-8", "replace"),
            "vendor_id": vendor, "device_id": device, "device_type": dtype, "api_version": api,
            "uuid": bytes(ids.deviceUUID).hex(),
            "pci_bus_id": canonical_pci(domain=pci.pciDomain, bus=pci.pciBus, device=pci.pciDevice,
                                        function=pci.pciFunction) if has_pci else None}


def vulkan_identities() -> list[dict]:
    """One dict per physical device in vkEnumeratePhysicalDevices order: name, vendor_id,
    device_id, device_type, api_version, uuid (deviceUUID, 32 lowercase hex digits) and pci_bus_id
    ("dddd:bb:dd.f", or None without VK_EXT_pci_bus_info). [] when libvulkan cannot be loaded or
    anything fails; never raises."""
    try:
        vk = _load()
        if vk is None:
            return []
        vk.vkGetInstanceProcAddr.restype = _P
        vk.vkGetInstanceProcAddr.argtypes = [_P, C.c_char_p]
        vk.vkDestroyInstance.argtypes = [_P, _P]
        vk.vkEnumeratePhysicalDevices.argtypes = [_P, _P, _P]
        vk.vkEnumerateDeviceExtensionProperties.argtypes = [_P, C.c_char_p, _P, _P]
        app = _AppInfo(sType=_ST_APP_INFO, pApplicationName=b"solbench", apiVersion=_API_1_1)
        info = _InstanceInfo(sType=_ST_INSTANCE_INFO, pApplicationInfo=C.addressof(app))
        inst = _P()
        if vk.vkCreateInstance(C.byref(info), None, C.byref(inst)) != 0 or not inst.value:
            return []
        try:
            fn = (vk.vkGetInstanceProcAddr(inst, b"vkGetPhysicalDeviceProperties2")
                  or vk.vkGetInstanceProcAddr(inst, b"vkGetPhysicalDeviceProperties2KHR"))
            if not fn:
                return []
            get_props2 = C.CFUNCTYPE(None, _P, _P)(fn)
            n = _U32()
            _check(vk.vkEnumeratePhysicalDevices(inst, C.byref(n), None), "physical devices")
            devs = (_P * n.value)()
            _check(vk.vkEnumeratePhysicalDevices(inst, C.byref(n), devs), "physical devices")
            return [_device(vk, get_props2, devs[i]) for i in range(n.value)]
        finally:
            vk.vkDestroyInstance(inst, None)
    except Exception:  # noqa: BLE001 - an identity that cannot be read is no identity
        return []
