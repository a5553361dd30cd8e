"""Borůvka on the GPU: kernels/boruvka.cu's kernels launched back to back, one read.

``mst_boruvka`` is persistent and runs every pass and round; ``mst_write_forest`` follows
it without a host read in between and writes the finished forest (CSR positions,
sources, targets, weights, in position order) with its size and total weight. The host
then reads one small ``stats`` array and slices the forest buffer: no sort, no gathers,
no reduction on the host side. A call costs two allocations (one scratch buffer carved
into every working array, one forest buffer), three launches (the barrier reset and the
two kernels), one synchronising read, and, for host-side results, one more copy. This
matters on road graphs, where the whole forest takes a few hundred microseconds.

Weight keys are prepared on the host only when the kernel cannot map the weights itself:
it maps int32 and float32 weights bit-wise, and float64 (int64) weights through float32
(int32), checking that every weight narrows exactly while it writes the narrowed keys
into the scratch (the builds then read 4 bytes per key); where one does not, the launch
stops before its first build with STAT_INEXACT and the runner maps the keys on the host
(keys.weight_keys: through float32 where exact, else ranks) and launches again. NaN
weights are found by the kernel.

The SciPy door (``minimum_spanning_tree`` on a CuPy matrix) keeps one runner per cached
graph (``kept_runner``: its buffers and plan, weights rebound each call), runs the graph
as not declared symmetric (the kernel then skips an entry whose reverse twin orders
first, so a matrix stored both ways pushes half its entries) and queues
``mst_write_matrix`` right behind the forest writer (``launch(write_matrix=True)``): the
CSR result is written into arrays sized for n - 1 edges before the host reads anything,
so the call's one stats read finds the result finished.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import backend, barrier, kernels
from . import keys as keymod

KERNEL_PATH = "mst/kernels/boruvka.cu"
BLOCK = 256
HUGE_ROW = 1024  # boruvka.cu's HUGE_ROW: at most entries // HUGE_ROW rows are longer
SMALL_PLAN_BYTES = 256 * 2**20
MATRIX_BLOCKS = 4096  # mst_write_matrix is grid-stride: enough blocks to fill any GPU
_KEY_KIND_CODE = {"keys": 0, "int32": 1, "float32": 2, "float64": 3, "int64": 4}
_NARROWED_KINDS = ("float64", "int64")  # the kernel writes their keys into "narrowed"
PROFILE_ROWS = 1024  # boruvka.cu's mst_profile rows (MST_PROFILE builds)
# The weight types the kernel copies and sums (MST_WEIGHT_T); narrower ones are widened.
_WEIGHT_CTYPE = {
    np.dtype(np.int32): "int",
    np.dtype(np.uint32): "unsigned",
    np.dtype(np.int64): "long long",
    np.dtype(np.uint64): "unsigned long long",
    np.dtype(np.float32): "float",
    np.dtype(np.float64): "double",
}
_ALIGN = 256

# boruvka.cu's Stat slots.
STAT_ROUNDS = 0
STAT_OVERFLOW = 1
STAT_PASSES = 2
STAT_FOREST_EDGES = 3
STAT_TOTAL = 4
STAT_ZERO_EDGES = 5
STAT_FIRST_NAN = 6
STAT_BARRIER_ABORT = 8
STAT_INEXACT = 9
STAT_SLOTS = 10
NO_NAN = 2**64 - 1


def _variant_defines(defines: dict[str, Any], mode: str) -> dict[str, Any]:
    # The defines barrier.persistent_kernel adds, so both kernels come from one module.
    out = dict(defines)
    if mode == "cooperative":
        out["MG_BARRIER_COOP"] = None
    if mode == "atomic":
        out["MG_BARRIER_ATOMIC"] = None
    return out


@functools.lru_cache(maxsize=32)
def _kernels(
    defines: tuple[tuple[str, Any], ...], mode: str
) -> tuple[barrier.PersistentGrid, Any]:
    # One grid (and barrier state) per variant: launches are sequential on one stream.
    grid = barrier.persistent_kernel(
        KERNEL_PATH, "mst_boruvka", mode=mode, block=BLOCK, defines=dict(defines)  # type: ignore[arg-type]
    )
    writer = kernels.get_kernel(
        KERNEL_PATH,
        "mst_write_forest",
        defines=_variant_defines(dict(defines), mode),
        cooperative=mode == "cooperative",
    )
    return grid, writer


@functools.lru_cache(maxsize=32)
def _matrix_kernel(defines: tuple[tuple[str, Any], ...], mode: str) -> Any:
    # The same module as _kernels' writer (same defines), so no further compile.
    return kernels.get_kernel(
        KERNEL_PATH,
        "mst_write_matrix",
        defines=_variant_defines(dict(defines), mode),
        cooperative=mode == "cooperative",
    )


def kernel_weights(xp: Any, weights: Any, m: int) -> Any:
    """``weights`` in a type the kernel reads (int32 ones when absent; narrow types widened)."""
    if weights is None:
        return xp.ones(m, dtype=np.int32)
    dt = np.dtype(weights.dtype)
    if dt in _WEIGHT_CTYPE:
        return weights
    if dt.kind == "b" or (dt.kind in "iu" and dt.itemsize < 4):
        return weights.astype(np.int32)
    if dt.kind == "f" and dt.itemsize < 4:
        return weights.astype(np.float32)
    raise ValueError(f"edge weights must be real numbers of at most 64 bits, got dtype {dt}")


def _aligned(nbytes: int) -> int:
    return -(-nbytes // _ALIGN) * _ALIGN


@functools.lru_cache(maxsize=64)
def scratch_layout(
    n: int, m: int, capacity: int, huge_capacity: int, vid_bytes: int, blocks: int,
    narrowed: bool = False,
) -> tuple[dict[str, tuple[int, int]], int]:
    """Byte (offset, size) of every working array in one scratch buffer, and its size.

    The order is the kernel's argument order; each array starts on a 256-byte boundary.
    ``narrowed``: the kernel narrows float64/int64 weights into m uint32 keys.
    """
    edge_bytes = 16 if vid_bytes == 4 else 24  # boruvka.cu's Edge
    sizes = {
        "parent": max(n, 1) * vid_bytes,
        "lightest": max(n, 1) * 8,
        "wl0": capacity * edge_bytes,
        "wl1": capacity * edge_bytes,
        "counters": 4 * 8,
        "huge_rows": huge_capacity * vid_bytes,
        "narrowed": (m if narrowed else 0) * 4,
        "tree_bits": max(-(-m // 32), 1) * 4,
        "block_sums": 2 * blocks * 8,
        "stats": STAT_SLOTS * 8,
    }
    layout: dict[str, tuple[int, int]] = {}
    offset = 0
    for name, size in sizes.items():
        layout[name] = (offset, size)
        offset += _aligned(size)
    return layout, offset


def forest_words(n_edges: int, weight_bytes: int) -> int:
    """int64 words of a forest buffer for ``n_edges``: three int64 arrays, then weights."""
    return 3 * n_edges + -(-n_edges * weight_bytes // 8)


def split_forest(buffer: Any, k: int, weight_dtype: Any) -> tuple[Any, Any, Any, Any]:
    """(edge_ids, src, dst, weights) views of a forest buffer holding ``k`` edges.

    mst_write_forest lays them out back to back: three int64 arrays of k, then k weights.
    Works on a CuPy buffer and on its NumPy copy alike.
    """
    weight_words = -(-k * np.dtype(weight_dtype).itemsize // 8)
    weights = buffer[3 * k : 3 * k + weight_words].view(weight_dtype)[:k]
    return buffer[:k], buffer[k : 2 * k], buffer[2 * k : 3 * k], weights


@dataclass(frozen=True)
class GPUForest:
    """A forest as the kernels left it, on the side asked for, ordered by position."""

    edge_ids: Any
    src: Any
    dst: Any
    weights: Any
    total_weight: int | float
    n_zero_weight: int
    n_rounds: int


def matrix_layout(n: int, vid_bytes: int) -> tuple[int, int, int]:
    """(byte offset of indices, byte offset of indptr, total bytes) of the buffer that
    holds minimum_spanning_tree's CSR arrays for up to n - 1 edges: data (float64) first,
    then indices and indptr (n + 1) in the vertex-id type, each 8-byte aligned."""
    capacity = max(n - 1, 1)
    indices_at = 8 * capacity
    indptr_at = indices_at + -(-capacity * vid_bytes // 8) * 8
    return indices_at, indptr_at, indptr_at + (n + 1) * vid_bytes


class BoruvkaGPU:
    """Buffers and kernels for one graph; :meth:`launch` may be repeated.

    ``symmetric``: every edge is stored in both directions with one weight, so only the
    entries (u, v) with u < v are candidates (half the worklist). ``what`` starts the
    messages of the errors the kernels detect (NaN weights, a false ``symmetric``).
    A later launch overwrites the forest buffer, so results are read between launches.
    ``defines``: extra compile-time defines (scripts/mst_profile.py's MST_PROFILE and
    pass plans).
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
        what: str = "graph",
        defines: Mapping[str, Any] | None = None,
    ) -> None:
        cp = backend.cupy_module()
        self.n = int(n)
        self.m = int(indices.size)
        self.symmetric = bool(symmetric)
        self.what = what
        self.barrier_mode = barrier_mode
        self.extra_defines = dict(defines or {})
        self.weights = kernel_weights(cp, weights, self.m)
        self.weight_dtype = np.dtype(self.weights.dtype)
        self.indptr = indptr
        self.indices = indices
        # The worklist never holds more than the candidate entries of one pass.
        self.capacity = self.m // 2 + 1 if self.symmetric else max(self.m, 1)
        self.huge_capacity = self.m // HUGE_ROW + 1
        self.scratch = None
        self.forest_buffer = None
        self._write_matrix = False
        self._matrix_out: Any = None
        kind = keymod.key_kind(self.weights)
        self._bind(kind, self.weights if kind != "keys" else keymod.weight_keys(cp, self.weights))

    def _bind(self, kind: str, keys: Any) -> None:
        """Kernels for the key kind, buffers (kept when the layout is unchanged), arguments."""
        cp = backend.cupy_module()
        self.kind = kind
        self.keys = keys
        indptr, indices = self.indptr, self.indices
        defines = kernels.index_defines(indices.dtype, indptr.dtype)
        defines.update(
            MST_KEY_KIND=_KEY_KIND_CODE[kind],
            MST_BLOCK=BLOCK,
            MST_WEIGHT_T=_WEIGHT_CTYPE[self.weight_dtype],
            MST_WEIGHT_FLOAT=int(self.weight_dtype.kind == "f"),
        )
        defines.update(self.extra_defines)
        self._defines = tuple(sorted(defines.items()))
        self.grid, self.writer = _kernels(self._defines, self.barrier_mode)
        vid_bytes = np.dtype(indices.dtype).itemsize
        layout, scratch_bytes = scratch_layout(
            self.n, self.m, self.capacity, self.huge_capacity, vid_bytes, self.grid.grid,
            kind in _NARROWED_KINDS,
        )
        n_forest_words = forest_words(max(self.n - 1, 1), self.weight_dtype.itemsize)
        if self.scratch is None or self.scratch.size != scratch_bytes:
            self.scratch = None  # freed before its successor is taken
            needed = scratch_bytes + (8 * n_forest_words if self.forest_buffer is None else 0)
            if needed > SMALL_PLAN_BYTES:
                # Asking the driver for free memory costs a call into it; small plans skip
                # the early check (a failure is still reported by the memory guard).
                backend.require_gpu_bytes(
                    needed, f"boruvka on {self.n} vertices, {self.m} entries"
                )
            with backend.gpu_memory_guard("boruvka buffers"):
                self.scratch = cp.empty(scratch_bytes, dtype=cp.uint8)
                if self.forest_buffer is None:
                    self.forest_buffer = cp.empty(n_forest_words, dtype=cp.int64)
        self.scratch_bytes = scratch_bytes
        self._part = {name: self.scratch[at : at + size] for name, (at, size) in layout.items()}
        self.stats = self._part["stats"].view(cp.uint64)
        self._arguments()

    def _arguments(self) -> None:
        indptr, indices, part = self.indptr, self.indices, self._part
        self._boruvka_args = (
            indptr, indices, self.keys, self.weights,
            np.int64(self.n), np.int64(self.m), np.int32(self.symmetric),
            np.int64(self.capacity), np.int64(self.huge_capacity),
            part["parent"], part["lightest"], part["wl0"], part["wl1"], part["counters"],
            part["huge_rows"], part["narrowed"], part["tree_bits"], part["block_sums"],
            part["stats"],
        )  # fmt: skip
        self._writer_args = (
            indptr, indices, self.weights, np.int64(self.n), np.int64(self.m),
            part["tree_bits"], part["block_sums"], part["stats"], self.forest_buffer,
            self.grid.state[2 * self.grid.grid:],
        )  # fmt: skip

    def set_weights(self, weights: Any) -> None:
        """New weights of the same dtype for the same structure: only the arguments change
        (and the key kind, back from a host-mapped "keys" after inexact weights)."""
        cp = backend.cupy_module()
        weights = kernel_weights(cp, weights, self.m)
        if np.dtype(weights.dtype) != self.weight_dtype or int(weights.size) != self.m:
            raise ValueError("set_weights: the dtype and size must stay the same")
        self.weights = weights
        kind = keymod.key_kind(weights)
        if kind != self.kind:
            self._bind(kind, weights if kind != "keys" else keymod.weight_keys(cp, weights))
            return
        self.keys = weights if kind != "keys" else keymod.weight_keys(cp, weights)
        self._arguments()

    def launch(self, *, write_forest: bool = True, write_matrix: bool = False) -> None:
        """Run the whole forest computation (asynchronous; nothing is read back).

        ``write_forest=False`` runs the rounds only (benchmarks time the kernels apart);
        the forest buffer and its stats are then not ready to read. ``write_matrix``
        also queues minimum_spanning_tree's CSR arrays (new ones, read by :meth:`matrix`).
        """
        self.grid.launch(*self._boruvka_args)
        self._write_matrix = write_forest and write_matrix
        self._matrix_out = None
        if not write_forest:
            return
        # The same block count: the writer's blocks own the words the counts cover.
        self.writer((self.grid.grid,), (BLOCK,), self._writer_args)
        if self._write_matrix:
            cp = backend.cupy_module()
            _, _, nbytes = matrix_layout(self.n, np.dtype(self.indices.dtype).itemsize)
            with backend.gpu_memory_guard("minimum_spanning_tree result"):
                buffer = cp.empty(nbytes, dtype=cp.uint8)
            data, indices, indptr = self._matrix_views(buffer)
            grid, block = kernels.launch_config(self.n + 1, BLOCK, max_blocks=MATRIX_BLOCKS)
            _matrix_kernel(self._defines, self.barrier_mode)(
                grid, block,
                (self.forest_buffer, self.stats, np.int64(self.n), data, indices, indptr),
            )
            self._matrix_out = buffer

    def read_stats(self) -> np.ndarray:
        """The kernels' stats (one synchronising read), after checking what they found."""
        stats = self.stats.get()
        if stats[STAT_BARRIER_ABORT]:
            self.grid.check()  # raises, and clears the abort word
        if int(stats[STAT_FIRST_NAN]) != NO_NAN:
            raise ValueError(
                f"{self.what}: weight of CSR entry {int(stats[STAT_FIRST_NAN])} is NaN"
            )
        if stats[STAT_INEXACT]:
            # A weight the kernel could not narrow exactly (it stopped before its first
            # build): keys mapped here instead, the same buffers, one more launch and read.
            self._bind("keys", keymod.weight_keys(backend.cupy_module(), self.weights))
            self.launch(write_matrix=self._write_matrix)
            return self.read_stats()
        if stats[STAT_OVERFLOW]:
            raise ValueError(
                f"{self.what}: declared symmetric (undirected) but more than half of its "
                "entries have source < target, so it is not; pass symmetric=False"
            )
        n_tree = int(stats[STAT_FOREST_EDGES])
        if n_tree >= max(self.n, 1):
            raise RuntimeError(f"boruvka kernel: {n_tree} forest edges on {self.n} vertices")
        return stats

    def forest(self, side: backend.Side = "gpu") -> GPUForest:
        """The last launch's forest, its arrays on ``side`` (one copy when "cpu")."""
        stats = self.read_stats()
        k = int(stats[STAT_FOREST_EDGES])
        buffer = self.forest_buffer[: forest_words(k, self.weight_dtype.itemsize)]
        if side == "cpu":
            buffer = buffer.get()
        edge_ids, src, dst, weights = split_forest(buffer, k, self.weight_dtype)
        total_bits = stats[STAT_TOTAL : STAT_TOTAL + 1]
        if self.weight_dtype.kind == "f":
            total: int | float = float(total_bits.view(np.float64)[0])
        else:
            total = int(total_bits.view(np.int64)[0])
        return GPUForest(
            edge_ids=edge_ids,
            src=src,
            dst=dst,
            weights=weights,
            total_weight=total,
            n_zero_weight=int(stats[STAT_ZERO_EDGES]),
            n_rounds=int(stats[STAT_ROUNDS]),
        )

    def matrix(self, side: backend.Side = "gpu") -> tuple[Any, Any, Any]:
        """The last launch's forest as SciPy's CSR arrays of it on ``side``: (data as
        float64, indices, indptr of n + 1), in the index dtype of ``indices``, stored zeros
        dropped (minimum_spanning_tree's result), from a launch with ``write_matrix``.
        One synchronising read (the stats: the result's size) and, for "cpu", one copy of
        the buffer the three arrays share; only where a tree edge weighs zero, CuPy's
        masking, a second read and a copy per array. The arrays are the call's own: a
        later launch leaves them as they are.
        """
        if self._matrix_out is None:
            raise RuntimeError("matrix(): the last launch did not write the matrix")
        cp = backend.cupy_module()
        stats = self.read_stats()
        buffer = self._matrix_out
        self._matrix_out = None
        k = int(stats[STAT_FOREST_EDGES])
        if not stats[STAT_ZERO_EDGES]:
            if side == "cpu":
                buffer = buffer.get()
            data, indices, indptr = self._matrix_views(buffer)
            return data[:k], indices[:k], indptr
        # Rare: zero-weight tree edges, which SciPy's result does not store.
        data, indices, _ = self._matrix_views(buffer)
        forest = self.forest_buffer[: forest_words(k, self.weight_dtype.itemsize)]
        _, src, _, weights = split_forest(forest, k, self.weight_dtype)
        keep = cp.flatnonzero(weights != 0)  # its size is read back
        rows = cp.arange(self.n + 1, dtype=src.dtype)
        indptr = cp.searchsorted(src[keep], rows, side="left").astype(indices.dtype)
        arrays = (data[keep], indices[keep], indptr)
        return tuple(backend.to_side(a, side) for a in arrays)  # type: ignore[return-value]

    def _matrix_views(self, buffer: Any) -> tuple[Any, Any, Any]:
        """(data, indices, indptr) views of a matrix buffer (CuPy, or its NumPy copy)."""
        vdt = np.dtype(self.indices.dtype)
        indices_at, indptr_at, _ = matrix_layout(self.n, vdt.itemsize)
        capacity = indices_at // 8
        return (buffer[:indices_at].view(np.float64),
                buffer[indices_at : indices_at + capacity * vdt.itemsize].view(vdt),
                buffer[indptr_at:].view(vdt))

    def profile(self) -> np.ndarray:
        """The last launch's phase stamps (built with the MST_PROFILE define): rows of
        (phase | pass << 8 | round << 16, count, clock64, global ns); row 0 holds the
        number of rows and passes and the start's clock and time."""
        cp = backend.cupy_module()
        defs = _variant_defines(dict(self._defines), self.barrier_mode)
        module = kernels.load_module(KERNEL_PATH, defines=defs,
                                     cooperative=self.barrier_mode == "cooperative")
        table = cp.ndarray((PROFILE_ROWS, 4), dtype=cp.uint64,
                           memptr=module.get_global("mst_profile")).get()
        return table[: int(table[0, 0])]

    def collect(self) -> tuple[Any, int]:
        """(sorted CSR positions of the tree edges as a CuPy array, rounds)."""
        forest = self.forest("gpu")
        return forest.edge_ids, forest.n_rounds


