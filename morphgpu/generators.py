"""Seeded synthetic graphs, identical on the CPU and the GPU for the same arguments.

Every random number is a counter-based hash of (seed, stream, index) computed with the
same uint64 arithmetic in NumPy and CuPy, so the CPU and GPU paths build the very same
graph (not merely graphs with the same statistics). Results are :class:`CSRGraph` on
the side ``device`` resolves to.
"""

from __future__ import annotations

from typing import Any

from .csr import CSRGraph

__all__ = [
    "kronecker",
    "rmat",
    "gnm",
    "grid2d",
    "grid3d",
    "random_geometric",
    "random_points",
    "delaunay_graph",
    "random_weights",
]


def kronecker(
    scale: int,
    edge_factor: int = 16,
    *,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    device: str = "auto",
    keep_duplicates: bool = False,
) -> CSRGraph:
    """Graph500 Kronecker graph: 2**scale vertices, edge_factor * 2**scale generated edges.

    Each edge picks a quadrant per bit with probabilities (a, b, c, 1-a-b-c); vertex ids are
    then randomly permuted. Undirected: both directions, self-loops dropped, duplicates
    merged unless ``keep_duplicates``.
    """
    raise NotImplementedError


def rmat(
    scale: int,
    edge_factor: int = 16,
    *,
    a: float = 0.57,
    b: float = 0.19,
    c: float = 0.19,
    seed: int = 0,
    device: str = "auto",
    directed: bool = False,
) -> CSRGraph:
    """R-MAT graph (Kronecker without the vertex permutation); self-loops dropped,
    duplicates merged; ``directed=False`` adds every reverse edge."""
    raise NotImplementedError


def gnm(n: int, m: int, *, seed: int = 0, device: str = "auto", directed: bool = False) -> CSRGraph:
    """Uniform random graph with exactly ``m`` distinct edges (pairs u != v) on ``n`` vertices.

    Undirected graphs store each of the m edges in both directions (2m CSR entries).
    """
    raise NotImplementedError


def grid2d(nx: int, ny: int, *, device: str = "auto") -> CSRGraph:
    """5-point grid: vertex ``x + nx * y``, edges to the 4 axis neighbours (both directions)."""
    raise NotImplementedError


def grid3d(nx: int, ny: int, nz: int, *, device: str = "auto") -> CSRGraph:
    """7-point grid: vertex ``x + nx * (y + ny * z)``, edges to the 6 axis neighbours."""
    raise NotImplementedError


def random_points(n: int, *, seed: int = 0, device: str = "auto") -> tuple[Any, Any]:
    """``n`` uniform points in the unit square as (x, y) float64 arrays on ``device``'s side."""
    raise NotImplementedError


def random_geometric(
    n: int,
    *,
    radius: float | None = None,
    avg_degree: float | None = None,
    seed: int = 0,
    device: str = "auto",
    return_points: bool = False,
) -> Any:
    """Random geometric graph: ``random_points(n, seed)`` joined when closer than ``radius``.

    Give ``radius`` or ``avg_degree`` (radius = sqrt(avg_degree / (pi n)); default
    avg_degree 8). Cell binning keeps it near-linear. With ``return_points`` returns
    (graph, x, y).
    """
    raise NotImplementedError


def delaunay_graph(
    n_points: int, *, seed: int = 0, device: str = "auto", return_points: bool = False
) -> Any:
    """Edges of the Delaunay triangulation of ``random_points(n_points, seed)``, both
    directions. With ``return_points`` returns (graph, x, y)."""
    raise NotImplementedError


def random_weights(
    graph: CSRGraph, rule: str = "uniform", *, seed: int = 0, low: float = 0.0, high: float = 1.0
) -> CSRGraph:
    """The graph with seeded edge weights; (u, v) and (v, u) get the same weight.

    ``rule="uniform"``: float64 in [low, high); ``rule="integer"``: int32 in [low, high).
    """
    raise NotImplementedError
