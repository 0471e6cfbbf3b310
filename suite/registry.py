"""The kernel registry: ``@kernel(op, backend, variant)`` fills ``REGISTRY``.

Kernels live in ``ops/<op>/kernels.py`` and are discovered by a folder scan; the operator's spec
is ``ops/<op>/spec.py:SPEC``. Registration fails at import, with the valid names, on an unknown
backend, a duplicate key, a numbered variant name or a missing source file.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from backends import BACKENDS, check_backend
from suite.spec import OpSpec

OPS_DIR = Path(__file__).resolve().parent.parent / "ops"


@dataclass(frozen=True)
class KernelEntry:
    op: str
    backend: str
    variant: str
    factory: Callable  # (backend, case) -> run(ins, outs)
    #: dtypes this kernel handles (None: every dtype of the op's cases)
    dtypes: tuple[str, ...] | None = None
    #: device features it needs (e.g. "shader-f16"); missing → skipped with the reason
    requires: tuple[str, ...] = ()
    #: known-bad cells as data: {"reason": ...}; such kernels are skipped with the reason
    disabled: str | None = None
    doc: str = ""
    #: test-size cases it is checked on (None: all of the op's). For torch.compile variants: every
    #: case is a fresh Inductor compile (seconds each in CI), the code is torch's to test, and one
    #: case per dtype shows the formulation is right; bench cases are all checked before timing
    test_cases: tuple[str, ...] | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.op, self.backend, self.variant)


REGISTRY: dict[tuple[str, str, str], KernelEntry] = {}
SPECS: dict[str, OpSpec] = {}


def kernel(op: str, backend: str, variant: str, *, dtypes=None, requires=(), disabled=None,
           test_cases=None):
    """Register a kernel factory under (op, backend, variant)."""
    check_backend(backend)
    if not re.fullmatch(r"[a-z][a-z0-9_]*", variant) or re.fullmatch(r"(v|variant|version)?_?\d+", variant):
        raise ValueError(f"variant {variant!r}: name it for what it does (naive, vec4, tiled, ...)")

    def deco(fn):
        key = (op, backend, variant)
        if key in REGISTRY:
            raise ValueError(f"duplicate kernel {key}; already registered by "
                             f"{REGISTRY[key].factory.__module__}")
        if test_cases and op in SPECS:  # discover() imports an op's spec before its kernels
            valid = [c.name for c in SPECS[op].test_cases]
            bad = [c for c in test_cases if c not in valid]
            if bad:
                raise ValueError(f"{key}: unknown test case {bad[0]!r}; valid: {', '.join(valid)}")
        REGISTRY[key] = KernelEntry(op, backend, variant, fn, tuple(dtypes) if dtypes else None,
                                    tuple(requires), disabled, (fn.__doc__ or "").strip(),
                                    tuple(test_cases) if test_cases else None)
        return fn

    return deco


def source(module_file: str, name: str) -> Path:
    """Path of a kernel source beside ``module_file``; a missing file fails at import."""
    path = Path(module_file).resolve().parent / name
    if not path.is_file():
        have = sorted(p.name for p in path.parent.iterdir() if p.suffix in {".cu", ".cl", ".wgsl"})
        raise FileNotFoundError(f"kernel source {name!r} not found beside {module_file}; have: {have}")
    return path


_discovered = False


def discover() -> None:
    """Import every ``ops/<op>/spec.py`` and ``kernels.py`` (once)."""
    global _discovered
    if _discovered:
        return
    for d in sorted(p for p in OPS_DIR.iterdir() if (p / "spec.py").is_file()):
        spec = importlib.import_module(f"ops.{d.name}.spec").SPEC
        if spec.name != d.name:
            raise ValueError(f"ops/{d.name}/spec.py names its op {spec.name!r}")
        SPECS[spec.name] = spec
        if (d / "kernels.py").is_file():
            importlib.import_module(f"ops.{d.name}.kernels")
    # extra kernel modules (e.g. the known-wrong kernels of tests/), also inside worker processes
    for mod in filter(None, os.environ.get("SOLBENCH_EXTRA_KERNELS", "").split(",")):
        importlib.import_module(mod)
    unknown = {k[0] for k in REGISTRY} - set(SPECS)
    if unknown:
        raise ValueError(f"kernels registered for unknown ops {sorted(unknown)}; ops: {sorted(SPECS)}")
    _discovered = True


def get_spec(op: str) -> OpSpec:
    discover()
    if op not in SPECS:
        raise ValueError(f"unknown op {op!r}; valid: {', '.join(sorted(SPECS))}")
    return SPECS[op]


def select(ops=None, backends=None, variants=None) -> list[KernelEntry]:
    """Registered kernels matching the filters; an unknown name raises with the valid ones (for a
    variant: the variants of the selected ops and backends, and where else the name exists)."""
    discover()
    for name, valid, what in ((ops, SPECS, "op"), (backends, BACKENDS, "backend")):
        for n in name or ():
            if n not in valid:
                raise ValueError(f"unknown {what} {n!r}; valid: {', '.join(sorted(valid))}")
    picked = [e for k, e in sorted(REGISTRY.items())
              if (not ops or k[0] in ops) and (not backends or k[1] in backends)]
    offered = {e.variant for e in picked}
    for n in variants or ():
        if n not in offered:
            scope = " on ".join(", ".join(f) for f in (ops, backends) if f) or "any op"
            elsewhere = sorted(f"{k[0]}/{k[1]}" for k in REGISTRY if k[2] == n)
            valid = ", ".join(sorted(offered)) or "none"
            raise ValueError(f"unknown variant {n!r} for {scope}; valid: {valid}"
                             + (f" ({n} is a variant of {', '.join(elsewhere)})" if elsewhere else ""))
    return [e for e in picked if not variants or e.variant in variants]
