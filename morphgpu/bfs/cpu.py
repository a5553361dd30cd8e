"""The NumPy BFS: level-synchronous, top-down and bottom-up, switching direction per level.

Every level is a handful of whole-array NumPy operations, so the cost is O(edges inspected)
plus a fixed ~20 µs of interpreter overhead per level.

- Top-down expands the frontier's out-edges at once (the COO expansion of the frontier's
  rows), keeps neighbours still unvisited, and removes duplicates without sorting: every
  candidate writes its own position into a scratch array indexed by vertex, and the one
  whose write stuck owns the vertex (the CPU twin of the GPU's status-array dedup).
- Deep, narrow graphs (roads, meshes: hundreds of levels of a few hundred vertices) pay
  the per-level overhead hundreds of times; there ``auto`` runs SciPy's sequential BFS in C
  and recovers the levels from its visit order (:func:`_scipy_order`).
- Bottom-up inspects the in-edges of every unvisited vertex and adopts the first one whose
  source is on the frontier. NumPy cannot stop early inside a row, so its cost is the
  in-degree sum of the unvisited vertices; the direction with fewer edges to inspect is
  chosen every level (Beamer's rule with both constants set to the NumPy costs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .order import distances_from_fifo

Direction = str  # "top-down" | "bottom-up" | "auto" | "scipy-order"


@dataclass
class CPUGraph:
    """Out-edges, and in-edges built lazily (an undirected graph is its own reverse)."""

    indptr: np.ndarray
    indices: np.ndarray
    symmetric: bool
    _rev: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def n(self) -> int:
        return self.indptr.size - 1

    def reverse(self) -> tuple[np.ndarray, np.ndarray]:
        if self.symmetric:
            return self.indptr, self.indices
        if self._rev is None:
            self._rev = reverse_csr(self.indptr, self.indices)
        return self._rev


def reverse_csr(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The transpose's CSR by a stable counting sort on the column index (O(n + m))."""
    n = indptr.size - 1
    rows = np.repeat(np.arange(n, dtype=indices.dtype), np.diff(indptr))
    order = np.argsort(indices, kind="stable")
    rev_indptr = np.zeros(n + 1, dtype=indptr.dtype)
    np.cumsum(np.bincount(indices, minlength=n), out=rev_indptr[1:])
    return rev_indptr, rows[order]


