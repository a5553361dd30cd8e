"""The ``tiled`` BFS variant (bfs/gpu/tiled.py; kernels/tiled.cu over tile_visit.cuh)
against SciPy's distances
and Graph500's parent check: deep graphs (grids, grids with deleted edges, Delaunay graphs
of random points, a road network), a Kronecker graph (hubs: rows past a tile's edge
capacity), directed and disconnected graphs, one vertex; with tiles small enough that
every search crosses many of them, with the global-row fallback forced, with one block;
and the host-side rules (tile size, shared-memory layout) on the CPU."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

from morphgpu import generators, reorder
from morphgpu.bfs import graph500_check, variants
from morphgpu.bfs.gpu import deep_choice, tiled
from morphgpu.csr import CSRGraph


def scipy_distances(g: CSRGraph, source: int) -> np.ndarray:
    host = g.to("cpu")
    matrix = sp.csr_matrix((np.ones(host.n_edges), host.indices, host.indptr),
                           shape=host.shape)
    d = csgraph.shortest_path(matrix, method="D", unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def check(host: CSRGraph, source: int, dist, parent) -> None:
    d = dist.get()
    assert d.dtype == np.int32
    np.testing.assert_array_equal(d, scipy_distances(host, source))
    if parent is not None:
        graph500_check(host.indptr, host.indices, source, d, parent.get())


def grid_with_deletions(side: int, keep: float, seed: int) -> CSRGraph:
    """A side x side grid with each undirected edge kept with probability ``keep``."""
    rng = np.random.default_rng(seed)
    ids = np.arange(side * side)
    right = ids[ids % side < side - 1]
    down = ids[ids < side * (side - 1)]
    src = np.concatenate([right, down])
    dst = np.concatenate([right + 1, down + side])
    kept = rng.random(src.size) < keep
    return CSRGraph.from_edges(src[kept], dst[kept], n_vertices=side * side, symmetrize=True)


def cases() -> list[tuple[str, CSRGraph, list[int]]]:
    """(label, host graph, sources): sources in different components where there are."""
    rng = np.random.default_rng(13)
    n = 5000
    directed = CSRGraph.from_edges(rng.integers(0, n, 12000), rng.integers(0, n, 12000),
                                   n_vertices=n, symmetrize=False)
    src = np.concatenate([rng.integers(0, 1000, 3000), rng.integers(1000, 2000, 3000)])
    dst = np.concatenate([rng.integers(0, 1000, 3000), rng.integers(1000, 2000, 3000)])
    parts = CSRGraph.from_edges(src, dst, n_vertices=2100, symmetrize=True)
    grid = generators.grid2d(300, 200, device="cpu")
    wide_ids = CSRGraph(grid.indptr.astype(np.int64), grid.indices.astype(np.int64), None,
                        grid.n_vertices, False)
    shuffled = reorder.apply(grid, np.random.default_rng(5).permutation(grid.n_vertices))
    path = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.path_graph(3000)), directed=False)
    deleted = grid_with_deletions(160, 0.7, 3)
    return [
        ("grid 300x200", grid, [0, 299, 30150]),
        ("shuffled grid", shuffled, [0, 41234]),
        ("grid deleted edges", deleted, [0, 12800, 25599]),
        ("delaunay 20k", generators.delaunay_graph(20_000, seed=4, device="cpu"), [0, 9999]),
        ("kronecker 12", generators.kronecker(12, 16, seed=2, device="cpu"), [0, 1, 4000]),
        ("path 3000", path, [0, 1500]),
        ("directed", directed, [0, 17]),
        ("components", parts, [5, 1500, 2050]),
        ("64-bit ids", wide_ids, [7, 59999]),
        ("one vertex", CSRGraph.from_edges(np.array([], dtype=np.int64),
                                           np.array([], dtype=np.int64), n_vertices=1), [0]),
        ("no edges", CSRGraph.from_edges(np.array([], dtype=np.int64),
                                         np.array([], dtype=np.int64), n_vertices=7), [3]),
    ]


def searched_cases(variant: str, options: dict):
    """Every source of every case searched on the GPU by ``variant`` with ``options``
    (parents asked for every other source), each checked against SciPy and Graph500's
    rules; yields (label, GPU graph, distances) after each search."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    for label, host, sources in cases():
        g = host.to("gpu")
        for i, source in enumerate(sources):
            parents = i % 2 == 0
            dist, parent, name = gpu.run(g, source, variant=variant, want_parents=parents,
                                         **options)
            assert name == variant
            assert (parent is None) == (not parents), label
            check(host, source, dist, parent)
            yield label, g, dist


