"""The GPU-host scripts name ops, cases and probe configurations that exist: a typo there costs a
device call (10 minutes of a 30-minute budget), so it is caught here."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from suite.registry import discover, get_spec

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ["scripts/sweep_gpu.sh", "scripts/integrity_gpu.sh"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_parses(script):
    r = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def _invocations(text: str):
    """(op list, case list) of each `suite.cli run` / `probe.py OP BACKEND --case` (or sweep_gpu.sh's
    `probe` helper) in a script."""
    joined = re.sub(r"\\\n\s*", " ", text)  # line continuations
    loop: list[str] = []  # the values of the last `for c in ...; do` (a probe's "$c")
    for line in joined.splitlines():
        f = re.match(r"\s*for c in (.+); do", line)
        if f:
            loop = shlex.split(f.group(1))  # quoted values as the shell reads them
        if "suite.cli" in line and " run " in line or "cli " in line and " run " in line:
            words = shlex.split(line.split("#")[0].replace('"${V[@]}"', ""))
            ops = [words[i + 1] for i, w in enumerate(words) if w == "--op"]
            cases = [words[i + 1] for i, w in enumerate(words) if w == "--case"]
            yield ops, cases
        # probe.py itself, or sweep_gpu.sh's `probe SECONDS NAME OP BACKEND --case ...`
        m = re.search(r"(?:probe\.py|^\s*probe \S+ \S+) (\w+) (\w+) --case (\S+)", line)
        if m and "--dims" not in line:  # --dims: a shape the spec does not list, named by --case
            name = m.group(3).strip("'\"")
            yield [m.group(1)], loop if name == "$c" else [name]


@pytest.mark.parametrize("script", SCRIPTS)
def test_cases_named_in_scripts_exist(script):
    discover()
    seen = 0
    for ops, cases in _invocations((ROOT / script).read_text()):
        for name in cases:
            if not ops:
                continue
            found = []
            for op in ops:
                try:
                    get_spec(op).case(name)
                    found.append(op)
                except (KeyError, ValueError):
                    pass
            assert found, f"{script}: case {name!r} is no case of {ops}"
            seen += 1
    assert seen, f"{script}: no --case found (the parser above needs updating)"


def test_ncu_keys_in_scripts_exist():
    """The op/backend/variant/case keys given to scripts/ncu_limiter.py name registered kernels or
    probe configurations (a quoted key: the label has spaces) and cases of their op."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from crosscheck import factory

    discover()
    text = re.sub(r"\\\n\s*", " ", (ROOT / "scripts/sweep_gpu.sh").read_text())
    keys = [k for line in text.splitlines() if "ncu_limiter" in line or "NCU_KEYS" in line
            for k in re.findall(r'"(\w+/\w+/[^/"]+/[^\s"]+)"|\b(\w+/\w+/\w+/[^\s}"\']+)', line)]
    keys = [q or plain for q, plain in keys if not (q or plain).startswith("scripts/")]
    assert keys, "no ncu_limiter keys found (the parser above needs updating)"
    assert any(" " in k for k in keys), "no probe configuration among the keys (the parser above)"
    for key in keys:
        op, backend, variant, case = key.split("/", 3)
        assert callable(factory(op, backend, variant)), key
        get_spec(op).case(case)


def test_ncu_key_of_an_unknown_variant_lists_the_valid_ones():
    sys.path.insert(0, str(ROOT / "scripts"))
    from crosscheck import factory

    discover()
    with pytest.raises(KeyError, match="valid: .*'split_row'.*'split_row ahead=0'"):
        factory("softmax", "triton", "split_row ahead=9")


