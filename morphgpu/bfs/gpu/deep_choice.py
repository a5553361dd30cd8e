"""``auto`` on deep graphs: ``persistent``, ``tiled`` (and tiled's horizon) or ``overlay``
(and its delta), chosen per graph by timing them.

Why a measurement and not a graph statistic. On an H100 (benchmarks/bfs.py, 4 roots, one
process, session 14) tiled against persistent, ms per search: road COL (435k vertices) 2.62
vs 2.44 (0.93x), grid 4000^2 13.98 vs 25.83 (1.85x), grid 3000^2 with 30 % of its edges
deleted 11.15 vs 17.55 (1.57x), Delaunay 1M 2.62 vs 3.11 (1.19x), Delaunay 4M 6.58 vs 7.02
(1.07x). No statistic known before a search (degrees, size, diameter estimates) separates
the road network from the others without a cut-off fitted to these five graphs, and the
graphs auto meets (unseen road networks above all) are not these. Both copies are per-graph
preparations anyway, so auto builds the tiled copy where the locality-relabelled copy is
built, times one search on each and keeps the faster.

When: once the graph's searches have cost what measuring would (a ski-rental rule).
Measuring is not free: on an H100 (session 15) it took 0.12-0.71 s on graphs of 0.26-25M
vertices, and it repays itself only after 52-222 searches where tiled wins, never where
persistent does (roads). Measured at the second search, it made a new process's second
call on a road network 0.4 s. So until the choice is made auto runs ``persistent`` and
adds up those searches' GPU time (CUDA events around each, read when they have finished:
no search waits for the host), and it measures at the first deep search where that sum
has reached the expected cost of measuring. The expected cost is the build time of the
graph's locality-relabelled copy (relabel.py builds it at the graph's second deep search,
whatever auto decides, and the tiled copy is built from it; on the H100 the measuring
beyond that build took 0.4-3.3x the build on six graphs and 10x on road COL, whose copy
builds in 21 ms). A graph searched a few times thus never pays for the measurement; one
searched many times pays it once, after searches that ran at persistent's speed anyway
for about as long as the build took. (The search that builds the relabelled copy is not
counted: its events would hold the build.)
``choose_now`` measures at once, for a caller who knows it will search the graph many
times (the benchmark does).

Which horizon for tiled. A visit expands labels below its lowest seed's + the horizon
(tiled.py), and the best horizon depends on the graph's shape (H200, session 32 run 3, 16
roots, one process, ms per search at horizons 24 / 48 / 96): Delaunay 4M **3.58** / 3.93 /
4.17, Delaunay 8M **5.67** / 6.66 / 7.70, road NY **1.13** / 1.14 / 1.47 (at 96 visits run
ahead of corrections), road COL 1.67 / **1.53** / 1.70, grid 4000^2 8.79 / 7.78 / **7.48**,
grid-del 5000^2 16.55 / 14.96 / **14.25**. So tiled runs at the three, HORIZONS, in the
measurement. (Until session 32 tiled ran in rounds, whose horizon was the other way round
on the two families too, 12 on Delaunay graphs and 32 on grids and roads, both measured;
the rounds were deleted once slower everywhere: tiled.py's history. In run 4 of session 32
auto timed the rounds at 12 and 32 beside the ring at 24 / 48 / 96 on eleven deep graphs,
the issue's and other shapes, and a ring arm was the fastest on every one: 48 on the roads,
Delaunay 1M / 2M and the 12000 x 800 strip, 96 on the grids with and without deleted edges,
24 on Delaunay 4M.)

Overlay (gpu/overlay.py) joined the arms in session 38: against tiled, same process, H200,
1.40x on Delaunay 1M and 2.42x on a 1000^2 grid with deleted edges (its two arms, delta 0
at 256 threads and delta 8 at 512, each win on one family). It needs its own tiled copy
(tiles of overlay.SHIFT) and distance tables, built by the measurement; where they do not
fit in GPU memory the other arms are measured alone.

How: build the tiled copy (which builds or reuses the locality-relabelled copy) and the
overlay, run one untimed search of each arm (persistent, tiled at each of HORIZONS,
overlay at each of its deltas: kernel loads, the copies' workspaces), then
MEASURE_REPEATS timed searches of each, interleaved, from that search's own source (CUDA
events on the current stream), and keep the arm with the smallest best time; every search
is exact, so the search requested returns the winner's last result.
Where the tiled copy does not fit in GPU memory, persistent is kept untimed. After that the
remembered variant runs with no timing. The tiled copies the winner does not run on are
dropped (unless an explicit ``tiled`` or ``overlay`` search had built them), freeing their
memory; the
locality-relabelled copy stays under relabel.py's own rule (an explicit ``persistent``
search uses it).

The decision is kept per workspace, weakly (like relabel.py's copies): a workspace belongs
to one CSRGraph object, and a graph made from a changed matrix (graph_cache) is a new
object with a new workspace, so a changed graph never meets an old decision. The
DynamicGraph path (variants.auto_dynamic) stays on ``persistent``: ``tiled`` needs a CSR.
An explicit ``variant="persistent"``, ``"tiled"`` or ``"overlay"`` never comes here.

Deep by its degrees, wide by its search. The degree rule (variants.py) also sends here
graphs of low degree whose searches are shallow: a random graph of mean degree 8 has 12
levels at 8M vertices, where persistent took 2.4x beamer's time (H200, session 29, G(2^23,
2^25): 2.65 against 1.10 ms). So the graph's first deep search is read (:func:`note_shape`,
from the figures every search counts anyway), and auto runs ``beamer`` from then on where
that search had fewer than ALPHA levels (Beamer's rule: the largest level then holds more
than 1/ALPHA of the reached edges, and his rule goes bottom-up when a level's edges pass
the unexplored ones / ALPHA) whose mean frontier is more than persistent's one-block mode
takes (persistent.ENTER_LOCAL: below it persistent runs without grid barriers). Roads,
grids and meshes have hundreds of levels and more.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import variants
from . import overlay, tiled
from . import relabel as relabel_module
from .launch import timed_ms
from .persistent import ENTER_LOCAL, run_persistent
from .workspace import Workspace

CANDIDATES = ("persistent", "tiled", "overlay")
HORIZONS = (24, 48, 96)  # tiled's horizons measured (the module's docstring says why)
# overlay's arms by their delta (each delta runs at its block size, overlay.ARMS)
OVERLAY_BLOCKS = dict(overlay.ARMS)
# The arms measured: (variant, tiled's horizon or overlay's delta), 0 for persistent.
ARMS = (("persistent", 0), *(("tiled", h) for h in HORIZONS),
        *(("overlay", d) for d in OVERLAY_BLOCKS))
MEASURE_REPEATS = 2  # timed searches per arm (after one untimed one); the best counts


@dataclass(frozen=True)
class Choice:
    """auto's deep variant for one workspace, and the measurement that chose it."""

    variant: str  # one of CANDIDATES
    seconds: float  # wall time of the measuring search: tiled copy, untimed and timed runs
    searches: int  # the workspace's deep search (1-based) that measured
    spent_s: float = 0.0  # GPU time of auto's persistent searches before it
    expected_s: float = 0.0  # the expected cost of measuring that they had to reach
    horizon: int = 0  # tiled's horizon (persistent chosen: tiled's fastest), or overlay's delta
    ms_by_arm: dict[tuple[str, int], float] = field(default_factory=dict)  # every arm's best

    @property
    def persistent_ms(self) -> float:
        """The best timed search of persistent (nan: not timed)."""
        return self.ms_by_arm.get(("persistent", 0), float("nan"))

    @property
    def tiled_ms(self) -> float:
        """The best timed search of tiled at ``horizon`` (nan: not timed, or overlay
        chosen)."""
        return self.ms_by_arm.get(("tiled", self.horizon), float("nan"))


