"""BFS on both sides: Graph500's checks and SciPy's distances on every result.

The same tests run on the CPU and (marked ``gpu``) on the GPU through the ``device``
fixture; every implemented variant is exercised on each side.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

from morphgpu import backend
from morphgpu.bfs import bfs, breadth_first_order, graph500_check, variants
from morphgpu.csr import CSRGraph

GPU_VARIANTS = ["auto", "persistent", "expand-contract", "two-phase", "contract-expand",
                "hybrid", "merge-path", "merge-path-separate", "merge-path-ib",
                "merge-path-bi", "merge-path-hybrid", "frontier-classes",
                "frontier-classes-deferred", "dynamic-parallelism",
                "direction-optimizing", "beamer", "top-down", "bottom-up", "async", "tiled",
                "overlay"]
CPU_VARIANTS = ["auto", "top-down", "bottom-up", "direction-optimizing", "persistent",
                "merge-path-hybrid", "frontier-classes", "async", "tiled", "overlay"]


def variants_for(device: str) -> list[str]:
    return GPU_VARIANTS if device == "gpu" else CPU_VARIANTS


def scipy_distances(g: CSRGraph, source: int) -> np.ndarray:
    """Unweighted shortest paths by SciPy (an independent reference), -1 if unreachable."""
    host = g.to("cpu")
    matrix = sp.csr_matrix(
        (np.ones(host.n_edges), host.indices, host.indptr), shape=host.shape
    )
    d = csgraph.shortest_path(matrix, method="D", unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def on_device(g: CSRGraph, device: str) -> CSRGraph:
    return g.to(device)


def check_result(g: CSRGraph, source: int, result, *, parents: bool = True) -> None:
    host = g.to("cpu")
    dist = backend.to_host(result.distances)
    assert dist.dtype == np.int32
    pred = backend.to_host(result.predecessors) if parents else None
    graph500_check(host.indptr, host.indices, source, dist, pred)
    np.testing.assert_array_equal(dist, scipy_distances(g, source))
    assert result.n_levels == int(dist.max()) + 1
    degrees = np.diff(host.indptr)
    assert result.n_edges_traversed == int(degrees[dist >= 0].sum())


@st.composite
def edge_graphs(draw, max_n: int = 40, max_m: int = 160):
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(0, max_m))
    src = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    symmetric = draw(st.booleans())
    source = draw(st.integers(0, n - 1))
    g = CSRGraph.from_edges(np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
                            n_vertices=n, symmetrize=symmetric)
    return g, source


# The device fixture is a constant string, so sharing it across examples is harmless.
SHARED_FIXTURE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@SHARED_FIXTURE
@given(case=edge_graphs(), data=st.data())
def test_random_graphs_every_variant(device, case, data):
    g, source = case
    variant = data.draw(st.sampled_from(variants_for(device)))
    result = bfs(on_device(g, device), source, variant=variant, device=device,
                 predecessors=True)
    assert result.device == device
    check_result(g, source, result)
    assert backend.side_of(result.distances) == device


@pytest.mark.parametrize("variant", GPU_VARIANTS + ["direction-optimizing"])
def test_hubs_and_long_rows(device, variant):
    """Degrees past a warp and past a block (CTA gathering), hubs for bottom-up levels."""
    if variant not in variants_for(device):
        pytest.skip("GPU-only variant")
    rng = np.random.default_rng(7)
    n = 6000
    hubs = rng.choice(n, 6, replace=False)
    src = [np.repeat(hubs, 1500), rng.integers(0, n, 20000)]
    dst = [rng.integers(0, n, hubs.size * 1500), rng.integers(0, n, 20000)]
    g = CSRGraph.from_edges(np.concatenate(src), np.concatenate(dst), n_vertices=n,
                            symmetrize=True, merge_duplicates="first")
    for source in (int(hubs[0]), int(rng.integers(0, n))):
        result = bfs(on_device(g, device), source, variant=variant, device=device,
                     predecessors=True)
        check_result(g, source, result)


def star_of_stars(n_hubs: int, leaves: int = 39) -> CSRGraph:
    """A root (0) joined to n_hubs hubs (1..n_hubs), each with `leaves` leaves."""
    hubs = np.arange(1, n_hubs + 1)
    leaf_ids = n_hubs + 1 + np.arange(n_hubs * leaves)
    src = np.concatenate([np.zeros(n_hubs, dtype=np.int64), np.repeat(hubs, leaves)])
    dst = np.concatenate([hubs, leaf_ids])
    return CSRGraph.from_edges(src, dst, n_vertices=1 + n_hubs * (1 + leaves),
                               symmetrize=True)


@pytest.mark.parametrize("n_hubs", [800, 1500])
def test_star_of_stars(device, n_hubs):
    """A root joined to n_hubs hubs of 40 leaves each: the level after the root is all hubs
    (degree > max(32, 8 x the mean)), fewer than the GPU's flat hub table (1024) or more."""
    g = star_of_stars(n_hubs)
    hubs = np.arange(1, n_hubs + 1)
    leaf_ids = np.arange(n_hubs + 1, g.n_vertices)
    degrees = np.diff(g.to("cpu").indptr)
    assert (degrees[hubs] > max(32, 8 * degrees.mean())).all()  # hubs by the GPU's rule
    for variant in variants_for(device):
        for source in (0, int(leaf_ids[-1])):
            result = bfs(on_device(g, device), source, variant=variant, device=device,
                         predecessors=True)
            check_result(g, source, result)


@pytest.mark.parametrize("variant", ["auto", "persistent", "expand-contract", "async",
                                     "tiled", "overlay"])
def test_deep_grid_and_path(device, variant):
    """Hundreds of levels; frontiers that grow past one block and shrink again."""
    if variant not in variants_for(device):
        pytest.skip("GPU-only variant")
    grid = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.grid_2d_graph(90, 70)),
                               directed=False)
    path = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.path_graph(1500)), directed=False)
    tree = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.balanced_tree(3, 8)),
                               directed=False)
    for g, source in ((grid, 0), (grid, 3100), (path, 700), (tree, 0)):
        result = bfs(on_device(g, device), source, variant=variant, device=device,
                     predecessors=True)
        check_result(g, source, result)


def layered_graph(widths: list[int], extra: bool) -> CSRGraph:
    """Layers of the given widths, edges only between consecutive layers: vertex i of layer
    k joins vertex i % w of layer k - 1 (and (7 i + 3) % w when ``extra``), so a search
    from layer 0 (one vertex) has exactly these frontier widths, level by level."""
    starts = np.concatenate([[0], np.cumsum(widths)])
    src, dst = [], []
    for k in range(1, len(widths)):
        i = np.arange(widths[k])
        up = widths[k - 1]
        src.append(starts[k] + i)
        dst.append(starts[k - 1] + i % up)
        if extra and up > 1:
            src.append(starts[k] + i)
            dst.append(starts[k - 1] + (i * 7 + 3) % up)
    return CSRGraph.from_edges(np.concatenate(src), np.concatenate(dst),
                               n_vertices=int(starts[-1]), symmetrize=True,
                               merge_duplicates="first")