def spanning_forest(
    n: int,
    indptr: Any,
    indices: Any,
    weights: Any,
    *,
    symmetric: bool,
    side: backend.Side = "gpu",
    what: str = "graph",
) -> GPUForest:
    """The minimum spanning forest of a CSR graph on the GPU, its arrays on ``side``."""
    if n == 0:
        xp = backend.xp_for(side)
        empty = xp.zeros(0, dtype=np.int64)
        dtype = np.int32 if weights is None else weights.dtype
        weight_dtype = kernel_weights(np, np.zeros(0, dtype=dtype), 0).dtype
        return GPUForest(empty, empty, empty, xp.zeros(0, dtype=weight_dtype),
                         0.0 if weight_dtype.kind == "f" else 0, 0, 0)  # fmt: skip
    with backend.gpu_memory_guard(f"boruvka on {n} vertices"):
        runner = BoruvkaGPU(n, indptr, indices, weights, symmetric=symmetric, what=what)
        runner.launch()
        return runner.forest(side)


# Runners kept with their graph (a CSRGraph, which graph_cache hands back while its matrix
# is unchanged, and drops with it): a repeated call on the same graph skips building the
# runner and allocating its scratch. Only for small plans, so a kept runner never holds
# much memory beyond its graph's own, and only for callers whose results do not view the
# runner's buffers (the next launch overwrites them): minimum_spanning_tree's matrix.
_runners: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], BoruvkaGPU]] = (
    weakref.WeakKeyDictionary()
)


def kept_runner(
    owner: Any, make: Any, weights: Any, *, symmetric: bool, what: str
) -> BoruvkaGPU:
    """The runner kept with ``owner`` for these weights' dtype (its weights replaced), or
    a new one, ``make()`` giving (n, indptr, indices) on the GPU, kept when small.

    The key holds the device and the current stream: a runner's buffers are used by one
    stream's launches in order, never by two at once.
    """
    cp = backend.cupy_module()
    key = (
        backend.current_device_id(),
        getattr(cp.cuda.get_current_stream(), "ptr", 0),
        np.dtype(weights.dtype),
        bool(symmetric),
        what,
    )
    try:
        kept = _runners.setdefault(owner, {})
    except TypeError:  # not weakly referable: nothing kept
        kept = {}
    runner = kept.get(key)
    if runner is not None:
        runner.set_weights(weights)
        return runner
    n, indptr, indices = make()
    runner = BoruvkaGPU(n, indptr, indices, weights, symmetric=symmetric, what=what)
    if runner.scratch_bytes <= SMALL_PLAN_BYTES:
        kept[key] = runner
    return runner
