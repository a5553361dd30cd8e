"""The ``async`` BFS variant: an asynchronous, label-correcting search (Atos-style) in one
persistent launch of kernels/asynchronous.cu, for high-diameter graphs (issue 22).

Design. There is no level and no barrier per level. Workers are warps: a warp takes a
batch of up to 32 (vertex, distance) items, from a ring of 256 items in its own shared
memory first, else from a global queue (64-bit head and tail counters, slots published
by one release store each, each slot used once per search); skips items whose recorded
distance is larger than the vertex's current label (stale: a later push carries the
smaller one); relaxes the batch's out-edges, spread over its lanes, with ``atomicMin`` on
the labels; and pushes every neighbour whose label it lowered into its own ring (FIFO,
so about smallest distance first), spilling to the global queue only what does not fit,
and the newest items above 32 while some warp is idle (a hop then costs no global queue
round trip unless work must move). A count of
outstanding items (added before an item can be seen by another warp, subtracted after the
batch's own pushes are counted) ends the search on the device when it reaches zero. The
same launch then writes int32 distances (-1 unreached) and, when asked, parents: any
in-neighbour one level up (the reverse graph for directed inputs).

Expected cost per hop. An item kept in its warp's ring costs three dependent global
round trips: row bounds with the label, neighbour ids, ``atomicMin`` (about 0.5-1.5 us
on an H100 depending on L2 hits), plus a few dozen shuffles; one that crosses the global
queue adds about two more (the consumer's ``atomicCAS`` on head and the slot's acquire
load). The level-synchronous ``persistent`` kernel measured 3-4 us per level on
grids, so on a 4000x4000 grid (8000 levels) the asynchronous search reaches the 16 ms
target only if the wavefront advances at <= 2 us per hop and the redundant work stays
small.

What would make it lose against ``persistent`` (read the statistics of
:func:`last_stats`): redundant relaxations, since a warp that runs ahead of the wavefront
labels vertices with too-large distances and a later, shorter path makes them and their
descendants be pushed and processed again (``lowered`` far above the reached vertex
count, ``stale`` high), which work sharing out of distance order makes worse; contention
on the head, tail and outstanding lines when hundreds of warps poll them (``blocks``
limits the warps: ``BLOCKS_PER_SM`` blocks of 8 warps per SM by default); frontiers so
wide that the level-synchronous kernel's barrier is amortised anyway (low-diameter
graphs); and rows long enough that a batch's edges dominate the hop.

Overflow. The global queue holds ``queue_capacity(n)`` = QUEUE_FACTOR n + QUEUE_SLACK
slots, each used once per search (a reusable ring would need a sequence word per slot;
see the kernel), so it bounds the items that pass through it in one search: items kept
in warps' rings do not count, redundant pushes that cross it do. A reservation past the
end sets a flag; the kernel then writes no result, and this runner reruns the search
with the level-synchronous ``persistent`` variant (exact, and its memory needs are
known), and doubles the queue for the next search on the graph (where it fits in half
the free memory). Never a wrong answer; overflows are counted in :func:`state` and shown
by :func:`last_stats`, so a measurement can tell that a search fell back.

Host cost per search: the launch, and one read of 21 control words after it (the overflow
flag, which must be known before returning, and the statistics).

Measured (H100, benchmarks/bfs.py, 64 roots, same process as ``persistent``): grids of
4-25M vertices 1.13-1.28x faster (grid 4000x4000: 21.7 against 27.7 ms, 3.6 us per hop);
the shared road networks 1.33x slower, a 1M-vertex grid 1.05x slower, Delaunay graphs of
random points (ids without locality) 4x (1M) to 26x (4M) slower. ``auto`` therefore keeps
``persistent`` for deep graphs; this variant runs by name. Hops over the workspace's ELL
rows (each lane relaxing its item's whole row after one load) and searches on the
locality-relabelled copy were measured and deleted (H100, 2026-11-26, scripts/
bfs_deep_probe.py, folded into benchmarks/bfs.py since, same process): ELL hops 68 against
22 ms on grid 4000x4000 (label-correcting work grows when lanes relax whole rows far
ahead of the wavefront), the copy 364 against 23 ms on a 4000x4000 grid with deleted edges.
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import backend, barrier, kernels
from .launch import NULL
from .modules import current_device
from .persistent import run_persistent

if TYPE_CHECKING:
    from .workspace import Workspace

ASYNC_FILE = "bfs/kernels/asynchronous.cu"
BLOCK = 256  # MG_ASYNC_BLOCK: 8 warps (workers) per block
LOCAL = 256  # MG_ASYNC_LOCAL: items in each warp's shared-memory ring (a power of two)
KEEP = 32  # MG_ASYNC_KEEP: items a warp keeps when sharing with idle warps
UNROLL = 4  # MG_ASYNC_UNROLL: chunks of 32 edges whose loads and atomics issue together
SLEEP_NS = 256  # MG_ASYNC_SLEEP_NS: an idle warp's longest sleep between polls
# Blocks per SM (0: the whole resident grid). Fewer workers poll the queue's counters less;
# not measured yet: the first GPU run should try 1, 2, 4 and 0.
BLOCKS_PER_SM = 2
QUEUE_FACTOR = 2  # global queue slots per vertex (8 bytes each)
QUEUE_SLACK = 1 << 12
# Items pack a 64-bit id into 40 bits (kernels/asynchronous.cu).
MAX_VERTICES_64 = (1 << 40) - 1
CTRL_WORDS = 128
C_OVERFLOW, C_ERROR, C_STATS = 64, 65, 80  # asynchronous.cu's ctrl words
STAT_NAMES = ("processed", "stale", "edges", "lowered", "global")


def queue_capacity(n_vertices: int) -> int:
    """Slots of the global queue: QUEUE_FACTOR n + QUEUE_SLACK."""
    return QUEUE_FACTOR * max(int(n_vertices), 1) + QUEUE_SLACK


@dataclass
class AsyncState:
    """The async search's buffers of one workspace, and what its searches reported."""

    queue: Any = None  # uint64 slots, all EMPTY (~0) between searches
    capacity: int = 0
    ctrl: Any = None  # uint64[CTRL_WORDS]
    grow_to: int = 0  # the capacity the next search uses after an overflow
    overflows: int = 0
    last: dict[str, int] = field(default_factory=dict)