# Frontier widths and level edge counts around the persistent kernel's thresholds
# (persistent.ENTER_LOCAL = 2048 vertices enter the one-block path, LOCAL_CAP = 3072 edges
# fit its queue): [1, 1024, 1024] has a level of exactly 3072 edges (1024 vertices of
# degree 3) and [1, 1024, 1025] one of 3074; the long plateau of 900-wide levels of
# degree ~4 overflows the queue level after level (hysteresis), then narrow levels return
# to the one-block path; the 2047-wide layer ends in a hub of degree 2047 (a long row in
# the one-block path).
THRESHOLD_WIDTHS = [
    ([1, 1024, 1024, 1], True),
    ([1, 1024, 1025, 1], True),
    ([1, 2047, 2048, 2049, 1, 1023, 1024, 1025, 1, 3, 1], True),
    ([1, 700, 1024, 1100, 1200, 2048, 700, 1], False),
    ([1, 8, 64, 512] + [900] * 12 + [300] * 5 + [1100] * 6 + [40, 1], True),
]


@pytest.mark.parametrize("widths,extra", THRESHOLD_WIDTHS)
def test_frontiers_around_thresholds(device, widths, extra):
    g = layered_graph(widths, extra)
    for variant in variants_for(device):
        result = bfs(on_device(g, device), 0, variant=variant, device=device,
                     predecessors=True)
        check_result(g, 0, result)
        # The construction is what the test claims: one level per layer.
        levels = np.bincount(backend.to_host(result.distances))
        np.testing.assert_array_equal(levels, widths)


@settings(SHARED_FIXTURE, max_examples=15, deadline=None)
@given(widths=st.lists(st.integers(1, 2600), min_size=1, max_size=8), extra=st.booleans(),
       data=st.data())
def test_layered_random_widths(device, widths, extra, data):
    g = layered_graph([1, *widths], extra)
    variant = data.draw(st.sampled_from(variants_for(device)))
    result = bfs(on_device(g, device), 0, variant=variant, device=device, predecessors=True)
    check_result(g, 0, result)


def test_without_predecessors(device):
    g = CSRGraph.from_edges(np.array([0, 1, 2, 2]), np.array([1, 2, 0, 3]))
    result = bfs(on_device(g, device), 0, device=device)
    assert result.predecessors is None
    check_result(g, 0, result, parents=False)
    np.testing.assert_array_equal(backend.to_host(result.distances), [0, 1, 2, 3])


def test_edge_cases(device):
    # Isolated source: one level, nothing else reached.
    g = CSRGraph.from_edges(np.array([1, 2]), np.array([2, 3]), n_vertices=5)
    r = bfs(on_device(g, device), 0, device=device, predecessors=True)
    assert r.n_levels == 1 and r.n_edges_traversed == 0
    np.testing.assert_array_equal(backend.to_host(r.distances), [0, -1, -1, -1, -1])
    np.testing.assert_array_equal(backend.to_host(r.predecessors), [0, -1, -1, -1, -1])
    # Self-loops and duplicate edges (kept in the CSR) change nothing.
    g = CSRGraph.from_edges(np.array([0, 0, 0, 1, 1, 2]), np.array([0, 1, 1, 1, 2, 2]))
    for variant in variants_for(device):
        r = bfs(on_device(g, device), 0, device=device, predecessors=True, variant=variant)
        check_result(g, 0, r)
    # Directed: edges are followed only forwards.
    g = CSRGraph.from_edges(np.array([1]), np.array([0]), n_vertices=2)
    r = bfs(on_device(g, device), 0, device=device)
    np.testing.assert_array_equal(backend.to_host(r.distances), [0, -1])


def test_int64_offsets(device):
    """Offsets stored as int64 (as for graphs past 2^31 edges) give the same answer."""
    g32 = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.grid_2d_graph(20, 30)),
                              directed=False)
    g64 = CSRGraph(g32.indptr.astype(np.int64), g32.indices, None, g32.n_vertices, False)
    for variant in variants_for(device):
        r = bfs(on_device(g64, device), 5, device=device, predecessors=True, variant=variant)
        check_result(g32, 5, r)


def test_inputs_scipy_dense_and_errors(device, monkeypatch):
    m = sp.random(30, 30, density=0.1, random_state=3, format="csr")
    r = bfs(m, 2, device=device, predecessors=True)
    check_result(CSRGraph.from_scipy(m), 2, r)
    assert backend.side_of(r.distances) == "cpu"  # results come back on the input's side
    dense = m.toarray()
    np.testing.assert_array_equal(backend.to_host(bfs(dense, 2, device=device).distances),
                                  backend.to_host(r.distances))
    with pytest.raises(ValueError, match="source"):
        bfs(m, 30, device=device)
    with pytest.raises(ValueError, match="source"):
        bfs(m, -1, device=device)
    with pytest.raises(ValueError, match="source"):
        bfs(m, 1.5, device=device)
    with pytest.raises(ValueError, match="variant"):
        bfs(m, 0, variant="nope", device=device)
    planned = variants.Variant("planned", "", "a name from the issue not built yet", False,
                               "top-down")
    monkeypatch.setitem(variants.VARIANTS, "planned", planned)
    with pytest.raises(ValueError, match="not implemented"):
        bfs(m, 0, variant="planned", device=device)
    with pytest.raises(ValueError, match="no vertices"):
        bfs(sp.csr_matrix((0, 0)), 0, device=device)
    with pytest.raises(ValueError, match="graph"):
        bfs("not a graph", 0, device=device)


