"""Locality orders: permutations, BFS structure (checked with networkx), Morton codes
(checked with a bit-by-bit interleave), and a real gain in locality on shuffled inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import backend, generators, reorder
from morphgpu.csr import CSRGraph


def host(x):
    return backend.to_host(x)


def to_networkx(graph: CSRGraph):
    import networkx as nx  # only the CPU structure test needs it

    g = graph.to("cpu")
    out = nx.Graph()
    out.add_nodes_from(range(g.n_vertices))
    src = np.repeat(np.arange(g.n_vertices), np.diff(g.indptr))
    out.add_edges_from(zip(src.tolist(), g.indices.tolist(), strict=True))
    return out


def span(graph: CSRGraph) -> float:
    """Mean |u - v| over the edges, computed here rather than by reorder."""
    g = graph.to("cpu")
    src = np.repeat(np.arange(g.n_vertices), np.diff(g.indptr))
    return float(np.abs(src - g.indices).mean())


def shuffled(graph: CSRGraph, seed: int = 0) -> CSRGraph:
    perm = np.random.default_rng(seed).permutation(graph.n_vertices)
    return reorder.apply(graph, perm)


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 30))
    m = draw(st.integers(0, 50))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    return CSRGraph.from_edges(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                               n_vertices=n)


@given(graphs(), st.data())
def test_bfs_order_is_a_breadth_first_order_per_component(g, data):
    source = data.draw(st.integers(0, g.n_vertices - 1))
    nx = pytest.importorskip("networkx")
    perm = host(reorder.bfs_order(g, source))
    assert sorted(perm.tolist()) == list(range(g.n_vertices))
    assert perm[0] == source
    und = to_networkx(g)
    components = list(nx.connected_components(und))
    # each component is one contiguous block, starting at its root, in BFS distance order
    position = 0
    for block_index in range(len(components)):
        root = int(perm[position])
        component = nx.node_connected_component(und, root)
        if block_index > 0:
            assert root == min(component)
        block = perm[position:position + len(component)].tolist()
        assert set(block) == component
        dist = nx.single_source_shortest_path_length(und, root)
        levels = [dist[v] for v in block]
        assert levels == sorted(levels)
        # Cuthill-McKee: a vertex's earliest-placed neighbour one level up is placed no
        # later than that of any vertex after it on the same level
        rank = {v: i for i, v in enumerate(block)}
        parents = [
            min((rank[u] for u in und[v] if dist[u] == dist[v] - 1), default=-1) for v in block
        ]
        for i in range(1, len(block)):
            if levels[i] == levels[i - 1]:
                assert parents[i - 1] <= parents[i]
        position += len(component)
    assert position == g.n_vertices


@pytest.mark.parametrize("method", ["bfs", "rcm"])
def test_bfs_and_rcm_restore_locality_of_a_shuffled_grid(method):
    grid = generators.grid2d(60, 40, device="cpu")
    mixed = shuffled(grid)
    assert span(mixed) > 10 * span(grid)
    perm = reorder.bfs_order(mixed, method=method)
    assert sorted(perm.tolist()) == list(range(grid.n_vertices))
    restored = reorder.apply(mixed, perm)
    assert span(restored) < 2 * 40  # a band of about one grid row
    assert span(restored) < span(mixed) / 10
    assert reorder.mean_edge_span(restored) == pytest.approx(span(restored))


def morton_reference(qx: int, qy: int) -> int:
    code = 0
    for bit in range(31):
        code |= ((qx >> bit) & 1) << (2 * bit)
        code |= ((qy >> bit) & 1) << (2 * bit + 1)
    return code


@given(st.lists(st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1)),
                min_size=2, max_size=40))
def test_morton_order_sorts_by_interleaved_bits(points):
    # the corners pin the range, so coordinate q maps to cell q exactly
    points = [(0, 0), (2**31 - 1, 2**31 - 1)] + points
    x = np.array([p[0] for p in points], dtype=np.float64)
    y = np.array([p[1] for p in points], dtype=np.float64)
    perm = reorder.morton_order(x, y)
    codes = [morton_reference(int(a), int(b)) for a, b in points]
    expected = sorted(range(len(points)), key=lambda i: (codes[i], i))
    assert perm.tolist() == expected


def test_morton_order_restores_locality_of_geometric_graphs():
    g, x, y = generators.random_geometric(20_000, seed=2, device="cpu", return_points=True)
    perm = reorder.morton_order(x, y)
    ordered = reorder.apply(g, perm)
    assert span(ordered) < span(g) / 20
    with pytest.raises(ValueError, match="NaN"):
        reorder.morton_order(np.array([0.0, np.nan]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="equal length"):
        reorder.morton_order(np.zeros(3), np.zeros(2))


def test_apply_relabels_every_edge_and_keeps_weights():
    g = generators.random_weights(generators.gnm(50, 120, seed=1, device="cpu"), seed=2)
    perm = np.random.default_rng(3).permutation(50)
    new_of_old = np.empty(50, dtype=np.int64)
    new_of_old[perm] = np.arange(50)
    out = reorder.apply(g, perm)
    src = np.repeat(np.arange(50), np.diff(g.indptr))
    expected = sorted(zip(new_of_old[src].tolist(), new_of_old[g.indices].tolist(),
                          g.weights.tolist(), strict=True))
    out_src = np.repeat(np.arange(50), np.diff(out.indptr))
    assert sorted(zip(out_src.tolist(), out.indices.tolist(), out.weights.tolist(),
                      strict=True)) == expected
    assert out.directed == g.directed


def test_apply_and_bfs_order_reject_bad_arguments():
    g = generators.grid2d(3, 3, device="cpu")
    with pytest.raises(ValueError, match="missing"):
        reorder.apply(g, np.array([0, 0, 1, 2, 3, 4, 5, 6, 7]))
    with pytest.raises(ValueError, match="9 vertex ids"):
        reorder.apply(g, np.arange(8))
    with pytest.raises(ValueError, match="outside"):
        reorder.apply(g, np.arange(1, 10))
    with pytest.raises(ValueError, match="integers"):
        reorder.apply(g, np.arange(9.0))
    with pytest.raises(ValueError, match="source"):
        reorder.bfs_order(g, 9)
    with pytest.raises(ValueError, match="method"):
        reorder.bfs_order(g, method="metis")


def test_orders_on_the_device_match_the_cpu(device):
    mixed = shuffled(generators.grid2d(30, 20, device="cpu"), seed=4)
    on_device = mixed.to(device)
    perm = reorder.bfs_order(on_device, 5)
    assert backend.side_of(perm) == device
    assert np.array_equal(host(perm), reorder.bfs_order(mixed, 5))
    relabelled = reorder.apply(on_device, perm)
    assert backend.side_of(relabelled.indices) == device
    expected = reorder.apply(mixed, host(perm))
    assert np.array_equal(host(relabelled.indptr), expected.indptr)
    assert np.array_equal(host(relabelled.indices), expected.indices)
    x, y = generators.random_points(500, seed=1, device=device)
    assert np.array_equal(host(reorder.morton_order(x, y)),
                          reorder.morton_order(host(x), host(y)))


@given(st.integers(1, 60), st.integers(0, 200), st.integers(0, 2**31 - 1))
def test_degree_order(n, m, seed):
    """A permutation listing vertices by non-increasing degree, ties by ascending id; the
    relabelled graph has that degree sequence, and a search on it mapped back through the
    permutation (what the GPU direction kernels do with relabel="auto") is a valid BFS of the
    original graph."""
    from morphgpu.bfs import bfs, graph500_check  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    g = CSRGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n_vertices=n,
                            symmetrize=bool(seed & 1))
    perm = host(reorder.degree_order(g))
    degrees = np.diff(g.indptr)
    assert sorted(perm.tolist()) == list(range(n))
    key = [(-int(degrees[v]), int(v)) for v in perm]
    assert key == sorted(key)
    relabelled = reorder.apply(g, perm)
    np.testing.assert_array_equal(np.diff(relabelled.indptr), degrees[perm])
    inverse = np.empty(n, dtype=np.int64)
    inverse[perm] = np.arange(n)
    source = int(rng.integers(0, n))
    result = bfs(relabelled, int(inverse[source]), predecessors=True, device="cpu")
    dist_new, parent_new = np.asarray(result.distances), np.asarray(result.predecessors)
    dist = dist_new[inverse]
    p = parent_new[inverse]
    parent = np.where(p >= 0, perm[np.maximum(p, 0)], -1)
    graph500_check(g.indptr, g.indices, source, dist, parent)


def expected_rows_by_degree(g: CSRGraph, key: np.ndarray) -> list[list[tuple[int, float]]]:
    """Each row's (neighbour, weight) pairs by non-increasing key, ties in row order (the
    independent reference: Python's stable sort, one row at a time)."""
    out = []
    for v in range(g.n_vertices):
        lo, hi = int(g.indptr[v]), int(g.indptr[v + 1])
        entries = [(int(g.indices[k]), float(g.weights[k])) for k in range(lo, hi)]
        out.append(sorted(entries, key=lambda e: -int(key[e[0]])))
    return out


