"""The FIFO order of a breadth-first search, rebuilt from its distances (host, NumPy).

SciPy's ``breadth_first_order`` and NetworkX's ``bfs_edges`` both define their output by a
FIFO queue: vertices are expanded in the order they were reached, each one's row in CSR
(adjacency) order, and a vertex is reached by the first row that holds it. Our searches
(every GPU variant, the NumPy levels) compute the same distances by other routes, so the
order is rebuilt afterwards, one level at a time: scan the level's vertices in their
order, each one's row in order, keep each next-level target's first appearance; the
vertex whose row held it is its parent. O(edges out of reached vertices) in NumPy.

And the other way round, :func:`distances_from_fifo` turns a FIFO order with its
predecessors (SciPy's output) into distances.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def fifo_levels(indptr: np.ndarray, indices: np.ndarray, dist: np.ndarray,
                first: np.ndarray, depth_limit: float = np.inf,
                ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield ``(vertices, parents)`` for the levels after ``first``, in FIFO order.

    ``dist`` holds each vertex's distance from ``first`` (whose vertices are at 0);
    levels deeper than ``depth_limit`` are not produced.
    """
    frontier = np.asarray(first, dtype=np.int64)
    depth = 0
    while frontier.size and depth < depth_limit:
        starts = indptr[frontier].astype(np.int64)
        counts = indptr[frontier + 1].astype(np.int64) - starts
        total = int(counts.sum())
        if total == 0:
            return
        run_start = np.cumsum(counts) - counts
        positions = np.repeat(starts - run_start, counts) + np.arange(total, dtype=np.int64)
        targets = indices[positions].astype(np.int64, copy=False)
        keep = dist[targets] == depth + 1
        targets = targets[keep]
        if targets.size == 0:
            return
        owners = np.repeat(frontier, counts)[keep]
        _, first_seen = np.unique(targets, return_index=True)
        first_seen.sort()
        frontier = targets[first_seen]
        yield frontier, owners[first_seen]
        depth += 1


def fifo_order(indptr: np.ndarray, indices: np.ndarray, dist: np.ndarray,
               source: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, parent) of a single-source search: the reached vertices in FIFO order and
    each one's first discoverer (-1 for the source and unreached vertices)."""
    parent = np.full(dist.size, -1, dtype=np.int64)
    parts = [np.array([source], dtype=np.int64)]
    for level, owners in fifo_levels(indptr, indices, dist, parts[0]):
        parts.append(level)
        parent[level] = owners
    return np.concatenate(parts), parent


def undirected_rows(indptr: np.ndarray, indices: np.ndarray,
                    n: int) -> tuple[np.ndarray, np.ndarray]:
    """Each vertex's out-row followed by its in-row (sources ascending): the order in
    which SciPy's ``directed=False`` search scans a vertex's neighbours."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    out_deg = np.diff(indptr)
    src = np.repeat(np.arange(n, dtype=np.int64), out_deg)
    by_target = np.argsort(indices, kind="stable")  # sources stay ascending within a target
    in_deg = np.bincount(indices, minlength=n)
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(out_deg + in_deg, out=new_indptr[1:])
    new = np.empty(int(new_indptr[-1]), dtype=np.int64)
    k_out = np.arange(indices.size, dtype=np.int64) - indptr[src]
    new[new_indptr[src] + k_out] = indices
    tgt = indices[by_target]
    in_start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(in_deg, out=in_start[1:])
    k_in = np.arange(indices.size, dtype=np.int64) - in_start[tgt]
    new[new_indptr[tgt] + out_deg[tgt] + k_in] = src[by_target]
    return new_indptr, new


def distances_from_fifo(order: np.ndarray, predecessors: np.ndarray, n: int) -> np.ndarray:
    """Distances (int32, -1 unreached) from a FIFO order and its predecessors.

    In a FIFO search the parents' positions in ``order`` never decrease along it, so each
    level ends where the first vertex whose parent lies past the previous level sits: one
    binary search per level.
    """
    dist = np.full(n, -1, dtype=np.int32)
    if order.size == 0:
        return dist
    # int32 positions wherever n allows (SciPy's own ids are int32): the scatter and the two
    # gathers are random accesses over n entries, and half the bytes made them 1.5x faster
    # (1M-vertex grid, 2-core host).
    index = np.int32 if n < 2**31 else np.int64
    pos = np.empty(n, dtype=index)
    pos[order] = np.arange(order.size, dtype=index)
    parent_pos = np.zeros(order.size, dtype=index)
    parent_pos[1:] = pos[predecessors[order[1:]]]
    ends = [1]
    search = parent_pos.searchsorted  # the bound method: a level costs about a microsecond
    end, total = 1, order.size
    while end < total:
        # The key in the array's own type: a Python int would make NumPy cast the whole
        # array to int64 at every level.
        end = int(search(index(end)))
        ends.append(end)
    sizes = np.diff(np.asarray([0, *ends]))
    dist[order] = np.repeat(np.arange(sizes.size, dtype=np.int32), sizes)
    return dist
