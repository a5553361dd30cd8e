"""The per-graph state of the GPU BFS: queues, counters, degree statistics, and the
graphs derived from the input on first use (the reverse graph of a directed input, the ELL
rows of a bounded-degree graph, the degree-relabelled copy, the rows sorted by degree),
kept per CSRGraph object so repeated searches on one GPU graph allocate nothing."""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from ... import backend, reorder
from ...csr import CSRGraph, inverse_permutation
from . import modules
from .modules import LEVEL_BLOCK, LOCAL_CAP

# The persistent kernel reads graphs of maximum degree <= ELL_MAX_DEGREE as fixed-width rows
# (traversal/ell.cuh): one memory round trip per one-block level instead of two, two fewer per
# grid level. H200, 2026-11-23, 64 roots, same process, against CSR rows: roads NY / BAY / COL
# 1.47x / 1.53x / 1.31x, grid2d 5000² 1.18x, grid3d 300³ 1.08x. Rows of 16 serve maximum
# degrees 9-16 (meshes: a Delaunay graph of random points has mean degree 6 and a maximum
# of 15 at 16k vertices, 20 at 1M; a mesh whose angles are >= 30 degrees has at most 12):
# H200, session 29, 16 roots, same process, against CSR rows: Delaunay 16k 1.24x (0.313
# against 0.387 ms; road NY, rows of 4, 1.72x in the same run). The 16-wide rows spill
# 240 bytes per thread in the one-block levels (64 registers at 1024 threads) and still win.
ELL_MAX_DEGREE = 16
# The direction-optimising search runs on a copy relabelled by non-increasing degree from
# this many vertices (where building it takes at most half the free GPU memory): hubs' labels
# then share cache lines and a warp's vertices have rows of similar length. H200, 64 roots,
# same process: Kronecker 21 1.37x, R-MAT 2M/128M 1.07x, Kronecker 20 1.07x.
RELABEL_MIN_VERTICES = 1 << 20
# ... but only where the hubs hold much of the graph: the top 1/HUB_FRACTION of the vertices
# by degree at least HUB_SHARE of the CSR entries. Elsewhere the search runs on a copy whose
# rows list their neighbours by non-increasing degree (reorder.rows_by_degree: ids kept, so
# no map back). H200, session 36, one process, 32 roots, relabelled / sorted rows ms, with
# the share: Kronecker 21 / 22 0.945x / 0.807x sorted (share 0.61 / 0.62), Kronecker 22
# a=0.50 0.910x (0.39), Kronecker 21 / 22 a=0.45 1.040x / 0.960x (0.28), Kronecker 21
# a=0.35 1.118x (0.11), uniform 2^20-2^24 deg 8-32 1.011-1.140x (0.023-0.031). The sorted
# rows beat the graph as given on all of those: 1.03-1.06x uniform, 1.07-1.19x Kronecker.
HUB_FRACTION = 64
HUB_SHARE = 0.25
FIGURES_FILE = "bfs/kernels/figures.cu"
ELL_FILE = "bfs/kernels/ell_rows.cu"


