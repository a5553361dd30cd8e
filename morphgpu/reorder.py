"""Locality orders for vertices: BFS / reverse Cuthill-McKee, and Morton (Z-order) for points.

Convention (the same as :meth:`CSRGraph.permuted`): a permutation ``perm`` lists OLD vertex
ids in NEW order, i.e. new vertex ``i`` is old vertex ``perm[i]``. Relabelling a graph so
that neighbours get nearby ids makes the GPU's gathers over ``indices`` hit the same cache
lines; ``apply(graph, bfs_order(graph))`` is the usual use.

The BFS order is computed with array operations only (level by level), so it runs on
NumPy and on CuPy and gives the same permutation on both; only the component labelling
runs on the host (SciPy).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from . import backend, device_reduce
from .csr import CSRGraph, expand_counts
from .unique import run_starts, sorted_unique

__all__ = ["bfs_order", "degree_order", "landmark_order", "morton_order", "apply",
           "rows_by_degree", "mean_edge_span", "line_locality", "wavefront_locality"]

_MORTON_BITS = 31  # per axis: two axes interleave into a 62-bit code


def _undirected_structure(graph: CSRGraph) -> CSRGraph:
    """Both directions of every edge, one entry per pair, no self-loops, no weights."""
    return CSRGraph.from_edges(
        graph.edge_sources(), graph.indices, n_vertices=graph.n_vertices,
        symmetrize=True, drop_self_loops=True, merge_duplicates="first",
    )


def _component_roots(structure: CSRGraph, source: int) -> tuple[Any, Any]:
    """(roots in visiting order, rank of each vertex's component in that order), host-side.

    The source's component comes first, then the others by their lowest vertex id, each
    rooted at that lowest id.
    """
    from scipy.sparse.csgraph import connected_components  # noqa: PLC0415

    host = structure.to("cpu")
    n_components, labels = connected_components(host.to_scipy(), directed=False)
    lowest = np.full(n_components, host.n_vertices, dtype=np.int64)
    np.minimum.at(lowest, labels, np.arange(host.n_vertices, dtype=np.int64))
    component_order = np.argsort(lowest, kind="stable")
    source_component = labels[source]
    component_order = np.concatenate(
        [[source_component], component_order[component_order != source_component]]
    )
    roots = lowest[component_order]
    roots[0] = source
    rank_of_component = np.empty(n_components, dtype=np.int64)
    rank_of_component[component_order] = np.arange(n_components, dtype=np.int64)
    return roots, rank_of_component[labels]


def _cuthill_mckee_levels(xp: Any, structure: CSRGraph, roots: Any) -> Any:
    """All vertices in BFS discovery order from every root at once.

    Within a level, children follow their earliest-placed parent, ties by vertex id
    (Cuthill-McKee without the degree tie-break); every sort key is unique, so NumPy and
    CuPy agree exactly.
    """
    n = structure.n_vertices
    indptr = structure.indptr.astype(xp.int64)
    indices = structure.indices.astype(xp.int64)
    visited = xp.zeros(n, dtype=bool)
    frontier = xp.asarray(roots, dtype=xp.int64)
    visited[frontier] = True
    levels = [frontier]
    while frontier.size:
        counts = indptr[frontier + 1] - indptr[frontier]
        owner, rank = expand_counts(xp, counts)
        if owner.size == 0:
            break
        child = indices[indptr[frontier][owner] + rank]
        fresh = ~visited[child]
        owner, child = owner[fresh], child[fresh]
        if child.size == 0:
            break
        width = frontier.size
        # earliest parent per child: sort by (child, owner), keep each child's first
        by_child = xp.argsort(child * width + owner)
        child, owner = child[by_child], owner[by_child]
        first = run_starts(child)
        child, owner = child[first], owner[first]
        frontier = child[xp.argsort(owner * n + child)]
        visited[frontier] = True
        levels.append(frontier)
    return xp.concatenate(levels)


def bfs_order(graph: Any, source: int | None = None, *, method: str = "bfs") -> Any:
    """A locality order of the vertices (old ids in new order), on the graph's side.

    ``method="bfs"``: breadth-first over the undirected view from ``source`` (default 0),
    children ordered by their parent's position (Cuthill-McKee order); every other
    component follows, each from its lowest vertex id. ``method="rcm"``: SciPy's reverse
    Cuthill-McKee (computed on the host; ``source`` is ignored).
    """
    g = CSRGraph.coerce(graph)
    n = g.n_vertices
    xp = g.xp
    if method not in ("bfs", "rcm"):
        raise ValueError(f"method must be 'bfs' or 'rcm', got {method!r}")
    if source is None:
        source = 0
    if not isinstance(source, (int, np.integer)) or not (0 <= source < max(n, 1)):
        raise ValueError(f"source must be a vertex id in [0, {n}), got {source!r}")
    if n == 0:
        return xp.zeros(0, dtype=xp.int64)
    structure = _undirected_structure(g)
    if method == "rcm":
        from scipy.sparse.csgraph import reverse_cuthill_mckee  # noqa: PLC0415

        perm = reverse_cuthill_mckee(structure.to("cpu").to_scipy(), symmetric_mode=True)
        return backend.to_side(perm.astype(np.int64), g.side)  # type: ignore[arg-type]
    roots, component_rank = _component_roots(structure, int(source))
    order = _cuthill_mckee_levels(xp, structure, roots)
    # levels interleave components; put each component's vertices together, in order
    rank = xp.asarray(component_rank)[order]
    return order[xp.argsort(rank * n + xp.arange(n, dtype=xp.int64))]


def degree_order(graph: Any) -> Any:
    """Vertices by non-increasing out-degree, ties by id (old ids in new order), on the
    graph's side. On a power-law graph the hubs, which most searches and scans touch,
    then share a few cache lines of every per-vertex array, and consecutive vertices have
    rows of similar length."""
    g = CSRGraph.coerce(graph)
    xp = g.xp
    n = g.n_vertices
    if n == 0:
        return xp.zeros(0, dtype=xp.int64)
    degrees = g.degrees().astype(xp.int64)
    # One integer key, so NumPy and CuPy give the same order: degree descending, id ascending.
    return xp.argsort((int(degrees.max()) - degrees) * n + xp.arange(n, dtype=xp.int64))


def rows_by_degree(graph: Any, degrees: Any = None) -> CSRGraph:
    """The graph with each row's neighbours by non-increasing ``degrees`` (default: the
    graph's out-degrees), ties in the row's own order; the same ids and ``indptr``, weights
    moved with their entries, on the graph's side.

    A bottom-up BFS step scans a vertex's in-neighbours for one on the frontier and stops
    at the first; the neighbours of high degree are the likeliest to be there. Relabelling
    by :func:`degree_order` sorts rows so too, but also renumbers every vertex, which a
    search must then map back."""
    g = CSRGraph.coerce(graph)
    xp = g.xp
    n, m = g.n_vertices, g.n_edges
    key_degrees = g.degrees() if degrees is None else xp.asarray(degrees)
    if key_degrees.shape != (n,):
        raise ValueError(f"degrees must hold one value per vertex ({n}), got shape "
                         f"{key_degrees.shape}")
    if m == 0:
        return CSRGraph(g.indptr, g.indices.copy(), None if g.weights is None else g.weights.copy(),
                        n, g.directed)
    key_degrees = key_degrees.astype(xp.int64)
    top = int(key_degrees.max())
    span = top - int(key_degrees.min()) + 1  # ranks run over [0, span)
    rank = top - key_degrees[g.indices.astype(xp.int64)]  # 0 for the largest degree
    rows = g.edge_sources().astype(xp.int64)
    # Both sorts are stable (NumPy's "stable", CuPy's always), so ties keep the row's order.
    if n * span < 2**62:
        order = xp.argsort(rows * span + rank, kind="stable")
    else:  # one key would overflow: by rank, then by row
        order = xp.argsort(rank, kind="stable")
        order = order[xp.argsort(rows[order], kind="stable")]
    return CSRGraph(g.indptr, g.indices[order], None if g.weights is None else g.weights[order],
                    n, g.directed)


def _spread_bits(xp: Any, v: Any) -> Any:
    """Insert a zero bit above each of the low 32 bits of ``v`` (uint64)."""
    masks = (
        (16, 0x0000FFFF0000FFFF),
        (8, 0x00FF00FF00FF00FF),
        (4, 0x0F0F0F0F0F0F0F0F),
        (2, 0x3333333333333333),
        (1, 0x5555555555555555),
    )
    for shift, mask in masks:
        v = (v | (v << xp.uint64(shift))) & xp.uint64(mask)
    return v


def _quantise(xp: Any, values: Any, name: str) -> Any:
    # device_reduce: CuPy's all/min/max compile per array size (issue 19)
    if not device_reduce.all_true(xp.isfinite(values)):
        raise ValueError(f"morton_order: {name} holds NaN or infinite coordinates")
    lo, hi = device_reduce.min_max(values)
    cells = (1 << _MORTON_BITS) - 1
    if hi <= lo:
        return xp.zeros(values.size, dtype=xp.uint64)
    scaled = (values - lo) * (cells / (hi - lo))
    return xp.clip(scaled, 0, cells).astype(xp.uint64)


def morton_order(x: Any, y: Any) -> Any:
    """Z-order of 2-D points (each axis quantised to 2**31 cells over its range).

    Returns old point ids in new order, on the inputs' side; points in one cell keep their
    input order.
    """
    side = backend.side_of(x)
    xp = backend.xp_for(side)
    x = xp.asarray(backend.to_side(x, side), dtype=xp.float64)
    y = xp.asarray(backend.to_side(y, side), dtype=xp.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"morton_order: x and y must be 1-D of equal length, got {x.shape} and {y.shape}"
        )
    if x.size == 0:
        return xp.zeros(0, dtype=xp.int64)
    code = _spread_bits(xp, _quantise(xp, x, "x")) | (
        _spread_bits(xp, _quantise(xp, y, "y")) << xp.uint64(1)
    )
    if xp is np:
        return np.argsort(code, kind="stable").astype(np.int64)
    return xp.argsort(code).astype(xp.int64)  # CuPy's argsort is a stable radix sort


def landmark_order(graph: Any, distances: Callable[[int], Any],
                   fields: dict[str, Any] | None = None) -> Any:
    """A 2-D locality order from graph distances alone (old ids in new order, on the
    graph's side): vertices by the Z-order of (distance to landmark A, distance to landmark
    C), where A is the vertex farthest from a vertex of largest degree, B the one farthest
    from A, and C the one farthest from both; vertices A cannot reach follow, in id order.

    On graphs that lie close to a plane (road networks, meshes, grids, Delaunay graphs)
    two distances to landmarks far apart in different directions act as coordinates, so
    vertices with nearby codes are near each other in the graph, whatever their input ids:
    a wavefront of a later search then touches few cache lines of each per-vertex array.
    (A and B alone do not do: on a grid with A and B at opposite corners, d_A + d_B is the
    same for every vertex.) ``distances(source)`` returns int32 hop counts, -1 unreached,
    on the graph's side (a BFS); it is called four times. ``fields``, if given, receives
    the distances to A and C as "a" and "c".
    """
    g = CSRGraph.coerce(graph)
    xp = g.xp
    n = g.n_vertices
    if n == 0:
        return xp.zeros(0, dtype=xp.int64)
    start = int(xp.argmax(g.degrees()))
    d_a = distances(int(xp.argmax(distances(start))))
    d_b = distances(int(xp.argmax(d_a)))
    reached = d_a >= 0
    d_c = distances(int(xp.argmax(xp.where(reached, xp.minimum(d_a, d_b), -1))))
    if fields is not None:
        fields.update(a=d_a, c=d_c)
    # d_c >= 0 wherever d_a is (one component); the key is guarded against -1 all the same
    x = xp.maximum(d_a, 0).astype(xp.uint64)
    y = xp.maximum(d_c, 0).astype(xp.uint64)
    code = _spread_bits(xp, x) | (_spread_bits(xp, y) << xp.uint64(1))
    code = xp.where(reached, code, xp.uint64(1 << 63))  # unreached last, ties by id
    if xp is np:
        return np.argsort(code, kind="stable").astype(np.int64)
    return xp.argsort(code).astype(xp.int64)  # CuPy's argsort is a stable radix sort


def line_locality(graph: Any, line: int = 32) -> float:
    """Fraction of stored edges whose two ends lie in one aligned run of ``line`` ids (one
    cache line of a per-vertex array of 4-byte labels when ``line`` is 32)."""
    g = CSRGraph.coerce(graph)
    if g.n_edges == 0:
        return 1.0
    xp = g.xp
    src = g.edge_sources().astype(xp.int64) // line
    return float((src == g.indices.astype(xp.int64) // line).mean())


def wavefront_locality(dist: Any, ids: Any = None, line: int = 32) -> float:
    """Vertices per (level, aligned run of ``line`` ids) of one search: ``dist`` its labels
    (-1 unreached), ``ids`` each vertex's id in the numbering judged (None: as indexed).
    Every level of a search touches the labels and rows of its frontier: this is how many
    of its vertices one cache line serves on average (1 where ids are scattered)."""
    xp = backend.array_module(dist)
    reached = dist >= 0
    count = int(reached.sum())
    if count == 0:
        return 1.0
    if ids is None:
        ids = xp.arange(dist.size, dtype=xp.int64)
    runs = dist.size // line + 1
    keys = dist[reached].astype(xp.int64) * runs + ids[reached].astype(xp.int64) // line
    return count / int(sorted_unique(keys).size)


def _check_permutation(xp: Any, perm: Any, n: int) -> Any:
    if perm.ndim != 1 or perm.size != n:
        raise ValueError(f"perm must be a 1-D array of {n} vertex ids, got shape {perm.shape}")
    if perm.dtype.kind not in "iu":
        raise ValueError(f"perm must hold integers, got dtype {perm.dtype}")
    if n == 0:
        return perm.astype(xp.int64)
    perm = perm.astype(xp.int64)
    if int(perm.min()) < 0 or int(perm.max()) >= n:
        raise ValueError(f"perm holds ids outside [0, {n})")
    seen = xp.bincount(perm, minlength=n)
    if not bool((seen == 1).all()):
        missing = int(xp.argmax(seen == 0))
        raise ValueError(f"perm is not a permutation: vertex {missing} is missing")
    return perm


def apply(graph: Any, perm: Any) -> CSRGraph:
    """The graph relabelled by ``perm`` (new vertex i is old vertex perm[i])."""
    g = CSRGraph.coerce(graph)
    xp = g.xp
    perm = _check_permutation(xp, xp.asarray(backend.to_side(perm, g.side)), g.n_vertices)
    return g.permuted(perm)


def mean_edge_span(graph: Any) -> float:
    """Mean ``|u - v|`` over the edges: small when neighbours have nearby ids."""
    g = CSRGraph.coerce(graph)
    if g.n_edges == 0:
        return 0.0
    xp = g.xp
    span = xp.abs(g.edge_sources().astype(xp.int64) - g.indices.astype(xp.int64))
    return float(span.mean())


# cell_layout: Lloyd-relaxed BFS cells (session 39).
RELAX_ROUNDS = 6  # Lloyd rounds: seeds move to their cell's deepest vertex
RELAX_SPLIT = 1.4  # a cell past this many times ``cell`` gets a second seed next round
RELAX_DROP = 0.3  # a cell under this many times ``cell`` loses its seed next round


GROW_FILE = "kernels/grow.cu"


@functools.lru_cache(maxsize=8)
def _grow_grid(device_id: int, vid: str, eid: str) -> Any:
    from . import barrier, kernels  # noqa: PLC0415  (GPU-only: loaded at the first use)

    del device_id  # a cache key: the kernel is loaded on the current device
    return barrier.persistent_kernel(GROW_FILE, "grow_cells", mode="cooperative",
                                     defines=kernels.index_defines(np.dtype(vid),
                                                                   np.dtype(eid)))


_LOW32 = 0xFFFFFFFF


def _tie_keys(xp: Any, labels: Any, parents: Any) -> Any:
    """Keys of labels (below 2^32) handed on by ``parents``, for _grow's ties: the least
    key comes from the parent of largest id (its low 32 bits) and unpacks to its label."""
    low = xp.asarray(labels).astype(xp.uint64) & xp.uint64(_LOW32)
    high = xp.uint64(_LOW32) - (xp.asarray(parents).astype(xp.uint64) & xp.uint64(_LOW32))
    return (high << xp.uint64(32)) | low


def _grow(g: CSRGraph, indptr: Any, sources: Any, labels: Any,
          confine: Any = None) -> tuple[Any, Any]:
    """Multi-source BFS from distinct ``sources``: (each vertex's label of a nearest
    source, -1 unreached; its hops). ``indptr``: the NumPy path's int64 row offsets (the
    GPU reads the graph's own; None there). ``labels``: one per source or one for all, each
    in [0, 2^32). ``confine``: an int64 group per vertex; the search then follows only edges
    inside a group. Of the labels its neighbours one level closer hold, a vertex takes the
    one of the neighbour of largest id (:func:`_tie_keys`): the same answer on the CPU and
    the GPU whatever the order of work. Why that rule: in a locality order it splits each
    band of ties between two cells along a line; a rule by label (the lowest label wins)
    hands whole bands to one cell, and one at random per vertex leaves ragged borders
    (Delaunay 1M, tiles of 1024: 110 border vertices per tile against 113 and 120). On the
    GPU one launch of kernels/grow.cu.
    """
    xp = g.xp
    n = g.n_vertices
    none = xp.uint64(0xFFFFFFFFFFFFFFFF)
    key = xp.full(n, none, dtype=xp.uint64)
    hops = xp.full(n, -1, dtype=xp.int64)
    key[sources] = xp.asarray(labels).astype(xp.uint64) & xp.uint64(_LOW32)
    hops[sources] = 0
    if xp is not np:
        backend.require_gpu_bytes(16 * n + 64, "cell layout: BFS queues")
        queues = xp.empty((2, max(n, 1)), dtype=xp.int64)
        queues[0, :sources.size] = sources
        counts = xp.zeros(3, dtype=xp.uint64)
        counts[0] = sources.size
        grid = _grow_grid(backend.current_device_id(), str(g.indices.dtype),
                          str(g.indptr.dtype))
        grid.launch(g.indptr, g.indices, np.uint64(0) if confine is None else confine,
                    key, hops, queues[0], queues[1], counts)
        grid.check()
    else:
        frontier = sources
        level = 0
        while frontier.size:
            level += 1
            row, rank = expand_counts(xp, indptr[frontier + 1] - indptr[frontier])
            if row.size == 0:
                break
            nb = g.indices[indptr[frontier][row] + rank].astype(xp.int64)
            keep = hops[nb] < 0
            if confine is not None:
                keep &= confine[nb] == confine[frontier][row]
            nb, row = nb[keep], row[keep]
            np.minimum.at(key, nb, _tie_keys(xp, key[frontier][row], frontier[row]))
            hops[nb] = level
            frontier = sorted_unique(nb)
    owner = (key & xp.uint64(_LOW32)).astype(xp.int64)
    owner[key == none] = -1
    return owner, hops


def _top_of_each(xp: Any, group: Any, key: Any, members: Any) -> Any:
    """For each group present among ``members``: its member of largest ``key`` (ties: the
    smallest member id)."""
    if members.size == 0:
        return members
    order = xp.lexsort(xp.stack([members, -key, group]))
    return members[order][run_starts(group[order])]


def cell_layout(graph: Any, cell: int, tile: int,
                fields: dict[str, Any] | None = None) -> tuple[Any, int]:
    """Ids for a tiled search (bfs/gpu/tiled.py): compact connected cells of about
    ``cell`` vertices, each at most ``tile``, packed whole into aligned ranges of ``tile``
    ids in the order of their smallest vertex id.

    Returns (new id of each vertex (int64, on the graph's side), the padded id count); ids
    past a tile's last cell are left unused. The cells are BFS (Voronoi) cells relaxed by
    Lloyd rounds in the hop metric: seeds start at every ``cell``-th id; each round grows
    the cells from the seeds (one multi-source BFS), then moves each seed to its cell's
    deepest vertex (the farthest, inside the cell, from the cell's border), adds a seed at
    the vertex farthest from the seed of a cell past RELAX_SPLIT x ``cell`` and drops the
    seed of a cell under RELAX_DROP x ``cell``. A cell still past ``tile`` is then split
    into the BFS cells of two far ends inside it, until none is. Cells follow in the order
    of their smallest vertex id, a cell joining the previous one's tile where it fits and
    an edge joins the two; vertices in a cell follow by hops from its seed (or end);
    vertices no seed reaches follow the last tile in id order. ``fields``, if given,
    receives "cell" (-1 unreached) and "hops".

    Why. Contiguous ranges of a Z-order are no cells: they hold several disconnected
    pieces and thin slivers (vertices at equal distances from the landmarks on both sides
    of the line through them share a code). Seeds spread by id rank follow the density of
    the given order, not the graph's, so plain BFS cells range from a few vertices to ten
    times ``cell`` (the layout before session 39: cells of T/4 from seeds at every
    (T/4)-th id, packed four to a tile in seed order, cells past T cut in BFS order into
    shells whose vertices are nearly all on the tile's border). Relaxed cells are round
    and near ``cell`` in size, and a tile's border (the vertices with an edge to another
    tile) is about half as large: Delaunay graphs of random points 109 against 207
    vertices per 1024-vertex tile (99th percentile 140 against 300, the largest 330-380
    against 365-706); road networks and grids with deleted edges 35-45% fewer. The overlay
    BFS's work per tile visit grows with the square of the border and its rounds wait for
    the largest (bfs/gpu/overlay.py).
    """
    g = CSRGraph.coerce(graph)
    xp = g.xp
    n = g.n_vertices
    cell, tile = int(cell), int(tile)
    if not 1 <= cell <= tile:
        raise ValueError(f"cell must lie in [1, tile={tile}], got {cell}")
    if n == 0:
        return xp.zeros(0, dtype=xp.int64), 0
    indptr = g.indptr.astype(np.int64) if xp is np else None  # _grow's NumPy path only
    src, dst = g.edge_sources().astype(xp.int64), g.indices.astype(xp.int64)
    seeds = xp.arange(0, n, cell, dtype=xp.int64)
    for round_no in range(RELAX_ROUNDS + 1):
        owner, hops = _grow(g, indptr, seeds, xp.arange(seeds.size, dtype=xp.int64))
        if round_no == RELAX_ROUNDS:
            break
        reached = xp.flatnonzero(owner >= 0)
        size = xp.bincount(owner[reached], minlength=seeds.size)
        border = sorted_unique(src[owner[src] != owner[dst]])
        _, depth = _grow(g, indptr, border, 0, confine=owner)
        deepest = _top_of_each(xp, owner[reached], depth[reached], reached)
        kept = deepest[size[owner[deepest]] >= RELAX_DROP * cell]
        large = size[owner[reached]] > RELAX_SPLIT * cell
        members = reached[large]
        far = _top_of_each(xp, owner[members], hops[members], members)
        seeds = sorted_unique(xp.concatenate([kept, far]))
    n_cells = int(seeds.size)
    reached = xp.flatnonzero(owner >= 0)
    size = xp.bincount(owner[reached], minlength=n_cells)
    halve = size > tile
    while True:  # splits: every cell past a tile in two, until none is
        large = xp.flatnonzero(halve)
        if large.size == 0:
            break
        members = reached[halve[owner[reached]]]
        members = members[xp.lexsort(xp.stack([members, owner[members]]))]  # (cell, id)
        group = owner[members]
        # Two far ends: the vertex farthest from the seed, then the one farthest from it;
        # the cell splits into their two BFS cells inside it (each connected, both smaller).
        end_a = _top_of_each(xp, group, hops[members], members)
        _, from_a = _grow(g, indptr, end_a, 0, confine=owner)
        end_b = _top_of_each(xp, group, from_a[members], members)
        side, from_ends = _grow(g, indptr, xp.concatenate([end_a, end_b]),
                                xp.repeat(xp.asarray([0, 1], dtype=xp.int64), end_a.size),
                                confine=owner)
        # A vertex neither end reaches (a directed graph's cell) goes with the second end;
        # where that leaves one side empty (an end that reaches nothing: then both ends
        # are one vertex), the cell's second half in id order moves instead.
        away = side[members] != 0
        count = xp.bincount(group[away], minlength=n_cells)
        stuck = (count[group] == 0) | (count[group] == size[group])
        starts = xp.searchsorted(group, group, side="left")  # members sort by (cell, id)
        away = xp.where(stuck, xp.arange(members.size, dtype=xp.int64) - starts
                        >= size[group] // 2, away)
        moved = members[away]
        renamed = xp.full(n_cells, -1, dtype=xp.int64)
        renamed[large] = n_cells + xp.arange(large.size, dtype=xp.int64)
        owner[moved] = renamed[owner[moved]]
        hops[members] = xp.maximum(from_ends[members], 0)
        n_cells += int(large.size)
        size = xp.bincount(owner[reached], minlength=n_cells)
        halve = size > tile
    if fields is not None:
        fields.update(cell=owner, hops=hops)
    # Cells in the order of their smallest vertex id; vertices in a cell by hops.
    cell_of = xp.where(owner >= 0, owner, n_cells)  # unreached last
    ids = xp.arange(n, dtype=xp.int64)
    by_cell = xp.lexsort(xp.stack([ids, cell_of]))
    firsts = by_cell[run_starts(cell_of[by_cell])]  # each cell's smallest vertex
    key = xp.where(cell_of[firsts] == n_cells, n, firsts)  # the unreached group last
    rank = xp.zeros(n_cells + 1, dtype=xp.int64)
    rank[cell_of[firsts]] = xp.argsort(xp.argsort(key))
    order = xp.lexsort(xp.stack([ids, hops, rank[cell_of]]))
    sorted_rank = rank[cell_of][order]
    present = sorted_unique(sorted_rank)
    bounds = xp.searchsorted(sorted_rank, present)
    sizes_h = backend.to_host(xp.diff(xp.concatenate(
        [bounds, xp.asarray([n], dtype=xp.int64)]))).astype(np.int64)
    unreached = bool(backend.to_host(cell_of[order][-1:] == n_cells)[0])
    # A cell joins the tile of the cell before it (in rank order) only where an edge joins
    # the two: two cells that do not touch would put both their borders in one tile.
    ranked = rank[cell_of]
    step = ranked[dst] - ranked[src]
    touching = xp.zeros(n_cells + 2, dtype=xp.bool_)
    touching[xp.maximum(ranked[src], ranked[dst])[xp.abs(step) == 1]] = True
    touching_h = backend.to_host(touching)
    # Greedy packing of whole cells into tiles, in order (a host loop over the cells).
    place = np.zeros(sizes_h.size, dtype=np.int64)
    tile_no, fill = 0, 0
    for c in range(sizes_h.size - int(unreached)):
        if fill + sizes_h[c] > tile or (c and not touching_h[c]):
            tile_no, fill = tile_no + 1, 0
        place[c] = tile_no * tile + fill
        fill += int(sizes_h[c])
    if unreached:
        place[-1] = (tile_no + 1) * tile if sizes_h.size > 1 else 0
    place_x = xp.asarray(place) if xp is not np else place
    start_of = xp.searchsorted(present, sorted_rank)
    new_sorted = place_x[start_of] + ids - bounds[start_of]
    new_id = xp.empty(n, dtype=xp.int64)
    new_id[order] = new_sorted
    return new_id, int(new_id.max()) + 1
