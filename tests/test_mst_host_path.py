"""The GPU path's host side, run without a GPU: what it launches, reads back and returns.

A stand-in CuPy (NumPy arrays that book every device operation: launches, synchronising
reads, allocations, copies) replaces the real one, and the two kernels are replaced by
emulations written from boruvka.cu's contract (tree bits and per-block counts from
mst_boruvka; the forest laid out back to back, its size and total in `stats`, from
mst_write_forest), computed with the NumPy Borůvka. So these tests pin the host-side cost
of a call (issue 8: a call's host overhead, not its kernel, dominated on road graphs) and
check the host's plumbing (buffer layout, slicing, dtypes, totals, sides) against the
NumPy path; the kernels themselves are tested on a GPU by test_mst.py.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse.csgraph import minimum_spanning_tree as scipy_mst

from morphgpu import backend
from morphgpu.csr import CSRGraph
from morphgpu.mst import boruvka, cpu, gpu, minimum_spanning_tree
from morphgpu.mst import keys as keymod


@dataclass
class Ledger:
    launches: list[str] = field(default_factory=list)
    syncs: list[str] = field(default_factory=list)
    allocations: int = 0
    host_to_device: int = 0
    device_to_host: int = 0

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]


LEDGER = Ledger()


def _plain(x):
    if isinstance(x, FakeDeviceArray):
        return x.view(np.ndarray)
    if isinstance(x, (tuple, list)):
        return type(x)(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _device(x):
    if isinstance(x, np.generic):  # CuPy reductions give 0-d device arrays
        x = np.asarray(x)
    if isinstance(x, np.ndarray) and not isinstance(x, FakeDeviceArray):
        return x.view(FakeDeviceArray)
    if isinstance(x, tuple):
        return tuple(_device(v) for v in x)
    return x


def _basic(key) -> bool:
    parts = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, (int, np.integer, slice, type(Ellipsis), type(None))) for k in parts)


class FakeDeviceArray(np.ndarray):
    """A NumPy array standing for a CuPy one: device work is booked in LEDGER."""

    @property
    def __cuda_array_interface__(self) -> dict:
        return {}

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        LEDGER.launches.append(f"{ufunc.__name__}.{method}")
        return _device(getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs)))

    def __array_function__(self, func, types_, args, kwargs):
        LEDGER.launches.append(func.__name__)
        return _device(func(*_plain(args), **_plain(kwargs)))

    def __getitem__(self, key):
        if _basic(key):
            return super().__getitem__(key)
        LEDGER.launches.append("gather")
        if getattr(key, "dtype", None) == np.bool_:
            LEDGER.syncs.append("mask")  # CuPy reads the mask's count back to size the result
        return _device(self.view(np.ndarray)[_plain(key)])

    def astype(self, dtype, copy=True, **kwargs):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        LEDGER.launches.append("astype")
        return _device(self.view(np.ndarray).astype(dtype))

    def fill(self, value) -> None:
        LEDGER.launches.append("fill")
        self.view(np.ndarray).fill(value)

    def copy(self, *args, **kwargs):
        LEDGER.launches.append("copy")
        return _device(self.view(np.ndarray).copy())

    def get(self) -> np.ndarray:
        LEDGER.syncs.append("get")
        LEDGER.device_to_host += 1
        return np.array(self.view(np.ndarray))

    def _synced(self):
        LEDGER.syncs.append("scalar")
        return self.view(np.ndarray)

    def __int__(self):
        return int(self._synced())

    def __index__(self):
        return int(self._synced())

    def __float__(self):
        return float(self._synced())

    def __bool__(self):
        return bool(self._synced())

    def item(self, *args):
        return self._synced().item(*args)

    def tolist(self):
        return self._synced().tolist()


FakeDeviceArray.__module__ = "cupy_stand_in"  # backend.side_of: a CuPy array


class FakeCuPy(types.ModuleType):
    """The parts of CuPy the MST path uses; any other NumPy function is one launch."""

    ndarray = FakeDeviceArray

    def __init__(self) -> None:
        super().__init__("cupy_stand_in")
        out_of_memory = type("OutOfMemoryError", (MemoryError,), {})
        self.cuda = types.SimpleNamespace(
            memory=types.SimpleNamespace(OutOfMemoryError=out_of_memory),
            runtime=types.SimpleNamespace(memGetInfo=lambda: (2**40, 2**40),
                                          getDevice=lambda: 0),
            get_current_stream=lambda: types.SimpleNamespace(
                synchronize=lambda: LEDGER.syncs.append("stream")
            ),
        )

    @staticmethod
    def get_default_memory_pool():
        return types.SimpleNamespace(free_bytes=lambda: 0, total_bytes=lambda: 0)

    @staticmethod
    def empty(shape, dtype=float):
        LEDGER.allocations += 1
        return np.empty(shape, dtype=dtype).view(FakeDeviceArray)

    @staticmethod
    def asarray(x, dtype=None):
        if isinstance(x, FakeDeviceArray):
            return x if dtype is None else x.astype(dtype, copy=False)
        LEDGER.allocations += 1
        LEDGER.host_to_device += 1
        return np.array(x, dtype=dtype).view(FakeDeviceArray)

    @staticmethod
    def flatnonzero(x):
        LEDGER.launches.append("flatnonzero")
        LEDGER.syncs.append("nonzero")  # CuPy reads the count back to size the result
        return _device(np.flatnonzero(_plain(x)))

    def __getattr__(self, name: str):
        target = getattr(np, name)
        if not callable(target) or isinstance(target, type):
            return target  # dtypes and constants

        def launched(*args, **kwargs):
            if name in ("zeros", "ones", "arange", "full"):
                LEDGER.allocations += 1
            LEDGER.launches.append(name)
            return _device(target(*_plain(args), **_plain(kwargs)))

        return launched


def _bytes_as(region: np.ndarray, dtype) -> np.ndarray:
    return region.view(np.ndarray).view(dtype)


def _block_words(words: int, blocks: int, b: int) -> tuple[int, int]:
    per_block = -(-words // blocks)
    begin = min(words, b * per_block)
    return begin, min(words, begin + per_block)


def _dominated_below(n, indptr, indices, keys) -> bool:
    """The kernel's "found symmetric" condition, by brute force: every entry (u, v) with
    v < u has an entry (v, u) that orders before it by (key, position)."""
    rows = np.searchsorted(indptr[1:], np.arange(indices.size), side="right")
    order = {}
    for p, (u, v) in enumerate(zip(rows.tolist(), indices.tolist())):
        order.setdefault((u, v), []).append((int(keys[p]), p))
    for p, (u, v) in enumerate(zip(rows.tolist(), indices.tolist())):
        if v < u and not any(t < (int(keys[p]), p) for t in order.get((v, u), [])):
            return False
    return True


class FakeRoundsKernel:
    """mst_boruvka's contract: stats, tree bits and per-block counts of tree edges and of
    zero-weight tree edges (NumPy Borůvka); in mode 2 the symmetry verdict, kept in the
    memo with a fingerprint of the keys and structure, and the run in the mode found."""

    abort_after_launch = False  # a test sets it to play a barrier timeout

    def __init__(self, grid: FakeBoruvkaGrid) -> None:
        self.grid = grid

    def __call__(self, values: dict) -> None:
        v = {k: _plain(x) for k, x in values.items()}
        if self.abort_after_launch:
            v["barrier_state"][-1] = 1
        LEDGER.launches.append("mst_boruvka")
        keys, weights = v["keys"], v["weights"]
        n, m = int(v["n"]), int(v["m"])
        stats = _bytes_as(v["stats"], np.uint64)
        stats[:] = 0
        nan = np.flatnonzero(np.isnan(weights)) if weights.dtype.kind == "f" else []
        stats[gpu.STAT_FIRST_NAN] = nan[0] if len(nan) else gpu.NO_NAN
        # Kinds 3 and 4 narrow float64 / int64 weights; one that does not narrow exactly
        # (NaN included) stops the kernel after its first build.
        with np.errstate(over="ignore", invalid="ignore"):
            if keys.dtype == np.float64 and not np.array_equal(
                    keys.astype(np.float32).astype(np.float64), keys):
                stats[gpu.STAT_INEXACT] = 1
                return
            if keys.dtype == np.int64 and keys.size and not (
                    -(2**31) <= keys.min() and keys.max() < 2**31):
                stats[gpu.STAT_INEXACT] = 1
                return
        if keys.dtype != np.uint32:  # the kernel maps these weights itself
            keys = keymod.weight_keys(np, keys)
        indptr = v["indptr"].astype(np.int64)
        symmetric = int(v["symmetric"])
        if symmetric == gpu.MODE_FIND_SYMMETRY:
            memo = v["symmetry_memo"]
            fingerprint = hash((keys.tobytes(), v["indices"].tobytes(), indptr.tobytes()))
            fingerprint &= 2**64 - 1
            if memo[1] == 0 or memo[0] != fingerprint:
                LEDGER.launches.append("symmetry check")
                memo[0], memo[1] = fingerprint, 1 + _dominated_below(n, indptr, v["indices"], keys)
            symmetric = int(memo[1] == 2)
            stats[gpu.STAT_SYMMETRIC_RUN] = symmetric
        positions, rounds = cpu.minimum_spanning_forest(
            n, indptr, v["indices"], keys, symmetric=bool(symmetric))
        stats[gpu.STAT_ROUNDS] = rounds
        bits = _bytes_as(v["tree_bits"], np.uint32)
        bits[:] = 0
        np.bitwise_or.at(bits, positions >> 5, (1 << (positions & 31)).astype(np.uint32))
        words = (m + 31) // 32
        counts = _bytes_as(v["block_sums"], np.uint64)
        blocks = self.grid.grid
        for b in range(blocks):
            begin, end = _block_words(words, blocks, b)
            inside = positions[(positions >= 32 * begin) & (positions < 32 * end)]
            counts[b] = inside.size
            counts[2 * blocks + b] = np.count_nonzero(weights[inside] == 0)


class FakeBoruvkaGrid:
    """A PersistentGrid whose kernel is FakeRoundsKernel."""

    grid = 3  # blocks: the writer must be launched on as many
    mode = "xiao-feng"

    def __init__(self) -> None:
        self.state = np.zeros(2 * self.grid + 1, dtype=np.uint32).view(FakeDeviceArray)
        self.kernel = FakeRoundsKernel(self)

    def reset(self) -> None:
        LEDGER.launches.append("barrier reset")

    def check(self) -> None:
        if self.state[-1]:
            self.state[-1] = 0
            raise RuntimeError("persistent kernel mst_boruvka: a grid barrier timed out")


def fake_writer(values: dict) -> None:
    """mst_write_forest's contract: the forest back to back, size, total, zero edges, and
    each edge's count of nonzero-weight edges before it."""
    LEDGER.launches.append("mst_write_forest")
    v = {k: _plain(x) for k, x in values.items()}
    stats = _bytes_as(v["stats"], np.uint64)
    stats[gpu.STAT_BARRIER_ABORT] = v["barrier_abort"][0]
    if stats[gpu.STAT_INEXACT] or stats[gpu.STAT_OVERFLOW]:
        return
    blocks = FakeBoruvkaGrid.grid
    counts = _bytes_as(v["block_sums"], np.uint64)
    k = int(counts[:blocks].sum())
    stats[gpu.STAT_FOREST_EDGES] = k
    bits = _bytes_as(v["tree_bits"], np.uint32)[: (int(v["m"]) + 31) // 32]
    flags = np.unpackbits(bits.view(np.uint8), bitorder="little")
    positions = np.flatnonzero(flags)
    assert positions.size == k
    out = v["forest"]
    w = v["weights"][positions]
    out[:k] = positions
    out[k : 2 * k] = np.searchsorted(v["indptr"][1:], positions, side="right")
    out[2 * k : 3 * k] = v["indices"][positions]
    out[3 * k :].view(np.uint8)[: w.nbytes] = w.view(np.uint8)
    if w.dtype.kind == "f":
        stats[gpu.STAT_TOTAL] = np.float64(w.astype(np.float64).sum()).view(np.uint64)
    else:
        stats[gpu.STAT_TOTAL] = w.astype(np.int64).sum(dtype=np.int64).view(np.uint64)
    zeros = w == 0
    stats[gpu.STAT_ZERO_EDGES] = np.count_nonzero(zeros)
    assert stats[gpu.STAT_ZERO_EDGES] == counts[2 * blocks : 3 * blocks].sum()
    nonzero = _bytes_as(v["nonzero_before"], np.int64)
    nonzero[: k + 1] = np.concatenate([[0], np.cumsum(~zeros)])


def fake_matrix_writer(values: dict) -> None:
    """mst_write_matrix's contract: SciPy's CSR arrays of the forest's nonzero-weight
    edges (data as float64), sizes from the stats, into arrays with room for n - 1 edges."""
    LEDGER.launches.append("mst_write_matrix")
    v = {k: _plain(x) for k, x in values.items()}
    n, data, indices, indptr = int(v["n"]), v["data"], v["indices"], v["indptr"]
    assert data.dtype == np.float64 and indices.dtype == indptr.dtype
    assert data.size == indices.size == max(n - 1, 1) and indptr.size == n + 1
    stats = _bytes_as(v["stats"], np.uint64)
    k = int(stats[gpu.STAT_FOREST_EDGES])
    weight_dtype = FakePacked.weight_dtype
    _, src, dst, weights = gpu.split_forest(v["forest"], k, weight_dtype)
    nonzero = _bytes_as(v["nonzero_before"], np.int64)[: k + 1]
    keep = weights != 0
    data[nonzero[:k][keep]] = weights[keep]
    indices[nonzero[:k][keep]] = dst[keep]
    indptr[:] = nonzero[np.searchsorted(src, np.arange(n + 1), side="left")]


class FakePacked:
    """direct_launch.PackedLaunch's contract for the fake kernels: values by parameter
    name, slots rewritten by name, a launch calls the kernel with them."""

    weight_dtype = None  # the weights' dtype of the last rounds launch (the matrix kernel's)

    def __init__(self, kernel, params, values, *, cooperative) -> None:
        assert set(values) == set(params), set(values) ^ set(params)
        self.kernel, self.values = kernel, dict(values)

    def set(self, **changed) -> None:
        assert set(changed) <= set(self.values)
        self.values.update(changed)

    def launch(self, blocks, block, **changed) -> None:
        self.set(**changed)
        if isinstance(self.kernel, FakeRoundsKernel):
            FakePacked.weight_dtype = self.values["weights"].dtype
            assert blocks == FakeBoruvkaGrid.grid
        elif self.kernel is fake_writer:
            assert blocks == FakeBoruvkaGrid.grid  # the writer's blocks own the counts
        else:
            assert 1 <= blocks <= gpu.MATRIX_BLOCKS
        assert block == gpu.BLOCK
        self.kernel(self.values)


def _fake_kernels(defines, mode):
    return FakeBoruvkaGrid(), fake_writer, fake_matrix_writer


def _fake_diagonal_sides(n, indptr, indices):
    indptr, indices = _plain(indptr), _plain(indices)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    return int(np.count_nonzero(indices > rows)), int(np.count_nonzero(indices < rows))


@pytest.fixture
def stand_in(monkeypatch):
    """The stand-in CuPy and kernels in place; yields the ledger, cleared."""
    fake = FakeCuPy()
    monkeypatch.setattr(backend, "_probe_cupy", lambda: (fake, None))
    monkeypatch.setattr(gpu, "_kernels", _fake_kernels)
    monkeypatch.setattr(gpu, "_packed", FakePacked)
    # The symmetric claim's one pass (kernels/diagonal_sides.cu), in NumPy and off the
    # ledger: the ledgers below pin the rounds' launches and reads.
    monkeypatch.setattr(gpu, "diagonal_sides", _fake_diagonal_sides)
    sparse = types.ModuleType("cupyx.scipy.sparse")
    sparse.csr_matrix = lambda arrays, shape: sp.csr_matrix(_plain(arrays), shape=shape)
    scipy_pkg = types.ModuleType("cupyx.scipy")
    scipy_pkg.sparse = sparse
    cupyx = types.ModuleType("cupyx")
    cupyx.scipy = scipy_pkg
    modules = {"cupyx": cupyx, "cupyx.scipy": scipy_pkg, "cupyx.scipy.sparse": sparse}
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    LEDGER.clear()
    yield LEDGER
    LEDGER.clear()


def on_device(graph: CSRGraph) -> CSRGraph:
    w = None if graph.weights is None else graph.weights.view(FakeDeviceArray)
    return CSRGraph(
        graph.indptr.view(FakeDeviceArray), graph.indices.view(FakeDeviceArray), w,
        graph.n_vertices, graph.directed,
    )


def road_like(n: int = 400, seed: int = 0, weights=np.int32) -> CSRGraph:
    rng = np.random.default_rng(seed)
    u, v = rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n)
    w = rng.integers(0, 60, 3 * n).astype(weights)
    return CSRGraph.from_edges(
        u, v, w, n_vertices=n, symmetrize=True, drop_self_loops=True, merge_duplicates="min"
    )


