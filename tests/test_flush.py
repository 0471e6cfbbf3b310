"""The cold-sample L2 flush reads its whole buffer (backends/*: flush_l2), on the real OpenCL
(PoCL) and WebGPU (lavapipe) devices of this machine; and OpenCL's one-buffer limit.

Each flush kernel stores to a sink only when the words one invocation read sum to 1. The buffer is
zeroed, then one word at a time set to 1 (the first, one at a window boundary, the last) and back
to 0: the sink changes only if that word was read. WebGPU's binding limit is lowered so the buffer
is read in windows. Both forms of each flush kernel are read: one contiguous chunk per invocation
(what a CPU device runs) and the grid-stride loop (a GPU's)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.spawn import check_in_process, open_backend


def _positions(nbytes: int, step: int) -> list[int]:
    """Byte offsets of the 16-byte word to mark: first, both sides of the first window seam, last."""
    seam = [step - 16, step] if step < nbytes else []
    return [0, *seam, nbytes - 16]


def _opencl() -> dict:
    be, skip = open_backend("opencl")
    if skip:
        return skip
    import pyopencl as cl

    fails = []
    n = be._flush_bytes
    cl.enqueue_copy(be.queue, be._flush, np.zeros(n // 4, np.uint32))
    for be._flush_chunked, pos in itertools.product((True, False), _positions(n, n)):
        cl.enqueue_copy(be.queue, be._flush, np.ones(1, np.uint32), dst_offset=pos)
        cl.enqueue_copy(be.queue, be._flush_sink, np.zeros(1, np.uint32))
        be.flush_l2()
        sink = np.zeros(1, np.uint32)
        cl.enqueue_copy(be.queue, sink, be._flush_sink)
        cl.enqueue_copy(be.queue, be._flush, np.zeros(1, np.uint32), dst_offset=pos)
        be.queue.finish()
        if sink[0] != 1:
            fails.append(f"opencl (chunked {be._flush_chunked}): the word at byte {pos} of {n} was not read "
                         f"(sink {sink[0]})")
    return {"fails": fails}


def _webgpu() -> dict:
    be, skip = open_backend("webgpu")
    if skip:
        return skip
    n = be._flush_size
    # three or more windows, never above the device's own limit (a host with a big last-level
    # cache has a flush buffer whose third exceeds lavapipe's 128 MiB bindings)
    real = int(be.wdev.limits["max-storage-buffer-binding-size"])
    be.limits["max-storage-buffer-binding-size"] = max(1 << 16, min(n // 3, real))
    step = be._window_step()
    fails = [] if step < n else [f"webgpu: window step {step} does not split a {n}-byte buffer"]
    be.queue.write_buffer(be._flush.buf, 0, np.zeros(be._flush.buf.size // 4, np.uint32).tobytes())
    for be._flush_chunked, pos in itertools.product((True, False), _positions(n, step)):
        be.queue.write_buffer(be._flush.buf, pos, np.array([1, 0, 0, 0], np.uint32).tobytes())
        be.queue.write_buffer(be._flush_sink.buf, 0, np.zeros(4, np.uint32).tobytes())
        be.flush_l2()
        be.synchronize()
        sink = np.frombuffer(be.wdev.queue.read_buffer(be._flush_sink.buf), np.uint32)
        be.queue.write_buffer(be._flush.buf, pos, bytes(16))
        if sink[0] != 1:
            fails.append(f"webgpu (chunked {be._flush_chunked}): the word at byte {pos} of {n} was not read "
                         f"(sink {sink[0]})")
    return {"fails": fails}


@pytest.mark.parametrize("body", [_opencl, _webgpu], ids=["opencl", "webgpu"])
def test_flush_reads_every_word(body):
    check_in_process(body)


def _opencl_buffer_limit() -> dict:
    """A buffer above the device's one-buffer limit is Unsupported (a row with the reason) on every
    allocation path; at the limit it is made."""
    be, skip = open_backend("opencl")
    if skip:
        return skip
    from backends.base import Unsupported

    be.max_buffer = 1 << 20  # as NVIDIA's 2^31 − 1, scaled down
    fails = []
    small, big = np.zeros(1 << 18, np.float32), np.zeros((1 << 18) + 1, np.float32)
    for name, make in (("upload", lambda a: be.upload(a)), ("empty", lambda a: be.empty(a.shape, a.dtype)),
                       ("alloc_guarded", lambda a: be.alloc_guarded(a.shape, a.dtype, 0, 0xA5, a))):
        try:
            make(big)
            fails.append(f"{name}: a buffer above the limit was made")
        except Unsupported as e:
            if "exceeds" not in str(e):
                fails.append(f"{name}: unclear reason {e}")
        if name != "alloc_guarded":  # the guards take room of their own
            make(small)
    return {"fails": fails}


def test_opencl_buffer_limit():
    check_in_process(_opencl_buffer_limit)
