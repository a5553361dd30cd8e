"""The partitioned BFS: P parts against SciPy's distances and Graph500's checks.

``bfs(graph, source, partitions=P)`` runs on both sides through the ``device`` fixture
(the GPU case is marked ``gpu``: the one-GPU in-process path). The NCCL and MPI exchanges
run here on the loopback stand-in (NumPy arrays, threads for MPI ranks), so their message
logic is tested without NCCL, MPI or a GPU; ``devices=[0]`` runs real NCCL where present.
"""

from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bfs import check_result, edge_graphs, scipy_distances

from morphgpu import backend, generators
from morphgpu.bfs import bfs, graph500_check
from morphgpu.bfs import bitmap_levels as bl
from morphgpu.bfs import exchange as ex
from morphgpu.bfs import partitioned as pt
from morphgpu.csr import CSRGraph

PARTS = list(range(1, 9))


def disconnected() -> CSRGraph:
    """Two grids and isolated vertices, ids interleaved so every part holds some of each."""
    a = generators.grid2d(12, 9, device="cpu")
    b = generators.grid2d(7, 7, device="cpu")
    n = a.n_vertices + b.n_vertices + 20
    rng = np.random.default_rng(3)
    perm = rng.permutation(n)
    src = np.concatenate([a.edge_sources(), b.edge_sources() + a.n_vertices])
    dst = np.concatenate([a.indices, b.indices + a.n_vertices])
    return CSRGraph.from_edges(perm[src], perm[dst], n_vertices=n)


def directed() -> CSRGraph:
    rng = np.random.default_rng(5)
    n = 300
    return CSRGraph.from_edges(rng.integers(0, n, 900), rng.integers(0, n, 900),
                               n_vertices=n)


GRAPHS = {
    "grid": lambda: generators.grid2d(40, 25, device="cpu"),
    "kronecker": lambda: generators.kronecker(10, 8, device="cpu"),
    "disconnected": disconnected,
    "directed": directed,
}


