"""The sparse-matrix graph cache (morphgpu/graph_cache.py): reuse, freshness, freeing."""

from __future__ import annotations

import gc
import warnings
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
from hypothesis import given
from hypothesis import strategies as st

import morphgpu
from morphgpu import backend, graph_cache
from morphgpu.bfs import bfs
from morphgpu.csr import validate_graph


@pytest.fixture(autouse=True)
def _empty_cache():
    morphgpu.forget()
    yield
    morphgpu.forget()


def _matrix(n=40, density=0.08, seed=0, fmt="csr"):
    return sp.random(n, n, density=density, random_state=seed, format=fmt)


def _expected(m, source):
    d = csgraph.shortest_path(sp.csr_matrix(m), unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _check(m, source=0):
    got = bfs(m, source, device="cpu").distances
    np.testing.assert_array_equal(got, _expected(m, source))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_second_call_returns_the_same_graph(fmt):
    m = _matrix(fmt=fmt)
    g = validate_graph(m)
    assert validate_graph(m) is g
    assert graph_cache.cached(m)
    _check(m)
    assert validate_graph(m) is g
    # Each direction flag gets its graph, sharing the arrays.
    u = validate_graph(m, directed=False)
    assert not u.directed and u.indices is g.indices and validate_graph(m, directed=False) is u


def test_other_formats_are_converted_every_call():
    m = _matrix().tolil()
    assert validate_graph(m) is not validate_graph(m)
    assert not graph_cache.cached(m)


def test_index_arrays_read_only_while_cached_and_forget_restores():
    m = _matrix()
    validate_graph(m)
    assert not m.indices.flags.writeable and not m.indptr.flags.writeable
    assert m.data.flags.writeable  # a canonical CSR matrix's data is used as it is
    with pytest.raises(ValueError, match="read-only"):
        m.indices[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        m.indptr[1] += 1
    morphgpu.forget(m)
    assert not graph_cache.cached(m)
    assert m.indices.flags.writeable and m.indptr.flags.writeable
    if m.indices.base is not None:
        assert m.indices.base.flags.writeable
    m.indices[0] = (m.indices[0] + 1) % m.shape[0]  # now allowed, and seen
    _check(m)


def test_converted_data_is_read_only_too():
    m = _matrix(fmt="csc")
    validate_graph(m)
    assert not m.data.flags.writeable
    with pytest.raises(ValueError, match="read-only"), warnings.catch_warnings():
        warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
        m[0, 0] = 5.0
    morphgpu.forget(m)
    assert m.data.flags.writeable


def test_live_data_writes_are_seen():
    m = _matrix()
    g = validate_graph(m)
    m.data[:] = 7.0
    assert validate_graph(m) is g
    np.testing.assert_array_equal(g.weights, 7.0)


def test_scipy_in_place_methods_raise_not_corrupt():
    m = _matrix()
    m.indices[:] = m.indices[::-1].copy()  # rows out of order: not canonical
    m.has_sorted_indices = False
    g = validate_graph(m)
    before = (m.indptr.copy(), m.indices.copy())
    for op in (m.sort_indices, m.eliminate_zeros, m.sum_duplicates):
        with pytest.raises(ValueError, match="read-only"):
            op()
        np.testing.assert_array_equal(m.indices, before[1])
        np.testing.assert_array_equal(m.indptr, before[0])
    assert validate_graph(m) is g
    morphgpu.forget(m)
    m.sort_indices()
    _check(m)


def test_shrinking_resize_raises_and_never_returns_the_old_graph():
    m = _matrix()
    g = validate_graph(m)
    with pytest.raises(ValueError, match="read-only"):
        m.resize((m.shape[0], 5))  # SciPy replaces indices, then fails writing indptr
    try:
        again = validate_graph(m)
    except morphgpu.GraphFormatError:
        return  # the half-resized matrix is refused
    assert again is not g


def test_already_read_only_arrays_stay_read_only():
    m = _matrix()
    m = sp.csr_matrix((m.data.copy(), m.indices.copy(), m.indptr.copy()), shape=m.shape)
    m.indices.flags.writeable = False
    validate_graph(m)
    morphgpu.forget(m)
    assert not m.indices.flags.writeable
    assert m.indptr.flags.writeable


def test_made_writeable_by_hand_is_rebuilt():
    m = _matrix()
    m = sp.csr_matrix((m.data.copy(), m.indices.copy(), m.indptr.copy()), shape=m.shape)
    g = validate_graph(m)
    for v in reversed(graph_cache._chain(m.indices)):  # around the rule, owner first
        v.flags.writeable = True
    m.indices[:] = (m.indices + 1) % m.shape[0]
    g2 = validate_graph(m)
    assert g2 is not g
    _check(m)


@pytest.mark.parametrize("change", ["new entry", "setdiag", "grow", "replace indices"])
def test_structure_changes_through_scipy_give_fresh_results(change):
    m = _matrix()
    g = validate_graph(m)
    _check(m, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
        if change == "new entry":
            zero = np.argwhere(m.toarray() == 0)[0]
            m[int(zero[0]), int(zero[1])] = 1.0
        elif change == "setdiag":
            m.setdiag(1.0)
        elif change == "grow":
            m.resize((m.shape[0] + 5, m.shape[1] + 5))
        else:
            m.indices = (m.indices + 1) % m.shape[0]
    g2 = validate_graph(m)
    assert g2 is not g
    assert g2.n_edges == m.nnz and g2.n_vertices == m.shape[0]
    _check(m, 3)
    assert validate_graph(m) is g2


def test_freed_matrix_frees_the_entry():
    m = _matrix()
    g = weakref.ref(validate_graph(m))
    indices = m.indices
    del m
    gc.collect()
    assert g() is None
    assert not graph_cache._entries
    assert indices.flags.writeable  # no longer guarded: writeable again


def test_shared_arrays_stay_read_only_until_both_forgotten():
    a = _matrix()
    b = sp.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape, copy=False)
    assert np.shares_memory(b.indices, a.indices)
    validate_graph(a)
    validate_graph(b)
    morphgpu.forget(a)
    assert not b.indices.flags.writeable
    morphgpu.forget(b)
    assert b.indices.flags.writeable


def test_breadth_first_order_matches_scipy_on_a_cached_matrix():
    m = _matrix(seed=3)
    for _ in range(2):
        order, pred = morphgpu.bfs.breadth_first_order(m, 0, device="cpu")
        want = csgraph.breadth_first_order(m, 0)
        np.testing.assert_array_equal(order, want[0])
        np.testing.assert_array_equal(pred, want[1])


def test_structure_on_keeps_cpu_side_without_copy():
    m = _matrix()
    g = validate_graph(m)
    assert graph_cache.structure_on(g, "cpu") is g


def test_confirm_takes_fingerprints_read_back_elsewhere():
    # A caller that brought the queued fingerprints back with its own read passes them;
    # a mismatch drops the entry as a read of its own would.
    m = sp.random(40, 40, density=0.1, format="csr", random_state=3)
    graph_cache.graph_of(m, True, lambda x: validate_graph(x.tocoo()))
    entry = graph_cache._entries[id(m)]
    entry.fingerprint = (11, 12)

    class Unread:
        def get(self, stream=None):
            raise AssertionError("confirm read the device although values were given")

    def check():
        return graph_cache._Check(id(m), entry, on_device=Unread(), stream=None)

    pending = [check()]
    assert graph_cache.confirm(pending, [np.array([11, 12], dtype=np.uint64)])
    assert not pending and graph_cache.cached(m)
    pending = [check()]
    assert not graph_cache.confirm(pending, [np.array([11, 13], dtype=np.uint64)])
    assert not graph_cache.cached(m)


def test_fingerprint_host_sees_any_one_word():
    a = np.arange(11, dtype=np.int32)
    f = graph_cache.fingerprint_host(a)
    for k in range(a.size):
        b = a.copy()
        b[k] += 1
        assert graph_cache.fingerprint_host(b) != f
    assert graph_cache.fingerprint_host(a[:10]) != f or a[10] == 0


@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=40),
       st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), min_size=1, max_size=5),
       st.sampled_from(["csr", "csc", "coo"]))