def assert_same(result, expected) -> None:
    for name in ("edge_ids", "src", "dst", "weights"):
        ours, theirs = backend.to_host(getattr(result, name)), getattr(expected, name)
        assert ours.dtype == theirs.dtype, name
        assert np.array_equal(ours, theirs), name
    assert type(result.total_weight) is type(expected.total_weight)
    assert result.total_weight == pytest.approx(expected.total_weight, rel=1e-12)
    assert (result.n_components, result.n_rounds) == (expected.n_components, expected.n_rounds)


def test_device_graph_costs_three_launches_and_one_read(stand_in):
    graph = road_like()
    expected = boruvka(graph, device="cpu")
    result = boruvka(on_device(graph), device="gpu")
    assert stand_in.launches == ["barrier reset", "mst_boruvka", "mst_write_forest"]
    assert stand_in.syncs == ["get"] and stand_in.device_to_host == 1
    assert stand_in.allocations == 2 and stand_in.host_to_device == 0
    assert all(isinstance(getattr(result, a), FakeDeviceArray) for a in ("src", "dst", "edge_ids"))
    assert result.device == "gpu"
    assert_same(result, expected)


def test_host_matrix_is_copied_over_and_back_once_each_way(stand_in):
    matrix = road_like(seed=1).to_scipy().astype(np.int32)
    expected = boruvka(matrix, device="cpu")
    result = boruvka(matrix, device="gpu")
    assert stand_in.launches == ["barrier reset", "mst_boruvka", "mst_write_forest"]
    assert stand_in.host_to_device == 3  # indptr, indices, weights
    assert stand_in.device_to_host == 2 and len(stand_in.syncs) == 2  # stats, then forest
    assert isinstance(result.src, np.ndarray) and not isinstance(result.src, FakeDeviceArray)
    assert_same(result, expected)
    # Again on the same matrix: graph_cache kept its GPU structure; only weights cross.
    stand_in.clear()
    again = boruvka(matrix, device="gpu")
    assert stand_in.host_to_device == 1 and stand_in.device_to_host == 2
    assert_same(again, expected)
    # A changed structure is a new graph (the cache's never-stale rule): all three cross.
    matrix.indices = matrix.indices.copy()
    stand_in.clear()
    assert_same(boruvka(matrix, device="gpu"), expected)
    assert stand_in.host_to_device == 3


