"""Borůvka MST on both sides, checked against SciPy and networkx (independent code).

Every check that matters is made by code other than ours: SciPy's Kruskal for the total
weight (and, since both order ties by CSR position, for the very edges), SciPy's
connected_components for the component count, networkx for acyclicity, and a set of the
input's (row, column, weight) triples for "every edge comes from the input".
"""

from __future__ import annotations

import math
import re

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst

from morphgpu import backend
from morphgpu.csr import CSRGraph
from morphgpu.mst import boruvka, minimum_spanning_tree
from morphgpu.mst import keys as keymod

# The device fixture is a plain string, safe to share between generated examples.
SHARED_FIXTURE_OK = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def csr_from_entries(n: int, rows, cols, weights) -> sp.csr_matrix:
    """A canonical CSR matrix of the listed entries (duplicates summed, as SciPy does)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    matrix = sp.csr_matrix(sp.coo_matrix((np.asarray(weights), (rows, cols)), shape=(n, n)))
    matrix.sum_duplicates()
    return matrix


def multigraph(n: int, rows, cols, weights) -> CSRGraph:
    """A CSRGraph keeping every listed entry: repeated (u, v) are parallel edges."""
    return CSRGraph.from_edges(
        np.asarray(rows), np.asarray(cols), np.asarray(weights), n_vertices=n
    )


def lightest_parallel(graph: CSRGraph) -> sp.csr_matrix:
    """The matrix with one entry per (u, v), the lightest of the parallel ones (plain Python)."""
    best: dict[tuple[int, int], float] = {}
    src = graph.edge_sources().tolist()
    for u, v, w in zip(src, graph.indices.tolist(), graph.weights.tolist()):
        best[(u, v)] = min(w, best.get((u, v), w))
    if not best:
        return sp.csr_matrix((graph.n_vertices, graph.n_vertices))
    (rows, cols), w = zip(*best.keys()), list(best.values())
    return sp.csr_matrix(
        (np.asarray(w, dtype=np.float64), (rows, cols)), shape=(graph.n_vertices,) * 2
    )


def check_forest(matrix: sp.csr_matrix, result, *, exact: bool, entries=None) -> None:
    """Total weight, component count, acyclicity, edges from the input.

    ``entries``: the input's (row, column, weight) triples when ``matrix`` is not the
    input itself (a multigraph reduced to its lightest parallel edges).
    """
    n = matrix.shape[0]
    expected_total = scipy_mst(matrix).sum() if matrix.nnz else 0.0
    if exact:
        assert result.total_weight == int(round(expected_total))
    else:
        assert math.isclose(result.total_weight, expected_total, rel_tol=1e-9, abs_tol=1e-9)
    n_comp = connected_components(matrix, directed=False)[0] if n else 0
    assert result.n_components == n_comp
    src, dst, w = (backend.to_host(a) for a in (result.src, result.dst, result.weights))
    assert src.size == n - n_comp
    forest = nx.Graph()
    forest.add_nodes_from(range(n))
    forest.add_edges_from(zip(src.tolist(), dst.tolist()))
    assert forest.number_of_edges() == src.size, "two forest edges join the same pair"
    assert nx.is_forest(forest) if n else True
    assert nx.number_connected_components(forest) == n_comp if n else True
    if entries is None:
        coo = matrix.tocoo()
        entries = set(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()))
    for triple in zip(src.tolist(), dst.tolist(), w.tolist()):
        assert triple in entries, f"forest edge {triple} is not an input entry"
    assert not np.any(src == dst)


@st.composite
def random_graphs(draw, weight_kind: str = "int"):
    n = draw(st.integers(0, 40))
    if n == 0:
        return csr_from_entries(0, [], [], np.zeros(0))
    m = draw(st.integers(0, 4 * n + 10))
    rows = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    cols = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    if weight_kind == "int":
        w = draw(st.lists(st.integers(-8, 8), min_size=m, max_size=m))
        weights = np.asarray(w, dtype=np.int64)
    else:
        w = draw(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=m, max_size=m))
        weights = np.asarray(w, dtype=np.float64)
    return csr_from_entries(n, rows, cols, weights)


@SHARED_FIXTURE_OK
@given(graph=random_graphs("int"))
def test_integer_weights_match_scipy_exactly(device, graph):
    result = boruvka(graph, device=device)
    check_forest(graph, result, exact=True)


@SHARED_FIXTURE_OK
@given(graph=random_graphs("float"))
def test_float_weights_match_scipy(device, graph):
    result = boruvka(graph, device=device)
    check_forest(graph, result, exact=False)


@SHARED_FIXTURE_OK
@given(graph=random_graphs("int"))
def test_same_matrix_as_scipy(device, graph):
    # Both order ties by CSR position, so the trees are the same, entry for entry.
    ours = minimum_spanning_tree(graph, device=device)
    theirs = scipy_mst(graph)
    assert type(ours) is type(theirs)
    assert ours.dtype == np.float64
    assert (ours != theirs).nnz == 0


def symmetric_graph(n: int, m: int, seed: int, *, int_weights: bool = True) -> CSRGraph:
    rng = np.random.default_rng(seed)
    u = rng.integers(0, n, m)
    v = rng.integers(0, n, m)
    w = rng.integers(1, 20, m) if int_weights else rng.random(m)
    return CSRGraph.from_edges(
        u, v, w, n_vertices=n, symmetrize=True, drop_self_loops=True, merge_duplicates="min"
    )


@pytest.mark.parametrize("n,m", [(200, 150), (300, 900), (100, 2000)])
def test_undirected_csrgraph_uses_half_and_agrees(device, n, m):
    graph = symmetric_graph(n, m, seed=n + m)
    assert not graph.directed
    half = boruvka(graph, device=device)
    full = boruvka(graph, device=device, symmetric=False)
    assert np.array_equal(backend.to_host(half.edge_ids), backend.to_host(full.edge_ids))
    assert half.n_rounds == full.n_rounds
    check_forest(graph.to_scipy(), half, exact=True)


def test_dense_graph_takes_several_passes_and_stays_right(device):
    # 30 entries per vertex: the edges go in five passes of increasing key; the answer
    # must not change.
    graph = symmetric_graph(400, 6000, seed=3)
    keys = keymod.weight_keys(np, graph.weights)
    assert len(keymod.pass_limits(keys, graph.n_vertices)) == 5
    result = boruvka(graph, device=device)
    check_forest(graph.to_scipy(), result, exact=True)


def test_pass_plan_follows_the_key_quantiles():
    n = 1000
    rng = np.random.default_rng(8)
    # Under 3 entries per vertex: one pass.
    assert keymod.pass_limits(rng.integers(0, 2**20, 2999).astype(np.uint32), n) == [
        keymod.ALL_KEYS]
    # 8 per vertex, distinct keys: passes up to the sampled quantiles of 1.5 and 3 per
    # vertex (3 / 16 and 6 / 16 of the entries), then the rest.
    keys = rng.permutation(8 * n).astype(np.uint32)
    low, high, last = keymod.pass_limits(keys, n)
    assert last == keymod.ALL_KEYS
    assert 0.1 < low / keys.size < 0.3 and 0.28 < high / keys.size < 0.48
    # Ties: a limit equal to the one before, or to the largest key, would make an empty
    # pass and is skipped.
    assert keymod.pass_limits(np.full(8 * n, 7, dtype=np.uint32), n) == [7, keymod.ALL_KEYS]
    top = np.full(8 * n, keymod.ALL_KEYS, dtype=np.uint32)
    assert keymod.pass_limits(top, n) == [keymod.ALL_KEYS]


def test_disconnected_with_isolated_vertices(device):
    # Two triangles, a path, and three isolated vertices.
    rows = [0, 1, 2, 3, 4, 5, 6, 7]
    cols = [1, 2, 0, 4, 5, 3, 7, 8]
    w = [3, 1, 2, 5, 5, 5, 1, 1]
    graph = csr_from_entries(12, rows, cols, np.asarray(w))
    result = boruvka(graph, device=device)
    assert result.n_components == 2 + 1 + 3
    assert result.total_weight == (1 + 2) + (5 + 5) + (1 + 1)
    check_forest(graph, result, exact=True)


def triples(graph: CSRGraph) -> set:
    return set(zip(graph.edge_sources().tolist(), graph.indices.tolist(), graph.weights.tolist()))


def test_parallel_edges_and_self_loops(device):
    # 0-1 three times (weights 9, 4, 7, one of them stored as 1-0), a heavy self-loop,
    # a negative self-loop.
    graph = multigraph(3, [0, 0, 1, 1, 1, 2], [1, 1, 0, 1, 2, 2], [9, 4, 7, 100, 6, -50])
    result = boruvka(graph, device=device)
    assert result.total_weight == 4 + 6
    assert sorted(backend.to_host(result.weights).tolist()) == [4, 6]
    check_forest(lightest_parallel(graph), result, exact=True, entries=triples(graph))


@SHARED_FIXTURE_OK
@given(
    n=st.integers(1, 30),
    edges=st.lists(
        st.tuples(st.integers(0, 29), st.integers(0, 29), st.integers(-5, 5)), max_size=150
    ),
)
def test_multigraphs_match_their_lightest_parallel_edges(device, n, edges):
    edges = [(u % n, v % n, w) for u, v, w in edges]
    rows, cols, w = (list(x) for x in zip(*edges)) if edges else ([], [], [])
    graph = multigraph(n, rows, cols, np.asarray(w, dtype=np.int64))
    result = boruvka(graph, device=device)
    check_forest(lightest_parallel(graph), result, exact=True, entries=triples(graph))


def test_equal_weights_everywhere(device):
    n = 64
    dense = np.ones((n, n)) - np.eye(n)
    result = boruvka(dense, device=device)
    assert result.total_weight == n - 1
    assert result.n_components == 1
    # Ties go to the lowest CSR position: the star around vertex 0 (row 0's entries).
    assert set(backend.to_host(result.src).tolist()) == {0}


def test_explicit_zeros_follow_scipy(device):
    # Sparse: a stored zero is an edge (used), and dropped from the returned matrix.
    graph = sp.csr_matrix(
        sp.coo_matrix((np.array([0.0, 5.0, 10.0]), ([0, 1, 0], [1, 2, 2])), shape=(3, 3))
    )
    result = boruvka(graph, device=device)
    assert result.total_weight == 5.0
    assert result.n_edges == 2 and 0.0 in backend.to_host(result.weights).tolist()
    tree = minimum_spanning_tree(graph, device=device)
    assert tree.nnz == 1 and tree[1, 2] == 5.0
    assert (tree != scipy_mst(graph)).nnz == 0
    # Dense: zeros, NaN and infinities are missing edges.
    dense = np.array([[0, np.inf, 2.0], [np.inf, 0, np.nan], [2.0, np.nan, 0]])
    result = boruvka(dense, device=device)
    assert result.n_components == 2 and result.total_weight == 2.0
    assert (minimum_spanning_tree(dense, device=device) != scipy_mst(dense)).nnz == 0


def test_negative_zero_ties_with_zero_as_in_scipy(device):
    # -0.0 == 0.0: a tie, so the lower CSR position wins, as in SciPy (not the sign bit).
    for w in ([0.0, -0.0, -0.0], [0.0, 0.0, -0.0]):
        for dtype in (np.float32, np.float64):
            graph = sp.csr_matrix(sp.coo_matrix(
                (np.array(w, dtype=dtype), ([0, 0, 1], [1, 2, 2])), shape=(3, 3)))
            result = boruvka(graph, device=device)
            assert sorted(backend.to_host(result.edge_ids).tolist()) == [0, 1]


@pytest.mark.parametrize(
    "dtype",
    [np.int8, np.uint16, np.int32, np.uint32, np.int64, np.float16, np.float32, np.float64, bool],
)
def test_weight_dtypes(device, dtype):
    rng = np.random.default_rng(7)
    n, m = 60, 300
    if dtype is bool:
        w = rng.integers(0, 2, m).astype(bool)
    elif np.dtype(dtype).kind == "u":
        w = rng.integers(0, 50, m).astype(dtype)
    elif np.dtype(dtype).kind == "i":
        w = rng.integers(-50, 50, m).astype(dtype)
    else:
        w = (rng.random(m) * 10 - 5).astype(dtype)
    graph = multigraph(n, rng.integers(0, n, m), rng.integers(0, n, m), w)
    result = boruvka(graph, device=device)
    exact = np.dtype(dtype).kind in "iub"
    check_forest(lightest_parallel(graph), result, exact=exact, entries=triples(graph))


def test_wide_integer_weights_are_exact(device):
    # Beyond int32 and beyond float64's integers: keys come from ranks, sums from int64.
    big = 2**62
    w = np.array([big, big - 1, big - 3, 5, -big, big - 2], dtype=np.int64)
    graph = csr_from_entries(4, [0, 0, 1, 2, 3, 1], [1, 2, 2, 3, 0, 3], w)
    result = boruvka(graph, device=device)
    # Kruskal by hand: -big (3-0), 5 (2-3), then big-3 (1-2).
    assert result.total_weight == -big + 5 + (big - 3)


def test_float64_weights_that_need_ranks(device):
    # Distinct in float64, all equal in float32: a float32 key would break the tie by
    # position (entries 0 and 1); the true order picks entries 1 (weight 1.0) and 2.
    w = np.array([1.0 + 2**-40, 1.0 + 2**-41, 1.0])
    graph = csr_from_entries(3, [0, 1, 0], [1, 2, 2], w)
    result = boruvka(graph, device=device)
    assert backend.to_host(result.edge_ids).tolist() == [1, 2]
    assert result.total_weight == 1.0 + (1.0 + 2**-41)


def test_unweighted_graph_counts_edges(device):
    graph = symmetric_graph(500, 400, seed=11)
    graph = CSRGraph(graph.indptr, graph.indices, None, graph.n_vertices, graph.directed)
    result = boruvka(graph, device=device)
    assert result.total_weight == 500 - result.n_components
    check_forest(graph.to_scipy(), result, exact=True)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_graphs(device, n):
    result = boruvka(np.zeros((n, n)), device=device)
    assert result.n_edges == 0 and result.n_components == n and result.total_weight == 0
    assert minimum_spanning_tree(np.zeros((n, n)), device=device).shape == (n, n)


def test_rounds_are_logarithmic(device):
    # Every round at least halves the components that still have an edge out, per pass.
    graph = symmetric_graph(4096, 30000, seed=5)
    passes = len(keymod.pass_limits(keymod.weight_keys(np, graph.weights), 4096))
    result = boruvka(graph, device=device)
    assert 1 <= result.n_rounds <= passes * (math.ceil(math.log2(4096)) + 1)


def test_result_side_follows_input(device):
    graph = symmetric_graph(50, 100, seed=1)
    result = boruvka(graph, device=device)
    assert backend.side_of(result.src) == "cpu"
    assert result.device == device
    assert isinstance(result.to_scipy(), sp.csr_array)


@pytest.mark.gpu
def test_cupy_inputs_give_cupy_results():
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as cusp

    # CuPy's sparse matrices hold floats only; integral values keep the totals exact.
    host = symmetric_graph(300, 1200, seed=2).to_scipy().astype(np.float64)
    result = boruvka(cusp.csr_matrix(host), device="gpu")
    assert backend.side_of(result.edge_ids) == "gpu"
    check_forest(host, result, exact=True)
    tree = minimum_spanning_tree(cusp.csr_matrix(host), device="gpu")
    assert isinstance(tree, cusp.csr_matrix)
    assert (sp.csr_matrix(tree.get()) != scipy_mst(host)).nnz == 0
    result = boruvka(cp.asarray(host.toarray().astype(np.int64)), device="auto")
    assert backend.side_of(result.src) == "gpu"
    check_forest(host, result, exact=True)


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["symmetric", "asymmetric", "unsorted", "hubs", "zeros"])
def test_cupy_matrix_door_matches_scipy_and_repeats(case):
    """minimum_spanning_tree on CuPy matrices: stored both ways (the kernel's twin skip),
    with differing twin weights, unsorted rows, hub rows (binary-searched twins), zero
    tree edges; called twice (the kept runner) and after an in-place weight change."""
    import cupyx.scipy.sparse as cusp

    rng = np.random.default_rng(3)
    graph = hub_graph(3000, 20000, seed=4) if case == "hubs" else symmetric_graph(
        2000, 9000, seed=4)
    host = graph.to_scipy().astype(np.float64).tocsr()
    if case == "asymmetric":
        host.data = host.data + rng.integers(0, 3, host.data.size)
    if case == "zeros":
        host.data[rng.random(host.data.size) < 0.2] = 0.0
    on_gpu = cusp.csr_matrix(host)
    if case == "unsorted":  # every row reversed, so the binary search misses twins
        host = host.copy()
        for r in range(host.shape[0]):
            a, b = host.indptr[r], host.indptr[r + 1]
            host.indices[a:b] = host.indices[a:b][::-1].copy()
            host.data[a:b] = host.data[a:b][::-1].copy()
        host.has_sorted_indices = False
        on_gpu = cusp.csr_matrix((cp_asarray(host.data), cp_asarray(host.indices),
                                  cp_asarray(host.indptr)), shape=host.shape)
    # A float64 matrix not in canonical format is read as stored, as SciPy reads it (ties
    # among equal weights in stored order; mst/api.py, _stored_rows): SciPy's forest of the
    # same matrix, the unsorted one included.
    def reference():
        return scipy_mst(host)

    for _ in range(2):
        tree = minimum_spanning_tree(on_gpu, device="gpu")
        assert (sp.csr_matrix(tree.get()) != reference()).nnz == 0
        assert float(tree.sum()) == pytest.approx(scipy_mst(host).sum())
    on_gpu.data *= 2  # in place: the cache's fingerprint sees it, the runner rebinds
    host.data *= 2
    tree = minimum_spanning_tree(on_gpu, device="gpu")
    assert (sp.csr_matrix(tree.get()) != reference()).nnz == 0


def cp_asarray(a):
    return backend.cupy_module().asarray(a)


def hub_graph(n: int, extra: int, seed: int) -> CSRGraph:
    """Vertex 0 joined to every other vertex (a row far past the kernel's 1024-entry
    "huge row" limit) plus random edges: at least 8 entries per vertex, so several passes."""
    rng = np.random.default_rng(seed)
    u = np.concatenate([np.zeros(n - 1, dtype=np.int64), rng.integers(0, n, extra)])
    v = np.concatenate([np.arange(1, n), rng.integers(0, n, extra)])
    w = rng.integers(1, 1000, u.size)
    return CSRGraph.from_edges(
        u, v, w, n_vertices=n, symmetrize=True, drop_self_loops=True, merge_duplicates="min"
    )


def test_hub_rows_in_both_passes(device):
    graph = hub_graph(3000, 12000, seed=4)
    assert graph.n_edges >= 8 * graph.n_vertices
    result = boruvka(graph, device=device)
    check_forest(graph.to_scipy(), result, exact=True)


def test_a_hub_of_many_chunks(device):
    # Vertex 0's row holds 24999 entries: 13 chunks of 2048 for the kernel's blocks.
    graph = hub_graph(25000, 60000, seed=8)
    result = boruvka(graph, device=device)
    check_forest(graph.to_scipy(), result, exact=True)


def _passes_run(graph: CSRGraph) -> tuple[int, int]:
    """(passes planned from the key sample, passes the CPU twin ran) on ``graph``."""
    from morphgpu.mst import cpu  # noqa: PLC0415

    keys = keymod.weight_keys(np, graph.weights)
    runs = []
    original = cpu.boruvka_rounds

    def counted(*args, **kwargs):
        runs.append(1)
        return original(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cpu, "boruvka_rounds", counted)
        cpu.minimum_spanning_forest(graph.n_vertices, graph.indptr.astype(np.int64),
                                    graph.indices, keys, symmetric=True)
    return len(keymod.pass_limits(keys, graph.n_vertices)), len(runs)


def test_later_passes_merge_once_little_of_the_rest_is_live(device):
    # A Kronecker graph's first pass joins its hubs, so most later entries lie inside one
    # component: the rest goes in one pass. A uniform graph of the same density still
    # has much of the rest live after its first pass: the planned split stands.
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.mst.ecl_weights import ecl_weights  # noqa: PLC0415

    hubs = ecl_weights(generators.kronecker(12, 16, device="cpu"))
    planned, ran = _passes_run(hubs)
    assert planned >= 4 and ran == 2
    uniform = ecl_weights(generators.gnm(2**14, 2**16, seed=2, device="cpu"))
    planned, ran = _passes_run(uniform)
    assert planned == ran == 3
    for graph in (hubs, uniform):
        check_forest(graph.to_scipy(), boruvka(graph, device=device), exact=True)


@pytest.mark.gpu
@pytest.mark.parametrize("seed", range(4))
def test_gpu_and_cpu_give_identical_forests(seed):
    graph = symmetric_graph(3000, 3000 * (1 + 3 * seed), seed=seed, int_weights=seed % 2 == 0)
    if seed == 3:
        graph = hub_graph(5000, 30000, seed=seed)
    gpu = boruvka(graph, device="gpu")
    cpu = boruvka(graph, device="cpu")
    assert np.array_equal(backend.to_host(gpu.edge_ids), cpu.edge_ids)
    assert gpu.n_rounds == cpu.n_rounds
    # Same edges; float totals are summed in a different order on each side.
    if isinstance(cpu.total_weight, int):
        assert gpu.total_weight == cpu.total_weight
    else:
        assert gpu.total_weight == pytest.approx(cpu.total_weight, rel=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("scale", [12, 14])
def test_gpu_and_cpu_plan_alike_on_hub_graphs(scale):
    # The live sample decides later splits on the device: same passes, rounds and forest
    # as the CPU twin, declared symmetric or not.
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.mst.ecl_weights import ecl_weights  # noqa: PLC0415

    graph = ecl_weights(generators.kronecker(scale, 16, device="cpu"))
    cpu = boruvka(graph, device="cpu")
    for symmetric in (True, False):
        gpu = boruvka(graph.to("gpu"), device="gpu", symmetric=symmetric)
        assert np.array_equal(backend.to_host(gpu.edge_ids), cpu.edge_ids)
        assert gpu.n_rounds == cpu.n_rounds and gpu.total_weight == cpu.total_weight


def _stored(graph: CSRGraph, case: str) -> CSRGraph:
    """``graph`` (stored both ways) as a case of the symmetry check: its upper or lower
    triangle alone, or one lower entry made lighter or heavier than its twin."""
    rows = np.repeat(np.arange(graph.n_vertices), np.diff(graph.indptr))
    cols, w = graph.indices, graph.weights.copy()
    keep = np.ones(cols.size, dtype=bool)
    lower = np.flatnonzero(cols < rows)
    if case == "upper":
        keep[lower] = False
    elif case == "lower":
        keep[cols > rows] = False
    elif case == "lighter below":
        w[lower[7]] -= 5
    elif case == "heavier below":
        w[lower[7]] += 5
    out = sp.csr_matrix((w[keep], (rows[keep], cols[keep])), shape=graph.shape)
    return CSRGraph(out.indptr, out.indices, out.data, graph.n_vertices, True)


@pytest.mark.gpu
@pytest.mark.parametrize("case,symmetric", [
    ("both ways", True), ("upper", True), ("lower", False), ("lighter below", False),
    ("heavier below", True)])
def test_kernel_finds_symmetry_and_keeps_the_verdict(case, symmetric):
    # Found symmetric: every entry below the diagonal has a twin that orders before it
    # (an upper triangle alone too: nothing below); then the half read gives the forest
    # of the whole. The verdict is kept for the same content and found again after a
    # change.
    from morphgpu.mst import gpu as mst_gpu  # noqa: PLC0415

    cp = backend.cupy_module()
    graph = _stored(symmetric_graph(3000, 24000, seed=21), case)
    expected = boruvka(graph, device="cpu", symmetric=False)
    g = graph.to("gpu")
    memo = cp.zeros(2, dtype=cp.uint64)
    for _ in range(2):  # the second launch reads the memo
        runner = mst_gpu.BoruvkaGPU(g.n_vertices, g.indptr, g.indices, g.weights,
                                    symmetric=False, find_symmetry=True, symmetry_memo=memo)
        runner.launch()
        positions, rounds = runner.collect()
        assert bool(runner.last_stats[mst_gpu.STAT_SYMMETRIC_RUN]) == symmetric
        assert int(memo[1].get()) == 1 + symmetric
        assert np.array_equal(positions.get(), expected.edge_ids)
        assert rounds == expected.n_rounds
    if symmetric:  # one lower entry lighter than its twin: checked again, not symmetric
        rows = np.repeat(np.arange(graph.n_vertices), np.diff(graph.indptr))
        below = np.flatnonzero(graph.indices < rows)
        if below.size:
            weights = graph.weights.copy()
            weights[below[3]] = 0
            changed = CSRGraph(graph.indptr, graph.indices, weights, graph.n_vertices, True)
            runner.set_weights(cp.asarray(weights))
            runner.launch()
            positions, _ = runner.collect()
            assert not runner.last_stats[mst_gpu.STAT_SYMMETRIC_RUN]
            expected = boruvka(changed, device="cpu")
            assert np.array_equal(positions.get(), expected.edge_ids)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.int64])
@pytest.mark.parametrize("narrows", [True, False])
def test_kernel_narrowed_weights_give_the_cpu_forest(dtype, narrows):
    # float64 / int64 weights are keyed by the kernel through float32 / int32 when every
    # weight narrows exactly; one that does not sends the call to host keys (a relaunch).
    graph = symmetric_graph(4000, 40000, seed=12)  # several passes (>= 3 entries per vertex)
    weights = graph.weights.astype(dtype) - dtype(500)
    if not narrows:
        weights[7] = dtype(2**40) if dtype == np.int64 else dtype(0.1)
        weights[graph.indptr[1]] = weights[7]  # any entry: the kernel checks them all
    # One direction of an edge changed: read as directed (both entries are candidates).
    graph = CSRGraph(graph.indptr, graph.indices, weights, graph.n_vertices, True)
    cpu = boruvka(graph, device="cpu")
    for source in (graph.to("gpu"), graph):
        gpu = boruvka(source, device="gpu")
        assert np.array_equal(backend.to_host(gpu.edge_ids), cpu.edge_ids)
        assert gpu.n_rounds == cpu.n_rounds
        assert gpu.total_weight == pytest.approx(cpu.total_weight, rel=1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["xiao-feng", "cooperative", "atomic"])
def test_every_grid_barrier_gives_the_same_forest(mode):
    from morphgpu.mst.gpu import BoruvkaGPU

    graph = symmetric_graph(2000, 12000, seed=9)
    expected = boruvka(graph, device="cpu")
    g = graph.to("gpu")
    runner = BoruvkaGPU(
        g.n_vertices, g.indptr, g.indices, g.weights, symmetric=True, barrier_mode=mode
    )
    for _ in range(2):  # a second launch on the same buffers must start clean
        runner.launch()
        positions, rounds = runner.collect()
        assert np.array_equal(positions.get(), expected.edge_ids)
        assert rounds == expected.n_rounds


@pytest.mark.gpu
def test_kernel_reports_nan_and_false_symmetry():
    cp = backend.cupy_module()
    graph = symmetric_graph(300, 1500, seed=6, int_weights=False)
    for dtype in (np.float32, np.float64):  # float64: NaN also fails the narrowing
        weights = graph.weights.astype(dtype)
        weights[123] = np.nan
        on_gpu = graph.with_weights(weights).to("gpu")
        with pytest.raises(ValueError, match="entry 123 is NaN"):
            boruvka(on_gpu, device="gpu")
    # Every entry has source < target: declared symmetric, the half-size worklist overflows.
    rows = cp.asarray(np.repeat(np.arange(50), 3))
    cols = cp.asarray(np.repeat(np.arange(50), 3) + np.tile([50, 51, 52], 50))
    directed = CSRGraph.from_edges(rows, cols, cp.ones(150, dtype=np.int32), n_vertices=103)
    with pytest.raises(ValueError, match="symmetric"):
        boruvka(directed, device="gpu", symmetric=True)
    check_forest(directed.to("cpu").to_scipy(), boruvka(directed, device="gpu"), exact=True)


def test_bad_inputs_are_value_errors(device):
    with pytest.raises(ValueError, match="square"):
        boruvka(np.ones((2, 3)), device=device)
    with pytest.raises(ValueError, match="NaN"):
        nan_edge = sp.csr_matrix((np.array([np.nan]), np.array([1]), np.array([0, 1, 1])))
        boruvka(nan_edge, device=device)
    with pytest.raises(ValueError, match="device"):
        boruvka(np.ones((2, 2)), device="tpu")
    with pytest.raises(ValueError, match="real"):
        boruvka(np.ones((2, 2), dtype=complex), device=device)
    with pytest.raises(TypeError, match="CSRGraph"):
        boruvka("graph.txt", device=device)


@given(
    values=st.one_of(
        st.lists(st.floats(allow_nan=False, width=32), min_size=1, max_size=60).map(
            lambda v: np.asarray(v, dtype=np.float32)
        ),
        st.lists(st.floats(allow_nan=False), min_size=1, max_size=60).map(np.asarray),
        st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=60).map(
            lambda v: np.asarray(v, dtype=np.int64)
        ),
        st.lists(st.integers(-(2**31), 2**31 - 1), min_size=1, max_size=60).map(
            lambda v: np.asarray(v, dtype=np.int32)
        ),
    )
)
def test_weight_keys_preserve_order(values):
    from morphgpu.mst.keys import weight_keys

    keys = weight_keys(np, values)
    assert keys.dtype == np.uint32
    by_key = values[np.argsort(keys, kind="stable")]
    assert all(a <= b for a, b in zip(by_key[:-1].tolist(), by_key[1:].tolist()))
    same_key = keys[:, None] == keys[None, :]
    assert np.all(values[:, None][same_key.nonzero()[0], 0] == values[same_key.nonzero()[1]])


@pytest.mark.parametrize("call,name", [(boruvka, "boruvka(graph)"),
                                       (minimum_spanning_tree, "minimum_spanning_tree(csgraph)")])
@pytest.mark.parametrize("how", ["auto", "cpu"])
def test_errors_name_the_call_and_its_argument(call, name, how):
    device = how if how == "cpu" else "auto"
    if how == "auto" and backend.resolve_device("auto") == "gpu":
        pytest.skip("auto is the GPU here")
    nan_edge = sp.csr_matrix((np.array([np.nan]), np.array([1]), np.array([0, 1, 1])))
    bad = [(np.ones((2, 3)), "square"), (sp.csr_matrix(np.ones((2, 3))), "square"),
           (np.ones(3), "square"), (nan_edge, "entry 0 is NaN"),
           (np.ones((2, 2), dtype=complex), "real")]
    for graph, what in bad:
        with pytest.raises(ValueError, match=rf"^{re.escape(name)}: .*{what}"):
            call(graph, device=device)


@pytest.mark.parametrize("device", ["auto", "cpu"])
def test_dense_and_list_inputs_give_scipys_matrix(device):
    rng = np.random.default_rng(3)
    dense = rng.integers(0, 4, (30, 30)).astype(np.float64)
    dense[rng.random((30, 30)) < 0.1] = np.inf  # no edge, as zeros and NaN
    dense[0, 5] = np.nan
    # The integer graph: weight 1 on dense's edges (finite, non-zero), 0 (no edge) elsewhere;
    # (dense * 0 + 1) cast NaN to an arbitrary integer and warned.
    unit = np.where(np.isfinite(dense) & (dense != 0), 1, 0).astype(np.int64)
    for graph in (dense, dense.astype(np.float32), unit, dense.tolist()):
        ours, theirs = minimum_spanning_tree(graph, device=device), scipy_mst(graph)
        assert type(ours) is type(theirs) and ours.dtype == np.float64
        assert (ours != theirs).nnz == 0


def test_unsorted_rows_break_ties_in_stored_order_as_scipy(device):
    """A SciPy matrix with every row reversed and many equal weights: the forest is
    SciPy's on the matrix as given (ties in stored order, module notes; before session 24
    it was SciPy's on the sorted matrix, another forest of the same total); the caller's
    matrix is left as it was."""
    host = symmetric_graph(2000, 9000, seed=4).to_scipy().astype(np.float64).tocsr()
    for r in range(host.shape[0]):
        a, b = host.indptr[r], host.indptr[r + 1]
        host.indices[a:b] = host.indices[a:b][::-1].copy()
        host.data[a:b] = host.data[a:b][::-1].copy()
    host.has_sorted_indices = False
    before = host.indices.copy()
    tree = minimum_spanning_tree(host, device=device)
    tree = sp.csr_matrix(tree.get() if hasattr(tree, "get") else tree)
    assert (tree != scipy_mst(host)).nnz == 0
    assert (scipy_mst(host) != scipy_mst(host.sorted_indices())).nnz > 0  # ties matter here
    assert float(tree.sum()) == scipy_mst(host).sum()
    assert (host.indices == before).all() and not host.has_sorted_indices
