"""Which large OpenCL buffers a device accepts: a plain buffer, and a sub-buffer between guard
regions (how the harness allocates inputs and outputs, backends/opencl.py: alloc_guarded), each
written whole and read back, at sizes around 2^31 bytes. One line per attempt: ok, or the error.

    python3 scripts/cl_alloc_probe.py [--platform NVIDIA]
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    import pyopencl as cl

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="", help="a substring of the platform name")
    args = ap.parse_args()
    plat = next(p for p in cl.get_platforms() if args.platform.lower() in p.name.lower())
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    print(f"# {plat.name} / {dev.name}: max_mem_alloc_size {dev.max_mem_alloc_size}, "
          f"global {dev.global_mem_size}, mem_base_addr_align {dev.mem_base_addr_align} bits")
    guard = max(4096, dev.mem_base_addr_align // 8)
    for n in (2**30, 2**31 - 4096, 2**31, 2**31 + 4096, 3 * 2**30):
        for kind in ("plain", "guarded"):
            try:
                host = np.full(n // 4, 7, np.uint32)
                if kind == "plain":
                    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n)
                    target = buf
                else:
                    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, n + 2 * guard)
                    cl.enqueue_fill_buffer(q, buf, np.uint8(0xA5), 0, n + 2 * guard)
                    target = buf.get_sub_region(guard, n)
                cl.enqueue_copy(q, target, host)
                back = np.empty_like(host)
                cl.enqueue_copy(q, back, target, is_blocking=True)
                print(f"{kind:8s} {n:>12d} bytes: {'ok' if np.array_equal(back, host) else 'WRONG DATA'}")
                del target, buf
            except Exception as e:  # noqa: BLE001 - each attempt reports its own error
                print(f"{kind:8s} {n:>12d} bytes: {type(e).__name__}: {str(e)[:160]}")


if __name__ == "__main__":
    main()