@SHARED_FIXTURE
@given(case=edge_graphs(max_n=30, max_m=80), directed=st.booleans())
def test_breadth_first_order_matches_scipy(device, case, directed):
    g, source = case
    m = g.to_scipy()
    order, pred = breadth_first_order(m, source, directed=directed, device=device)
    ref_order, ref_pred = csgraph.breadth_first_order(m, source, directed=directed)
    assert order.dtype == ref_order.dtype and pred.dtype == ref_pred.dtype
    # SciPy's order and predecessors exactly (its FIFO queue, rebuilt from our distances).
    np.testing.assert_array_equal(order, ref_order)
    np.testing.assert_array_equal(pred, ref_pred)
    only = breadth_first_order(m, source, directed=directed, return_predecessors=False,
                               device=device)
    np.testing.assert_array_equal(only, order)
    # auto: SciPy itself on any machine; a CuPy input's answer comes back on the GPU.
    inputs = [m]
    if device == "gpu":
        import cupyx.scipy.sparse as cupyx_sparse  # noqa: PLC0415

        inputs.append(cupyx_sparse.csr_matrix(m.astype(np.float64)))
    for given_matrix in inputs:
        auto = breadth_first_order(given_matrix, source, directed=directed, device="auto")
        if given_matrix is not m:
            assert all(backend.is_cupy_array(a) for a in auto)
            auto = tuple(backend.to_host(a) for a in auto)
        assert auto[0].dtype == ref_order.dtype and auto[1].dtype == ref_pred.dtype
        np.testing.assert_array_equal(auto[0], ref_order)
        np.testing.assert_array_equal(auto[1], ref_pred)


def test_variant_table_is_honest():
    for name in variants.names():
        assert variants.check(name).implemented
    missing = variants.names(implemented_only=False)
    for name in set(missing) - set(variants.names()):
        with pytest.raises(ValueError, match="not implemented"):
            variants.check(name)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{}, {"relabel": True}, {"relabel": "rows"}])
@pytest.mark.parametrize("variant", ["direction-optimizing", "beamer", "bottom-up"])
def test_gpu_direction_loops(variant, options):
    """Each rule on the graph as given, on its degree-relabelled copy and on its rows sorted
    by degree, symmetric and directed."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    rng = np.random.default_rng(11)
    n = 3000
    src = np.concatenate([np.repeat(np.arange(5), 800), rng.integers(0, n, 9000)])
    dst = np.concatenate([rng.integers(0, n, 4000), rng.integers(0, n, 9000)])
    for directed in (False, True):
        g = CSRGraph.from_edges(src, dst, n_vertices=n, symmetrize=not directed).to("gpu")
        dist, parent, _ = gpu.run(g, 3, variant=variant, want_parents=True, **options)
        host = g.to("cpu")
        graph500_check(host.indptr, host.indices, 3, dist.get(), parent.get())
        np.testing.assert_array_equal(dist.get(), scipy_distances(g, 3))


@pytest.mark.gpu
@pytest.mark.parametrize("variant", ["beamer", "bottom-up"])
def test_gpu_direction_many_vertices_per_thread(variant):
    """Graphs of more vertices than the direction kernel has threads (~135k on an H100),
    so bottom-up levels take several of a thread's vertices in batches: rows from empty to
    long, symmetric and directed, exact against SciPy, parents by Graph500's checks."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    rng = np.random.default_rng(23)
    n = 1 << 20  # also the degree-relabelled copy's size (RELABEL_MIN_VERTICES)
    m = 2 * n
    src = np.concatenate([rng.integers(0, n, m), np.repeat(rng.integers(0, n, 8), 3000)])
    dst = np.concatenate([rng.integers(0, n, m), rng.integers(0, n, 8 * 3000)])
    for directed in (False, True):
        g = CSRGraph.from_edges(src, dst, n_vertices=n, symmetrize=not directed).to("gpu")
        host = g.to("cpu")
        source = int(np.argmax(np.diff(host.indptr))) if directed else int(src[0])
        dist, parent, _ = gpu.run(g, source, variant=variant, want_parents=True)
        graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
        np.testing.assert_array_equal(dist.get(), scipy_distances(host, source))


@pytest.mark.gpu
def test_gpu_hybrid_switches_to_two_phase():
    """A switch of 0 queued edges makes every hybrid level two-phase."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    g = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.grid_2d_graph(40, 30)),
                            directed=False).to("gpu")
    dist, parent, _ = gpu.run(g, 7, variant="hybrid", want_parents=True, switch=0)
    host = g.to("cpu")
    graph500_check(host.indptr, host.indices, 7, dist.get(), parent.get())


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{}, {"enter_local": 0}, {"enter_local": 64},
                                     {"blocks": 1}, {"blocks": 3, "enter_local": 64}])
def test_gpu_persistent_options(options):
    """Grid-only levels, early hand-over to the grid, and grids of one or a few blocks."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    grid = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.grid_2d_graph(120, 80)),
                               directed=False).to("gpu")
    layered = layered_graph(THRESHOLD_WIDTHS[-1][0], True).to("gpu")
    for g, source in ((grid, 0), (grid, 5000), (layered, 0)):
        dist, parent, _ = gpu.run(g, source, variant="persistent", want_parents=True,
                                  **options)
        host = g.to("cpu")
        graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
        np.testing.assert_array_equal(dist.get(), scipy_distances(g, source))


@pytest.mark.gpu
def test_gpu_persistent_short_rows():
    """Grid levels over CSR rows of degree 9-64 (persistent.cu's expand_rows_warp_flat: a
    warp's rows dealt out flat over its lanes, passes of up to 256 edges): a Delaunay mesh
    (degree <= ~20), the same with 64-bit ids, a ring of cliques of 40 (rows of 39-40, so
    a warp's 32 rows take several passes), and a random directed graph whose rows hold 0-40
    edges (empty rows in the frontier); grid and one-block levels both run (enter_local 64
    and the default), or grid levels only (0)."""
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415

    k, n_cliques = 40, 60
    src, dst = [], []
    for c in range(n_cliques):
        members = c * k + np.arange(k)
        a, b = np.meshgrid(members, members)
        keep = a != b
        src.append(a[keep])  # both directions already
        dst.append(b[keep])
        link = (c * k, ((c + 1) % n_cliques) * k + 1)
        src.append(np.array(link))
        dst.append(np.array(link[::-1]))
    ring = CSRGraph.from_edges(np.concatenate(src), np.concatenate(dst),
                               n_vertices=k * n_cliques)
    mesh = generators.delaunay_graph(20000, device="cpu")
    wide_ids = CSRGraph(mesh.indptr.astype(np.int64), mesh.indices.astype(np.int64), None,
                        mesh.n_vertices, False)
    rng = np.random.default_rng(9)
    n = 6000
    out_degree = rng.integers(0, 41, n)
    directed = CSRGraph.from_edges(np.repeat(np.arange(n), out_degree),
                                   rng.integers(0, n, int(out_degree.sum())), n_vertices=n,
                                   symmetrize=False)
    for host in (mesh, wide_ids, ring, directed):
        g = host.to("gpu")
        assert 8 < gpu.workspace(g).max_degree <= 64
        for source in (0, 7, host.n_vertices - 1):
            for enter_local in (0, 64, 2048):
                for parents in (True, False):
                    dist, parent, _ = gpu.run(g, source, variant="persistent",
                                              want_parents=parents, enter_local=enter_local,
                                              relabel=False)
                    _check_gpu(host, source, dist, parent)


