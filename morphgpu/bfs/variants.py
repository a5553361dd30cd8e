"""The BFS variants by name: which paper each comes from, whether it exists, and `auto`.

A variant is a policy over the shared traversal operators (include/morphgpu/traversal):
which expand (load balancing), which contract (duplicate culling), which queue generation,
which direction rule, and whether the level loop lives in one persistent kernel. Names
from the issue that are not implemented yet stay in the table with ``implemented=False``,
so asking for one is a clear error rather than a silent substitute (none are left).

The host-side rules of the policies live here as pure functions, mirrored by the kernels
and tested on the CPU: the merge-path hybrid's expand-factor switch
(:func:`hybrid_coupling`), the frontier classes by out-degree (:func:`frontier_class`,
:func:`check_class_bounds`) and the names of Merrill's culling options (:func:`cull_mask`).

``auto`` on the GPU, from graph statistics (no traversal needed):

- average degree <= 8 and maximum degree <= 64 (meshes, grids, road networks: deep, narrow
  frontiers) -> ``persistent``, ``tiled`` or ``overlay``, chosen per graph by timing
  (bfs/gpu/deep_choice.py): the graph's deep searches run ``persistent`` (the level loop in
  one kernel, small frontiers inside one block without grid barriers, wide ones across the
  grid) until their GPU time reaches the expected cost of measuring (the build time of the
  locality-relabelled copy); that search builds the tiled copy beside the relabelled one and
  the overlay (its own tiled copy and in-tile distances), times searches of persistent, of
  tiled at each of its horizons (deep_choice.HORIZONS) and of overlay at each of its deltas
  from its own source and keeps the fastest; later searches run that one untimed. (H200,
  session 39 run 6: overlay 1.6-3.3x tiled on Delaunay graphs, road networks and grids of
  0.3-25M vertices, 0.45-2.5 us per level.) Measured, not read off a statistic: on an H100
  tiled ran 0.93x persistent on road COL and 1.07-1.85x on grids and Delaunay graphs
  (session 14), and no statistic known before a search separates them without a cut-off
  fitted to those graphs. (A DynamicGraph's deep searches stay ``persistent``: tiled needs a
  CSR.) Low degrees do not make a graph deep: where the graph's first search had fewer than
  ALPHA levels, wider on average than persistent's one-block mode takes (a random graph of
  mean degree 8), its later auto searches run ``beamer`` (deep_choice.note_shape; 2.4x on
  G(2^23, 2^25), H200).
- otherwise -> ``beamer``: the direction-optimising BFS (Enterprise's status-array queues,
  bottom-up levels, the level loop in one persistent kernel) with Beamer's alpha/beta rule,
  which returns to top-down for the tail levels; on Kronecker scale 21 it measured 80 GTEPS
  against 45 for Enterprise's one-way gamma switch (H200). Directed graphs too: the
  bottom-up levels read the reverse graph, which the workspace builds once per graph (and
  drops again where it equals the graph: a symmetric graph not flagged so). Picking by the
  graph's shape rather than by its ``directed`` flag: a Kronecker graph given as a directed
  edge list with both directions ran at 11 GTEPS under the old rule (top-down
  ``merge-path``).

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
# Atos (Chen, Porumbescu, Owens et al., "Atos: a task-parallel GPU scheduler for graph
# analytics"): no file of it in ../shared/papers yet, so the name is descriptive.
_ATOS = "atos-async-gpu"
# No paper of its own: Atos-style label correction between tiles, level-synchronous BFS
# inside a tile in shared memory (the locality-relabelled copy makes tiles compact).
_TILED = "tile-local-label-correcting"
# Delling, Goldberg, Pajor, Werneck, "Customizable route planning" (SEA 2011): the overlay
# of cell boundaries with in-cell distances; no file of it in ../shared/papers.
_CRP = "customizable-route-planning-overlay"

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in [
        Variant("persistent", _DP, "one persistent kernel over mg::grid_sync; frontiers "
                "under a block's reach run in one block with no grid barrier", True, "top-down"),
        Variant("expand-contract", _MERRILL, "one fused kernel per level: scan+warp+CTA "
                "gathering, label check + atomicCAS claim, warp prefix-sum enqueue; "
                "option cull= adds the best-effort bitmask and warp/history culling "
                "(see CULL_OPTIONS)", True, "top-down"),
        Variant("two-phase", _MERRILL, "expand kernel writes every neighbour to an edge "
                "queue, contract kernel claims labels (option cull= as expand-contract)",
                True, "top-down"),
        Variant("direction-optimizing", _ENT, "Enterprise: status-array queue generation, "
                "bottom-up with a shared-memory hub cache, switch at gamma = 30 % hubs",
                True, "auto"),
        Variant("beamer", _ENT, "direction-optimizing with Beamer's alpha/beta rule",
                True, "auto"),
        Variant("top-down", "", "CPU: top-down every level", True, "top-down"),
        Variant("bottom-up", "", "CPU: bottom-up every level", True, "bottom-up"),
        Variant("contract-expand", _MERRILL, "edge queue of (vertex, discoverer) pairs: "
                "claim then expand the winners' rows, in one kernel (option cull= as "
                "expand-contract)", True, "top-down"),
        Variant("hybrid", _MERRILL, "contract-expand for small levels, two-phase above "
                "2^16 queued edges (option cull= as expand-contract)", True, "top-down"),
        Variant("merge-path", _LB, "edge-balanced expand: frontier degree scan, one edge "
                "per thread found by binary search (merge-path partition)", True,
                "top-down"),
        Variant("merge-path-separate", _LB, "§4.1 perfect balance + global data movement: "
                "redistribution kernel writes each edge's position and source, gathering "
                "kernel reads them back (device degree scan, no host read per level)", True,
                "top-down"),
        Variant("merge-path-ib", _LB, "§4.2 imbalanced redistribution + balanced "
                "gathering: one fused kernel over tiles of 1024 edges (vertical merge-path "
                "partition)", True, "top-down"),
        Variant("merge-path-bi", _LB, "§4.3 balanced redistribution + imbalanced "
                "gathering: one fused kernel over tiles of 1024 merge steps (rows + edges, "
                "diagonal partition)", True, "top-down"),
        Variant("merge-path-hybrid", _LB, "§4.4: per level, merge-path-bi when the "
                "expand factor (frontier edges / frontier vertices) exceeds f0 = 10, else "
                "merge-path-ib; decided on the device", True, "top-down"),
        Variant("frontier-classes-deferred", _DP, "the seed's deferred classification: "
                "a level's discoveries go to one queue, split into the four class queues by "
                "a separate launch (five queues), then served as frontier-classes", True,
                "top-down"),
        Variant("dynamic-parallelism", _DP, "frontier classes with the level loop on the "
                "device: a one-thread control kernel launches each level's class kernels, "
                "sized to their queues, and its successor (CUDA dynamic parallelism, tail "
                "launches); the host reads one word per 16 levels", True, "top-down"),
        Variant("frontier-classes", _ENT, "Enterprise §4.2 / Schmidt et al. §III-B: "
                "small/medium/large/huge queues by out-degree (< 32, < 256, < 65536, "
                "more) served by a thread/warp/block/the grid, vertices classified by "
                "their discoverer, block prefix-sum enqueue per class", True, "top-down"),
        Variant("async", _ATOS, "asynchronous label-correcting BFS in one persistent "
                "launch, no barrier per level: warps take batches of (vertex, distance) "
                "items from a shared-memory ring, else a global queue, relax with "
                "atomicMin, keep their pushes local and share with idle warps; for "
                "high-diameter graphs (bfs/gpu/asynchronous.py)", True, "top-down"),
        Variant("tiled", _TILED, "tile-local label-correcting BFS in one persistent "
                "launch over tiles of the locality-relabelled copy (contiguous id ranges): "
                "active tiles wait in a ring, a block takes the next as soon as its visit "
                "ends, runs the tile's levels in shared memory and relaxes the edges "
                "leaving it with atomicMin, activating their tiles at once; for "
                "high-diameter graphs (bfs/gpu/tiled.py)", True, "top-down"),
        Variant("overlay", _CRP, "label-correcting rounds over the tiled copy's tile "
                "boundaries: per graph the in-tile distances between every pair of a tile's "
                "boundary vertices, per search a min-plus step crosses a tile, then each "
                "reached tile's labels from one BFS inside it; for high-diameter graphs "
                "(bfs/gpu/overlay.py)", True, "top-down"),
    ]
}

# Beamer's direction rule: bottom-up once the frontier's edges pass the unexplored edges /
# ALPHA, top-down again once the shrinking frontier is below n / BETA (Beamer's values).
# Both direction-optimizing searches use ALPHA: one GPU (gpu/direction.py, whose BETA is its
# own, measured) and the parts (partitioned.Direction).
ALPHA, BETA = 14.0, 24.0

# Merrill et al.'s contract options (option ``cull`` of all four of their variants), in
# front of the exact label check + atomicCAS claim, so each only removes work:
# - "bitmask": a visited bit per vertex, read before the 4-byte label and set without
#   atomics by whoever claims or finds a vertex visited; a lost update only makes it miss.
# - "warp": lanes of a warp holding the same neighbour at once keep one
#   (__match_any_sync: Merrill's per-warp hash, exact).
# - "history": a per-block shared table of recently inspected ids; a hit is dropped.
# Already in expand-contract without options: scan+warp+CTA gathering (traversal/expand.cuh),
# the label check, and the prefix-sum enqueue (per warp: ballot ranks, one atomic per warp).
CULL_OPTIONS = {"bitmask": 1, "warp": 2, "history": 4}  # the kernels' CULL_* bits


def cull_mask(cull: str | tuple[str, ...] | list[str] | None) -> int:
    """The kernels' culling bits for a name or names of :data:`CULL_OPTIONS` ("all": every one)."""
    if cull is None:
        return 0
    items = [cull] if isinstance(cull, str) else list(cull)
    if items == ["all"]:
        items = list(CULL_OPTIONS)
    mask = 0
    for item in items:
        if item not in CULL_OPTIONS:
            raise ValueError(f"cull option must be one of {sorted(CULL_OPTIONS)} or 'all', "
                             f"got {item!r}")
        mask |= CULL_OPTIONS[item]
    return mask


