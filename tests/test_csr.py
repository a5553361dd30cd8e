"""CSRGraph: construction, validation and transformations, checked against SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from morphgpu import backend
from morphgpu.csr import CSRGraph, GraphFormatError, index_dtype


@st.composite
def edge_lists(draw, max_n=30, max_m=80):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(0, max_m))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = draw(st.lists(st.integers(-5, 5), min_size=m, max_size=m))
    return n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(w, float)


def host(g: CSRGraph) -> CSRGraph:
    return g.to("cpu")


@given(edge_lists())
def test_from_edges_matches_scipy_coo(data):
    n, src, dst, w = data
    g = CSRGraph.from_edges(src, dst, w, n_vertices=n, merge_duplicates="sum")
    ref = sp.coo_matrix((w, (src, dst)), shape=(n, n)).tocsr()  # sums duplicates
    ref.sort_indices()
    assert np.array_equal(g.indptr, ref.indptr)
    assert np.array_equal(g.indices, ref.indices)
    assert np.allclose(g.weights, ref.data)


@given(edge_lists())
def test_symmetrized_min_is_the_min_of_both_directions(data):
    n, src, dst, w = data
    g = CSRGraph.from_edges(src, dst, w, n_vertices=n).symmetrized("min")
    best: dict[tuple[int, int], float] = {}
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        if u == v:
            continue
        for key in ((u, v), (v, u)):
            best[key] = min(best.get(key, np.inf), x)
    got = {}
    rows = np.repeat(np.arange(n), np.diff(g.indptr))
    for u, v, x in zip(rows.tolist(), g.indices.tolist(), g.weights.tolist()):
        assert (u, v) not in got, "duplicate edge survived merging"
        got[(u, v)] = x
    assert got == best


@given(edge_lists(), st.randoms(use_true_random=False))
def test_permuted_relabels_edges(data, rnd):
    n, src, dst, w = data
    g = CSRGraph.from_edges(src, dst, w, n_vertices=n)
    perm = np.arange(n)
    rnd.shuffle(perm)
    p = g.permuted(perm)
    inv = np.empty(n, dtype=np.int64)
    inv[perm] = np.arange(n)
    a = sorted(zip(inv[g.edge_sources()].tolist(), inv[g.indices].tolist(), g.weights.tolist()))
    b = sorted(zip(p.edge_sources().tolist(), p.indices.tolist(), p.weights.tolist()))
    assert a == b


def test_same_graph_on_both_sides(device):
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 50, 400), rng.integers(0, 50, 400)
    w = rng.random(400)
    xp = backend.xp_for(device)
    g = CSRGraph.from_edges(xp.asarray(src), xp.asarray(dst), xp.asarray(w), n_vertices=50,
                            symmetrize=True, drop_self_loops=True, merge_duplicates="min")
    assert g.side == device
    c = CSRGraph.from_edges(src, dst, w, n_vertices=50, symmetrize=True,
                            drop_self_loops=True, merge_duplicates="min")
    assert np.array_equal(backend.to_host(g.indptr), c.indptr)
    assert np.array_equal(backend.to_host(g.indices), c.indices)
    assert np.allclose(backend.to_host(g.weights), c.weights)


def test_from_scipy_keeps_explicit_zeros_and_sorts():
    m = sp.csr_matrix((np.array([0.0, 2.0, 1.0]), np.array([2, 0, 1]), np.array([0, 3, 3, 3])),
                      shape=(3, 3))
    g = CSRGraph.from_scipy(m)
    assert g.indices.tolist() == [0, 1, 2]
    assert g.weights.tolist() == [2.0, 1.0, 0.0]


def test_dense_input_treats_zero_as_missing():
    g = CSRGraph.coerce(np.array([[0, 3], [0, 0]]))
    assert g.n_edges == 1 and g.indices.tolist() == [1]


@pytest.mark.parametrize(
    "indptr,indices,match",
    [
        ([0, 2, 1, 2], [0, 1], "decreases at row 1"),
        ([1, 2], [0], "indptr\\[0\\] must be 0"),
        ([0, 1, 3], [0, 1], "indptr\\[-1\\]=3"),
        ([0, 1, 2], [0, 7], "column index 7 at position 1"),
        ([0, 1, 2], [0, -1], "column index -1"),
    ],
)
def test_validation_names_the_problem(indptr, indices, match):
    with pytest.raises(GraphFormatError, match=match):
        CSRGraph.from_arrays(np.array(indptr), np.array(indices))


def test_edge_list_validation():
    with pytest.raises(GraphFormatError, match="vertex >= n_vertices=3"):
        CSRGraph.from_edges(np.array([0, 3]), np.array([1, 1]), n_vertices=3)
    with pytest.raises(GraphFormatError, match="negative vertex id"):
        CSRGraph.from_edges(np.array([0, -1]), np.array([1, 1]))
    with pytest.raises(GraphFormatError, match="src has 2 entries but dst has 1"):
        CSRGraph.from_edges(np.array([0, 1]), np.array([1]))
    with pytest.raises(GraphFormatError, match="weights has 1 entries"):
        CSRGraph.from_edges(np.array([0, 1]), np.array([1, 0]), np.array([1.0]))


def test_index_types_grow_with_size():
    assert index_dtype(10) == np.int32
    assert index_dtype(2**31 - 1) == np.int32
    assert index_dtype(2**31) == np.int64


def test_empty_graph():
    g = CSRGraph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64),
                            n_vertices=4)
    assert g.n_vertices == 4 and g.n_edges == 0 and g.indptr.tolist() == [0] * 5
    g0 = CSRGraph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert g0.n_vertices == 0


def test_transpose_reverses_edges():
    g = CSRGraph.from_edges(np.array([0, 0, 2]), np.array([1, 2, 1]), np.array([1.0, 2, 3]))
    t = g.transpose()
    assert (t.to_scipy() != g.to_scipy().T).nnz == 0