def test_a_barrier_timeout_is_reported_from_the_one_read(stand_in, monkeypatch):
    monkeypatch.setattr(FakeRoundsKernel, "abort_after_launch", True)
    with pytest.raises(RuntimeError, match="timed out"):
        boruvka(on_device(road_like(seed=3)), device="gpu")
    assert stand_in.syncs == ["get"]


def test_float32_nan_is_found_by_the_kernel_without_an_extra_read(stand_in):
    graph = road_like(seed=2, weights=np.float32)
    weights = graph.weights.copy()
    weights[17] = np.nan
    bad = on_device(graph.with_weights(weights))
    with pytest.raises(ValueError, match="entry 17 is NaN"):
        boruvka(bad, device="gpu")
    assert stand_in.syncs == ["get"]
    with pytest.raises(ValueError, match="entry 17 is NaN"):
        boruvka(graph.with_weights(weights), device="cpu")


@pytest.mark.parametrize("with_zeros", [False, True])
@pytest.mark.parametrize("stored", ["declared undirected", "read as directed"])
def test_minimum_spanning_tree_leaves_zero_weight_edges_out_on_the_device(
        stand_in, with_zeros, stored):
    graph = road_like(seed=3, weights=np.float32)
    if not with_zeros:
        graph = graph.with_weights(graph.weights + np.float32(1))
    if stored == "read as directed":
        graph = CSRGraph(graph.indptr, graph.indices, graph.weights, graph.n_vertices, True)
    expected = scipy_mst(graph.to_scipy())
    forest = boruvka(graph, device="cpu")
    assert (np.count_nonzero(forest.weights == 0) > 0) == with_zeros
    stand_in.clear()
    ours = minimum_spanning_tree(on_device(graph), device="gpu")
    assert (ours != expected).nnz == 0 and ours.nnz == expected.nnz
    assert ours.nnz == forest.n_edges - np.count_nonzero(forest.weights == 0)
    # The matrix is queued behind the forest writer, which also ranks the edges of nonzero
    # weight: zero-weight tree edges cost no masking and no further read.
    launches = ["barrier reset", "mst_boruvka", "mst_write_forest", "mst_write_matrix"]
    if stored == "read as directed":  # the first call checks the symmetry, and keeps it
        launches = ["zeros", "barrier reset", "mst_boruvka", "symmetry check",
                    "mst_write_forest", "mst_write_matrix"]
    assert stand_in.launches == launches
    assert stand_in.syncs == ["get"]


