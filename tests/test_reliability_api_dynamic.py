"""Reliability of DynamicGraph's public arguments and of bfs(previous=) on it.

Each test names the input the sweep tried and what happened before its fix. Answers are
checked against SciPy's breadth_first_order on the graph as it stands after the batches.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

from morphgpu import backend
from morphgpu.bfs import bfs, graph500_check
from morphgpu.csr import CSRGraph
from morphgpu.dynamic_graph import MAX_VERTICES, DynamicGraph, DynamicGraphError

DEVICES = ["cpu", "auto"]


def scipy_distances(dg: DynamicGraph, source: int) -> np.ndarray:
    """Hop distances from ``source`` by SciPy's breadth_first_order (-1: unreached)."""
    m = sp.csr_matrix(dg.to_scipy())
    m.data[:] = 1
    order, parent = csgraph.breadth_first_order(m, source, directed=dg.directed)
    dist = np.full(dg.n_vertices, -1, dtype=np.int64)
    dist[source] = 0
    for v in order[1:]:  # BFS order: a parent's distance is known before its child's
        dist[v] = dist[parent[v]] + 1
    return dist


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("other_n", [6, 3, 10])
def test_previous_from_another_graph_is_not_repaired_from(device, other_n):
    # Old: versions were per-graph ints, so a result of graph A at version 1 passed as
    # previous= to graph B at version 2 was "repaired" from A's distances: with equal
    # sizes B got A's distances [0 1 2 3 4 5] (SciPy: [0 -1 -1 -1 2 1]); with other sizes
    # an IndexError. Now a version remembers its graph and the search runs afresh.
    a = DynamicGraph(6, directed=False, device=device)
    a.insert_edges([0, 1, 2, 3, 4], [1, 2, 3, 4, 5])
    ra = bfs(a, 0)
    b = DynamicGraph(other_n, directed=False, device=device)
    b.insert_edges([0], [other_n - 1])
    b.insert_edges([other_n - 1], [other_n - 2])
    rb = bfs(b, 0, previous=ra)
    assert not rb.incremental
    np.testing.assert_array_equal(np.asarray(rb.distances), scipy_distances(b, 0))
    # The graph's own results still repair, and equal versions of two graphs stay ints.
    b.insert_edges([1], [0])
    again = bfs(b, 0, previous=rb)
    assert again.incremental and again.graph_version == b.version == 3
    np.testing.assert_array_equal(np.asarray(again.distances), scipy_distances(b, 0))
    assert a.inserted_since(ra.graph_version) is not None
    assert b.inserted_since(ra.graph_version) is None


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("kwargs", "name"), [
    # Old: page_size=True was taken as 1 (bool is an int); capacity_pages went through
    # int(capacity_pages or 0), so -5, 1.5 and True were taken, 'x' raised int()'s
    # "invalid literal" and 10**12 NumPy's MemoryError for a 116 TiB page table.
    ({"page_size": True}, "page_size"), ({"page_size": np.bool_(True)}, "page_size"),
    ({"capacity_pages": -5}, "capacity_pages"), ({"capacity_pages": 1.5}, "capacity_pages"),
    ({"capacity_pages": True}, "capacity_pages"), ({"capacity_pages": "x"}, "capacity_pages"),
    ({"capacity_pages": 10**12}, "capacity_pages"),
])
def test_bad_page_arguments_name_the_argument(device, kwargs, name):
    with pytest.raises(DynamicGraphError, match=name):
        DynamicGraph(3, device=device, **kwargs)
    if name == "page_size":
        with pytest.raises(DynamicGraphError, match=name):
            DynamicGraph.from_csr(np.ones((2, 2)), device=device, **kwargs)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["directed", "weighted"])
@pytest.mark.parametrize("value", ["false", "True", 0, 1, None, np.int64(1)])
def test_flags_take_only_true_or_false(device, name, value):
    """directed="false" was bool("false"), i.e. True: the opposite of what was asked."""
    with pytest.raises(DynamicGraphError, match=f"{name} must be True or False"):
        DynamicGraph(3, device=device, **{name: value})
    if name == "directed" and value is not None:  # from_csr: None means the input's own
        with pytest.raises(DynamicGraphError, match="directed must be True or False"):
            DynamicGraph.from_csr(np.ones((2, 2)), device=device, directed=value)
    for ok in (True, False, np.True_, np.False_):
        assert getattr(DynamicGraph(3, device=device, **{name: ok}), name) is bool(ok)


@pytest.mark.parametrize("device", DEVICES)
def test_good_page_arguments(device):
    for page_size in (1, np.int64(4), np.uint16(1024)):
        dg = DynamicGraph(3, device=device, page_size=page_size, capacity_pages=np.int32(0))
        dg.insert_edges([0, 1], [1, 2])
        assert dg.page_size == int(page_size) and dg.n_edges == 2
        dg.check()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [MAX_VERTICES + 1, 2**40, 10**30])