# The load-balanced BFS paper's couplings by variant name (the kernels' coupling codes).
COUPLINGS = {"merge-path-separate": 0, "merge-path-ib": 1, "merge-path-bi": 2,
             "merge-path-hybrid": 3}
EXPAND_FACTOR_F0 = 10.0  # the paper's threshold for the hybrid (§5.1)


def hybrid_coupling(frontier_vertices: int, frontier_edges: int,
                    f0: float = EXPAND_FACTOR_F0) -> str:
    """The coupling merge-path-hybrid runs for a level (the device makes the same test):
    balanced redistribution ("merge-path-bi") when the expand factor edges / vertices
    exceeds f0, because the gathering imbalance is then small; otherwise balanced
    gathering ("merge-path-ib"), since gathering dominates."""
    if frontier_edges > f0 * frontier_vertices:
        return "merge-path-bi"
    return "merge-path-ib"


# Frontier classes: the first out-degree served by a warp, a block and the whole grid
# (Enterprise §4.2: SmallQueue < 32 edges, MiddleQueue < 256, LargeQueue < 65,536).
CLASS_BOUNDS = (32, 256, 65536)
CLASS_NAMES = ("thread", "warp", "block", "grid")
N_CLASSES = len(CLASS_NAMES)
THREAD_ROW_CAP = 32  # classes.cu: a thread's whole row is one buffered run
WARP_ROW_CAP = 256  # classes.cu: 8 edges per lane


