"""Run a test body in a fresh spawned process (its own LLVM/driver: Triton, PoCL, lavapipe and
CuPy in one process have crashed here); a hang or crash is a failure, not a stuck test run."""

from __future__ import annotations

import multiprocessing as mp
import traceback

import pytest


def _child(q, fn, args):
    try:
        q.put(fn(*args))
    except BaseException:  # noqa: BLE001 - reported to the parent as a failure
        q.put({"fails": [traceback.format_exc()]})


def in_process(fn, args: tuple = (), timeout: float = 900) -> dict:
    """``fn(*args)`` (a module-level function returning a picklable dict) in a spawned process;
    ``{"fails": [...]}`` when it raised, hung or crashed."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q, fn, args), daemon=True)
    p.start()
    try:
        return q.get(timeout=timeout)
    except Exception:  # noqa: BLE001 - queue.Empty: hung or crashed
        why = f"no answer within {timeout:.0f} s (hang or crash, exit code {p.exitcode})"
        return {"fails": [f"{fn.__name__}{args[:1]}: {why}"]}
    finally:
        p.join(5)
        if p.is_alive():
            p.kill()


def open_backend(name: str):
    """(the backend ``name`` on its first usable device, None), or (None, {"skip": why}) when its
    package is missing or it has no usable device: for test bodies run by ``in_process``."""
    try:
        from backends import backend_class

        cls = backend_class(name)
        devs = [d for d in cls.devices() if d.usable]
    except Exception as e:  # noqa: BLE001 - a missing package is a skip
        return None, {"skip": f"{name} unavailable: {type(e).__name__}: {e}"}
    if not devs:
        return None, {"skip": f"{name}: no usable device"}
    return cls(devs[0]), None


def triton_missing() -> dict | None:
    """``{"skip": why}`` when Triton is not installed, else None: only a missing package skips a
    Triton compile test (a project module that fails to import is a failure)."""
    import importlib.util

    return {"skip": "triton is not installed"} if importlib.util.find_spec("triton") is None else None


def check_in_process(fn, args: tuple = (), timeout: float = 900, label=None) -> dict:
    """``in_process``, then the test's verdict: skipped when the body says ``skip``, failed with
    its ``fails`` (headed by ``label(result)`` when given); returns the result."""
    res = in_process(fn, args, timeout)
    if "skip" in res:
        pytest.skip(res["skip"])
    head = f"{label(res)}:\n" if label else ""
    assert not res["fails"], head + "\n".join(res["fails"])
    return res


def _nvrtc(path: str, entry: str, defines: dict, options: tuple, archs: tuple | None) -> dict:
    from pathlib import Path

    from backends.base import read_source
    from backends.cuda import compile_nvrtc, nvrtc_available

    why = nvrtc_available()
    if why:
        return {"skip": f"NVRTC unavailable: {why}"}
    p = Path(path)
    more = {"archs": archs} if archs else {}
    reps = compile_nvrtc(read_source(p), p.name, entry, defines, options=options, **more)
    return {"fails": [], "reports": reps}


def nvrtc_reports(path, entry: str, defines: dict | None = None, options: tuple[str, ...] = (),
                  archs: tuple[str, ...] | None = None) -> list[dict]:
    """``backends.cuda.compile_nvrtc`` of the kernel file ``path`` in a spawned process (NVRTC's
    LLVM loaded into a test worker that later imported Triton crashed it: clean-clone CI, session
    20); skipped where NVRTC is unavailable. The per-architecture resource reports."""
    args = (str(path), entry, dict(defines or {}), tuple(options), tuple(archs) if archs else None)
    return check_in_process(_nvrtc, args)["reports"]
