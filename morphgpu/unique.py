"""Sorted distinct values of an integer array, as ``numpy.unique(a)`` gives them.

NumPy 2.3 and later answer ``np.unique`` on integers with a hash table, which on large
arrays of mostly distinct values is far slower than sorting: 9.9 s against 0.16 s for
9.5M int64 values on the 2-core CPU machine (NumPy 2.4.6; benchmarks/RESULTS.md,
session 20). The host here sorts and keeps each value that differs from its left
neighbour; CuPy arrays go to ``cupy.unique`` (a sort already).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend


def sorted_unique(a: Any) -> Any:
    """``unique(a)`` (flattened, sorted, distinct) on ``a``'s own side. Arrays of other
    kinds than integers and booleans keep NumPy's rules (NaNs, for one)."""
    xp = backend.array_module(a)
    if xp is not np:
        return xp.unique(a)
    values = np.asarray(a)
    if values.dtype.kind not in "iub":
        return np.unique(values)
    out = np.sort(values, axis=None)  # a flattened, sorted copy
    if out.size < 2:
        return out
    return out[run_starts(out)]


def run_starts(sorted_values: Any) -> Any:
    """Where each run of equal values starts in a sorted 1-d array (NumPy or CuPy, on its
    own side): True at 0 and wherever a value differs from its left neighbour. Indexing
    with it gives the distinct values; its cumulative sum minus one, each entry's run."""
    xp = backend.array_module(sorted_values)
    first = xp.empty(sorted_values.size, dtype=bool)
    if sorted_values.size:
        first[0] = True
        xp.not_equal(sorted_values[1:], sorted_values[:-1], out=first[1:])
    return first
