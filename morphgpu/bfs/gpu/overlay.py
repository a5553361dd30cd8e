"""The ``overlay`` BFS variant: a search over a tile overlay (kernels/overlay.cu), for deep
graphs whose tiles ``tiled`` crosses one dependent level at a time (issue 22).

Why. On a Delaunay graph a ``tiled`` visit crosses a tile in ~25 shared-memory levels of
~0.9 us each, and the wavefront's path through the tiles bounds the search (sessions
30-33): 4.4-4.8 us per BFS level on Delaunay graphs of 1M and 4M random points, against the
issue's 3. The customizable-route-planning overlay (Delling, Goldberg, Pajor, Werneck)
replaces that walk by work prepared once per graph: per tile, the in-tile distance between
every pair of its boundary vertices (D). A search then crosses a tile in one parallel
min-plus step.

Design. The tiles are the tiled copy's (``tiled.tile_copy``, tiles of 2^SHIFT vertices).
Per graph (:func:`build`): the boundary vertices (an edge to or from another tile), per
tile D (uint16, one BFS inside the tile per boundary vertex, ``overlay_rows``), the cut
edges between boundary vertices, the in-tile edges with 16-bit local ids. Per search one
cooperative launch (``bfs_overlay``): a BFS in the source's tile, label-correcting rounds
over the tiles whose boundary labels fell (min-plus through D, then the cut edges), every
reached tile's labels by one multi-source BFS inside it, parents from label_output.cuh;
then relabel.back maps the results to the caller's ids. Exactness: kernels/overlay.cu's
header.

Arms. Two settings of the rounds, timed at a graph's first overlay search (one untimed and
one timed search each; the faster kept for the graph): (delta 0, 256 threads) and
(delta 8, 512 threads). delta > 0 is delta-stepping over the rounds (round r applies labels
below r * delta only). H200, session 38 run 13, one process, ms per search (distances, 8
roots) for bfs() tiled / (0, 256) / (8, 512): Delaunay 1M 1.871 / 1.765 / **1.170** (2.92
us per level), Delaunay 4M 3.742 / 6.618 / **3.136**, grid-del 1000^2 2.589 / **1.060** /
1.882, grid 4000^2 7.549 / **6.245** / 9.501: Delaunay graphs want delta-stepping and wide
blocks (a large tile's min-plus), grids neither, and no statistic known before a search
separates them without a cut-off fitted to these graphs, so the graph's own searches
decide. Tile size: 1024 beat 256, 512, 2048 and 4096 on every graph measured (D's min-plus
grows with the boundary, ~sqrt(T); rounds with the tiles crossed). Measured and not kept:
visits without rounds (a ring of active tiles, as tiled.cu: slower on every graph, one
contended head and FIFO order), one block per SM.

The package's search (one launch: the rounds, every tile's labels and parents on the
device, then relabel.back), H200, session 38 run 14, bfs() calls, 6 roots, against tiled
in the same process: Delaunay 1M 1.353 against 1.900 ms (1.40x; 3.38 us per level), with
parents 1.698 / 2.104; grid-del 1000^2 1.032 against 2.494 (2.42x), with parents 1.160 /
2.730. ``auto`` times it beside persistent and tiled (deep_choice.py).

Session 39: the tiles' borders halved by reorder.cell_layout's Lloyd-relaxed cells (the
work of a visit grows with the square of its tile's border, and a round waits for its
slowest visit). H200, run 6, bfs() calls, 6 roots, ms per search (distances) against
tiled in the same process (tiled on the same cells): Delaunay 1M 0.831 (1.99x; 2.07 us
per level), Delaunay 4M 1.959 (1.73x; 2.52), road NY / BAY / COL 0.383 / 0.424 / 0.490
(2.57x / 2.67x / 3.20x; 0.77 / 0.70 / 0.45 us per level), grid-del 1000^2 / 3000^2 /
5000^2 0.720 / 3.059 / 8.187 (3.31x / 2.14x / 1.79x; 0.46 / 0.78 / 1.05), grid 4000^2
4.403 (1.63x). First overlay search of a graph (tiled copy, D, both arms timed): 0.07-0.30
s on 0.3-4M vertices, 1.4 s on grid-del 5000^2, 2.9 s on grid 4000^2 (its locality copy).

Cost. Memory: D holds about 19 entries per vertex on Delaunay graphs (~40 bytes), 6-11 on
grids, besides the tiled copy; checked before it is allocated. Preparation (the tiled copy
at this tile size, then D): 0.07-2.8 s for the copy, 3-121 ms for D (H200, 0.3-25M
vertices).
"""