_choices: weakref.WeakKeyDictionary[Workspace, Choice] = weakref.WeakKeyDictionary()


@dataclass
class _Ledger:
    """auto's persistent searches of one workspace before its choice: the GPU seconds of
    those finished and read, and the (start, end) events of those not read yet."""

    spent_s: float = 0.0
    pending: list[tuple[Any, Any]] = field(default_factory=list)


_ledgers: weakref.WeakKeyDictionary[Workspace, _Ledger] = weakref.WeakKeyDictionary()


def preparation(ws: Workspace) -> Choice | None:
    """The workspace's remembered choice (None: not measured yet)."""
    return _choices.get(ws)


def decide(times_ms: dict[tuple[str, int], list[float]]) -> tuple[str, int]:
    """The arm (variant, horizon) with the smallest best time; on a tie persistent (no copy
    kept), then the smaller horizon."""
    return min(times_ms, key=lambda arm: (min(times_ms[arm]), arm[0] != "persistent", arm[1]))


def _timed(ws: Workspace, call: Callable[[], tuple[Any, Any]]) -> tuple[float, tuple[Any, Any]]:
    """(ms of one call on the current stream, its result), by CUDA events."""
    return timed_ms(ws.cp, call)


def note_shape(ws: Workspace, reached_edges: int, top: int) -> None:
    """Sets ``ws.shallow`` from one search's figures: the out-edges of its reached vertices
    and its largest label (the module's docstring says why; a level's width in vertices is
    taken as its edges over the graph's mean degree)."""
    levels = top + 1
    mean_degree = ws.n_edges / max(ws.g.n_vertices, 1)
    ws.shallow = bool(levels < variants.ALPHA
                      and reached_edges > ENTER_LOCAL * mean_degree * levels)


