"""Launching the persistent kernels: grid size, the launch itself, and prepared calls whose
argument slots are named after the kernel's parameters."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import barrier, direct_launch

NULL = np.uint64(0)  # a null device pointer (kernels test `if (parent)`)
# Cooperative launches use ceil(n / SMALL_GRID) blocks where that is fewer than the resident
# grid, so a road graph's launch starts, initialises and parks a few dozen blocks, not 264.
# H200, 2026-11-23 (24 roots, same process): with the idle blocks asleep and the prepared
# call, roads NY / BAY / COL 1.034x / 1.036x / 1.057x against none of the three.
SMALL_GRID = 16384
# Once a search has run on a workspace, later launches have ceil(widest frontier seen /
# ADAPTIVE_WIDTH_PER_BLOCK) blocks (at least ADAPTIVE_MIN_BLOCKS): a grid level's barrier
# costs more the more blocks take part, and a mesh's frontiers are far narrower than its
# vertex count. H200, 2026-11-24, grid2d 5000², same process: 16 blocks 1.34x, 32 blocks
# 1.32x, 125 1.03x against the resident grid (264 blocks). With 8, road searches read
# 0.5 % slower (the labels' initialisation spread over fewer threads).
ADAPTIVE_WIDTH_PER_BLOCK = 512
ADAPTIVE_MIN_BLOCKS = 16


def ptr(a: Any) -> Any:
    return NULL if a is None else a


def timed_ms(cp: Any, call: Callable[[], Any]) -> tuple[float, Any]:
    """(ms of one call on the current stream, its result), by CUDA events: the per-graph
    measurements that pick a variant's setting (deep_choice, overlay's arms)."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    out = call()
    end.record()
    end.synchronize()
    return float(cp.cuda.get_elapsed_time(start, end)), out


def grid_blocks(grid: barrier.PersistentGrid, n_vertices: int, small_grid: int = SMALL_GRID,
                widest: int = 0) -> int:
    """Blocks of a cooperative persistent launch: the resident grid, or ceil(n / small_grid)
    of them where that is fewer; with ``widest`` (the widest frontier seen) fewer still."""
    blocks = grid.grid
    if small_grid > 0:
        blocks = max(1, min(blocks, -(-max(n_vertices, 1) // small_grid)))
    if widest > 0:
        wanted = max(ADAPTIVE_MIN_BLOCKS, -(-widest // ADAPTIVE_WIDTH_PER_BLOCK))
        blocks = max(1, min(blocks, wanted))
    return blocks


def launch(grid: barrier.PersistentGrid, *args: Any, blocks: int | None = None) -> None:
    """A cooperative launch of ``grid``'s kernel (grid.sync() keeps no state to zero), then
    the launch check."""
    if grid.mode != "cooperative":
        raise ValueError("the BFS persistent kernels launch cooperatively")
    grid.kernel((blocks or grid.grid,), (grid.block,), (*args, grid.state),
                shared_mem=grid.shared_mem)
    grid.check()


class Prepared:
    """A launch's arguments packed once (morphgpu.direct_launch), its per-call slots filled
    by parameter name: ``Prepared(grid, params, fixed)`` then ``call(blocks, dist=...,
    source=...)``. The pack is built at the first call, when the per-call slots' types are
    known; later calls rewrite those slots only (NULL is a null pointer)."""

    def __init__(self, grid: barrier.PersistentGrid, params: Sequence[str],
                 fixed: dict[str, Any]) -> None:
        if grid.mode != "cooperative":
            raise ValueError("the BFS persistent kernels launch cooperatively")
        self.grid = grid
        self.params = (*params, "barrier_state")
        unknown = set(fixed) - set(params)
        if unknown:
            raise ValueError(f"no kernel parameters named {sorted(unknown)}")
        self.fixed = {name: _pointer_or_value(v) for name, v in fixed.items()}
        self.fixed["barrier_state"] = grid.state
        self.packed: direct_launch.PackedLaunch | None = None

    def __call__(self, blocks: int | None = None, **per_call: Any) -> None:
        values = {name: _pointer_or_value(v) for name, v in per_call.items()}
        grid = self.grid
        self.pack(**values).launch(blocks or grid.grid, grid.block, **values)
        grid.check()

    def pack(self, **per_call: Any) -> direct_launch.PackedLaunch:
        """The packed launch, built now if it is not yet (``per_call``: the per-call slots'
        first values, which type them; NULL or None for a pointer). Cooperative launches
        need no check after them (PersistentGrid.check)."""
        if self.packed is None:
            values = {name: _pointer_or_value(v) for name, v in per_call.items()}
            self.packed = direct_launch.PackedLaunch(
                self.grid.kernel, self.params, {**self.fixed, **values}, cooperative=True,
                shared_mem=self.grid.shared_mem)
        return self.packed

    def on_grid(self, grid: barrier.PersistentGrid) -> Prepared:
        """The same arguments for ``grid``'s kernel (another build of the same file), not
        packed yet."""
        other = copy.copy(self)
        other.grid = grid
        other.fixed = {**self.fixed, "barrier_state": grid.state}
        other.packed = None
        return other


def _pointer_or_value(value: Any) -> Any:
    """None for NULL (a null pointer slot), the value otherwise."""
    return None if value is NULL else value
