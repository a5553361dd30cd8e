"""The partitioned level loop for undirected graphs: fixed-size bitmaps between the parts,
decisions on the devices, so the host never waits on a level.

Merrill et al. (§6) exchange queues of discovered vertices; their sizes must reach the
host before each all-to-all, so the host waits on every level (390 us a level on one
H200, 850 on two: benchmarks/RESULTS.md, session 30). Here every message has a size known
before the search, as in Enterprise's multi-GPU status exchange (§4.4):

1. Each part counts its frontier (vertices, their edges, the part's edges), and the parts
   sum those rows and the frontier bitmaps (n bits; each part sets only its own
   vertices' bits, so a sum is an OR): :meth:`Exchange.all_sum`.
2. Each part decides the level's direction from the summed row by Beamer's rule (the
   same inputs on every part, so the same decision: :class:`Direction`'s arithmetic).
   An empty frontier is the end (mode ``DONE``). Top-down: the part expands its own
   frontier, claims the neighbours it owns (parent: the frontier vertex) and sets the
   bits of the others in an n-bit candidate map. Bottom-up: each unvisited vertex of the
   part adopts a neighbour on the summed frontier bitmap.
3. The parts swap slices of their candidate maps, each owner receiving the words that
   cover its vertices (:meth:`Exchange.swap_slices`); an owner labels every unvisited
   candidate. A part sends each remote vertex once a search, keeping the frontier vertex
   it was sent from; the owner notes which part's slice it took a vertex from, and after
   the search the parts swap those kept parents (one more fixed-size swap, vertex
   ranges this time) and each owner looks its vertices' parents up there. (A parent
   looked for in the vertex's own row instead, a neighbour on the frontier, took one
   thread 36 ms on Kronecker 25 where the vertex was a hub: benchmarks/RESULTS.md.)

The host queues levels ahead of the devices (``AHEAD``) and reads back only each level's
mode, AHEAD levels late: every rank queues the same levels (DONE at level k, levels up
to k + AHEAD - 1), whose collectives therefore match, and levels after DONE do nothing on
the devices. The engines: ``NumpyPart`` (the CPU twin) and ``GpuPart`` (three kernels a
level, kernels/partitioned.cu).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# A level's mode, as the engines record it (the GPU kernels use the same numbers).
DONE, TOP_DOWN, BOTTOM_UP = 0, 1, 2
# Levels queued before the host reads a level's mode back: at 1 the host waits on the
# level just queued; at 2 the devices have the next level queued while the host waits.
AHEAD = 2


def bind(engines: Sequence[Any], exchange: Any) -> None:
    """Give each engine the arrays its received slices will be in (once per pairing of
    engines and exchange: the arrays are the engines' own buffers or views of them)."""
    if all(getattr(e, "bound_to", None) is exchange for e in engines):
        return
    words, vertices = word_ranges(engines), vertex_ranges(engines)
    cands = exchange.received_slices([e.cand for e in engines],
                                     [e.staging for e in engines], words)
    # The kept parents' staging (a row per part of every vertex here) only where the
    # exchange copies: in-process parts read each other's arrays where they lie.
    stagings = [e.parent_staging() if exchange.copies_slices else None for e in engines]
    parents = exchange.received_slices([e.remote_parent for e in engines], stagings,
                                       vertices)
    for e, rows, parent_rows, staging in zip(engines, cands, parents, stagings, strict=True):
        e.bind_slices(rows, parent_rows, staging)
        e.bound_to = exchange


def word_ranges(engines: Sequence[Any]) -> list[tuple[int, int]]:
    partition = engines[0].partition
    return [partition.word_range(p) for p in range(partition.n_parts)]


def vertex_ranges(engines: Sequence[Any]) -> list[tuple[int, int]]:
    partition = engines[0].partition
    return [partition.range(p) for p in range(partition.n_parts)]


def run(engines: Sequence[Any], exchange: Any, alpha: float, beta: float,
        want_parents: bool, ahead: int = AHEAD) -> int:
    """Run the levels of a search whose engines have been started (``start``), Beamer's
    ``alpha`` and ``beta`` deciding each level's direction, then (``want_parents``) settle
    the parents of vertices labelled from other parts' candidates. Returns the level at
    which the frontier was empty (the deepest label is one less)."""
    for e in engines:
        e.bitmap_start(alpha, beta)
    bind(engines, exchange)
    words = word_ranges(engines)
    stagings = [e.staging for e in engines]
    level = 0
    while True:
        if level >= ahead:
            k = level - ahead
            exchange.wait_for(lambda k=k: all(e.mode_ready(k) for e in engines))
            if engines[0].mode_of(k) == DONE:
                break
        exchange.all_sum([e.level_stats(level) for e in engines])
        cands = [e.level_expand(level) for e in engines]
        exchange.swap_slices(cands, stagings, words)
        for e in engines:
            e.level_merge(level)
        level += 1
    if want_parents and engines[0].partition.n_parts > 1:
        exchange.swap_slices([e.remote_parent for e in engines],
                             [e.parent_stagings for e in engines], vertex_ranges(engines))
        for e in engines:
            e.resolve_parents()
    return k