WEIGHT_DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64, np.int8, bool]


@given(
    n=st.integers(1, 60),
    edges=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59), st.integers(-9, 9))),
    dtype=st.sampled_from(WEIGHT_DTYPES),
    undirected=st.booleans(),
)
def test_every_weight_type_comes_back_as_the_numpy_path_gives_it(n, edges, dtype, undirected):
    rows = np.asarray([u % n for u, _, _ in edges], dtype=np.int64)
    cols = np.asarray([v % n for _, v, _ in edges], dtype=np.int64)
    raw = np.asarray([w for _, _, w in edges], dtype=np.int64)
    weights = np.abs(raw) if np.dtype(dtype).kind == "u" else raw
    weights = weights.astype(dtype) if dtype is not bool else weights > 0
    if undirected:
        graph = CSRGraph.from_edges(rows, cols, weights, n_vertices=n, symmetrize=True,
                                    drop_self_loops=True, merge_duplicates="min")  # fmt: skip
    else:
        graph = CSRGraph.from_edges(rows, cols, weights, n_vertices=n)
    expected = boruvka(graph, device="cpu")
    with pytest.MonkeyPatch.context() as mp:
        fake = FakeCuPy()
        mp.setattr(backend, "_probe_cupy", lambda: (fake, None))
        mp.setattr(gpu, "_kernels", _fake_kernels)
        mp.setattr(gpu, "_packed", FakePacked)
        mp.setattr(gpu, "diagonal_sides", _fake_diagonal_sides)
        LEDGER.clear()
        result = boruvka(on_device(graph), device="gpu")
        assert LEDGER.launches[-2:] == ["mst_boruvka", "mst_write_forest"]
        if dtype in (np.int32, np.float32, np.int8, bool):  # keys mapped by the kernel
            assert LEDGER.syncs == ["get"]
        if dtype in (np.int64, np.float64):  # narrowed by the kernel: exact here
            assert LEDGER.syncs == ["get"]
            assert LEDGER.launches.count("mst_boruvka") == 1
    assert_same(result, expected)


