"""The host-side rules of the BFS policies, and NumPy models of the device arithmetic.

The GPU kernels cannot run here, so what they decide is tested where it can be: the
expand-factor switch, the frontier classification and its bounds, the culling option
names, and a line-by-line model of the merge-path tiling in
include/morphgpu/traversal/merge_path.cuh (every edge of a level lands in exactly one
tile, in the row that owns it, and a diagonal tile always fits its shared stage).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from morphgpu.bfs import variants

# --- merge_path.cuh, transcribed -------------------------------------------------------


def warp_first_false(lo: int, hi: int, pred) -> int:
    """The 32-lane search, lane by lane: probes, ballot count, narrowed range."""
    while hi - lo > 32:
        step = (hi - lo + 31) // 32
        below = sum(1 for lane in range(32) if lo + lane * step < hi and pred(lo + lane * step))
        if below == 0:
            return lo
        next_hi = lo + below * step
        lo = lo + (below - 1) * step + 1
        hi = min(hi, next_hi)
    return lo + sum(1 for lane in range(32) if lo + lane < hi and pred(lo + lane))


def merge_path_rows(ends: np.ndarray, n_rows: int, total: int, d: int) -> int:
    return warp_first_false(max(0, d - total), min(d, n_rows),
                            lambda mid: ends[mid] <= d - 1 - mid)


def owning_row(ends: np.ndarray, lo: int, count: int, k: int) -> int:
    hi = lo + count
    while lo < hi:
        mid = (lo + hi) >> 1
        if ends[mid] > k:
            hi = mid
        else:
            lo = mid + 1
    return lo


def balanced_tile(ends, n_rows, total, t, tile):
    d0 = t * tile
    d1 = min(d0 + tile, n_rows + total)
    r0 = merge_path_rows(ends, n_rows, total, d0)
    r1 = merge_path_rows(ends, n_rows, total, d1)
    last = r1 if r1 < n_rows else n_rows - 1
    return r0, (last - r0 + 1 if last >= r0 else 0), d0 - r0, d1 - r1


def item_tile(ends, n_rows, total, t, tile):
    k0 = t * tile
    k1 = min(k0 + tile, total)
    r0 = warp_first_false(0, n_rows, lambda r: ends[r] <= k0)
    r1 = warp_first_false(0, n_rows, lambda r: ends[r] <= k1 - 1)
    return r0, r1 - r0 + 1, k0, k1


def tile_items(ends, first_row, n_rows, first_item, end_item, tile):
    """(item, row) pairs as visit_tile_items hands them out, staged or not."""
    staged = n_rows <= tile + 1
    out = []
    for k in range(first_item, end_item):
        if staged:
            row = first_row + owning_row(ends[first_row:first_row + n_rows], 0, n_rows, k)
        else:
            row = owning_row(ends, first_row, n_rows, k)
        out.append((k, row))
    return out, staged


@settings(max_examples=200, deadline=None)
@given(lo=st.integers(0, 5000), width=st.integers(0, 5000), cut=st.integers(0, 5000))
def test_warp_search_finds_the_first_false(lo, width, cut):
    hi = lo + width
    first_false = min(max(lo + cut, lo), hi)
    assert warp_first_false(lo, hi, lambda i: i < first_false) == first_false


degree_lists = st.lists(st.integers(0, 40) | st.just(0), min_size=1, max_size=120)


@settings(max_examples=150, deadline=None)
@given(degrees=degree_lists, tile=st.sampled_from([1, 2, 4, 7, 16]),
       diagonal=st.booleans())
def test_merge_path_tiles_cover_every_edge_once_in_its_row(degrees, tile, diagonal):
    ends = np.cumsum(np.array(degrees, dtype=np.int64))
    n, total = ends.size, int(ends[-1])
    if total == 0:
        return  # the kernel returns before tiling an edgeless level
    steps = n + total if diagonal else total
    seen = []
    for t in range(-(-steps // tile)):
        setup = balanced_tile if diagonal else item_tile
        first_row, n_rows, first_item, end_item = setup(ends, n, total, t, tile)
        assert 0 <= first_item <= end_item <= total
        assert end_item - first_item <= tile
        items, staged = tile_items(ends, first_row, n_rows, first_item, end_item, tile)
        if diagonal:
            assert staged, "a diagonal tile must always fit the stage"
        for k, row in items:
            assert first_row <= row < first_row + n_rows
            seen.append((k, row))
    ks = [k for k, _ in seen]
    assert sorted(ks) == list(range(total))
    truth = np.searchsorted(ends, np.array(ks), side="right")
    assert [row for _, row in seen] == truth.tolist()


def test_item_tile_over_many_empty_rows_is_not_staged():
    """An item tile spanning more rows than the stage (empty rows between short ones)
    falls back to the global search and still finds every row."""
    degrees = np.zeros(400, dtype=np.int64)
    degrees[::50] = 1
    ends = np.cumsum(degrees)
    first_row, n_rows, k0, k1 = item_tile(ends, ends.size, int(ends[-1]), 0, 4)
    items, staged = tile_items(ends, first_row, n_rows, k0, k1, 4)
    assert not staged
    assert [row for _, row in items] == [0, 50, 100, 150]


# --- the policies' host rules ------------------------------------------------------------


def test_hybrid_switches_on_the_expand_factor():
    f0 = variants.EXPAND_FACTOR_F0
    assert variants.hybrid_coupling(100, int(100 * f0) + 1) == "merge-path-bi"
    assert variants.hybrid_coupling(100, int(100 * f0)) == "merge-path-ib"
    assert variants.hybrid_coupling(1, 0) == "merge-path-ib"
    assert variants.hybrid_coupling(5, 6, f0=1.0) == "merge-path-bi"
    assert variants.hybrid_coupling(5, 6, f0=float("inf")) == "merge-path-ib"
    assert set(variants.COUPLINGS) <= set(variants.names())


def test_frontier_class_boundaries():
    degrees = np.array([0, 1, 31, 32, 255, 256, 65535, 65536, 10**9])
    np.testing.assert_array_equal(variants.frontier_class(degrees),
                                  [0, 0, 0, 1, 1, 2, 2, 3, 3])
    np.testing.assert_array_equal(variants.frontier_class(degrees, (2, 8, 64)),
                                  [0, 0, 2, 2, 3, 3, 3, 3, 3])
    assert int(variants.frontier_class(7)) == 0


@pytest.mark.parametrize("bounds", [(0, 8, 64), (33, 64, 128), (16, 8, 64), (8, 257, 300),
                                    (8, 64, 32), (8, 64)])
def test_class_bounds_the_kernel_cannot_serve(bounds):
    with pytest.raises(ValueError, match="bounds"):
        variants.check_class_bounds(bounds)


@settings(max_examples=50, deadline=None)
@given(degrees=st.lists(st.integers(0, 200_000), min_size=1, max_size=50),
       warp=st.integers(1, 32), data=st.data())
def test_classes_hold_rows_their_workers_can_take(degrees, warp, data):
    """Each class's rows fit its worker: a thread's whole row in one 32-edge run, a warp's
    in 8 edges per lane; the classes partition the degrees in order."""
    block = data.draw(st.integers(warp, 256))
    grid = data.draw(st.integers(block, 300_000))
    d = np.array(degrees)
    c = variants.frontier_class(d, (warp, block, grid))
    assert (d[c == 0] < warp).all() and (d[c == 0] <= variants.THREAD_ROW_CAP).all()
    assert (d[c == 1] < block).all() and (d[c == 1] <= variants.WARP_ROW_CAP).all()
    assert (d[c == 2] < grid).all() and (d[c == 3] >= grid).all()
    order = np.argsort(d, kind="stable")
    assert (np.diff(c[order]) >= 0).all()


def test_cull_options():
    assert variants.cull_mask(None) == 0
    assert variants.cull_mask(()) == 0
    assert variants.cull_mask("warp") == 2
    assert variants.cull_mask(("bitmask", "history")) == 5
    assert variants.cull_mask("all") == 7
    with pytest.raises(ValueError, match="cull"):
        variants.cull_mask(("warp", "nope"))


def test_every_issue_variant_is_implemented():
    for name in ("merge-path-separate", "merge-path-ib", "merge-path-bi",
                 "merge-path-hybrid", "frontier-classes"):
        v = variants.check(name)
        assert v.implemented and v.cpu_direction == "top-down"


# --- gpu.py's host loops against NumPy stand-ins for the kernels --------------------------
#
# Each stand-in takes the arguments in the order of its kernel's signature (merge_path.cu,
# classes.cu) and does what the kernel does, sequentially; what is tested is the host
# side: argument order, queue ping-pong, counts rows, the source's class, the periodic
# stop check. The kernels' own arithmetic is modelled above.


class FakeArray(np.ndarray):
    def get(self) -> np.ndarray:
        return np.asarray(self)


def _fake(a) -> FakeArray:
    return np.asarray(a).view(FakeArray)


class FakeCuPy:
    int32, int64, uint32, uint64 = np.int32, np.int64, np.uint32, np.uint64

    @staticmethod
    def empty(shape, dtype):
        return _fake(np.full(shape, 77, dtype=dtype))  # garbage, as device memory would be

    @staticmethod
    def zeros(shape, dtype):
        return _fake(np.zeros(shape, dtype=dtype))

    @staticmethod
    def full(shape, value, dtype):
        return _fake(np.full(shape, value, dtype=dtype))

    @staticmethod
    def stack(items):
        return _fake(np.stack([np.asarray(x) for x in items]))

    @staticmethod
    def concatenate(items):
        return _fake(np.concatenate([np.asarray(x) for x in items]))

    @staticmethod
    def sum(a):
        return _fake(np.sum(np.asarray(a)))


def _ptr(a):
    return None if isinstance(a, np.uint64) and int(a) == 0 else a


def _claim(dist, parent, src, w, level) -> bool:
    if dist[w] != -1:
        return False
    dist[w] = level
    if parent is not None:
        parent[w] = src
    return True


def _push(queue, tail, w) -> None:
    queue[int(tail[0])] = w
    tail[0] += 1


class FakeMergePathModule:
    def __init__(self, tile: int = 4) -> None:
        self.tile = tile
        self.couplings_run: list[int] = []

    def get_function(self, name):
        return getattr(self, name)

    def bfs_mp_scan_chunks(self, grid, block, args):
        indptr, queue, count, block_sums = args
        n, blocks = int(count[0]), grid[0]
        chunk = -(-n // blocks)
        degrees = np.diff(indptr)[np.asarray(queue[:n])]
        for b in range(blocks):
            block_sums[b] = degrees[b * chunk:min((b + 1) * chunk, n)].sum()

    def bfs_mp_scan_write(self, grid, block, args):
        indptr, queue, count, block_sums, ends = args
        n, blocks = int(count[0]), grid[0]
        chunk = -(-n // blocks)
        degrees = np.diff(indptr)[np.asarray(queue[:n])]
        for b in range(blocks):
            lo, hi = b * chunk, min((b + 1) * chunk, n)
            ends[lo:hi] = int(block_sums[:b].sum()) + np.cumsum(degrees[lo:hi])

    def _tiles(self, indptr, queue, ends, n, diagonal):
        total = int(ends[n - 1])
        steps = n + total if diagonal else total
        for t in range(-(-steps // self.tile)):
            setup = balanced_tile if diagonal else item_tile
            first_row, n_rows, k0, k1 = setup(ends, n, total, t, self.tile)
            for k, row in tile_items(ends, first_row, n_rows, k0, k1, self.tile)[0]:
                v = int(queue[row])
                yield v, int(indptr[v]) + k - (int(ends[row]) - int(indptr[v + 1] - indptr[v]))

    def bfs_mp_coupled(self, grid, block, args):
        (indptr, indices, dist, parent, in_q, ends, in_count, out_q, out_tail, level,
         coupling, f0) = args
        n = int(in_count[0])
        if n == 0 or int(ends[n - 1]) == 0:
            return
        diagonal = int(coupling) == 2 or (int(coupling) == 3 and
                                          int(ends[n - 1]) > float(f0) * n)
        self.couplings_run.append(2 if diagonal else 1)
        for v, position in self._tiles(indptr, in_q, ends, n, diagonal):
            w = int(indices[position])
            if _claim(dist, _ptr(parent), v, w, int(level)):
                _push(out_q, out_tail, w)

    def bfs_mp_redistribute(self, grid, block, args):
        indptr, in_q, ends, in_count, positions, sources = args
        n = int(in_count[0])
        if n == 0:
            return
        for k, (v, position) in enumerate(self._tiles(indptr, in_q, ends, n, True)):
            positions[k], sources[k] = position, v

    def bfs_mp_gather(self, grid, block, args):
        indices, dist, parent, ends, in_count, positions, sources, out_q, out_tail, level = args
        n = int(in_count[0])
        if n == 0:
            return
        for k in range(int(ends[n - 1])):
            w = int(indices[positions[k]])
            if _claim(dist, _ptr(parent), int(sources[k]), w, int(level)):
                _push(out_q, out_tail, w)


class FakeLevelModule:
    """level.cu's expand-contract and two-phase kernels (and their culled forms, whose
    culling only ever drops vertices that are visited, so it is not modelled)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def get_function(self, name):
        self.calls.append(name)
        return getattr(self, name.removesuffix("_culled"))

    def bfs_expand_contract(self, grid, block, args):
        indptr, indices, dist, parent, in_q, in_count, out_q, out_tail, level = args[:9]
        assert len(args) in (9, 11)
        for v in np.asarray(in_q[:int(in_count[0])]):
            for w in indices[indptr[v]:indptr[v + 1]]:
                if _claim(dist, _ptr(parent), int(v), int(w), int(level)):
                    _push(out_q, out_tail, w)

    def bfs_contract_expand(self, grid, block, args):
        (indptr, indices, dist, parent, in_dst, in_src, in_count, out_dst, out_src, out_tail,
         level) = args[:11]
        assert len(args) in (11, 13)
        for i in range(int(in_count[0])):
            w = int(in_dst[i])
            if _claim(dist, _ptr(parent), int(in_src[i]), w, int(level)):
                for u in indices[indptr[w]:indptr[w + 1]]:
                    if dist[u] == -1:
                        out_src[int(out_tail[0])] = w
                        _push(out_dst, out_tail, u)

    def bfs_two_phase_expand(self, grid, block, args):
        indptr, indices, dist, in_q, in_count, edge_dst, edge_src, edge_tail = args
        for v in np.asarray(in_q[:int(in_count[0])]):
            for w in indices[indptr[v]:indptr[v + 1]]:
                if dist[w] == -1:
                    edge_src[int(edge_tail[0])] = v
                    _push(edge_dst, edge_tail, w)

    def bfs_two_phase_contract(self, grid, block, args):
        edge_dst, edge_src, edge_count, dist, parent, out_q, out_tail, level = args[:8]
        assert len(args) in (8, 10)
        for i in range(int(edge_count[0])):
            if _claim(dist, _ptr(parent), int(edge_src[i]), int(edge_dst[i]), int(level)):
                _push(out_q, out_tail, edge_dst[i])


