"""Borůvka on the GPU: one persistent kernel (kernels/boruvka.cu) runs every round.

The host prepares weight keys only when the weights are neither int32 nor float32 (the
kernel maps those itself), launches once, and reads back two things at the end: the
kernel's counters (rounds, overflow) and the tree-edge flags it wrote per CSR position.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import backend, barrier, kernels
from . import keys as keymod

KERNEL_PATH = "mst/kernels/boruvka.cu"
BLOCK = 256
_KEY_KIND_CODE = {"keys": 0, "int32": 1, "float32": 2}


class BoruvkaGPU:
    """Buffers and the persistent kernel for one graph; :meth:`launch` may be repeated.

    ``symmetric``: every edge is stored in both directions with one weight, so only the
    entries (u, v) with u < v are candidates (half the worklist).
    """

    def __init__(
        self,
        n: int,
        indptr: Any,
        indices: Any,
        weights: Any,
        *,
        symmetric: bool,
        barrier_mode: barrier.BarrierMode = "xiao-feng",
    ) -> None:
        cp = backend.cupy_module()
        self.n = int(n)
        self.m = int(indices.size)
        self.symmetric = bool(symmetric)
        kind = keymod.key_kind(weights)
        self.keys = weights if kind != "keys" else keymod.weight_keys(cp, weights)
        self.indptr = indptr
        self.indices = indices
        # The worklist never holds more than the candidate entries of one pass.
        self.capacity = self.m // 2 + 1 if self.symmetric else max(self.m, 1)
        vid_bytes = np.dtype(indices.dtype).itemsize
        edge_bytes = 16 if vid_bytes == 4 else 24
        needed = (
            2 * self.capacity * edge_bytes + self.n * (vid_bytes + 16) + self.m + 4096
        )
        backend.require_gpu_bytes(needed, f"boruvka on {self.n} vertices, {self.m} entries")
        with backend.gpu_memory_guard("boruvka buffers"):
            self.parent = cp.empty(max(self.n, 1), dtype=indices.dtype)
            self.lightest = cp.empty(2 * max(self.n, 1), dtype=cp.uint64)
            self.worklists = [
                cp.empty(self.capacity * edge_bytes, dtype=cp.uint8) for _ in range(2)
            ]
            self.counters = cp.zeros(3, dtype=cp.uint64)
            self.in_tree = cp.zeros(max(self.m, 1), dtype=cp.uint8)
            self.stats = cp.zeros(3, dtype=cp.uint64)
        defines = kernels.index_defines(indices.dtype, indptr.dtype)
        defines.update(MST_KEY_KIND=_KEY_KIND_CODE[kind], MST_BLOCK=BLOCK)
        self.grid = barrier.persistent_kernel(
            KERNEL_PATH, "mst_boruvka", mode=barrier_mode, block=BLOCK, defines=defines
        )

    def launch(self) -> None:
        """Run the whole forest computation (asynchronous; nothing is read back)."""
        self.in_tree.fill(0)
        self.grid.launch(
            self.indptr,
            self.indices,
            self.keys,
            np.int64(self.n),
            np.int64(self.m),
            np.int32(self.symmetric),
            np.int64(self.capacity),
            self.parent,
            self.lightest,
            self.worklists[0],
            self.worklists[1],
            self.counters,
            self.in_tree,
            self.stats,
        )

    def collect(self) -> tuple[Any, int]:
        """(sorted CSR positions of the tree edges as a CuPy array, rounds)."""
        cp = backend.cupy_module()
        rounds, overflow, _threshold = (int(x) for x in self.stats.get())
        if overflow:
            raise ValueError(
                "graph: declared symmetric (undirected) but more than half of its entries "
                "have source < target, so it is not; pass symmetric=False"
            )
        positions = cp.flatnonzero(self.in_tree[: self.m]) if self.m else cp.zeros(0, np.int64)
        return positions, rounds


def minimum_spanning_forest(
    n: int, indptr: Any, indices: Any, weights: Any, *, symmetric: bool
) -> tuple[Any, int]:
    """Sorted CSR positions of the forest's edges (CuPy) and the number of rounds."""
    if n == 0:
        cp = backend.cupy_module()
        return cp.zeros(0, dtype=np.int64), 0
    with backend.gpu_memory_guard(f"boruvka on {n} vertices"):
        runner = BoruvkaGPU(n, indptr, indices, weights, symmetric=symmetric)
        runner.launch()
        return runner.collect()