def bounded_degree_graphs() -> list[tuple[str, CSRGraph, list[int]]]:
    """Graphs of maximum degree <= 16 (the persistent kernel's ELL rows): a grid (width 4),
    a 3D grid whose wide levels overflow the one-block edge queue and narrow ones return
    to it (width 8), a long thin grid (hundreds of one-block levels), a directed graph of
    out-degree 3 (frontiers that triple, in-degrees unbounded), and a Delaunay graph of
    random points (width 16: mean degree 6, maximum 9-16)."""
    from morphgpu import generators  # noqa: PLC0415

    rng = np.random.default_rng(5)
    n = 20000
    src = np.repeat(np.arange(n), 3)
    dst = rng.integers(0, n, 3 * n)
    directed = CSRGraph.from_edges(src, dst, n_vertices=n, symmetrize=False)
    return [
        ("grid 120x80", generators.grid2d(120, 80, device="cpu"), [0, 5000, 9599]),
        ("grid3d 30^3", generators.grid3d(30, 30, 30, device="cpu"), [0, 13 * 900 + 15 * 31]),
        ("grid 2000x3", generators.grid2d(2000, 3, device="cpu"), [0, 3001]),
        ("directed deg 3", directed, [0, 17]),
        ("delaunay 12k", generators.delaunay_graph(12000, seed=2, device="cpu"), [0, 7777]),
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{}, {"enter_local": 0}, {"enter_local": 64},
                                     {"blocks": 1}, {"blocks": 1, "enter_local": 0},
                                     {"blocks": 1, "enter_local": 64},
                                     {"blocks": 4, "enter_local": 64}])
def test_gpu_persistent_ell(options):
    """The ELL rows: one-block levels on an edge queue (overflowing into grid levels and
    back), grid levels by expand_ell_claim alone (enter_local 0); CSR rows on a graph of
    larger degree (the layered graph). A grid of one block (grid levels too) or a few.
    Block 0's visited bitmap is rebuilt from the labels at every hand-over back to block 0
    (enter_local 64)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    cases = bounded_degree_graphs()
    cases.append(("layered", layered_graph(THRESHOLD_WIDTHS[-1][0], True), [0]))
    for label, host, sources in cases:
        g = host.to("gpu")
        ws = gpu.workspace(g)
        if label != "layered":
            assert ws.ell_width in (4, 8, 16), label
        for source in sources:
            dist, parent, _ = gpu.run(g, source, variant="persistent", want_parents=True,
                                      **options)
            graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
            np.testing.assert_array_equal(dist.get(), scipy_distances(host, source))


@pytest.mark.gpu
@pytest.mark.parametrize("enter_local", [None, 64])
def test_gpu_persistent_bitmap_above_48k(enter_local):
    """A grid whose bitmap (61 KB) and the kernel's static shared memory pass the 48 KB a
    block gets without opting in: deep (1,398 levels), every level in block 0, or (enter
    at 64) wide levels on the grid and the bitmap rebuilt at each hand-over back."""
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415

    host = generators.grid2d(700, 700, device="cpu")
    assert gpu.bitmap_bytes(host.n_vertices, 4) > 48 * 1024
    g = host.to("gpu")
    for source in (0, 350 * 700 + 350):
        options = {} if enter_local is None else {"enter_local": enter_local}
        dist, parent, _ = gpu.run(g, source, variant="persistent", want_parents=True,
                                  **options)
        graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
        np.testing.assert_array_equal(dist.get(), scipy_distances(host, source))


@pytest.mark.gpu
def test_gpu_ell_rows():
    """Workspace.ell holds each CSR row, padded with -1."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    for _, host, _ in bounded_degree_graphs():
        g = host.to("gpu")  # the workspace holds its graph weakly
        ws = gpu.workspace(g)
        k = ws.ell_width
        ell = ws.ell().get().reshape(host.n_vertices, k)
        for v in range(0, host.n_vertices, 97):
            row = host.indices[host.indptr[v]:host.indptr[v + 1]]
            np.testing.assert_array_equal(ell[v, :row.size], row)
            assert (ell[v, row.size:] == -1).all()


@pytest.mark.gpu
@pytest.mark.parametrize("variant,options", [("beamer", {}), ("direction-optimizing", {}),
                                             ("bottom-up", {}),
                                             ("beamer", {"want_parents": False}),
                                             ("direction-optimizing",
                                              {"want_parents": False})])
def test_gpu_direction_relabelled(variant, options, monkeypatch):
    """The direction kernels on the degree-relabelled copy, results mapped back by the
    search's own launch: same distances as SciPy, parents that pass
    Graph500's checks in the caller's ids, on symmetric and directed graphs with hubs, an
    isolated source, and a graph of one vertex. Every source's results are checked after
    all the searches on that graph, since the searches share the relabelled workspace's
    labels."""
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415

    options = dict(options)
    want_parents = options.pop("want_parents", True)
    graphs = [generators.kronecker(12, 16, device="gpu"),
              generators.rmat(11, 8, device="gpu", directed=True),
              CSRGraph.from_edges(np.array([0, 2]), np.array([2, 3]), n_vertices=5,
                                  symmetrize=True).to("gpu"),
              CSRGraph.from_edges(np.array([], dtype=np.int64), np.array([], dtype=np.int64),
                                  n_vertices=1).to("gpu")]
    for g in graphs:
        host = g.to("cpu")
        degrees = np.diff(host.indptr)
        sources = {0, int(np.argmax(degrees))}
        if host.n_vertices > 8:
            sources.add(int(np.flatnonzero(degrees)[7]))
        else:
            sources.add(host.n_vertices - 1)  # isolated in the 5-vertex graph
        results = {source: gpu.run(g, source, variant=variant, want_parents=want_parents,
                                   relabel=True, **options)
                   for source in sorted(sources)}
        for source, (dist, parent, _) in results.items():
            np.testing.assert_array_equal(dist.get(), scipy_distances(host, source))
            if want_parents:
                graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
            else:
                assert parent is None