class FakeClassesModule:
    def __init__(self) -> None:
        self.classes_seen: set[int] = set()

    def get_function(self, name):
        assert name == "bfs_frontier_classes"
        return self.bfs_frontier_classes

    def bfs_frontier_classes(self, grid, block, args):
        (indptr, indices, dist, parent, in_queues, in_counts, out_queues, out_tails, stride,
         level, warp, blk, grd, error) = args
        stride = int(stride)
        bounds = (int(warp), int(blk), int(grd))
        caps = (32, 256, None, None)
        for c in range(4):
            for v in np.asarray(in_queues[c * stride:c * stride + int(in_counts[c])]):
                self.classes_seen.add(c)
                row = indices[indptr[v]:indptr[v + 1]]
                assert int(variants.frontier_class(row.size, bounds)) == c
                if caps[c] is not None and row.size > caps[c]:
                    error[0] = 1
                for w in row:
                    if _claim(dist, _ptr(parent), int(v), int(w), int(level)):
                        cls = int(variants.frontier_class(int(indptr[w + 1] - indptr[w]),
                                                          bounds))
                        out_queues[cls * stride + int(out_tails[cls])] = w
                        out_tails[cls] += 1


@pytest.fixture
def fake_gpu(monkeypatch):
    from morphgpu import backend
    from morphgpu.bfs import gpu
    from morphgpu.bfs.gpu import modules as gpu_modules

    # the module, not the package's function of the same name
    workspace = importlib.import_module("morphgpu.bfs.gpu.workspace")

    modules = {gpu_modules.MERGE_PATH_FILE: FakeMergePathModule(),
               gpu_modules.CLASSES_FILE: FakeClassesModule(),
               gpu_modules.LEVEL_FILE: FakeLevelModule()}
    monkeypatch.setattr(backend, "cupy_module", lambda: FakeCuPy)
    monkeypatch.setattr(backend, "gpu_properties", lambda *a: {"multiprocessors": 1})
    monkeypatch.setattr(backend, "require_gpu_bytes", lambda *a: None)
    monkeypatch.setattr(gpu_modules, "module", lambda path, vid, eid: modules[path])
    from morphgpu.bfs import layouts  # the frontier classes' runner serves both layouts

    monkeypatch.setattr(layouts, "_classes_module",
                        lambda defines: modules[gpu_modules.CLASSES_FILE])
    monkeypatch.setattr(workspace, "workspaces", __import__("weakref").WeakKeyDictionary())

    def degree_figures(ws):  # figures.cu's degree_figures, on the host
        degrees = np.diff(np.asarray(ws.g.indptr))
        ends = np.flatnonzero(degrees)
        return (int((degrees > ws.hub_degree).sum()), int(degrees.max(initial=0)),
                int(ends[-1]) + 1 if ends.size else 0)

    monkeypatch.setattr(workspace.Workspace, "_degree_figures", degree_figures)
    return gpu, modules


