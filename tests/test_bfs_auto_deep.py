"""auto on deep graphs: persistent or tiled, chosen by timing at the graph's second deep
search (bfs/gpu/deep_choice.py). The decision logic on the CPU with fake runners and
timings; on the GPU: exact answers on every call, the choice made at the second search and
never timed again, explicit persistent untouched, a changed matrix measured afresh."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import generators, reorder
from morphgpu.bfs import bfs
from morphgpu.bfs.gpu import deep_choice, relabel, tiled
from morphgpu.csr import CSRGraph


def _distances(indptr, indices, n: int, source: int) -> np.ndarray:
    matrix = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, n))
    d = csgraph.shortest_path(matrix, method="D", unweighted=True, indices=source)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _shuffled_grid() -> CSRGraph:
    grid = generators.grid2d(120, 90, device="cpu")
    return reorder.apply(grid, np.random.default_rng(5).permutation(grid.n_vertices))


# --- the decision on the CPU ------------------------------------------------------------


def test_decide_takes_the_smaller_best_time():
    assert deep_choice.decide({"persistent": [2.44, 2.5], "tiled": [2.62, 2.7]}) == "persistent"
    assert deep_choice.decide({"persistent": [25.8, 26.0], "tiled": [14.0, 13.9]}) == "tiled"
    assert deep_choice.decide({"persistent": [3.0, 9.0], "tiled": [9.0, 3.1]}) == "persistent"
    assert deep_choice.decide({"persistent": [1.0], "tiled": [1.0]}) == "persistent"  # tie


class _FakeWorkspace:
    def __init__(self) -> None:
        self.g = SimpleNamespace(n_vertices=100)
        stream = SimpleNamespace(synchronize=lambda: None)
        self.cp = SimpleNamespace(cuda=SimpleNamespace(get_current_stream=lambda: stream))


@pytest.mark.parametrize(("ms", "winner"), [({"p": 2.44, "t": 2.62}, "persistent"),
                                             ({"p": 25.8, "t": 14.0}, "tiled")])
def test_measured_at_the_second_search_then_remembered(monkeypatch, ms, winner):
    """Fake runners and timings: the first search runs persistent untimed, the second
    builds the tiled copy and times both, the third runs the winner untimed; a tiled copy
    built for the measurement goes where persistent wins."""
    log: list[str] = []

    def fake_persistent(ws, source, want_parents):
        relabel._searches[ws] = relabel._searches.get(ws, 0) + 1  # as relabel.chosen does
        log.append("p")
        return ("p", source)

    def fake_tiled(ws, source, want_parents):
        log.append("t")
        return ("t", source)

    timed: list[str] = []

    def fake_timed(ws, call):
        out = call()
        timed.append(out[0])
        return ms[out[0]], out

    built: list[int] = []
    forgotten: list[int] = []
    monkeypatch.setattr(deep_choice, "run_persistent", fake_persistent)
    monkeypatch.setattr(tiled, "run_tiled", fake_tiled)
    monkeypatch.setattr(tiled, "_shift", lambda ws, shift: 8)
    monkeypatch.setattr(tiled, "preparation", lambda ws, shift: None)
    monkeypatch.setattr(tiled, "tile_copy", lambda ws, shift: built.append(shift))
    monkeypatch.setattr(tiled, "forget", lambda ws, shift: forgotten.append(shift))
    monkeypatch.setattr(relabel, "keep_if_serving", lambda ws: None)
    monkeypatch.setattr(deep_choice, "_timed", fake_timed)
    ws = _FakeWorkspace()

    out, name = deep_choice.run_auto(ws, 3, False)
    assert (out, name) == (("p", 3), "persistent") and log == ["p"] and not timed
    assert deep_choice.preparation(ws) is None and not built

    out, name = deep_choice.run_auto(ws, 5, True)
    assert name == winner and out == (winner[0], 5)
    assert built == [8] and sorted(timed) == ["p"] * deep_choice.MEASURE_REPEATS + \
        ["t"] * deep_choice.MEASURE_REPEATS
    choice = deep_choice.preparation(ws)
    assert choice is not None and choice.variant == winner and choice.searches == 2
    assert choice.persistent_ms == ms["p"] and choice.tiled_ms == ms["t"]
    assert forgotten == ([8] if winner == "persistent" else [])

    log.clear()
    timed.clear()
    out, name = deep_choice.run_auto(ws, 7, False)
    assert name == winner and log == [winner[0]] and not timed and built == [8]


# --- on the GPU -------------------------------------------------------------------------


def _counting(monkeypatch) -> list:
    """Every measuring search's workspace, in order (deep_choice.measure wrapped)."""
    seen: list = []
    measure = deep_choice.measure

    def counted(ws, source, want_parents):
        seen.append(ws)
        return measure(ws, source, want_parents)

    monkeypatch.setattr(deep_choice, "measure", counted)
    return seen