from __future__ import annotations

import functools
import time
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import backend, barrier, kernels
from . import relabel as relabel_module
from . import tiled
from .launch import NULL, timed_ms
from .modules import current_device
from .workspace import Workspace, workspace, workspaces

OVERLAY_FILE = "bfs/kernels/overlay.cu"
SHIFT = 10  # tiles of 1024 vertices (the module's docstring says why)
ARMS = ((0, 256), (8, 512))  # (delta, threads per block), timed per graph
_CONSTANTS = kernels.source_constants(OVERLAY_FILE)
D_CHUNK = _CONSTANTS["D_CHUNK"]
C_ERROR, C_ROUNDS, C_VISITS, C_SOURCES = (_CONSTANTS[k] for k in
                                          ("C_ERROR", "C_ROUNDS", "C_VISITS", "C_SOURCES"))
CTRL_WORDS = 8
EDGE_CAP_LIMIT = 24576  # in-tile column ids a block keeps in shared memory (48 KB)


@dataclass
class Overlay:
    """One tiled copy's overlay: boundary, D, cut edges, in-tile edges, search buffers."""

    shift: int
    n_tiles: int
    n_boundary: int
    max_boundary: int
    edge_cap: int
    arrays: dict[str, Any]
    seconds: float  # build time of the overlay (the tiled copy's not included)
    d_entries: int
    arm: tuple[int, int] | None = None  # the arm chosen for this graph
    ms_by_arm: dict[tuple[int, int], float] = field(default_factory=dict)


_overlays: weakref.WeakKeyDictionary[Workspace, dict[int, Overlay]] = \
    weakref.WeakKeyDictionary()


