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


def mix64(z: Any) -> Any:
    """SplitMix64's finaliser on uint64 values (NumPy or CuPy; wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = z ^ (z >> np.uint64(30))
        z = z * np.uint64(0xBF58476D1CE4E5B9)
        z = z ^ (z >> np.uint64(27))
        z = z * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def uniform_floats(xp: Any, n: int, seed: int) -> Any:
    """``n`` float32 values in [0, 1) from the counters 0..n-1 under ``seed`` (NumPy or
    CuPy, the same bits on both): the top 24 bits of mix64 of each counter offset by a
    mixed seed. The GPU engines draw their starting surveys and values with it rather than
    ``cupy.random``, whose first use imports cupyx.scipy.special (0.64 s of a new
    `morphgpu sat` process on the H100 machine's host)."""
    offset = mix64(np.uint64(int(seed) % 2**64))
    bits = mix64(xp.arange(n, dtype=xp.uint64) + offset) >> np.uint64(40)
    return bits.astype(xp.float32) * np.float32(2.0**-24)
