"""``device="auto"`` on a machine without a GPU delegates to SciPy (BFS, MST) and Triangle
(DMR), with the same results as ``device="cpu"`` (our NumPy twin of the GPU path).

Speed is measured by ``benchmarks/cpu_auto.py``, not here.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

from morphgpu import backend, generators
from morphgpu.bfs import bfs, breadth_first_order, graph500_check
from morphgpu.bfs.order import distances_from_fifo
from morphgpu.csr import CSRGraph
from morphgpu.mst import minimum_spanning_tree

no_gpu = pytest.mark.skipif(backend.gpu_available(), reason="checks what auto does without a GPU")


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 40))
    m = draw(st.integers(0, 120))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.integers(-5, 20), min_size=m, max_size=m))
    g = CSRGraph.from_edges(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                            np.array(w, dtype=np.int64), n_vertices=n)
    return g, draw(st.integers(0, n - 1))


@no_gpu
@settings(max_examples=60, deadline=None)
@given(case=graphs())
def test_bfs_auto_equals_our_cpu_path(case):
    g, source = case
    auto = bfs(g, source, device="auto", predecessors=True)
    ours = bfs(g, source, device="cpu", predecessors=True)
    assert auto.variant == "scipy" and auto.device == "cpu"
    np.testing.assert_array_equal(auto.distances, ours.distances)
    assert auto.n_levels == ours.n_levels
    assert auto.n_edges_traversed == ours.n_edges_traversed
    assert auto.distances.dtype == ours.distances.dtype
    assert auto.predecessors.dtype == ours.predecessors.dtype
    graph500_check(g.indptr, g.indices, source, auto.distances, auto.predecessors)


@no_gpu
@settings(max_examples=60, deadline=None)
@given(case=graphs(), directed=st.booleans())
def test_breadth_first_order_auto_and_cpu_equal_scipy(case, directed):
    g, source = case
    m = g.to_scipy()
    ref = csgraph.breadth_first_order(m, source, directed=directed)
    for device in ("auto", "cpu"):
        got = breadth_first_order(m, source, directed=directed, device=device)
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])


@no_gpu
@settings(max_examples=60, deadline=None)
@given(case=graphs(), kind=st.sampled_from(["csrgraph", "matrix", "array", "dense"]))
def test_mst_auto_equals_our_cpu_path(case, kind):
    g, _ = case
    graph = {"csrgraph": g, "matrix": g.to_scipy(), "array": sp.csr_array(g.to_scipy()),
             "dense": g.to_scipy().toarray()}[kind]
    auto = minimum_spanning_tree(graph, device="auto")
    ours = minimum_spanning_tree(graph, device="cpu")
    assert type(auto) is type(ours) and auto.dtype == ours.dtype
    assert (auto != ours).nnz == 0


@no_gpu
def test_mst_auto_rejects_nan_as_the_cpu_path_does():
    m = sp.csr_matrix(np.array([[0, np.nan], [1.0, 0]]))
    for device in ("auto", "cpu"):
        with pytest.raises(ValueError, match="NaN"):
            minimum_spanning_tree(m, device=device)


@no_gpu
def test_bfs_auto_on_a_grid_and_a_kronecker_graph():
    for g in (generators.grid2d(60, 40, device="cpu"),
              generators.kronecker(10, 8, device="cpu")):
        source = int(np.argmax(np.diff(g.indptr)))
        auto = bfs(g, source, device="auto", predecessors=True)
        ours = bfs(g, source, device="cpu")
        np.testing.assert_array_equal(auto.distances, ours.distances)
        graph500_check(g.indptr, g.indices, source, auto.distances, auto.predecessors)


@no_gpu
@settings(max_examples=80, deadline=None)
@given(case=graphs(), floats=st.booleans(), symmetric=st.booleans())
def test_boruvka_auto_equals_our_cpu_path(case, floats, symmetric):
    from morphgpu.mst import boruvka  # noqa: PLC0415

    g, _ = case
    if floats:
        g = g.with_weights(np.asarray(g.weights, dtype=np.float64) / 7.0)
    if symmetric:
        g = g.symmetrized()
    auto = boruvka(g, device="auto")
    ours = boruvka(g, device="cpu")
    assert auto.device == "cpu" and ours.method == "boruvka"
    assert auto.method == ("scipy-kruskal" if g.n_edges else "boruvka")
    for name in ("src", "dst", "weights", "edge_ids"):
        np.testing.assert_array_equal(getattr(auto, name), getattr(ours, name), err_msg=name)
        assert getattr(auto, name).dtype == getattr(ours, name).dtype, name
    assert auto.total_weight == ours.total_weight and type(auto.total_weight) is type(
        ours.total_weight)
    assert auto.n_components == ours.n_components


@no_gpu
def test_boruvka_auto_with_wide_integer_weights():
    from morphgpu.mst import boruvka  # noqa: PLC0415

    rng = np.random.default_rng(4)
    g = generators.gnm(300, 2000, seed=2, device="cpu")
    w = rng.integers(-2**40, 2**40, g.n_edges) // 3 * 3  # ties too
    # every entry its own edge (directed storage: the twins' weights differ)
    g = CSRGraph.from_arrays(g.indptr, g.indices, w, directed=True)
    auto, ours = boruvka(g, device="auto"), boruvka(g, device="cpu")
    np.testing.assert_array_equal(auto.edge_ids, ours.edge_ids)
    assert auto.total_weight == ours.total_weight


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 60), density=st.floats(0.0, 0.3), seed=st.integers(0, 2**16),
       directed=st.booleans())
def test_distances_from_fifo_equal_scipys_distances(n, density, seed, directed):
    """The levels recovered from SciPy's FIFO order and predecessors (the CPU path's and
    the benchmark's reference) equal SciPy's own unweighted distances, from every source,
    with self-loops, duplicates, isolated vertices and unreached parts."""
    rng = np.random.default_rng(seed)
    m = int(density * n * n)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    matrix = sp.csr_matrix((np.ones(m), (src, dst)), shape=(n, n))
    if not directed:
        matrix = matrix + matrix.T
    for source in range(n):
        order, pred = csgraph.breadth_first_order(matrix, source, directed=True,
                                                  return_predecessors=True)
        expected = csgraph.shortest_path(matrix, unweighted=True, indices=source)
        expected = np.where(np.isinf(expected), -1, expected).astype(np.int32)
        np.testing.assert_array_equal(distances_from_fifo(order, pred, n), expected)
