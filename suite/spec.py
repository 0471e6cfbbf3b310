"""What an operator is: its cases, argument signature, reference, byte/flop counts and tolerance.

An ``OpSpec`` is pure data plus NumPy functions; nothing here touches a GPU. Every benchmark
derives GB/s, TFLOP/s and % of SOL from ``bytes_moved`` and ``flops`` of the case, never from
arithmetic written inline next to a kernel.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from references.parallel import over_pieces

#: dtype names used in cases → NumPy storage dtypes. Backends map these names to their own types.
#: ``bf16`` has no NumPy type: it travels as raw 16-bit words (``uint16``) everywhere (OpenCL C,
#: WGSL and CuPy have no bf16 array type either); torch/Triton factories ``.view(torch.bfloat16)``
#: and ``references.numerics`` converts (round to nearest even).
DTYPES: dict[str, np.dtype] = {
    "fp64": np.dtype(np.float64),
    "fp32": np.dtype(np.float32),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(np.uint16),
    "i32": np.dtype(np.int32),
    "u32": np.dtype(np.uint32),
    "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
}


#: dtype names holding floating-point values (bf16 included, although its storage is uint16)
FLOAT_DTYPES = ("fp64", "fp32", "fp16", "bf16")

#: compute precisions: what the arithmetic is held to (tolerance, FLOP ceiling, label). ``fp32``
#: is strict IEEE fp32 (CUDA-core peak); ``tf32`` rounds fp32 operands to a 10-bit mantissa
#: (tensor cores); ``fp16``/``bf16`` multiply 16-bit operands and accumulate in fp32.
PRECISIONS = ("fp32", "tf32", "fp16", "bf16", "fp64", "int")


def default_precision(dtype: str) -> str:
    """The compute precision a case of storage ``dtype`` has unless it says otherwise."""
    return dtype if dtype in FLOAT_DTYPES else "int"


def np_dtype(name: str) -> np.dtype:
    """NumPy dtype for a case dtype name; unknown names list the valid ones."""
    try:
        return DTYPES[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; valid: {', '.join(DTYPES)}") from None


@dataclass(frozen=True)
class Case:
    """One problem instance: named dims, the operator's dtype and the seed of its inputs."""

    name: str
    dims: Mapping[str, int]
    dtype: str
    seed: int = 0
    #: compute precision (see ``PRECISIONS``); None: the dtype's default (``default_precision``)
    precision: str | None = None

    def __post_init__(self):
        if self.precision is not None and self.precision not in PRECISIONS:
            raise ValueError(f"case {self.name}: unknown precision {self.precision!r}; "
                             f"valid: {', '.join(PRECISIONS)}")

    def __getitem__(self, key: str) -> int:
        return self.dims[key]

    @property
    def prec(self) -> str:
        """The case's compute precision."""
        return self.precision or default_precision(self.dtype)


@dataclass(frozen=True)
class Arg:
    """One kernel argument: shape, dtype name and whether the kernel reads or writes it."""

    shape: tuple[int, ...]
    dtype: str
    role: str  # "in" | "out"

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np_dtype(self.dtype).itemsize


@dataclass(frozen=True)
class Tolerance:
    """Element-wise bound ``|out - ref| <= atol + rtol*|ref|``, plus a bound on the relative
    error norm. ``reason`` says why the numbers are what they are (it lands in reports)."""

    atol: float
    rtol: float
    reason: str
    rel_norm: float = float("inf")

    @classmethod
    def exact(cls, reason: str = "integer result: exact") -> Tolerance:
        return cls(0.0, 0.0, reason, 0.0)


