"""The total order both Borůvka paths use: 32-bit weight keys, then the edge's CSR position.

Every edge gets a 64-bit ``(key << 32) | position`` where ``key`` is an order-preserving
unsigned image of its weight: equal weights give equal keys, lighter weights smaller
keys. Positions are unique, so the packed values are unique, the minimum spanning forest
under this order is unique, and one ``atomicMin`` on a 64-bit word finds a component's
lightest edge with ties broken by position (the same tie rule as SciPy's stable sort, so
both return the same edges).

Int32 and float32 weights map bit-wise; float64 (int64) weights that are all float32
(int32) values map the same way through the narrower type. The GPU kernel does both
itself (it checks the narrowing, saving the host a pass and a read); other weights are
mapped here: exactly-float32 float64 through float32, int64 within int32 as int32,
anything else by its rank among the distinct weights (one sort, still exact).

The light-edge threshold (the first of two passes on graphs of average degree >= 8, after
the ECL-MST idea of filtering heavy edges out of the first rounds) is chosen here from a
fixed hashed sample, so the CPU and GPU paths split the edges identically.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from ..hashing import mix32

NO_THRESHOLD = 0xFFFFFFFF
SAMPLE_SIZE = 64
# Pass 1 gets about this many candidate CSR entries per vertex: enough light edges to
# connect most of the graph, few enough that the second pass sees mostly internal edges.
LIGHT_ENTRIES_PER_VERTEX = 4
MAX_POSITIONS = 2**32


def key_kind(weights: Any) -> str:
    """How the kernel reads weights: "int32" or "float32" bit-wise, "float64" ("int64")
    narrowed to float32 (int32) and checked there, else "keys" (mapped by weight_keys)."""
    dt = np.dtype(weights.dtype)
    if dt in (np.int32, np.float32, np.float64, np.int64):
        return dt.name
    return "keys"


def _float32_keys(xp: Any, w32: Any) -> Any:
    bits = w32.view(np.uint32)
    sign = np.uint32(0x80000000)
    # -0.0 keys as +0.0: equal weights tie by CSR position, as in SciPy.
    bits = xp.where(bits == sign, np.uint32(0), bits)
    return xp.where((bits & sign) != 0, ~bits, bits | sign).astype(np.uint32, copy=False)


def weight_keys(xp: Any, weights: Any) -> Any:
    """Order-preserving uint32 keys of ``weights`` (NumPy or CuPy, any real dtype)."""
    w = weights
    if w.dtype == np.bool_:
        w = w.astype(np.int32)
    kind = w.dtype.kind
    if kind == "f":
        if w.dtype == np.float32:
            return _float32_keys(xp, w)
        with np.errstate(over="ignore"):  # too large for float32: inf, then ranks
            w32 = w.astype(np.float32)
        if w.dtype.itemsize < 4 or bool((w32.astype(w.dtype) == w).all()):
            return _float32_keys(xp, w32)
        return _rank_keys(xp, w)
    if kind in "iu":
        if w.size == 0:
            return xp.zeros(0, dtype=np.uint32)
        # Both bounds in one read: on CuPy each int() would synchronise.
        lo, hi = (int(v) for v in backend.to_host(xp.stack((w.min(), w.max()))))
        if -(2**31) <= lo and hi < 2**31:
            return (w.astype(np.int32).view(np.uint32) ^ np.uint32(0x80000000)).astype(
                np.uint32, copy=False
            )
        if lo >= 0 and hi < 2**32:
            return w.astype(np.uint32)
        return _rank_keys(xp, w)
    raise ValueError(f"edge weights must be real numbers, got dtype {w.dtype}")


def _rank_keys(xp: Any, w: Any) -> Any:
    distinct = xp.unique(w)
    return xp.searchsorted(distinct, w).astype(np.uint32)


def sample_positions(m: int) -> np.ndarray:
    """The CSR positions whose keys choose the light-edge threshold (same on both sides)."""
    i = np.arange(SAMPLE_SIZE, dtype=np.uint32)
    return (mix32(i).astype(np.uint64) % np.uint64(max(m, 1))).astype(np.int64)


def threshold_index(n: int, m: int) -> int:
    """Which sorted sample is the threshold, or -1 for a single pass.

    Two passes only pay where the light one keeps at most about half the entries.
    """
    if m < 2 * LIGHT_ENTRIES_PER_VERTEX * n or m == 0:
        return -1
    return min(SAMPLE_SIZE - 1, (LIGHT_ENTRIES_PER_VERTEX * n * SAMPLE_SIZE) // m)


def light_threshold(keys: np.ndarray, n: int) -> int:
    """The key at or below which an edge belongs to the first pass (NO_THRESHOLD: one pass)."""
    m = int(keys.size)
    index = threshold_index(n, m)
    if index < 0:
        return NO_THRESHOLD
    sample = np.sort(np.asarray(keys)[sample_positions(m)])
    return int(sample[index])
