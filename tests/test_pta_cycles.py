"""Cycles of the copy graph (kernels/cycles.cu, gpu.py ``collapse_cycles``): what
``find_cycles`` reports against SciPy's strongly connected components, and a solve whose
loads and stores close a cycle, against the naive solver. On the CPU the kernel is its
NumPy transcription (test_pta_gpu_rounds.NumpyKernels); the ``gpu`` cases run the kernel."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components
from test_pta import AOF, COPY, LOAD, as_sets, naive_solve
from test_pta_gpu_rounds import FAKE_CP, NumpyKernels

from morphgpu import backend
from morphgpu.pta import gpu
from morphgpu.pta.constraints import from_lists
from morphgpu.pta.gpu import _solve
from morphgpu.pta.layout import build_layout
from morphgpu.pta.solution import Solution


@st.composite
def digraphs(draw, max_nodes: int = 40):
    """(n, sorted distinct edge keys dst * n + src without self loops)."""
    n = draw(st.integers(2, max_nodes))
    m = draw(st.integers(0, 3 * n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          min_size=m, max_size=m))
    keys = sorted({d * n + s for s, d in pairs if s != d})
    return n, np.array(keys, dtype=np.int64)


def run_find_cycles(device: str, n: int, keys: np.ndarray, passes: int,
                    jacobi: bool = False) -> tuple[np.ndarray, np.ndarray, int]:
    """(members, their roots, passes run) from find_cycles on the edges ``keys``."""
    xp = backend.xp_for(device)
    m = max(1, keys.size)
    half = keys.size // 2  # half as known edges, half as the round's new ones
    old, new = xp.asarray(keys[:half]), xp.asarray(keys[half:])
    args = [np.int64(n), old, np.int64(old.size), np.uint64(0), new, np.int64(new.size),
            xp.zeros(n, dtype=xp.int64), xp.zeros(n, dtype=xp.int64),  # colour, mark
            xp.zeros(n, dtype=xp.int32), xp.zeros(2 * n, dtype=xp.int64),  # trim, candidates
            xp.zeros(m, dtype=xp.int64), xp.zeros(m, dtype=xp.int64)]  # compacted edges
    member, root = xp.zeros(n, dtype=xp.int64), xp.zeros(n, dtype=xp.int64)
    counts = xp.zeros(16, dtype=xp.uint64)
    if device == "gpu":
        kernels = gpu.CudaKernels("xiao-feng")
    else:
        kernels = NumpyKernels(jacobi)
    kernels.find_cycles(*args, member, root, counts, np.int32(passes))
    if device == "gpu":
        kernels.check()
    counts = backend.to_host(counts)
    k = int(counts[1])
    return backend.to_host(member[:k]), backend.to_host(root[:k]), int(counts[5])


def scipy_components(n: int, keys: np.ndarray) -> np.ndarray:
    g = sp.csr_matrix((np.ones(keys.size), (keys % n, keys // n)), shape=(n, n))
    return connected_components(g, directed=True, connection="strong")[1]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(graph=digraphs(max_nodes=16), jacobi=st.booleans())
def test_enough_passes_find_every_cycle(graph, jacobi, device):
    """With passes to spare, the members and roots are exactly SciPy's components of more
    than one node, each rooted at its smallest node. (At most 16 nodes: no path is longer
    than the sweeps a phase may take, cycles.cu PHASE_SWEEPS, so every phase converges.)"""
    n, keys = graph
    member, root, _ = run_find_cycles(device, n, keys, passes=n + 1, jacobi=jacobi)
    comp = scipy_components(n, keys)
    size = np.bincount(comp, minlength=n)
    smallest = np.full(comp.max() + 1, n)
    np.minimum.at(smallest, comp, np.arange(n))
    want = {v: int(smallest[comp[v]]) for v in range(n) if size[comp[v]] > 1
            and smallest[comp[v]] != v}
    assert dict(zip(member.tolist(), root.tolist())) == want
    assert len(set(member.tolist())) == member.size


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(graph=digraphs(max_nodes=80), passes=st.integers(1, 3))
def test_any_number_of_passes_merges_only_cycles(graph, passes, device):
    """Whatever is found in a few passes lies on one cycle with its root."""
    n, keys = graph
    member, root, ran = run_find_cycles(device, n, keys, passes=passes)
    comp = scipy_components(n, keys)
    assert np.array_equal(comp[member], comp[root])
    assert np.all(root < member)
    assert ran <= passes


def test_a_cycle_downstream_of_a_smaller_one_needs_a_second_pass(device):
    """{0 <-> 1} -> {2 <-> 3}: colour 0 reaches all four, so the first pass finds only
    {0, 1}; the second, without them, finds {2, 3}."""
    n = 4
    edges = [(1, 0), (0, 1), (0, 2), (2, 3), (3, 2)]  # (src, dst)
    keys = np.array(sorted(d * n + s for s, d in edges), dtype=np.int64)
    member, root, _ = run_find_cycles(device, n, keys, passes=1)
    assert dict(zip(member.tolist(), root.tolist())) == {1: 0}
    member, root, _ = run_find_cycles(device, n, keys, passes=2)
    assert dict(zip(member.tolist(), root.tolist())) == {1: 0, 3: 2}


def test_known_edges_are_read_through_the_relabelling(device):
    """Known edges 0 -> 1 and 2 -> 0 with node 2 merged into 1 (HCD, this round): the
    cycle 0 <-> 1 exists only through the relabelling; a new edge 3 -> 4 closes nothing."""
    xp = backend.xp_for(device)
    n = 5
    old = xp.asarray(np.array(sorted([1 * n + 0, 0 * n + 2]), dtype=np.int64))
    new = xp.asarray(np.array([4 * n + 3], dtype=np.int64))
    relabel = xp.asarray(np.array([0, 1, 1, 3, 4], dtype=np.int64))
    member, root = xp.zeros(n, dtype=xp.int64), xp.zeros(n, dtype=xp.int64)
    counts = xp.zeros(16, dtype=xp.uint64)
    kernels = gpu.CudaKernels("xiao-feng") if device == "gpu" else NumpyKernels(False)
    kernels.find_cycles(np.int64(n), old, np.int64(2), relabel, new, np.int64(1),
                        *[xp.zeros(n, dtype=xp.int64) for _ in range(2)],
                        xp.zeros(n, dtype=xp.int32), xp.zeros(2 * n, dtype=xp.int64),
                        xp.zeros(3, dtype=xp.int64), xp.zeros(3, dtype=xp.int64),
                        member, root, counts, np.int32(2))
    k = int(backend.to_host(counts)[1])
    assert k == 1
    assert (int(backend.to_host(member)[0]), int(backend.to_host(root)[0])) == (1, 0)


def loads_close_a_cycle():
    """a -> b -> c -> x -> a, where a -> b (b = *p, p -> a) and c -> x (x = *q, q -> c)
    exist only once the loads are evaluated; b -> c and x -> a are copies."""
    a, b, c, p, q, o1, o2, x = 2, 3, 4, 5, 6, 7, 8, 9
    rows = [(AOF, a, p), (AOF, c, q), (AOF, o1, a), (AOF, o2, c),
            (LOAD, p, b), (COPY, b, c), (LOAD, q, x), (COPY, x, a)]
    return from_lists(10, rows)


def test_a_cycle_closed_by_loads_is_collapsed(device):
    cs = loads_close_a_cycle()
    lay = build_layout(cs)
    if device == "gpu":
        rows, row_of_var, stats = gpu.solve(lay, method="rounds")
        rows = backend.to_host(rows)
    else:
        rows, row_of_var, stats = _solve(FAKE_CP, NumpyKernels(False), lay, 100)
    assert stats["cycles_collapsed"] == 3  # b, c and x merge into a
    sol = Solution(rows=rows, row_of_var=row_of_var, objects=lay.objects, stats=stats)
    assert as_sets(sol, cs.n_vars) == naive_solve(cs)


@pytest.mark.gpu
def test_a_large_graph_takes_the_grid_path():
    """Past what block 0 finishes alone (cycles.cu: SOLO_ITEMS_PER_THREAD), every sweep
    runs over the grid: random edges plus a planted cycle, against SciPy. A call's sweeps
    are bounded, so it may find part of a long cycle: what it finds lies on cycles."""
    rng = np.random.default_rng(7)
    n, m = 60_000, 150_000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    ring = rng.permutation(n)[:20_000]  # one long planted cycle
    src = np.concatenate([src, ring]).astype(np.int64)
    dst = np.concatenate([dst, np.roll(ring, 1)]).astype(np.int64)
    keys = np.unique(dst * n + src)
    keys = keys[keys // n != keys % n]
    member, root, _ = run_find_cycles("gpu", n, keys, passes=4)
    comp = scipy_components(n, keys)
    assert np.bincount(comp).max() > 20_000
    assert member.size > 1000
    assert np.array_equal(comp[member], comp[root])
    assert np.all(root < member)
