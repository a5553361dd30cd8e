"""The ``tiled`` BFS variant: a tile-local, label-correcting search in one persistent launch
of kernels/tiled.cu, for deep graphs (issue 22).

Why. On a road network, a grid or a Delaunay graph a level holds little work, so a level
of ``persistent`` costs its grid barrier plus the dependent global-memory round trips of
one hop (2-8 us); ``async`` has no barrier but still pays about 1 us of global round trips
per hop. Here a hop inside a tile costs shared-memory operations only.

Design. The search runs on a copy of the graph whose tile ranges [t T, (t + 1) T) are
compact, connected regions, so most edges stay inside a tile (:func:`tile_copy`): the
locality-relabelled copy (gpu/relabel.py: Z-order of distances to two landmarks) regrouped
by reorder.cell_layout into compact BFS cells of about 3T / 4 vertices (Lloyd-relaxed),
packed whole into tiles (ids past a tile's last cell unused). Contiguous ranges of
the Z-order itself make poor tiles: on a Delaunay graph of 200k random points a range of
4096 held 2-46 disconnected pieces, and a CPU emulation of the first kernel (one tile
interleaving, loads from the round's start) needed 618 tile visits for 49 tiles and a
critical path of 1739 local levels for 189 BFS levels; with the cells 378 visits and 640
local levels (grids: about equal, 1.7-2.0x the BFS levels). Active tiles wait in a ring
(kernels/tiled.cu); a block takes the next one as soon as its last visit ends, and for a
tile (kernels/tile_visit.cuh): loads its labels, row offsets and column ids into shared
memory (16-bit local ids), seeds a frontier with the vertices whose label fell below the
label their edges were last relaxed with, runs BFS levels in shared memory until a level
lowers nothing (label-correcting: seeds may carry different distances) or up to its lowest
seed's label + the horizon, writes lowered labels back with atomicMin and relaxes the edges
that leave the tile with atomicMin on the remote labels; a remote vertex it lowers
activates its tile at once. A tile lowered from outside while it ran, or one to be visited
again while no tile waits, stays with its block, which visits it again with its topology
still in shared memory. The search ends on the device when no tile is active. The
kernels' headers give the proof that the labels are exact.

T (``tile_shift``) is set by the hardware and the graph's mean degree: a block gets the
shared memory that lets BLOCKS_PER_SM blocks share an SM (``shared_budget``), and T is the
largest power of two up to 2^TILE_MAX_SHIFT whose mean edge count fills at most FILL of
the edge capacity left after the per-vertex arrays. Rows that still do not fit (a tile
whose edges pass the capacity: hubs, dense tiles) are "global rows": the local levels
lower their labels but do not relax them; the write-back relaxes their whole row from
global memory (in-tile neighbours too, which then come back in a later visit). Slower,
exact.

History. Sessions 14-31 ran the visits in rounds separated by the grid barrier (each
round's tiles listed by the one before, a round horizon of k * 16 levels). Measured then
(H100, 4 roots, session 14): load 3.5-8.5 us per tile, a local level 0.75-1.2 us,
write-back 3-6 us per tile, a round 35-88 us; grid 4000^2 13.8 ms (1.85x persistent),
road COL 0.93x, Delaunay 1M / 4M 1.16 / 1.13x. A round lasted as long as its slowest visit:
on Delaunay 1M about 60 visits shared 264 blocks and 80 % of the grid's warp samples
waited in the barrier (ncu, session 30). Session 31 added the ring schedule beside the
rounds (H200, 8 roots, against the rounds: grid 4000^2 1.31x, roads 1.16-1.24x, Delaunay
1M 1.11x, 4M 1.00x; but a 5000^2 grid with deleted edges 0.60x, 211k visits against 38k:
tiles pushed behind every queued tile let visits of other tiles run ahead on labels still
to be corrected). Session 32 kept such tiles with their block (tiled.cu's header): H200,
16 roots, against the ring without it: that grid 1.83x (181k visits -> 112k), a 12000 x 800
strip 1.28x, Delaunay 1M-8M 1.05-1.39x, grid 4000^2 1.10x, roads 1.00-1.03x. The rounds were
then slower on all ten graphs of that run and on the eleven of auto's measurement in the
next (none chose them): deleted. What would make it lose: tiles whose edges leave them
(ids without locality: ``remote_lowered`` of :func:`last_stats` close to the reached
vertices), visits far above the levels over sqrt(T) (``tiles``, ``again``), frontiers wide
enough that a level-synchronous kernel's barrier is amortised anyway.

Directed graphs: the visits relax out-edges, so distances are exact on any graph; parents
are in-neighbours one level up, from the reverse graph the workspace keeps for directed
inputs. Host cost per search: the launch and, when parents are asked for, one read of the
kernel's error word (a reached vertex without an in-neighbour one level up: a bug). The
copy is a per-graph preparation (per tile size), built at the graph's first ``tiled``
search (its seconds, the locality-relabelled copy's included, in :func:`preparation`).
"""