def _search_figures(ws: Workspace, labels: Any) -> tuple[Any, int, int]:
    """(the search's figures as a device array, as search() returns them; the reached
    out-edges; the largest label), in one launch of our figures kernel and one read (CuPy
    reductions here cost a new process's first call ~65 ms of their compiles and loads:
    H200, road NY)."""
    from . import figures_on_device  # noqa: PLC0415  (this package's __init__)

    figures = figures_on_device(ws.g, labels)
    edges, top, _ = (int(x) for x in figures.get())
    return figures, edges, top


def run_auto(ws: Workspace, source: int,
             want_parents: bool) -> tuple[tuple[Any, ...], str]:
    """auto's deep search on ``ws``: ((labels, parents or None[, figures]), the variant that
    ran). The graph's first one also returns its figures, read for :func:`note_shape`."""
    if ws.shallow is None and ws.g.n_vertices > 0:
        labels, parents = _run_counted(ws, source, want_parents)
        figures, edges, top = _search_figures(ws, labels)
        note_shape(ws, edges, top)
        return (labels, parents, figures), "persistent"
    choice = _choices.get(ws)
    if choice is not None:
        if choice.variant == "tiled":
            return tiled.run_tiled(ws, source, want_parents, horizon=choice.horizon), "tiled"
        if choice.variant == "overlay":
            return _run_overlay(ws, source, want_parents, choice.horizon), "overlay"
        return run_persistent(ws, source, want_parents), "persistent"
    if ws.g.n_vertices > 0 and due(ws):
        return measure(ws, source, want_parents)
    return _run_counted(ws, source, want_parents), "persistent"


def _run_overlay(ws: Workspace, source: int, want_parents: bool, delta: int) -> tuple[Any, Any]:
    return overlay.run_overlay(ws, source, want_parents, delta=delta,
                               block=OVERLAY_BLOCKS[delta])


def choose_now(ws: Workspace, source: int, want_parents: bool) -> Choice:
    """auto's choice for ``ws``, measured now from ``source`` if not made yet."""
    if ws not in _choices:
        measure(ws, source, want_parents)
    return _choices[ws]


def expected_cost(ws: Workspace) -> float | None:
    """Seconds measuring is expected to cost: the build time of the graph's
    locality-relabelled copy (None until relabel.py has built it)."""
    copy = relabel_module.preparation(ws)
    return None if copy is None else copy.seconds


def due(ws: Workspace) -> bool:
    """Whether auto's persistent searches of ``ws`` have cost the expected measuring cost."""
    expected = expected_cost(ws)
    return expected is not None and spent_seconds(ws) >= expected


def spent_seconds(ws: Workspace) -> float:
    """GPU seconds of auto's persistent searches of ``ws`` so far (those not finished yet
    are counted at a later call: this never waits for the GPU)."""
    ledger = _ledgers.get(ws)
    if ledger is None:
        return 0.0
    waiting = []
    for start, end in ledger.pending:
        seconds = _elapsed_s(ws, start, end)
        if seconds is None:
            waiting.append((start, end))
        else:
            ledger.spent_s += seconds
    ledger.pending = waiting
    return ledger.spent_s


def _event_pair(ws: Workspace) -> tuple[Any, Any]:
    return ws.cp.cuda.Event(), ws.cp.cuda.Event()