def test_edits_never_give_stale_distances(edges, more, fmt):
    morphgpu.forget()
    n = 12
    rows = np.array([e[0] for e in edges], dtype=np.int64)
    cols = np.array([e[1] for e in edges], dtype=np.int64)
    m = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n)).asformat(fmt)
    _check(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
        m = m.tocsr() if fmt == "coo" else m
        try:
            for u, v in more:
                m[u, v] = 1.0
        except ValueError:  # read-only while cached: the rule; forget, then edit
            morphgpu.forget(m)
            for u, v in more:
                m[u, v] = 1.0
    _check(m)
    _check(m)


@pytest.mark.gpu
def test_cupy_matrix_cached_and_fingerprinted():
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as csp

    host = _matrix(n=300, density=0.02, seed=5)
    m = csp.csr_matrix(host)
    g = validate_graph(m)
    assert validate_graph(m) is g
    r1 = bfs(m, 0, device="gpu")
    assert validate_graph(m) is g
    np.testing.assert_array_equal(cp.asnumpy(r1.distances), _expected(host, 0))
    # The GPU fingerprint equals its NumPy twin, word for word.
    # (an 8-byte-offset view, a 4-byte-offset one that is copied, an odd byte count)
    arrays = (m.indptr, m.indices, m.data[1:], m.indices[1:], m.indices[:3].view(cp.uint8)[:5])
    assert graph_cache.fingerprint(arrays) == tuple(graph_cache.fingerprint_host(a)
                                                    for a in arrays)
    # Any byte count and any grid (the kernel reads four words a thread per step,
    # grid-stride): sizes about its step and several strides of a one-block-per-SM grid.
    rng = np.random.default_rng(11)
    step = 8 * graph_cache.FINGERPRINT_STEP
    for n_bytes in (1, 7, 8, 9, step - 8, step, step + 13, 3 * step + 5, 40_000_003):
        raw = cp.asarray(rng.integers(0, 256, n_bytes, dtype=np.uint8))
        expected = graph_cache.fingerprint_host(raw)
        for per_sm in (1, 8):
            found = graph_cache.fingerprint_on_device((raw,), blocks_per_sm=per_sm).get()
            assert int(found[0]) == expected, (n_bytes, per_sm)
    # An in-place write to the indices (no read-only flag on CuPy) is detected.
    m.indices[:] = (m.indices + 1) % host.shape[0]
    g2 = validate_graph(m)
    assert g2 is not g
    changed = host.copy()
    changed.indices = (changed.indices + 1) % host.shape[0]
    r2 = bfs(m, 0, device="gpu")
    np.testing.assert_array_equal(cp.asnumpy(r2.distances), _expected(changed, 0))
    # bfs() itself queues the check behind its search and confirms it after: a write
    # between two searches is seen there (the search is redone on the new graph), and a
    # CPU search of a cached CuPy matrix confirms it first.
    for k, dev in ((3, "gpu"), (5, "cpu"), (7, "gpu")):
        m.indices[:] = (m.indices + k) % host.shape[0]
        changed.indices = (changed.indices + k) % host.shape[0]
        r = bfs(m, 0, device=dev)
        np.testing.assert_array_equal(backend.to_host(r.distances), _expected(changed, 0))
        assert r.n_levels == int(backend.to_host(r.distances).max()) + 1
    g2 = validate_graph(m)
    # A SciPy matrix searched on the GPU reuses one GPU copy per device.
    bfs(host, 0, device="gpu")
    h = validate_graph(host)
    assert graph_cache.structure_on(h, "gpu") is graph_cache.structure_on(h, "gpu")
    ref = weakref.ref(g2)
    del m, g, g2, r1, r2
    gc.collect()
    assert ref() is None


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["beamer", "bottom-up"])
def test_cupy_matrix_prepared_bfs_sees_in_place_writes(variant, monkeypatch):
    """From the second bfs() on a cached CuPy matrix with one variant, the call goes
    straight to the graph's prepared search (graph_of is not called), with the fingerprint
    check around it: after an in-place write to the indices the next call searches the new
    graph (distances equal SciPy's on it), and calls after that are prepared again."""
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as csp

    host = _matrix(n=300, density=0.02, seed=4)
    m = csp.csr_matrix((cp.asarray(host.data), cp.asarray(host.indices),
                        cp.asarray(host.indptr)), shape=host.shape)
    calls = []
    real = graph_cache.graph_of
    monkeypatch.setattr(graph_cache, "graph_of",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    changed = host.copy()
    for k in range(4):
        for source in (0, 7, np.int64(11)):
            before = len(calls)
            r = bfs(m, source, variant=variant, device="gpu", predecessors=True)
            np.testing.assert_array_equal(cp.asnumpy(r.distances),
                                          _expected(changed, int(source)))
            if k and source != 0:
                assert len(calls) == before  # prepared: no graph_of
        m.indices[:] = (m.indices + 3) % host.shape[0]
        changed.indices = (changed.indices + 3) % host.shape[0]
    validate_graph(host)  # cached, but a SciPy matrix: its arrays are read-only instead
    assert graph_cache.cached(host) and graph_cache.unchanged_cupy_graph(host) is None
    graph_cache.forget(host)


@pytest.mark.gpu
def test_cupy_matrix_check_prepared_once_and_overlapping_checks():
    """A cached CuPy matrix's check runs through its entry's probe (one packed launch that
    writes the page-locked host copy itself and resets its accumulators), made at its
    first check and reused, with the fingerprints of fingerprint_host every time: a second
    check queued before the first is confirmed takes buffers of its own (both answers
    right), an index array that is a 4-byte-offset view is copied at every check, and an
    in-place write is seen by the next check."""
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as csp

    host = _matrix(n=200, density=0.03, seed=9)
    base = cp.concatenate([cp.zeros(1, dtype=cp.int32), cp.asarray(host.indices)])
    for indices in (cp.asarray(host.indices), base[1:]):  # aligned; 4 bytes off
        m = csp.csr_matrix((cp.asarray(host.data), indices, cp.asarray(host.indptr)),
                           shape=host.shape)
        g = validate_graph(m)
        first, second = [], []
        assert graph_cache.graph_of(m, True, None, pending=first) is g
        probe = graph_cache._entries[id(m)].probe
        assert probe is not None and probe.busy and first[0].probe is probe
        assert (1 in probe.copied) == (m.indices.data.ptr % 8 != 0)
        assert graph_cache.graph_of(m, True, None, pending=second) is g
        assert second[0].probe is None  # the probe was busy: buffers of its own
        assert graph_cache.confirm(first) and graph_cache.confirm(second)
        assert not probe.busy
        expected = [graph_cache.fingerprint_host(a) for a in graph_cache._entries[id(m)].arrays]
        for _ in range(3):
            again = []
            graph_cache.graph_of(m, True, None, pending=again)
            assert again[0].probe is probe and graph_cache.confirm(again)
            assert [int(x) for x in probe.host] == expected
            assert [int(x) for x in probe.out.get()] == expected
            assert not probe.accum.get().any() and int(probe.blocks_done.get()[0]) == 0
        # A call that raises between the check and its confirm (a bad source) leaves no
        # probe stuck: the next check reuses it.
        with pytest.raises(ValueError, match="source"):
            bfs(m, -1, device="gpu")
        gc.collect()
        again = []
        graph_cache.graph_of(m, True, None, pending=again)
        assert again[0].probe is probe and graph_cache.confirm(again)
        m.indices[0] = (int(m.indices[0]) + 1) % host.shape[0]
        pending = []
        graph_cache.graph_of(m, True, None, pending=pending)
        assert not graph_cache.confirm(pending)
        assert not graph_cache.cached(m)
        changed = host.copy()
        changed.indices[0] = (changed.indices[0] + 1) % host.shape[0]
        source = int(changed.indices[0])
        r = bfs(m, source, device="gpu")
        np.testing.assert_array_equal(cp.asnumpy(r.distances), _expected(changed, source))


@pytest.mark.gpu
def test_unchanged_cupy_graph_and_check_inside():
    """bfs()'s prepared path for a cached CuPy matrix: unchanged_cupy_graph answers from
    host-side facts alone (a replaced array or a changed flag gives None); the search
    kernel runs the fingerprint check itself (check_inside: one check per call, its number
    published with its verdict), the standalone check on the same buffers gives
    fingerprint_host's answers, an in-place write passes
    the host-side look and is caught by that check, a check no kernel ran counts as a
    change (confirm waits, then rebuilds), and a matrix whose indices are an offset view
    (copied at every check) takes the check launched beside the search."""
    cp = backend.cupy_module()
    import cupyx.scipy.sparse as csp

    host = _matrix(n=150, density=0.04, seed=12)
    m = csp.csr_matrix((cp.asarray(host.data), cp.asarray(host.indices),
                        cp.asarray(host.indptr)), shape=host.shape)
    g = validate_graph(m)
    assert graph_cache.unchanged_cupy_graph(m) is g
    for source in (0, 3):
        bfs(m, source, variant="beamer", device="gpu")  # the second call is prepared
    probe = graph_cache._entries[id(m)].probe
    expected = [graph_cache.fingerprint_host(a) for a in graph_cache._entries[id(m)].arrays]
    for source in (5, 9, 14):
        seq = probe.seq
        r = bfs(m, source, variant="beamer", device="gpu", predecessors=True)
        np.testing.assert_array_equal(cp.asnumpy(r.distances), _expected(host, source))
        # one check per call, its verdict (unchanged) published with its number
        assert probe.seq == seq + 1 and int(probe.published[-1]) == 2 * probe.seq
        assert not probe.busy
    pending = []  # the standalone check on the same probe: fingerprint_host's answers
    assert validate_graph(m, pending=pending) is g and graph_cache.confirm(pending)
    assert [int(x) for x in probe.host] == expected
    check = graph_cache.check_inside(m)
    assert check is not None and probe.busy and graph_cache.check_inside(m) is None
    assert not graph_cache.confirm([check])  # no kernel ran it: counted as changed
    assert not graph_cache.cached(m) and not probe.busy
    g = validate_graph(m)
    m._has_canonical_format = not m._has_canonical_format  # (what the property reads)
    assert graph_cache.unchanged_cupy_graph(m) is None
    m._has_canonical_format = not m._has_canonical_format  # (what the property reads)
    assert graph_cache.unchanged_cupy_graph(m) is g
    for source in (0, 3):
        bfs(m, source, variant="beamer", device="gpu")
    changed = host.copy()
    m.indices[5] = changed.indices[5] = (int(m.indices[5]) + 1) % host.shape[0]
    assert graph_cache.unchanged_cupy_graph(m) is g  # host-side facts unchanged
    r = bfs(m, 0, variant="beamer", device="gpu")
    np.testing.assert_array_equal(cp.asnumpy(r.distances), _expected(changed, 0))
    assert graph_cache.unchanged_cupy_graph(m) is not g
    m.indices = m.indices.copy()  # equal content, another array
    assert graph_cache.unchanged_cupy_graph(m) is None
    # indices 4 bytes off: the check is copied and launched beside the search
    base = cp.concatenate([cp.zeros(1, dtype=cp.int32), cp.asarray(host.indices)])
    v = csp.csr_matrix((cp.asarray(host.data), base[1:], cp.asarray(host.indptr)),
                       shape=host.shape)
    for source in (0, 3, 8):
        r = bfs(v, source, variant="beamer", device="gpu")
        np.testing.assert_array_equal(cp.asnumpy(r.distances), _expected(host, source))
    vprobe = graph_cache._entries[id(v)].probe
    assert vprobe.copied and vprobe.seq == 0 and graph_cache.check_inside(v) is None
