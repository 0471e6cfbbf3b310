"""Backend names → adapter classes, imported lazily (each backend loads its own LLVM/driver, so a
worker process imports only the one it serves)."""

from __future__ import annotations

import importlib

#: name → "module:Class". torch is the baseline a user would otherwise pick.
BACKENDS: dict[str, str] = {
    "cuda": "backends.cuda:CudaBackend",
    "triton": "backends.triton:TritonBackend",
    "opencl": "backends.opencl:OpenCLBackend",
    "webgpu": "backends.webgpu:WebGPUBackend",
    "torch": "backends.torch:TorchBackend",
}


def check_backend(name: str) -> str:
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; valid: {', '.join(BACKENDS)}")
    return name


def backend_class(name: str):
    """Import and return the adapter class of a backend (raises ImportError if its package is
    missing; ``solbench doctor`` turns that into a fix)."""
    module, cls = BACKENDS[check_backend(name)].split(":")
    return getattr(importlib.import_module(module), cls)