@given(st.integers(1, 40), st.integers(0, 160), st.integers(0, 2**31 - 1), st.booleans(),
       st.integers(0, 12))
def test_rows_by_degree(n, m, seed, huge_keys, below_zero):
    """Same indptr; each row holds the same entries (weights with them) by non-increasing
    key (the degrees, or the degrees less ``below_zero``: negative keys), ties in the row's
    order; with keys so large that one sort key would overflow int64, the two-sort path
    gives the same."""
    rng = np.random.default_rng(seed)
    g = CSRGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m),
                            rng.random(m), n_vertices=n, symmetrize=bool(seed & 1))
    key = np.diff(g.indptr).astype(np.int64) - below_zero
    if huge_keys:
        key = key + (1 << 61)
    out = reorder.rows_by_degree(g, key if huge_keys or below_zero else None)
    np.testing.assert_array_equal(out.indptr, g.indptr)
    assert out.directed == g.directed
    got = [[(int(out.indices[k]), float(out.weights[k]))
            for k in range(int(out.indptr[v]), int(out.indptr[v + 1]))]
           for v in range(n)]
    assert got == expected_rows_by_degree(g, key)
    with pytest.raises(ValueError, match="degrees"):
        reorder.rows_by_degree(g, np.zeros(n + 1))


def test_rows_by_degree_keeps_entries_in_their_rows_with_negative_keys():
    """A row's entries stay in that row whatever the keys' range (a key of -5 once moved
    row 0's entry past row 1's)."""
    g = CSRGraph.from_edges(np.array([0, 1]), np.array([0, 1]), n_vertices=3)
    out = reorder.rows_by_degree(g, np.array([-5, 0, 0]))
    np.testing.assert_array_equal(out.indices, [0, 1])