def _host_graph(n, src, dst, symmetric):
    from morphgpu.csr import CSRGraph

    g = CSRGraph.from_edges(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                            n_vertices=n, symmetrize=symmetric)
    return CSRGraph(_fake(g.indptr), _fake(g.indices), None, g.n_vertices, g.directed)


def _check_search(g, source, dist, parent):
    import scipy.sparse as sp
    from scipy.sparse import csgraph

    from morphgpu.bfs import graph500_check

    indptr, indices = np.asarray(g.indptr), np.asarray(g.indices)
    graph500_check(indptr, indices, source, np.asarray(dist), np.asarray(parent))
    m = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(g.n_vertices,) * 2)
    ref = csgraph.shortest_path(m, unweighted=True, indices=source)
    np.testing.assert_array_equal(np.asarray(dist), np.where(np.isinf(ref), -1, ref))


graphs_for_loops = st.tuples(st.integers(1, 60), st.integers(0, 200), st.booleans(),
                             st.randoms(use_true_random=False))


# The fixture only patches modules; sharing it across examples is harmless.
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=graphs_for_loops, coupling=st.sampled_from(sorted(variants.COUPLINGS)),
       check_every=st.integers(1, 5), f0=st.sampled_from([0.0, 1.5, 10.0]))
def test_merge_path_host_loop(fake_gpu, case, coupling, check_every, f0):
    gpu, modules = fake_gpu
    n, m, symmetric, rng = case
    src = [rng.randrange(n) for _ in range(m)]
    dst = [rng.randrange(n) for _ in range(m)]
    g = _host_graph(n, src, dst, symmetric)
    source = rng.randrange(n)
    options = {"check_every": check_every}
    if coupling == "merge-path-hybrid":
        options["f0"] = f0
    dist, parent, name = gpu.run(g, source, variant=coupling, want_parents=True, **options)
    assert name == coupling
    _check_search(g, source, dist, parent)