def test_size_ceiling_runs_on_the_cpu(tmp_path):
    """scripts/size_ceiling.py (plain reads of a byte count, the GEMV misses' limiter) runs end to end
    where the suite does: a typo in it cost a device call once."""
    pytest.importorskip("torch")
    cmd = [sys.executable, str(ROOT / "scripts/size_ceiling.py"), "--out", str(tmp_path),
           "--sizes", "65536,262144", "--cap", "0.02"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads((tmp_path / "size-ceiling.json").read_text())["rows"]
    assert [(row["case"], row["read"]) for row in rows] == [(f"{b} B", w) for b in (65536, 262144)
                                                           for w in ("x @ Wᵀ", "torch.sum")]
    assert all(row["median_s"] > 0 and row["bytes"] >= 65536 for row in rows)


def test_cl_window_runs_on_the_cpu(tmp_path):
    """scripts/cl_window.py (the OpenCL window against the timed commands' own events) runs end to
    end on PoCL and reports every timer for a listed case and a --dims-style shape."""
    pytest.importorskip("pyopencl")
    cmd = [sys.executable, str(ROOT / "scripts/cl_window.py"), "vector_add/naive/n32:n=32",
           "gemv_lowbit/fused_vec/w4a16,n48,k256,b1,bf16"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT, env={**os.environ,
                                                                                       "OUT": str(tmp_path)})
    if "no usable device" in r.stderr + r.stdout:
        pytest.skip("no OpenCL device")
    assert r.returncode == 0, r.stderr[-2000:]
    rows = json.loads((tmp_path / "cl_window.json").read_text())["rows"]
    assert [row["target"] for row in rows] == cmd[2:]
    for row in rows:
        assert all(row[k] > 0 for k in ("window_us", "events_us", "ungated_us", "host_batch_us")), row


@pytest.mark.parametrize("backend, module", [("opencl", "pyopencl"), ("webgpu", "wgpu")])
def test_read_ceiling_runs_on_the_cpu(tmp_path, backend, module):
    """scripts/read_ceiling.py --backend opencl / webgpu (what an OpenCL or WebGPU path allows at
    the GEMV's byte counts) runs every form end to end on PoCL / lavapipe at an odd size, each
    checked by the XOR of every word it read before it is timed."""
    pytest.importorskip(module)
    sys.path.insert(0, str(ROOT / "scripts"))
    from read_ceiling import DIALECTS

    only = [] if backend == "opencl" else ["--only", "empty|u4 2x512|chunk"]  # (lavapipe: slow dispatches)
    cmd = [sys.executable, str(ROOT / "scripts/read_ceiling.py"), "--backend", backend, "--sizes", "1000016",
           "--cap", "0.02", "--out", str(tmp_path), *only]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    if "no usable device" in r.stderr + r.stdout or "no adapter" in r.stderr + r.stdout:
        pytest.skip(f"no {backend} device")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads((tmp_path / f"read-ceiling-{backend}.json").read_text())
    want = DIALECTS["opencl"].forms if backend == "opencl" else ["empty", "ldg u4 2x512", "chunk u4 2x512"]
    assert doc["backend"] == backend and [row["form"] for row in doc["rows"]] == want
    assert all(row["checked"] and row["median_s"] > 0 for row in doc["rows"]), doc["rows"]


@pytest.mark.parametrize("script", ["read_ceiling", "pk_timeline"])
def test_cuda_probe_forms_compile(script):
    """Every form of the CUDA probe scripts compiles for sm_90 through NVRTC on a machine without a
    GPU: scripts/read_ceiling.py's read kernels (the GEMV limiter probe, TMA bulk forms included)
    and scripts/pk_timeline.py's gemv_lowbit_pk builds with PTIMELINE."""
    import importlib

    from backends.cuda import nvrtc_available

    if nvrtc_available():
        pytest.skip(f"NVRTC unavailable: {nvrtc_available()}")
    r = subprocess.run([sys.executable, str(ROOT / f"scripts/{script}.py")], capture_output=True,
                       text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    sys.path.insert(0, str(ROOT / "scripts"))
    assert r.stdout.count(" compiled (") == len(importlib.import_module(script).FORMS)


def test_dot4_probe_runs_on_the_cpu(tmp_path):
    """scripts/dot4_probe.py (does WGSL's dot4I8Packed reach the GPU as DP4A?) runs end to end on
    lavapipe: both forms built, checked against its NumPy emulation and timed."""
    pytest.importorskip("wgpu")
    cmd = [sys.executable, str(ROOT / "scripts/dot4_probe.py"), "--iters", "16", "--out", str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    if "no usable device" in r.stderr + r.stdout:
        pytest.skip("no WebGPU adapter")
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads((tmp_path / "probe-dot4-webgpu.json").read_text())
    assert [(row["form"], row["checked"]) for row in doc["rows"]] == [("native", "ok"), ("manual", "ok")]
    assert doc["ratio_native_over_manual"] > 0