def test_rows_by_degree_on_the_device_matches_the_cpu(device):
    g = generators.kronecker(9, 8, device="cpu")
    out = reorder.rows_by_degree(g.to(device))
    assert backend.side_of(out.indices) == device
    np.testing.assert_array_equal(host(out.indices), reorder.rows_by_degree(g).indices)


def hop_distances(graph: CSRGraph):
    """distances(source) for landmark_order: SciPy's unweighted shortest paths, -1 where
    unreached (an independent BFS)."""
    from scipy.sparse.csgraph import shortest_path

    matrix = graph.to("cpu").to_scipy()
    calls = []

    def distances(source: int) -> np.ndarray:
        calls.append(source)
        d = shortest_path(matrix, unweighted=True, indices=source)
        return np.where(np.isinf(d), -1, d).astype(np.int32)

    return distances, calls


def test_landmark_order_restores_wavefront_locality_of_a_shuffled_grid():
    grid = generators.grid2d(64, 48, device="cpu")
    mixed = shuffled(grid, seed=3)
    distances, calls = hop_distances(mixed)
    fields: dict = {}
    perm = reorder.landmark_order(mixed, distances, fields)
    assert sorted(perm.tolist()) == list(range(grid.n_vertices))
    assert len(calls) == 4 and set(fields) == {"a", "c"}
    inverse = np.empty_like(perm)
    inverse[perm] = np.arange(perm.size)
    assert fields["a"].min() == 0 and fields["c"].min() == 0  # distances from vertices
    plain, _ = hop_distances(grid)
    for source in (0, 1000, 2000):
        dist = distances(source)
        # shuffled: a level's vertices lie in about as many lines as it has vertices; the
        # row-major grid is no better (its levels are diagonals); the order serves 2-4
        scattered = reorder.wavefront_locality(dist)
        row_major = reorder.wavefront_locality(plain(source))
        assert max(scattered, row_major) < 1.4
        assert reorder.wavefront_locality(dist, inverse) > 1.5 * max(scattered, row_major)