def test_vertex_counts_past_the_int64_keys_are_refused(device, n):
    # Old: 10**30 raised NumPy's "Maximum allowed dimension exceeded" and 2**40 its
    # MemoryError, neither naming n_vertices; on a host with the memory, n past
    # isqrt(2**63 - 1) made the edge keys u * n + v wrap silently.
    with pytest.raises(DynamicGraphError, match=f"n_vertices must be at most {MAX_VERTICES}"):
        DynamicGraph(n, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("kwargs", "named"), [
    ({"n_vertices": 2**28}, "n_vertices=268435456"),
    ({"n_vertices": 4, "capacity_pages": 2**31 - 1}, "capacity_pages=2147483647"),
])
def test_a_graph_larger_than_memory_is_refused_before_allocating(device, monkeypatch,
                                                                 kwargs, named):
    # Old: the arrays were allocated (NumPy's lazy zeros: the OOM killer later, or NumPy's
    # "Unable to allocate 32.0 GiB" for 2**31 vertices, naming no argument).
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**30)
    with pytest.raises(MemoryError, match=named):
        DynamicGraph(device=device, **kwargs)
    assert DynamicGraph(1000, device=device).n_vertices == 1000


def _marked_undirected(entries, n, weights=None):
    """A CSRGraph flagged undirected holding exactly ``entries`` (CSRGraph does not check)."""
    g = CSRGraph.from_edges(np.array([a for a, _ in entries], dtype=np.int64),
                            np.array([b for _, b in entries], dtype=np.int64),
                            None if weights is None else np.asarray(weights, dtype=float),
                            n_vertices=n)
    return CSRGraph(g.indptr, g.indices, g.weights, g.n_vertices, False)


@pytest.mark.parametrize("device", DEVICES)
def test_an_undirected_csr_listing_edges_one_way_keeps_them(device):
    # Old: from_csr kept the entries with src <= dst of a CSRGraph marked undirected, so a
    # lower triangle (the path 1-0, 2-1, 3-2) loaded as an empty graph: BFS from 0 reached
    # [0 -1 -1 -1] where SciPy (each entry an edge) reaches [0 1 2 3].
    g = _marked_undirected([(1, 0), (2, 1), (3, 2)], 4, [5.0, 6.0, 7.0])
    dg = DynamicGraph.from_csr(g, device=device)
    assert not dg.directed and dg.n_edges == 3
    np.testing.assert_array_equal(np.asarray(bfs(dg, 0).distances), [0, 1, 2, 3])
    assert dg.to_scipy().toarray()[0, 1] == 5.0
    # Mirrored entries: one edge each, the weight above the diagonal, as before.
    sym = _marked_undirected([(0, 1), (1, 0), (1, 2), (2, 1)], 3, [1.0, 9.0, 2.0, 8.0])
    ds = DynamicGraph.from_csr(sym, device=device)
    assert ds.n_edges == 2
    np.testing.assert_array_equal(ds.to_scipy().toarray(), [[0, 1, 0], [1, 0, 2], [0, 2, 0]])


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 8), entries=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)),
                                             max_size=20))
def test_an_undirected_csr_loads_every_entry_as_its_edge(n, entries):
    # Entries counted equal above and below the diagonal but not mirrored (say (0, 3) and
    # (2, 1)) also lost the one below: hypothesis draws any entry list.
    entries = sorted({(a % n, b % n) for a, b in entries})
    dg = DynamicGraph.from_csr(_marked_undirected(entries, n), device="cpu")
    assert dg.n_edges == len({(min(a, b), max(a, b)) for a, b in entries})
    for source in range(n):
        np.testing.assert_array_equal(np.asarray(bfs(dg, source).distances),
                                      scipy_distances(dg, source))
        ref = DynamicGraph(n, directed=False, device="cpu")
        if entries:
            ref.insert_edges([a for a, _ in entries], [b for _, b in entries])
        np.testing.assert_array_equal(np.asarray(bfs(dg, source).distances),
                                      scipy_distances(ref, source))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_weight_that_is_not_finite_names_the_graph_and_the_entry(device, bad):
    # Old: "insert_edges: weights[1] = nan is not a finite number", an index into the
    # load's internal batch, naming neither the argument nor the entry.
    m = sp.csr_matrix((np.array([1.0, bad, 2.0]), (np.array([0, 1, 2]), np.array([1, 2, 0]))),
                      shape=(3, 3))
    with pytest.raises(DynamicGraphError, match=r"graph: the weight of entry \(1, 2\) is"):
        DynamicGraph.from_csr(m, device=device)


