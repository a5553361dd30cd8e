"""Locality orders for vertices: BFS / reverse Cuthill-McKee, and Morton (Z-order) for points.

Convention (the same as :meth:`CSRGraph.permuted`): a permutation ``perm`` lists OLD vertex
ids in NEW order, i.e. new vertex ``i`` is old vertex ``perm[i]``.
"""

from __future__ import annotations

from typing import Any

from .csr import CSRGraph

__all__ = ["bfs_order", "morton_order", "apply"]


def bfs_order(graph: Any, source: int | None = None, *, method: str = "bfs") -> Any:
    """A locality order of the vertices (old ids in new order), on the graph's side.

    ``method="bfs"``: breadth-first over the undirected view from ``source`` (default 0),
    children ordered by their parent's position (Cuthill-McKee order); every other
    component follows, each from its lowest vertex id. ``method="rcm"``: SciPy's reverse
    Cuthill-McKee.
    """
    raise NotImplementedError


def morton_order(x: Any, y: Any) -> Any:
    """Z-order of 2-D points (each axis quantised to 2**31 cells over its range)."""
    raise NotImplementedError


def apply(graph: Any, perm: Any) -> CSRGraph:
    """The graph relabelled by ``perm`` (new vertex i is old vertex perm[i])."""
    raise NotImplementedError