def test_landmark_order_puts_unreached_vertices_last_in_id_order():
    # a path 0-1-2-3-4, then isolated 5, 6 and a separate edge 7-8
    src = np.array([0, 1, 2, 3, 7])
    dst = np.array([1, 2, 3, 4, 8])
    g = CSRGraph.from_edges(src, dst, n_vertices=9, symmetrize=True)
    distances, _ = hop_distances(g)
    perm = reorder.landmark_order(g, distances)
    assert sorted(perm[:5].tolist()) == [0, 1, 2, 3, 4]  # the largest degree's component
    assert perm[5:].tolist() == [5, 6, 7, 8]
    empty = CSRGraph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64),
                                n_vertices=0)
    assert reorder.landmark_order(empty, distances).size == 0


def test_line_locality_counts_edges_within_one_line():
    # 0-1 and 30-31 share line 0; 31-32 and 5-40 cross lines: 4 of 8 stored entries
    g = CSRGraph.from_edges(np.array([0, 30, 31, 5]), np.array([1, 31, 32, 40]),
                            n_vertices=64, symmetrize=True)
    assert reorder.line_locality(g) == pytest.approx(0.5)
    assert reorder.line_locality(g, line=64) == 1.0


def test_wavefront_locality_counts_vertices_per_level_and_line():
    # levels 0: {0}, 1: {1, 33}, 2: {2, 3, 64}; -1 unreached
    dist = np.full(70, -1, dtype=np.int32)
    dist[[0, 1, 33, 2, 3, 64]] = [0, 1, 1, 2, 2, 2]
    # (0, line 0), (1, 0), (1, 1), (2, 0), (2, 2): 6 vertices over 5 pairs
    assert reorder.wavefront_locality(dist) == pytest.approx(6 / 5)
    ids = np.arange(70)
    ids[33], ids[64] = 4, 5  # renumbered into line 0: one pair per level
    assert reorder.wavefront_locality(dist, ids) == pytest.approx(2.0)
    assert reorder.wavefront_locality(np.full(3, -1)) == 1.0


def _multi_source_hops(g: CSRGraph, seeds: np.ndarray) -> np.ndarray:
    """Hops from the nearest seed (SciPy, through a virtual vertex joined to every seed)."""
    import scipy.sparse as sp  # noqa: PLC0415
    from scipy.sparse import csgraph  # noqa: PLC0415

    h = g.to("cpu")
    n = h.n_vertices
    src = np.concatenate([np.repeat(np.arange(n), np.diff(h.indptr)), np.full(seeds.size, n)])
    dst = np.concatenate([h.indices, seeds])
    m = sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n + 1, n + 1))
    d = csgraph.shortest_path(m, unweighted=True, indices=n)[:n] - 1
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _cell_cases() -> list[tuple[str, CSRGraph]]:
    rng = np.random.default_rng(3)
    a = generators.grid2d(30, 20, device="cpu")
    two = CSRGraph.from_edges(np.concatenate([a.edge_sources(), a.edge_sources() + 600]),
                              np.concatenate([a.indices, a.indices + 600]), n_vertices=1300)
    return [("grid", generators.grid2d(40, 30, device="cpu")),
            ("delaunay", generators.delaunay_graph(3000, seed=2, device="cpu")),
            ("two grids and isolated vertices", two),
            ("directed", CSRGraph.from_edges(rng.integers(0, 800, 2400),
                                             rng.integers(0, 800, 2400), n_vertices=800))]


