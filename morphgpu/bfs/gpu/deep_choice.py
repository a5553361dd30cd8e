"""``auto`` on deep graphs: ``persistent`` or ``tiled``, chosen per graph by timing both.

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

How: build the tiled copy (which builds or reuses the locality-relabelled copy), run one
untimed search of each variant (kernel loads, the copies' workspaces), then
MEASURE_REPEATS timed searches of each, interleaved, from that search's own source (CUDA
events on the current stream), and keep the variant with the smaller best time; both
searches are exact, so the search requested returns the winner's last result. Where the
tiled copy does not fit in GPU memory, persistent is kept untimed. After that the
remembered variant runs with no timing. Where persistent wins, the tiled copy is dropped
(unless an explicit ``tiled`` search had built it before), freeing its memory; the
locality-relabelled copy stays under relabel.py's own rule (an explicit ``persistent``
search uses it).

The decision is kept per workspace, weakly (like relabel.py's copies): a workspace belongs
to one CSRGraph object, and a graph made from a changed matrix (graph_cache) is a new
object with a new workspace, so a changed graph never meets an old decision. The
DynamicGraph path (variants.auto_dynamic) stays on ``persistent``: ``tiled`` needs a CSR.
An explicit ``variant="persistent"`` or ``"tiled"`` never comes here.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from . import relabel as relabel_module
from . import tiled
from .persistent import run_persistent
from .workspace import Workspace

CANDIDATES = ("persistent", "tiled")
MEASURE_REPEATS = 2  # timed searches per variant (after one untimed one); the best counts


@dataclass(frozen=True)
class Choice:
    """auto's deep variant for one workspace, and the measurement that chose it."""

    variant: str  # "persistent" or "tiled"
    persistent_ms: float  # best timed search of each, ms
    tiled_ms: float
    seconds: float  # wall time of the measuring search: tiled copy, untimed and timed runs
    searches: int  # the workspace's deep search (1-based) that measured
    spent_s: float = 0.0  # GPU time of auto's persistent searches before it
    expected_s: float = 0.0  # the expected cost of measuring that they had to reach


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


def decide(times_ms: dict[str, list[float]]) -> str:
    """The variant with the smallest best time (persistent on a tie: no copy kept)."""
    best = {name: min(times_ms[name]) for name in CANDIDATES}
    return "tiled" if best["tiled"] < best["persistent"] else "persistent"


def _timed(ws: Workspace, call: Callable[[], tuple[Any, Any]]) -> tuple[float, tuple[Any, Any]]:
    """(ms of one call on the current stream, its result), by CUDA events."""
    start, end = _event_pair(ws)
    start.record()
    out = call()
    end.record()
    end.synchronize()
    return float(ws.cp.cuda.get_elapsed_time(start, end)), out


def run_auto(ws: Workspace, source: int, want_parents: bool) -> tuple[tuple[Any, Any], str]:
    """auto's deep search on ``ws``: ((labels, parents or None), the variant that ran)."""
    choice = _choices.get(ws)
    if choice is not None:
        if choice.variant == "tiled":
            return tiled.run_tiled(ws, source, want_parents), "tiled"
        return run_persistent(ws, source, want_parents), "persistent"
    if ws.g.n_vertices > 0 and due(ws):
        return measure(ws, source, want_parents)
    return _run_counted(ws, source, want_parents), "persistent"


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
    """Build the tiled copy, time both variants from ``source``, remember the faster."""
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
        nan = float("nan")
        _choices[ws] = Choice("persistent", nan, nan, time.perf_counter() - started, at,
                              spent, expected or 0.0)
        return run_persistent(ws, source, want_parents), "persistent"
    relabel_module.keep_if_serving(ws)  # relabel="auto"'s rule, as relabel.chosen applies it
    calls = {"persistent": lambda: run_persistent(ws, source, want_parents),
             "tiled": lambda: tiled.run_tiled(ws, source, want_parents)}
    for call in calls.values():
        call()  # untimed: kernel loads, the copies' workspaces and buffers
    times: dict[str, list[float]] = {name: [] for name in CANDIDATES}
    results: dict[str, tuple[Any, Any]] = {}
    for _ in range(MEASURE_REPEATS):
        for name in CANDIDATES:
            ms, results[name] = _timed(ws, calls[name])
            times[name].append(ms)
    winner = decide(times)
    if winner == "persistent" and not had_copy:
        tiled.forget(ws, shift)
    cp.cuda.get_current_stream().synchronize()
    _choices[ws] = Choice(winner, min(times["persistent"]), min(times["tiled"]),
                          time.perf_counter() - started, at, spent, expected or 0.0)
    return results[winner], winner
