"""What the L2 flush before a cold sample costs the sample that follows it (torch on a CUDA GPU).

The harness's cold samples follow a flush that *writes* a buffer of twice the L2: the cache is
left full of dirty lines, which the next kernel must write back to memory while it runs. For a
kernel that moves a few GiB that is noise; for one that reads 128 MiB in ~40 µs it is not. This
times the same kernels (CUDA events, median of 200, each sample after its own flush) after four
flushes: none (hot), write (fill), write then read (fill, then a sum over the same buffer) and
read only (a sum over a buffer written once, at set-up), and prints one row per kernel.

    python3 scripts/flush_probe.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--samples", type=int, default=200)
    args = ap.parse_args()
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    buf = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device=dev)
    buf.fill_(0x5A)
    words = buf.view(torch.int64)
    flushes = {"hot": lambda: None, "write": lambda: buf.fill_(0x5A),
               "write+read": lambda: (buf.fill_(0x5A), words.sum()), "read": lambda: words.sum()}
    g = torch.Generator(device=dev).manual_seed(0)
    a16 = torch.randn(16, 8192, device=dev, generator=g).bfloat16()
    b = torch.randn(8192, 8192, device=dev, generator=g).bfloat16()
    x128 = torch.randn(32 << 20, device=dev, generator=g)  # 128 MiB fp32
    x1g = torch.randn(256 << 20, device=dev, generator=g)  # 1 GiB fp32
    y1g = torch.empty_like(x1g)
    gemv_bytes = 8192 * 8192 * 2 + 2 * 16 * 8192 * 2
    kernels = {"matmul bf16 16x8192x8192 (128 MiB of B)": (lambda: a16 @ b, gemv_bytes),
               "sum fp32 128 MiB": (lambda: x128.sum(), 128 << 20),
               "copy fp32 1 GiB": (lambda: y1g.copy_(x1g), 2 << 30)}
    rows = []
    print(f"# {torch.cuda.get_device_name(dev)}, L2 {l2 >> 20} MiB, flush buffer {buf.numel() >> 20} MiB; "
          f"median µs (GB/s) of {args.samples} samples")
    print("| kernel | " + " | ".join(flushes) + " |")
    print("|---|" + "---|" * len(flushes))
    for name, (fn, nbytes) in kernels.items():
        for _ in range(5):
            fn()
        row = {"kernel": name, "bytes": nbytes}
        for fname, flush in flushes.items():
            ts = []
            for _ in range(args.samples):
                flush()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                e.synchronize()
                ts.append(s.elapsed_time(e) * 1e3)
            row[fname] = statistics.median(ts)
        rows.append(row)
        cells = [f"{row[f]:.1f} ({nbytes / row[f] / 1e3:.0f})" for f in flushes]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(dev), "l2_bytes": l2, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