def test_scratch_arrays_do_not_overlap():
    layout, total = gpu.scratch_layout(1000, 7000, 3501, 7, 4, 528)
    spans = sorted(layout.values())
    for (a, size_a), (b, _) in zip(spans, spans[1:]):
        assert a + size_a <= b and b % 256 == 0
    last, size = spans[-1]
    assert last + size <= total
    assert layout["tree_bits"][1] >= 7000 // 8 and layout["block_sums"][1] == 3 * 528 * 8
    assert layout["huge_chunks"][1] == 7 * 4 and layout["nonzero_before"][1] >= 1001 * 8


def test_runner_launches_apart_and_reads_back_positions(stand_in):
    graph = road_like(seed=5)
    expected = boruvka(graph, device="cpu")
    g = on_device(graph)
    runner = gpu.BoruvkaGPU(g.n_vertices, g.indptr, g.indices, g.weights, symmetric=True)
    stand_in.clear()
    runner.launch(write_forest=False)
    assert stand_in.launches == ["barrier reset", "mst_boruvka"] and not stand_in.syncs
    for _ in range(2):  # the same buffers again
        runner.launch()
        positions, rounds = runner.collect()
        assert np.array_equal(positions.view(np.ndarray), expected.edge_ids)
        assert rounds == expected.n_rounds