@pytest.mark.gpu
@pytest.mark.parametrize("options", [
    {"relabel": False}, {"tile_shift": 6, "relabel": False}, {}, {"tile_shift": 6},
    {"tile_shift": 6, "edge_cap": 0}, {"tile_shift": 7, "edge_cap": 300},
    {"tile_shift": 6, "blocks": 1}, {"tile_shift": 6, "horizon": 3}, {"horizon": 1},
    {"horizon": 0}, {"tile_shift": 6, "horizon": 0}],
    ids=str)
def test_gpu_tiled(options):
    """Tiles of the given ids (the kernel alone), also of 64 vertices (every search
    crosses many tiles, ring laps); default and 64-vertex tiles of the tiled copy; no edge
    in shared memory (every row a global row); rows past a small capacity; one block
    taking every tile; horizons (labels deferred to later visits), none. Several searches
    per graph on one workspace (its buffers reused)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    for label, g, dist in searched_cases("tiled", options):
        ws = tiled.searched_workspace(gpu.workspace(g))
        assert (ws is gpu.workspace(g)) == (options.get("relabel", True) is False)
        stats = tiled.last_stats(ws)
        # again: the visits after which their tile was visited again
        assert 0 <= stats["again"] < stats["tiles"] <= stats["levels"], (label, stats)
        if options.get("relabel", True) is False:
            # every tile holding a reached vertex was processed at least once
            reached = np.flatnonzero(dist.get() >= 0)
            holding = np.unique(reached // stats["tile_vertices"]).size
            assert stats["tiles"] >= holding, (label, stats)


@pytest.mark.gpu
def test_gpu_map_back_of_a_padded_copy():
    """relabel.back gathers from a copy with more ids than the graph (the tiled copy's
    padded ids): a vertex whose new id is past the graph's vertex count keeps its label
    and parent (a bound of n on new ids read them as unreached: the tiled variant's wrong
    answers of the first H100 run)."""
    import cupy as cp  # noqa: PLC0415

    from morphgpu.bfs.gpu import relabel, workspace  # noqa: PLC0415

    n, n_pad = 6, 20
    g = CSRGraph.from_edges(np.arange(n - 1), np.arange(1, n), n_vertices=n,
                            symmetrize=True).to("gpu")
    ws = workspace(g)
    vid = g.indices.dtype
    inverse = np.array([19, 3, 12, 7, 18, 0], dtype=vid)  # old v -> new id, most past n
    perm = np.zeros(n_pad, dtype=vid)
    perm[inverse] = np.arange(n)
    dist_new = np.full(n_pad, -7, dtype=np.int32)
    dist_new[inverse] = np.arange(n)  # old v at distance v (a path from 0)
    parent_new = np.full(n_pad, 5, dtype=vid)
    parent_new[inverse] = inverse[np.maximum(np.arange(n) - 1, 0)]
    copy = relabel.Copy(None, cp.asarray(perm), cp.asarray(inverse), inverse, 0.0, 0.0, 0.0)
    dist, parent = relabel.back(ws, copy, cp.asarray(dist_new), cp.asarray(parent_new))
    np.testing.assert_array_equal(dist.get(), np.arange(n))
    np.testing.assert_array_equal(parent.get(), np.maximum(np.arange(n) - 1, 0))


@pytest.mark.gpu
def test_gpu_tiled_one_visit_per_tile_on_a_path():
    """A path in id order with 64-vertex tiles, no horizon: from either end, or from the
    first vertex of the middle tile, every tile is visited once and never again (a tile's
    neighbours on the path are done before or after it, never while it runs), entered by
    one remote lowering, and runs 64 local levels (63 hops and the level that lowers
    nothing)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    host = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.path_graph(6400)), directed=False)
    g = host.to("gpu")
    ws = gpu.workspace(g)
    for source in (0, 3200, 6399):
        dist, parent, _ = gpu.run(g, source, variant="tiled", want_parents=True,
                                  relabel=False, tile_shift=6, horizon=0)
        check(host, source, dist, parent)
        stats = tiled.last_stats(ws)
        assert stats["again"] == 0, stats
        assert stats["tiles"] == 100 and stats["remote_lowered"] == 99, stats
        assert stats["levels"] == 6400 and stats["global_rows"] == 0, stats