@dataclass(frozen=True)
class OpSpec:
    """An operator: everything the harness needs except the kernels."""

    name: str
    signature: Callable[[Case], dict[str, Arg]]
    make_inputs: Callable[[Case, np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[Case, dict[str, np.ndarray]], dict[str, np.ndarray]]
    bytes_moved: Callable[[Case], int]
    flops: Callable[[Case], int]
    tolerance: Callable[[Case], Tolerance]
    test_cases: list[Case]
    #: bench cases per device class ("gpu", "cpu")
    bench_cases: Mapping[str, list[Case]] = field(default_factory=dict)
    description: str = ""
    #: optional comparison replacing the element-wise one, for shapes whose full float64
    #: reference is too costly: ``verify(case, inputs, outputs, reference, tol) -> CheckResult``,
    #: outputs decoded to floats (``references.numerics.decode``), ``reference`` what
    #: ``reference`` returned (e.g. sampled rows plus Freivalds products, see ops/matmul/spec.py)
    verify: Callable | None = None
    #: whether a case's traffic is (almost) all reads (a reduction, a GEMV): its rows are rated
    #: against the read-only bandwidth ceiling too (``pct_sol_read``, see suite/sol.py) beside
    #: the copy ceiling. None: never (an op that reads and writes alike, e.g. softmax, stays on copy)
    read_dominated: Callable[[Case], bool] | None = None

    def reads_only(self, case: Case) -> bool:
        """Whether ``case`` is read-dominated (``read_dominated``)."""
        return bool(self.read_dominated and self.read_dominated(case))

    def cases(self, size: str, device_kind: str = "gpu") -> list[Case]:
        """Cases of a size class: ``test`` or ``bench`` (bench sized for the device class)."""
        if size == "test":
            return list(self.test_cases)
        if size == "bench":
            return list(self.bench_cases.get(device_kind, self.bench_cases.get("gpu", [])))
        raise ValueError(f"unknown size {size!r}; valid: test, bench")

    def case(self, name: str) -> Case:
        every = self.test_cases + [c for cs in self.bench_cases.values() for c in cs]
        for c in every:
            if c.name == name:
                return c
        raise ValueError(f"{self.name}: unknown case {name!r}; valid: "
                         f"{', '.join(sorted({c.name for c in every}))}")

    def footprint(self, case: Case) -> int:
        """Device bytes the arguments occupy (inputs + outputs)."""
        return sum(a.nbytes for a in self.signature(case).values())

    def inputs(self, case: Case) -> dict[str, np.ndarray]:
        """Fresh random inputs from the case's seed (never zeros)."""
        return self.make_inputs(case, InputRng(case.seed))


class InputRng:
    """The ``np.random.Generator`` that ``make_inputs`` draws from, whose large draws fill on
    every core: a draw of ≥ ``PARALLEL_MIN`` values is cut into ``CHUNK``-value pieces, each from
    its own child generator (``Generator.spawn``, independent streams), filled by a thread pool
    (NumPy releases the GIL while it fills). Single-threaded, a 2^28-value draw took 3–6 s and a
    bench row's inputs up to 12 s of host time (``phases_s``). The values depend on the seed and
    the sequence of draws only, never on the core count; small draws and every other method come
    from the parent generator."""

    PARALLEL_MIN = 1 << 22
    CHUNK = 1 << 20

    def __init__(self, seed: int):
        self.gen = np.random.default_rng(seed)

    def __getattr__(self, name: str):  # choice, permutation, ...: the parent generator's
        return getattr(self.gen, name)

    def _fill(self, size, dtype, draw, small):
        n = 0 if size is None else int(math.prod(np.atleast_1d(size)))
        if n < self.PARALLEL_MIN:
            return small()
        out = np.empty(n, dtype)
        kids = self.gen.spawn(-(-n // self.CHUNK))
        over_pieces(lambda i: draw(kids[i // self.CHUNK], out[i:i + self.CHUNK]), n, self.CHUNK)
        return out.reshape(size)

    def standard_normal(self, size=None, dtype=np.float64):
        return self._fill(size, dtype, lambda g, o: g.standard_normal(o.size, dtype=dtype, out=o),
                          lambda: self.gen.standard_normal(size, dtype=dtype))

    def random(self, size=None, dtype=np.float64):
        return self._fill(size, dtype, lambda g, o: g.random(o.size, dtype=dtype, out=o),
                          lambda: self.gen.random(size, dtype=dtype))

    def uniform(self, low=0.0, high=1.0, size=None):
        def draw(g, o):
            o[:] = g.uniform(low, high, o.size)
        return self._fill(size, np.float64, draw, lambda: self.gen.uniform(low, high, size))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        def draw(g, o):
            o[:] = g.integers(low, high, o.size, dtype=dtype, endpoint=endpoint)
        return self._fill(size, dtype, draw,
                          lambda: self.gen.integers(low, high, size, dtype=dtype, endpoint=endpoint))


def elementwise_cases(dtype: str, sizes: list[int], prefix: str = "n") -> list[Case]:
    """Cases ``n=<size>`` for 1-D operators, with distinct seeds."""
    return [Case(f"{prefix}={n}", {"n": n}, dtype, seed=1000 + i) for i, n in enumerate(sizes)]