@pytest.mark.parametrize("weights", [
    np.array([0.5, 1e-3, 2.0, 0.1, 1e300, -0.0, 3.0, 0.1]),  # not all float32
    np.array([5, -3, 2**40, 0, 7, -2**35, 1, 5], dtype=np.int64),  # not all int32
])
def test_weights_that_do_not_narrow_get_host_keys_and_a_second_launch(stand_in, weights):
    rows = np.array([0, 0, 1, 1, 2, 3, 4, 4])
    cols = np.array([1, 2, 2, 3, 3, 4, 0, 5])
    graph = CSRGraph.from_edges(rows, cols, weights, n_vertices=7)
    expected = boruvka(graph, device="cpu")
    stand_in.clear()
    result = boruvka(on_device(graph), device="gpu")
    assert stand_in.launches.count("mst_boruvka") == 2
    assert stand_in.launches.count("mst_write_forest") == 2
    # The two stats reads, and for integers one read of the weights' bounds and one of
    # the forest's weights (their exact sum: the kernel's wraps modulo 2**64).
    assert stand_in.syncs.count("get") == (2 if weights.dtype.kind == "f" else 4)
    assert_same(result, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_narrowable_weights_cost_one_launch_and_one_read(stand_in, dtype):
    graph = road_like(seed=7, weights=dtype)
    graph = graph.with_weights(graph.weights - dtype(30))  # negative ones too
    expected = boruvka(graph, device="cpu")
    stand_in.clear()
    result = boruvka(on_device(graph), device="gpu")
    assert stand_in.launches == ["barrier reset", "mst_boruvka", "mst_write_forest"]
    assert stand_in.syncs == ["get"] and stand_in.allocations == 2
    assert_same(result, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.uint64])