from __future__ import annotations

import functools
import time
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import backend, barrier, kernels, reorder
from ...csr import CSRGraph
from . import relabel as relabel_module
from .launch import NULL
from .modules import current_device
from .persistent import run_persistent
from .workspace import workspace

if TYPE_CHECKING:
    from .workspace import Workspace

TILED_FILE = "bfs/kernels/tiled.cu"
BLOCK = 512  # MG_TILED_BLOCK
BLOCKS_PER_SM = 2  # shared-memory budget: this many blocks share an SM (also the launch bound)
TILE_MAX_SHIFT = 12  # at most 4096 vertices per tile
TILE_MIN_SHIFT = 6  # at least 64 (whole bitmap words per warp of the load loop)
TILE_LIMIT_SHIFT = 15  # local ids are 16-bit with 0xffff reserved
FILL = 0.75  # a tile's mean edge count may fill this share of its capacity
CELL_SHARE = 0.75  # reorder.cell_layout's cells: about this share of a tile (at most a tile)
# A visit expands labels below its lowest seed's + HORIZON only (0: no horizon) and comes
# back for the rest. An explicit ``tiled`` search runs at HORIZON; ``auto`` measures it at
# each of deep_choice.HORIZONS and runs the fastest (the best depends on the shape:
# deep_choice's docstring has the figures). H200, session 31, 8 roots, ms per search at 24 /
# 48 / 64 (before tiles were kept): Delaunay 1M 2.059 / 2.105 / 2.142, Delaunay 4M 4.668 /
# 4.334 / 4.491, grid 4000^2 9.592 / 8.477 / 8.499, grid-del 3000^2 9.940 / 9.722 / 9.314,
# road COL 1.814 / 1.687 / 1.720, road NY 1.256 / 1.192 / 1.356.
HORIZON = 48
# Edges per lane and pass of the local levels (tiled.cu's MG_TILED_EB): 1 on graphs of mean
# degree up to SPARSE_MEAN_DEGREE (grids, roads: a lane group covers a row in one pass of
# one edge per lane), 2 above (Delaunay graphs: rows of 6 and more under groups of 4 lanes).
# H100, 4 roots, EB 1 against 2: grid 4000^2 14.3 / 15.8 ms, road COL 2.62 / 2.83, Delaunay
# 1M 2.90 / 2.76, Delaunay 4M 6.28 / 5.97 (local levels 0.88 / 1.01, 0.76 / 0.86, 1.22 /
# 1.20, 1.25 / 1.23 us).
SPARSE_MEAN_DEGREE = 4.5
MAX_EDGE_CAP = 65535  # row offsets are 16-bit
CTRL_WORDS = 64
C_ERROR, C_STATS = 33, 48  # tile_visit.cuh's ctrl words
# tile_visit.cuh's Stat: "again" counts the visits after which their tile had to be visited
# again, "wait_cycles" every block's wait for a tile.
STAT_NAMES = ("again", "tiles", "levels", "remote_lowered", "global_rows", "load_cycles",
              "level_cycles", "write_cycles", "wait_cycles", "loop_cycles")
# Reserved per block by the hardware besides its dynamic shared memory (Hopper: 1 KB) and
# the kernel's static shared variables.
BLOCK_RESERVED_SHARED = 1024 + 256


