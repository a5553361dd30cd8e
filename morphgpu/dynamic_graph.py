"""A graph that changes: edges inserted and deleted in batches, on the GPU or the CPU.

:class:`DynamicGraph` keeps each vertex's neighbours in fixed-size pages from one page pool
(:class:`morphgpu.alloc.PagePool`; faimGraph's paged adjacency): a vertex owns a run of
entries in a page table, and its row's *positions* are ``table_start * page_size`` onward,
so position ``k`` is slot ``k % page_size`` of page ``table[k // page_size]``. The device
side reads the same layout through ``mg::PagedAdjacency`` (include/morphgpu/adjacency.cuh),
so every traversal operator runs on it unchanged; ``bounds[2 v]`` and ``bounds[2 v + 1]``
are the row's first and one-past-last positions.

A batch is applied in two phases. The plan phase allocates everything the batch needs:
the batch sorted and made unique, each entry looked up in its row (one kernel over the
pages of the rows the batch touches), the page need read back once (the only read: the
pool may have to grow), pages reserved, the table grown. The commit phase only writes
into arrays that exist. A batch that fails (bad input, no memory) fails in the plan, so the
graph is left as it was.

Rows are sets: an edge is stored once; inserting an edge that exists updates its weight
(within a batch the last occurrence wins) and counts as a duplicate; deleting an absent
edge is a counted no-op. Deleting moves the row's last entries into the holes, and pages
left empty go back to the pool, where the next insertion takes them before new ones.
Undirected graphs store both directions of every edge (a self-loop once) and count each
edge once in :attr:`n_edges`. Vertex ids never change: deleting a vertex removes its edges.

On NumPy a batch is the array program below; on CuPy the same phases run as a handful of
kernels around one sort (dynamic_graph_gpu.py, kernels/dynamic_graph.cu).
"""

from __future__ import annotations

import itertools
import math
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import arguments, backend
from .alloc import PagePool
from .csr import CSRGraph, expand_counts, index_dtype
from .unique import run_starts, sorted_unique

DEFAULT_PAGE_SIZE = 32  # one 128-byte line of 32-bit ids
# Edges are int64 keys u * n + v: n * n - 1 must fit (past it keys wrapped silently).
MAX_VERTICES = math.isqrt(np.iinfo(np.int64).max)
MAX_PAGES = np.iinfo(np.int32).max  # the page table holds int32 page ids
# Bytes of scratch per batch entry at the plan's peak (keys, order, sorted copies, lookups,
# ranks): the figure checked against free memory before a batch starts.
BYTES_PER_ENTRY = 112


# Each graph's serial number, stamped on its versions (GraphVersion).
_graph_serials = itertools.count(1)


class GraphVersion(int):
    """A graph's version number that also says which graph it numbers.

    ``bfs(g, source, previous=r)`` repairs ``r`` from the insertions ``g`` made since
    ``r.graph_version``. Versions are counted per graph (0, 1, 2, ...), so a plain int from
    another graph's search passed the check and the repair started from the other graph's
    distances: a wrong answer, or an IndexError where the sizes differed. The version a
    search records carries its graph's serial number; :meth:`DynamicGraph.inserted_since`
    refuses a version of another graph, and the search runs afresh. It compares, hashes
    and prints as the int it is."""

    graph: int

    def __new__(cls, value: int, graph: int) -> GraphVersion:
        out = super().__new__(cls, value)
        out.graph = graph
        return out

    def __reduce__(self) -> tuple[Any, tuple[int, int]]:
        return GraphVersion, (int(self), self.graph)


class DynamicGraphError(ValueError):
    """A batch or argument the graph cannot take; the message names the argument."""


@dataclass(frozen=True)
class BatchResult:
    """What one batch did. Counts are in edges as the graph counts them (undirected: each
    edge once)."""

    requested: int  # distinct edges in the batch
    applied: int  # inserted (new) or deleted (present)
    skipped: int  # insert: already present (weights updated); delete: absent
    n_edges: int  # edges in the graph afterwards
    version: int  # the graph's version after the batch


def _next_pow2(xp: Any, a: Any) -> Any:
    """Smallest power of two >= a (>= 1), elementwise, int64."""
    exponent = xp.ceil(xp.log2(xp.maximum(a, 1).astype(np.float64))).astype(np.int64)
    return xp.left_shift(np.int64(1), exponent)