def test_minimum_spanning_tree_matrix_from_one_kernel_and_a_kept_runner(stand_in, dtype):
    graph = road_like(seed=11, weights=dtype)
    graph = graph.with_weights(graph.weights + dtype(1))  # no zero-weight tree edge
    g = on_device(graph)
    expected = scipy_mst(graph.to_scipy())
    ours = minimum_spanning_tree(g, device="gpu")
    assert ours.dtype == np.float64 and (ours != expected).nnz == 0
    assert ours.indices.dtype == ours.indptr.dtype == np.int32
    first = stand_in.allocations
    reads = ["get"] * (2 if dtype == np.uint64 else 1)  # uint64: host keys, their bounds
    assert stand_in.launches[-1] == "mst_write_matrix" and stand_in.syncs == reads
    # Again on the same graph: the runner and its buffers are kept with it (only the
    # result's one buffer is new), and the first result's arrays are its own.
    stand_in.clear()
    again = minimum_spanning_tree(g, device="gpu")
    assert stand_in.syncs == reads
    assert stand_in.launches[-4:] == ["barrier reset", "mst_boruvka", "mst_write_forest",
                                      "mst_write_matrix"]
    if dtype != np.uint64:
        assert stand_in.allocations == 1
    assert again.data is not ours.data and (ours != expected).nnz == 0
    assert (again != expected).nnz == 0
    assert first >= 3  # scratch, forest buffer, result


def test_kept_runner_follows_weights_back_from_host_keys(stand_in):
    rows = np.array([0, 0, 1, 1, 2, 3, 4, 4])
    cols = np.array([1, 2, 2, 3, 3, 4, 0, 5])
    inexact = np.array([0.5, 1e-3, 2.0, 0.1, 1e300, -0.0, 3.0, 0.1])
    graph = CSRGraph.from_edges(rows, cols, inexact, n_vertices=7)
    g = on_device(graph)
    owner = object.__new__(type("Owner", (), {}))
    make = lambda: (g.n_vertices, g.indptr, g.indices)  # noqa: E731
    runner = gpu.kept_runner(owner, make, g.weights, symmetric=False, what="t")
    runner.launch(write_matrix=True)
    data, _, _ = runner.matrix()
    assert runner.kind == "keys"  # the kernel could not narrow them: host keys, again
    exact = (np.arange(inexact.size) + 1.0).view(FakeDeviceArray)
    assert gpu.kept_runner(owner, make, exact, symmetric=False, what="t") is runner
    assert runner.kind == "float64"
    stand_in.clear()
    runner.launch(write_matrix=True)
    data, indices, indptr = runner.matrix()
    expected = scipy_mst(CSRGraph.from_edges(rows, cols, np.asarray(exact), n_vertices=7)
                         .to_scipy())
    ours = sp.csr_matrix((np.asarray(data), np.asarray(indices), np.asarray(indptr)),
                         shape=(7, 7))
    assert (ours != expected).nnz == 0
    assert stand_in.launches.count("mst_boruvka") == 1