class Workspace:
    """Buffers and statistics of one GPU graph, made on first use."""

    def __init__(self, g: CSRGraph) -> None:
        cp = backend.cupy_module()
        self.cp = cp
        # Weak: the cache of workspaces is keyed weakly by the graph, and a strong reference
        # from the value would keep every graph (and its GPU buffers) alive forever.
        self._graph = weakref.ref(g)
        n = max(g.n_vertices, 1)
        vid = g.indices.dtype
        backend.require_gpu_bytes(n * (4 + 4 * vid.itemsize) + 4096,
                                  f"bfs workspace for {g.n_vertices} vertices")
        # The persistent kernel's one-block levels may list a vertex twice (plain label
        # stores), bounded by LOCAL_CAP entries, which can exceed a tiny graph's n.
        slots = max(n, LOCAL_CAP)
        self.queues = (cp.empty(slots, dtype=vid), cp.empty(slots, dtype=vid))
        self.hub_queue = cp.empty(n, dtype=vid)
        self.level_rows = 1024
        self.counts = cp.zeros((self.level_rows, 4), dtype=cp.uint64)
        self.tails = cp.zeros(3, dtype=cp.uint64)
        self.ctrl = cp.zeros(8, dtype=cp.int32)  # 3 rotating slots of 2, the idle flag
        self.stats = cp.zeros(9, dtype=cp.uint64)
        # Degree statistics by two small reads and one launch of figures.cu rather than CuPy
        # reductions: each CuPy kernel kind a new process touches loads (and keys its disk
        # cache by compiling an empty program) on first use.
        self.n_edges = int(g.indptr[-1:].get()[0]) - int(g.indptr[:1].get()[0])
        mean = self.n_edges / max(g.n_vertices, 1)
        # Hubs: rows far above the mean (Enterprise's tau is graph-specific).
        self.hub_degree = max(32, int(8 * mean))
        self.n_hubs, self.max_degree, self._row_end = self._degree_figures()
        self._reverse: CSRGraph | None = None
        self._reverse_is_graph = False
        self._edge_queues: dict[int, tuple[Any, Any]] = {}
        self._scan: Any = None
        self._buffers: dict[str, Any] = {}
        self._ell: Any = None
        self._relabelled: tuple[CSRGraph, Any, Any, np.ndarray] | None = None
        self._relabel_fits: bool | None = None  # the copy within half the free memory
        self._rows_sorted: CSRGraph | None = None
        self._hub_share: float | None = None
        self._bottom_up_end: int | None = None
        # bfs()'s resolved searches by variant name: (the variant that runs, a callable
        # (source, want_parents) -> (labels, parents, figures)); see gpu.search.
        self.searches: dict[str, tuple[str, Any]] = {}
        # auto's reading of the graph's first deep search (deep_choice.note_shape): None
        # before it, True where that search was shallow and wide (auto then runs beamer).
        self.shallow: bool | None = None
        # the persistent runners' prepared calls, by option set
        self._launches: dict[tuple[Any, ...], Any] = {}
        self.persistent_calls = 0
        self.widest_frontier = 0  # as last read from the device (0: not read yet)
        self.blocks = backend.gpu_properties()["multiprocessors"] * (2048 // LEVEL_BLOCK)

    def _degree_figures(self) -> tuple[int, int, int]:
        """(vertices of degree > hub_degree, largest degree, one past the last vertex with
        an out-edge) in one launch and one read."""
        return degree_figures(self.g, self.hub_degree)

    @functools.cached_property
    def degrees(self) -> Any:
        """int64 out-degree per vertex (made on first use: only some variants need it)."""
        return self.g.degrees().astype(self.cp.int64)

    @property
    def g(self) -> CSRGraph:
        g = self._graph()
        if g is None:
            raise RuntimeError("bfs workspace used after its graph was freed")
        return g

    def reverse(self) -> CSRGraph:
        if not self.g.directed or self._reverse_is_graph:
            return self.g
        if self._reverse is None:
            g = self.g
            rev = reverse_on_gpu(g)
            # A symmetric graph not flagged so (both directions listed, rows sorted) is its
            # own reverse: keep one copy, not two (one comparison, read once per graph).
            cp = self.cp
            if bool(cp.array_equal(rev.indptr, g.indptr)) and bool(
                    cp.array_equal(rev.indices, g.indices)):
                # Not kept: the workspace holds its graph weakly (see __init__).
                self._reverse_is_graph = True
                return g
            self._reverse = rev
        return self._reverse

    def bottom_up_end(self) -> int:
        """One past the last vertex with an in-neighbour, which bottom-up levels need not
        pass; made once."""
        if self._bottom_up_end is None:
            # A graph that is its own reverse has it from the degree figures already read;
            # a directed one's reverse takes the same launch (no CuPy nonzero: each CuPy
            # kernel a new process touches loads a module of its own).
            rev = self.reverse()
            self._bottom_up_end = (self._row_end if rev is self.g
                                   else degree_figures(rev, self.hub_degree)[2])
        return self._bottom_up_end

    @property
    def ell_width(self) -> int:
        """Row width of the ELL form (4, 8 or 16), or 0 where the maximum degree is too
        large."""
        if self.max_degree > ELL_MAX_DEGREE:
            return 0
        return next(k for k in (4, 8, 16) if self.max_degree <= k)

    def ell(self) -> Any:
        """The graph as fixed-width rows (n * ell_width ids, -1 past a row's end), for
        traversal/ell.cuh; made on first use and kept with the workspace."""
        k = self.ell_width
        if k == 0:
            raise ValueError(f"no ELL form: maximum degree {self.max_degree} > {ELL_MAX_DEGREE}")
        if self._ell is None:
            g = self.g
            n = g.n_vertices
            backend.require_gpu_bytes(max(n, 1) * k * g.indices.dtype.itemsize,
                                      "bfs ELL rows")
            ell = self.cp.empty(max(n, 1) * k, dtype=g.indices.dtype)
            if n == 0:
                ell.fill(-1)
            else:
                blocks = min(-(-n // 256), 1024)
                modules.flat_launch(
                    ELL_FILE, "bfs_ell_rows",
                    modules.csr_defines(g.indices.dtype, g.indptr.dtype),
                    {"indptr": g.indptr, "indices": g.indices, "n": np.int64(n),
                     "k": np.int32(k), "ell": ell}).launch(blocks, 256)
            self._ell = ell
        return self._ell

    def relabel_bytes(self) -> int:
        """GPU memory that building the relabelled copy (or the sorted rows) takes at its
        peak."""
        return 48 * max(self.g.n_edges, 1) + 24 * max(self.g.n_vertices, 1)

    def hub_share(self) -> float:
        """The fraction of the CSR entries in the rows of the top 1/HUB_FRACTION of the
        vertices by out-degree (made once)."""
        if self._hub_share is None:
            cp = self.cp
            top = cp.sort(self.degrees)[::-1][:max(self.g.n_vertices // HUB_FRACTION, 1)]
            self._hub_share = int(top.sum()) / max(self.n_edges, 1)
        return self._hub_share

    def search_order(self, relabel: bool | str) -> str:
        """How a direction-optimising search meets the graph: "relabelled" (the copy by
        reorder.degree_order, results mapped back), "sorted rows" (rows_sorted's copy, same
        ids) or "as given". ``relabel``: True, False, "rows", or "auto": from
        RELABEL_MIN_VERTICES vertices, relabelled where the hubs hold HUB_SHARE of the
        entries, else sorted rows; either only where building the copy takes at most half
        the free GPU memory (the copy is an optimisation: where it does not fit, the search
        runs on the graph as given)."""
        if relabel != "auto":
            if relabel == "rows":
                return "sorted rows"
            if not isinstance(relabel, (bool, np.bool_)):
                raise ValueError(f"relabel must be True, False, 'rows' or 'auto', not "
                                 f"{relabel!r}")
            return "relabelled" if relabel else "as given"
        if self.g.n_vertices < RELABEL_MIN_VERTICES:
            return "as given"
        if self._relabel_fits is None:
            cp = self.cp
            free = cp.cuda.runtime.memGetInfo()[0] + cp.get_default_memory_pool().free_bytes()
            self._relabel_fits = self.relabel_bytes() <= free // 2
        if not self._relabel_fits:
            return "as given"
        return "relabelled" if self.hub_share() >= HUB_SHARE else "sorted rows"

    def rows_sorted(self) -> CSRGraph:
        """The in-edges (the reverse graph) with each row by non-increasing out-degree of
        the neighbour (reorder.rows_by_degree), what bottom-up probes scan; for a graph
        that is its own reverse, also what top-down levels expand. Made on first use, kept
        with the workspace."""
        if self._rows_sorted is None:
            backend.require_gpu_bytes(self.relabel_bytes(), "bfs sorted-rows graph")
            self._rows_sorted = reorder.rows_by_degree(self.reverse(), self.degrees)
        return self._rows_sorted

    def degree_relabelled(self) -> tuple[CSRGraph, Any, Any, np.ndarray]:
        """(graph relabelled by reorder.degree_order, perm, its inverse, the inverse on the
        host): new vertex i is old vertex perm[i]; rows sorted, so each row lists its
        neighbours in non-increasing degree. Made on first use, kept with the workspace
        (which keeps the relabelled graph, and so its own workspace, alive)."""
        if self._relabelled is None:
            g = self.g
            backend.require_gpu_bytes(self.relabel_bytes(), "bfs degree-relabelled graph")
            perm = reorder.degree_order(g)
            built = reorder.apply(g, perm)  # its index widths are the kernels' too
            relabelled = CSRGraph(built.indptr.astype(g.indptr.dtype, copy=False),
                                  built.indices.astype(g.indices.dtype, copy=False), None,
                                  built.n_vertices, built.directed)
            vid = g.indices.dtype
            inverse = inverse_permutation(perm)
            self._relabelled = (relabelled, perm.astype(vid), inverse.astype(vid),
                                inverse.get())
        return self._relabelled

    def edge_queues(self, pair: int = 0) -> tuple[Any, Any]:
        """(neighbour, discoverer) queues of one edge per slot; a level never fills more
        than m slots (each vertex's row is expanded once)."""
        if pair not in self._edge_queues:
            m = max(self.g.n_edges, 1)
            vid = self.g.indices.dtype
            backend.require_gpu_bytes(2 * m * vid.itemsize, "bfs edge queue")
            self._edge_queues[pair] = (self.cp.empty(m, dtype=vid),
                                       self.cp.empty(m, dtype=vid))
        return self._edge_queues[pair]

    def scan(self) -> Any:
        if self._scan is None:
            self._scan = self.cp.empty(max(self.g.n_vertices, 1), dtype=self.cp.int64)
        return self._scan

    def buffer(self, name: str, shape: tuple[int, ...], dtype: Any) -> Any:
        """A named scratch array of this graph, made on first use (contents undefined)."""
        have = self._buffers.get(name)
        if have is None or have.shape != shape or have.dtype != np.dtype(dtype):
            nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
            backend.require_gpu_bytes(nbytes, f"bfs {name}")
            have = self.cp.empty(shape, dtype=dtype)
            self._buffers[name] = have
        return have

    def reset_counts(self) -> None:
        self.counts.fill(0)

    def grow_counts(self, level: int) -> None:
        """More per-level rows (zeroed) when a search runs past the table."""
        if level + 2 < self.level_rows:
            return
        extra = self.cp.zeros((self.level_rows, 4), dtype=self.cp.uint64)
        self.counts = self.cp.concatenate([self.counts, extra])
        self.level_rows *= 2


def degree_figures(g: CSRGraph, hub_degree: int) -> tuple[int, int, int]:
    """(vertices of degree > hub_degree, largest degree, one past the last vertex with an
    out-edge) of ``g``: one launch of figures.cu, one read."""
    if g.n_vertices == 0:
        return 0, 0, 0
    cp = backend.cupy_module()
    out = cp.zeros(3, dtype=cp.uint64)
    modules.flat_launch(
        FIGURES_FILE, "degree_figures", modules.csr_defines(g.indices.dtype, g.indptr.dtype),
        {"indptr": g.indptr, "indices": g.indices, "n": np.int64(g.n_vertices),
         "hub_degree": np.int64(hub_degree), "out": out}).launch(
        min(-(-g.n_vertices // 256), 1024), 256)
    hubs, top, end = (int(x) for x in out.get())
    return hubs, top, end


def reverse_on_gpu(g: CSRGraph) -> CSRGraph:
    """The in-edges as CSR with this graph's index widths (the kernels are compiled for
    them): rows found by binary search in indptr, columns ordered by a stable sort."""
    cp = backend.cupy_module()
    m = g.n_edges
    rows = cp.searchsorted(g.indptr, cp.arange(m, dtype=g.indptr.dtype), side="right") - 1
    order = cp.argsort(g.indices)  # CuPy sorts stably (radix sort)
    indptr = cp.zeros(g.n_vertices + 1, dtype=g.indptr.dtype)
    if m:
        indptr[1:] = cp.cumsum(cp.bincount(g.indices, minlength=g.n_vertices))
    return CSRGraph(indptr, rows[order].astype(g.indices.dtype), None, g.n_vertices, True)


workspaces: weakref.WeakKeyDictionary[CSRGraph, Workspace] = weakref.WeakKeyDictionary()


def workspace(g: CSRGraph) -> Workspace:
    ws = workspaces.get(g)
    if ws is None:
        ws = Workspace(g)
        workspaces[g] = ws
    return ws


def labels(ws: Workspace, source: int, want_parents: bool) -> tuple[Any, Any]:
    cp = ws.cp
    n = ws.g.n_vertices
    dist = cp.full(n, -1, dtype=cp.int32)
    dist[source] = 0
    parent = None
    if want_parents:
        parent = cp.full(n, -1, dtype=ws.g.indices.dtype)
        parent[source] = source
    return dist, parent