@pytest.mark.gpu
@pytest.mark.parametrize("forced", [None, "persistent", "tiled"])
def test_gpu_auto_chooses_at_the_second_search(monkeypatch, forced):
    """Three auto searches of a deep graph (a shuffled grid): exact each time; the choice
    is made at the second (one of the two, what that search and the third report) and the
    third times nothing. ``forced``: decide() overridden, so both outcomes run."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    if forced is not None:
        monkeypatch.setattr(deep_choice, "decide", lambda times: forced)
    seen = _counting(monkeypatch)
    host = _shuffled_grid()
    g = host.to("gpu")
    ws = gpu.workspace(g)
    ran = []
    for k, source in enumerate((3, 77, 9000)):
        result = bfs(g, source, device="gpu", predecessors=True)
        np.testing.assert_array_equal(result.distances.get(),
                                      _distances(host.indptr, host.indices, host.n_vertices,
                                                 source))
        ran.append(result.variant)
        choice = deep_choice.preparation(ws)
        if k == 0:
            assert choice is None and not seen and result.variant == "persistent"
        else:
            assert choice is not None and choice.variant in deep_choice.CANDIDATES
            assert choice.searches == 2 and seen == [ws]
            assert choice.persistent_ms > 0 and choice.tiled_ms > 0 and choice.seconds > 0
    choice = deep_choice.preparation(ws)
    assert ran[1:] == [choice.variant, choice.variant]
    if forced is not None:
        assert choice.variant == forced
    shift = tiled._shift(ws, None)
    if choice.variant == "persistent":  # the measuring search's tiled copy is dropped
        assert tiled.preparation(ws, shift) is None
    else:
        assert tiled.preparation(ws, shift) is not None


@pytest.mark.gpu
def test_gpu_explicit_persistent_is_not_measured(monkeypatch):
    """variant="persistent" runs persistent on every call and never measures."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    seen = _counting(monkeypatch)
    host = _shuffled_grid()
    g = host.to("gpu")
    for source in (3, 77, 9000):
        result = bfs(g, source, variant="persistent", device="gpu")
        assert result.variant == "persistent"
        np.testing.assert_array_equal(result.distances.get(),
                                      _distances(host.indptr, host.indices, host.n_vertices,
                                                 source))
    assert not seen and deep_choice.preparation(gpu.workspace(g)) is None
    copy = relabel.preparation(gpu.workspace(g))  # relabel's own rule still applies
    assert copy is not None


@pytest.mark.gpu
def test_gpu_changed_matrix_is_measured_afresh(monkeypatch):
    """A CuPy matrix changed in place after auto chose for it: the changed graph (a new
    graph, a new workspace) runs its first search as given and measures at its second;
    every answer is the current matrix's."""
    import cupy as cp  # noqa: PLC0415
    import cupyx.scipy.sparse as csp  # noqa: PLC0415

    seen = _counting(monkeypatch)
    host = _shuffled_grid()
    m = csp.csr_matrix((cp.ones(host.n_edges, dtype=cp.float32), cp.asarray(host.indices),
                        cp.asarray(host.indptr)), shape=host.shape)
    indptr, indices = host.indptr, host.indices

    def check(source: int) -> str:
        result = bfs(m, source, device="gpu")
        np.testing.assert_array_equal(result.distances.get(),
                                      _distances(indptr, indices, host.n_vertices, source))
        return result.variant

    for source in (3, 77, 9000):
        check(source)
    assert len(seen) == 1
    first = seen[0]
    perm = np.random.default_rng(9).permutation(host.n_vertices).astype(indices.dtype)
    indices = perm[indices]
    m.indices[:] = cp.asarray(indices, dtype=m.indices.dtype)
    assert check(3) == "persistent" and len(seen) == 1  # the new graph's first search
    for source in (77, 9000):
        check(source)
    assert len(seen) == 2 and seen[1] is not first
    assert deep_choice.preparation(seen[1]) is not None


def test_no_room_for_the_tiled_copy_keeps_persistent(monkeypatch):
    """A tiled copy that does not fit: persistent is remembered, untimed, and runs."""
    def fake_persistent(ws, source, want_parents):
        relabel._searches[ws] = relabel._searches.get(ws, 0) + 1
        return ("p", source)

    def no_room(ws, shift):
        raise MemoryError("no room")

    forgotten: list[int] = []
    monkeypatch.setattr(deep_choice, "run_persistent", fake_persistent)
    monkeypatch.setattr(tiled, "_shift", lambda ws, shift: 8)
    monkeypatch.setattr(tiled, "preparation", lambda ws, shift: None)
    monkeypatch.setattr(tiled, "tile_copy", no_room)
    monkeypatch.setattr(tiled, "forget", lambda ws, shift: forgotten.append(shift))
    monkeypatch.setattr(relabel, "keep_if_serving", lambda ws: None)
    monkeypatch.setattr(deep_choice, "_timed", lambda ws, call: pytest.fail("timed"))
    ws = _FakeWorkspace()
    assert deep_choice.run_auto(ws, 1, False) == (("p", 1), "persistent")
    assert deep_choice.run_auto(ws, 2, False) == (("p", 2), "persistent")
    choice = deep_choice.preparation(ws)
    assert choice is not None and choice.variant == "persistent" and forgotten == [8]
    assert deep_choice.run_auto(ws, 3, False) == (("p", 3), "persistent")
