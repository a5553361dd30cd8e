"""Graph500's five checks of a BFS result, written independently of every BFS in this wing.

The checks (Graph500 specification §"Validation"), stated for directed graphs (an
undirected graph is a directed one with every edge both ways):

1. the parents form a tree rooted at the source: the root is its own parent and every
   other reached vertex's parent is reached with a distance one smaller (so no cycles);
2. tree edges join levels that differ by exactly one (the same distance test);
3. every edge (u, v) out of a reached u spans at most one level: dist[v] <= dist[u] + 1
   (for an undirected graph this is ``|dist[u] - dist[v]| <= 1``);
4. the result spans the source's component: every edge out of a reached vertex ends at a
   reached vertex, and unreached vertices have distance -1 and parent -1;
5. each parent is joined to its child by a real edge of the graph.

Distances alone (no parents) are checked by 3, 4 and "every reached vertex other than the
source has an in-neighbour one level up", which with 3 pins distances to the true ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class BFSValidationError(AssertionError):
    """A BFS result broke one of the Graph500 checks; the message names the check."""


def _edge_keys(indptr: np.ndarray, indices: np.ndarray, n: int) -> np.ndarray:
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    return np.unique(rows * max(n, 1) + indices.astype(np.int64))


def graph500_check(
    indptr: Any, indices: Any, source: int, dist: Any, parent: Any = None
) -> None:
    """Raise :class:`BFSValidationError` naming the first failed check; return None if valid."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    dist = np.asarray(dist, dtype=np.int64)
    n = indptr.size - 1

    def fail(check: str, detail: str) -> None:
        raise BFSValidationError(f"Graph500 check {check} failed: {detail}")

    if not 0 <= int(source) < n:
        fail("0 (source)", f"source {source} is outside [0, {n})")
    if dist.shape != (n,):
        fail("0 (shape)", f"distances have shape {dist.shape}, expected ({n},)")
    if dist[source] != 0:
        fail("1 (root)", f"distance of the source {source} is {dist[source]}, not 0")
    roots = np.flatnonzero(dist == 0)
    if roots.size != 1:
        other = int(roots[roots != source][0])
        fail("1 (root)", f"vertex {other} also has distance 0 (only the source {source} may)")
    if (dist < -1).any():
        fail("4 (labels)", f"vertex {int(np.argmax(dist < -1))} has distance < -1")
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    reached_u = dist[rows] >= 0
    du, dv = dist[rows][reached_u], dist[indices][reached_u]
    if (dv < 0).any():
        k = int(np.argmax(dv < 0))
        fail("4 (spans component)", f"edge ({rows[reached_u][k]}, {indices[reached_u][k]}) "
             "leaves the reached set")
    if (dv > du + 1).any():
        k = int(np.argmax(dv > du + 1))
        fail("3 (edge spans <= 1 level)",
             f"edge ({rows[reached_u][k]}, {indices[reached_u][k]}) goes from level "
             f"{du[k]} to {dv[k]}")
    # Every reached non-source vertex needs an in-neighbour exactly one level up.
    tight = np.zeros(n, dtype=bool)
    tight[indices[reached_u][dv == du + 1]] = True
    needs = (dist > 0) & ~tight
    if needs.any():
        fail("2 (levels)", f"vertex {int(np.argmax(needs))} at distance "
             f"{dist[int(np.argmax(needs))]} has no in-neighbour one level up")
    if parent is None:
        return
    parent = np.asarray(parent, dtype=np.int64)
    if parent.shape != (n,):
        fail("0 (shape)", f"parents have shape {parent.shape}, expected ({n},)")
    if parent[source] != source:
        fail("1 (root)", f"parent of the source {source} is {parent[source]}, not itself")
    unreached = dist < 0
    if (parent[unreached] != -1).any():
        v = int(np.flatnonzero(unreached & (parent != -1))[0])
        fail("4 (unreached)", f"unreached vertex {v} has parent {parent[v]}")
    others = np.flatnonzero(dist > 0)
    p = parent[others]
    if ((p < 0) | (p >= n)).any():
        v = int(others[np.argmax((p < 0) | (p >= n))])
        fail("1 (tree)", f"reached vertex {v} has parent {parent[v]}")
    if (dist[p] != dist[others] - 1).any():
        v = int(others[np.argmax(dist[p] != dist[others] - 1)])
        fail("2 (tree levels)", f"vertex {v} at level {dist[v]} has parent {parent[v]} at "
             f"level {dist[parent[v]]}")
    keys = _edge_keys(indptr, indices, n)
    wanted = p * max(n, 1) + others
    at = np.searchsorted(keys, wanted)
    present = (at < keys.size) & (keys[np.minimum(at, max(keys.size - 1, 0))] == wanted)
    if not present.all():
        v = int(others[np.argmax(~present)])
        fail("5 (real edges)", f"parent edge ({parent[v]}, {v}) is not in the graph")

