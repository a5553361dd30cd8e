"""Borůvka on the GPU: kernels/boruvka.cu's kernels launched back to back, one read.

``mst_boruvka`` is persistent and runs every pass and round; ``mst_write_forest`` follows
it without a host read in between and writes the finished forest (CSR positions,
sources, targets, weights, in position order) with its size and total weight. The host
then reads one small ``stats`` array and slices the forest buffer: no sort, no gathers,
no reduction on the host side. A call costs two allocations (one scratch buffer carved
into every working array, one forest buffer), three launches (the barrier reset, a
memset, and the two kernels), one synchronising read, and, for host-side results, one
more copy. This matters on road graphs, where the whole forest takes a few hundred
microseconds. The kernels' arguments are packed once per runner
(morphgpu.direct_launch): a launch through CuPy converts every argument again (the rounds
kernel has 22).

Weight keys are prepared on the host only when the kernel cannot map the weights itself:
it maps int32 and float32 weights bit-wise, and float64 (int64) weights through float32
(int32), checking that every weight narrows exactly while it writes the narrowed keys
into the scratch (the builds then read 4 bytes per key); where one does not, the launch
stops before its first build with STAT_INEXACT and the runner maps the keys on the host
(keys.weight_keys: through float32 where exact, else ranks) and launches again. NaN
weights are found by the kernel.

The SciPy door (``minimum_spanning_tree`` on a CuPy matrix) keeps one runner per cached
graph (``kept_runner``: its buffers and plan, weights rebound each call), lets the kernel
find whether the matrix is stored both ways (``find_symmetry``: it then runs as a
declared-symmetric graph; the verdict is kept on the device with a fingerprint of the
keys and structure, in a memo kept with the graph, so only a changed matrix is checked
again) and queues ``mst_write_matrix`` right behind the forest writer
(``launch(write_matrix=True)``): the CSR result, zero-weight tree edges left out as SciPy
leaves them out, is written into arrays sized for n - 1 edges before the host reads
anything, so the call's one stats read finds the result finished.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import backend, barrier, direct_launch, kernels
from . import keys as keymod
from .totals import exact_integer_sum

KERNEL_PATH = "mst/kernels/boruvka.cu"
DIAGONAL_PATH = "mst/kernels/diagonal_sides.cu"
DIAGONAL_BLOCKS = 4096  # diagonal_sides is grid-stride: enough blocks to fill any GPU
BLOCK = 256
_KERNEL_CONSTANTS = kernels.source_constants(KERNEL_PATH)
HUGE_ROW = _KERNEL_CONSTANTS["HUGE_ROW"]  # at most entries // HUGE_ROW rows are longer
SMALL_PLAN_BYTES = 256 * 2**20
MATRIX_BLOCKS = 4096  # mst_write_matrix is grid-stride: enough blocks to fill any GPU
_KEY_KIND_CODE = {"keys": 0, "int32": 1, "float32": 2, "float64": 3, "int64": 4}
_NARROWED_KINDS = ("float64", "int64")  # the kernel writes their keys into "narrowed"
PROFILE_ROWS = _KERNEL_CONSTANTS["PROFILE_ROWS"]  # mst_profile's rows (MST_PROFILE builds)
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
STAT_FINGERPRINT = 10
STAT_ASYMMETRIC = 11
STAT_LIVE_SAMPLE = 12
STAT_SYMMETRIC_RUN = 13
STAT_SLOTS = 14
# Words past the kernels' slots that the host fills by device copies (BoruvkaGPU.carry),
# so that the stats read brings them back too.
CARRY_WORDS = 4
NO_NAN = 2**64 - 1

# The kernels' parameters, in boruvka.cu's order (the packed launches name their slots).
ROUNDS_PARAMS = (
    "indptr", "indices", "keys", "weights", "n", "m", "symmetric", "symmetry_memo",
    "capacity", "huge_capacity", "parent", "lightest", "wl0", "wl1", "counters",
    "huge_rows", "huge_chunks", "narrowed", "tree_bits", "block_sums", "stats",
    "barrier_state",
)  # fmt: skip
WRITER_PARAMS = (
    "indptr", "indices", "weights", "n", "m", "tree_bits", "block_sums", "stats", "forest",
    "nonzero_before", "barrier_abort",
)  # fmt: skip
MATRIX_PARAMS = ("forest", "nonzero_before", "stats", "n", "data", "indices", "indptr")
# boruvka.cu's modes: 0 general, 1 declared symmetric, 2 found symmetric or not.
MODE_GENERAL, MODE_SYMMETRIC, MODE_FIND_SYMMETRY = 0, 1, 2


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
) -> tuple[barrier.PersistentGrid, Any, Any]:
    """The rounds kernel's grid (and barrier state: launches are sequential on one stream),
    the forest writer and the matrix writer, all of one module (one compile)."""
    grid = barrier.persistent_kernel(
        KERNEL_PATH, "mst_boruvka", mode=mode, block=BLOCK, defines=dict(defines)  # type: ignore[arg-type]
    )
    module = {"path": KERNEL_PATH, "defines": _variant_defines(dict(defines), mode),
              "cooperative": mode == "cooperative"}
    writer = kernels.get_kernel(name="mst_write_forest", **module)
    matrix = kernels.get_kernel(name="mst_write_matrix", **module)
    return grid, writer, matrix


def _packed(kernel: Any, params: tuple[str, ...], values: dict[str, Any], *,
            cooperative: bool) -> Any:
    """A launch of ``kernel`` with its arguments packed once (tests stand a NumPy
    emulation in here)."""
    return direct_launch.PackedLaunch(kernel, params, values, cooperative=cooperative)


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

    The order is the kernels' argument order; each array starts on a 256-byte boundary.
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
        "huge_chunks": huge_capacity * 4,
        "narrowed": (m if narrowed else 0) * 4,
        "tree_bits": max(-(-m // 32), 1) * 4,
        "block_sums": 3 * blocks * 8,  # tree edges, float totals, zero-weight tree edges
        "stats": (STAT_SLOTS + CARRY_WORDS) * 8,
        "nonzero_before": (max(n, 1) + 1) * 8,  # mst_write_forest's ranks for the matrix
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
    entries (u, v) with u < v are candidates (half the worklist). ``find_symmetry`` (with
    ``symmetric`` False): the kernel finds whether the graph may run so (see boruvka.cu's
    "Symmetry found"), keeping its verdict in ``symmetry_memo`` (two uint64 words, zero
    before the first launch; a new one per runner when None; pass the same one for the
    same graph to check it once). ``what`` starts the messages of the errors the kernels
    detect (NaN weights, a false ``symmetric``). A later launch overwrites the forest
    buffer, so results are read between launches. ``defines``: extra compile-time defines
    (scripts/mst_profile.py's MST_PROFILE and pass plans).
    """

    def __init__(
        self,
        n: int,
        indptr: Any,
        indices: Any,
        weights: Any,
        *,
        symmetric: bool,
        find_symmetry: bool = False,
        symmetry_memo: Any = None,
        barrier_mode: barrier.BarrierMode = "xiao-feng",
        what: str = "graph",
        defines: Mapping[str, Any] | None = None,
    ) -> None:
        cp = backend.cupy_module()
        self.n = int(n)
        self.m = int(indices.size)
        self.symmetric = bool(symmetric)
        self.mode = (MODE_SYMMETRIC if self.symmetric
                     else MODE_FIND_SYMMETRY if find_symmetry else MODE_GENERAL)
        if self.mode == MODE_FIND_SYMMETRY and symmetry_memo is None:
            symmetry_memo = cp.zeros(2, dtype=cp.uint64)
        self.symmetry_memo = symmetry_memo
        self.what = what
        self.barrier_mode = barrier_mode
        self.extra_defines = dict(defines or {})
        self.weights = kernel_weights(cp, weights, self.m)
        self.weight_dtype = np.dtype(self.weights.dtype)
        self.indptr = indptr
        self.indices = indices
        # The worklist never holds more than the candidate entries of one pass (a graph
        # found symmetric has fewer than one not known to be).
        self.capacity = self.m // 2 + 1 if self.symmetric else max(self.m, 1)
        self.huge_capacity = self.m // HUGE_ROW + 1
        self.scratch = None
        self.forest_buffer = None
        self._write_matrix = False
        self._matrix_out: Any = None
        self._matrix_arrays: Any = None
        self.last_stats: np.ndarray | None = None  # the latest read of the stats
        self._carried: list[int] = []
        self._carry_arrays: list[Any] = []
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
        self.grid, writer, matrix = _kernels(self._defines, self.barrier_mode)
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
        part = {name: self.scratch[at : at + size] for name, (at, size) in layout.items()}
        self._part = part
        self.stats = part["stats"].view(cp.uint64)
        cooperative = self.barrier_mode == "cooperative"
        self._rounds = _packed(self.grid.kernel, ROUNDS_PARAMS, {
            "indptr": indptr, "indices": indices, "keys": self.keys, "weights": self.weights,
            "n": np.int64(self.n), "m": np.int64(self.m), "symmetric": np.int32(self.mode),
            # Read only in MODE_FIND_SYMMETRY; any device word stands in otherwise.
            "symmetry_memo": self.symmetry_memo if self.symmetry_memo is not None
            else part["stats"],
            "capacity": np.int64(self.capacity), "huge_capacity": np.int64(self.huge_capacity),
            **{name: part[name] for name in ROUNDS_PARAMS[10:21]},
            "barrier_state": self.grid.state,
        }, cooperative=cooperative)
        # The writers use no grid barrier: plain launches.
        self._writer = _packed(writer, WRITER_PARAMS, {
            "indptr": indptr, "indices": indices, "weights": self.weights,
            "n": np.int64(self.n), "m": np.int64(self.m), "tree_bits": part["tree_bits"],
            "block_sums": part["block_sums"], "stats": part["stats"],
            "forest": self.forest_buffer, "nonzero_before": part["nonzero_before"],
            "barrier_abort": self.grid.state[2 * self.grid.grid :],
        }, cooperative=False)
        self._matrix = matrix
        self._matrix_launch: Any = None  # packed at the first launch that writes a matrix

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
        self._rounds.set(keys=self.keys, weights=weights)
        self._writer.set(weights=weights)

    def launch(self, *, write_forest: bool = True, write_matrix: bool = False) -> None:
        """Run the whole forest computation (asynchronous; nothing is read back).

        ``write_forest=False`` runs the rounds only (benchmarks time the kernels apart);
        the forest buffer and its stats are then not ready to read. ``write_matrix``
        also queues minimum_spanning_tree's CSR arrays (new ones, read by :meth:`matrix`).
        """
        self.grid.reset()
        self._rounds.launch(self.grid.grid, BLOCK)
        self._write_matrix = write_forest and write_matrix
        self._matrix_out = self._matrix_arrays = None
        self._carry_arrays: list[Any] = []
        if not write_forest:
            return
        # The same block count: the writer's blocks own the words the counts cover.
        self._writer.launch(self.grid.grid, BLOCK)
        if self._write_matrix:
            cp = backend.cupy_module()
            _, _, nbytes = matrix_layout(self.n, np.dtype(self.indices.dtype).itemsize)
            with backend.gpu_memory_guard("minimum_spanning_tree result"):
                buffer = cp.empty(nbytes, dtype=cp.uint8)
            data, indices, indptr = self._matrix_views(buffer)
            if self._matrix_launch is None:
                self._matrix_launch = _packed(self._matrix, MATRIX_PARAMS, {
                    "forest": self.forest_buffer,
                    "nonzero_before": self._part["nonzero_before"],
                    "stats": self._part["stats"], "n": np.int64(self.n),
                    "data": data, "indices": indices, "indptr": indptr,
                }, cooperative=False)
            (blocks,), (block,) = kernels.launch_config(self.n + 1, BLOCK,
                                                        max_blocks=MATRIX_BLOCKS)
            self._matrix_launch.launch(blocks, block, data=data, indices=indices, indptr=indptr)
            self._matrix_out = buffer
            self._matrix_arrays = (data, indices, indptr)

    def carry(self, arrays: list[Any]) -> bool:
        """Copy small uint64 device arrays (CARRY_WORDS words in all at most) into the stats
        block past the kernels' slots, queued behind the last launch, so the next stats
        read brings them back as well (:meth:`carried`): a read of their own saved. False,
        and nothing queued, where they do not fit."""
        sizes = [int(a.size) for a in arrays]
        if sum(sizes) > CARRY_WORDS:
            return False
        at = STAT_SLOTS
        for a, size in zip(arrays, sizes):
            self.stats[at : at + size] = a
            at += size
        self._carried = sizes
        self._carry_arrays = list(arrays)  # copied again behind a relaunch (read_stats)
        return True

    def carried(self) -> list[np.ndarray]:
        """The arrays :meth:`carry` queued, as the latest stats read brought them back."""
        out, at = [], STAT_SLOTS
        for size in self._carried:
            out.append(self.last_stats[at : at + size])  # type: ignore[index]
            at += size
        return out

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
            # build): keys mapped here instead, one more launch and read (the stats block
            # may be a new one: what was carried is copied again).
            carried = self._carry_arrays
            self._bind("keys", keymod.weight_keys(backend.cupy_module(), self.weights))
            self.launch(write_matrix=self._write_matrix)
            if carried:
                self.carry(carried)
            return self.read_stats()
        if stats[STAT_OVERFLOW]:
            raise ValueError(
                f"{self.what}: declared symmetric (undirected) but more than half of its "
                "entries have source < target, so it is not; pass symmetric=False"
            )
        n_tree = int(stats[STAT_FOREST_EDGES])
        if n_tree >= max(self.n, 1):
            raise RuntimeError(f"boruvka kernel: {n_tree} forest edges on {self.n} vertices")
        self.last_stats = stats
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
        elif self.weight_dtype.itemsize == 8 and self.kind == "keys":
            # 64-bit integer weights that did not narrow to int32 keys (uint64 ones, or
            # int64 past 2**31): the kernel's sum is exact only modulo 2**64 (two int64
            # edges of 2**62 came back as -2**63), so the forest's weights are summed here.
            total = exact_integer_sum(backend.to_host(weights))
        else:
            # Weights of at most 32 bits, or int64 ones that narrowed to int32 keys: fewer
            # than 2**32 edges of |w| < 2**32 cannot pass 2**63.
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
        dropped (minimum_spanning_tree's result: mst_write_matrix leaves the zero-weight
        tree edges out itself), from a launch with ``write_matrix``. One synchronising read
        (the stats: the result's size) and, for "cpu", one copy of the buffer the three
        arrays share. The arrays are the call's own: a later launch leaves them as they are.
        """
        if self._matrix_out is None:
            raise RuntimeError("matrix(): the last launch did not write the matrix")
        stats = self.read_stats()
        buffer, arrays = self._matrix_out, self._matrix_arrays
        self._matrix_out = self._matrix_arrays = None
        stored = int(stats[STAT_FOREST_EDGES]) - int(stats[STAT_ZERO_EDGES])
        data, indices, indptr = self._matrix_views(buffer.get()) if side == "cpu" else arrays
        return data[:stored], indices[:stored], indptr

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


def diagonal_sides(n: int, indptr: Any, indices: Any) -> tuple[int, int]:
    """(CSR entries above the diagonal, entries below it) of a GPU graph, in one pass
    (kernels/diagonal_sides.cu) and one read."""
    cp = backend.cupy_module()
    kernel = kernels.get_kernel(DIAGONAL_PATH, "mst_diagonal_sides",
                                defines=kernels.index_defines(indices.dtype, indptr.dtype))
    out = cp.zeros(2, dtype=cp.uint64)
    grid, block = kernels.launch_config(max(int(n), 1), BLOCK, DIAGONAL_BLOCKS)
    kernel(grid, block, (indptr, indices, np.int64(n), out))
    above, below = (int(x) for x in out.get())
    return above, below


# Runners kept with their graph (a CSRGraph, which graph_cache hands back while its matrix
# is unchanged, and drops with it): a repeated call on the same graph skips building the
# runner and allocating its scratch. Only for small plans, so a kept runner never holds
# much memory beyond its graph's own, and only for callers whose results do not view the
# runner's buffers (the next launch overwrites them): minimum_spanning_tree's matrix.
# The symmetry memos (two device words each) are kept with the graph whatever its size.
_runners: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], BoruvkaGPU]] = (
    weakref.WeakKeyDictionary()
)
_memos: weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()


def kept_runner(
    owner: Any, make: Any, weights: Any, *, symmetric: bool, what: str,
    find_symmetry: bool = False,
) -> BoruvkaGPU:
    """The runner kept with ``owner`` for these weights' dtype (its weights replaced), or
    a new one, ``make()`` giving (n, indptr, indices) on the GPU, kept when small; with
    ``find_symmetry``, its symmetry memo is ``owner``'s, kept whatever the runner's size.

    The key holds the device and the current stream: a runner's buffers (and a memo) are
    used by one stream's launches in order, never by two at once.
    """
    cp = backend.cupy_module()
    place = (backend.current_device_id(), getattr(cp.cuda.get_current_stream(), "ptr", 0))
    key = (*place, np.dtype(weights.dtype), bool(symmetric), bool(find_symmetry), what)
    try:
        kept = _runners.setdefault(owner, {})
        memos = _memos.setdefault(owner, {})
    except TypeError:  # not weakly referable: nothing kept
        kept, memos = {}, {}
    runner = kept.get(key)
    if runner is not None:
        runner.set_weights(weights)
        return runner
    memo = None
    if find_symmetry and not symmetric:
        memo = memos.get(place)
        if memo is None:
            memo = memos[place] = cp.zeros(2, dtype=cp.uint64)
    n, indptr, indices = make()
    runner = BoruvkaGPU(n, indptr, indices, weights, symmetric=symmetric,
                        find_symmetry=find_symmetry, symmetry_memo=memo, what=what)
    if runner.scratch_bytes <= SMALL_PLAN_BYTES:
        kept[key] = runner
    return runner