def fixed_shared_bytes(shift: int) -> int:
    """Shared memory of a tile's per-vertex arrays: labels (4 B), four bitmaps (three
    frontiers and the touched set), the write-back's list of T edges (4 B; the same bytes
    hold the local levels' two queues of T 16-bit ids), row offsets (2 B, T + 1 rounded to
    even). tiled.cu's carve() lays them out."""
    t = 1 << shift
    return 4 * t + 4 * 4 * (t // 32) + 4 * t + 2 * ((t + 2) & ~1)


def shared_bytes(shift: int, edge_cap: int) -> int:
    """Dynamic shared memory of a launch: the per-vertex arrays and edge_cap 16-bit ids."""
    return -(-(fixed_shared_bytes(shift) + 2 * edge_cap) // 16) * 16


def shared_budget() -> int:
    """Dynamic shared memory per block that lets BLOCKS_PER_SM blocks share an SM (from the
    device's opt-in limit per block, which on Hopper is the SM's total less 1 KB)."""
    optin = backend.gpu_properties().get("shared_per_block_optin", 0) or 48 * 1024
    return (optin + 1024) // BLOCKS_PER_SM - BLOCK_RESERVED_SHARED


def edge_capacity(shift: int, budget: int) -> int:
    """Column ids a tile of 2^shift vertices holds within ``budget`` bytes."""
    return max(0, min(MAX_EDGE_CAP, (budget - fixed_shared_bytes(shift)) // 2))


def choose_shift(mean_degree: float, budget: int) -> int:
    """The largest tile (power of two, TILE_MIN_SHIFT..TILE_MAX_SHIFT) whose mean edge
    count fills at most FILL of its edge capacity (TILE_MIN_SHIFT if none does)."""
    for shift in range(TILE_MAX_SHIFT, TILE_MIN_SHIFT - 1, -1):
        if (1 << shift) * mean_degree <= FILL * edge_capacity(shift, budget):
            return shift
    return TILE_MIN_SHIFT


@dataclass
class TiledState:
    """The tiled search's buffers of one workspace and tile size (each launch sets what it
    uses)."""

    stamp: Any = None  # uint32 per vertex: the label its edges were last relaxed with
    mark: Any = None  # uint32 per tile: the tile's state
    lists: Any = None  # int64, 2 n_tiles: the ring's items and sequence words
    ctrl: Any = None  # uint64[CTRL_WORDS]
    shift: int = -1


# Per workspace: a state per tile size, and the state of the last search.
_states: weakref.WeakKeyDictionary[Any, dict[int, TiledState]] = weakref.WeakKeyDictionary()
_last: weakref.WeakKeyDictionary[Any, TiledState] = weakref.WeakKeyDictionary()


def state(ws: Workspace, shift: int) -> TiledState:
    """The buffers of ``ws``'s searches with tiles of 2^shift vertices, made on first use."""
    per_size = _states.setdefault(ws, {})
    st = per_size.get(shift)
    if st is None:
        cp = ws.cp
        n = ws.g.n_vertices
        n_tiles = -(-n // (1 << shift))
        backend.require_gpu_bytes(4 * n + 20 * n_tiles + 8 * CTRL_WORDS, "bfs tiled state")
        st = TiledState(stamp=cp.empty(n, dtype=cp.uint32),
                        mark=cp.empty(n_tiles, dtype=cp.uint32),
                        lists=cp.empty(2 * n_tiles, dtype=cp.int64),
                        ctrl=cp.zeros(CTRL_WORDS, dtype=cp.uint64),
                        shift=shift)
        per_size[shift] = st
    return st


def last_stats(ws: Workspace) -> dict[str, int]:
    """Counts of the last tiled search on ``ws``'s graph (the tiled copy's workspace when
    the search ran there; see :func:`searched_workspace`): visits after which their tile
    was visited again, visits, local levels summed over visits, remote labels lowered,
    global rows relaxed; SM cycles summed over visits in their loads, local levels and
    write-backs, every block's cycles waiting for a tile, block 0's in its whole loop; and
    the tile size. One read."""
    st = _last.get(ws)
    if st is None:
        return {}
    words = st.ctrl[C_STATS:C_STATS + len(STAT_NAMES)].get()
    out = {name: int(words[i]) for i, name in enumerate(STAT_NAMES)}
    out["tile_vertices"] = 1 << st.shift
    return out


def searched_workspace(ws: Workspace) -> Workspace:
    """The workspace the last tiled search of ``ws``'s graph ran on (a tiled copy's, or
    ``ws`` itself)."""
    ref = _searched.get(ws)
    inner = ref() if ref is not None else None
    return inner if inner is not None else ws


def edges_per_pass(mean_degree: float) -> int:
    """tiled.cu's MG_TILED_EB for a graph of this mean degree (see SPARSE_MEAN_DEGREE)."""
    return 1 if mean_degree <= SPARSE_MEAN_DEGREE else 2


def _grid(vid: str, eid: str, shared: int, eb: int) -> barrier.PersistentGrid:
    return _grid_on(current_device(), vid, eid, shared, eb)


@functools.lru_cache(maxsize=16)
def _grid_on(device_id: int, vid: str, eid: str, shared: int,
             eb: int) -> barrier.PersistentGrid:
    del device_id  # a cache key: the grid is built on the current device
    defines = {**kernels.index_defines(np.dtype(vid), np.dtype(eid)), "MG_TILED_BLOCK": BLOCK,
               "MG_TILED_EB": eb, "MG_TILED_MIN_BLOCKS": BLOCKS_PER_SM}
    return barrier.persistent_kernel(TILED_FILE, "bfs_tiled", mode="cooperative", block=BLOCK,
                                     defines=defines, shared_mem=shared)


# Per workspace: the workspace its last tiled search ran on (weakly: a strong reference
# to the key itself would keep it alive).
_searched: weakref.WeakKeyDictionary[Any, weakref.ref] = weakref.WeakKeyDictionary()
# Per workspace and tile size: the tiled copy (a relabel.Copy whose graph has padded ids).
_copies: weakref.WeakKeyDictionary[Any, dict[int, relabel_module.Copy]] = \
    weakref.WeakKeyDictionary()


def preparation(ws: Workspace, shift: int) -> relabel_module.Copy | None:
    """The tiled copy of ``ws``'s graph for tiles of 2^shift vertices, as built."""
    return _copies.get(ws, {}).get(shift)


def forget(ws: Workspace, shift: int) -> None:
    """Drop ``ws``'s tiled copy for tiles of 2^shift vertices (its graph, its workspace and
    the search state there go with it); the next tiled search builds it again."""
    per_size = _copies.get(ws)
    if per_size is not None:
        per_size.pop(shift, None)
    _searched.pop(ws, None)


def tile_copy(ws: Workspace, shift: int) -> relabel_module.Copy:
    """The copy a tiled search runs on, built at the first search with this tile size:
    the locality-relabelled copy (relabel.build) regrouped by reorder.cell_layout into
    compact cells of about CELL_SHARE x T vertices packed whole into tiles (ids past a
    tile's last cell unused). Where the padded ids would not fit the graph's id type the
    locality-relabelled copy itself is used."""
    per_size = _copies.setdefault(ws, {})
    copy = per_size.get(shift)
    if copy is not None:
        return copy
    base = relabel_module.build(ws, lambda s: run_persistent(ws, s, False, relabel=False)[0])
    cp = ws.cp
    cp.cuda.get_current_stream().synchronize()
    started = time.perf_counter()
    g = base.graph
    tile = 1 << shift
    new_id, n_pad = reorder.cell_layout(g, max(1, int(tile * CELL_SHARE)), tile)
    vid = g.indices.dtype
    if n_pad - 1 > np.iinfo(vid).max:
        per_size[shift] = base
        return base
    built = CSRGraph.from_edges(new_id[g.edge_sources()], new_id[g.indices],
                                n_vertices=n_pad)
    graph = CSRGraph(built.indptr.astype(g.indptr.dtype, copy=False),
                     built.indices.astype(vid, copy=False), None, n_pad, g.directed)
    perm = cp.zeros(n_pad, dtype=vid)  # padded id -> caller's id (pads: never read)
    perm[new_id] = base.perm
    inverse = new_id[base.inverse].astype(vid)
    cp.cuda.get_current_stream().synchronize()
    copy = relabel_module.Copy(graph, perm, inverse, inverse.get(),
                               base.seconds + time.perf_counter() - started,
                               base.locality_given, base.locality_copy)
    per_size[shift] = copy
    return copy


def run_tiled(ws: Workspace, source: int, want_parents: bool, *, relabel: bool = True,
              tile_shift: int | None = None, edge_cap: int | None = None,
              blocks: int | None = None, horizon: int | None = None) -> tuple[Any, Any]:
    """One launch of tiled.cu: (int32 distances with -1 unreached, parents or None).

    ``relabel``: search the tiled copy (:func:`tile_copy`, built at the graph's first
    tiled search with this tile size; False: tiles of the ids as given, still exact).
    ``tile_shift``: log2 of the vertices per tile (TILE_MIN_SHIFT..TILE_LIMIT_SHIFT;
    default from the shared-memory budget and the mean degree). ``edge_cap``: column ids
    a tile holds (default: what the budget leaves; small values force the global-row
    path). ``blocks``: blocks of the launch (default: the resident grid, at most one per
    tile). ``horizon``: a visit expands only labels below its lowest seed's + horizon (0: no
    horizon; default HORIZON). The options exist for tests and measurements."""
    if horizon is None:
        horizon = HORIZON
    if int(horizon) < 0:
        raise ValueError(f"horizon must be >= 0, got {horizon}")
    if ws.g.n_vertices == 0:
        cp = ws.cp
        return (cp.empty(0, dtype=cp.int32),
                cp.empty(0, dtype=ws.g.indices.dtype) if want_parents else None)
    if not relabel:
        _searched[ws] = weakref.ref(ws)
        return _search(ws, source, want_parents, tile_shift, edge_cap, blocks, horizon)
    shift = _shift(ws, tile_shift)
    copy = tile_copy(ws, shift)
    inner = workspace(copy.graph)
    _searched[ws] = weakref.ref(inner)
    dist, parent = _search(inner, int(copy.inverse_host[source]), want_parents, shift,
                           edge_cap, blocks, horizon)
    return relabel_module.back(ws, copy, dist, parent)


def _shift(ws: Workspace, tile_shift: int | None) -> int:
    """The tile size's log2: ``tile_shift`` checked, or chosen from the mean degree."""
    if tile_shift is None:
        return choose_shift(ws.n_edges / max(ws.g.n_vertices, 1), shared_budget())
    shift = int(tile_shift)
    if not TILE_MIN_SHIFT <= shift <= TILE_LIMIT_SHIFT:
        raise ValueError(f"tile_shift must be in [{TILE_MIN_SHIFT}, {TILE_LIMIT_SHIFT}], "
                         f"got {tile_shift}")
    return shift


def _search(ws: Workspace, source: int, want_parents: bool, tile_shift: int | None,
            edge_cap: int | None, blocks: int | None, horizon: int) -> tuple[Any, Any]:
    g = ws.g
    cp = ws.cp
    n = g.n_vertices
    budget = shared_budget()
    shift = _shift(ws, tile_shift)
    top = edge_capacity(shift, budget)
    cap = top if edge_cap is None else int(edge_cap)
    if not 0 <= cap <= top:
        raise ValueError(f"edge_cap must be in [0, {top}] for tiles of {1 << shift} vertices "
                         f"on this GPU, got {edge_cap}")
    if top == 0 and fixed_shared_bytes(shift) > budget:
        raise ValueError(f"tiles of {1 << shift} vertices do not fit this GPU's shared "
                         f"memory ({budget} bytes per block)")
    grid = _grid(str(g.indices.dtype), str(g.indptr.dtype), shared_bytes(shift, cap),
                 edges_per_pass(ws.n_edges / max(n, 1)))
    st = state(ws, shift)
    _last[ws] = st
    n_tiles = int(st.mark.size)
    rev = ws.reverse() if want_parents else g
    dist = cp.empty(n, dtype=cp.int32)
    parent = cp.empty(n, dtype=g.indices.dtype) if want_parents else None
    if blocks is None:
        blocks = min(grid.grid, n_tiles)
    blocks = max(1, min(int(blocks), grid.grid))
    grid.kernel((blocks,), (grid.block,),
                (g.indptr, g.indices, rev.indptr, rev.indices, dist,
                 NULL if parent is None else parent, st.stamp, st.mark, st.lists, st.ctrl,
                 np.int64(n), g.indices.dtype.type(source), np.int32(shift), np.int32(cap),
                 np.int32(min(int(horizon), 2**31 - 1)), np.int64(n_tiles), grid.state),
                shared_mem=grid.shared_mem)
    grid.check()  # cooperative: the driver refused any grid that could not be resident
    if want_parents and int(st.ctrl[C_ERROR].get()):
        raise RuntimeError("tiled BFS: a reached vertex has no in-neighbour one level up "
                           "(kernels/tiled.cu; a bug, please report)")
    return dist, parent