def _segments(xp: Any, rows: Any) -> tuple[Any, Any, Any]:
    """For a sorted array: (distinct values, first index of each, count of each)."""
    if rows.size == 0:
        z = xp.zeros(0, dtype=np.int64)
        return z, z, z
    starts = xp.flatnonzero(run_starts(rows))
    counts = xp.diff(xp.concatenate([starts, xp.asarray([rows.size], dtype=starts.dtype)]))
    return rows[starts], starts.astype(np.int64), counts.astype(np.int64)


def _rank_in_segment(xp: Any, flags: Any, seg_of: Any, seg_start: Any) -> tuple[Any, Any]:
    """For boolean flags over entries laid out in consecutive segments (segment t starts at
    seg_start[t], non-decreasing; empty segments allowed): each entry's rank among the
    flagged entries of its segment, and each segment's flagged count."""
    before = xp.zeros(flags.size + 1, dtype=np.int64)  # flagged entries before index i
    xp.cumsum(flags.astype(np.int64), out=before[1:])
    at_start = before[seg_start]
    rank = before[:-1] - at_start[seg_of]
    seg_end = xp.concatenate([seg_start[1:], xp.asarray([flags.size], dtype=np.int64)])
    return rank, before[seg_end] - at_start


class DynamicGraph:
    """A directed or undirected graph under batches of edge insertions and deletions.

    ``DynamicGraph(n_vertices, directed=True, weighted=False, device="auto")`` starts
    empty; :meth:`from_csr` loads a :class:`~morphgpu.csr.CSRGraph` or a sparse matrix.
    Batches are NumPy or CuPy arrays (moved to the graph's side). ``page_size`` (a power of
    two) is the number of neighbours per page.
    """

    def __init__(self, n_vertices: int, *, directed: bool = True, weighted: bool = False,
                 device: str = "auto", page_size: int = DEFAULT_PAGE_SIZE,
                 capacity_pages: int | None = None) -> None:
        n = _count_argument("n_vertices", n_vertices)
        if n > MAX_VERTICES:
            raise DynamicGraphError(f"n_vertices must be at most {MAX_VERTICES} (edges are "
                                    f"kept as int64 keys u * n + v), got {n}")
        # arguments.integer refuses bool: page_size=True was a page of one neighbour.
        page_size = arguments.integer(
            page_size, "page_size", error=DynamicGraphError,
            message="page_size must be a power of two in [1, 1024], got {value!r}")
        if page_size < 1 or page_size & (page_size - 1) or page_size > 1024:
            raise DynamicGraphError(
                f"page_size must be a power of two in [1, 1024], got {page_size!r}")
        if capacity_pages is not None:
            # Was int(capacity_pages or 0): -5, 1.5 and True were taken, 'x' raised int()'s
            # ValueError, 10**12 a NumPy MemoryError for a 116 TiB page table.
            capacity_pages = arguments.integer(
                capacity_pages, "capacity_pages", low=0, high=MAX_PAGES, error=DynamicGraphError,
                message="capacity_pages must be None or an integer in [0, {high}], "
                        "got {value!r}")
        directed = arguments.flag(directed, "directed", error=DynamicGraphError)
        weighted = arguments.flag(weighted, "weighted", error=DynamicGraphError)
        self.side = backend.resolve_device(device, who="morphgpu.DynamicGraph")
        self.xp = backend.xp_for(self.side)
        self.directed = directed
        self.weighted = weighted
        self.page_size = int(page_size)
        self.page_shift = self.page_size.bit_length() - 1
        self.n_vertices = n
        xp = self.xp
        self.vid_dtype = index_dtype(max(n, 1))
        pages = max(int(capacity_pages or 0), 16)
        # Checked before allocating: DynamicGraph(2**31) was NumPy's "Unable to allocate 32.0
        # GiB", and 10**18 "Maximum allowed dimension exceeded", neither naming n_vertices.
        needed = 24 * n + pages * (8 + self.page_size * (self.vid_dtype.itemsize +
                                                        (8 if self.weighted else 0)))
        what = f"DynamicGraph(n_vertices={n}, capacity_pages={pages})"
        self._require_bytes(needed, what)
        self.pool = PagePool(self.page_size, pages, xp=xp, dtype=self.vid_dtype,
                             weights_dtype=np.float64 if self.weighted else None)
        self.bounds = xp.zeros(2 * n, dtype=np.int64)  # begin, end positions per vertex
        self.table_cap = xp.zeros(n, dtype=np.int64)  # page-table entries each vertex owns
        self.table = xp.zeros(max(pages, 16), dtype=np.int32)
        self.table_used = 0  # entries of `table` handed to vertices so far
        self.table_owned = 0  # entries vertices own now (the rest is left by relocations)
        self.n_entries = 0  # stored directed entries
        self._n_edges = 0
        self._serial = next(_graph_serials)
        self._version = 0  # read as `version`, stamped with this graph (GraphVersion)
        # Insertions since the last deletion, for incremental BFS repair: (version after
        # the batch, sources, destinations) of the stored entries each batch added.
        self._journal: list[tuple[int, Any]] = []
        self._journal_entries = 0
        self._journal_start = 0  # versions before this one are not covered
        self._listeners: weakref.WeakSet = weakref.WeakSet()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_csr(cls, graph: Any, *, directed: bool | None = None, device: str = "auto",
                 page_size: int = DEFAULT_PAGE_SIZE) -> DynamicGraph:
        """Load a CSRGraph, a SciPy/CuPy sparse matrix or a dense adjacency matrix.
        Duplicate entries are merged (the last weight wins). ``directed`` defaults to the
        CSRGraph's flag (sparse matrices: directed); an undirected load reads each entry
        (u, v) as the edge {u, v}."""
        g = CSRGraph.coerce(graph)
        directed = g.directed if directed is None else arguments.flag(
            directed, "directed", error=DynamicGraphError)
        dg = cls(g.n_vertices, directed=directed, weighted=g.weights is not None,
                 device=device, page_size=page_size,
                 capacity_pages=_pages_for(g, page_size, directed))
        side_graph = g.to(dg.side)
        src = side_graph.edge_sources()
        dst = side_graph.indices
        w = side_graph.weights
        if w is not None and w.size and not bool(dg.xp.isfinite(w).all()):
            # Refused here, naming the argument and the entry: the batch's check said
            # "insert_edges: weights[k]", an index into arrays the caller never saw.
            bad = int(dg.xp.argmax(~dg.xp.isfinite(w)))
            raise DynamicGraphError(f"graph: the weight of entry ({int(src[bad])}, "
                                    f"{int(dst[bad])}) is {float(w[bad])}, not a finite "
                                    "number")
        if not directed and not g.directed:
            # A symmetric CSRGraph lists every edge twice: one direction is the edge. But
            # CSRGraph does not check the claim, and keeping src <= dst alone lost the edges
            # listed only as (u, v) with u > v (a lower triangle marked undirected loaded as
            # an empty graph). So the entries below the diagonal must mirror those above
            # (two sorts: equal arrays); where they do not, every entry is loaded as its
            # edge, those below the diagonal first so that above it the weight still wins.
            xp = dg.xp
            n = max(g.n_vertices, 1)
            above, below = src < dst, src > dst
            mirrored = int(above.sum()) == int(below.sum()) and bool(xp.array_equal(
                xp.sort(src[above].astype(np.int64) * n + dst[above]),
                xp.sort(dst[below].astype(np.int64) * n + src[below])))
            if mirrored:
                keep = src <= dst
                src, dst, w = src[keep], dst[keep], (w[keep] if w is not None else None)
            else:
                order = xp.concatenate([xp.flatnonzero(below), xp.flatnonzero(~below)])
                src, dst, w = src[order], dst[order], (w[order] if w is not None else None)
        if src.size:
            dg.insert_edges(src, dst, w)
        dg._journal.clear()
        dg._journal_entries = 0
        dg._journal_start = dg._version
        return dg

    # ------------------------------------------------------------------ properties
    @property
    def n_edges(self) -> int:
        """Edges (undirected: each edge once, a self-loop once)."""
        return self._n_edges

    def _require_bytes(self, needed: int, what: str) -> None:
        """Refuse, before allocating, arrays the graph's side (host or GPU) cannot hold."""
        if self.side == "gpu":
            backend.require_gpu_bytes(needed, what)
        else:
            backend.require_host_bytes(needed, what)

    @property
    def version(self) -> GraphVersion:
        """Batches (and other changes) made so far; a search records it."""
        return GraphVersion(self._version, self._serial)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_vertices, self.n_vertices)

    def degree(self) -> Any:
        """Out-degree of every vertex (stored entries per row), on the graph's side."""
        return self.bounds[1::2] - self.bounds[0::2]

    def memory(self) -> dict[str, int]:
        """Pages in use, free (recycled, handed out again first), never used, the pool's
        size, and the page table's."""
        out = self.pool.stats()
        out.update({"table_entries_used": self.table_used, "table_entries_owned":
                    self.table_owned, "table_capacity": int(self.table.size)})
        return out

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (f"DynamicGraph(n_vertices={self.n_vertices}, n_edges={self.n_edges}, {kind}, "
                f"side={self.side!r}, pages_in_use={self.pool.n_live})")

    # ------------------------------------------------------------------ reading
    def _slots(self, positions: Any) -> Any:
        """Pool index of each row position (mg::PagedAdjacency::slot)."""
        page = self.table[positions >> self.page_shift].astype(np.int64)
        return (page << self.page_shift) | (positions & (self.page_size - 1))

    def _rows(self, vertices: Any) -> tuple[Any, Any, Any]:
        """(owner index, position) of every entry of the given rows, and their degrees."""
        xp = self.xp
        begin = self.bounds[2 * vertices]
        deg = self.bounds[2 * vertices + 1] - begin
        owner, rank = expand_counts(xp, deg)
        return owner, begin[owner] + rank, deg

    def entries(self) -> tuple[Any, Any, Any]:
        """Every stored directed entry as (sources, destinations, weights or None), row by
        row in storage order."""
        xp = self.xp
        vertices = xp.arange(self.n_vertices, dtype=np.int64)
        owner, pos, _ = self._rows(vertices)
        slots = self._slots(pos)
        w = self.pool.weights[slots] if self.weighted else None
        return owner, self.pool.data[slots].astype(np.int64), w

    def to_csr(self) -> CSRGraph:
        """The graph as a CSRGraph on its side, rows sorted (undirected: both directions,
        marked undirected)."""
        src, dst, w = self.entries()
        g = CSRGraph.from_edges(src, dst, w, n_vertices=self.n_vertices)
        return CSRGraph(g.indptr, g.indices, g.weights, g.n_vertices, self.directed)

    def to_scipy(self) -> Any:
        return self.to_csr().to_scipy()

    # ------------------------------------------------------------------ vertices
    def add_vertices(self, k: int) -> range:
        """Append ``k`` isolated vertices; returns their ids."""
        k = _count_argument("k", k)
        xp = self.xp
        first = self.n_vertices
        if first + k > MAX_VERTICES:
            raise DynamicGraphError(f"add_vertices: {first + k} vertices is past the "
                                    f"{MAX_VERTICES} a graph holds, got k = {k}")
        if index_dtype(first + k) != self.vid_dtype:
            raise DynamicGraphError(f"add_vertices: {first + k} vertices need 64-bit ids; "
                                    "rebuild the graph with from_csr")
        # Checked first, as in __init__: add_vertices(2**31 - 10) was NumPy's "Unable to
        # allocate 32.0 GiB", naming no argument.
        what = f"add_vertices({k}) on a graph of {first} vertices"
        self._require_bytes(24 * (first + k), what)
        with backend.gpu_memory_guard(f"add_vertices({k})"):
            bounds = xp.concatenate([self.bounds, xp.zeros(2 * k, dtype=np.int64)])
            cap = xp.concatenate([self.table_cap, xp.zeros(k, dtype=np.int64)])
        self.bounds, self.table_cap, self.n_vertices = bounds, cap, first + k
        self._changed(insert=None)
        return range(first, first + k)

    def delete_vertices(self, ids: Any) -> BatchResult:
        """Remove every edge of the given vertices (in and out); the ids stay, isolated."""
        xp = self.xp
        ids = self._ids_argument("ids", ids)
        if ids.size == 0:
            return self._result(0, 0, 0)
        ids = sorted_unique(ids)
        owner, pos, _ = self._rows(ids)
        src = ids[owner]
        dst = self.pool.data[self._slots(pos)].astype(np.int64)
        if self.directed:
            # In-edges: every entry whose destination is deleted (one pass over the graph).
            gone = xp.zeros(self.n_vertices, dtype=bool)
            gone[ids] = True
            all_src, all_dst, _ = self.entries()
            into = gone[all_dst]
            src = xp.concatenate([src, all_src[into]])
            dst = xp.concatenate([dst, all_dst[into]])
        return self.delete_edges(src, dst)

    # ------------------------------------------------------------------ batches
    def insert_edges(self, src: Any, dst: Any, weights: Any = None) -> BatchResult:
        """Insert the edges src[i] -> dst[i] (undirected: {src[i], dst[i]}). Edges already
        present are not stored twice; their weights take the batch's value."""
        u, v, w = self._batch("insert_edges", src, dst, weights)
        xp = self.xp
        n = self.n_vertices
        if self.side == "gpu":
            from . import dynamic_graph_gpu  # noqa: PLC0415  (CuPy only where the GPU runs)

            with backend.gpu_memory_guard(f"insert_edges: a batch of {u.size} edges"):
                applied, requested, stored, keys = dynamic_graph_gpu.insert(self, u, v, w)
            self.n_entries += stored
            self._n_edges += applied
            self._changed(insert=keys)
            return self._result(requested, applied, requested - applied)
        if not self.directed:
            # Both directions, interleaved so that batch order (the last weight wins) holds.
            u, v = xp.stack([u, v], axis=1).ravel(), xp.stack([v, u], axis=1).ravel()
            if w is not None:
                w = xp.repeat(w, 2)
        key = u * max(n, 1) + v
        order = xp.argsort(key, kind="stable")
        key = key[order]
        last = xp.ones(key.size, dtype=bool)
        last[:-1] = key[:-1] != key[1:]  # the last occurrence of each key wins
        key = key[last]
        if w is not None:
            w = w[order][last]
        uu = key // max(n, 1)
        vv = key - uu * max(n, 1)
        # An undirected edge is counted by its entry with source <= destination.
        counted = xp.ones(key.size, dtype=bool) if self.directed else uu <= vv
        touched, seg_start, seg_count = _segments(xp, uu)
        seg_of = expand_counts(xp, seg_count)[0]
        hit = self._lookup(touched, seg_start, seg_count, seg_of, vv)
        new = hit < 0
        rank, c = _rank_in_segment(xp, new, seg_of, seg_start)
        # Pool slots of the edges already present (their weights are updated): slots
        # survive the table compaction that _reserve_table may do, positions do not.
        present_slots = self._slots(hit[~new]) if self.weighted else None
        deg = self.bounds[2 * touched + 1] - self.bounds[2 * touched]
        shift = self.page_shift
        before = (deg + self.page_size - 1) >> shift
        after = (deg + c + self.page_size - 1) >> shift
        need = after - before
        cap = self.table_cap[touched]
        moving = after > cap
        totals = xp.stack([need.sum(), (moving * _next_pow2(xp, after)).sum(),
                           (moving * cap).sum(), (new & counted).sum(), counted.sum(),
                           c.sum()])
        total_need, table_need, table_left, applied, requested, stored = (
            int(x) for x in backend.to_host(totals))
        # -- plan: everything allocated before the first write
        self.pool.reserve(total_need)
        self._reserve_table(table_need)
        begin = self.bounds[2 * touched]
        page_ids = self.pool.plan_take(total_need)
        mv = xp.flatnonzero(moving)
        new_cap = _next_pow2(xp, after[mv])
        new_start = self.table_used + xp.cumsum(new_cap) - new_cap
        m_owner, m_rank = expand_counts(xp, before[mv])
        old_entries = (begin[mv] >> shift)[m_owner] + m_rank
        moved_to = new_start[m_owner] + m_rank
        table_start = begin >> shift
        table_start[mv] = new_start
        p_owner, p_rank = expand_counts(xp, need)
        page_at = table_start[p_owner] + before[p_owner] + p_rank
        # -- commit
        self.table[moved_to] = self.table[old_entries]
        self.table_cap[touched[mv]] = new_cap
        self.table_used += table_need
        self.table_owned += table_need - table_left
        self.table[page_at] = page_ids
        self.pool.commit_take(total_need)
        new_begin = table_start << shift
        self.bounds[2 * touched] = new_begin
        pos = (new_begin + deg)[seg_of[new]] + rank[new]
        slots = self._slots(pos)
        self.pool.data[slots] = vv[new].astype(self.vid_dtype)
        if self.weighted:
            self.pool.weights[present_slots] = w[~new]
            self.pool.weights[slots] = w[new]
        self.bounds[2 * touched + 1] = new_begin + deg + c
        self.n_entries += stored
        self._n_edges += applied
        self._changed(insert=key[new])
        return self._result(requested, applied, requested - applied)

    def delete_edges(self, src: Any, dst: Any) -> BatchResult:
        """Delete the edges src[i] -> dst[i] (undirected: {src[i], dst[i]}); absent edges
        are counted and otherwise ignored."""
        u, v, _ = self._batch("delete_edges", src, dst, None)
        xp = self.xp
        n = max(self.n_vertices, 1)
        if self.side == "gpu":
            from . import dynamic_graph_gpu  # noqa: PLC0415  (CuPy only where the GPU runs)

            with backend.gpu_memory_guard(f"delete_edges: a batch of {u.size} edges"):
                applied, requested, removed = dynamic_graph_gpu.delete(self, u, v)
            self.n_entries -= removed
            self._n_edges -= applied
            self._changed(insert=None if removed else ())
            return self._result(requested, applied, requested - applied)
        if not self.directed:
            u, v = xp.minimum(u, v), xp.maximum(u, v)
        requests = sorted_unique(u * n + v)
        if not self.directed:
            a, b = requests // n, requests % n
            key = xp.concatenate([requests, (b * n + a)[a != b]])
            counted = xp.concatenate([xp.ones(requests.size, dtype=bool),
                                      xp.zeros(int((a != b).sum()), dtype=bool)])
            order = xp.argsort(key)
            key, counted = key[order], counted[order]
        else:
            key, counted = requests, xp.ones(requests.size, dtype=bool)
        uu = key // n
        vv = key - uu * n
        touched, seg_start, seg_count = _segments(xp, uu)
        seg_of = expand_counts(xp, seg_count)[0]
        hit = self._lookup(touched, seg_start, seg_count, seg_of, vv)
        found = hit >= 0
        _, k = _rank_in_segment(xp, found, seg_of, seg_start)
        begin = self.bounds[2 * touched]
        deg = self.bounds[2 * touched + 1] - begin
        new_deg = deg - k
        # Holes below the new end take the entries that survive above it.
        hole = found & (hit - begin[seg_of] < new_deg[seg_of])
        hole_rank, _ = _rank_in_segment(xp, hole, seg_of, seg_start)
        t_owner, t_rank = expand_counts(xp, k)
        tail = (begin + new_deg)[t_owner] + t_rank
        gone = xp.sort(hit[found])
        at = xp.minimum(xp.searchsorted(gone, tail), max(gone.size - 1, 0))
        survives = (gone[at] != tail) if gone.size else xp.ones(tail.size, dtype=bool)
        # The survivor of row t with rank r is survivor number (survivors before t) + r.
        t_seg_start = xp.cumsum(k) - k
        s_before = xp.zeros(survives.size + 1, dtype=np.int64)
        xp.cumsum(survives.astype(np.int64), out=s_before[1:])
        s_index = xp.flatnonzero(survives)
        donor = tail[s_index[s_before[t_seg_start][seg_of[hole]] + hole_rank[hole]]]
        hole_slots = self._slots(hit[hole])
        donor_slots = self._slots(donor)
        moved = self.pool.data[donor_slots]
        moved_w = self.pool.weights[donor_slots] if self.weighted else None
        shift = self.page_shift
        before = (deg + self.page_size - 1) >> shift
        after = (new_deg + self.page_size - 1) >> shift
        f_owner, f_rank = expand_counts(xp, before - after)
        freed = self.table[(begin >> shift)[f_owner] + after[f_owner] + f_rank]
        totals = xp.stack([(found & counted).sum(), counted.sum(), found.sum(),
                           xp.asarray(freed.size, dtype=np.int64)])
        applied, requested, removed, n_freed = (int(x) for x in backend.to_host(totals))
        # -- commit
        self.pool.data[hole_slots] = moved
        if self.weighted:
            self.pool.weights[hole_slots] = moved_w
        self.bounds[2 * touched + 1] = begin + new_deg
        self.pool.give_back(freed, n_freed)
        self.n_entries -= removed
        self._n_edges -= applied
        self._changed(insert=None if removed else ())
        return self._result(requested, applied, requested - applied)

    # ------------------------------------------------------------------ internals
    def _result(self, requested: int, applied: int, skipped: int) -> BatchResult:
        return BatchResult(requested, applied, skipped, self._n_edges, self.version)

    def _changed(self, insert: Any) -> None:
        """A new version. ``insert``: the keys (u * n + v) of the entries a batch of
        insertions may have stored (kept for incremental repairs; keys of edges that were
        there already may be among them: relaxing them again changes nothing), () for a
        batch that changed nothing, None for any other change (the journal restarts)."""
        self._version += 1
        if insert is None:
            self._journal.clear()
            self._journal_entries = 0
            self._journal_start = self._version
        elif len(insert) and insert.size:
            self._journal.append((self._version, insert))
            self._journal_entries += int(insert.size)
            # Keep the journal within a quarter of the graph: past that a repair would
            # cost about as much as a fresh search.
            while self._journal and self._journal_entries > max(self.n_entries // 4, 1 << 16):
                dropped = self._journal.pop(0)
                self._journal_entries -= int(dropped[1].size)
                self._journal_start = dropped[0]

    def inserted_since(self, version: int) -> Any | None:
        """The keys (source * n + destination) of the entries stored by insertions after
        ``version``, when nothing else changed since (None otherwise): what an incremental
        search repairs from. Keys of edges that were there already may be among them.
        A version of another graph (a GraphVersion stamped with another graph) gets None."""
        if getattr(version, "graph", self._serial) != self._serial:
            return None
        if version < self._journal_start or version > self._version:
            return None
        parts = [keys for ver, keys in self._journal if ver > version]
        xp = self.xp
        return (parts[0] if len(parts) == 1 else xp.concatenate(parts)) if parts \
            else xp.zeros(0, dtype=np.int64)

    def _reserve_table(self, extra: int) -> None:
        """Room for ``extra`` more table entries at table_used: grow the table, or first
        compact it when relocations have left more than half of it unowned."""
        if self.table_used + extra <= self.table.size:
            return
        xp = self.xp
        if self.table_used - self.table_owned > self.table_used // 2:
            self._compact_table()
            if self.table_used + extra <= self.table.size:
                return
        size = max(self.table_used + extra, math.ceil(self.table.size * 1.5))
        what = f"page table of {size} entries"
        if self.side == "gpu":
            backend.require_gpu_bytes(4 * size, what)
        with backend.gpu_memory_guard(what):
            grown = xp.zeros(size, dtype=np.int32)
        grown[: self.table_used] = self.table[: self.table_used]
        self.table = grown

    def _compact_table(self) -> None:
        """Lay every vertex's table entries out again, back to back (capacities kept)."""
        xp = self.xp
        start = xp.cumsum(self.table_cap) - self.table_cap
        begin = self.bounds[0::2]
        deg = self.bounds[1::2] - begin
        pages = (deg + self.page_size - 1) >> self.page_shift
        owner, rank = expand_counts(xp, pages)
        fresh = xp.zeros(max(self.table.size, 16), dtype=np.int32)
        fresh[start[owner] + rank] = self.table[(begin >> self.page_shift)[owner] + rank]
        self.table = fresh
        self.bounds[0::2] = start << self.page_shift
        self.bounds[1::2] = (start << self.page_shift) + deg
        self.table_used = self.table_owned = int(self.table_cap.sum())

    def _lookup(self, touched: Any, seg_start: Any, seg_count: Any, seg_of: Any,
                vv: Any) -> Any:
        """For each batch entry (sorted by row, then destination): the row position where
        its destination is stored, or -1. Work: the touched rows' entries, each searched
        for in its row's part of the batch."""
        xp = self.xp
        hit = xp.full(vv.size, -1, dtype=np.int64)
        if touched.size == 0:
            return hit
        owner, pos, _ = self._rows(touched)
        if pos.size == 0:
            return hit
        stored = self.pool.data[self._slots(pos)].astype(np.int64)
        n = max(self.n_vertices, 1)
        batch_key = seg_of * n + vv  # sorted: segments in order, destinations within
        entry_key = owner * n + stored
        at = np.minimum(np.searchsorted(batch_key, entry_key), batch_key.size - 1)
        match = batch_key[at] == entry_key
        hit[at[match]] = pos[match]
        return hit

    def _batch(self, who: str, src: Any, dst: Any, weights: Any) -> tuple[Any, Any, Any]:
        """The batch's arrays on the graph's side as int64 (weights float64), validated."""
        xp = self.xp
        u = _id_array(xp, f"{who}: src", src)
        v = _id_array(xp, f"{who}: dst", dst)
        if u.shape != v.shape:
            raise DynamicGraphError(f"{who}: src has {u.size} entries but dst has {v.size}")
        n = self.n_vertices
        if u.size and self.side == "cpu":  # on the GPU the batch's kernels check the ids
            ends = backend.to_host(xp.stack([u.min(), u.max(), v.min(), v.max()]))
            for name, arr, lo, hi in (("src", u, ends[0], ends[1]), ("dst", v, ends[2],
                                                                      ends[3])):
                if lo < 0 or hi >= n:
                    bad = int(xp.argmax((arr < 0) | (arr >= n)))
                    raise DynamicGraphError(
                        f"{who}: {name}[{bad}] = {int(arr[bad])} is outside [0, {n}) "
                        f"(the graph has {n} vertices)")
        w = None
        if weights is not None:
            if not self.weighted:
                raise DynamicGraphError(f"{who}: weights given, but the graph was made "
                                        "without weights (weighted=False)")
            w = backend.to_side(weights, self.side)
            w = xp.asarray(w).ravel()
            if w.shape != u.shape:
                raise DynamicGraphError(f"{who}: weights has {w.size} entries but there are "
                                        f"{u.size} edges")
            if w.dtype.kind not in "iuf":
                raise DynamicGraphError(f"{who}: weights must be numbers, got {w.dtype}")
            w = w.astype(np.float64, copy=False)
            if w.size and self.side == "cpu" and not bool(xp.isfinite(w).all()):
                bad = int(xp.argmax(~xp.isfinite(w)))
                raise DynamicGraphError(f"{who}: weights[{bad}] = {float(w[bad])} is not a "
                                        "finite number")
        elif self.weighted and who == "insert_edges":
            w = xp.ones(u.size, dtype=np.float64)
        entries = u.size * (1 if self.directed else 2)
        if self.side == "gpu" and entries:
            backend.require_gpu_bytes(BYTES_PER_ENTRY * entries,
                                      f"{who}: a batch of {u.size} edges")
        return u, v, w

    def _ids_argument(self, name: str, ids: Any) -> Any:
        xp = self.xp
        a = _id_array(xp, name, ids)
        if a.size:
            lo, hi = (int(x) for x in backend.to_host(xp.stack([a.min(), a.max()])))
            if lo < 0 or hi >= self.n_vertices:
                bad = int(xp.argmax((a < 0) | (a >= self.n_vertices)))
                raise DynamicGraphError(f"{name}[{bad}] = {int(a[bad])} is outside "
                                        f"[0, {self.n_vertices})")
        return a

    def check(self) -> None:
        """Check the layout's invariants (tests): every live page is owned by exactly one
        row place, free pages are disjoint from live ones and were handed out before, rows
        hold no duplicates, and the counts agree. Raises AssertionError."""
        begin = backend.to_host(self.bounds[0::2])
        deg = backend.to_host(self.bounds[1::2]) - begin
        cap = backend.to_host(self.table_cap)
        table = backend.to_host(self.table)
        pages = (deg + self.page_size - 1) >> self.page_shift
        assert (pages <= cap).all(), "a row has more pages than table entries"
        live = np.concatenate([table[(b >> self.page_shift) + np.arange(p)]
                               for b, p in zip(begin, pages)] or [np.zeros(0, np.int32)])
        free = backend.to_host(self.pool.free_pages[: self.pool.n_free])
        assert np.unique(live).size == live.size, "a page is owned twice"
        assert np.unique(free).size == free.size, "a page is free twice"
        assert not np.isin(live, free).any(), "a page is both live and free"
        assert live.size + free.size == self.pool.high_water, "pages lost or invented"
        assert (np.concatenate([live, free]) < self.pool.high_water).all()
        assert int(deg.sum()) == self.n_entries, "entry count"
        src, dst, _ = self.entries()
        key = backend.to_host(src * max(self.n_vertices, 1) + dst)
        assert np.unique(key).size == key.size, "a row holds an edge twice"


def _count_argument(name: str, value: Any) -> int:
    return arguments.integer(
        value, name, low=0, error=DynamicGraphError,
        message="{name} must be a non-negative integer, got {value!r}",
        range_message="{name} must be a non-negative integer, got {value}")


def _holds_bool(a: Any) -> bool:
    """A bool anywhere in a (nested) list or tuple, or a bool array in one: NumPy turns
    [[True], [2]] into ints as it does [True, 2]."""
    return any(isinstance(x, (bool, np.bool_)) or (isinstance(x, np.ndarray) and x.dtype == bool)
               or (isinstance(x, (list, tuple)) and _holds_bool(x)) for x in a)


def _id_array(xp: Any, name: str, a: Any) -> Any:
    if isinstance(a, (list, tuple)) and _holds_bool(a):
        # NumPy turns [True, 2] into [1, 2]: a flag mistaken for vertex 1.
        raise DynamicGraphError(f"{name} must hold integer vertex ids, got a bool in a list")
    arr = backend.to_side(a, "gpu" if xp is not np else "cpu")
    arr = xp.asarray(arr)
    if arr.ndim != 1:
        arr = arr.ravel() if arr.ndim == 0 or arr.size == arr.shape[0] else None
        if arr is None:
            raise DynamicGraphError(f"{name} must be one-dimensional")
    if arr.size and arr.dtype.kind not in "iu":
        raise DynamicGraphError(f"{name} must hold integer vertex ids, got {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise DynamicGraphError(f"{name} holds an id past 2^63 - 1")
    return arr.astype(np.int64, copy=False)  # batches are only read


def _pages_for(g: CSRGraph, page_size: int, directed: bool) -> int:
    """Pages a graph loaded from ``g`` needs (each row's degree rounded up to whole pages),
    with a quarter more for growth."""
    degrees = g.degrees().astype(np.int64)
    if not directed and g.directed:  # each entry becomes an edge: rows gain its reverse
        degrees = degrees + backend.array_module(degrees).bincount(
            g.indices, minlength=g.n_vertices)
    pages = int(((degrees + page_size - 1) // page_size).sum())
    return int(1.25 * pages) + 16