def hub_graph(leaves: int) -> CSRGraph:
    """Vertex 0 joined to ``leaves`` leaves 1..leaves, each leaf to a vertex of a second
    layer (leaf + leaves), the second layer a path: from the hub, a queue of one with a
    row of ``leaves`` edges, then a queue of ``leaves`` vertices, then a path's."""
    leaf = np.arange(1, leaves + 1)
    second = leaf + leaves
    src = np.concatenate([np.zeros(leaves, dtype=np.int64), leaf, second[:-1]])
    dst = np.concatenate([leaf, second, second[1:]])
    return CSRGraph.from_edges(src, dst, n_vertices=2 * leaves + 1, symmetrize=True)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [
    {"relabel": False}, {"relabel": False, "tile_shift": 6}, {},
    {"relabel": False, "horizon": 0}], ids=str)
def test_gpu_tiled_lane_groups(options):
    """The local levels' lane groups (G lanes per queued vertex, G from the queue's
    length): a queue of one whose row takes many passes of a 32-lane group (the hub's
    3000 edges), a queue longer than the block (a lane each, several vertices per lane),
    and everything between as the path's queues shrink; from the hub, a leaf, the far
    end of the path, with and without parents."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    host = hub_graph(3000)
    g = host.to("gpu")
    for i, source in enumerate((0, 17, host.n_vertices - 1)):
        dist, parent, _ = gpu.run(g, source, variant="tiled", want_parents=i != 1, **options)
        check(host, source, dist, parent)


@pytest.mark.gpu
def test_gpu_tiled_edge_capacity_boundaries():
    """Rows that end exactly at the edge capacity stay in shared memory, the first row
    past it and all after are global rows (the kernel finds them from the row starts and
    the tile's last row end): a path in id order with 64-vertex tiles (128 edges in an
    inner tile) searched exactly under every capacity around a row boundary; no global
    row where every tile fits (128), some where the inner tiles' last row passes (127)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    host = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.path_graph(1000)), directed=False)
    g = host.to("gpu")
    ws = gpu.workspace(g)
    for cap in (0, 1, 2, 3, 63, 64, 65, 126, 127, 128, 129, 300):
        dist, parent, _ = gpu.run(g, 500, variant="tiled", want_parents=True, relabel=False,
                                  tile_shift=6, edge_cap=cap, horizon=0)
        check(host, 500, dist, parent)
        stats = tiled.last_stats(ws)
        if cap >= 128:
            assert stats["global_rows"] == 0, (cap, stats)
        else:
            assert stats["global_rows"] > 0, (cap, stats)


