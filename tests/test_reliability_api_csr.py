"""Reliability of CSRGraph's constructors and conversions: malformed arguments give a
GraphFormatError (a ValueError) naming the argument, never a wrong graph or a crash."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu.csr import CSRGraph, GraphFormatError


@pytest.mark.parametrize("n", [1.5, "1", True, None])
def test_from_arrays_vertex_count_must_be_an_integer(n):
    if n is None:  # None means "from indptr"
        assert CSRGraph.from_arrays([0, 1], [0], n_vertices=n).n_vertices == 1
        return
    with pytest.raises(GraphFormatError, match="n_vertices must be an integer"):
        CSRGraph.from_arrays([0, 1], [0], n_vertices=n)


@pytest.mark.parametrize("n", [2.5, "3", np.bool_(True)])
def test_from_edges_vertex_count_must_be_an_integer(n):
    # int() read 2.5 as 2 and "3" as 3 before
    with pytest.raises(GraphFormatError, match="n_vertices must be an integer"):
        CSRGraph.from_edges([0], [1], n_vertices=n)


def test_string_weights_are_refused():
    with pytest.raises(GraphFormatError, match="weights must be real numbers"):
        CSRGraph.from_arrays(np.array([0, 1]), np.array([0]), np.array(["x"]))
    with pytest.raises(GraphFormatError, match="weights must be real numbers"):
        CSRGraph.from_edges([0, 1], [1, 0], ["a", "b"])


@pytest.mark.parametrize("rule", ["x", "MIN", "", 0])
def test_unknown_merge_rules_are_refused(rule):
    # any unknown string merged by "max", silently, before
    with pytest.raises(GraphFormatError, match="merge_duplicates"):
        CSRGraph.from_edges([0, 0], [1, 1], [1.0, 2.0], merge_duplicates=rule)
    g = CSRGraph.from_edges([0, 1], [1, 2], [1.0, 2.0])
    with pytest.raises(GraphFormatError, match="merge_duplicates"):
        g.symmetrized(rule)


@pytest.mark.parametrize("perm", [[0, 0, 1], [-1, 0, 1], [0, 1, 5], [0.5, 1, 2], "abc", None,
                                  [0, 1]])
def test_permuted_needs_a_permutation(perm):
    # [0, 0, 1] and [-1, 0, 1] gave a different graph, [0, 1, 5] an IndexError
    g = CSRGraph.from_edges([0, 1], [1, 2])
    with pytest.raises(GraphFormatError, match="perm"):
        g.permuted(perm)


@pytest.mark.parametrize("side", ["GPU", "cuda", None, ""])
def test_to_an_unknown_side_is_refused(side):
    # the host graph came back as if moved, before
    with pytest.raises(ValueError, match="side must be 'cpu' or 'gpu'"):
        CSRGraph.from_edges([0], [1]).to(side)


@pytest.mark.parametrize(("indptr", "indices", "message"), [
    ([1, 1], [0], r"indptr\[0\] must be 0"), ([0, 2], [0], r"indptr\[-1\]=2"),
    ([0, 1], [5], "outside"), ([0, 1], [-1], "outside"), ([0.0, 1.0], [0], "integer"),
    ([], [], "at least one entry"), ([[0, 1]], [0], "one-dimensional"),
    (np.array([0, 1], dtype=np.uint64), np.array([2**64 - 1], dtype=np.uint64), "outside"),
])
def test_from_arrays_malformed(indptr, indices, message):
    with pytest.raises(GraphFormatError, match=message):
        CSRGraph.from_arrays(np.asarray(indptr), np.asarray(indices))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30),
    st.permutations(range(n)))),
    st.sampled_from([np.int8, np.int32, np.uint64, np.int64]))
def test_from_edges_and_permuted_keep_the_edges(case, dtype):
    n, edges, perm = case
    src = np.array([u for u, _ in edges], dtype=dtype)
    dst = np.array([v for _, v in edges], dtype=dtype)
    src_before, dst_before = src.copy(), dst.copy()
    src.setflags(write=False)  # read-only inputs are fine
    g = CSRGraph.from_edges(src, dst[::-1][::-1], n_vertices=n)
    np.testing.assert_array_equal(src, src_before)
    np.testing.assert_array_equal(dst, dst_before)
    got = sorted(zip(g.edge_sources().tolist(), g.indices.tolist()))
    assert got == sorted((int(u), int(v)) for u, v in edges)
    p = g.permuted(np.array(perm))
    inverse = np.argsort(perm)
    moved = sorted(zip(p.edge_sources().tolist(), p.indices.tolist()))
    assert moved == sorted((int(inverse[u]), int(inverse[v])) for u, v in edges)


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_masked_arrays_follow_scipy_unmasked_entries_are_edges(device):
    # The mask was dropped before (np.asarray): masked entries were edges and unmasked
    # zeros were not, a silently different graph from SciPy's.
    import scipy.sparse.csgraph as csgraph  # noqa: PLC0415

    from morphgpu import bfs, mst  # noqa: PLC0415

    data = np.array([[0, 1, 0], [0, 0, 4], [0, 2, 0.]])
    for mask in ([[0, 1, 0], [0, 0, 0], [0, 0, 0]], False):
        graph = np.ma.masked_array(data, mask=mask)
        for directed in (True, False):
            ref = csgraph.breadth_first_order(graph, 0, directed=directed)
            got = bfs.breadth_first_order(graph, 0, directed=directed, device=device)
            np.testing.assert_array_equal(got[0], ref[0])
            np.testing.assert_array_equal(got[1], ref[1])
        ref = csgraph.minimum_spanning_tree(graph)
        got = mst.minimum_spanning_tree(graph, device=device)
        assert type(got) is type(ref)
        np.testing.assert_array_equal(got.toarray(), ref.toarray())