def test_host_matrix_door_copies_weights_over_and_the_tree_back_once(stand_in):
    graph = road_like(seed=13, weights=np.float64)
    matrix = graph.with_weights(graph.weights + 1.0).to_scipy()  # no zero tree edge
    expected = scipy_mst(matrix)
    tree = minimum_spanning_tree(matrix, device="gpu")
    assert isinstance(tree, sp.csr_matrix) and (tree != expected).nnz == 0
    # A SciPy matrix is not declared symmetric: the first call finds it so (and keeps
    # the verdict with the graph).
    assert stand_in.launches[-6:] == ["zeros", "barrier reset", "mst_boruvka",
                                      "symmetry check", "mst_write_forest", "mst_write_matrix"]
    assert stand_in.host_to_device == 3  # indptr and indices (kept by graph_cache), weights
    # Again: the structure, the runner and the verdict are kept; the weights cross, then
    # the stats and the result's one buffer come back.
    stand_in.clear()
    again = minimum_spanning_tree(matrix, device="gpu")
    assert (again != expected).nnz == 0 and isinstance(again, sp.csr_matrix)
    assert stand_in.launches == ["barrier reset", "mst_boruvka", "mst_write_forest",
                                 "mst_write_matrix"]
    assert stand_in.host_to_device == 1 and stand_in.device_to_host == 2
    assert stand_in.syncs == ["get", "get"]
    assert stand_in.allocations == 2  # the weights' copy and the result buffer
    # New weights in place (a canonical matrix's data is live): checked again, and found
    # not symmetric when one direction of an edge changed.
    rows = np.searchsorted(matrix.indptr[1:], np.arange(matrix.nnz), side="right")
    lower = int(np.flatnonzero(matrix.indices < rows)[0])
    matrix.data[lower] = 0.25  # lighter than its twin: the lower entry now counts
    stand_in.clear()
    changed = minimum_spanning_tree(matrix, device="gpu")
    assert "symmetry check" in stand_in.launches
    assert (changed != scipy_mst(matrix)).nnz == 0
    # A sparse array gives a sparse array, as SciPy's call does.
    assert isinstance(minimum_spanning_tree(sp.csr_array(matrix), device="gpu"), sp.csr_array)


@pytest.mark.parametrize("narrows", [True, False])
def test_carried_words_come_back_with_the_stats_even_after_a_relaunch(stand_in, narrows):
    # The door copies graph_cache's fingerprints behind its kernels; weights that do not
    # narrow make the runner rebind (a new scratch, a new stats block) and launch again:
    # the copies must follow.
    rows = np.array([0, 0, 1, 1, 2, 3, 4, 4])
    cols = np.array([1, 2, 2, 3, 3, 4, 0, 5])
    weights = np.arange(1.0, 9.0) if narrows else np.array(
        [0.5, 1e-3, 2.0, 0.1, 1e300, -0.0, 3.0, 0.1])
    g = on_device(CSRGraph.from_edges(rows, cols, weights, n_vertices=7))
    runner = gpu.BoruvkaGPU(g.n_vertices, g.indptr, g.indices, g.weights, symmetric=False,
                            find_symmetry=True)
    runner.launch(write_matrix=True)
    fingerprints = np.array([11, 2**63 + 5], dtype=np.uint64).view(FakeDeviceArray)
    assert runner.carry([fingerprints[:1], fingerprints[1:]])
    stand_in.clear()
    runner.matrix()
    assert stand_in.launches.count("mst_boruvka") == (0 if narrows else 1)  # the relaunch
    assert stand_in.syncs.count("get") == (1 if narrows else 2)
    assert [list(a) for a in runner.carried()] == [[11], [2**63 + 5]]
    assert not runner.carry([np.zeros(gpu.CARRY_WORDS + 1, np.uint64).view(FakeDeviceArray)])