@pytest.mark.gpu
@pytest.mark.parametrize("relabel", [False, True])
@pytest.mark.parametrize("beta", [1.0, 1.5, 3.0, 18.0, 300.0, 1e9])
def test_gpu_beamer_returns_to_top_down_at_any_beta(beta, relabel, monkeypatch):
    """After a bottom-up level, Beamer's rule goes back to top-down when the frontier holds
    fewer than n / beta vertices, and that level reads the queue the bottom-up level wrote,
    which lists only its first ceil(n / beta) entries (kernels/direction.cu). With beta from
    1 (the whole frontier listed) to far above n (none), every level's frontier lands on
    either side of the cap somewhere; distances equal SciPy's and parents pass Graph500's
    checks from sources in the core, on its rim and in a small component."""
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415
    from morphgpu.bfs.gpu import direction  # noqa: PLC0415

    monkeypatch.setattr(direction, "BETA", beta)
    core = generators.kronecker(12, 16, seed=3, device="cpu")
    n = core.n_vertices
    # A path of 40 vertices hung on vertex 0 and a separate triangle: deep tails after the
    # wide levels, and a component the search never reaches.
    src = np.concatenate([np.repeat(np.arange(n), np.diff(core.indptr)), [0],
                          np.arange(n, n + 39), [n + 40, n + 41, n + 42]])
    dst = np.concatenate([core.indices, [n], np.arange(n + 1, n + 40),
                          [n + 41, n + 42, n + 40]])
    g = CSRGraph.from_edges(src, dst, n_vertices=n + 43, symmetrize=True)
    degrees = np.diff(g.indptr)
    for source in (int(np.argmax(degrees)), int(np.flatnonzero(degrees == 1)[0]), n + 20,
                   n + 41):
        dist, parent, _ = gpu.run(g.to("gpu"), source, variant="beamer", want_parents=True,
                                  relabel=relabel)
        np.testing.assert_array_equal(dist.get(), scipy_distances(g, source))
        graph500_check(g.indptr, g.indices, source, dist.get(), parent.get())


@pytest.mark.gpu
@pytest.mark.parametrize("relabel", [False, True])
@pytest.mark.parametrize("variant", ["auto", "beamer", "direction-optimizing", "bottom-up"])
def test_gpu_direction_prepared_bfs(variant, relabel, monkeypatch):
    """bfs()'s prepared path (from the second call on a GPU CSRGraph with one variant):
    every call returns arrays of its own (all results checked after all the calls, with
    and without parents, sources as ints and NumPy ints), the variant that ran and the
    device, the kernel's figures; bad sources still raise; on the graph as given and on
    its degree-relabelled copy."""
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415

    if relabel:
        monkeypatch.setattr(gpu.workspace_module, "RELABEL_MIN_VERTICES", 0)
        monkeypatch.setattr(gpu.workspace_module, "HUB_SHARE", 0.0)
    g = generators.kronecker(12, 16, device="gpu")
    host = g.to("cpu")
    degrees = np.diff(host.indptr)
    hub, other = int(np.argmax(degrees)), int(np.flatnonzero(degrees)[7])
    isolated = np.flatnonzero(degrees == 0)
    calls = [(hub, True), (other, False), (np.int64(other), True), (hub, False),
             (np.int32(hub), True)]
    if isolated.size:
        calls.append((int(isolated[0]), True))
    results = []
    for source, parents in calls:
        results.append((int(source), parents,
                        bfs(g, source, variant=variant, device="gpu", predecessors=parents)))
        assert gpu.prepared_search(g, variant) is not None
    names = {r.variant for _, _, r in results}
    assert len(names) == 1 and names <= {"beamer", "direction-optimizing", "bottom-up"}
    assert gpu.workspace(g).searches[variant][1].relabelled == relabel
    for source, parents, result in results:
        assert result.device == "gpu" and result.source == source
        assert (result.predecessors is not None) == parents
        check_result(g, source, result, parents=parents)
    for bad in (-1, g.n_vertices, True, 1.5):
        with pytest.raises(ValueError, match="source"):
            bfs(g, bad, variant=variant, device="gpu")


@pytest.mark.gpu
def test_gpu_relabel_auto_rule(monkeypatch):
    """relabel="auto": graphs under RELABEL_MIN_VERTICES are searched as given; from there
    on, graphs whose hubs hold HUB_SHARE of the entries (Kronecker, a skewed R-MAT) on the
    degree-relabelled copy and the others (uniform random, a mildly skewed R-MAT) on their
    rows sorted by degree; where the copy would not fit in half the free memory, as given.
    Either way the search is exact; a bad ``relabel`` is refused."""
    from morphgpu import generators  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415

    kron = generators.kronecker(14, 16, device="gpu")
    rmat = generators.rmat(14, 16, a=0.57, b=0.19, c=0.19, device="gpu")
    mild = generators.rmat(14, 16, a=0.3, b=0.25, c=0.25, device="gpu")
    uniform = generators.gnm(1 << 14, 1 << 17, device="gpu")
    graphs = [(kron, "relabelled"), (rmat, "relabelled"), (mild, "sorted rows"),
              (uniform, "sorted rows")]
    for g, _ in graphs:
        assert gpu.workspace(g).search_order("auto") == "as given"  # under the minimum
    monkeypatch.setattr(gpu.workspace_module, "RELABEL_MIN_VERTICES", 0)
    for g, order in graphs:
        ws = gpu.workspace(g)
        share = ws.hub_share()
        assert (share >= gpu.workspace_module.HUB_SHARE) == (order == "relabelled"), share
        assert ws.search_order("auto") == order
    small = generators.kronecker(10, 16, device="gpu")  # the workspace holds it weakly
    too_big = gpu.workspace(small)
    monkeypatch.setattr(too_big, "relabel_bytes", lambda: 1 << 60)
    assert too_big.search_order("auto") == "as given"
    with pytest.raises(ValueError, match="relabel"):
        too_big.search_order("sorted")
    for g, order in graphs:
        host = g.to("cpu")
        source = int(np.argmax(np.diff(host.indptr)))
        dist, parent, _ = gpu.run(g, source, variant="beamer", want_parents=True,
                                  relabel="auto")
        np.testing.assert_array_equal(dist.get(), scipy_distances(host, source))
        graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
        assert gpu.direction_call(gpu.workspace(g), rule="beamer",
                                  relabel="auto").order == order


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{}, {"relabel": True}])
@pytest.mark.parametrize("variant", ["bottom-up", "beamer"])
def test_gpu_direction_trim(variant, options):
    """Bottom-up levels stop at the last vertex with an in-neighbour: vertices past it
    (out-edges only, on a directed graph; isolated, on a symmetric one) keep their labels,
    and a source among them is searched from, bottom-up levels or not."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    rng = np.random.default_rng(5)
    inner = 40
    src = np.concatenate([rng.integers(0, inner, 200), np.arange(inner, inner + 10)])
    dst = np.concatenate([rng.integers(0, inner, 200), rng.integers(0, inner, 10)])
    directed = CSRGraph.from_edges(src, dst, n_vertices=inner + 10).to("gpu")
    symmetric = CSRGraph.from_edges(src[:200], dst[:200], n_vertices=inner + 10,
                                    symmetrize=True).to("gpu")
    assert gpu.workspace(directed).bottom_up_end() <= inner
    assert gpu.workspace(symmetric).bottom_up_end() <= inner
    for g in (directed, symmetric):
        host = g.to("cpu")
        for source in (0, inner + 3, inner + 9):
            dist, parent, _ = gpu.run(g, source, variant=variant, want_parents=True,
                                      **options)
            graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
            np.testing.assert_array_equal(dist.get(), scipy_distances(g, source))


@pytest.mark.gpu
@pytest.mark.parametrize("n_hubs", [800, 1500])
def test_gpu_direction_top_down_hubs(n_hubs):
    """Top-down-only direction kernel on a level of hubs: flat grid-wide hub expansion when
    the hubs fit its table (800), the per-block path when they do not (1500)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    g = star_of_stars(n_hubs).to("gpu")
    host = g.to("cpu")
    for source in (0, 1, g.n_vertices - 1):
        dist, parent, _ = gpu.run(g, source, variant="direction-optimizing", rule="top-down",
                                  want_parents=True)
        graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
        np.testing.assert_array_equal(dist.get(), scipy_distances(g, source))


