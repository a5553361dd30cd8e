"""Fixed grids launched back to back, the frontier's length read by the kernels from
device memory: the load-balanced BFS paper's couplings of redistribution and gathering
(merge-path-separate / -ib / -bi / -hybrid, kernels/merge_path.cu) and the frontier classes
(Enterprise §4.2: thread / warp / block / grid queues by out-degree, kernels/classes.cu).
The host reads the counts every CHECK_EVERY levels to stop (a launch on an empty frontier
does nothing)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import variants
from . import launch, modules
from .level import CHECK_EVERY, queue_levels
from .workspace import Workspace, labels


def run_merge_path_coupled(ws: Workspace, source: int, want_parents: bool, *,
                           coupling: str = "merge-path-hybrid",
                           f0: float = variants.EXPAND_FACTOR_F0,
                           check_every: int = CHECK_EVERY) -> tuple[Any, Any]:
    """One coupling of the load-balanced BFS paper (variants.COUPLINGS): per level the
    frontier's degree scan on the device (two launches), then the separate redistribution
    and gathering kernels, or one fused kernel over item tiles (ib), diagonal tiles (bi) or
    either by the expand factor against ``f0`` (hybrid). Nothing is read back per level;
    the host checks the frontier every ``check_every`` levels."""
    if coupling not in variants.COUPLINGS:
        raise ValueError(f"coupling must be one of {sorted(variants.COUPLINGS)}, "
                         f"got {coupling!r}")
    g = ws.g
    mod = modules.module(modules.MERGE_PATH_FILE, str(g.indices.dtype), str(g.indptr.dtype))
    scan_chunks = mod.get_function("bfs_mp_scan_chunks")
    scan_write = mod.get_function("bfs_mp_scan_write")
    code = variants.COUPLINGS[coupling]
    dist, parent = labels(ws, source, want_parents)
    ws.reset_counts()
    ws.queues[0][0] = source
    ws.counts[0, 0] = 1
    ends = ws.scan()
    block_sums = ws.buffer("block_sums", (ws.blocks,), np.int64)
    if code == 0:
        m = max(g.n_edges, 1)
        positions = ws.buffer("mp_positions", (m,), g.indptr.dtype)
        sources = ws.buffer("mp_sources", (m,), g.indices.dtype)
        redistribute = mod.get_function("bfs_mp_redistribute")
        gather = mod.get_function("bfs_mp_gather")
    else:
        coupled = mod.get_function("bfs_mp_coupled")
    grid, block = (ws.blocks,), (modules.LEVEL_BLOCK,)
    for level, in_q, out_q, here, nxt in queue_levels(ws, check_every):
        scan_chunks(grid, block, (g.indptr, in_q, here, block_sums))
        scan_write(grid, block, (g.indptr, in_q, here, block_sums, ends))
        if code == 0:
            redistribute(grid, block, (g.indptr, in_q, ends, here, positions, sources))
            gather(grid, block, (g.indices, dist, launch.ptr(parent), ends, here, positions,
                                 sources, out_q, nxt, np.int32(level + 1)))
        else:
            coupled(grid, block, (g.indptr, g.indices, dist, launch.ptr(parent), in_q, ends,
                                  here, out_q, nxt, np.int32(level + 1), np.int32(code),
                                  np.float32(f0)))
    return dist, parent


def run_frontier_classes(ws: Workspace, source: int, want_parents: bool, *,
                         bounds: tuple[int, int, int] = variants.CLASS_BOUNDS,
                         check_every: int = CHECK_EVERY) -> tuple[Any, Any]:
    """Frontier classes (classes.cu): four queues per level by out-degree, served by a
    thread / warp / block / the grid in one launch; discovered vertices are classified by
    their discoverer. ``bounds`` = first degree of the warp, block and grid classes
    (variants.check_class_bounds says what the kernel accepts). The runner serves both
    adjacency layouts (layouts.run_classes)."""
    from .. import layouts  # noqa: PLC0415  (it builds on this module)

    return layouts.run_classes(layouts.csr_view(ws), source, want_parents, bounds=bounds,
                               check_every=check_every)