def sources_of(g: CSRGraph) -> list[int]:
    deg = np.diff(g.to("cpu").indptr)
    return [int(np.argmax(deg)), int(np.flatnonzero(deg > 0)[-1]), g.n_vertices // 2]


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("parts", PARTS)
def test_partitions_match_scipy(device, name, parts):
    g = GRAPHS[name]()
    for source in sources_of(g):
        result = bfs(g.to(device), source, partitions=parts, device=device, predecessors=True)
        assert result.variant == f"partitioned-{parts}"
        assert result.device == device
        assert backend.side_of(result.distances) == device
        check_result(g, source, result)


SHARED_FIXTURE = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@SHARED_FIXTURE
@given(case=edge_graphs(), data=st.data())
def test_random_graphs_random_parts(device, case, data):
    g, source = case
    parts = data.draw(st.integers(1, min(8, g.n_vertices)))
    parents = data.draw(st.booleans())
    result = bfs(g.to(device), source, partitions=parts, device=device, predecessors=parents)
    check_result(g, source, result, parents=parents)
    assert (result.predecessors is None) == (not parents)


# ----------------------------------------------------------------------- the partition
@given(degrees=st.lists(st.integers(0, 50), min_size=1, max_size=60), data=st.data())
def test_partition_ranges(degrees, data):
    parts = data.draw(st.integers(1, len(degrees)))
    p = pt.Partition.balanced(np.array(degrees), parts)
    assert p.n_parts == parts and p.n_vertices == len(degrees)
    assert p.starts[0] == 0 and (np.diff(p.starts) >= 1).all()
    v = np.arange(len(degrees))
    owner = p.owner(v)
    for k in range(parts):
        lo, hi = p.range(k)
        assert (owner[lo:hi] == k).all()


def test_partition_balances_edges():
    deg = np.concatenate([np.full(10, 1000), np.ones(10_000, dtype=np.int64)])
    p = pt.Partition.balanced(deg, 4)
    work = [int((deg[lo:hi] + 1).sum()) for lo, hi in map(p.range, range(4))]
    assert max(work) < 1.3 * sum(work) / 4
    assert p.range(0)[1] - p.range(0)[0] < 3000  # the hubs' part holds few vertices


def test_from_edge_chunks_equals_from_csr():
    g = generators.kronecker(9, 8, device="cpu")
    src, dst = g.edge_sources(), g.indices

    def chunks():
        for a in range(0, src.size, 997):
            yield src[a:a + 997], dst[a:a + 997]

    placed = []
    pg = pt.PartitionedGraph.from_edge_chunks(chunks, g.n_vertices, 5,
                                              place=lambda part: placed.append(part.part) or part)
    ref = pt.PartitionedGraph.from_csr(g, 5)
    assert placed == list(range(5))
    np.testing.assert_array_equal(pg.partition.starts, ref.partition.starts)
    for k in range(5):
        a, b = pg.parts[k], ref.parts[k]
        np.testing.assert_array_equal(a.indptr, b.indptr)
        for r in range(a.hi - a.lo):  # rows hold the same neighbours (order may differ)
            np.testing.assert_array_equal(np.sort(a.indices[a.indptr[r]:a.indptr[r + 1]]),
                                          np.sort(b.indices[b.indptr[r]:b.indptr[r + 1]]))
    source = int(np.argmax(np.diff(g.indptr)))
    engines = pt.engines_for(pg, range(5), "cpu", True)
    out = pt.search(engines, ex.InProcessExchange(5), source, True)
    np.testing.assert_array_equal(out.distances, scipy_distances(g, source))
    graph500_check(g.indptr, g.indices, source, out.distances, out.predecessors)


def test_from_edge_chunks_symmetrize_and_only():
    src = np.array([0, 1, 2, 5])
    dst = np.array([1, 2, 3, 6])
    pg = pt.PartitionedGraph.from_edge_chunks(lambda: [(src, dst)], 8, 3, symmetrize=True,
                                              only=[1])
    assert list(pg.parts) == [1]
    assert not pg.directed


# ----------------------------------------------------------------------- bad input
def test_bad_partitions():
    g = generators.grid2d(3, 3, device="cpu")
    with pytest.raises(ValueError, match="more than the graph's 9 vertices"):
        bfs(g, 0, partitions=10, device="cpu")
    for bad in (0, -2):
        with pytest.raises(ValueError, match=">= 1"):
            bfs(g, 0, partitions=bad, device="cpu")
    for bad in (2.5, "3", True):
        with pytest.raises(ValueError, match="positive integer"):
            bfs(g, 0, partitions=bad, device="cpu")
    with pytest.raises(ValueError, match="one strategy"):
        bfs(g, 0, partitions=2, variant="persistent", device="cpu")
    with pytest.raises(ValueError, match="outside"):
        bfs(g, 9, partitions=2, device="cpu")


def test_bad_devices():
    g = generators.grid2d(3, 3, device="cpu")
    with pytest.raises(ValueError, match="at least one GPU"):
        bfs(g, 0, devices=[])
    with pytest.raises(ValueError, match="list of GPU ids"):
        bfs(g, 0, devices=0)
    with pytest.raises(ValueError, match="twice"):
        ex.check_devices([0, 0])
    with pytest.raises(ValueError, match="not an integer"):
        ex.check_devices([0, "1"])


def test_missing_device_named():
    g = generators.grid2d(3, 3, device="cpu")
    if backend.gpu_available():
        cp = backend.cupy_module()
        count = cp.cuda.runtime.getDeviceCount()
        with pytest.raises(ValueError, match=f"GPU {count} does not exist"):
            bfs(g, 0, devices=[0, count])
    else:  # no CuPy/GPU: the error names CuPy
        with pytest.raises(backend.DeviceError, match="CuPy"):
            bfs(g, 0, devices=[0, 1])


def test_missing_mpi_named(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_mpi(name, *args, **kwargs):
        if name.startswith("mpi4py"):
            raise ImportError("No module named 'mpi4py'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mpi)
    with pytest.raises(ex.ExchangeError, match="mpi4py"):
        ex.require_mpi()


def test_missing_nccl_named(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_nccl(name, *args, **kwargs):
        if name.startswith("cupy"):
            raise ImportError("No module named 'cupy'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_nccl)
    with pytest.raises(ex.ExchangeError, match="NCCL"):
        ex._require_nccl()


# ----------------------------------------------------------------------- NCCL / MPI logic
@pytest.mark.parametrize("parts", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("name", ["kronecker", "disconnected", "directed"])
def test_nccl_exchange_on_loopback(name, parts):
    """NcclExchange's grouped send/recv and allGather, one thread driving P ranks."""
    g = GRAPHS[name]()
    world = ex.LoopbackWorld(parts)
    exchange = ex.NcclExchange(world.comms(), world, parts)
    pg = pt.PartitionedGraph.from_csr(g, parts)
    for source in sources_of(g):
        engines = pt.engines_for(pg, exchange.local_parts, "cpu", True)
        out = pt.search(engines, exchange, source, True)
        np.testing.assert_array_equal(out.distances, scipy_distances(g, source))
        graph500_check(g.indptr, g.indices, source, out.distances, out.predecessors)
        assert out.edges == int(np.diff(g.indptr)[out.distances >= 0].sum())


class _RecordingComm(ex._LoopbackComm):
    """A loopback rank that logs the stream-ordering calls among its sends."""

    def __init__(self, world: ex.LoopbackWorld, rank: int, log: list) -> None:
        super().__init__(world, rank)
        self.log = log

    def follow_caller(self) -> None:
        self.log.append(("follow_caller", self.rank))

    def hand_over(self) -> None:
        self.log.append(("hand_over", self.rank))

    def send(self, buf, peer) -> None:
        self.log.append(("send", self.rank))
        super().send(buf, peer)


@pytest.mark.parametrize("undirected", [False, True])
def test_nccl_exchange_orders_its_streams_with_the_caller(undirected):
    """The communicators' streams are non-blocking: before a search every one waits for the
    caller's stream (what the caller queued, e.g. the graph's build, comes first), and the
    joined labels are handed to the caller's stream after the last collective (else the
    caller could read them before they are written, seen on an H200 in session 35)."""
    g = undirected_disconnected() if undirected else GRAPHS["kronecker"]()
    log: list = []
    world = ex.LoopbackWorld(2)
    exchange = ex.NcclExchange([_RecordingComm(world, r, log) for r in range(2)], world, 2)
    engines = pt.engines_for(pt.PartitionedGraph.from_csr(g, 2), exchange.local_parts, "cpu",
                             True)
    source = sources_of(g)[0]
    out = pt.search(engines, exchange, source, True, pt.direction_for(g))
    np.testing.assert_array_equal(out.distances, scipy_distances(g, source))
    assert log[:2] == [("follow_caller", 0), ("follow_caller", 1)]
    assert log[-1] == ("hand_over", 0)  # the join's root, after every send
    assert ("send", 1) in log


def undirected_disconnected() -> CSRGraph:
    g = disconnected()
    return CSRGraph.from_edges(g.edge_sources(), g.indices, n_vertices=g.n_vertices,
                               symmetrize=True)


UNDIRECTED = {"grid": GRAPHS["grid"], "kronecker": GRAPHS["kronecker"],
              "disconnected": undirected_disconnected}
# (alpha, beta): bottom-up from the first level on and never back; bottom-up, and
# top-down for one level whenever the frontier shrinks; Beamer's own constants.
RULES = {"bottom-up": (np.inf, np.inf), "alternating": (np.inf, 0.0),
         "beamer": (pt.ALPHA, pt.BETA)}


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("name", sorted(UNDIRECTED))
@pytest.mark.parametrize("parts", [1, 3, 4])
def test_bottom_up_levels_match_scipy(device, name, rule, parts):
    """Direction-optimizing partitioned levels (bitmap OR across parts, each part labelling
    its own vertices) under forced rules: SciPy's distances, Graph500-valid parents."""
    g = UNDIRECTED[name]()
    assert not g.directed
    exchange = ex.InProcessExchange(parts)
    pg = pt.PartitionedGraph.from_csr(g, parts)
    engines = pt.engines_for(pg, exchange.local_parts, device, True)
    alpha, beta = RULES[rule]
    for source in sources_of(g):
        direction = pt.Direction(g.n_vertices, alpha, beta)
        out = pt.search(engines, exchange, source, True, direction)
        dist, parent = backend.to_host(out.distances), backend.to_host(out.predecessors)
        np.testing.assert_array_equal(dist, scipy_distances(g, source))
        graph500_check(g.indptr, g.indices, source, dist, parent)
        assert out.edges == int(np.diff(g.indptr)[dist >= 0].sum())


@pytest.mark.parametrize("rule", ["bottom-up", "alternating"])
@pytest.mark.parametrize("parts", [2, 3, 5])
def test_bottom_up_on_loopback(rule, parts):
    """The same through NcclExchange (the bitmaps ORed by an all-reduce sum)."""
    g = GRAPHS["kronecker"]()
    world = ex.LoopbackWorld(parts)
    exchange = ex.NcclExchange(world.comms(), world, parts)
    pg = pt.PartitionedGraph.from_csr(g, parts)
    engines = pt.engines_for(pg, exchange.local_parts, "cpu", True)
    for source in sources_of(g):
        out = pt.search(engines, exchange, source, True, pt.Direction(g.n_vertices,
                                                                      *RULES[rule]))
        np.testing.assert_array_equal(out.distances, scipy_distances(g, source))
        graph500_check(g.indptr, g.indices, source, out.distances, out.predecessors)


def test_message_levels_start_every_part_before_waiting():
    """The top-down message loop (a directed graph) queues each part's step on every part
    before it waits on one (parts on several GPUs then work at the same time): all
    expand_begin calls of a level come before its first expand_end call."""
    g = GRAPHS["directed"]()
    exchange = ex.InProcessExchange(3)
    engines = pt.engines_for(pt.PartitionedGraph.from_csr(g, 3), exchange.local_parts,
                             "cpu", True)
    calls: list[str] = []
    for e in engines:
        for name in ("expand_begin", "expand_end"):
            real = getattr(e, name)

            def logged(*args, real=real, name=name):
                calls.append(name)
                return real(*args)

            setattr(e, name, logged)
    pt.search(engines, exchange, sources_of(g)[0], True)
    assert len(calls) >= 12
    for k in range(0, len(calls), 6):  # a level's step: 3 begins, then 3 ends
        assert calls[k:k + 6] == ["expand_begin"] * 3 + ["expand_end"] * 3


@pytest.mark.parametrize("name", sorted(UNDIRECTED))
def test_bitmap_levels_never_wait_on_the_level_just_queued(name):
    """The bitmap loop reads a level's mode back only once the next AHEAD - 1 levels are
    queued on every part, every part's expand of a level before any part's merge of it,
    and it stops at the first level whose mode is DONE (the frontier was empty)."""
    g = UNDIRECTED[name]()
    exchange = ex.InProcessExchange(3)
    engines = pt.engines_for(pt.PartitionedGraph.from_csr(g, 3), exchange.local_parts,
                             "cpu", True)
    calls: list[tuple[str, int]] = []
    for e in engines:
        for method in ("level_stats", "level_expand", "level_merge", "mode_ready"):
            real = getattr(e, method)

            def logged(level, *args, real=real, method=method):
                calls.append((method, level))
                return real(level, *args)

            setattr(e, method, logged)
    source = sources_of(g)[0]
    out = pt.search(engines, exchange, source, True, pt.Direction(g.n_vertices))
    depth = int(out.distances.max())
    queued = max(level for method, level in calls if method == "level_merge")
    assert queued == depth + 1 + bl.AHEAD - 1  # level depth + 1 is DONE
    for level in range(queued + 1):
        at = [i for i, c in enumerate(calls) if c[1] == level]
        expands = [i for i in at if calls[i][0] == "level_expand"]
        merges = [i for i in at if calls[i][0] == "level_merge"]
        assert len(expands) == len(merges) == 3 and max(expands) < min(merges)
        reads = [i for i in at if calls[i][0] == "mode_ready"]
        if level + bl.AHEAD <= queued:
            later = [i for i, c in enumerate(calls)
                     if c == ("level_merge", level + bl.AHEAD - 1)]
            assert reads and min(reads) > max(later)
    assert all(e.mode_of(depth + 1) == bl.DONE for e in engines)


def test_direction_rule():
    """Beamer's switches on a made-up run: 1000 vertices, 10,000 CSR entries."""
    d = pt.Direction(1000)
    assert d.decide(1, 10, 10_000) == bl.TOP_DOWN      # 10 * 14 < 9,990 unexplored
    assert d.decide(50, 900, 10_000) == bl.BOTTOM_UP   # 900 * 14 > 9,090
    assert d.decide(400, 6000, 10_000) == bl.BOTTOM_UP  # stays while the frontier grows
    assert d.decide(50, 500, 10_000) == bl.BOTTOM_UP   # shrinking, but 50 * 24 >= 1000
    assert d.decide(20, 300, 10_000) == bl.TOP_DOWN    # shrinking and 20 * 24 < 1000
    assert d.unexplored == 10000 - (10 + 900 + 6000 + 500 + 300)
    assert d.decide(0, 0, 10_000) == bl.DONE


def test_bottom_up_needs_undirected():
    assert pt.direction_for(GRAPHS["directed"]()) is None
    assert pt.direction_for(disconnected()) is None  # both ways listed, but not flagged
    assert isinstance(pt.direction_for(GRAPHS["kronecker"]()), pt.Direction)


class FakeMpi:
    """The few mpi4py calls MpiNcclExchange makes, between threads."""

    def __init__(self, rank: int, size: int, shared: dict) -> None:
        self.rank, self.size, self.shared = rank, size, shared

    def Get_rank(self):  # noqa: N802
        return self.rank

    def Get_size(self):  # noqa: N802
        return self.size

    def allgather(self, obj):
        s = self.shared
        s["slots"][self.rank] = obj
        s["barrier"].wait(5)
        out = list(s["slots"])
        s["barrier"].wait(5)
        return out


def run_ranks(g: CSRGraph, parts: int, source: int, world: ex.LoopbackWorld,
              bitmap: bool = False):
    """One thread per rank, each with its own part only (as under mpirun); ``bitmap``:
    the undirected graph's bitmap levels, else the message levels."""
    shared = {"slots": [None] * parts, "barrier": threading.Barrier(parts)}
    results: list = [None] * parts
    comms = world.comms()

    def rank(r: int) -> None:
        try:
            mpi = FakeMpi(r, parts, shared)
            exchange = ex.MpiNcclExchange(mpi, comm=comms[r], world=world, timeout=5)
            pg = pt.PartitionedGraph.from_csr(g, parts, only=[r])
            engines = pt.engines_for(pg, exchange.local_parts, "cpu", True)
            direction = pt.Direction(g.n_vertices) if bitmap else None
            results[r] = pt.search(engines, exchange, source, True, direction)
        except Exception as exc:  # noqa: BLE001
            results[r] = exc
            shared["barrier"].abort()

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a rank hung"
    return results


@pytest.mark.parametrize("bitmap", [False, True])
@pytest.mark.parametrize("parts", [2, 3, 4])
def test_mpi_exchange_on_threads(parts, bitmap):
    g = GRAPHS["kronecker"]()
    source = sources_of(g)[0]
    world = ex.LoopbackWorld(parts, threads=parts, timeout=5)
    results = run_ranks(g, parts, source, world, bitmap)
    expected = scipy_distances(g, source)
    for out in results:
        assert isinstance(out, pt.Outcome), out
        np.testing.assert_array_equal(out.distances, expected)
        graph500_check(g.indptr, g.indices, source, out.distances, out.predecessors)


@pytest.mark.parametrize("bitmap", [False, True])
def test_peer_failing_mid_search_raises_everywhere(bitmap):
    """Rank 1 dies at its third collective: every rank raises, none hangs."""
    g = GRAPHS["grid"]()
    world = ex.LoopbackWorld(3, threads=3, timeout=2)
    world.fail_at = {1: 3}
    results = run_ranks(g, 3, 0, world, bitmap)
    assert all(isinstance(r, ex.ExchangeError) for r in results), results
    assert "failed" in str(results[1])
    assert all(isinstance(r, ex.ExchangeTimeout) for k, r in enumerate(results) if k != 1)


def test_nccl_wait_is_bounded():
    """A collective that never completes raises ExchangeTimeout and aborts the comms."""

    class Stuck(ex._LoopbackComm):
        def done(self) -> bool:
            return False

    world = ex.LoopbackWorld(2)
    comms = [Stuck(world, 0), Stuck(world, 1)]
    exchange = ex.NcclExchange(comms, world, 2, timeout=0.05)
    with pytest.raises(ex.ExchangeTimeout, match="did not complete"):
        exchange.join([np.zeros(3, np.int32), np.ones(3, np.int32)])
    # A collective queued without a wait is waited for, bounded, at the loop's settle.
    bits = [np.zeros(3, np.uint32), np.ones(3, np.uint32)]
    exchange.all_sum([[(b, b)] for b in bits])
    with pytest.raises(ex.ExchangeTimeout, match="did not complete"):
        exchange.settle()
    assert all(c.aborted for c in comms)


def test_a_failed_nccl_group_is_an_exchange_error_that_names_the_memory():
    """NCCL's own error (seen: NCCL_ERROR_UNHANDLED_CUDA_ERROR on a GPU whose memory CuPy's
    pool held) becomes an ExchangeError saying where NCCL's memory comes from; any other
    error passes as it is."""

    class NcclError(RuntimeError):  # the name CuPy's NCCL binding gives its errors
        pass

    class Failing(ex.LoopbackWorld):
        error: Exception = NcclError("NCCL_ERROR_UNHANDLED_CUDA_ERROR: unhandled cuda error")

        def group_end(self) -> None:
            super().group_end()
            raise self.error

    world = Failing(2)
    exchange = ex.NcclExchange([ex._LoopbackComm(world, 0), ex._LoopbackComm(world, 1)],
                               world, 2, timeout=5)
    bits = [np.zeros(3, np.uint32), np.ones(3, np.uint32)]
    with pytest.raises(ex.ExchangeError, match=r"NCCL failed \(NCCL_ERROR_UNHANDLED.*"
                                               r"outside CuPy's memory pool"):
        exchange.all_sum([[(b, b)] for b in bits])
    world.error = KeyError("not NCCL's")
    with pytest.raises(KeyError):
        exchange.all_sum([[(b, b)] for b in bits])


def test_rows_of_parts_all_driven_here_need_no_collective():
    """A process that drives every part has every row: the table is stacked on the host
    (a stuck communicator would make any collective raise here)."""

    class Stuck(ex._LoopbackComm):
        def done(self) -> bool:
            return False

    world = ex.LoopbackWorld(2)
    exchange = ex.NcclExchange([Stuck(world, 0), Stuck(world, 1)], world, 2, timeout=0.05)
    table = exchange.all_gather_rows([np.array([1, 2]), np.array([3, 4])])
    np.testing.assert_array_equal(table, [[1, 2], [3, 4]])
    assert table.dtype == np.int64


# ----------------------------------------------------------------------- GPU: NCCL
@pytest.mark.gpu
def test_devices_nccl_one_gpu():
    """devices=[0]: the NCCL path on one GPU (one rank); skipped without NCCL."""
    try:
        ex._require_nccl()
    except ex.ExchangeError as exc:
        pytest.skip(str(exc))
    g = GRAPHS["kronecker"]()
    for source in sources_of(g):
        result = bfs(g, source, devices=[0], predecessors=True)
        assert result.variant == "partitioned-nccl-1"
        check_result(g, source, result)


def visible_gpus() -> int:
    try:
        return int(backend.cupy_module().cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001  (no CuPy, no driver: no GPU)
        return 0


def require_gpus(count: int) -> None:
    try:
        ex._require_nccl()
    except ex.ExchangeError as exc:
        pytest.skip(str(exc))
    if visible_gpus() < count:
        pytest.skip(f"{count} GPUs needed, {visible_gpus()} visible")


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize("k", [2, 3, 4, 8])
def test_devices_nccl_several_gpus(name, k):
    """devices=[0..k-1]: one part per GPU, the exchange through real NCCL between GPUs."""
    require_gpus(k)
    g = GRAPHS[name]()
    for source in sources_of(g):
        result = bfs(g, source, devices=list(range(k)), predecessors=True)
        assert result.variant == f"partitioned-nccl-{k}"
        check_result(g, source, result)


@pytest.mark.gpu
@settings(max_examples=25, deadline=None)
@given(case=edge_graphs(), data=st.data())
def test_devices_nccl_random_graphs(case, data):
    require_gpus(2)
    g, source = case
    if g.n_vertices < 2:
        return  # one vertex: nothing to split over GPUs (the one-GPU tests cover it)
    k = data.draw(st.integers(2, min(visible_gpus(), 8, g.n_vertices)))
    parents = data.draw(st.booleans())
    result = bfs(g, source, devices=list(range(k)), predecessors=parents)
    check_result(g, source, result, parents=parents)


# ----------------------------------------------------------------------- mpirun entry
@pytest.mark.gpu
@pytest.mark.parametrize("ranks", [2, 4])
def test_mpirun_one_process_per_gpu(tmp_path, ranks):
    """``mpirun -n K python -m morphgpu.bfs.distributed FILE``: K processes, one GPU each,
    NCCL bootstrapped through MPI; rank 0's summary agrees with SciPy and passes Graph500."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from morphgpu import graph_io

    launcher = shutil.which("mpirun") or shutil.which("mpiexec")
    if launcher is None:
        pytest.skip("no mpirun on PATH")
    pytest.importorskip("mpi4py")
    require_gpus(ranks)
    g = generators.kronecker(12, 8, device="cpu")
    path = tmp_path / "kron.mtx"
    graph_io.write_graph(g, path)
    source = sources_of(g)[0]
    # Open MPI refuses to start as root (CI containers, the GPU machines) unless told;
    # MPICH ignores these variables.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    done = subprocess.run(
        [launcher, "-n", str(ranks), sys.executable, "-m", "morphgpu.bfs.distributed",
         str(path), "--source", str(source), "--check", "--json"],
        capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout[done.stdout.index("{"):])
    dist = scipy_distances(g, source)
    assert summary["valid"] is True and summary["ranks"] == ranks
    assert summary["reached"] == int((dist >= 0).sum())
    assert summary["levels"] == int(dist.max()) + 1


def test_distributed_without_mpi4py(monkeypatch, capsys, tmp_path):
    import builtins

    from morphgpu.bfs import distributed

    real = builtins.__import__

    def no_mpi(name, *args, **kwargs):
        if name.startswith("mpi4py"):
            raise ImportError("No module named 'mpi4py'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mpi)
    assert distributed.main([str(tmp_path / "g.mtx"), "--source", "0"]) == 2
    assert "mpi4py" in capsys.readouterr().err


def test_distributed_ranks_on_loopback(tmp_path):
    """The mpirun entry's per-rank code on threads: file read, own part, search, summary."""
    from morphgpu import graph_io
    from morphgpu.bfs import distributed

    g = GRAPHS["kronecker"]()
    path = tmp_path / "kron.mtx"
    graph_io.write_graph(g, path)
    source = sources_of(g)[0]
    parts = 3
    world = ex.LoopbackWorld(parts, threads=parts, timeout=5)
    shared = {"slots": [None] * parts, "barrier": threading.Barrier(parts)}
    comms = world.comms()
    out: list = [None] * parts
    args = distributed.parser().parse_args([str(path), "--source", str(source), "--check"])

    def rank(r):
        exchange = ex.MpiNcclExchange(FakeMpi(r, parts, shared), comm=comms[r], world=world,
                                      timeout=5)
        out[r] = distributed.run(args, exchange, side="cpu")

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    summary = out[0]
    assert summary["valid"] is True and summary["ranks"] == parts
    assert summary["variant"] == f"partitioned-mpi-{parts}"
    dist = scipy_distances(g, source)
    assert summary["reached"] == int((dist >= 0).sum())
    assert summary["levels"] == int(dist.max()) + 1
    assert out[1] is None and out[2] is None


def test_distributed_kronecker_ranks_never_hold_the_graph(monkeypatch):
    """--kronecker: each rank draws the edges in chunks and keeps its part (the whole CSR
    is never built: from_csr would fail here), and the answer is kronecker()'s."""
    from morphgpu import generators
    from morphgpu.bfs import distributed

    def refuse(*a, **k):
        raise AssertionError("the whole graph was built")

    monkeypatch.setattr(pt.PartitionedGraph, "from_csr", refuse)
    g = generators.kronecker(9, 8, device="cpu")
    source = sources_of(g)[0]
    parts = 3
    world = ex.LoopbackWorld(parts, threads=parts, timeout=5)
    shared = {"slots": [None] * parts, "barrier": threading.Barrier(parts)}
    comms = world.comms()
    out: list = [None] * parts
    args = distributed.parser().parse_args(["--kronecker", "9:8", "--source", str(source)])

    def rank(r):
        exchange = ex.MpiNcclExchange(FakeMpi(r, parts, shared), comm=comms[r], world=world,
                                      timeout=5)
        out[r] = distributed.run(args, exchange, side="cpu")

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    dist = scipy_distances(g, source)
    assert out[0]["reached"] == int((dist >= 0).sum())
    assert out[0]["levels"] == int(dist.max()) + 1
    assert out[1] is None and out[2] is None


def test_distributed_arguments():
    from morphgpu.bfs import distributed

    assert distributed.kronecker_spec("20") == (20, 16)
    assert distributed.kronecker_spec("22:8") == (22, 8)
    with pytest.raises(ValueError, match="SCALE"):
        distributed.kronecker_spec("x:8")
    for argv in (["--source", "0"], ["g.mtx", "--kronecker", "8", "--source", "0"],
                 ["--kronecker", "8", "--source", "0", "--check"]):
        with pytest.raises(SystemExit):
            distributed.main(argv)


def test_second_search_reuses_the_parts(device, monkeypatch):
    """Parts (and their device copies) are kept per graph object: no re-partitioning."""
    g = GRAPHS["grid"]().to(device)
    calls = []
    real = pt.PartitionedGraph.from_csr.__func__

    def counting(cls, *args, **kwargs):
        calls.append(1)
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(pt.PartitionedGraph, "from_csr", classmethod(counting))
    for source in (0, 7, 100):
        result = bfs(g, source, partitions=4, device=device, predecessors=True)
        check_result(g, source, result)
    assert len(calls) == 1


def test_graph_given_in_parts(device):
    """A PartitionedGraph built from edge chunks (never whole) is searched as it is split,
    on the CPU or one GPU: kronecker()'s distances, valid parents, its part count enforced."""
    scale, factor = 10, 8
    pg = pt.PartitionedGraph.from_edge_chunks(
        generators.kronecker_edge_chunks(scale, factor, chunk_edges=1000), 1 << scale, 3,
        symmetrize=True)
    g = generators.kronecker(scale, factor, device="cpu")
    for source in sources_of(g)[:2]:
        r = bfs(pg, source, device=device, predecessors=True)
        assert r.variant == "partitioned-3"
        dist = backend.to_host(r.distances)
        np.testing.assert_array_equal(dist, scipy_distances(g, source))
        graph500_check(g.indptr, g.indices, source, dist, backend.to_host(r.predecessors))
    with pytest.raises(ValueError, match="3 parts"):
        bfs(pg, 0, device=device, partitions=4)
    share = pt.PartitionedGraph.from_edge_chunks(
        generators.kronecker_edge_chunks(scale, factor), 1 << scale, 3, symmetrize=True,
        only=[1])
    with pytest.raises(ValueError, match="MPI ranks"):
        bfs(share, 0, device=device)


# ------------------------------------------------------------ parts built on their GPUs
def rows_as_sets(pg: pt.PartitionedGraph) -> list[list[np.ndarray]]:
    """Each part's rows, sorted inside (the GPU build leaves them unordered)."""
    out = []
    for p in sorted(pg.parts):
        part = pg.parts[p]
        indptr, indices = backend.to_host(part.indptr), backend.to_host(part.indices)
        out.append([np.sort(indices[a:b]) for a, b in zip(indptr[:-1], indptr[1:])])
    return out


def test_kronecker_chunk_shards_are_the_chunks():
    """chunks(shard=(i, k)) yields exactly chunks i, i + k, ... of the full draw."""
    chunks = generators.kronecker_edge_chunks(8, 4, seed=2, chunk_edges=100)
    every = list(chunks())
    for k in (1, 2, 3, 5):
        for i in range(k):
            got = list(chunks(shard=(i, k)))
            assert len(got) == len(every[i::k])
            for (s, d), (s0, d0) in zip(got, every[i::k], strict=True):
                np.testing.assert_array_equal(s, s0)
                np.testing.assert_array_equal(d, d0)
    with pytest.raises(ValueError, match="shard"):
        list(chunks(shard=(3, 3)))
    with pytest.raises(ValueError, match="device"):
        generators.kronecker_edge_chunks(8, 4, device="tpu")


@pytest.mark.gpu
@pytest.mark.parametrize("k", [1, 2, 4])
def test_parts_built_on_gpus(k):
    """from_edge_chunks_on_gpus with chunks drawn on each GPU: the host builder's partition
    and rows (as sets), the parts left on their GPUs, and a search over them with
    devices=[...] giving SciPy's distances and passing Graph500's checks."""
    require_gpus(k)
    scale, factor = 10, 8
    ids = list(range(k))
    pg = pt.PartitionedGraph.from_edge_chunks_on_gpus(
        generators.kronecker_edge_chunks(scale, factor, chunk_edges=1500, device="gpu"),
        1 << scale, ids, symmetrize=True)
    host = pt.PartitionedGraph.from_edge_chunks(
        generators.kronecker_edge_chunks(scale, factor, chunk_edges=1500), 1 << scale, k,
        symmetrize=True)
    np.testing.assert_array_equal(pg.partition.starts, host.partition.starts)
    assert pg.side == "gpu" and not pg.directed
    assert [int(pg.parts[p].indices.device.id) for p in sorted(pg.parts)] == ids
    for rows, rows0 in zip(rows_as_sets(pg), rows_as_sets(host), strict=True):
        assert len(rows) == len(rows0)
        for r, r0 in zip(rows, rows0, strict=True):
            np.testing.assert_array_equal(r, r0)
    g = generators.kronecker(scale, factor, device="cpu")
    for source in sources_of(g)[:2]:
        r = bfs(pg, source, devices=ids, predecessors=True)
        assert r.variant == f"partitioned-nccl-{k}" and r.device == "gpu"
        dist = backend.to_host(r.distances)
        np.testing.assert_array_equal(dist, scipy_distances(g, source))
        graph500_check(g.indptr, g.indices, source, dist, backend.to_host(r.predecessors))
    with pytest.raises(ValueError, match=re.escape(f"devices={ids}")):
        bfs(pg, 0, device="gpu")


@pytest.mark.gpu
def test_parts_built_on_gpus_from_host_chunks():
    """Host (NumPy) chunks from a source that cannot shard: copied to the GPU, directed
    edges kept one way; a chunk with an id outside the graph is refused by name."""
    require_gpus(1)
    g = GRAPHS["directed"]()
    src, dst = g.edge_sources(), g.indices
    pieces = [(src[i:i + 100], dst[i:i + 100]) for i in range(0, src.size, 100)]
    pg = pt.PartitionedGraph.from_edge_chunks_on_gpus(lambda: iter(pieces), g.n_vertices,
                                                       [0])
    assert pg.directed
    for source in sources_of(g):
        r = bfs(pg, source, devices=[0])
        np.testing.assert_array_equal(backend.to_host(r.distances),
                                      scipy_distances(g, source))
    bad = [(np.array([0, 1]), np.array([1, g.n_vertices]))]
    with pytest.raises(ValueError, match="target id outside"):
        pt.PartitionedGraph.from_edge_chunks_on_gpus(lambda: iter(bad), g.n_vertices, [0])
