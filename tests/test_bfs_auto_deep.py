"""auto on deep graphs: persistent or tiled (at one of tiled's horizons), chosen by timing
once the graph's searches have cost the expected measuring cost (bfs/gpu/deep_choice.py).
The decision logic on the CPU with fake runners, events and timings; on the GPU: exact
answers on every call, the choice made once due and never timed again, searches counted
until then, explicit persistent untouched, a changed matrix measured afresh."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from morphgpu import generators, reorder
from morphgpu.bfs import bfs, variants
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


P, T12, T32 = ("persistent", 0), ("tiled", 12), ("tiled", 32)


def test_decide_takes_the_smallest_best_time():
    assert deep_choice.decide({P: [2.44, 2.5], T12: [2.72, 2.7], T32: [2.52, 2.6]}) == P
    assert deep_choice.decide({P: [25.8, 26.0], T12: [15.6, 15.7], T32: [13.9, 14.0]}) == T32
    assert deep_choice.decide({P: [3.1, 3.2], T12: [2.45, 9.0], T32: [3.06, 3.0]}) == T12
    assert deep_choice.decide({P: [3.0, 9.0], T12: [9.0, 3.1], T32: [3.2]}) == P
    assert deep_choice.decide({P: [1.0], T12: [1.0], T32: [1.0]}) == P  # ties: no copy kept
    assert deep_choice.decide({P: [2.0], T12: [1.0], T32: [1.0]}) == T12  # the shorter


def test_the_arms_measured():
    """persistent, then tiled at each of the horizons measured (the docstring's, an
    explicit tiled search's among them), then overlay at each of its deltas (each with its
    block size); every arm a candidate with a runner."""
    from morphgpu.bfs.gpu import overlay  # noqa: PLC0415

    assert deep_choice.ARMS[0] == P
    horizons = deep_choice.HORIZONS
    n_tiled = len(horizons)
    assert list(deep_choice.ARMS[1:1 + n_tiled]) == [("tiled", h) for h in horizons]
    assert list(deep_choice.ARMS[1 + n_tiled:]) == [("overlay", d) for d, _ in overlay.ARMS]
    assert deep_choice.OVERLAY_BLOCKS == dict(overlay.ARMS)
    assert len(set(horizons)) >= 2 and min(horizons) > 0
    assert tiled.HORIZON in horizons
    assert {arm[0] for arm in deep_choice.ARMS} == set(deep_choice.CANDIDATES)
    from morphgpu.bfs import gpu  # noqa: PLC0415

    assert all(gpu.runner(arm[0]) is not None for arm in deep_choice.ARMS)


class _FakeWorkspace:
    """A workspace whose CUDA events say every search took ``search_ms``."""

    def __init__(self, search_ms: float = 10.0) -> None:
        self.g = SimpleNamespace(n_vertices=100)
        self.shallow = False  # its first search read as deep (note_shape's tests below)
        stream = SimpleNamespace(synchronize=lambda: None)

        def event():
            return SimpleNamespace(record=lambda: None, done=True)

        self.cp = SimpleNamespace(cuda=SimpleNamespace(
            get_current_stream=lambda: stream, Event=event,
            get_elapsed_time=lambda start, end: search_ms))


def _fakes(monkeypatch, ms, expected_s, log, timed, built, forgotten):
    """Fake runners and timings; relabel's copy is 'built' (taking expected_s) by the
    second persistent search, as relabel.chosen builds it."""
    copies: dict = {}

    def fake_persistent(ws, source, want_parents):
        relabel._searches[ws] = relabel._searches.get(ws, 0) + 1  # as relabel.chosen does
        if relabel._searches[ws] == 2:
            copies[ws] = SimpleNamespace(seconds=expected_s)
        log.append("p")
        return ("p", source)

    def fake_tiled(ws, source, want_parents, horizon=tiled.HORIZON):
        log.append(f"t{horizon}")
        return ("t", source, horizon)

    def fake_overlay(ws, source, want_parents, delta):
        log.append(f"o{delta}")
        return ("o", source, delta)

    def fake_timed(ws, call):
        out = call()
        arm = out[0] if out[0] == "p" else f"{out[0]}{out[2]}"
        timed.append(arm)
        return ms[arm], out

    monkeypatch.setattr(deep_choice, "run_persistent", fake_persistent)
    monkeypatch.setattr(relabel, "preparation", lambda ws: copies.get(ws))
    monkeypatch.setattr(tiled, "run_tiled", fake_tiled)
    monkeypatch.setattr(deep_choice, "_run_overlay", fake_overlay)
    monkeypatch.setattr(tiled, "_shift", lambda ws, shift: 8)
    monkeypatch.setattr(tiled, "preparation", lambda ws, shift: None)
    monkeypatch.setattr(tiled, "tile_copy", lambda ws, shift: built.append(shift))
    monkeypatch.setattr(tiled, "forget", lambda ws, shift: forgotten.append(shift))
    monkeypatch.setattr(relabel, "keep_if_serving", lambda ws: None)
    monkeypatch.setattr(deep_choice, "_timed", fake_timed)


@pytest.mark.parametrize(("ms", "winner", "horizon"), [
    ({"p": 2.44, "t12": 2.72, "t32": 2.62}, "persistent", 32),
    ({"p": 2.44, "t12": 2.62, "t32": 2.72}, "persistent", 12),
    ({"p": 25.8, "t12": 15.6, "t32": 14.0}, "tiled", 32),
    ({"p": 3.1, "t12": 2.45, "t32": 3.06}, "tiled", 12)])
def test_measured_once_the_searches_cost_the_build_then_remembered(monkeypatch, ms, winner,
                                                                   horizon):
    """Searches of 10 ms, a relabelled copy that took 35 ms to build (at the second
    search, which is not counted): searches 1, 3, 4 and 5 run persistent (40 ms counted),
    the sixth measures persistent and tiled at each horizon; later ones run the winner (at
    its horizon) untimed; a tiled copy built for the measurement goes where persistent
    wins. The choice keeps every arm's best time, and the fastest tiled arm's where
    persistent wins."""
    monkeypatch.setattr(deep_choice, "ARMS", (P, T12, T32))
    log: list[str] = []
    timed: list[str] = []
    built: list[int] = []
    forgotten: list[int] = []
    _fakes(monkeypatch, ms, 0.035, log, timed, built, forgotten)
    ws = _FakeWorkspace(search_ms=10.0)

    for k in range(1, 6):
        out, name = deep_choice.run_auto(ws, k, False)
        assert (out, name) == (("p", k), "persistent")
    assert log == ["p"] * 5 and not timed and not built
    assert deep_choice.preparation(ws) is None
    assert deep_choice.spent_seconds(ws) == pytest.approx(0.040)

    out, name = deep_choice.run_auto(ws, 6, True)
    kind = {"persistent": "p", "tiled": "t"}[winner]
    assert name == winner
    assert out == (("p", 6) if winner == "persistent" else (kind, 6, horizon))
    assert built == [8] and sorted(timed) == sorted(
        ["p", "t12", "t32"] * deep_choice.MEASURE_REPEATS)
    choice = deep_choice.preparation(ws)
    assert choice is not None and choice.variant == winner and choice.searches == 6
    assert choice.horizon == horizon
    assert choice.tiled_ms == min(t for arm, t in ms.items() if arm != "p")
    assert choice.persistent_ms == ms["p"]
    assert choice.ms_by_arm == {P: ms["p"], T12: ms["t12"], T32: ms["t32"]}
    assert choice.spent_s == pytest.approx(0.040) and choice.expected_s == 0.035
    assert forgotten == ([8] if winner == "persistent" else [])

    log.clear()
    timed.clear()
    out, name = deep_choice.run_auto(ws, 7, False)
    assert name == winner and not timed and built == [8]
    assert log == (["p"] if winner == "persistent" else [f"{kind}{horizon}"])


def test_a_graph_searched_a_few_times_never_pays_for_measuring(monkeypatch):
    """A build of 1 s against searches of 10 ms: 30 searches all run persistent untimed
    by the tiled side, and only the 29 after the building one are counted."""
    log: list[str] = []
    timed: list[str] = []
    built: list[int] = []
    _fakes(monkeypatch, {"p": 1.0, **{f"t{h}": 0.5 for h in deep_choice.HORIZONS}},
           1.0, log, timed, built, [])
    ws = _FakeWorkspace(search_ms=10.0)
    for k in range(30):
        assert deep_choice.run_auto(ws, k, False) == (("p", k), "persistent")
    assert not built and not timed and deep_choice.preparation(ws) is None
    assert deep_choice.spent_seconds(ws) == pytest.approx(0.29)


def test_choose_now_measures_at_once(monkeypatch):
    """choose_now (the benchmark's call) measures on the first search and remembers."""
    timed: list[str] = []
    built: list[int] = []
    ms = {"p": 25.8, **{f"t{h}": 14.0 + h / 100 for h in deep_choice.HORIZONS},
          **{f"o{d}": 16.0 + d for d in deep_choice.OVERLAY_BLOCKS}}
    _fakes(monkeypatch, ms, 1.0, [], timed, built, [])
    ws = _FakeWorkspace()
    choice = deep_choice.choose_now(ws, 4, False)
    assert choice.variant == "tiled" and choice.searches == 1 and built == [8]
    assert set(timed) == {f"t{h}" for h in deep_choice.HORIZONS} | {"p"} | {
        f"o{d}" for d in deep_choice.OVERLAY_BLOCKS}
    assert deep_choice.choose_now(ws, 5, False) is choice and built == [8]


def test_overlay_chosen_runs_at_its_delta_and_the_other_copy_goes(monkeypatch):
    """Where an overlay arm is fastest, later searches run overlay at that arm's delta;
    the tiled copy built for tiled's arms is dropped, the overlay's copy kept."""
    from morphgpu.bfs.gpu import overlay  # noqa: PLC0415

    log: list[str] = []
    timed: list[str] = []
    built: list[int] = []
    forgotten: list[int] = []
    deltas = list(deep_choice.OVERLAY_BLOCKS)
    ms = {"p": 25.8, **{f"t{h}": 14.0 for h in deep_choice.HORIZONS},
          **{f"o{d}": 9.0 - i for i, d in enumerate(deltas)}}
    _fakes(monkeypatch, ms, 1.0, log, timed, built, forgotten)
    ws = _FakeWorkspace()
    choice = deep_choice.choose_now(ws, 4, False)
    assert choice.variant == "overlay" and choice.horizon == deltas[-1]
    assert forgotten == [8] and overlay.SHIFT != 8
    log.clear()
    out, name = deep_choice.run_auto(ws, 6, False)
    assert (out, name) == (("o", 6, deltas[-1]), "overlay") and log == [f"o{deltas[-1]}"]


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


def _cheap_measuring(monkeypatch) -> None:
    """Measuring expected to cost almost nothing: due at the first search after the one
    that builds the relabelled copy (the third), so the GPU tests stay short."""
    monkeypatch.setattr(deep_choice, "expected_cost",
                        lambda ws: None if relabel.preparation(ws) is None else 1e-9)


# --- deep by degrees, wide by the first search -------------------------------------------


MEAN_DEGREE = 8


class _ShapeWorkspace:
    """What note_shape and gpu.choose read of a workspace (weakly referable, as the
    decision tables hold workspaces)."""

    def __init__(self) -> None:
        self.shallow = None
        self.g = SimpleNamespace(n_vertices=1 << 20)
        self.n_edges = MEAN_DEGREE << 20
        self.max_degree = 20


def _shape_ws() -> _ShapeWorkspace:
    return _ShapeWorkspace()


@pytest.mark.parametrize(("sizes", "shallow"), [
    ([1, 8, 60, 500, 4000, 30000, 90000, 6000, 40], True),  # a random graph's levels
    ([1] + [deep_choice.ENTER_LOCAL] * 12, False),  # few levels, but one block takes each
    ([1, 10, 100, 3000] + [2 * deep_choice.ENTER_LOCAL] * 8, True),
    ([1, 100, 20000, 90000] + [5000] * 9, True),  # 13 levels: under ALPHA = 14
    ([1, 100, 20000, 90000] + [5000] * 10, False),  # 14: Beamer's rule may not switch
    ([3] * 400, False),  # a road network's many narrow levels
    ([1], False)])
def test_note_shape_reads_levels_and_widths(sizes, shallow):
    """Level sizes in vertices, read as the figures give them: the reached vertices'
    out-edges (at the graph's mean degree) and the largest label."""
    assert variants.ALPHA == 14.0  # the cases' level counts sit on both sides of it
    ws = _shape_ws()
    deep_choice.note_shape(ws, MEAN_DEGREE * sum(sizes), len(sizes) - 1)
    assert ws.shallow is shallow


@pytest.mark.parametrize(("figures", "expected"), [((3_000_000, 5), "beamer"),
                                                   ((3_000_000, 299), "persistent")])
def test_the_first_deep_search_is_read_then_auto_runs_beamer(monkeypatch, figures, expected):
    """auto's first deep search runs persistent, returns its figures and is read; where it
    was shallow and wide the graph's later auto searches are beamer's (gpu.choose), else
    deep_choice goes on as before (persistent, counted)."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    calls: list[int] = []
    monkeypatch.setattr(deep_choice, "_run_counted",
                        lambda ws, s, p: calls.append(s) or ("labels", None))
    monkeypatch.setattr(deep_choice, "_search_figures",
                        lambda ws, labels: ("figures of " + labels, *figures))
    ws = _shape_ws()
    assert gpu.choose(ws, "auto") == "persistent"
    out, name = deep_choice.run_auto(ws, 5, False)
    assert name == "persistent" and out == ("labels", None, "figures of labels")
    assert calls == [5] and ws.shallow is (expected == "beamer")
    assert gpu.choose(ws, "auto") == expected
    assert gpu.choose(ws, "persistent") == "persistent"  # explicit names stay
    out, name = deep_choice.run_auto(ws, 6, False)  # read once: the counted path now
    assert calls == [5, 6] and out == ("labels", None)


@pytest.mark.gpu
def test_gpu_random_graph_of_low_degree_runs_beamer_after_its_first_search():
    """G(2^17, 2^19) (mean degree 8, so deep by its degrees: variants.py) has ~10 levels of
    up to ~50k vertices: its second auto search runs beamer; a grid stays deep (persistent,
    or once auto's timing is due whichever deep arm it measured fastest: session 39's run
    4 saw overlay there). Every search exact."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    deep = {"persistent"} | {variant for variant, _ in deep_choice.ARMS}
    random_graph = generators.gnm(1 << 17, 1 << 19, seed=4, device="cpu")
    grid = generators.grid2d(150, 120, device="cpu")
    for host, shallow in ((random_graph, True), (grid, False)):
        g = host.to("gpu")
        ran = []
        for source in (0, 77, 12345):
            result = bfs(g, source, device="gpu", predecessors=True)
            np.testing.assert_array_equal(
                result.distances.get(),
                _distances(host.indptr, host.indices, host.n_vertices, source))
            ran.append(result.variant)
        assert ran[0] == "persistent"
        if shallow:
            assert ran[1:] == ["beamer", "beamer"]
        else:
            assert set(ran[1:]) <= deep, ran
        assert gpu.workspace(g).shallow is shallow


@pytest.mark.gpu
@pytest.mark.parametrize("forced", [None, *deep_choice.ARMS])
def test_gpu_auto_chooses_once_due(monkeypatch, forced):
    """Four auto searches of a deep graph (a shuffled grid), exact each time: the first
    two run persistent (the second builds the relabelled copy), the third measures (the
    first's GPU time is above the patched cost) and reports one of the arms, the fourth
    runs that one. ``forced``: decide() overridden, so every outcome runs."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    if forced is not None:
        monkeypatch.setattr(deep_choice, "decide", lambda times: forced)
    _cheap_measuring(monkeypatch)
    seen = _counting(monkeypatch)
    host = _shuffled_grid()
    g = host.to("gpu")
    ws = gpu.workspace(g)
    ran = []
    for k, source in enumerate((3, 77, 9000, 4321)):
        result = bfs(g, source, device="gpu", predecessors=True)
        np.testing.assert_array_equal(result.distances.get(),
                                      _distances(host.indptr, host.indices, host.n_vertices,
                                                 source))
        ran.append(result.variant)
        choice = deep_choice.preparation(ws)
        if k < 2:
            assert choice is None and not seen and result.variant == "persistent"
        else:
            assert choice is not None and choice.variant in deep_choice.CANDIDATES
            assert choice.searches == 3 and seen == [ws]
            assert choice.persistent_ms > 0 and choice.seconds > 0
            assert choice.spent_s > 0 and choice.expected_s == 1e-9
            assert sorted(choice.ms_by_arm) == sorted(deep_choice.ARMS)
            assert all(t > 0 for t in choice.ms_by_arm.values())
            if choice.variant != "overlay":  # tiled's chosen or fastest horizon
                assert choice.tiled_ms == choice.ms_by_arm[("tiled", choice.horizon)]
            if choice.variant != "persistent":
                assert (choice.variant, choice.horizon) in deep_choice.ARMS
    choice = deep_choice.preparation(ws)
    assert ran[2:] == [choice.variant, choice.variant]
    if forced is not None:
        assert choice.variant == forced[0]
        if forced[0] != "persistent":
            assert choice.horizon == forced[1]
    # the measuring search's tiled copies are dropped but the one the winner runs on
    from morphgpu.bfs.gpu import overlay  # noqa: PLC0415

    kept = {"tiled": tiled._shift(ws, None), "overlay": overlay.SHIFT}.get(choice.variant)
    for size in {tiled._shift(ws, None), overlay.SHIFT}:
        assert (tiled.preparation(ws, size) is not None) == (size == kept), (size, choice)


@pytest.mark.gpu
def test_gpu_searches_are_counted_until_due(monkeypatch):
    """With the real expected cost (the relabelled copy's build: a landmark order from
    several searches), a few searches are counted but do not reach it: no measuring."""
    from morphgpu.bfs import gpu  # noqa: PLC0415

    seen = _counting(monkeypatch)
    host = _shuffled_grid()
    g = host.to("gpu")
    ws = gpu.workspace(g)
    for source in (3, 77, 9000, 4321):
        assert bfs(g, source, device="gpu").variant == "persistent"
    g.indptr.device.synchronize()
    spent = deep_choice.spent_seconds(ws)  # searches 1, 3 and 4
    expected = deep_choice.expected_cost(ws)
    assert expected is not None and 0 < spent < expected
    assert not seen and deep_choice.preparation(ws) is None


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
    graph, a new workspace) starts a new count and measures at its third search (the
    patched cost); every answer is the current matrix's."""
    import cupy as cp  # noqa: PLC0415
    import cupyx.scipy.sparse as csp  # noqa: PLC0415

    _cheap_measuring(monkeypatch)
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
    assert check(77) == "persistent" and len(seen) == 1  # its second (relabelled copy)
    check(9000)
    assert len(seen) == 2 and seen[1] is not first
    assert deep_choice.preparation(seen[1]) is not None


def test_no_room_for_the_tiled_copy_keeps_persistent(monkeypatch):
    """A tiled copy that does not fit: persistent is remembered, untimed, and runs."""
    def no_room(ws, shift):
        raise MemoryError("no room")

    forgotten: list[int] = []
    _fakes(monkeypatch, {"p": 1.0, "t": 0.5}, 0.0, [], [], [], forgotten)
    monkeypatch.setattr(tiled, "tile_copy", no_room)
    monkeypatch.setattr(deep_choice, "_timed", lambda ws, call: pytest.fail("timed"))
    ws = _FakeWorkspace()
    for k in (1, 2):  # the second builds the relabelled copy (0 s: due at once)
        assert deep_choice.run_auto(ws, k, False) == (("p", k), "persistent")
    assert deep_choice.preparation(ws) is None
    assert deep_choice.run_auto(ws, 3, False) == (("p", 3), "persistent")  # measures
    choice = deep_choice.preparation(ws)
    assert choice is not None and choice.variant == "persistent" and forgotten == [8]
    assert deep_choice.run_auto(ws, 4, False) == (("p", 4), "persistent")