@pytest.mark.parametrize("confined", [False, True])
def test_grow_gives_multi_source_hops_and_a_nearest_source(device, confined):
    """reorder._grow (kernels/grow.cu on the GPU): hops equal SciPy's distances from the
    nearest source, and each vertex's label is that of a source at that distance reaching
    it; with ``confine``, the same on the graph without the edges between groups. On the
    GPU, labels and hops equal the NumPy path's exactly, and two layouts of one graph are
    equal (no answer depends on thread timing)."""
    for label, g0 in _cell_cases():
        n = g0.n_vertices
        rng = np.random.default_rng(7)
        sources = np.sort(rng.choice(n, size=max(1, n // 50), replace=False))
        group = rng.integers(0, 3, n) if confined else np.zeros(n, dtype=np.int64)
        src = g0.edge_sources()
        inside = group[src] == group[g0.indices]
        h = CSRGraph.from_edges(src[inside], g0.indices[inside], n_vertices=n)
        g = g0.to(device)
        xp = g.xp
        owner, hops = reorder._grow(g, g.indptr.astype(xp.int64), xp.asarray(sources),
                                    xp.arange(sources.size, dtype=xp.int64),
                                    confine=xp.asarray(group) if confined else None)
        owner, hops = host(owner), host(hops)
        # the tie rule (the neighbour of largest id hands on its label) is the NumPy
        # path's too: the GPU's answer is exactly the CPU's
        cpu_owner, cpu_hops = reorder._grow(g0, g0.indptr.astype(np.int64), sources,
                                            np.arange(sources.size),
                                            confine=group if confined else None)
        np.testing.assert_array_equal(owner, cpu_owner, err_msg=label)
        np.testing.assert_array_equal(hops, cpu_hops, err_msg=label)
        expected = _multi_source_hops(h, sources)
        np.testing.assert_array_equal(hops, expected, err_msg=label)
        reached = hops >= 0
        np.testing.assert_array_equal(owner >= 0, reached, err_msg=label)
        # the label's source is at exactly that distance (SciPy from that source)
        for v in rng.choice(np.flatnonzero(reached), size=min(20, int(reached.sum())),
                            replace=False):
            from_source = _multi_source_hops(h, sources[owner[v]:owner[v] + 1])
            assert from_source[v] == hops[v], (label, v)
        first = host(reorder.cell_layout(g, 48, 64)[0])
        np.testing.assert_array_equal(first, host(reorder.cell_layout(g, 48, 64)[0]),
                                      err_msg=label)


def _tile_borders(g: CSRGraph, new_id: np.ndarray, tile: int) -> np.ndarray:
    """Per tile: its vertices with an edge to or from another tile."""
    src, dst = new_id[g.edge_sources()], new_id[g.indices]
    cut = src // tile != dst // tile
    border = np.unique(np.concatenate([src[cut], dst[cut]]))
    return np.bincount(border // tile, minlength=int(new_id.max()) // tile + 1)


def _check_cell_layout(label: str, g0: CSRGraph, g: CSRGraph, cell: int, tile: int) -> None:
    """cell_layout's invariants on one graph (``g``: ``g0`` on the device under test)."""
    fields: dict = {}
    new_id, n_pad = reorder.cell_layout(g, cell, tile, fields)
    new_id, owner, hops = (host(x) for x in (new_id, fields["cell"], fields["hops"]))
    n = g0.n_vertices
    assert np.unique(new_id).size == n and 0 <= new_id.min(), label
    assert n_pad == new_id.max() + 1, label
    reached = owner >= 0
    assert (hops[reached] >= 0).all(), label
    if (~reached).any():
        tail = np.flatnonzero(~reached)
        assert not reached.any() or new_id[tail].min() > new_id[reached].max(), label
        assert (np.diff(new_id[tail]) > 0).all(), label
    for c in np.unique(owner[reached]):
        members = np.flatnonzero(owner == c)
        ids = np.sort(new_id[members])
        assert members.size <= tile, (label, c)
        assert ids[0] // tile == ids[-1] // tile, (label, c)
        assert ids[-1] - ids[0] == members.size - 1, (label, c)  # consecutive
        by_id = members[np.argsort(new_id[members])]
        assert (np.diff(hops[by_id]) >= 0).all(), (label, c)


@pytest.mark.parametrize("cell,tile", [(48, 64), (16, 64), (1, 8), (64, 64)])
def test_cell_layout_packs_whole_cells_of_at_most_a_tile(device, cell, tile):
    """cell_layout's ids are distinct and below the padded count; every cell has at
    most ``tile`` vertices and lies in one tile, its vertices consecutive in hops order;
    vertices no seed reaches (those of components whose seed was dropped, or that had
    none) get the last ids, in id order."""
    for label, g0 in _cell_cases():
        _check_cell_layout(label, g0, g0.to(device), cell, tile)


@given(n=st.integers(1, 300), m=st.integers(0, 900), seed=st.integers(0, 2**31),
       symmetric=st.booleans(), tile=st.sampled_from([8, 16, 64]),
       share=st.floats(0.0, 1.0))
def test_cell_layout_on_random_graphs(n, m, seed, symmetric, tile, share):
    """The same on random graphs, directed or not (a directed cell whose far end reaches
    nothing inside it once made the splits loop forever)."""
    rng = np.random.default_rng(seed)
    g0 = CSRGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n_vertices=n,
                             symmetrize=symmetric)
    _check_cell_layout("random", g0, g0, max(1, int(share * tile)), tile)


def test_cells_have_small_tile_borders(device):
    """The point of the relaxation: on a Delaunay graph in a locality order, tiles of
    relaxed cells have fewer border vertices (an edge to another tile) than the ranges of
    the order itself, on average and at the largest, and about as few as tiles of the
    points' own coordinates (recursive bisection into 1024 points: 131 per tile on
    Delaunay 1M against 110 here; the order's ranges and the layout before session 39
    had 207-280)."""
    import scipy.sparse as sp  # noqa: PLC0415
    from scipy.sparse import csgraph  # noqa: PLC0415

    g0 = generators.delaunay_graph(40_000, seed=5, device="cpu")
    matrix = sp.csr_matrix((np.ones(g0.n_edges), g0.indices, g0.indptr),
                           shape=(g0.n_vertices,) * 2)

    def distances(s):
        d = csgraph.shortest_path(matrix, unweighted=True, indices=int(s))
        return np.where(np.isinf(d), -1, d).astype(np.int32)

    ordered = reorder.apply(g0, reorder.landmark_order(g0, distances))
    tile = 1024
    ranges = _tile_borders(ordered, np.arange(g0.n_vertices), tile)
    cells = _tile_borders(ordered, host(reorder.cell_layout(ordered.to(device), tile * 3 // 4,
                                                            tile)[0]), tile)
    cells = cells[cells > 0]
    assert cells.mean() < 0.6 * ranges.mean(), (cells.mean(), ranges.mean())
    assert cells.max() < ranges.max(), (cells.max(), ranges.max())
    assert cells.mean() < 150, cells.mean()


def test_cell_layout_rejects_bad_sizes():
    g = generators.grid2d(5, 5, device="cpu")
    with pytest.raises(ValueError, match="cell"):
        reorder.cell_layout(g, 0, 8)
    with pytest.raises(ValueError, match="cell"):
        reorder.cell_layout(g, 9, 8)
    new_id, n_pad = reorder.cell_layout(CSRGraph.from_edges(np.zeros(0, np.int64),
                                                            np.zeros(0, np.int64),
                                                            n_vertices=0), 1, 8)
    assert new_id.size == 0 and n_pad == 0


@pytest.mark.gpu
def test_gpu_cell_layout_on_random_graphs_equals_the_cpu_layout():
    """On the GPU, cell_layout's invariants on 30 random graphs, directed or not, and the
    very layout the NumPy path gives (one tie rule on both sides)."""
    rng = np.random.default_rng(11)
    for k in range(30):
        n = int(rng.integers(1, 400))
        m = int(rng.integers(0, 4 * n))
        g0 = CSRGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n_vertices=n,
                                 symmetrize=bool(k % 2))
        tile = int(rng.choice([8, 16, 64]))
        cell = max(1, int(rng.random() * tile))
        g = g0.to("gpu")
        _check_cell_layout(f"random {k}", g0, g, cell, tile)
        np.testing.assert_array_equal(host(reorder.cell_layout(g, cell, tile)[0]),
                                      reorder.cell_layout(g0, cell, tile)[0])
