"""Generators: exact counts, symmetry, statistics, seeds, and the same graph on both sides.

Independent references: a scalar Python re-implementation of the documented hash and
quadrant rule (Kronecker/R-MAT), brute-force distance checks (random geometric),
scipy.spatial (Delaunay), and edge sets built with plain loops (grids).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import backend, generators
from morphgpu.csr import CSRGraph

MASK = (1 << 64) - 1


def host(graph: CSRGraph) -> CSRGraph:
    return graph.to("cpu")


def edge_set(graph: CSRGraph) -> set[tuple[int, int]]:
    g = host(graph)
    src = np.repeat(np.arange(g.n_vertices), np.diff(g.indptr))
    return set(zip(src.tolist(), g.indices.tolist(), strict=True))


def assert_simple_undirected(graph: CSRGraph) -> None:
    """Symmetric, no self-loops, no repeated entries, rows sorted."""
    g = host(graph)
    src = np.repeat(np.arange(g.n_vertices), np.diff(g.indptr))
    pairs = list(zip(src.tolist(), g.indices.tolist(), strict=True))
    assert len(set(pairs)) == len(pairs), "repeated edge"
    assert all(u != v for u, v in pairs), "self-loop"
    assert {(v, u) for u, v in pairs} == set(pairs), "not symmetric"
    assert not g.directed


def assert_identical(a: CSRGraph, b: CSRGraph) -> None:
    a, b = host(a), host(b)
    assert a.n_vertices == b.n_vertices
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    if a.weights is None or b.weights is None:
        assert a.weights is None and b.weights is None
    else:
        assert np.array_equal(a.weights, b.weights)


# ---------------------------------------------------------------- a scalar reference hash
def mix(z: int) -> int:
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def ref_bits(seed: int, stream: int, index: int) -> int:
    key = mix(mix(seed) + stream * 0x9E3779B97F4A7C15)
    return mix(index * 0x9E3779B97F4A7C15 + key)


def ref_rmat_edges(scale, edge_factor, a, b, c, seed):
    unit = 1 << 53
    ta, tab, tabc = int(a * unit), int((a + b) * unit), int((a + b + c) * unit)
    edges = []
    for e in range(edge_factor << scale):
        u = v = 0
        for level in range(scale):
            r = ref_bits(seed, level, e) >> 11
            if r >= tab:
                u |= 1 << level
            if ta <= r < tab or r >= tabc:
                v |= 1 << level
        edges.append((u, v))
    return edges


def test_hash_matches_the_documented_formula():
    idx = np.array([0, 1, 2, 12345, 2**40])
    got = generators.hash_uniform_bits(np, 7, 3, idx)
    assert [int(x) for x in got] == [ref_bits(7, 3, int(i)) for i in idx]


def test_rmat_matches_a_scalar_reference(device):
    edges = ref_rmat_edges(5, 4, 0.57, 0.19, 0.19, seed=11)
    expected = {(u, v) for u, v in edges if u != v}
    g = generators.rmat(5, 4, seed=11, device=device, directed=True)
    assert g.directed and edge_set(g) == expected
    und = generators.rmat(5, 4, seed=11, device=device)
    assert edge_set(und) == expected | {(v, u) for u, v in expected}


def test_kronecker_is_a_relabelled_rmat(device):
    g = generators.kronecker(6, 8, seed=5, device=device)
    r = generators.rmat(6, 8, seed=5, device="cpu")
    assert_simple_undirected(g)
    assert g.n_vertices == 64 and g.n_edges == r.n_edges
    # same degree multiset: only ids were permuted
    assert sorted(np.diff(host(g).indptr)) == sorted(np.diff(r.indptr))


def test_kronecker_statistics():
    g = generators.kronecker(12, 16, seed=1, device="cpu")
    assert_simple_undirected(g)
    assert g.n_vertices == 4096
    assert g.n_edges <= 2 * 16 * 4096
    degrees = np.diff(g.indptr)
    assert degrees.max() > 20 * degrees.mean(), "Kronecker degrees should be heavily skewed"
    # the permutation spreads the hubs: the top-degree vertex is not vertex 0
    r = generators.rmat(12, 16, seed=1, device="cpu")
    assert np.argmax(np.diff(r.indptr)) == 0
    dup = generators.kronecker(12, 16, seed=1, device="cpu", keep_duplicates=True)
    assert dup.n_edges > g.n_edges
    assert edge_set(dup) == edge_set(g)


def test_same_seed_same_graph_other_seed_other_graph():
    a = generators.kronecker(8, seed=3, device="cpu")
    assert_identical(a, generators.kronecker(8, seed=3, device="cpu"))
    assert edge_set(a) != edge_set(generators.kronecker(8, seed=4, device="cpu"))
    g1 = generators.gnm(50, 100, seed=3, device="cpu")
    assert_identical(g1, generators.gnm(50, 100, seed=3, device="cpu"))
    assert edge_set(g1) != edge_set(generators.gnm(50, 100, seed=4, device="cpu"))
    p1 = generators.random_points(10, seed=1, device="cpu")
    p2 = generators.random_points(10, seed=2, device="cpu")
    assert not np.array_equal(p1[0], p2[0])


@pytest.mark.parametrize(
    "make",
    [
        lambda d: generators.kronecker(9, 8, seed=2, device=d),
        lambda d: generators.kronecker(7, 8, seed=2, device=d, keep_duplicates=True),
        lambda d: generators.rmat(9, 4, seed=9, device=d, directed=True),
        lambda d: generators.gnm(300, 2000, seed=4, device=d),
        lambda d: generators.gnm(40, 700, seed=4, device=d, directed=True),
        lambda d: generators.grid2d(17, 9, device=d),
        lambda d: generators.grid3d(5, 6, 7, device=d),
        lambda d: generators.random_geometric(3000, seed=8, device=d),
        lambda d: generators.delaunay_graph(500, seed=8, device=d),
        lambda d: generators.random_weights(generators.grid2d(9, 9, device=d), seed=1),
        lambda d: generators.random_weights(
            generators.gnm(100, 300, seed=2, device=d), "integer", seed=5, low=1, high=100
        ),
    ],
    ids=["kronecker", "kronecker-dup", "rmat-directed", "gnm", "gnm-dense-directed", "grid2d",
         "grid3d", "geometric", "delaunay", "weights-uniform", "weights-integer"],
)
def test_device_builds_the_same_graph_as_the_cpu(device, make):
    g = make(device)
    assert backend.side_of(g.indices) == device
    assert_identical(g, make("cpu"))


# ---------------------------------------------------------------- G(n, m)
@given(st.integers(2, 40), st.data(), st.booleans(), st.integers(0, 2**32))
def test_gnm_has_exactly_m_distinct_edges(n, data, directed, seed):
    possible = n * (n - 1) if directed else n * (n - 1) // 2
    m = data.draw(st.integers(0, possible))
    g = generators.gnm(n, m, seed=seed, device="cpu", directed=directed)
    pairs = edge_set(g)
    assert g.n_vertices == n
    assert all(u != v for u, v in pairs)
    if directed:
        assert g.directed and g.n_edges == m and len(pairs) == m
    else:
        assert_simple_undirected(g)
        assert g.n_edges == 2 * m


@given(st.integers(2, 60), st.data(), st.booleans(), st.integers(0, 2**32))
def test_gnm_keeps_the_pairs_of_smallest_priority(n, data, directed, seed):
    """The host's partition keeps the very pairs a full sort by priority keeps (the
    GPU's way): the graph is the same edge for edge."""
    possible = n * (n - 1) if directed else n * (n - 1) // 2
    m = data.draw(st.integers(0, possible))
    g = generators.gnm(n, m, seed=seed, device="cpu", directed=directed)
    pairs = (generators._all_pairs(np, n, directed) if n * n <= 1 << 26 and 3 * m >= possible
             else generators._sampled_pairs(np, n, m, seed, directed))
    priority = generators.hash_uniform_bits(np, seed, generators._STREAM_GNM_PRIORITY, pairs)
    assert np.unique(priority).size == priority.size  # distinct keys: one answer
    chosen = pairs[np.argsort(priority)[:m]]
    want = CSRGraph.from_edges(chosen // n, chosen % n, n_vertices=n, symmetrize=not directed)
    np.testing.assert_array_equal(g.indptr, want.indptr)
    np.testing.assert_array_equal(g.indices, want.indices)


def test_gnm_is_uniform_over_pairs():
    # each of the 45 pairs of K10 is chosen with probability 9/45 = 0.2
    counts = np.zeros((10, 10))
    trials = 400
    for seed in range(trials):
        g = generators.gnm(10, 9, seed=seed, device="cpu")
        for u, v in edge_set(g):
            counts[u, v] += 1
    freq = counts[np.triu_indices(10, 1)] / trials
    assert abs(freq.mean() - 0.2) < 1e-9
    assert freq.min() > 0.12 and freq.max() < 0.28


def test_gnm_sparse_large():
    g = generators.gnm(100_000, 300_000, seed=0, device="cpu")
    assert g.n_edges == 600_000
    assert np.diff(g.indptr).max() < 30  # Poisson(6) tail, nowhere near a hub


def test_gnm_rejects_impossible_requests():
    with pytest.raises(ValueError, match="exceeds"):
        generators.gnm(4, 7)
    with pytest.raises(ValueError, match="seed"):
        generators.gnm(4, 2, seed=-1)
    with pytest.raises(ValueError, match="device"):
        generators.gnm(4, 2, device="tpu")


# ---------------------------------------------------------------- grids
@given(st.integers(1, 12), st.integers(1, 12))
def test_grid2d_is_the_five_point_stencil(nx, ny):
    g = generators.grid2d(nx, ny, device="cpu")
    expected = set()
    for y in range(ny):
        for x in range(nx):
            for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= x + dx < nx and 0 <= y + dy < ny:
                    expected.add((x + nx * y, x + dx + nx * (y + dy)))
    assert g.n_vertices == nx * ny
    assert g.n_edges == 2 * ((nx - 1) * ny + nx * (ny - 1))
    assert edge_set(g) == expected


@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 6))
def test_grid3d_is_the_seven_point_stencil(nx, ny, nz):
    g = generators.grid3d(nx, ny, nz, device="cpu")
    assert g.n_edges == 2 * ((nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1))
    assert_simple_undirected(g)
    for u, v in edge_set(g):
        cu = (u % nx, (u // nx) % ny, u // (nx * ny))
        cv = (v % nx, (v // nx) % ny, v // (nx * ny))
        assert sum(abs(a - b) for a, b in zip(cu, cv, strict=True)) == 1


# ---------------------------------------------------------------- geometric
@given(st.integers(0, 250), st.floats(0.0, 0.5), st.integers(0, 1000))
def test_random_geometric_equals_brute_force(n, radius, seed):
    g, x, y = generators.random_geometric(n, radius=radius, seed=seed, device="cpu",
                                          return_points=True)
    expected = {
        (i, j)
        for i in range(n)
        for j in range(n)
        if i != j and (x[i] - x[j]) ** 2 + (y[i] - y[j]) ** 2 < radius * radius
    }
    assert edge_set(g) == expected


def test_random_geometric_average_degree_and_points():
    n = 20_000
    g, x, y = generators.random_geometric(n, avg_degree=10, seed=3, device="cpu",
                                          return_points=True)
    mean_degree = g.n_edges / n
    # boundary effects lose a few percent of the disc area
    assert 8.5 < mean_degree < 10.5
    assert 0 <= x.min() and x.max() < 1 and 0 <= y.min() and y.max() < 1
    assert abs(x.mean() - 0.5) < 0.02 and abs(y.mean() - 0.5) < 0.02
    with pytest.raises(ValueError, match="not both"):
        generators.random_geometric(10, radius=0.1, avg_degree=3)


def test_delaunay_graph_against_scipy():
    from scipy.spatial import ConvexHull, Delaunay

    n = 2000
    g, x, y = generators.delaunay_graph(n, seed=6, device="cpu", return_points=True)
    points = np.column_stack([x, y])
    expected = set()
    for a, b, c in Delaunay(points).simplices.tolist():
        expected |= {(a, b), (b, a), (b, c), (c, b), (a, c), (c, a)}
    assert edge_set(g) == expected
    hull = len(ConvexHull(points).vertices)
    assert g.n_edges == 2 * (3 * n - 3 - hull)  # Euler for a triangulation


# ---------------------------------------------------------------- weights
def test_random_weights_are_symmetric_and_in_range():
    g = generators.gnm(200, 800, seed=1, device="cpu")
    w = generators.random_weights(g, seed=9, low=2.0, high=5.0)
    lookup = {}
    src = np.repeat(np.arange(g.n_vertices), np.diff(w.indptr))
    for u, v, x in zip(src.tolist(), w.indices.tolist(), w.weights.tolist(), strict=True):
        lookup[(u, v)] = x
    assert all(lookup[(v, u)] == x for (u, v), x in lookup.items())
    assert 2.0 <= min(lookup.values()) and max(lookup.values()) < 5.0
    ints = generators.random_weights(g, "integer", seed=9, low=1, high=4)
    assert ints.weights.dtype == np.int32 and set(ints.weights.tolist()) == {1, 2, 3}
    other = generators.random_weights(g, seed=10)
    assert not np.array_equal(other.weights, generators.random_weights(g, seed=9).weights)
    with pytest.raises(ValueError, match="rule"):
        generators.random_weights(g, "gaussian")


def test_argument_errors_are_clear():
    with pytest.raises(ValueError, match="scale"):
        generators.kronecker(-1)
    with pytest.raises(ValueError, match="a \\+ b \\+ c"):
        generators.kronecker(4, a=0.6, b=0.3, c=0.3)
    with pytest.raises(ValueError, match="nx"):
        generators.grid2d(2.5, 3)
    assert generators.grid2d(0, 5, device="cpu").n_vertices == 0
    assert generators.random_geometric(1, device="cpu").n_edges == 0
    assert generators.delaunay_graph(2, device="cpu").n_edges == 0
    assert math.isclose(generators.kronecker(0, device="cpu").n_vertices, 1)


@pytest.mark.parametrize("chunk_edges", [1, 999, 1 << 24])
def test_kronecker_edge_chunks_are_kroneckers_edges(chunk_edges):
    """Drawn in chunks of any size (edges are numbered: each is drawn alone), then stored
    both ways, self-loops out, duplicates merged: kronecker()'s graph exactly."""
    scale, factor = 7, 4
    g = generators.kronecker(scale, factor, seed=3, device="cpu")
    chunks = generators.kronecker_edge_chunks(scale, factor, seed=3, chunk_edges=chunk_edges)
    pairs = list(chunks())
    assert len(pairs) == -(-(factor << scale) // chunk_edges)
    assert list(chunks())[0][0].tolist() == pairs[0][0].tolist()  # a fresh iterator each call
    src = np.concatenate([s for s, _ in pairs])
    dst = np.concatenate([d for _, d in pairs])
    assert (src != dst).all()
    h = CSRGraph.from_edges(src, dst, n_vertices=1 << scale, symmetrize=True,
                            drop_self_loops=True, merge_duplicates="first")
    np.testing.assert_array_equal(h.indptr, g.indptr)
    np.testing.assert_array_equal(h.indices, g.indices)
    with pytest.raises(ValueError):
        generators.kronecker_edge_chunks(scale, factor, chunk_edges=0)


@given(scale=st.integers(1, 40), n=st.integers(0, 300), first=st.integers(0, 2**45),
       seed=st.integers(0, 2**20), block=st.integers(1, 64), threads=st.integers(1, 5),
       abc=st.sampled_from([(0.57, 0.19, 0.19), (0.25, 0.25, 0.25), (1.0, 0.0, 0.0),
                            (0.0, 0.0, 1.0), (0.45, 0.15, 0.15)]))
def test_host_rmat_draw_is_the_array_draw(scale, n, first, seed, block, threads, abc):
    """The host's blocked draw gives the bits of the whole-array form (the GPU's), for
    any block size, thread count, edge range, seed and quadrant probabilities."""
    a, b, c = abc
    want = generators._rmat_edges_arrays(np, scale, n, a, b, c, seed, first)
    got = generators._rmat_edges_host(scale, n, a, b, c, seed, first, block=block,
                                      threads=threads)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_host_rmat_draw_across_default_blocks():
    """What kronecker(device="cpu") and kronecker_edge_chunks run: the default block,
    several blocks and a partial one."""
    n = 2 * generators._HOST_BLOCK + 12345
    want = generators._rmat_edges_arrays(np, 18, n, 0.57, 0.19, 0.19, 7, 999)
    got = generators._rmat_edges(np, 18, n, 0.57, 0.19, 0.19, 7, first=999)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
