"""Graph builders for benchmarks/bfs.py: road-like graphs (grids with random deletions,
Delaunay graphs of random points) and the Graph500 inputs (Kronecker, uniform random),
with what Graph500's edge count needs. Built on the GPU where the library can (``device``
as in :mod:`morphgpu.generators`); tests call them at tiny sizes on the CPU.

Not a benchmark itself: scripts/gpu-check runs only the modules with a __main__ block.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from morphgpu import backend, generators  # noqa: E402
from morphgpu.csr import CSRGraph  # noqa: E402

# The random stream of the deletions (generators' own streams are below 2**22).
_STREAM_KEEP = 1 << 40


def grid_with_deletions(nx: int, ny: int, *, keep: float = 0.75, seed: int = 0,
                        device: str = "auto") -> CSRGraph:
    """The 5-point grid of ``generators.grid2d`` (vertex ``x + nx * y``) with each
    undirected edge kept with probability ``keep``, both directions stored.

    Edge ``2 * v`` joins v to its right neighbour, ``2 * v + 1`` to the one below; each is
    kept when a hash of (seed, its number) falls below ``keep``, so the CPU and the GPU
    build the same graph. All ``nx * ny`` vertices exist (some end up isolated).
    """
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep must lie in [0, 1], got {keep}")
    if not all(isinstance(v, int) and v >= 0 for v in (nx, ny)):
        raise ValueError(f"nx and ny must be non-negative integers, got {nx!r}, {ny!r}")
    xp = backend.xp_for(backend.resolve_device(device, who="grid_with_deletions"))
    n = nx * ny
    ids = xp.arange(n, dtype=xp.int64)
    right = ids[ids % max(nx, 1) < nx - 1]
    down = ids[ids < n - nx]
    src = xp.concatenate([right, down])
    dst = xp.concatenate([right + 1, down + nx])
    number = xp.concatenate([2 * right, 2 * down + 1])
    bits = generators.hash_uniform_bits(xp, seed, _STREAM_KEEP, number)
    unit = (bits >> xp.uint64(11)).astype(xp.float64) * 2.0**-53
    kept = unit < keep
    return CSRGraph.from_edges(src[kept], dst[kept], n_vertices=n, symmetrize=True)


def delaunay(n_points: int, *, seed: int = 0, device: str = "auto") -> CSRGraph:
    """Edges of the Delaunay triangulation of ``n_points`` uniform points (the library's
    ``delaunay_graph``: triangulated on the host by ``triangle`` or SciPy, then moved)."""
    return generators.delaunay_graph(n_points, seed=seed, device=device)


def uniform_random(n: int, degree: int, *, seed: int = 0, device: str = "auto") -> CSRGraph:
    """G(n, m) with m = n * degree / 2 distinct undirected edges: mean degree ``degree``."""
    return generators.gnm(n, n * degree // 2, seed=seed, device=device)


def kronecker_input_degrees(scale: int, edge_factor: int = 16, *, seed: int = 0,
                            device: str = "auto") -> Any:
    """Per vertex, the generated edge tuples of ``generators.kronecker(scale, edge_factor,
    seed=seed)`` that touch it, duplicates included (each tuple counts at both ends).

    ``kronecker`` merges duplicates, so its CSR under-counts Graph500's input edges; half
    the sum of these over a component's vertices is Graph500's count. The generator drops
    self-loops in either case, so those alone are missing: a fraction (a + d) ** scale of
    the tuples, 0.62 ** 21 = 4e-5 at scale 21.
    """
    return generators.kronecker(scale, edge_factor, seed=seed, device=device,
                                keep_duplicates=True).degrees()


def is_symmetric(indptr: Any, indices: Any) -> bool:
    """Whether every stored (u, v) has a stored (v, u) (host arrays; multiplicities aside)."""
    import numpy as np  # noqa: PLC0415

    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    cols = np.asarray(indices, dtype=np.int64)
    forward = np.unique(rows * n + cols)
    backward = np.unique(cols * n + rows)
    return bool(np.array_equal(forward, backward))
