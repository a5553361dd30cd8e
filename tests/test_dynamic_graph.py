"""DynamicGraph on both sides: every batch checked against a SciPy matrix kept alongside,
the page pool's accounting after every batch, recycling, and bad input.

The reference is a dict of edges updated by the rules the type promises (sets of edges;
an insertion's weight is the batch's last for that edge; deleting an absent edge does
nothing), turned into a SciPy matrix after each batch; BFS distances on the dynamic graph
are compared with SciPy's shortest paths on that matrix.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

from morphgpu import backend
from morphgpu.bfs import bfs, graph500_check
from morphgpu.csr import CSRGraph
from morphgpu.dynamic_graph import BYTES_PER_ENTRY, DynamicGraph, DynamicGraphError


class Reference:
    """The edge set a DynamicGraph should hold, by its documented rules."""

    def __init__(self, n: int, directed: bool) -> None:
        self.n, self.directed, self.edges = n, directed, {}

    def key(self, a: int, b: int) -> tuple[int, int]:
        return (a, b) if self.directed or a <= b else (b, a)

    def insert(self, u, v, w=None) -> tuple[int, int]:
        batch = {}
        for i, (a, b) in enumerate(zip(u, v)):
            batch[self.key(int(a), int(b))] = 1.0 if w is None else float(w[i])
        new = sum(k not in self.edges for k in batch)
        self.edges.update(batch)
        return len(batch), new

    def delete(self, u, v) -> tuple[int, int]:
        batch = {self.key(int(a), int(b)) for a, b in zip(u, v)}
        present = sum(k in self.edges for k in batch)
        for k in batch:
            self.edges.pop(k, None)
        return len(batch), present

    def matrix(self) -> sp.csr_matrix:
        rows, cols, vals = [], [], []
        for (a, b), w in self.edges.items():
            rows.append(a), cols.append(b), vals.append(w)
            if not self.directed and a != b:
                rows.append(b), cols.append(a), vals.append(w)
        return sp.csr_matrix((vals, (rows, cols)), shape=(self.n, self.n))


def assert_same(dg: DynamicGraph, ref: Reference, weighted: bool) -> None:
    dg.check()
    assert dg.n_edges == len(ref.edges)
    got, want = dg.to_scipy(), ref.matrix()
    assert got.nnz == want.nnz
    pattern = (got != 0).astype(int) - (want != 0).astype(int)
    assert pattern.nnz == 0 or not np.any(pattern.toarray())
    if weighted:
        assert abs(got - want).max() == 0 if want.nnz else True
    g = dg.to_csr()
    assert g.directed == dg.directed
    host = g.to("cpu")
    for row in range(host.n_vertices):  # rows come back sorted
        cols = host.indices[host.indptr[row]: host.indptr[row + 1]]
        assert np.all(np.diff(cols) > 0)


def scipy_bfs(matrix: sp.csr_matrix, directed: bool, source: int) -> np.ndarray:
    pattern = sp.csr_matrix((np.ones(matrix.nnz), matrix.indices, matrix.indptr),
                            shape=matrix.shape)
    d = csgraph.shortest_path(pattern, directed=directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


ops = st.lists(st.tuples(st.sampled_from(["+", "-"]),
                         st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29),
                                            st.floats(-5, 5, allow_nan=False)),
                                  max_size=25)),
               min_size=1, max_size=8)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 30), directed=st.booleans(), weighted=st.booleans(),
       page_size=st.sampled_from([1, 2, 4, 32]), batches=ops)
def test_random_batches_match_scipy(device, n, directed, weighted, page_size, batches):
    dg = DynamicGraph(n, directed=directed, weighted=weighted, device=device,
                      page_size=page_size)
    ref = Reference(n, directed)
    xp = backend.xp_for(device)
    for sign, edges in batches:
        u = xp.asarray([a % n for a, _, _ in edges], dtype=np.int64)
        v = xp.asarray([b % n for _, b, _ in edges], dtype=np.int64)
        w = [c for _, _, c in edges]
        if sign == "+":
            result = dg.insert_edges(u, v, xp.asarray(w) if weighted else None)
            requested, new = ref.insert(backend.to_host(u), backend.to_host(v),
                                        w if weighted else None)
            assert (result.requested, result.applied) == (requested, new)
        else:
            result = dg.delete_edges(u, v)
            requested, present = ref.delete(backend.to_host(u), backend.to_host(v))
            assert (result.requested, result.applied, result.skipped) == (
                requested, present, requested - present)
        assert result.n_edges == len(ref.edges)
        assert_same(dg, ref, weighted)
        r = bfs(dg, 0, predecessors=True)
        dist = backend.to_host(r.distances)
        np.testing.assert_array_equal(dist, scipy_bfs(ref.matrix(), directed, 0))
        g = dg.to_csr().to("cpu")
        graph500_check(g.indptr, g.indices, 0, dist, backend.to_host(r.predecessors))


def test_memory_does_not_grow_over_cycles(device):
    """100 insert/delete cycles of the same edges: the pool and the table keep their size,
    and after each deletion every page is back on the free stack."""
    rng = np.random.default_rng(7)
    xp = backend.xp_for(device)
    dg = DynamicGraph(500, directed=False, device=device, page_size=8)
    u = xp.asarray(rng.integers(0, 500, 4000))
    v = xp.asarray(rng.integers(0, 500, 4000))
    dg.insert_edges(u, v)
    dg.delete_edges(u, v)
    first = dg.memory()
    assert first["pages_in_use"] == 0 and first["pages_free"] > 0
    for _ in range(100):
        dg.insert_edges(u, v)
        dg.delete_edges(u, v)
    last = dg.memory()
    assert last == first
    dg.check()


def test_freed_pages_are_taken_before_new_ones(device):
    xp = backend.xp_for(device)
    dg = DynamicGraph(64, device=device, page_size=4, capacity_pages=1000)
    dg.insert_edges(xp.zeros(40, dtype=np.int64), xp.arange(40))  # 10 pages for row 0
    before = dg.memory()
    dg.delete_edges(xp.zeros(40, dtype=np.int64), xp.arange(40))
    freed = dg.memory()
    assert freed["pages_free"] == 10 and freed["pages_in_use"] == 0
    dg.insert_edges(xp.full(12, 5, dtype=np.int64), xp.arange(12))  # 3 pages
    after = dg.memory()
    assert after["pages_free"] == 7
    assert after["pages_never_used"] == before["pages_never_used"]  # no new page taken
    dg.check()


def test_from_csr_to_csr_round_trip(device):
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 200, 3000), rng.integers(0, 200, 3000)
    w = rng.random(3000)
    g = CSRGraph.from_edges(src, dst, w, n_vertices=200).to(device)  # has duplicates
    dg = DynamicGraph.from_csr(g, device=device, page_size=16)
    merged = CSRGraph.from_edges(src, dst, w, n_vertices=200, merge_duplicates="first")
    out = dg.to_csr().to("cpu")
    np.testing.assert_array_equal(out.indptr, merged.indptr)
    np.testing.assert_array_equal(out.indices, merged.indices)
    # Duplicates merged by the batch rule: the last weight of each edge wins.
    last = {}
    for a, b, x in zip(src, dst, w):
        last[(a, b)] = x
    expect = np.array([last[(r, c)] for r in range(200)
                       for c in merged.indices[merged.indptr[r]: merged.indptr[r + 1]]])
    np.testing.assert_array_equal(backend.to_host(out.weights), expect)
    sym = CSRGraph.from_edges(src, dst, n_vertices=200, symmetrize=True,
                              merge_duplicates="first")
    ug = DynamicGraph.from_csr(sym, device=device)
    assert not ug.directed
    assert ug.n_entries == sym.n_edges
    np.testing.assert_array_equal(ug.to_csr().to("cpu").indices, sym.indices)
    sm = DynamicGraph.from_csr(sym.to_scipy(), device=device)  # a sparse matrix: directed
    assert sm.directed and sm.n_edges == sym.n_edges


@pytest.mark.parametrize("directed", [True, False])
def test_add_and_delete_vertices(device, directed):
    rng = np.random.default_rng(2)
    xp = backend.xp_for(device)
    dg = DynamicGraph(50, directed=directed, device=device, page_size=4)
    ref = Reference(50, directed)
    u, v = rng.integers(0, 50, 300), rng.integers(0, 50, 300)
    dg.insert_edges(xp.asarray(u), xp.asarray(v))
    ref.insert(u, v)
    new = dg.add_vertices(5)
    assert list(new) == [50, 51, 52, 53, 54] and dg.n_vertices == 55
    ref.n = 55
    dg.insert_edges(xp.asarray([50, 54, 3]), xp.asarray([54, 1, 52]))
    ref.insert([50, 54, 3], [54, 1, 52])
    gone = [3, 54, 7]
    dg.delete_vertices(xp.asarray(gone))
    ref.edges = {k: w for k, w in ref.edges.items() if k[0] not in gone and k[1] not in gone}
    assert_same(dg, ref, False)
    assert int(backend.to_host(dg.degree())[gone].sum()) == 0


def test_bad_input_names_the_argument_and_changes_nothing(device):
    xp = backend.xp_for(device)
    dg = DynamicGraph(10, weighted=True, device=device)
    dg.insert_edges(xp.asarray([1, 2]), xp.asarray([3, 4]), xp.asarray([0.5, 1.5]))
    before = (dg.to_scipy().toarray(), dg.version, dg.memory())
    cases = [
        (lambda: dg.insert_edges(xp.asarray([1, 10]), xp.asarray([2, 3])), r"src\[1\] = 10"),
        (lambda: dg.insert_edges(xp.asarray([1]), xp.asarray([-1])), r"dst\[0\] = -1"),
        (lambda: dg.insert_edges(xp.asarray([1, 2]), xp.asarray([3])), "2 entries but dst"),
        (lambda: dg.insert_edges(xp.asarray([1]), xp.asarray([2]), xp.asarray([np.nan])),
         r"weights\[0\] = nan"),
        (lambda: dg.insert_edges(xp.asarray([1.0]), xp.asarray([2])), "integer vertex ids"),
        (lambda: dg.insert_edges(xp.asarray([1]), xp.asarray([2]), xp.asarray([1.0, 2.0])),
         "weights has 2 entries"),
        (lambda: dg.delete_edges(xp.asarray([0]), xp.asarray([99])), r"dst\[0\] = 99"),
        (lambda: dg.delete_vertices(xp.asarray([12])), r"ids\[0\] = 12"),
        (lambda: dg.add_vertices(-1), "k must be a non-negative integer"),
    ]
    for call, message in cases:
        with pytest.raises(DynamicGraphError, match=message):
            call()
    after = (dg.to_scipy().toarray(), dg.version, dg.memory())
    np.testing.assert_array_equal(before[0], after[0])
    assert before[1:] == after[1:]
    unweighted = DynamicGraph(4, device=device)
    with pytest.raises(DynamicGraphError, match="without weights"):
        unweighted.insert_edges(xp.asarray([1]), xp.asarray([2]), xp.asarray([1.0]))
    with pytest.raises(DynamicGraphError, match="page_size"):
        DynamicGraph(4, page_size=3, device=device)
    with pytest.raises(DynamicGraphError, match="n_vertices"):
        DynamicGraph(-2, device=device)


def test_deleting_from_an_empty_graph_is_a_counted_no_op(device):
    xp = backend.xp_for(device)
    dg = DynamicGraph(5, device=device)
    result = dg.delete_edges(xp.asarray([0, 1, 1]), xp.asarray([1, 2, 2]))
    assert (result.requested, result.applied, result.skipped) == (2, 0, 2)
    assert dg.n_edges == 0 and dg.memory()["pages_in_use"] == 0
    empty = DynamicGraph(0, device=device)
    assert empty.delete_edges(xp.asarray([], dtype=np.int64),
                              xp.asarray([], dtype=np.int64)).requested == 0
    assert empty.to_csr().n_vertices == 0


@pytest.mark.gpu
def test_a_batch_larger_than_gpu_memory_says_what_it_needed(monkeypatch):
    import morphgpu.dynamic_graph as dyn

    dg = DynamicGraph(10, device="gpu")
    monkeypatch.setattr(dyn, "BYTES_PER_ENTRY", 1 << 50)
    assert BYTES_PER_ENTRY < 1 << 50
    with pytest.raises(backend.GPUOutOfMemoryError, match="needs .* GiB"):
        dg.insert_edges(np.asarray([1]), np.asarray([2]))
    assert dg.n_edges == 0 and dg.version == 0


def test_batches_from_the_other_side_are_moved(device):
    """NumPy batches on a GPU graph (and the reverse) are moved to the graph's side."""
    dg = DynamicGraph(6, device=device)
    dg.insert_edges(np.asarray([0, 1]), np.asarray([1, 2]))
    if backend.gpu_available():
        cp = backend.cupy_module()
        dg.insert_edges(cp.asarray([2]), cp.asarray([3]))
    assert dg.n_edges == (3 if backend.gpu_available() else 2)
