"""The start of a timed window, one rule for every device-timed backend.

A sample's window must open when the device starts the work ``fn()`` enqueued, not when the host
began enqueueing it: otherwise host launch latency (Python, Triton's launcher, torch.compile's
guards, a variant that enqueues five launches) is timed as device time. nvbench's answer is a
*blocking start*: the stream is held by a kernel that spins on a host-mapped flag, the start
event and ``fn()``'s work are enqueued behind it, and the host releases the flag once everything
is enqueued. Per backend:

* CUDA (CuPy), torch and Triton: ``CudaBlockingStart``: a one-thread kernel spinning on a flag in
  pinned, mapped host memory, with a device-side timeout (``%globaltimer``) so that an ``fn``
  that waits for the device (which would deadlock) releases itself; the timeout is counted and
  the row is flagged ``start_timeout``. torch and Triton launch the same CuPy kernel on torch's
  current stream (``cupy.cuda.ExternalStream``); without CuPy they fall back to a fixed spin
  lead (``torch.cuda._sleep``), labelled ``spin-lead``.
* OpenCL: ``ClGate``: a user event gates a one-work-item fence kernel that every later command
  of the in-order queue waits for; a second fence kernel follows ``fn``'s commands; released by
  the host, with a host-side timeout. The sample spans ``fn``'s own commands (kernels and fills
  enqueued through the backend: the first one's profiling start to the last one's end), not
  the fences: on the H200 the fence-to-fence span read 12–20 µs above the commands' own events
  (session 21, ``scripts/cl_window.py``). Fences are kernels, not markers: NVIDIA's OpenCL stamps
  markers (and commands held by a user event) on the host, so a marker-to-marker window measured
  0.44 ms for a softmax whose back-to-back launches took 0.138 ms each; kernel events are device
  times. The fence span minus the sample is queue time outside ``fn``'s commands (``outside_s``).
* WebGPU: the dispatches ``fn`` records are encoded into one command buffer and submitted once,
  after ``fn`` returns; the window is the timestamp at the beginning of the first pass to the
  end of the last. The host's recording cost cannot be inside it (``single-submit``); work that
  ``fn`` submits to the queue directly would run before the window and is rejected
  (``OutsideWindow``).

Work outside the window: CUDA-based adapters synchronise the whole device after the end event
and report how long the device stayed busy (``outside_s``), OpenCL the queue time between its
fences outside ``fn``'s commands; ``suite.timing.measure`` rejects a kernel whose median
``outside_s`` is large (work on another stream, a command enqueued past the backend).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

#: seconds a blocking start waits for the host before it lets the window open anyway
START_TIMEOUT_S = 0.25


class OutsideWindow(Exception):
    """The kernel's work is not all inside the timed window (another stream or queue, a direct
    submission): the row is invalid, with this message."""


BLOCK_SRC = r"""
// Holds its stream until the host writes flag[0] = 1 (pinned, mapped host memory), or until
// timeout_ns of %globaltimer have passed; then flag[1] = 1 says the window opened on a timeout.
extern "C" __global__ void solbench_block(volatile int* flag, unsigned long long timeout_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (flag[0] == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) { flag[1] = 1; break; }
        __nanosleep(256);
    }
}
"""


class CudaBlockingStart:
    """The blocking kernel of one CUDA device (CuPy), usable on any stream handle.

    ``hold(stream_ptr)`` enqueues the spin (the caller records its start event and enqueues the
    work after it); ``release()`` writes the flag; ``timed_out()`` says whether the last hold
    ended on its timeout instead."""

    def __init__(self, timeout_s: float = START_TIMEOUT_S):
        import cupy as cp

        self.cp = cp
        rt = cp.cuda.runtime
        self._host = rt.hostAlloc(8, 0x01 | 0x02)  # cudaHostAllocPortable | cudaHostAllocMapped
        get_dev = getattr(rt, "hostGetDevicePointer", None)
        self._dev = get_dev(self._host, 0) if get_dev else self._host  # UVA: the same address
        self._flag = (ctypes.c_int * 2).from_address(self._host)
        self._kernel = cp.RawModule(code=BLOCK_SRC, options=("-std=c++17",)).get_function("solbench_block")
        self.timeout_ns = int(timeout_s * 1e9)

    def hold(self, stream_ptr: int | None = None) -> None:
        import numpy as np

        self._flag[0], self._flag[1] = 0, 0
        args = (np.uint64(self._dev), np.uint64(self.timeout_ns))
        if stream_ptr is None:
            self._kernel((1,), (1,), args)
        else:
            with self.cp.cuda.ExternalStream(stream_ptr):
                self._kernel((1,), (1,), args)

    def release(self) -> None:
        self._flag[0] = 1

    def timed_out(self) -> bool:
        return bool(self._flag[1])

    def close(self) -> None:
        if self._host:
            self.cp.cuda.runtime.freeHost(self._host)
            self._host = 0


def cuda_blocking_start() -> tuple[CudaBlockingStart | None, str]:
    """A ``CudaBlockingStart`` when CuPy can build one here, else (None, why not)."""
    try:
        return CudaBlockingStart(), ""
    except Exception as e:  # noqa: BLE001 - no CuPy, no NVRTC: the caller falls back
        return None, f"{type(e).__name__}: {e}"


class ClGate:
    """An OpenCL user event that holds an in-order queue until the host releases it.

    ``open(queue)`` enqueues the gate and a fence kernel behind it; ``close(queue)`` enqueues the
    end fence (its event: wait on it) and releases the gate, so every command enqueued between
    them starts only after the host has enqueued them all. The sample is the span of those
    commands' own profiling events (``OpenCLBackend.time``); the fences' span (``span``) minus it is
    queue time outside them (12–20 µs on NVIDIA, session 21; far more when a command was enqueued
    past the backend). A host-side timer releases a gate that ``fn`` waits on (it would never be
    released otherwise) and counts the timeout."""

    FENCE = "__kernel void solbench_fence(void) { }"

    def __init__(self, ctx, timeout_s: float = START_TIMEOUT_S):
        import pyopencl as cl

        self.ctx = ctx
        self.timeout_s = timeout_s
        self._gate: Any = None
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self.fired = False
        self._fence = cl.Program(ctx, self.FENCE).build().solbench_fence

    def _fence_on(self, queue, wait_for=None):
        import pyopencl as cl

        return cl.enqueue_nd_range_kernel(queue, self._fence, (1,), (1,), wait_for=wait_for)

    @staticmethod
    def span(start, end) -> float:
        """Seconds from the end of the start fence to the start of the end fence."""
        return (end.profile.start - start.profile.end) * 1e-9

    def _release(self, by_timer: bool) -> None:
        import pyopencl as cl

        with self._lock:
            if self._gate is None:
                return
            if by_timer:
                self.fired = True
            self._gate.set_status(cl.command_execution_status.COMPLETE)
            self._gate = None

    def open(self, queue):
        import pyopencl as cl

        self.fired = False
        self._gate = cl.UserEvent(self.ctx)
        start = self._fence_on(queue, wait_for=[self._gate])
        self._timer = threading.Timer(self.timeout_s, self._release, args=(True,))
        self._timer.daemon = True
        self._timer.start()
        return start

    def close(self, queue):

        end = self._fence_on(queue)
        if self._timer is not None:
            self._timer.cancel()
        self._release(False)
        return end
