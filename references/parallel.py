"""Host work over large arrays in pieces, on every core.

Bench-size arrays hold up to 2^28 elements: single-threaded NumPy passes over them (drawing inputs,
references, comparisons) were most of a row's host time. NumPy releases the GIL inside its loops, so
a thread pool over fixed-size pieces uses every core; the pieces' boundaries depend on the size
only, never on the core count, so results do not either.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def over_pieces(fn: Callable[[int], T], n: int, piece: int) -> list[T]:
    """``[fn(start) for start in range(0, n, piece)]``, run on min(pieces, cores) threads."""
    starts = range(0, n, piece)
    if len(starts) <= 1:
        return [fn(s) for s in starts]
    with ThreadPoolExecutor(min(len(starts), os.cpu_count() or 1)) as ex:
        return list(ex.map(fn, starts))