def test_merge_path_hybrid_takes_both_couplings(fake_gpu):
    """A star then a path: the star's level has expand factor 50 (bi), the others 1-2 (ib)."""
    gpu, modules = fake_gpu
    src = [0] * 50 + list(range(1, 50))
    dst = list(range(1, 51)) + list(range(2, 51))
    g = _host_graph(51, src, dst, True)
    dist, parent, _ = gpu.run(g, 0, variant="merge-path-hybrid", want_parents=True)
    _check_search(g, 0, dist, parent)
    assert set(modules[gpu.modules.MERGE_PATH_FILE].couplings_run) == {1, 2}


# The fixture only patches modules; sharing it across examples is harmless.
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=graphs_for_loops, bounds=st.sampled_from([variants.CLASS_BOUNDS, (2, 4, 8),
                                                       (1, 1, 1), (3, 3, 30)]),
       check_every=st.integers(1, 5))
def test_frontier_classes_host_loop(fake_gpu, case, bounds, check_every):
    gpu, modules = fake_gpu
    n, m, symmetric, rng = case
    src = [rng.randrange(n) for _ in range(m)]
    dst = [rng.randrange(n) for _ in range(m)]
    g = _host_graph(n, src, dst, symmetric)
    source = rng.randrange(n)
    dist, parent, _ = gpu.run(g, source, variant="frontier-classes", want_parents=True,
                              bounds=bounds, check_every=check_every)
    _check_search(g, source, dist, parent)