def _elapsed_s(ws: Workspace, start: Any, end: Any) -> float | None:
    """Seconds between two recorded events, None while the later has not happened."""
    if not end.done:
        return None
    return float(ws.cp.cuda.get_elapsed_time(start, end)) / 1e3


def _run_counted(ws: Workspace, source: int, want_parents: bool) -> tuple[Any, Any]:
    """A persistent search whose GPU time goes to the workspace's ledger."""
    ledger = _ledgers.get(ws)
    if ledger is None:
        ledger = _ledgers[ws] = _Ledger()
    built = relabel_module.preparation(ws) is not None
    start, end = _event_pair(ws)
    start.record()
    out = run_persistent(ws, source, want_parents)
    end.record()
    if built or relabel_module.preparation(ws) is None:  # not the search that built it
        ledger.pending.append((start, end))
    return out


def measure(ws: Workspace, source: int, want_parents: bool) -> tuple[tuple[Any, Any], str]:
    """Build the tiled copy and the overlay, time every arm from ``source``, remember the
    fastest."""
    cp = ws.cp
    cp.cuda.get_current_stream().synchronize()
    spent = spent_seconds(ws)  # every pending search has finished: all of them
    expected = expected_cost(ws)
    _ledgers.pop(ws, None)
    started = time.perf_counter()
    at = relabel_module.searches(ws) + 1  # the persistent runs below count too
    shift = tiled._shift(ws, None)
    had_copy = tiled.preparation(ws, shift) is not None
    try:
        tiled.tile_copy(ws, shift)  # builds (or reuses) the locality-relabelled copy too
    except MemoryError:  # GPUOutOfMemoryError, CuPy's OutOfMemoryError: no room for it
        if not had_copy:
            tiled.forget(ws, shift)
        relabel_module.keep_if_serving(ws)
        _choices[ws] = Choice("persistent", time.perf_counter() - started, at, spent,
                              expected or 0.0)
        return run_persistent(ws, source, want_parents), "persistent"
    relabel_module.keep_if_serving(ws)  # relabel="auto"'s rule, as relabel.chosen applies it
    # overlay's arms need its own tiled copy (tiles of overlay.SHIFT) and distance tables;
    # where they do not fit, the other arms are measured alone
    arms = ARMS
    copies = {shift: had_copy}  # the tiled copies measured: built before the measurement?
    overlay_arms = [arm for arm in arms if arm[0] == "overlay"]
    if overlay_arms:
        had_overlay_copy = tiled.preparation(ws, overlay.SHIFT) is not None
        copies.setdefault(overlay.SHIFT, had_overlay_copy)
        try:
            _run_overlay(ws, source, want_parents, overlay_arms[0][1])  # builds the overlay
        except MemoryError:
            arms = tuple(arm for arm in arms if arm[0] != "overlay")

    def call(arm: tuple[str, int]) -> tuple[Any, Any]:
        if arm[0] == "persistent":
            return run_persistent(ws, source, want_parents)
        if arm[0] == "overlay":
            return _run_overlay(ws, source, want_parents, arm[1])
        return tiled.run_tiled(ws, source, want_parents, horizon=arm[1])

    for arm in arms:
        call(arm)  # untimed: kernel loads, the copies' workspaces and buffers
    times: dict[tuple[str, int], list[float]] = {arm: [] for arm in arms}
    results: dict[tuple[str, int], tuple[Any, Any]] = {}
    for _ in range(MEASURE_REPEATS):
        for arm in arms:
            ms, results[arm] = _timed(ws, lambda arm=arm: call(arm))
            times[arm].append(ms)
    winner = decide(times)
    kept_arm = winner if winner[0] != "persistent" else \
        min((arm for arm in arms if arm[0] == "tiled"), key=lambda a: (min(times[a]), a[1]))
    # the copies the chosen variant does not run on are dropped (their memory freed),
    # unless an explicit search had built them
    needed = {"tiled": {shift}, "overlay": {overlay.SHIFT}}.get(winner[0], set())
    for size, had in copies.items():
        if size not in needed and not had:
            tiled.forget(ws, size)
    cp.cuda.get_current_stream().synchronize()
    _choices[ws] = Choice(winner[0], time.perf_counter() - started, at, spent,
                          expected or 0.0, kept_arm[1],
                          {arm: min(times[arm]) for arm in arms})
    return results[winner], winner[0]
