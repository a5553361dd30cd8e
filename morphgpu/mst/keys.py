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

The pass plan (edges in passes of increasing key, see kernels/boruvka.cu's notes) is
chosen here from a fixed hashed sample of keys, exactly as the kernel chooses it, and cut
short after a pass where a fixed hashed sample of entries finds too little of the rest
live (:func:`split_continues`), so the CPU and GPU paths split the edges identically and
report the same rounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend
from ..hashing import mix32

ALL_KEYS = 0xFFFFFFFF  # the last pass's upper key bound
SAMPLE_SIZE = 256
# Pass 0 covers about FIRST_PASS_HALVES / 2 CSR entries per vertex (1.5: past a random
# graph's giant component, with few edges that are nobody's lightest to rescan); each
# later pass doubles the entries covered; at most MAX_PASSES passes (boruvka.cu's
# MST_FIRST_PASS_HALVES and MST_MAX_PASSES).
FIRST_PASS_HALVES = 3
MAX_PASSES = 8
# After a pass, LIVE_SAMPLE hashed CSR entries (LIVE_SALT) are checked: the planned split
# after the next pass stands only while at least 1 / LIVE_SPLIT_SHARE of them lie above the
# passes done and join two components; else the next pass takes every remaining key
# (boruvka.cu's LIVE_SAMPLE, LIVE_SALT, MST_LIVE_SPLIT_SHARE, and its notes on why).
LIVE_SAMPLE = 1024
LIVE_SALT = 0x9E3779B9
LIVE_SPLIT_SHARE = 4
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
    """The CSR positions whose keys choose the pass plan (same on both sides)."""
    i = np.arange(SAMPLE_SIZE, dtype=np.uint32)
    return (mix32(i).astype(np.uint64) % np.uint64(max(m, 1))).astype(np.int64)


def pass_limits(keys: np.ndarray, n: int, *, first_halves: int = FIRST_PASS_HALVES,
                max_passes: int = MAX_PASSES) -> list[int]:
    """The largest key of each pass (pass p takes the keys in (limit[p - 1], limit[p]]);
    the last is ALL_KEYS. A pass is split off while the entries above its sampled
    quantile are at least as many as those below; limits that would leave a pass empty
    (equal to the one before, or ALL_KEYS) are skipped."""
    m = int(keys.size)
    limits: list[int] = []
    target = max(first_halves * n // 2, 1)
    if m and 2 * target <= m:
        sample = np.sort(np.asarray(keys)[sample_positions(m)])
        while len(limits) < max_passes - 1 and 2 * target <= m:
            limit = int(sample[target * SAMPLE_SIZE // m])
            if (not limits or limit > limits[-1]) and limit != ALL_KEYS:
                limits.append(limit)
            target *= 2
    return limits + [ALL_KEYS]


def live_sample_positions(m: int) -> np.ndarray:
    """The CSR positions whose liveness decides each later split (same on both sides)."""
    i = np.arange(LIVE_SAMPLE, dtype=np.uint32) ^ np.uint32(LIVE_SALT)
    return (mix32(i).astype(np.uint64) % np.uint64(max(m, 1))).astype(np.int64)


def split_continues(live: int) -> bool:
    """Whether the planned split after the next pass stands, ``live`` of the LIVE_SAMPLE
    sampled entries lying above the passes done with their ends in two components."""
    return LIVE_SPLIT_SHARE * live >= LIVE_SAMPLE
