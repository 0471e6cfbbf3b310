"""Guard regions around every kernel argument, and inputs that must stay unchanged.

A kernel that writes one element past the end of its output (``i <= n``, a store masked with
``offs <= n``) usually leaves a correct result: the element-wise check cannot see it. So every
input and output buffer the harness hands a kernel lies inside a larger allocation whose
``GUARD_BYTES`` on each side hold ``CANARY``; after each checked launch the guard regions are
read back and any changed byte rejects the kernel, and every input is read back and compared
byte for byte with what was uploaded.

Backends provide ``alloc_guarded(shape, dtype, guard, canary, data=None) -> (buffer, read)``
(``read()`` downloads both guard regions). WebGPU does not: a WGSL access outside a binding is
bounds-checked by the implementation (naga's robustness policy restricts it to the binding), so
it cannot reach a neighbour; there the buffers are plain and only the inputs are compared.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from references.parallel import over_pieces

#: bytes of canary on each side of every buffer (a multiple of every alignment in use)
GUARD_BYTES = 4096
#: the canary byte: not a poison byte (0xFF, 0xA5), not zero
CANARY = 0xC3


@dataclass
class Buffers:
    """The device buffers of one input set and its outputs, with their guard readers."""

    ins: dict[str, Any]
    outs: dict[str, Any]
    guards: dict[str, Callable[[], np.ndarray]] = field(default_factory=dict)

    @property
    def guarded(self) -> bool:
        return bool(self.guards)


def _alloc(be, shape, dtype, data=None):
    fn = getattr(be, "alloc_guarded", None)
    if fn is None:
        return (be.upload(data) if data is not None else be.empty(shape, dtype)), None
    return fn(shape, dtype, GUARD_BYTES, CANARY, data)


def allocate_inputs(be, sig, inputs: dict[str, np.ndarray]) -> tuple[dict[str, Any], dict[str, Callable]]:
    """Upload every input of signature ``sig`` into a guarded buffer."""
    ins, guards = {}, {}
    for k, a in sig.items():
        if a.role == "in":
            ins[k], read = _alloc(be, inputs[k].shape, inputs[k].dtype, inputs[k])
            if read is not None:
                guards[f"input {k}"] = read
    return ins, guards


def allocate(be, sig, inputs: dict[str, np.ndarray]) -> Buffers:
    """Guarded buffers for the inputs (uploaded) and outputs (uninitialised) of ``sig``."""
    from suite.spec import np_dtype

    ins, guards = allocate_inputs(be, sig, inputs)
    outs = {}
    for k, a in sig.items():
        if a.role == "out":
            outs[k], read = _alloc(be, a.shape, np_dtype(a.dtype))
            if read is not None:
                guards[f"output {k}"] = read
    return Buffers(ins, outs, guards)


def violations(be, guards: dict[str, Callable[[], np.ndarray]], ins: dict[str, Any],
               inputs: dict[str, np.ndarray]) -> list[str]:
    """What the last launch touched that it must not have: guard regions whose canary changed
    (a write out of bounds) and inputs that differ from what was uploaded."""
    be.synchronize()
    out = []
    for name, read in guards.items():
        g = read()
        bad = np.flatnonzero(g != CANARY)
        if bad.size:
            half = g.size // 2
            where = [f"{'before' if i < half else 'after'} +{(i - half) if i >= half else half - i}"
                     for i in bad[:3]]
            out.append(f"{name}: {bad.size} guard byte(s) changed (out-of-bounds write; "
                       f"bytes {', '.join(where)} of the buffer)")
    for k, buf in ins.items():
        got = np.ascontiguousarray(be.download(buf)).reshape(-1).view(np.uint8)
        want = np.ascontiguousarray(inputs[k]).reshape(-1).view(np.uint8)
        n = differing_bytes(got, want) if got.shape == want.shape else -1
        if n:
            out.append(f"input {k} was modified by the kernel ({n} byte(s) differ)")
    return out


#: bytes per piece of an input comparison
PIECE = 1 << 24


def differing_bytes(a: np.ndarray, b: np.ndarray) -> int:
    """How many bytes of two equal-length uint8 arrays differ, in ``PIECE``-byte pieces on every
    core: no full-length temporary (a 1 GiB input compared at once allocated a 1 GiB mask, on
    fresh pages, three times per row)."""
    return sum(over_pieces(lambda i: int(np.count_nonzero(a[i:i + PIECE] != b[i:i + PIECE])), a.size, PIECE))