def check_class_bounds(bounds: tuple[int, int, int]) -> tuple[int, int, int]:
    """Bounds the kernel can serve: 1 <= warp <= 32, warp <= block <= 256, block <= grid."""
    if len(bounds) != 3:
        raise ValueError(f"class bounds are (warp, block, grid) degrees, got {bounds!r}")
    warp, block, grid = (int(b) for b in bounds)
    if not (1 <= warp <= THREAD_ROW_CAP and warp <= block <= WARP_ROW_CAP and block <= grid):
        raise ValueError(f"class bounds need 1 <= warp <= {THREAD_ROW_CAP}, warp <= block <= "
                         f"{WARP_ROW_CAP}, block <= grid; got {bounds!r}")
    return warp, block, grid


def frontier_class(degrees: np.ndarray | int,
                   bounds: tuple[int, int, int] = CLASS_BOUNDS) -> np.ndarray:
    """Class of each out-degree: 0 thread, 1 warp, 2 block, 3 grid (classes.cuh's rule)."""
    warp, block, grid = check_class_bounds(bounds)
    return np.searchsorted(np.array([warp, block, grid]), np.asarray(degrees), side="right")


def names(*, implemented_only: bool = True) -> list[str]:
    return [k for k, v in VARIANTS.items() if v.implemented or not implemented_only]


def check(variant: str) -> Variant:
    """The variant named ``variant``; ValueError for unknown or unimplemented names."""
    if variant == "auto":
        return Variant("auto", "", "chosen from graph statistics (deep graphs: persistent "
                       "or tiled, by timing once searches cost as much)", True, "auto")
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


def auto_dynamic(mean_degree: float, max_degree: int, symmetric: bool) -> str:
    """The GPU variant ``auto`` picks on a DynamicGraph: ``persistent`` on deep, narrow
    graphs as on CSR; else the direction-optimising search where in-edges are the
    out-edges (undirected), or the frontier classes (a directed dynamic graph keeps no
    in-edges, and the classes need no scan of all labels per level)."""
    if mean_degree <= DEEP_MEAN_DEGREE and max_degree <= DEEP_MAX_DEGREE:
        return "persistent"
    return "beamer" if symmetric else "frontier-classes"


def auto_gpu_from_stats(mean_degree: float, max_degree: int) -> str:
    """The GPU variant family ``auto`` picks from the mean and largest out-degree (module
    doc): "persistent" stands for the deep search, which on a CSR graph is persistent,
    or tiled by deep_choice.py's timing."""
    if mean_degree <= DEEP_MEAN_DEGREE and max_degree <= DEEP_MAX_DEGREE:
        return "persistent"
    return "beamer"