# The sweep found no defect in the checks below: these tests pin what it tried.


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("src", "dst", "message"), [
    ([True], [1], "src must hold integer vertex ids"),
    # NumPy makes [True, 2] an int array [1, 2]: it was taken as vertices 1 and 2.
    ([True, 2], [1, 0], "src must hold integer vertex ids"),
    ([0, 1], (np.True_, 2), "dst must hold integer vertex ids"),
    # A column of a nested list (taken as one-dimensional) hid its bools the same way.
    ([[True], [2]], [[1], [0]], "src must hold integer vertex ids"),
    ([0, 1], [np.array([True]), np.array([2])], "dst must hold integer vertex ids"),
    (np.array([1.0]), np.array([2]), "src must hold integer vertex ids"),
    ([0], [2.5], "dst must hold integer vertex ids"),
    (["0"], ["1"], "src must hold integer vertex ids"),
    ([2**70], [1], "src must hold integer vertex ids"),
    (np.array([2**63], dtype=np.uint64), [0], "past 2"),
    ([-1], [0], r"src\[0\] = -1 is outside \[0, 5\)"),
    ([0, 5], [1, 1], r"src\[1\] = 5 is outside"),
    ([[0, 1]], [[1, 2]], "one-dimensional"),
    ([0, 1], [1], "2 entries but dst has 1"),
])
def test_bad_batches_name_the_argument_and_change_nothing(device, src, dst, message):
    dg = DynamicGraph(5, directed=False, weighted=True, device=device)
    dg.insert_edges([0, 1], [1, 2], [2.0, 3.0])
    before = (dg.to_scipy().toarray(), dg.version, dg.n_edges, dg.memory())
    for call in (lambda: dg.insert_edges(src, dst), lambda: dg.delete_edges(src, dst)):
        with pytest.raises(DynamicGraphError, match=message):
            call()
        after = (dg.to_scipy().toarray(), dg.version, dg.n_edges, dg.memory())
        np.testing.assert_array_equal(before[0], after[0])
        assert before[1:] == after[1:]
    dg.check()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind", [np.int8, np.uint8, np.int16, np.uint32, np.int64, np.uint64,
                                  list])
def test_ids_of_any_integer_type_are_taken_and_never_changed(device, kind):
    src_in, dst_in = [3, 1, 1, 4], [0, 2, 2, 4]
    src = kind(src_in) if kind is list else np.array(src_in, dtype=kind)
    dst = kind(dst_in) if kind is list else np.array(dst_in, dtype=kind)
    keep = (np.array(src, copy=True), np.array(dst, copy=True))
    dg = DynamicGraph(5, directed=False, device=device)
    r = dg.insert_edges(src, dst)
    assert (r.requested, r.applied) == (3, 3)  # the repeated (1, 2) counts once
    np.testing.assert_array_equal(np.asarray(bfs(dg, 0).distances), scipy_distances(dg, 0))
    r = dg.delete_edges(src, dst)
    assert (r.applied, dg.n_edges) == (3, 0)
    np.testing.assert_array_equal(np.asarray(src), keep[0])
    np.testing.assert_array_equal(np.asarray(dst), keep[1])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), directed=st.booleans(), stale=st.integers(0, 3),
       batches=st.lists(st.tuples(st.sampled_from("++-"),
                                  st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)),
                                           max_size=6)), min_size=1, max_size=8))
def test_previous_results_of_any_age_give_scipys_answer(n, directed, stale, batches):
    # bfs(previous=r) with r the result of `stale` batches ago (a repair over several
    # journal entries, or afresh after a deletion) against SciPy on the graph as it is.
    dg = DynamicGraph(n, directed=directed, device="cpu", page_size=2)
    results = [bfs(dg, 0, predecessors=True)]
    for sign, edges in batches:
        u = [a % n for a, _ in edges]
        v = [b % n for _, b in edges]
        (dg.insert_edges if sign == "+" else dg.delete_edges)(u, v)
        previous = results[max(0, len(results) - 1 - stale)]
        r = bfs(dg, 0, predecessors=True, previous=previous)
        np.testing.assert_array_equal(np.asarray(r.distances), scipy_distances(dg, 0))
        g = dg.to_csr().to("cpu")
        graph500_check(g.indptr, g.indices, 0, np.asarray(r.distances),
                       np.asarray(r.predecessors))
        results.append(r)


@pytest.mark.parametrize("device", DEVICES)
def test_add_vertices_past_memory_is_refused_and_changes_nothing(device, monkeypatch):
    # Old: add_vertices(2**31 - 10) raised NumPy's "Unable to allocate 32.0 GiB for an
    # array with shape (4294967276,)", naming no argument.
    dg = DynamicGraph(3, device=device)
    dg.insert_edges([0], [1])
    version = dg.version
    monkeypatch.setattr(backend, "host_available_bytes", lambda: 2**30)
    with pytest.raises(MemoryError, match=r"add_vertices\(2147483638\)"):
        dg.add_vertices(2**31 - 10)
    assert (dg.n_vertices, dg.n_edges, dg.version) == (3, 1, version)
    assert list(dg.add_vertices(2)) == [3, 4]
    dg.check()
