"""Reliability of the MST wing's public arguments (boruvka, minimum_spanning_tree).

Bad arguments give a ValueError/TypeError naming the argument, good ones the right
answer (SciPy's forest, exact integer totals), and the caller's matrix is never changed.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from hypothesis import given, settings
from hypothesis import strategies as st

from morphgpu import mst
from morphgpu.csr import CSRGraph

DEVICES = ["cpu", "auto"]  # auto without a GPU: SciPy's Kruskal behind our checks
# The exact-total cases on the GPU as well: its kernel sums 64-bit integer weights modulo
# 2**64, so weights that do not narrow to int32 keys are summed on the host.
TOTAL_DEVICES = [*DEVICES, pytest.param("gpu", marks=pytest.mark.gpu)]


def _path(weights, dtype):
    """The path 0 - 1 - 2 - ... stored both ways, as a dense matrix of ``dtype``."""
    n = len(weights) + 1
    dense = np.zeros((n, n), dtype=dtype)
    for i, w in enumerate(weights):
        dense[i, i + 1] = dense[i + 1, i] = w
    return dense


# ----------------------------------------------------------------- exact integer totals
@pytest.mark.parametrize("device", TOTAL_DEVICES)
@pytest.mark.parametrize(("weights", "dtype"), [
    ([2**62, 2**62], np.int64),  # summed to -2**63 in int64 before
    ([2**63 - 1, 1], np.int64),
    ([-(2**63), -(2**63)], np.int64),
    ([1, 2**63], np.uint64),
    ([2**64 - 1, 2**64 - 1], np.uint64),  # device="auto": OverflowError before
])
def test_boruvka_total_of_64_bit_weights_is_exact(device, weights, dtype):
    dense = _path(weights, dtype)
    before = dense.copy()
    result = mst.boruvka(dense, device=device)
    assert result.total_weight == sum(weights)  # a path is its own spanning tree
    assert sorted(int(w) for w in result.weights) == sorted(weights)
    np.testing.assert_array_equal(dense, before)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6),
       st.sampled_from(DEVICES))
def test_boruvka_integer_total_equals_python_sum(weights, device):
    _check_integer_total(weights, device)


@pytest.mark.gpu
@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6))
def test_boruvka_integer_total_equals_python_sum_on_the_gpu(weights):
    _check_integer_total(weights, "gpu")


def _check_integer_total(weights, device):
    result = mst.boruvka(_path(weights, np.int64), device=device)
    assert isinstance(result.total_weight, int)
    assert result.total_weight == sum(int(w) for w in result.weights)
    # Zero entries of a dense matrix are no edge: the tree keeps the nonzero ones.
    assert result.total_weight == sum(w for w in weights if w != 0)


# ----------------------------------------------------------------- wrong types
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", ["abc", None, 5, 1.5, object()])
def test_non_graphs_are_type_errors_naming_the_argument(device, bad):
    # device="auto" said "a dense adjacency matrix must be square and 2-D, got shape ()"
    # of a string before; now both devices say what was expected.
    with pytest.raises(TypeError, match=r"minimum_spanning_tree\(csgraph\): expected"):
        mst.minimum_spanning_tree(bad, device=device)
    with pytest.raises(TypeError, match=r"boruvka\(graph\): expected"):
        mst.boruvka(bad, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", [
    np.zeros((3, 4)), sp.csr_matrix((3, 4)), np.zeros(3), np.zeros((2, 2, 2)),
    [[1, 2], [3]], np.array([["a", "b"], ["c", "d"]]), np.array([[0, 1j], [1j, 0]]),
    sp.csr_matrix(np.array([[0, 1 + 2j], [1, 0]])),
])
def test_malformed_matrices_name_the_argument(device, bad):
    with pytest.raises(ValueError, match=r"minimum_spanning_tree\(csgraph\)"):
        mst.minimum_spanning_tree(bad, device=device)
    with pytest.raises(ValueError, match=r"boruvka\(graph\)"):
        mst.boruvka(bad, device=device)


@pytest.mark.parametrize("device", [None, "", "GPU", "cuda", 0, "cpu "])
def test_unknown_device_is_a_value_error_naming_device(device):
    with pytest.raises(ValueError, match="device must be one of"):
        mst.minimum_spanning_tree(np.eye(3), device=device)
    with pytest.raises(ValueError, match="device must be one of"):
        mst.boruvka(np.eye(3), device=device)


# ----------------------------------------------------------------- NaN, inf, empty
@pytest.mark.parametrize("device", DEVICES)
def test_nan_in_a_sparse_input_is_refused_and_the_matrix_kept(device):
    m = sp.csr_matrix(np.array([[0, np.nan], [1.0, 0]]))
    data = m.data.copy()
    with pytest.raises(ValueError, match="NaN"):
        mst.minimum_spanning_tree(m, device=device)
    with pytest.raises(ValueError, match="NaN"):
        mst.boruvka(m, device=device)
    np.testing.assert_array_equal(m.data, data)


@pytest.mark.parametrize("device", DEVICES)
def test_infinite_sparse_weights_are_edges(device):
    m = sp.csr_matrix(np.array([[0, -np.inf, 5.0], [-np.inf, 0, np.inf], [5.0, np.inf, 0]]))
    result = mst.boruvka(m, device=device)
    assert result.total_weight == -np.inf
    assert result.n_components == 1


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("empty", [np.zeros((0, 0)), sp.csr_matrix((0, 0)), np.zeros((1, 1))])
def test_empty_and_single_vertex_graphs(device, empty):
    result = mst.boruvka(empty, device=device)
    assert result.n_edges == 0
    assert result.n_components == empty.shape[0]
    tree = mst.minimum_spanning_tree(empty, device=device)
    assert tree.shape == empty.shape and tree.nnz == 0


# ----------------------------------------------------------------- dtypes and layouts
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int8, np.uint8, np.uint64, bool])
def test_narrow_and_unsigned_dtypes_match_scipy(device, dtype):
    rng = np.random.default_rng(3)
    dense = np.triu(rng.integers(0, 4, size=(9, 9)), 1)
    dense = (dense + dense.T).astype(dtype)
    expected = csgraph.minimum_spanning_tree(dense.astype(np.float64)).sum()
    assert mst.minimum_spanning_tree(dense, device=device).sum() == pytest.approx(expected)
    assert float(mst.boruvka(dense, device=device).total_weight) == pytest.approx(expected)


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_and_read_only_inputs(device):
    rng = np.random.default_rng(5)
    big = rng.random((12, 12))
    big = big + big.T
    view = big[::2, ::2]  # neither C- nor F-contiguous
    view.setflags(write=False)
    expected = csgraph.minimum_spanning_tree(np.ascontiguousarray(view)).sum()
    assert mst.minimum_spanning_tree(view, device=device).sum() == pytest.approx(expected)
    assert mst.boruvka(np.asfortranarray(view), device=device).total_weight == pytest.approx(
        expected)


@pytest.mark.parametrize("device", DEVICES)
def test_csrgraph_with_narrow_index_arrays(device):
    g = CSRGraph.from_arrays(np.array([0, 1, 2, 3], dtype=np.int8),
                             np.array([1, 2, 0], dtype=np.uint64), np.array([4.0, 2.0, 1.0]))
    result = mst.boruvka(g, device=device)
    assert result.total_weight == 3.0
    assert mst.minimum_spanning_tree(g, device=device).sum() == 3.0


# ----------------------------------------------------------------- no mutation
@settings(max_examples=40, deadline=None)
@given(st.integers(1, 8), st.integers(0, 2**32 - 1), st.sampled_from(DEVICES),
       st.booleans())
def test_matches_scipy_and_leaves_the_input_alone(n, seed, device, overwrite):
    rng = np.random.default_rng(seed)
    dense = rng.integers(-3, 4, size=(n, n)).astype(np.float64)
    dense[rng.random((n, n)) < 0.4] = 0
    m = sp.csr_matrix(dense)
    data, indices, indptr = m.data.copy(), m.indices.copy(), m.indptr.copy()
    tree = mst.minimum_spanning_tree(m, overwrite, device=device)
    expected = csgraph.minimum_spanning_tree(sp.csr_matrix(dense))
    assert tree.sum() == pytest.approx(expected.sum())
    assert tree.nnz == expected.nnz
    np.testing.assert_array_equal(m.data, data)
    np.testing.assert_array_equal(m.indices, indices)
    np.testing.assert_array_equal(m.indptr, indptr)


# ----------------------------------------------------------------- a false symmetric claim
@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("part", ["lower", "upper", "lower and a bit"])
def test_false_symmetric_claim_is_refused(device, part):
    # Both paths read only the entries above the diagonal of a graph run as symmetric: a
    # lower-triangular matrix declared symmetric gave an empty forest (total 0).
    rng = np.random.default_rng(5)
    n = 40
    dense = np.triu(rng.integers(1, 100, (n, n)), 1)
    if part != "upper":
        dense = dense.T.copy()
    if part == "lower and a bit":
        dense[0, 1] = 7
    matrix = sp.csr_matrix(dense)
    with pytest.raises(ValueError, match=r"boruvka\(graph\): declared symmetric .* entries "
                                         r"above the diagonal"):
        mst.boruvka(matrix, device=device, symmetric=True)
    undirected = CSRGraph.from_scipy(matrix, directed=False)  # the same claim, as a flag
    with pytest.raises(ValueError, match="declared symmetric"):
        mst.boruvka(undirected, device=device)
    # Stored both ways, the claim holds and the forest is SciPy's.
    both = sp.csr_matrix(dense + dense.T)
    result = mst.boruvka(both, device=device, symmetric=True)
    assert result.total_weight == csgraph.minimum_spanning_tree(both).sum()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("fmt", ["lil", "dok", "bsr", "dia"])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_every_sparse_format_gives_scipy_forest(device, fmt, container):
    # device="auto" read LIL's object .data (refused as "not real numbers") and DOK's
    # missing .data (AttributeError) before.
    dense = np.array([[0, 3, 1, 0], [3, 0, 2, 0], [1, 2, 0, 5], [0, 0, 5, 0.]])
    m = container(dense).asformat(fmt)
    got = mst.minimum_spanning_tree(m, device=device)
    ref = csgraph.minimum_spanning_tree(m)
    assert type(got) is type(ref)
    np.testing.assert_array_equal(got.toarray(), ref.toarray())


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_matrix_gives_a_csr_matrix_as_scipy(device):
    dense = np.matrix([[0, 3, 1], [3, 0, 2], [1, 2, 0.]])
    got = mst.minimum_spanning_tree(dense, device=device)
    ref = csgraph.minimum_spanning_tree(dense)
    assert type(got) is type(ref) is sp.csr_matrix
    np.testing.assert_array_equal(got.toarray(), ref.toarray())


@st.composite
def stored_csr(draw):
    """A CSR matrix as a user may build it by hand: rows unsorted, entries repeated, zeros
    stored, any dtype (SciPy sums a non-float64 one's duplicates when it converts it)."""
    n = draw(st.integers(2, 9))
    m = draw(st.integers(1, 30))
    rows = np.sort(np.array(draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))))
    cols = np.array(draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)))
    weights = np.array(draw(st.lists(st.integers(0, 6), min_size=m, max_size=m)))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int64, np.int32]))
    indptr = np.searchsorted(rows, np.arange(n + 1))
    return sp.csr_matrix((weights.astype(dtype), cols, indptr), shape=(n, n))


@pytest.mark.parametrize("device", DEVICES)
@settings(max_examples=60, deadline=None)
@given(stored_csr())
def test_a_csr_matrix_as_stored_gives_scipys_forest(device, matrix):
    """SciPy's Kruskal reads a float64 CSR matrix's repeated entries as parallel edges (the
    lightest counts) and breaks ties in stored order; the shared conversion summed them, so
    edge (0, 1) of weights 1 and 2 came out 3. Same edges and weights as SciPy now, for
    every dtype."""
    before = (matrix.data.copy(), matrix.indices.copy(), matrix.indptr.copy())
    got = mst.minimum_spanning_tree(matrix, device=device)
    ref = csgraph.minimum_spanning_tree(matrix)
    assert type(got) is type(ref)
    np.testing.assert_array_equal(got.toarray(), ref.toarray())
    for a, b in zip(before, (matrix.data, matrix.indices, matrix.indptr), strict=True):
        np.testing.assert_array_equal(a, b)
