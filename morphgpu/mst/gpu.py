"""Borůvka on the GPU: one persistent kernel (kernels/boruvka.cu) runs every round.

The host prepares weight keys only when the weights are neither int32 nor float32 (the
kernel maps those itself), launches once, and reads back once at the end: the kernel's
counters (rounds, overflow, forest size); the forest's CSR positions, which the kernel
lists itself, are then sorted on the device. Nothing needs zeroing before a launch (the
kernel initialises its own state), and the persistent grid is built once per kernel
variant, so a call costs few host operations (this matters on road graphs, where the
whole forest takes a few hundred microseconds).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .. import backend, barrier, kernels
from . import keys as keymod

KERNEL_PATH = "mst/kernels/boruvka.cu"
BLOCK = 256
HUGE_ROW = 1024  # boruvka.cu's HUGE_ROW: at most entries // HUGE_ROW rows are longer
SMALL_PLAN_BYTES = 256 * 2**20
_KEY_KIND_CODE = {"keys": 0, "int32": 1, "float32": 2}


@functools.lru_cache(maxsize=32)
def _grid(defines: tuple[tuple[str, Any], ...], mode: str) -> barrier.PersistentGrid:
    # One grid (and barrier state) per variant: launches are sequential on one stream.
    return barrier.persistent_kernel(
        KERNEL_PATH, "mst_boruvka", mode=mode, block=BLOCK, defines=dict(defines)  # type: ignore[arg-type]
    )


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
        self.huge_capacity = self.m // HUGE_ROW + 1
        needed = 2 * self.capacity * edge_bytes + self.n * (vid_bytes + 24) + 4096
        if needed > SMALL_PLAN_BYTES:
            # Asking the driver for free memory costs a call into it; small plans skip
            # the early check (a failure is still reported by the memory guard).
            backend.require_gpu_bytes(
                needed, f"boruvka on {self.n} vertices, {self.m} entries"
            )
        with backend.gpu_memory_guard("boruvka buffers"):
            self.parent = cp.empty(max(self.n, 1), dtype=indices.dtype)
            self.lightest = cp.empty(2 * max(self.n, 1), dtype=cp.uint64)
            self.worklists = [
                cp.empty(self.capacity * edge_bytes, dtype=cp.uint8) for _ in range(2)
            ]
            self.counters = cp.empty(5, dtype=cp.uint64)
            self.huge_rows = cp.empty(self.huge_capacity, dtype=indices.dtype)
            self.tree_edges = cp.empty(max(self.n, 1), dtype=cp.int64)
            self.stats = cp.empty(4, dtype=cp.uint64)
        defines = kernels.index_defines(indices.dtype, indptr.dtype)
        defines.update(MST_KEY_KIND=_KEY_KIND_CODE[kind], MST_BLOCK=BLOCK)
        self.grid = _grid(tuple(sorted(defines.items())), barrier_mode)

    def launch(self) -> None:
        """Run the whole forest computation (asynchronous; nothing is read back)."""
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
            self.huge_rows,
            np.int64(self.huge_capacity),
            self.tree_edges,
            self.stats,
        )

    def collect(self) -> tuple[Any, int]:
        """(sorted CSR positions of the tree edges as a CuPy array, rounds)."""
        rounds, overflow, _threshold, n_tree = (int(x) for x in self.stats.get())
        if overflow:
            raise ValueError(
                "graph: declared symmetric (undirected) but more than half of its entries "
                "have source < target, so it is not; pass symmetric=False"
            )
        if n_tree >= max(self.n, 1):
            raise RuntimeError(f"boruvka kernel: {n_tree} forest edges on {self.n} vertices")
        return backend.cupy_module().sort(self.tree_edges[:n_tree]), rounds


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
