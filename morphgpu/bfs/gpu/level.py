"""The host-loop variants over kernels/level.cu: Merrill et al.'s expand-contract,
two-phase, contract-expand and hybrid (option ``cull``: his duplicate culling,
traversal/contract.cuh), and ``merge-path`` (edge-balanced expand after a CuPy scan of the
frontier's degrees). One or two launches per level, back to back; the host reads the
frontier every CHECK_EVERY levels to stop, or every level where the next launch depends on
it (hybrid's switch, merge-path's scan)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import variants
from . import launch, modules
from .workspace import Workspace, labels

CHECK_EVERY = 4  # levels launched between host reads of the frontier (no decision needs them)
CULL: tuple[str, ...] = ()  # Merrill's variants' default culling (variants.CULL_OPTIONS)


def queue_levels(ws: Workspace, check_every: int) -> Iterator[tuple[int, Any, Any, Any, Any]]:
    """The levels of a host loop over the workspace's vertex queues: (level, its queue, the
    next one, its count row, the next row) each, launched back to back; the host reads the
    next frontier's length every ``check_every`` levels and stops on an empty one (a launch
    on an empty frontier does nothing, so the levels past the end cost only launches)."""
    level = 0
    while True:
        for _ in range(max(1, check_every)):
            ws.grow_counts(level)
            yield (level, ws.queues[level & 1], ws.queues[(level + 1) & 1], ws.counts[level],
                   ws.counts[level + 1])
            level += 1
        if int(ws.counts[level, 0]) == 0:
            return


def culling_arguments(ws: Workspace, cull: str | tuple[str, ...]) -> tuple[Any, ...]:
    """The culled kernels' last two arguments (mask, bitmask or launch.NULL), or () for none; a
    bitmask is zeroed for the search."""
    mask = variants.cull_mask(cull)
    if not mask:
        return ()
    bits: Any = launch.NULL
    if mask & variants.CULL_OPTIONS["bitmask"]:
        bits = ws.buffer("visited_bits", ((ws.g.n_vertices + 31) // 32 or 1,), np.uint32)
        bits.fill(0)
    return (np.int32(mask), bits)


def run_expand_contract(ws: Workspace, source: int, want_parents: bool,
                        *, two_phase: bool = False,
                        cull: str | tuple[str, ...] = CULL,
                        check_every: int = CHECK_EVERY) -> tuple[Any, Any]:
    """Merrill's expand-contract (or two-phase): one fused kernel (two) per level, launched
    back to back; the host reads the frontier's size every ``check_every`` levels to stop
    (1: every level, the path measured before). ``cull`` (names from
    variants.CULL_OPTIONS, or "all") puts the best-effort bitmask and warp/history culling
    in front of the claim; the default () is the path measured before they existed."""
    g = ws.g
    mod = modules.level_module(str(g.indices.dtype), str(g.indptr.dtype))
    culling = culling_arguments(ws, cull)
    dist, parent = labels(ws, source, want_parents)
    ws.reset_counts()
    ws.queues[0][0] = source
    ws.counts[0, 0] = 1
    grid, block = (ws.blocks,), (modules.LEVEL_BLOCK,)
    if two_phase:
        edge_dst, edge_src = ws.edge_queues()
        expand = mod.get_function("bfs_two_phase_expand")
        contract = mod.get_function("bfs_two_phase_contract_culled" if culling
                                    else "bfs_two_phase_contract")
    else:
        fused = mod.get_function("bfs_expand_contract_culled" if culling
                                 else "bfs_expand_contract")
    for level, in_q, out_q, here, nxt in queue_levels(ws, check_every):
        if two_phase:
            expand(grid, block, (g.indptr, g.indices, dist, in_q, here, edge_dst,
                                 edge_src, nxt[3:]))
            contract(grid, block, (edge_dst, edge_src, nxt[3:], dist, launch.ptr(parent),
                                   out_q, nxt, np.int32(level + 1), *culling))
        else:
            fused(grid, block, (g.indptr, g.indices, dist, launch.ptr(parent), in_q, here,
                                out_q, nxt, np.int32(level + 1), *culling))
    return dist, parent


HYBRID_SWITCH = 1 << 16  # hybrid: contract-expand below this many queued edges


def run_contract_expand(ws: Workspace, source: int, want_parents: bool, *,
                        hybrid: bool = False, switch: int = HYBRID_SWITCH,
                        cull: str | tuple[str, ...] = CULL,
                        check_every: int = CHECK_EVERY) -> tuple[Any, Any]:
    """Contract-expand on (vertex, discoverer) edge queues; ``hybrid`` runs a large level
    as two-phase instead (contract to a vertex queue, then expand), as Merrill et al.'s
    hybrid does, choosing by the queued edge count, which it reads every level; plain
    contract-expand reads it every ``check_every`` levels to stop. ``cull``: Merrill's
    culling in front of the claim, as for expand-contract."""
    g = ws.g
    cp = ws.cp
    mod = modules.level_module(str(g.indices.dtype), str(g.indptr.dtype))
    culling = culling_arguments(ws, cull)
    suffix = "_culled" if culling else ""
    fused = mod.get_function("bfs_contract_expand" + suffix)
    contract = mod.get_function("bfs_two_phase_contract" + suffix)
    expand = mod.get_function("bfs_two_phase_expand")
    dist = cp.full(g.n_vertices, -1, dtype=cp.int32)
    parent = cp.full(g.n_vertices, -1, dtype=g.indices.dtype) if want_parents else None
    pairs = (ws.edge_queues(0), ws.edge_queues(1))
    pairs[0][0][0] = source  # the source, discovered by itself, is claimed at level 0
    pairs[0][1][0] = source
    ws.reset_counts()
    ws.counts[0, 3] = 1
    grid, block = (ws.blocks,), (modules.LEVEL_BLOCK,)
    every = 1 if hybrid else max(1, check_every)  # the hybrid's switch needs every count
    queued = 1
    level = 0
    while queued:
        ws.grow_counts(level)
        (in_dst, in_src), (out_dst, out_src) = pairs[level & 1], pairs[(level + 1) & 1]
        here, nxt = ws.counts[level], ws.counts[level + 1]
        if hybrid and queued > switch:
            contract(grid, block, (in_dst, in_src, here[3:], dist, launch.ptr(parent), ws.queues[0],
                                   here, np.int32(level), *culling))
            expand(grid, block, (g.indptr, g.indices, dist, ws.queues[0], here, out_dst,
                                 out_src, nxt[3:]))
        else:
            fused(grid, block, (g.indptr, g.indices, dist, launch.ptr(parent), in_dst, in_src,
                                here[3:], out_dst, out_src, nxt[3:], np.int32(level),
                                *culling))
        level += 1
        if level % every == 0:
            queued = int(nxt[3])
    return dist, parent


def run_merge_path(ws: Workspace, source: int, want_parents: bool) -> tuple[Any, Any]:
    """Edge-balanced expand: the frontier's degree scan (CuPy) then one edge per thread."""
    g = ws.g
    cp = ws.cp
    mod = modules.level_module(str(g.indices.dtype), str(g.indptr.dtype))
    kernel = mod.get_function("bfs_merge_path_expand")
    dist, parent = labels(ws, source, want_parents)
    ws.reset_counts()
    ws.queues[0][0] = source
    ws.counts[0, 0] = 1
    scan = ws.scan()
    grid, block = (ws.blocks,), (modules.LEVEL_BLOCK,)
    size, level = 1, 0
    while size:
        ws.grow_counts(level)
        in_q, out_q = ws.queues[level & 1], ws.queues[(level + 1) & 1]
        cp.cumsum(ws.degrees[in_q[:size]], out=scan[:size])
        kernel(grid, block, (g.indptr, g.indices, dist, launch.ptr(parent), in_q, scan,
                             ws.counts[level], out_q, ws.counts[level + 1], np.int32(level + 1)))
        size = int(ws.counts[level + 1, 0])
        level += 1
    return dist, parent