@pytest.mark.gpu
@pytest.mark.parametrize("rule", ["bottom-up", "beamer", "gamma"])
def test_gpu_direction_levels_without_double_hub_lists(rule):
    """direction.cu fuses its levels only where the hub lists can be double-buffered (2
    total_hubs <= n), which degree-derived hub thresholds always allow; with every vertex
    of positive degree made a hub, the unfused levels run (the bottom-up step one vertex
    at a time, adopt_parent): distances equal SciPy's, parents pass Graph500's checks."""
    from morphgpu.bfs.gpu import direction, workspace_module  # noqa: PLC0415

    rng = np.random.default_rng(5)
    n = 3000
    host = CSRGraph.from_edges(rng.integers(0, n, 12000), rng.integers(0, n, 12000),
                               n_vertices=n, symmetrize=True)
    g = host.to("gpu")  # held here: the workspace holds its graph weakly
    ws = workspace_module.Workspace(g)
    ws.hub_degree = 0
    ws.n_hubs = int((np.diff(host.indptr) > 0).sum())
    assert 2 * ws.n_hubs > n
    call = direction.DirectionCall(ws, rule=rule, relabel=False)
    for source in (0, int(np.argmax(np.diff(host.indptr)))):
        dist, parent, _ = call(source, True)
        np.testing.assert_array_equal(dist.get(), scipy_distances(host, source))
        graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
    assert ws.g is g


@pytest.mark.gpu
def test_gpu_workspace_is_freed_with_its_graph():
    """The workspace (and its GPU buffers) goes with its graph, searched or not; the
    cache holds neither alive."""
    import gc
    import weakref

    from morphgpu.bfs import gpu

    for search in (False, True):
        g = CSRGraph.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]),
                                n_vertices=3).to("gpu")
        ws = weakref.ref(gpu.workspace(g))
        if search:
            gpu.run(g, 0, variant="auto", want_parents=True)
        assert g in gpu.workspace_module.workspaces
        del g
        gc.collect()
        assert ws() is None


# --- the couplings, frontier classes and culling options (GPU only) ---------------------


