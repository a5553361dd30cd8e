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