@pytest.mark.gpu
def test_gpu_tiled_buffers_left_in_any_state_and_shift_change():
    """A launch sets every buffer word it reads (done labels, tile states, the ring's
    items and sequence words, the control words): buffers filled with other values (a
    search stopped half way would leave such) give exact answers; searches with other
    tile sizes in between (buffers of their own) leave them alone."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    host = grid_with_deletions(120, 0.8, 9)
    g = host.to("gpu")
    ws = gpu.workspace(g)
    gpu.run(g, 0, variant="tiled", want_parents=False, relabel=False, tile_shift=6)
    st = tiled.state(ws, 6)
    for shift in (6, 6, 8, None):
        st.stamp.fill(0)  # done labels below every label: no vertex would be seeded
        st.mark.fill(2)  # every tile RUNNING: no activation would queue one
        st.lists.fill(-1)
        st.ctrl.fill(2**64 - 1)
        for source in (3, 7000):
            dist, parent, _ = gpu.run(g, source, variant="tiled", want_parents=True,
                                      relabel=False, tile_shift=shift)
            check(host, source, dist, parent)


@pytest.mark.gpu
@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 300), m=st.integers(0, 900), symmetric=st.booleans(),
       shift=st.sampled_from([6, 7, None]), cap=st.sampled_from([0, 5, 64, None]),
       relabel=st.booleans(), horizon=st.sampled_from([0, 1, 4, 48]), data=st.data())
def test_gpu_tiled_random_graphs(n, m, symmetric, shift, cap, relabel, horizon, data):
    from morphgpu.bfs import gpu  # noqa: PLC0415

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    host = CSRGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n_vertices=n,
                               symmetrize=symmetric)
    source = data.draw(st.integers(0, n - 1))
    if cap is not None and shift is None:
        cap = None  # a capacity belongs to a tile size
    dist, parent, _ = gpu.run(host.to("gpu"), source, variant="tiled", want_parents=True,
                              relabel=relabel, tile_shift=shift, edge_cap=cap,
                              horizon=horizon)
    check(host, source, dist, parent)


@pytest.mark.gpu
def test_gpu_tiled_road(shared):
    """A real road network against SciPy from a few roots, at each horizon auto measures."""
    from morphgpu import graph_io  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415

    host = graph_io.read_graph(shared("data", "roads", "NY.gr.xz")).to("cpu")
    g = host.to("gpu")
    for i, source in enumerate((0, host.n_vertices // 2, host.n_vertices - 1)):
        for horizon in deep_choice.HORIZONS:
            dist, parent, _ = gpu.run(g, source, variant="tiled", want_parents=i != 1,
                                      horizon=horizon)
            check(host, source, dist, parent)


@pytest.mark.gpu
def test_gpu_tiled_bad_options():
    from morphgpu.bfs import gpu  # noqa: PLC0415

    g = generators.grid2d(10, 10, device="gpu")
    with pytest.raises(ValueError, match="tile_shift"):
        gpu.run(g, 0, variant="tiled", want_parents=False, tile_shift=3)
    with pytest.raises(ValueError, match="edge_cap"):
        gpu.run(g, 0, variant="tiled", want_parents=False, tile_shift=6, edge_cap=10**6)
    with pytest.raises(ValueError, match="horizon"):
        gpu.run(g, 0, variant="tiled", want_parents=False, horizon=-1)



def test_tiled_shift_rule():
    """Tiles as large as TILE_MAX_SHIFT where the mean degree fits FILL of the capacity,
    smaller for denser graphs; the layout of the chosen tile fits the budget; 16-bit
    offsets and ids hold."""
    budget = 115_456  # an H100's 227 KB opt-in per block, two blocks per SM
    for mean in (0.0, 2.5, 4.0, 6.0, 8.0, 16.0, 32.0, 200.0, 10_000.0):
        shift = tiled.choose_shift(mean, budget)
        assert tiled.TILE_MIN_SHIFT <= shift <= tiled.TILE_MAX_SHIFT
        cap = tiled.edge_capacity(shift, budget)
        assert cap <= tiled.MAX_EDGE_CAP
        assert tiled.shared_bytes(shift, cap) <= budget + 15
        fits = (1 << shift) * mean <= tiled.FILL * cap
        assert fits or shift == tiled.TILE_MIN_SHIFT
        if shift < tiled.TILE_MAX_SHIFT:  # the next size up does not fit
            bigger = shift + 1
            assert (1 << bigger) * mean > tiled.FILL * tiled.edge_capacity(bigger, budget)
    assert tiled.choose_shift(4.0, budget) == tiled.TILE_MAX_SHIFT
    # one edge per lane and pass on grids and roads, two on Delaunay graphs and denser
    assert [tiled.edges_per_pass(m) for m in (0.0, 2.4, 4.0, 5.2, 6.0, 32.0)] == \
        [1, 1, 1, 2, 2, 2]
    assert tiled.choose_shift(32.0, budget) < tiled.TILE_MAX_SHIFT
    assert tiled.edge_capacity(12, 1000) == 0
    assert variants.check("tiled").cpu_direction == "top-down"