def _gpu_check(g: CSRGraph, source: int, variant: str, **options):
    """Runs one variant on the GPU, checks it, and returns (GPU graph, host distances)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    on_gpu = g.to("gpu")
    dist, parent, _ = gpu.run(on_gpu, source, variant=variant, want_parents=True, **options)
    host = g.to("cpu")
    graph500_check(host.indptr, host.indices, source, dist.get(), parent.get())
    np.testing.assert_array_equal(dist.get(), scipy_distances(g, source))
    return on_gpu, dist.get()


def _check_class_queues(on_gpu: CSRGraph, dist: np.ndarray, bounds) -> None:
    """The device's classification, read back: every level's four queue lengths equal the
    class sizes of the vertices at that distance (classified here by the host rule), and
    the last level's queues (not overwritten by the ping-pong) hold exactly its vertices,
    each in the queue of its class."""
    from morphgpu.bfs import gpu, layouts  # noqa: PLC0415

    dev = layouts.csr_view(gpu.workspace(on_gpu))  # the runner's buffers live with it
    degrees = np.diff(on_gpu.to("cpu").indptr)
    top = int(dist.max())
    counts = dev.buffers["class counts"].get().astype(np.int64)
    expected = np.zeros((top + 2, 4), dtype=np.int64)
    reached = dist >= 0
    np.add.at(expected, (dist[reached], variants.frontier_class(degrees[reached], bounds)), 1)
    np.testing.assert_array_equal(counts[:top + 2], expected)
    stride = max(on_gpu.n_vertices, 1)
    queues = dev.buffers["class queues"].get()[top & 1]
    listed = []
    for c in range(4):
        q = queues[c * stride:c * stride + counts[top, c]]
        assert (variants.frontier_class(degrees[q], bounds) == c).all()
        listed.append(q)
    np.testing.assert_array_equal(np.sort(np.concatenate(listed)), np.flatnonzero(dist == top))


def _sparse_sinks(n_sinks: int = 20000, every: int = 50) -> CSRGraph:
    """Directed: the source reaches n_sinks vertices, one in `every` of which has an edge
    on (the rest have none), so a merge-path item tile spans more rows than its stage."""
    sinks = np.arange(1, n_sinks + 1)
    onward = sinks[::every]
    src = np.concatenate([np.zeros(n_sinks, dtype=np.int64), onward])
    dst = np.concatenate([sinks, n_sinks + 1 + np.arange(onward.size)])
    return CSRGraph.from_edges(src, dst, n_vertices=n_sinks + 1 + onward.size)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{"f0": 0.0}, {"f0": float("inf")}, {"f0": 3.0},
                                     {"check_every": 1}, {"check_every": 9}])
@pytest.mark.parametrize("variant", ["merge-path-separate", "merge-path-ib", "merge-path-bi",
                                     "merge-path-hybrid"])
def test_gpu_merge_path_couplings(variant, options):
    """Every coupling on graphs with empty rows in the frontier (directed sinks), hubs and
    deep levels; the hybrid forced to either side (f0 = 0: always bi; inf: always ib)."""
    if "f0" in options and variant != "merge-path-hybrid":
        pytest.skip("f0 is the hybrid's switch")
    grid = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.grid_2d_graph(60, 40)),
                               directed=False)
    for g, source in ((_sparse_sinks(), 0), (star_of_stars(900), 0), (grid, 77),
                      (layered_graph([1, 700, 1024, 3000, 5, 2600, 1], True), 0)):
        _gpu_check(g, source, variant, **options)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{}, {"bounds": (2, 8, 64)}, {"bounds": (1, 1, 1)},
                                     {"bounds": (32, 256, 257)}, {"check_every": 1}])
def test_gpu_frontier_classes(options):
    """Default bounds, and bounds that send rows of a few edges to the warp, block and grid
    workers (every class on a small graph); a hub of 70,000 edges is a huge row."""
    rng = np.random.default_rng(5)
    n = 80000
    hub_src = np.zeros(70000, dtype=np.int64)
    src = np.concatenate([hub_src, rng.integers(0, n, 60000), np.repeat([7, 8], 300)])
    dst = np.concatenate([rng.integers(1, n, 70000), rng.integers(0, n, 60000),
                          rng.integers(0, n, 600)])
    big = CSRGraph.from_edges(src, dst, n_vertices=n, symmetrize=True)
    bounds = options.get("bounds", variants.CLASS_BOUNDS)
    for g, source in ((big, 0), (big, 9), (star_of_stars(900), 5), (_sparse_sinks(), 0)):
        on_gpu, dist = _gpu_check(g, source, "frontier-classes", **options)
        _check_class_queues(on_gpu, dist, bounds)


@pytest.mark.gpu
@pytest.mark.parametrize("cull", ["bitmask", "warp", "history", ("warp", "history"), "all"])
@pytest.mark.parametrize("variant", ["expand-contract", "two-phase", "contract-expand",
                                     "hybrid"])
def test_gpu_contract_culling(variant, cull):
    """Merrill's culling options in front of the claim: duplicate edges (the warp and the
    history see the same neighbour again), hubs, deep grids, directed graphs."""
    rng = np.random.default_rng(3)
    n = 5000
    src = np.concatenate([rng.integers(0, n, 30000), np.repeat([1, 2], 2000)])
    dst = np.concatenate([rng.integers(0, n, 30000), np.tile(np.arange(100, 300), 20)])
    multi = CSRGraph.from_edges(src, dst, n_vertices=n)  # duplicates kept
    grid = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.grid_2d_graph(50, 50)),
                               directed=False)
    options = {"switch": 64} if variant == "hybrid" else {}  # both of its level kinds
    for g, source in ((multi, 1), (multi, 0), (grid, 0), (star_of_stars(600), 0)):
        _gpu_check(g, source, variant, cull=cull, **options)


def test_bitmap_bytes():
    """Block 0's visited bitmap: a bit per vertex in whole BITMAP_BYTES_STEP units, only
    with ELL rows and up to BITMAP_MAX_VERTICES, within the 227 KB a Hopper block may have
    beside the kernel's ~45 KB of static shared memory."""
    from morphgpu.bfs.gpu import persistent  # noqa: PLC0415

    step = persistent.BITMAP_BYTES_STEP
    assert persistent.bitmap_bytes(1, 4) == step
    assert persistent.bitmap_bytes(264346, 8) == -(-((264346 + 31) // 32 * 4) // step) * step
    assert persistent.bitmap_bytes(264346, 8) * 8 >= 264346
    assert persistent.bitmap_bytes(264346, 0) == 0  # no ELL rows
    top = persistent.bitmap_bytes(persistent.BITMAP_MAX_VERTICES, 8)
    assert top * 8 >= persistent.BITMAP_MAX_VERTICES and top + 46 * 1024 <= 227 * 1024
    assert persistent.bitmap_bytes(persistent.BITMAP_MAX_VERTICES + 1, 8) == 0


def test_grid_blocks_rules():
    """Persistent launch sizes: the resident grid, fewer by SMALL_GRID's vertices per block,
    fewer still by the widest frontier seen, never below one block nor ADAPTIVE_MIN_BLOCKS
    from the frontier rule."""
    from types import SimpleNamespace

    from morphgpu.bfs.gpu import launch  # noqa: PLC0415

    coop = SimpleNamespace(grid=264, mode="cooperative")
    assert launch.grid_blocks(coop, 25_000_000, 0) == 264
    assert launch.grid_blocks(coop, 25_000_000, 16384) == 264
    assert launch.grid_blocks(coop, 264_346, 16384) == 17
    assert launch.grid_blocks(coop, 10, 16384) == 1
    per = launch.ADAPTIVE_WIDTH_PER_BLOCK
    assert launch.grid_blocks(coop, 25_000_000, 16384, widest=20 * per) == 20
    assert launch.grid_blocks(coop, 25_000_000, 16384, widest=20 * per + 1) == 21
    assert launch.grid_blocks(coop, 25_000_000, 16384, widest=1) == launch.ADAPTIVE_MIN_BLOCKS
    assert launch.grid_blocks(coop, 25_000_000, 16384, widest=10**9) == 264
    assert launch.grid_blocks(coop, 100, 16384, widest=100) == 1  # SMALL_GRID's bound holds


def _async_cases() -> list[tuple[str, CSRGraph, list[int]]]:
    """Graphs for the async variant: deep grids (roads-like: degree <= 4, hundreds of
    levels), a path, a random directed graph (parents from the reverse graph), a symmetric
    graph with unreachable components, 64-bit vertex ids, one vertex, no edges."""
    from morphgpu import generators  # noqa: PLC0415

    rng = np.random.default_rng(22)
    n = 5000
    directed = CSRGraph.from_edges(rng.integers(0, n, 12000), rng.integers(0, n, 12000),
                                   n_vertices=n, symmetrize=False)
    # Three components: two random ones and isolated vertices at the end.
    src = np.concatenate([rng.integers(0, 1000, 3000), rng.integers(1000, 2000, 3000)])
    dst = np.concatenate([rng.integers(0, 1000, 3000), rng.integers(1000, 2000, 3000)])
    parts = CSRGraph.from_edges(src, dst, n_vertices=2100, symmetrize=True)
    grid = generators.grid2d(300, 200, device="cpu")
    wide_ids = CSRGraph(grid.indptr.astype(np.int64), grid.indices.astype(np.int64), None,
                        grid.n_vertices, False)
    path = CSRGraph.from_scipy(nx.to_scipy_sparse_array(nx.path_graph(3000)),
                               directed=False)
    return [
        ("grid 300x200", grid, [0, 299, 30150]),
        ("grid 1000x40", generators.grid2d(1000, 40, device="cpu"), [0, 20500]),
        ("path 3000", path, [0, 1500]),
        ("directed", directed, [0, 17]),
        ("components", parts, [5, 1500, 2050]),
        ("64-bit ids", wide_ids, [7]),
        ("one vertex", CSRGraph.from_edges(np.array([], dtype=np.int64),
                                           np.array([], dtype=np.int64), n_vertices=1), [0]),
        ("no edges", CSRGraph.from_edges(np.array([], dtype=np.int64),
                                         np.array([], dtype=np.int64), n_vertices=7), [3]),
    ]


def _check_gpu(host: CSRGraph, source: int, dist, parent) -> None:
    d = dist.get()
    np.testing.assert_array_equal(d, scipy_distances(host, source))
    if parent is not None:
        graph500_check(host.indptr, host.indices, source, d, parent.get())


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{}, {"blocks": 1}, {"blocks": 1 << 20},
                                     {"local": 64, "keep": 0}, {"unroll": 1},
                                     {"keep": 256, "sleep_ns": 32}])
