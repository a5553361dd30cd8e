"""Worklists on the host side (include/morphgpu/worklist.cuh is the device side).

- :class:`GlobalQueue`: a device (or host) queue plus its 64-bit tail counter, the target
  of ``mg::block_reserve`` and ``BlockWorklist::flush``. Kernels let the tail count past
  the capacity instead of failing, so after a round the host reads the tail once and, if
  it passed the capacity, grows the queue and redoes the round (kernel-host growth).
- NumPy twins of the device helpers, for the CPU paths and for tests:
  :func:`thread_ranges` (``mg::range_of_thread``), :func:`exclusive_sum`
  (``mg::block_exclusive_sum``) and :func:`reserve_slots` (``mg::block_reserve``: where
  each thread's items land when every block reserves its total with one atomic).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import backend


def thread_ranges(n: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """[begin, end) of the items each of ``threads`` threads owns: contiguous chunks whose
    sizes differ by at most one, the first ``n % threads`` threads taking the extra item."""
    if n < 0 or threads < 1:
        raise ValueError(f"thread_ranges: need n >= 0 and threads >= 1, got {n}, {threads}")
    t = np.arange(threads, dtype=np.int64)
    chunk, extra = divmod(int(n), int(threads))
    begin = t * chunk + np.minimum(t, extra)
    end = begin + chunk + (t < extra)
    return begin, end


def exclusive_sum(values: Any) -> tuple[Any, Any]:
    """(exclusive prefix sums, total) of a 1-D array, on its own side."""
    xp = backend.array_module(values)
    v = xp.asarray(values)
    inclusive = xp.cumsum(v)
    total = inclusive[-1] if v.size else v.dtype.type(0)
    return inclusive - v, total


def reserve_slots(counts: Any, block: int, tail: int = 0, block_order: Any = None) -> np.ndarray:
    """First queue slot of each thread when each block of ``block`` threads reserves its
    total with one atomicAdd, blocks arriving in ``block_order`` (default: by index)."""
    c = np.asarray(backend.to_host(counts), dtype=np.int64)
    n_blocks = -(-c.size // block)
    padded = np.zeros(n_blocks * block, dtype=np.int64)
    padded[: c.size] = c
    per_thread = padded.reshape(n_blocks, block)
    totals = per_thread.sum(axis=1)
    order = np.arange(n_blocks) if block_order is None else np.asarray(block_order)
    base = np.empty(n_blocks, dtype=np.int64)
    base[order] = tail + np.cumsum(totals[order]) - totals[order]
    within = np.cumsum(per_thread, axis=1) - per_thread
    return (base[:, None] + within).ravel()[: c.size]


class GlobalQueue:
    """``capacity`` items of ``dtype`` and a uint64 tail, on ``xp`` (NumPy or CuPy).

    Kernels take ``(items, tail, capacity)`` (:meth:`kernel_args`), the order of
    ``BlockWorklist::flush``.
    """

    def __init__(self, capacity: int, dtype: Any = np.int64, *, xp: Any = np,
                 growth: float = 1.5) -> None:
        if int(capacity) < 0:
            raise ValueError(f"GlobalQueue: capacity must be >= 0, got {capacity}")
        if not growth > 1.0:
            raise ValueError(f"GlobalQueue: growth must be > 1, got {growth}")
        self.xp = xp
        self.dtype = np.dtype(dtype)
        self.growth = float(growth)
        self.capacity = int(capacity)
        with backend.gpu_memory_guard(f"GlobalQueue of {capacity} {self.dtype} items"):
            self.items = xp.empty(max(1, self.capacity), dtype=self.dtype)
        self.tail = xp.zeros(1, dtype=xp.uint64)

    def kernel_args(self) -> tuple:
        return (self.items, self.tail, np.uint64(self.capacity))

    def reset(self) -> None:
        self.tail.fill(0)

    def pushed(self) -> int:
        """How many items kernels tried to push since the last reset (one read)."""
        return int(self.tail[0])

    def overflowed(self) -> bool:
        return self.pushed() > self.capacity

    def contents(self) -> Any:
        """The items stored (at most ``capacity``), a view on the queue's side."""
        return self.items[: min(self.pushed(), self.capacity)]

    def grow_to_fit(self) -> bool:
        """After a round: if pushes passed the capacity, reallocate (over-allocating by the
        growth factor; the contents are NOT kept, since the round must be redone), reset
        the tail and return True."""
        pushed = self.pushed()
        if pushed <= self.capacity:
            return False
        self.capacity = max(pushed, math.ceil(self.capacity * self.growth))
        with backend.gpu_memory_guard(f"GlobalQueue growth to {self.capacity} items"):
            self.items = self.xp.empty(self.capacity, dtype=self.dtype)
        self.reset()
        return True
