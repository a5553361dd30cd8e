"""BFS on a DynamicGraph: every variant that runs on the paged layout against SciPy and
Graph500's checks, and the incremental search after insertions against a fresh one."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import backend, generators
from morphgpu.bfs import bfs, graph500_check
from morphgpu.dynamic_graph import DynamicGraph

GPU_DYNAMIC_VARIANTS = ["auto", "persistent", "beamer", "direction-optimizing", "top-down",
                        "frontier-classes", "frontier-classes-deferred", "dynamic-parallelism"]


def reference(dg: DynamicGraph, source: int) -> np.ndarray:
    m = dg.to_scipy()
    m.data[:] = 1
    d = csgraph.shortest_path(m, directed=dg.directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def check(dg: DynamicGraph, result, source: int) -> None:
    dist = backend.to_host(result.distances)
    np.testing.assert_array_equal(dist, reference(dg, source))
    g = dg.to_csr().to("cpu")
    parent = backend.to_host(result.predecessors) if result.predecessors is not None else None
    graph500_check(g.indptr, g.indices, source, dist, parent)
    assert result.n_levels == int(dist.max()) + 1
    degrees = np.diff(g.indptr)
    assert result.n_edges_traversed == int(degrees[dist >= 0].sum())


def graphs(device: str):
    """A hub-heavy graph (rows past every class bound, hubs for the bottom-up levels),
    a deep path-like graph, and a disconnected one; both directed and undirected."""
    rng = np.random.default_rng(11)
    n = 3000
    hubs = rng.integers(0, n, 40)
    src = np.concatenate([rng.integers(0, n, 20000), np.repeat(hubs, 400)])
    dst = np.concatenate([rng.integers(0, n, 20000), rng.integers(0, n, 16000)])
    path = np.arange(1999)
    for directed in (False, True):
        dense = DynamicGraph(n, directed=directed, device=device)
        dense.insert_edges(src, dst)
        yield dense
        deep = DynamicGraph(2000, directed=directed, device=device, page_size=4)
        deep.insert_edges(path, path + 1)
        deep.insert_edges(rng.integers(0, 2000, 50), rng.integers(0, 2000, 50))
        yield deep
    split = DynamicGraph(100, directed=False, device=device)
    split.insert_edges(np.arange(0, 49), np.arange(1, 50))
    yield split


@pytest.mark.parametrize("variant", GPU_DYNAMIC_VARIANTS)
def test_every_variant_on_the_paged_layout(device, variant):
    if device == "cpu" and variant not in ("auto", "top-down"):
        pytest.skip("the CPU path has one search per direction rule")
    for dg in graphs(device):
        for source in (0, dg.n_vertices - 1):
            result = bfs(dg, source, variant=variant, predecessors=True)
            assert result.device == device and result.graph_version == dg.version
            check(dg, result, source)
        without = bfs(dg, 0, variant=variant)
        assert without.predecessors is None
        np.testing.assert_array_equal(backend.to_host(without.distances), reference(dg, 0))


@pytest.fixture
def no_repair_budget(device, monkeypatch):
    """GPU repairs never give up (they would, rightly, on large changes of small graphs)."""
    if device == "gpu":
        from morphgpu.bfs import layouts

        monkeypatch.setattr(layouts, "REPAIR_BUDGET", 1e9)


@pytest.mark.parametrize("directed", [False, True])
def test_incremental_after_insertions_equals_a_fresh_search(device, directed,
                                                            no_repair_budget):
    xp = backend.xp_for(device)
    g = generators.kronecker(10, 8, seed=3)
    dg = DynamicGraph.from_csr(g, directed=directed, device=device)
    rng = np.random.default_rng(5)
    source = int(np.argmax(backend.to_host(dg.degree())))
    for predecessors in (False, True):
        result = bfs(dg, source, predecessors=predecessors)
        for step in range(6):
            k = [1, 10, 200][step % 3]
            dg.insert_edges(xp.asarray(rng.integers(0, dg.n_vertices, k)),
                            xp.asarray(rng.integers(0, dg.n_vertices, k)))
            if step == 4:
                dg.insert_edges(xp.asarray([0]), xp.asarray([0]))  # may change nothing
            result = bfs(dg, source, predecessors=predecessors, previous=result)
            assert result.incremental
            check(dg, result, source)
            fresh = bfs(dg, source)
            np.testing.assert_array_equal(backend.to_host(result.distances),
                                          backend.to_host(fresh.distances))
        # Reaching new vertices: a far-away vertex joined to the source's component.
        lonely = int(np.flatnonzero(backend.to_host(result.distances) < 0)[0]) \
            if (backend.to_host(result.distances) < 0).any() else None
        if lonely is not None:
            dg.insert_edges(xp.asarray([source]), xp.asarray([lonely]))
            result = bfs(dg, source, predecessors=predecessors, previous=result)
            assert result.incremental and int(backend.to_host(result.distances)[lonely]) == 1
            check(dg, result, source)


def test_incremental_falls_back_after_a_deletion(device):
    xp = backend.xp_for(device)
    dg = DynamicGraph(6, directed=False, device=device)
    dg.insert_edges(xp.asarray([0, 1, 2, 0]), xp.asarray([1, 2, 3, 3]))
    first = bfs(dg, 0)
    dg.delete_edges(xp.asarray([0]), xp.asarray([3]))
    second = bfs(dg, 0, previous=first)
    assert not second.incremental
    check(dg, second, 0)
    with pytest.raises(ValueError, match="search from 0, not from 1"):
        bfs(dg, 1, previous=second)
    with pytest.raises(ValueError, match="previous result with predecessors"):
        bfs(dg, 0, previous=second, predecessors=True)


def test_variants_that_need_csr_arrays_are_refused_on_the_gpu():
    pytest.importorskip("cupy")
    if not backend.gpu_available():
        pytest.skip("no GPU")
    dg = DynamicGraph(4, device="gpu")
    with pytest.raises(ValueError, match="does not run on this layout"):
        bfs(dg, 0, variant="merge-path")


def test_the_graph_and_the_search_meet_on_one_side():
    dg = DynamicGraph(3, device="cpu")
    if backend.gpu_available():
        with pytest.raises(ValueError, match="lives on the CPU"):
            bfs(dg, 0, device="gpu")
    with pytest.raises(ValueError, match="outside"):
        bfs(dg, 3)
    assert sp.issparse(dg.to_scipy())


@pytest.mark.gpu
def test_a_repair_past_its_budget_searches_afresh(monkeypatch):
    from morphgpu.bfs import layouts

    monkeypatch.setattr(layouts, "REPAIR_BUDGET", 0.0)
    dg = DynamicGraph(2000, directed=False, device="gpu")
    path = np.arange(1999)
    dg.insert_edges(path, path + 1)
    first = bfs(dg, 0, predecessors=True)
    dg.insert_edges(np.asarray([0]), np.asarray([1500]))  # lowers ~1000 distances
    again = bfs(dg, 0, predecessors=True, previous=first)
    assert not again.incremental
    check(dg, again, 0)
