"""The ``overlay`` BFS variant (bfs/gpu/overlay.py; kernels/overlay.cu) against SciPy's
distances and Graph500's parent check: the graphs of the tiled variant's tests (grids,
Delaunay, a Kronecker graph, directed, disconnected, 64-bit ids, one vertex, no edges),
with tiles small enough that every search crosses many of them, both arms of the rounds
and other deltas, a tile whose edges pass the shared-memory capacity, random graphs
(hypothesis); and on the CPU the variant's table entry, its NumPy path and the host-side
sizes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_bfs_tiled import cases, check, hub_graph, scipy_distances, searched_cases

from morphgpu import generators, kernels
from morphgpu.bfs import bfs, variants
from morphgpu.bfs.gpu import overlay
from morphgpu.csr import CSRGraph


def test_overlay_in_the_variant_table():
    v = variants.check("overlay")
    assert v.implemented and v.cpu_direction == "top-down"


def test_cpu_path_is_the_numpy_search():
    """On the CPU the name maps to the NumPy BFS: SciPy's distances."""
    for label, host, sources in cases():
        for source in sources:
            result = bfs(host, source, variant="overlay", device="cpu", predecessors=True)
            d = np.asarray(result.distances)
            np.testing.assert_array_equal(d, scipy_distances(host, source), err_msg=label)


def test_host_sizes_agree_with_the_kernel():
    """The constants the host reads from overlay.cu, and the shared-memory sizes: whole
    16-byte units holding a tile BFS's arrays and the rounds' D chunk and sources."""
    consts = kernels.source_constants(overlay.OVERLAY_FILE)
    assert overlay.D_CHUNK == consts["D_CHUNK"] == 8192
    assert len({overlay.C_ERROR, overlay.C_ROUNDS, overlay.C_VISITS, overlay.C_SOURCES}) == 4
    assert max(overlay.C_ERROR, overlay.C_SOURCES) < overlay.CTRL_WORDS
    for shift in (6, 8, 10):
        for cap in (1, 1000, overlay.EDGE_CAP_LIMIT):
            t = 1 << shift
            tb = overlay.tile_bytes(shift, cap)
            assert tb % 16 == 0 and tb >= 8 * t + 4 + 2 * cap
            for nb in (1, 300, t):
                sb = overlay.shared_bytes(shift, cap, nb)
                assert sb >= tb and sb >= 2 * overlay.D_CHUNK + 8 * nb
    assert {b for _, b in overlay.ARMS} <= {256, 512}


def dense_tile_graph() -> CSRGraph:
    """A clique of 200 vertices (39,800 directed edges inside one tile of 256: past the
    shared-memory capacity, so its edges are read from global memory) and a path of 600
    from it."""
    a, b = np.triu_indices(200, 1)
    path = np.arange(199, 799)
    src = np.concatenate([a, path[:-1]])
    dst = np.concatenate([b, path[1:]])
    return CSRGraph.from_edges(src, dst, n_vertices=800, symmetrize=True)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [
    {}, {"tile_shift": 6}, {"tile_shift": 6, "delta": 8, "block": 512},
    {"tile_shift": 7, "delta": 1}], ids=str)
def test_gpu_overlay(options):
    """Default tiles (the arms timed) and 64 / 128-vertex tiles (every search crosses
    many); each arm of the rounds and delta 1 (one level per round). Several searches per graph
    on one workspace (the overlay and its buffers reused)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    for label, g, _ in searched_cases("overlay", options):
        if g.n_edges:
            stats = overlay.last_stats(gpu.workspace(g), options.get("tile_shift",
                                                                     overlay.SHIFT))
            assert stats["rounds"] >= 1 and stats["visits"] >= 1, (label, stats)


@pytest.mark.gpu
def test_gpu_overlay_times_its_arms_once():
    """Without options the graph's first search times both arms and keeps the faster;
    later searches run it and stay exact."""
    from morphgpu.bfs import gpu  # noqa: PLC0415
    from morphgpu.bfs.gpu import tiled  # noqa: PLC0415
    from morphgpu.bfs.gpu.workspace import workspaces  # noqa: PLC0415

    host = generators.delaunay_graph(30_000, seed=2, device="cpu")
    g = host.to("gpu")
    for source in (0, 12345, 29999):
        dist, parent, _ = gpu.run(g, source, variant="overlay", want_parents=True)
        check(host, source, dist, parent)
    copy = tiled.preparation(gpu.workspace(g), overlay.SHIFT)
    ov = overlay.build(workspaces[copy.graph], overlay.SHIFT)
    assert ov.arm in overlay.ARMS and set(ov.ms_by_arm) == set(overlay.ARMS)


@pytest.mark.gpu
@pytest.mark.parametrize("options", [{"tile_shift": 8}, {"tile_shift": 6, "delta": 8}],
                         ids=str)
def test_gpu_overlay_dense_tile_and_hub(options):
    """A tile whose edges pass the shared-memory capacity (read from global memory), and
    a hub of 3000 leaves (rows far longer than a tile)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    for host, sources in ((dense_tile_graph(), (0, 500, 799)), (hub_graph(3000), (0, 17))):
        g = host.to("gpu")
        for source in sources:
            dist, parent, _ = gpu.run(g, source, variant="overlay", want_parents=True,
                                      **options)
            check(host, source, dist, parent)


@pytest.mark.gpu
@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 300), m=st.integers(0, 900), directed=st.booleans(),
       seed=st.integers(0, 2**31 - 1), delta=st.sampled_from([0, 1, 5]))
def test_gpu_overlay_random_graphs(n, m, directed, seed, delta):
    """Random graphs, directed or not, in tiles of 64: distances and parents exact from a
    random source."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    host = CSRGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n_vertices=n,
                               symmetrize=not directed)
    source = int(rng.integers(0, n))
    dist, parent, _ = gpu.run(host.to("gpu"), source, variant="overlay", want_parents=True,
                              tile_shift=6, delta=delta)
    check(host, source, dist, parent)


@pytest.mark.gpu
def test_gpu_overlay_rejects_bad_options():
    from morphgpu.bfs import gpu  # noqa: PLC0415

    g = generators.grid2d(20, 20, device="gpu")
    for options, match in (({"tile_shift": 5}, "tile_shift"), ({"tile_shift": 11}, "tile_shift"),
                           ({"delta": -1}, "delta"), ({"block": 128}, "block")):
        with pytest.raises(ValueError, match=match):
            gpu.run(g, 0, variant="overlay", want_parents=False, **options)
