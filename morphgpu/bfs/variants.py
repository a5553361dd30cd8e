"""The BFS variants by name: which paper each comes from, whether it exists, and `auto`.

A variant is a policy over the shared traversal operators (include/morphgpu/traversal):
which expand (load balancing), which contract (duplicate culling), which queue generation,
which direction rule, and whether the level loop lives in one persistent kernel. Names
from the issue that are not implemented yet stay in the table with ``implemented=False``,
so asking for one is a clear error rather than a silent substitute.

``auto`` on the GPU, from graph statistics (no traversal needed):
- average degree <= 8 and maximum degree <= 64 (meshes, grids, road networks: deep, narrow
  frontiers) -> ``persistent``: the level loop lives in one kernel, small frontiers run
  inside one block without grid barriers, wide ones across the grid;
- otherwise, when the graph is symmetric (bottom-up needs in-edges without building a
  transpose) -> ``beamer``: the direction-optimising BFS (Enterprise's status-array queues,
  bottom-up with the hub cache, the level loop in one persistent kernel) with Beamer's
  alpha/beta rule, which returns to top-down for the tail levels; on Kronecker scale 21 it
  measured 80 GTEPS against 45 for Enterprise's one-way gamma switch (H200);
- otherwise (directed) ``merge-path``: the edge-balanced top-down expand, the fastest
  top-down variant measured on Kronecker scale 21 (21 GTEPS against 11-14 for the others).
On the CPU every variant maps to the NumPy BFS with the direction rule it implies; ``auto``
runs SciPy's sequential BFS with levels recovered from its order on deep, narrow graphs
(NumPy's per-level overhead dominates there) and the direction-switching NumPy BFS else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Variant:
    name: str
    paper: str
    summary: str
    implemented: bool
    cpu_direction: str  # what the NumPy path runs for this name


_MERRILL = "merrill-scalable-gpu-graph-traversal"
_LB = "load-balanced-gpu-bfs"
_ENT = "enterprise-bfs"
_DP = "bfs-dynamic-graphs-dynamic-parallelism"

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in [
        Variant("persistent", _DP, "one persistent kernel over mg::grid_sync; frontiers "
                "under a block's reach run in one block with no grid barrier", True, "top-down"),
        Variant("expand-contract", _MERRILL, "one fused kernel per level: scan+warp+CTA "
                "gathering, bitmask + label check, warp/history culling, prefix-sum "
                "enqueue", True, "top-down"),
        Variant("two-phase", _MERRILL, "expand kernel writes every neighbour to an edge "
                "queue, contract kernel culls and labels", True, "top-down"),
        Variant("direction-optimizing", _ENT, "Enterprise: status-array queue generation, "
                "bottom-up with a shared-memory hub cache, switch at gamma = 30 % hubs",
                True, "auto"),
        Variant("beamer", _ENT, "direction-optimizing with Beamer's alpha/beta rule",
                True, "auto"),
        Variant("top-down", "", "CPU: top-down every level", True, "top-down"),
        Variant("bottom-up", "", "CPU: bottom-up every level", True, "bottom-up"),
        Variant("contract-expand", _MERRILL, "edge queue of (vertex, discoverer) pairs: "
                "claim then expand the winners' rows, in one kernel", True, "top-down"),
        Variant("hybrid", _MERRILL, "contract-expand for small levels, two-phase above "
                "2^16 queued edges", True, "top-down"),
        Variant("merge-path", _LB, "edge-balanced expand: frontier degree scan, one edge "
                "per thread found by binary search (merge-path partition)", True,
                "top-down"),
        Variant("merge-path-couplings", _LB, "imbalanced/balanced redistribution x "
                "gathering couplings and the expand-factor switch", False, "top-down"),
        Variant("frontier-classes", _ENT, "thread/warp/block/grid frontier queues", False,
                "top-down"),
    ]
}

def names(*, implemented_only: bool = True) -> list[str]:
    return [k for k, v in VARIANTS.items() if v.implemented or not implemented_only]


def check(variant: str) -> Variant:
    """The variant named ``variant``; ValueError for unknown or unimplemented names."""
    if variant == "auto":
        return Variant("auto", "", "chosen from graph statistics", True, "auto")
    if variant not in VARIANTS:
        raise ValueError(
            f"variant must be 'auto' or one of {names()}, got {variant!r}"
        )
    v = VARIANTS[variant]
    if not v.implemented:
        raise ValueError(
            f"variant {variant!r} ({v.paper}) is not implemented yet; available: {names()}"
        )
    return v


DEEP_MEAN_DEGREE = 8.0
DEEP_MAX_DEGREE = 64


def is_deep_and_narrow(degrees: np.ndarray) -> bool:
    """Low, bounded degrees: meshes, grids and roads, whose BFS has many narrow levels."""
    return degrees.size == 0 or (
        float(degrees.mean()) <= DEEP_MEAN_DEGREE and int(degrees.max()) <= DEEP_MAX_DEGREE
    )


def auto_cpu(degrees: np.ndarray) -> str:
    """The NumPy direction ``auto`` runs: SciPy's order for deep graphs, else switching."""
    return "scipy-order" if is_deep_and_narrow(degrees) else "auto"


def auto_gpu_from_stats(mean_degree: float, max_degree: int, symmetric: bool) -> str:
    """The GPU variant ``auto`` picks from the mean and largest out-degree (module doc)."""
    if mean_degree <= DEEP_MEAN_DEGREE and max_degree <= DEEP_MAX_DEGREE:
        return "persistent"
    return "beamer" if symmetric else "merge-path"
