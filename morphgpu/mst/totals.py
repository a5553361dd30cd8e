"""The forest's total weight, exact for integer weights on both paths."""

from __future__ import annotations

import numpy as np


def exact_integer_sum(w: np.ndarray) -> int:
    """The exact sum of integer weights. An int64 sum wraps once 64-bit weights pass 2**63
    in total (two edges of 2**62 summed to -2**63, and uint64 ones past 2**63 read as
    negative); Python's ints do not, and are used only where the int64 sum could wrap."""
    if not w.size:
        return 0
    bound = max(int(w.max()), -int(w.min()))
    if bound * w.size < 2**63:
        return int(w.sum(dtype=np.int64))
    return sum(w.tolist())