_states: weakref.WeakKeyDictionary[Any, AsyncState] = weakref.WeakKeyDictionary()


def state(ws: Workspace) -> AsyncState:
    st = _states.get(ws)
    if st is None:
        st = AsyncState()
        _states[ws] = st
    return st


def last_stats(ws: Workspace) -> dict[str, int]:
    """Counts of the workspace's last async search: items processed and skipped as stale,
    edges relaxed, labels lowered (pushes), items through the global queue, and whether it
    overflowed (then the counts are those of the aborted attempt)."""
    return dict(state(ws).last)


def _grid(vid: str, eid: str, local: int, keep: int, unroll: int,
          sleep_ns: int) -> barrier.PersistentGrid:
    """The cooperative grid for the current GPU (cached per device, like modules.py's
    persistent grids: a grid holds one device's barrier state and size)."""
    return _grid_on(current_device(), vid, eid, local, keep, unroll, sleep_ns)


@functools.lru_cache(maxsize=16)
def _grid_on(device_id: int, vid: str, eid: str, local: int, keep: int, unroll: int,
             sleep_ns: int) -> barrier.PersistentGrid:
    del device_id  # a cache key: the grid is built on the current device
    defines = {
        **kernels.index_defines(np.dtype(vid), np.dtype(eid)),
        "MG_ASYNC_BLOCK": BLOCK,
        "MG_ASYNC_LOCAL": local,
        "MG_ASYNC_KEEP": keep,
        "MG_ASYNC_UNROLL": unroll,
        "MG_ASYNC_SLEEP_NS": sleep_ns,
    }
    # Cooperative: the driver refuses a launch whose blocks cannot all be resident, so the
    # kernel's spin-waits (queue slots, the outstanding count) cannot wait on a block that
    # never runs.
    return barrier.persistent_kernel(ASYNC_FILE, "bfs_async", mode="cooperative",
                                     block=BLOCK, defines=defines)