def test_gpu_async(options):
    """The async variant against SciPy and Graph500's parent check: default launch, one
    block (8 warps), the whole resident grid, small rings that overflow into the global
    queue and share everything, one edge chunk per pass, no sharing. No overflow at the
    default queue size."""
    from morphgpu.bfs import gpu  # noqa: PLC0415
    from morphgpu.bfs.gpu import asynchronous  # noqa: PLC0415

    for label, host, sources in _async_cases():
        g = host.to("gpu")
        ws = gpu.workspace(g)
        for source in sources:
            for parents in (True, False):
                dist, parent, name = gpu.run(g, source, variant="async",
                                             want_parents=parents, **options)
                assert name == "async"
                assert (parent is None) == (not parents)
                _check_gpu(host, source, dist, parent)
                stats = asynchronous.last_stats(ws)
                assert stats["overflow"] == 0, label
                reached = int((dist >= 0).sum())
                # Every reached vertex but the source had its label lowered at least once
                # and was processed at least once.
                assert stats["lowered"] >= reached - 1, (label, stats)
                assert stats["processed"] >= reached, (label, stats)


@pytest.mark.gpu
@pytest.mark.parametrize("capacity", [1, 2, 64, 200])
def test_gpu_async_queue_overflow(capacity):
    """A queue too small for the search: the kernel flags the overflow, the runner reruns
    with the level-synchronous kernel and the answer is still exact; the queue is left
    EMPTY for the next search, which runs at the default size without overflow. Overflow
    is certain: the root of star_of_stars(300) pushes 300 hubs in one batch, of which a
    ring of 64 keeps 64 at most, so >= 236 items go to the global queue (from a leaf, the
    root's batch pushes the other 299)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415
    from morphgpu.bfs.gpu import asynchronous  # noqa: PLC0415

    host = star_of_stars(300)
    g = host.to("gpu")
    ws = gpu.workspace(g)
    before = asynchronous.state(ws).overflows
    for source in (0, host.n_vertices - 1):
        dist, parent, _ = gpu.run(g, source, variant="async", want_parents=True,
                                  capacity=capacity, local=64, keep=0)
        _check_gpu(host, source, dist, parent)
        assert asynchronous.last_stats(ws)["overflow"] == 1
    st = asynchronous.state(ws)
    assert st.overflows == before + 2
    assert st.grow_to == 0  # a size the caller fixed is not grown
    assert int((st.queue != np.uint64(2**64 - 1)).sum()) == 0  # all EMPTY again
    for source in (0, 77):
        dist, parent, _ = gpu.run(g, source, variant="async", want_parents=True)
        _check_gpu(host, source, dist, parent)
        assert asynchronous.last_stats(ws)["overflow"] == 0
        assert int((asynchronous.state(ws).queue != np.uint64(2**64 - 1)).sum()) == 0


@pytest.mark.gpu
def test_gpu_async_roads(shared):
    """A real road network (deep, degree <= 8): async against SciPy, from a few roots."""
    from morphgpu import graph_io  # noqa: PLC0415
    from morphgpu.bfs import gpu  # noqa: PLC0415

    host = graph_io.read_graph(shared("data", "roads", "NY.gr.xz")).to("cpu")
    g = host.to("gpu")
    for source in (0, host.n_vertices // 2, host.n_vertices - 1):
        dist, parent, _ = gpu.run(g, source, variant="async", want_parents=True)
        _check_gpu(host, source, dist, parent)


def test_async_queue_capacity_rule():
    from morphgpu.bfs.gpu import asynchronous  # noqa: PLC0415

    for n in (1, 7, 2048, 10**6, 25 * 10**6):
        assert asynchronous.queue_capacity(n) >= 2 * n + 4096
    assert variants.check("async").cpu_direction == "top-down"


def _shuffled_grid() -> CSRGraph:
    from morphgpu import generators, reorder  # noqa: PLC0415

    grid = generators.grid2d(120, 90, device="cpu")
    return reorder.apply(grid, np.random.default_rng(5).permutation(grid.n_vertices))


@pytest.mark.gpu
def test_gpu_relabelled_copy():
    """Searches on the locality-relabelled copy (gpu/relabel.py) answer in the caller's
    ids: distances exact against SciPy, parents through Graph500's checks, with and without
    parents; a shuffled grid, a directed graph, components, 64-bit ids, no edges."""
    from morphgpu.bfs import gpu  # noqa: PLC0415
    from morphgpu.bfs.gpu import relabel  # noqa: PLC0415

    keep = ("directed", "components", "64-bit ids", "no edges")
    cases = [("shuffled grid", _shuffled_grid(), [0, 5000])] + [
        c for c in _async_cases() if c[0] in keep]
    for label, host, sources in cases:
        g = host.to("gpu")
        for source in sources:
            for parents in (True, False):
                dist, parent, _ = gpu.run(g, source, variant="persistent",
                                          want_parents=parents, relabel=True)
                assert (parent is None) == (not parents), label
                _check_gpu(host, source, dist, parent)
        copy = relabel.preparation(gpu.workspace(g))
        assert copy is not None and copy.graph is not None, label
        assert copy.graph.n_vertices == host.n_vertices


@pytest.mark.gpu
def test_gpu_relabel_auto_from_the_second_search():
    """relabel="auto" (persistent's default): the first search of a graph runs as given and
    builds nothing; the second builds the copy and, on a shuffled grid (scattered ids),
    keeps and uses it; answers exact throughout."""
    from morphgpu.bfs import gpu  # noqa: PLC0415
    from morphgpu.bfs.gpu import relabel  # noqa: PLC0415

    host = _shuffled_grid()
    g = host.to("gpu")
    ws = gpu.workspace(g)
    dist, parent, _ = gpu.run(g, 3, variant="persistent", want_parents=True)
    _check_gpu(host, 3, dist, parent)
    assert relabel.preparation(ws) is None
    for source in (77, 9000):
        dist, parent, _ = gpu.run(g, source, variant="persistent", want_parents=True)
        _check_gpu(host, source, dist, parent)
    copy = relabel.preparation(ws)
    assert copy is not None and copy.graph is not None
    assert copy.locality_copy > 1.5 * copy.locality_given
    assert copy.seconds > 0
