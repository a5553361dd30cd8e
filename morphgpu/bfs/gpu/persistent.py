"""``persistent``: the whole search in one launch of kernels/persistent.cu.

Levels cross inside the kernel through the cooperative grid.sync(); a frontier whose edges
fit LOCAL_CAP runs inside block 0 alone, without grid barriers, while the other blocks
sleep on a flag (ctrl[IDLE_FLAG] in persistent.cu); wider levels spread the frontier's
warps over every block, and a frontier given back by block 0 lowers the size that enters it
again (hysteresis). On graphs of maximum degree <= ELL_MAX_DEGREE the levels read the ELL
rows, and block 0 claims vertices in a visited bitmap in its shared memory where the
graph's bitmap fits there.

Defaults are the measured best (benchmarks/RESULTS.md): against the options' off states,
H200 2026-11-22/24, same process: the cooperative barrier beat the atomic-free one (roads
4-6 %, grid2d 5000² 11 %); warp-aggregated one-block levels were 4-11 % slower on roads
(deleted); block 0's bitmap 1.07-1.16x on roads.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import kernels
from . import launch, modules
from . import relabel as relabel_module
from .workspace import Workspace, workspace

ENTER_LOCAL = 2048  # frontier length at or under which block 0 takes over
_KERNEL_CONSTANTS = kernels.source_constants(modules.PERSISTENT_FILE)
OPTIONS = _KERNEL_CONSTANTS["OPT_SPREAD"] | _KERNEL_CONSTANTS["OPT_HYSTERESIS"]
# Block 0's visited bitmap: dynamic shared memory, rounded up to BITMAP_BYTES_STEP so graphs
# of similar size share a grid; 160 KB (1.31 M vertices) leaves room for the kernel's static
# 45 KB within Hopper's 227 KB per block.
BITMAP_MAX_VERTICES = 160 * 1024 * 8
BITMAP_BYTES_STEP = 8 * 1024
CTRL_WIDEST_FRONTIER = _KERNEL_CONSTANTS["WIDEST_FRONTIER"]  # the ctrl word it keeps
PARAMS = ("dist", "parent", "queue0", "queue1", "tails", "ctrl", "n", "source",
          "enter_local", "max_degree", "options", "ell")


def bitmap_bytes(n_vertices: int, ell_width: int) -> int:
    """Dynamic shared memory of a launch with block 0's visited bitmap (0: no bitmap: no
    ELL rows, or more than BITMAP_MAX_VERTICES vertices)."""
    if ell_width <= 0 or n_vertices > BITMAP_MAX_VERTICES:
        return 0
    words = max(1, -(-n_vertices // 32))
    return -(-4 * words // BITMAP_BYTES_STEP) * BITMAP_BYTES_STEP


def prepare(grid: Any, adjacency: tuple, *, queues: tuple[Any, Any], tails: Any, ctrl: Any,
            n: int, enter_local: int, max_degree: int, ell: Any) -> launch.Prepared:
    """The launch of one graph, its labels, parents and source left to each call."""
    params = tuple(f"graph{i}" for i in range(len(adjacency))) + PARAMS
    fixed = {f"graph{i}": a for i, a in enumerate(adjacency)}
    fixed.update(queue0=queues[0], queue1=queues[1], tails=tails, ctrl=ctrl, n=np.int64(n),
                 enter_local=np.int32(max(0, min(enter_local, modules.LOCAL_CAP))),
                 max_degree=np.int64(max_degree), options=np.int32(OPTIONS),
                 ell=launch.NULL if ell is None else ell)
    return launch.Prepared(grid, params, fixed)


def _widest_frontier(ws: Workspace) -> int:
    """The widest frontier of the workspace's persistent searches so far, re-read from the
    device at its 2nd, 4th, 8th, ... call (0: not read yet)."""
    ws.persistent_calls += 1
    calls = ws.persistent_calls
    if calls >= 2 and calls & (calls - 1) == 0:
        ws.widest_frontier = int(ws.ctrl[CTRL_WIDEST_FRONTIER].get())
    return ws.widest_frontier


def run_persistent(ws: Workspace, source: int, want_parents: bool, *,
                   enter_local: int = ENTER_LOCAL, blocks: int | None = None,
                   relabel: bool | str = "auto") -> tuple[Any, Any]:
    """One launch of persistent.cu on ``ws``'s graph. ``enter_local``: the frontier length
    at or under which block 0 takes over (0: every level on the grid); ``blocks``: the
    launch's blocks (None: chosen from the graph and the widest frontier seen); both exist
    so tests can drive every kind of level on small graphs. ``relabel``: search the
    locality-relabelled copy (gpu/relabel.py: True, False, or "auto")."""
    copy = relabel_module.chosen(
        ws, relabel, lambda s: _search(ws, s, False, enter_local, blocks)[0])
    if copy is None:
        return _search(ws, source, want_parents, enter_local, blocks)
    inner = workspace(copy.graph)
    dist, parent = _search(inner, int(copy.inverse_host[source]), want_parents,
                           enter_local, blocks)
    return relabel_module.back(ws, copy, dist, parent)


def _search(ws: Workspace, source: int, want_parents: bool, enter_local: int,
            blocks: int | None) -> tuple[Any, Any]:
    g = ws.g
    width = ws.ell_width
    bits = bitmap_bytes(g.n_vertices, width)
    key = ("persistent", enter_local, bits, OPTIONS)  # OPTIONS: a probe may change it
    call = ws._launches.get(key)
    if call is None:
        grid = modules.persistent_grid(
            modules.layout_key(modules.csr_defines(g.indices.dtype, g.indptr.dtype)),
            width, bits)
        call = prepare(grid, (g.indptr, g.indices), queues=ws.queues, tails=ws.tails,
                       ctrl=ws.ctrl, n=g.n_vertices, enter_local=enter_local,
                       max_degree=ws.max_degree, ell=ws.ell() if width else None)
        ws._launches[key] = call
    widest = _widest_frontier(ws)
    if blocks is None:
        blocks = launch.grid_blocks(call.grid, g.n_vertices, widest=widest)
    blocks = max(1, min(blocks, call.grid.grid))
    cp = ws.cp
    dist = cp.empty(g.n_vertices, dtype=cp.int32)
    parent = cp.empty(g.n_vertices, dtype=g.indices.dtype) if want_parents else None
    call(blocks, dist=dist, parent=launch.ptr(parent), source=g.indices.dtype.type(source))
    return dist, parent
