"""grayscale: interleaved RGB (H, W, 3) → luma (H, W), Y = 0.299 R + 0.587 G + 0.114 B.

uint8 rule: Y is the exact real value rounded to the nearest integer; an exact tie (x.5, which
occurs when 299R + 587G + 114B ≡ 500 mod 1000) may round either way. fp32: the unrounded value.
Bytes: read 3·H·W, write H·W (times the itemsize). Flops: 5 per pixel (3 mul, 2 add).
"""

from __future__ import annotations

import numpy as np

from references.elementwise import grayscale
from suite.spec import Arg, Case, OpSpec, Tolerance, np_dtype

# (H, W): a single pixel, odd widths that are not multiples of 4/16/32, one row, one column,
# and images larger than one block.
TEST_SHAPES = [(1, 1), (1, 3), (3, 1), (7, 13), (31, 33), (64, 129), (257, 255), (480, 641)]
#: shapes from the kernels' own thresholds (256-thread blocks, 4 and 16 pixels per thread, so
#: 1024/4096 pixels per block): even widths, multiples of 4 and 16, exactly one and two vec16
#: blocks, one more vector than a block, and a power-of-two width over several blocks
EVEN_SHAPES = [(2, 2), (4, 16), (16, 64), (1, 4096), (2, 4096), (3, 4112), (129, 512)]


def signature(case: Case) -> dict[str, Arg]:
    h, w = case["h"], case["w"]
    return {"img": Arg((h, w, 3), case.dtype, "in"), "out": Arg((h, w), case.dtype, "out")}


def make_inputs(case: Case, rng: np.random.Generator) -> dict[str, np.ndarray]:
    shape = (case["h"], case["w"], 3)
    if case.dtype == "u8":
        return {"img": rng.integers(0, 256, size=shape, dtype=np.uint8)}
    return {"img": rng.random(shape, dtype=np.float32)}


def reference(case: Case, x: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"out": grayscale(x["img"])}


def tolerance(case: Case) -> Tolerance:
    if case.dtype == "u8":
        # Compared with the unrounded float64 luma: the nearest integer is within 0.5; only at an
        # exact tie is the other neighbour also within 0.5 + 1e-4. An fp32 evaluation errs by
        # < 1e-4 (values <= 255, ulp 2^-16, five roundings), and exact values are multiples of
        # 1e-3, so this admits 1 LSB exactly where the rule allows it, and nowhere else.
        return Tolerance(atol=0.5 + 1e-4, rtol=0.0, reason="u8: round to nearest; ties either way")
    # Three products and two sums of non-negative terms in fp32: <= 5 roundings of 2^-24 |Y|.
    return Tolerance(atol=1e-7, rtol=4e-7, reason="fp32: 5 roundings of non-negative terms")


def _cases(shapes, dtype, seed0):
    return [Case(f"{h}x{w}" + ("" if dtype == "u8" else f",{dtype}"), {"h": h, "w": w}, dtype, seed0 + i)
            for i, (h, w) in enumerate(shapes)]


SPEC = OpSpec(
    name="grayscale",
    signature=signature,
    make_inputs=make_inputs,
    reference=reference,
    bytes_moved=lambda c: 4 * c["h"] * c["w"] * np_dtype(c.dtype).itemsize,
    flops=lambda c: 5 * c["h"] * c["w"],
    tolerance=tolerance,
    test_cases=_cases(TEST_SHAPES, "u8", 100) + _cases([(1, 1), (31, 33), (257, 255)], "fp32", 200)
    + _cases(EVEN_SHAPES, "u8", 150) + _cases([(4, 16), (2, 4096)], "fp32", 250),
    bench_cases={
        "gpu": _cases([(8192, 8192), (2160, 3840)], "u8", 300) + _cases([(8192, 8192)], "fp32", 400),
        "cpu": _cases([(2160, 3840)], "u8", 300) + _cases([(2160, 3840)], "fp32", 400),
    },
    description="Y = 0.299 R + 0.587 G + 0.114 B",
)
