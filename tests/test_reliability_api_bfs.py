"""Reliability of the BFS wing's public arguments (bfs, breadth_first_order).

The sweep found no defect here: these tests pin what it checked. Bad sources, graphs,
devices and variants give a ValueError naming the argument; good inputs of any index
dtype, layout or writeability give SciPy's answer and are never changed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import bfs
from morphgpu.csr import CSRGraph

DEVICES = ["cpu", "auto"]
A = sp.random(10, 10, density=0.3, format="csr", random_state=1)
D = A.toarray()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("source", [-1, 10, 2**70, True, np.bool_(True), 1.0, np.float64(1),
                                    "0", None, np.array([3])])
def test_bad_sources_name_the_argument(device, source):
    with pytest.raises(ValueError, match="source"):
        bfs.bfs(D, source, device=device)
    for graph in (A, D):
        with pytest.raises(ValueError, match="i_start"):
            bfs.breadth_first_order(graph, source, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("source", [np.int8(3), np.uint64(3), np.array(3), np.int64(3)])
def test_integer_scalars_of_any_type_are_sources(device, source):
    expected = csgraph.breadth_first_order(A, 3, return_predecessors=True)
    got = bfs.breadth_first_order(A, source, device=device)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    assert bfs.bfs(D, source, device=device).source == 3


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("graph", [np.zeros((3, 4)), sp.csr_matrix((3, 4)), np.zeros(3), "abc",
                                   None, 5, [[1, 2], [3]], np.array([["a", "b"], ["c", "d"]])])
def test_bad_graphs_are_value_errors(device, graph):
    with pytest.raises(ValueError, match="graph"):
        bfs.bfs(graph, 0, device=device)
    with pytest.raises(ValueError, match="graph"):
        bfs.breadth_first_order(graph, 0, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("empty", [np.zeros((0, 0)), sp.csr_matrix((0, 0))])
def test_empty_graphs_have_no_source(device, empty):
    with pytest.raises(ValueError, match="no vertices"):
        bfs.bfs(empty, 0, device=device)


@pytest.mark.parametrize("device", [None, "", "GPU", "cuda", "cpu ", 0])
def test_unknown_devices(device):
    with pytest.raises(ValueError, match="device must be one of"):
        bfs.bfs(D, 0, device=device)
    with pytest.raises(ValueError, match="device must be one of"):
        bfs.breadth_first_order(A, 0, device=device)


@pytest.mark.parametrize("variant", ["nope", None, 3, "", "AUTO"])
def test_unknown_variants(variant):
    with pytest.raises(ValueError, match="variant"):
        bfs.bfs(D, 0, variant=variant, device="cpu")


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"partitions": 0}, "partitions"), ({"partitions": 1.5}, "partitions"),
    ({"partitions": True}, "partitions"), ({"partitions": 100}, "partitions"),
    ({"devices": []}, "devices"), ({"devices": 0}, "devices"), ({"devices": [0.5]}, "devices"),
    ({"previous": object()}, "previous"),
])
def test_partition_and_previous_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        bfs.bfs(D, 0, device="cpu", **kwargs)


@pytest.mark.parametrize("device", DEVICES)
def test_nan_and_inf_entries_of_a_dense_matrix_are_no_edge(device):
    dense = np.array([[np.nan, 1.0, np.inf], [0, 0, -np.inf], [0, 0, 0]])
    assert bfs.bfs(dense, 0, device=device).distances.tolist() == [0, 1, -1]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 15), st.integers(0, 2**32 - 1), st.sampled_from(DEVICES),
       st.sampled_from([np.int8, np.int16, np.uint32, np.uint64, np.int64]),
       st.booleans(), st.data())
def test_matches_scipy_for_any_index_dtype_and_leaves_inputs_alone(n, seed, device, dtype,
                                                                  directed, data):
    rng = np.random.default_rng(seed)
    dense = (rng.random((n, n)) < 0.25).astype(np.float64)
    m = sp.csr_matrix(dense)
    indptr, indices = m.indptr.astype(dtype), m.indices.astype(dtype)
    indptr.setflags(write=False)
    kept = indptr.copy(), indices.copy()
    g = CSRGraph.from_arrays(indptr, indices[::-1][::-1], n_vertices=n)  # a fresh view
    source = data.draw(st.integers(0, n - 1))
    order, pred = bfs.breadth_first_order(g, source, directed=directed, device=device)
    ref_order, ref_pred = csgraph.breadth_first_order(m, source, directed=directed)
    np.testing.assert_array_equal(order, ref_order)
    np.testing.assert_array_equal(pred, ref_pred)
    dist = bfs.bfs(g, source, device=device).distances
    ref = csgraph.shortest_path(m, unweighted=True, indices=source)
    np.testing.assert_array_equal(dist, np.where(np.isinf(ref), -1, ref).astype(np.int32))
    np.testing.assert_array_equal(indptr, kept[0])
    np.testing.assert_array_equal(indices, kept[1])


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("fmt", ["unsorted", "csc"])
def test_order_of_unsorted_rows_and_csc_matrices_is_scipys(fmt, directed):
    # device="cpu" searched the canonical (sorted) matrix, and read a CSC matrix by rows
    # where SciPy's directed=False search reads its transpose: another order before.
    rng = np.random.default_rng(7)
    for _ in range(40):
        n = int(rng.integers(2, 10))
        m = int(rng.integers(1, 25))
        r, c = np.sort(rng.integers(0, n, m)), rng.integers(0, n, m)
        indptr = np.concatenate([[0], np.cumsum(np.bincount(r, minlength=n))])
        raw = sp.csr_matrix((np.ones(m), c, indptr), shape=(n, n))  # rows as drawn
        graph = raw if fmt == "unsorted" else sp.csc_matrix(raw.toarray())
        source = int(rng.integers(0, n))
        ref = csgraph.breadth_first_order(graph, source, directed=directed)
        got = bfs.breadth_first_order(graph, source, directed=directed, device="cpu")
        np.testing.assert_array_equal(got[0], ref[0])
        np.testing.assert_array_equal(got[1], ref[1])