def grid_blocks(grid: barrier.PersistentGrid, n_vertices: int, blocks: int | None) -> int:
    """Blocks of a launch: ``blocks`` if given (at most the resident grid), else
    BLOCKS_PER_SM per SM (0: the resident grid), and no more than one per BLOCK vertices."""
    if blocks is None:
        blocks = grid.grid
        if BLOCKS_PER_SM > 0:
            blocks = min(blocks, BLOCKS_PER_SM * backend.gpu_properties()["multiprocessors"])
        blocks = min(blocks, -(-max(int(n_vertices), 1) // BLOCK))
    return max(1, min(int(blocks), grid.grid))


def run_async(ws: Workspace, source: int, want_parents: bool, *,
              capacity: int | None = None, blocks: int | None = None, local: int = LOCAL,
              keep: int = KEEP, unroll: int = UNROLL,
              sleep_ns: int = SLEEP_NS) -> tuple[Any, Any]:
    """One launch of asynchronous.cu: (int32 distances with -1 unreached, parents or None).

    ``capacity``: slots of the global queue (default queue_capacity(n), grown after an
    overflow); small values force the overflow path (tests). ``blocks``:
    blocks of the launch (default: see grid_blocks). ``local``, ``keep``, ``unroll``,
    ``sleep_ns``: the kernel's MG_ASYNC_* constants, compiled per value.
    """
    g = ws.g
    cp = ws.cp
    n = g.n_vertices
    if g.indices.dtype.itemsize == 8 and n >= MAX_VERTICES_64:
        raise ValueError(f"async BFS packs vertex ids in 40 bits: {n} vertices is too many")
    st = state(ws)
    cap = int(capacity) if capacity is not None else max(queue_capacity(n), st.grow_to)
    if cap < 1:
        raise ValueError(f"capacity must be at least 1, got {cap}")
    if st.queue is None or st.capacity != cap:
        st.queue = None  # free the old queue before the new one is allocated
        backend.require_gpu_bytes(8 * cap, f"bfs async queue of {cap} slots")
        st.queue = cp.full(cap, -1, dtype=cp.int64).view(cp.uint64)  # all EMPTY (~0)
        st.capacity = cap
    if st.ctrl is None:
        st.ctrl = cp.zeros(CTRL_WORDS, dtype=cp.uint64)
    # Parents are found among in-neighbours: the graph itself when symmetric.
    rev = ws.reverse() if want_parents else g
    grid = _grid(str(g.indices.dtype), str(g.indptr.dtype), int(local), int(keep),
                 int(unroll), int(sleep_ns))
    dist = cp.empty(n, dtype=cp.int32)
    parent = cp.empty(n, dtype=g.indices.dtype) if want_parents else None
    vid = g.indices.dtype.type
    grid.kernel((grid_blocks(grid, n, blocks),), (grid.block,),
                (g.indptr, g.indices, rev.indptr, rev.indices, dist,
                 NULL if parent is None else parent, st.queue, np.uint64(cap), st.ctrl,
                 np.int64(n), vid(source), grid.state), shared_mem=grid.shared_mem)
    grid.check()  # cooperative: the driver refused any grid that could not be resident
    words = st.ctrl[C_OVERFLOW:C_STATS + len(STAT_NAMES)].get()
    overflow = bool(words[0])
    st.last = {name: int(words[C_STATS - C_OVERFLOW + i]) for i, name in enumerate(STAT_NAMES)}
    st.last["overflow"] = int(overflow)
    if overflow:
        # The kernel wrote no result (and put the queue back to EMPTY). Rerun with the
        # level-synchronous kernel, exact whatever the queue, and give the next search on
        # this graph a queue twice as large (unless the caller fixed the size).
        st.overflows += 1
        if capacity is None:
            free = cp.cuda.runtime.memGetInfo()[0] + cp.get_default_memory_pool().free_bytes()
            if 8 * 2 * cap <= free // 2:
                st.grow_to = 2 * cap
        return run_persistent(ws, source, want_parents)
    if words[C_ERROR - C_OVERFLOW]:
        raise RuntimeError("async BFS: a reached vertex has no in-neighbour one level up "
                           "(kernels/asynchronous.cu; a bug, please report)")
    return dist, parent