def test_frontier_classes_use_every_queue(fake_gpu):
    gpu, modules = fake_gpu
    # Vertex 0 joins 1..40; vertex k (1..40) joins k further leaves: degrees 1..41.
    src, dst, nxt = [], [], 41
    for k in range(1, 41):
        src.append(0)
        dst.append(k)
        for _ in range(k):
            src.append(k)
            dst.append(nxt)
            nxt += 1
    g = _host_graph(nxt, src, dst, True)
    dist, parent, _ = gpu.run(g, 0, variant="frontier-classes", want_parents=True,
                              bounds=(4, 10, 30))
    _check_search(g, 0, dist, parent)
    assert modules[gpu.modules.CLASSES_FILE].classes_seen == {0, 1, 2, 3}
    from test_bfs import _check_class_queues  # the GPU test's read-back of the queues

    _check_class_queues(g, np.asarray(dist), (4, 10, 30))
    with pytest.raises(ValueError, match="bounds"):
        gpu.run(g, 0, variant="frontier-classes", want_parents=True, bounds=(64, 64, 64))


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=graphs_for_loops, check_every=st.integers(1, 5),
       variant=st.sampled_from(["expand-contract", "two-phase", "contract-expand", "hybrid"]),
       cull=st.sampled_from([(), "warp", ("bitmask", "history"), "all"]))
def test_merrill_host_loops(fake_gpu, case, variant, check_every, cull):
    gpu, modules = fake_gpu
    n, m, symmetric, rng = case
    src = [rng.randrange(n) for _ in range(m)]
    dst = [rng.randrange(n) for _ in range(m)]
    g = _host_graph(n, src, dst, symmetric)
    source = rng.randrange(n)
    options = {"cull": cull}
    if variant in ("expand-contract", "two-phase", "contract-expand"):
        options["check_every"] = check_every
    if variant == "hybrid":
        options["switch"] = check_every  # small: both level kinds run
    modules[gpu.modules.LEVEL_FILE].calls.clear()
    dist, parent, _ = gpu.run(g, source, variant=variant, want_parents=True, **options)
    _check_search(g, source, dist, parent)
    calls = modules[gpu.modules.LEVEL_FILE].calls
    assert any(name.endswith("_culled") for name in calls) == bool(cull)
