"""Integer mixers, bit-identical to ``include/morphgpu/hash.cuh`` (mg::mix32, mg::mix64).

Host paths use these where their device twins hash the same counters (claim priorities,
MST sample positions, the generators' counter-based random numbers), so the CPU and GPU
paths make the same pseudo-random choices.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def mix32(x: Any) -> Any:
    """The lowbias32 finaliser on uint32 values (NumPy or CuPy; wrapping arithmetic)."""
    x = x.astype(np.uint32)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint32(16)
        x *= np.uint32(0x7FEB352D)
        x ^= x >> np.uint32(15)
        x *= np.uint32(0x846CA68B)
        x ^= x >> np.uint32(16)
    return x


_MIX64_M1, _MIX64_M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)


def mix64(z: Any) -> Any:
    """SplitMix64's finaliser on uint64 values (NumPy or CuPy; wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = z ^ (z >> _S30)
        z = z * _MIX64_M1
        z = z ^ (z >> _S27)
        z = z * _MIX64_M2
        return z ^ (z >> _S31)


def mix64_inplace(z: np.ndarray, scratch: np.ndarray) -> None:
    """:func:`mix64` of a NumPy uint64 array, written over it with ``scratch`` (same
    length) as the only working array: no temporaries, for loops that keep both in the
    CPU's caches."""
    with np.errstate(over="ignore"):
        np.right_shift(z, _S30, out=scratch)
        z ^= scratch
        z *= _MIX64_M1
        np.right_shift(z, _S27, out=scratch)
        z ^= scratch
        z *= _MIX64_M2
        np.right_shift(z, _S31, out=scratch)
        z ^= scratch


def uniform_floats(xp: Any, n: int, seed: int) -> Any:
    """``n`` float32 values in [0, 1) from the counters 0..n-1 under ``seed`` (NumPy or
    CuPy, the same bits on both): the top 24 bits of mix64 of each counter offset by a
    mixed seed. The GPU engines draw their starting surveys and values with it rather than
    ``cupy.random``, whose first use imports cupyx.scipy.special (0.64 s of a new
    `morphgpu sat` process on the H100 machine's host)."""
    offset = mix64(np.uint64(int(seed) % 2**64))
    bits = mix64(xp.arange(n, dtype=xp.uint64) + offset) >> np.uint64(40)
    return bits.astype(xp.float32) * np.float32(2.0**-24)