def _row_positions(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edge positions of all ``rows`` concatenated, degree of each row)."""
    starts = indptr[rows]
    degrees = indptr[rows + 1] - starts
    total = int(degrees.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), degrees
    ends = np.cumsum(degrees)
    # Position k of the output lies in row r: starts[r] + (k - (ends[r] - degrees[r])).
    shift = np.repeat(starts - (ends - degrees), degrees)
    return np.arange(total, dtype=shift.dtype) + shift, degrees


def _top_down(
    g: CPUGraph, frontier: np.ndarray, dist: np.ndarray, parent: np.ndarray | None,
    owner: np.ndarray, next_level: int,
) -> np.ndarray:
    positions, degrees = _row_positions(g.indptr, frontier)
    if positions.size == 0:
        return frontier[:0]
    neighbours = g.indices[positions]
    fresh = dist[neighbours] < 0
    candidates = neighbours[fresh]
    if candidates.size == 0:
        return candidates
    slots = np.arange(candidates.size, dtype=np.int64)
    owner[candidates] = slots
    won = owner[candidates] == slots
    found = candidates[won]
    dist[found] = next_level
    if parent is not None:
        sources = np.repeat(frontier, degrees)[fresh][won]
        parent[found] = sources
    return found


def _bottom_up(
    g: CPUGraph, dist: np.ndarray, parent: np.ndarray | None, level: int,
) -> np.ndarray:
    rev_indptr, rev_indices = g.reverse()
    unvisited = np.flatnonzero(dist < 0).astype(g.indices.dtype, copy=False)
    positions, degrees = _row_positions(rev_indptr, unvisited)
    if positions.size == 0:
        return unvisited[:0]
    sources = rev_indices[positions]
    hit = dist[sources] == level
    rows = np.repeat(unvisited, degrees)[hit]
    if rows.size == 0:
        return rows
    first = np.empty(rows.size, dtype=bool)
    first[0] = True
    np.not_equal(rows[1:], rows[:-1], out=first[1:])
    found = rows[first]
    dist[found] = level + 1
    if parent is not None:
        parent[found] = sources[hit][first]
    return found


def _scipy_order(
    g: CPUGraph, source: int, want_parents: bool
) -> tuple[np.ndarray, np.ndarray | None]:
    """SciPy's sequential BFS, then levels recovered from its FIFO order
    (order.distances_from_fifo: one binary search per level instead of one pass of NumPy
    calls per level on deep graphs: roads, meshes)."""
    n = g.n
    # float64 data: SciPy's graph validation converts anything else to float64 first,
    # a full copy that cost more than a third of the search on the road networks.
    matrix = sp.csr_matrix(
        (np.ones(g.indices.size, dtype=np.float64), g.indices, g.indptr), shape=(n, n)
    )
    order, pred = csgraph.breadth_first_order(matrix, source, directed=True,
                                              return_predecessors=True)
    dist = distances_from_fifo(order, pred, n)
    parent = None
    if want_parents:
        # SciPy's predecessors are the parents, with -9999 at the source and where
        # unreached: one pass in vertex order (gathering them along the order was a
        # second random pass over n entries).
        parent = pred.astype(g.indices.dtype, copy=True)
        parent[pred < 0] = -1
        parent[source] = source
    return dist, parent


def bfs(
    g: CPUGraph,
    source: int,
    *,
    want_parents: bool,
    direction: Direction = "auto",
) -> tuple[np.ndarray, np.ndarray | None, list[str]]:
    """Distances (int32, -1 unreached), parents (or None) and the direction of each level."""
    if direction == "scipy-order":
        dist, parent = _scipy_order(g, source, want_parents)
        return dist, parent, ["scipy-order"]
    n = g.n
    dist = np.full(n, -1, dtype=np.int32)
    parent = np.full(n, -1, dtype=g.indices.dtype) if want_parents else None
    owner = np.empty(n, dtype=np.int64)
    dist[source] = 0
    if parent is not None:
        parent[source] = source
    degrees = np.diff(g.indptr)
    frontier = np.array([source], dtype=g.indices.dtype)
    # In-degree sum of the unvisited vertices (what a bottom-up level would inspect); for a
    # directed graph the out-degree sum stands in until the reverse exists.
    unvisited_edges = int(g.indptr[-1]) - int(degrees[source])
    directions: list[str] = []
    level = 0
    while frontier.size:
        frontier_edges = int(degrees[frontier].sum())
        go_up = direction == "bottom-up" or (
            direction == "auto" and frontier_edges > unvisited_edges
        )
        if go_up:
            frontier = _bottom_up(g, dist, parent, level)
        else:
            frontier = _top_down(g, frontier, dist, parent, owner, level + 1)
        directions.append("bottom-up" if go_up else "top-down")
        unvisited_edges -= int(degrees[frontier].sum()) if frontier.size else 0
        level += 1
    return dist, parent, directions


def repair(
    indptr: np.ndarray,
    indices: np.ndarray,
    dist: np.ndarray,
    parent: np.ndarray | None,
    new_src: np.ndarray,
    new_dst: np.ndarray,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The NumPy twin of kernels/repair.cu: labels (and parents) of a search brought up to
    date after the insertions new_src -> new_dst, by relaxing those edges and then the
    out-edges of every vertex whose distance fell, round after round. Distance and parent
    are one key, (distance << 32) | parent, lowered by a minimum, as on the GPU; a vertex
    whose distance did not fall keeps its parent."""
    unreached = np.uint64(0xFFFFFFFF)
    shift, low = np.uint64(32), np.uint64(0xFFFFFFFF)
    d = dist.astype(np.int64).astype(np.uint64) & low  # -1 (unreached) becomes the largest
    p = parent.astype(np.int64) if parent is not None else np.zeros(d.size, dtype=np.int64)
    key = (d << shift) | (p.astype(np.uint64) & low)
    src = np.asarray(new_src, dtype=np.int64)
    dst = np.asarray(new_dst, dtype=np.int64)
    degrees = np.diff(indptr)
    while src.size:
        ds = key[src] >> shift
        ok = ds != unreached
        src, dst, ds = src[ok], dst[ok], ds[ok]
        before = key >> shift
        np.minimum.at(key, dst, ((ds + np.uint64(1)) << shift) | src.astype(np.uint64))
        fell = np.flatnonzero((key >> shift) < before)
        counts = degrees[fell]
        owner = np.repeat(np.arange(fell.size), counts)
        pos = np.repeat(indptr[fell] - np.cumsum(counts) + counts, counts) + np.arange(owner.size)
        src, dst = fell[owner], indices[pos].astype(np.int64)
    out = (key >> shift).astype(np.int64)
    out[out == int(unreached)] = -1
    new_parent = None
    if parent is not None:
        new_parent = (key & low).astype(np.int64).astype(parent.dtype)
        new_parent[out < 0] = -1
    return out.astype(np.int32), new_parent