def tile_bytes(shift: int, edge_cap: int) -> int:
    """Dynamic shared memory of a tile BFS: labels, offsets, column ids (16-byte units)."""
    t = 1 << shift
    return -(-(4 * t + 4 * (t + 1) + 2 * edge_cap) // 16) * 16


def shared_bytes(shift: int, edge_cap: int, max_boundary: int) -> int:
    """The search's dynamic shared memory: the rounds' D chunk and sources or a tile BFS."""
    return max(tile_bytes(shift, edge_cap), 2 * D_CHUNK + 8 * max(max_boundary, 1))


def build(ws: Workspace, shift: int) -> Overlay:
    """The overlay of ``ws``'s graph (a tiled copy) for tiles of 2^shift vertices, built
    on first use."""
    per_shift = _overlays.setdefault(ws, {})
    found = per_shift.get(shift)
    if found is not None:
        return found
    cp = ws.cp
    g = ws.g
    cp.cuda.get_current_stream().synchronize()
    started = time.perf_counter()
    t = 1 << shift
    n = g.n_vertices
    n_tiles = max(1, -(-n // t))
    if n_tiles * t >= 2**31:
        raise ValueError(f"overlay: {n} vertices in tiles of {t} pass 2^31 ids; use "
                         "variant='tiled'")
    vid = g.indices.dtype
    eid = g.indptr.dtype
    src = g.edge_sources()
    dst = g.indices
    cut = (src >> shift) != (dst >> shift)
    cut_src, cut_dst_v = src[cut], dst[cut]
    boundary = cp.zeros(n, dtype=cp.bool_)
    boundary[cut_src] = True
    boundary[cut_dst_v] = True
    bverts = cp.flatnonzero(boundary).astype(vid)
    n_ov = int(bverts.size)
    ov_id = cp.full(n, -1, dtype=cp.int32)
    ov_id[bverts] = cp.arange(n_ov, dtype=cp.int32)
    bstart = cp.searchsorted(bverts, cp.arange(n_tiles + 1, dtype=cp.int64) * t)
    bstart = bstart.astype(cp.int32)
    nb = cp.diff(bstart).astype(cp.int64)
    stride = (nb + 7) // 8 * 8  # D rows of whole 16-byte units
    dofs = cp.concatenate([cp.zeros(1, dtype=cp.int64), cp.cumsum(nb * stride)])
    d_entries = int(dofs[-1])
    backend.require_gpu_bytes(2 * d_entries + 16 * n_ov + 32 * int(cut_src.size),
                              "bfs overlay distance tables")
    d_table = cp.empty(max(d_entries, 8), dtype=cp.uint16)
    cut_from = ov_id[cut_src]
    order = cp.argsort(cut_from)
    cut_dst = ov_id[cut_dst_v][order]
    cut_ptr = cp.searchsorted(cut_from[order], cp.arange(n_ov + 1, dtype=cp.int32))
    cut_tile = (bverts[cut_dst] >> shift).astype(cp.int32)
    inside = ~cut
    lptr = cp.searchsorted(src[inside], cp.arange(n + 1, dtype=cp.int64)).astype(eid)
    lptr = cp.concatenate([lptr, cp.full(n_tiles * t - n, lptr[-1], dtype=eid)])
    lidx = (dst[inside] & (t - 1)).astype(cp.uint16)
    tile_edges = lptr[t::t] - lptr[:-1:t]
    edge_cap = int(min(EDGE_CAP_LIMIT, max(1, int(tile_edges.max()))))
    max_boundary = max(1, int(nb.max()))
    arrays = {"lptr": lptr, "lidx": lidx, "bverts": bverts, "bstart": bstart, "dofs": dofs,
              "D": d_table, "cut_ptr": cut_ptr.astype(cp.int64),
              "cut_dst": cut_dst.astype(cp.int32), "cut_tile": cut_tile,
              "L": cp.empty(max(n_ov, 1), dtype=cp.int32),
              "applied": cp.empty(max(n_ov, 1), dtype=cp.int32),
              "sent": cp.empty(max(n_ov, 1), dtype=cp.int32),
              "mark": cp.empty(n_tiles, dtype=cp.int32),
              "lists": cp.empty(2 * n_tiles, dtype=cp.int32),
              "counts": cp.empty(3, dtype=cp.int32),
              "ctrl": cp.zeros(CTRL_WORDS, dtype=cp.uint64)}
    if n_ov:
        rows = _rows_kernel(str(vid), str(eid), shift)
        smem = tile_bytes(shift, edge_cap)
        if smem > int(getattr(rows, "max_dynamic_shared_size_bytes", 0) or 0):
            rows.max_dynamic_shared_size_bytes = smem
        rows((n_ov,), (ARMS[0][1],),
             (lptr, lidx, bverts, bstart, dofs, d_table, np.int32(edge_cap)),
             shared_mem=smem)
    cp.cuda.get_current_stream().synchronize()
    found = Overlay(shift, n_tiles, n_ov, max_boundary, edge_cap, arrays,
                    time.perf_counter() - started, d_entries)
    per_shift[shift] = found
    return found


def _defines(vid: str, eid: str, shift: int, block: int) -> dict[str, Any]:
    return {**kernels.index_defines(np.dtype(vid), np.dtype(eid)), "MG_OVERLAY_SHIFT": shift,
            "MG_OVERLAY_BLOCK": block}


@functools.lru_cache(maxsize=16)
def _rows_kernel_on(device_id: int, vid: str, eid: str, shift: int) -> Any:
    del device_id  # a cache key: the kernel is loaded on the current device
    return kernels.get_kernel(OVERLAY_FILE, "overlay_rows",
                              defines=_defines(vid, eid, shift, ARMS[0][1]))


def _rows_kernel(vid: str, eid: str, shift: int) -> Any:
    return _rows_kernel_on(current_device(), vid, eid, shift)


@functools.lru_cache(maxsize=32)
def _grid_on(device_id: int, vid: str, eid: str, shift: int, block: int,
             shared: int) -> barrier.PersistentGrid:
    del device_id
    return barrier.persistent_kernel(OVERLAY_FILE, "bfs_overlay", mode="cooperative",
                                     block=block, defines=_defines(vid, eid, shift, block),
                                     shared_mem=shared)


def _search(ws: Workspace, ov: Overlay, source: int, want_parents: bool, delta: int,
            block: int) -> tuple[Any, Any]:
    """One launch on ``ws`` (the tiled copy's workspace): (labels, parents or None) in its
    ids."""
    cp = ws.cp
    g = ws.g
    n = g.n_vertices
    a = ov.arrays
    grid = _grid_on(current_device(), str(g.indices.dtype), str(g.indptr.dtype), ov.shift,
                    block, shared_bytes(ov.shift, ov.edge_cap, ov.max_boundary))
    rev = ws.reverse() if want_parents else g
    dist = cp.empty(n, dtype=cp.int32)
    parent = cp.empty(n, dtype=g.indices.dtype) if want_parents else None
    grid.kernel((grid.grid,), (grid.block,),
                (a["lptr"], a["lidx"], a["bverts"], a["bstart"], a["dofs"], a["D"],
                 a["cut_ptr"], a["cut_dst"], a["cut_tile"], rev.indptr, rev.indices, a["L"],
                 a["applied"], a["sent"], a["mark"], a["lists"], a["counts"], dist,
                 NULL if parent is None else parent, a["ctrl"], np.int64(n),
                 np.int32(ov.n_tiles), np.int32(ov.n_boundary), np.int32(ov.max_boundary),
                 np.int32(ov.edge_cap), g.indices.dtype.type(source), np.int32(delta),
                 grid.state),
                shared_mem=grid.shared_mem)
    grid.check()
    if want_parents and int(a["ctrl"][C_ERROR].get()):
        raise RuntimeError("overlay BFS: a reached vertex has no in-neighbour one level up "
                           "(kernels/overlay.cu; a bug, please report)")
    return dist, parent


def _choose_arm(ws: Workspace, ov: Overlay, source: int, want_parents: bool) -> tuple[Any, Any]:
    """Each arm once untimed and once timed (CUDA events) from ``source``; the faster is
    kept for the graph. Returns the last search's results."""
    out = None
    for arm in ARMS:
        _search(ws, ov, source, want_parents, *arm)
        ov.ms_by_arm[arm], out = timed_ms(
            ws.cp, lambda arm=arm: _search(ws, ov, source, want_parents, *arm))
    ov.arm = min(ARMS, key=lambda arm: ov.ms_by_arm[arm])
    return out


def run_overlay(ws: Workspace, source: int, want_parents: bool, *,
                tile_shift: int | None = None, delta: int | None = None,
                block: int | None = None) -> tuple[Any, Any]:
    """The overlay search on ``ws``'s graph: (int32 distances with -1 unreached, parents or
    None), in the caller's ids.

    ``tile_shift``: log2 of the vertices per tile (tiled.TILE_MIN_SHIFT..SHIFT; default
    SHIFT). ``delta`` and ``block`` (one of ARMS' block sizes) fix the rounds' arm; by
    default the graph's first search times ARMS and later ones run the faster. The options
    exist for tests and measurements."""
    shift = SHIFT if tile_shift is None else int(tile_shift)
    if not tiled.TILE_MIN_SHIFT <= shift <= SHIFT:
        raise ValueError(f"tile_shift must be in [{tiled.TILE_MIN_SHIFT}, {SHIFT}], "
                         f"got {tile_shift}")
    if delta is not None and int(delta) < 0:
        raise ValueError(f"delta must be >= 0, got {delta}")
    if block is not None and int(block) not in {b for _, b in ARMS}:
        raise ValueError(f"block must be one of {sorted({b for _, b in ARMS})}, got {block}")
    cp = ws.cp
    if ws.g.n_vertices == 0:
        return (cp.empty(0, dtype=cp.int32),
                cp.empty(0, dtype=ws.g.indices.dtype) if want_parents else None)
    copy = tiled.tile_copy(ws, shift)
    inner = workspace(copy.graph)
    ov = build(inner, shift)
    inner_source = int(copy.inverse_host[source])
    if delta is not None or block is not None:
        arm = (ARMS[0][0] if delta is None else int(delta),
               ARMS[0][1] if block is None else int(block))
        dist, parent = _search(inner, ov, inner_source, want_parents, *arm)
    elif ov.arm is None:
        dist, parent = _choose_arm(inner, ov, inner_source, want_parents)
    else:
        dist, parent = _search(inner, ov, inner_source, want_parents, *ov.arm)
    return relabel_module.back(ws, copy, dist, parent)


def last_stats(ws: Workspace, shift: int = SHIFT) -> dict[str, int]:
    """Counts of the last overlay search on ``ws``'s graph with tiles of 2^shift vertices
    (its tiled copy's): rounds, tile visits, sources applied; the overlay's size. One
    read."""
    copy = tiled.preparation(ws, shift)
    inner = None if copy is None or copy.graph is None else workspaces.get(copy.graph)
    ov = None if inner is None else _overlays.get(inner, {}).get(shift)
    if ov is None:
        return {}
    words = ov.arrays["ctrl"].get()
    return {"rounds": int(words[C_ROUNDS]), "visits": int(words[C_VISITS]),
            "sources": int(words[C_SOURCES]), "boundary": ov.n_boundary,
            "d_entries": ov.d_entries, "tiles": ov.n_tiles}
