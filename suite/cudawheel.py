"""Which CuPy wheel (and NVRTC, cuda-bindings) fits this machine's NVIDIA driver.

A CuPy wheel is built for one CUDA major version (``cupy-cuda12x``, ``cupy-cuda13x``) and needs a
driver that supports it; the driver's CUDA version is the "CUDA Version: X.Y" of ``nvidia-smi``.
NVRTC is pinned to at most the driver's minor version so the code it generates can be loaded by
that driver. ``scripts/setup.sh`` runs this file with the system Python (stdlib only, no venv
yet) to get the pip requirements; ``solbench doctor`` shows the same choice and its reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

#: CUDA major version → (CuPy wheel, NVRTC wheel, cuda-bindings range)
WHEELS: dict[int, tuple[str, str, str]] = {
    11: ("cupy-cuda11x>=13,<14", "nvidia-cuda-nvrtc-cu11", "cuda-bindings>=11.8,<12"),
    12: ("cupy-cuda12x>=13", "nvidia-cuda-nvrtc-cu12", "cuda-bindings>=12,<13"),
    13: ("cupy-cuda13x>=13", "nvidia-cuda-nvrtc", "cuda-bindings>=13,<14"),
}
NEWEST = max(WHEELS)


@dataclass(frozen=True)
class Choice:
    """The wheels for this driver (empty when there is none) and why."""

    cuda_version: str | None  # the driver's, e.g. "12.4"; None without a usable driver
    requirements: tuple[str, ...]
    reason: str

    @property
    def cupy(self) -> str | None:
        """The CuPy distribution name, e.g. ``cupy-cuda12x``."""
        return next((re.split(r"[<>=~!]", r)[0] for r in self.requirements if r.startswith("cupy-")), None)


def driver_cuda_version(nvidia_smi_output: str) -> tuple[int, int] | None:
    """(major, minor) from ``nvidia-smi``'s "CUDA Version: X.Y" header, or None."""
    m = re.search(r"CUDA Version\s*:\s*(\d+)\.(\d+)", nvidia_smi_output)
    return (int(m.group(1)), int(m.group(2))) if m else None


def choose(nvidia_smi_output: str | None) -> Choice:
    """The CuPy/NVRTC/cuda-bindings requirements for a driver, from ``nvidia-smi``'s output
    (None: no nvidia-smi, or it failed)."""
    if nvidia_smi_output is None:
        return Choice(None, (), "no NVIDIA driver (nvidia-smi absent or failing): no CuPy wheel; "
                                "CUDA kernels are compiled through NVRTC only")
    ver = driver_cuda_version(nvidia_smi_output)
    if ver is None:
        return Choice(None, (), "nvidia-smi shows no \"CUDA Version\": cannot tell which CuPy wheel "
                                "fits; install cupy-cuda12x or cupy-cuda13x by hand")
    major, minor = ver
    text = f"{major}.{minor}"
    if major < min(WHEELS):
        return Choice(text, (), f"the driver supports CUDA {text} only; CuPy wheels need CUDA "
                                f"{min(WHEELS)} or newer: update the driver")
    use = min(major, NEWEST)
    cupy, nvrtc, bindings = WHEELS[use]
    # NVRTC no newer than the driver: its output must be loadable by this driver
    nvrtc_req = f"{nvrtc}>={use}.0,<{use}.{minor + 1}" if use == major else f"{nvrtc}>={use}.0"
    why = (f"the driver supports CUDA {text} (nvidia-smi), so the CUDA {use} wheels"
           + ("" if use == major else " (the newest known here; drivers run older CUDA)")
           + (f", NVRTC ≤ {use}.{minor}" if use == major else ""))
    return Choice(text, (cupy, nvrtc_req, bindings), why)


def nvidia_smi() -> str | None:
    """``nvidia-smi``'s output, or None when there is no working driver."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return None
    try:
        r = subprocess.run([exe], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def installed(dist: str | None) -> str | None:
    """Installed version of a distribution, or None."""
    if not dist:
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    # setup.sh: print the pip requirements (one per line), the reason on stderr
    c = choose(nvidia_smi() if len(sys.argv) < 2 else open(sys.argv[1]).read())
    print(f"setup: CuPy wheel: {', '.join(c.requirements) or 'none'}: {c.reason}", file=sys.stderr)
    print("\n".join(c.requirements))
