"""The GPU BFS: variants as policies over the shared traversal operators.

- ``persistent``: one launch of kernels/persistent.cu; levels cross inside the kernel
  through mg::grid_sync, narrow frontiers run in one block (see that file).
- ``expand-contract`` / ``two-phase`` / ``contract-expand`` / ``hybrid`` (Merrill et al.)
  and ``merge-path`` (edge-balanced expand): one or two kernels per level from
  kernels/level.cu, launched back to back; the host reads the frontier every CHECK_EVERY
  levels to stop (expand-contract, two-phase, contract-expand), or every level where the
  next launch depends on it (hybrid's switch, merge-path's CuPy scan). Option
  ``cull`` of Merrill's four adds his duplicate culling (traversal/contract.cuh).
- ``merge-path-separate`` / ``-ib`` / ``-bi`` / ``-hybrid`` (the load-balanced BFS paper's
  couplings of redistribution and gathering, kernels/merge_path.cu) and
  ``frontier-classes`` (Enterprise §4.2: thread/warp/block/grid queues by out-degree,
  kernels/classes.cu): a fixed grid launched back to back, the frontier length read by the
  kernels from device memory; the host reads the counts every CHECK_EVERY levels to stop
  (a launch on an empty frontier does nothing).
- ``direction-optimizing`` (Enterprise) / ``beamer``: status-array top-down levels, queue
  generation by scanning labels, bottom-up levels with the hub cache, and the direction
  picked per level from the new frontier's statistics (vertices, edges, hubs): gamma =
  hubs in frontier / all hubs > 30 % switches to bottom-up for good (Enterprise), or
  Beamer's m_f > m_u / alpha and n_f < n / beta. By default the level loop is one
  persistent kernel (kernels/direction.cu, two grid barriers per level); ``loop="host"``
  runs the same operators as one launch pair per level with a host read of the statistics
  (kernels/level.cu).

Performance options (issue 7 follow-up; each defaults to the constant of that name below,
and turning them off gives the path measured before): persistent ``local_batch`` (warp
prefix-sum enqueue in the one-block levels), ``spread`` (grid levels spread over all
blocks), ``hysteresis`` (no futile hand-over to block 0); direction ``bitmap`` (bottom-up
probes read a frontier bitmap), ``flat_hubs`` (top-down hubs expanded by the whole grid),
``warp_reserve`` (queue generation reserves slots per warp), ``warp_bottom_up`` (off by
default: a warp finishes each long bottom-up row); persistent ``ell`` (graphs of maximum
degree <= 8 read as fixed-width rows: one-block levels on an edge queue with one memory
round trip each, grid levels by expand_ell_claim) and direction ``sorted_rows`` (bottom-up
scans over in-neighbours sorted by descending degree). Both use a per-graph copy made on
first use and kept in the workspace (like the reverse graph of a directed input). Direction
``trim`` (bottom-up levels end at the last vertex with an in-neighbour), ``bottom_up_batch``
(a thread's bottom-up vertices probed together), ``fused_flat`` (off: a flat-hub top-down
level enqueues its own discoveries), ``map_back`` (a relabelled search's results written
in the caller's ids by the search's launch or a second one) and ``fast`` (the launch
prepared once per workspace and option set).

Workspaces (queues, counters, the reverse graph for directed inputs) are kept per
CSRGraph object, so repeated searches on one GPU graph allocate nothing.
"""

from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from .. import backend, barrier, kernels, reorder
from ..csr import CSRGraph, inverse_permutation
from . import asynchronous, variants

LEVEL_FILE = "bfs/kernels/level.cu"
PERSISTENT_FILE = "bfs/kernels/persistent.cu"
DIRECTION_FILE = "bfs/kernels/direction.cu"
MERGE_PATH_FILE = "bfs/kernels/merge_path.cu"
CLASSES_FILE = "bfs/kernels/classes.cu"
RELABEL_FILE = "bfs/kernels/relabel.cu"
CHECK_EVERY = 4  # levels launched between host reads of the frontier (no decision needs them)
CULL: tuple[str, ...] = ()  # Merrill's variants' default culling (variants.CULL_OPTIONS)
DIRECTION_BLOCK = 512
RULES = {"gamma": 0, "beamer": 1, "bottom-up": 2, "top-down": 3}
LEVEL_BLOCK = 256
PERSISTENT_BLOCK = 1024
LOCAL_CAP = 3072  # edges a level may have and still run inside one block (shared queue)
ENTER_LOCAL = 2048  # frontier length at or under which block 0 takes over
GAMMA = 0.30  # Enterprise: switch to bottom-up when 30 % of the hubs are in the frontier
ALPHA, BETA = 14.0, 24.0  # Beamer's constants
# Defaults chosen by the H200 run of 2026-11-22 (benchmarks/RESULTS.md), each option
# measured against the same baseline in one process: the cooperative grid.sync() beat the
# atomic-free barrier for both persistent kernels on every graph (roads 4-6 %, grid2d 5000²
# 11 %, Kronecker 5 %); warp-aggregated one-block levels (local_batch) were 4-11 % SLOWER
# on the roads, and the frontier bitmap for bottom-up probes 18 % slower on Kronecker 21,
# so both are off; spreading wide levels, the hysteresis, flat hubs and warp reservations
# were faster and stay on. The warp-cooperative bottom-up scan stays off (slower than
# bitmap=off alone).
BARRIER_MODE = "cooperative"
LOCAL_BATCH = False
SPREAD_WIDE = True  # persistent grid levels: frontier warps spread over all blocks
LOCAL_HYSTERESIS = True  # persistent: no re-entry into one block just above what fits
FRONTIER_BITMAP = False
WARP_BOTTOM_UP = False
# persistent: on graphs of maximum degree <= ELL_MAX_DEGREE, levels read the graph as
# fixed-width rows (traversal/ell.cuh; Workspace.ell, built once per graph): one memory round
# trip per one-block level instead of two, two fewer per grid level. H200, 2026-11-23,
# benchmarks/bfs.py, 64 roots, same process, against ell=False: roads NY / BAY / COL 1.47x /
# 1.53x / 1.31x (3.16 / 2.98 / 2.65 us per level; every road search then runs in block 0
# alone), grid2d 5000² 1.18x (2.06 GTEPS), grid3d 300³ 1.08x.
ELL = True
ELL_MAX_DEGREE = 8
# direction: bottom-up levels scan in-neighbours in descending degree (Workspace.
# sorted_reverse, built once per graph), so the first probes are the likeliest frontier
# members and the hub cache's entries. Off: the H200 runs of 2026-11-23 did not show a gain
# that outlasts the noise (same process, against sorted off: Kronecker 21 0.97x and 0.995x,
# Kronecker 20 1.04x, rmat 2M/128M 1.006x), and it costs a second copy of the rows.
SORTED_ROWS = False
# Per-call overhead of the persistent kernel (road searches run in block 0 alone, so the
# rest of the grid is start-up, init and waiting). IDLE_WAIT: the blocks other than 0 sleep
# on a flag during one-block rounds instead of spinning in grid.sync() (persistent.cu,
# MG_BFS_IDLE_WAIT). SMALL_GRID: cooperative launches use ceil(n / SMALL_GRID) blocks when
# that is fewer than the resident grid (0: always the whole grid), so a road graph's
# launch starts, initialises and parks a few dozen blocks, not 264 (its grid levels, if
# any, still have >= SMALL_GRID / 1024 vertices per thread at most). FAST_CALL: the
# launch's argument tuple is built once per workspace and option set; a call allocates the
# results and fills in the source.
# H200, 2026-11-23 (scripts/bfs_profile.py, 24 roots, same process), all three against all
# off: roads NY / BAY / COL 1.034x / 1.036x / 1.057x (3.13 / 2.85 / 2.54 us per level);
# alone: idle 1.02-1.04x, fast call 1.015-1.03x, small grid 1.005-1.02x; grid2d 5000^2
# neutral (1.000x). Host time per NY call 42.8 -> 22.6 us. SMALL_GRID 4096 read 1.002x
# (noise), so 16384 keeps more blocks for grid levels.
IDLE_WAIT = True
SMALL_GRID = 16384
FAST_CALL = True
# persistent, ELL graphs of at most BITMAP_MAX_VERTICES: block 0's one-block levels claim
# vertices in a visited bitmap in its shared memory (persistent.cu, MG_BFS_LOCAL_BITMAP)
# instead of with global atomics, and load only the winners' rows. The bitmap is dynamic
# shared memory of every block, rounded up to BITMAP_BYTES_STEP so graphs of similar size
# share a grid; 160 KB (1.31 M vertices) leaves room for the static 45 KB within Hopper's
# 227 KB per block.
# H200, 2026-11-24, same process: scripts/bfs_profile.py (24 roots) on against off, roads
# NY / BAY / COL 1.157x / 1.10x / 1.075x (3.15 -> 2.72, 2.86 -> 2.59, 2.54 -> 2.36 us per
# level); loading every entry's row with the claim 0.97-0.98x of on, L1 prefetches of the
# queued rows 0.91x (both dropped);
# benchmarks/bfs.py (64 roots): NY 3.08 -> 2.64, BAY 2.94 -> 2.62 us per level.
LOCAL_BITMAP = True
# persistent, cooperative: once a search has run on a workspace, later launches have ceil(widest
# frontier seen / ADAPTIVE_WIDTH_PER_BLOCK) blocks (at least ADAPTIVE_MIN_BLOCKS, at most what
# SMALL_GRID gives): a grid level's grid.sync() costs more the more blocks take part, and a mesh's
# frontiers are far narrower than its vertex count. The kernel keeps the widest frontier in
# ctrl[CTRL_WIDEST_FRONTIER]; the host reads it (one sync) at the 2nd, 4th, 8th, ... call on the
# workspace. H200, 2026-11-24 (scripts/bfs_profile.py, grid2d 5000², 3 roots, same process): 16
# blocks 1.34x, 32 blocks 1.32x, 63 1.22x, 125 1.03x against the resident grid (264 blocks): 6.36 ->
# 4.74 us per level, 2.11 -> 2.84 GTEPS; in benchmarks/bfs.py 2.65 GTEPS against 1.71 with
# adaptive=off, grid3d 300³ neutral. At least 16 blocks: with 8, road searches (all in block 0) read
# 0.5 % slower than without (the launch's label initialisation spread over fewer threads).
ADAPTIVE_GRID = True
ADAPTIVE_WIDTH_PER_BLOCK = 512
ADAPTIVE_MIN_BLOCKS = 16
CTRL_WIDEST_FRONTIER = 7  # persistent.cu WIDEST_FRONTIER
BITMAP_MAX_VERTICES = 160 * 1024 * 8
BITMAP_BYTES_STEP = 8 * 1024
# direction: search a copy of the graph relabelled by non-increasing degree
# (reorder.degree_order; Workspace.degree_relabelled, built once per graph) and map the
# labels and parents back in one pass (MAP_BACK, below): the bottom-up probes of the
# likeliest parents (hubs) then read a few cache lines of labels, and a warp's vertices
# have rows of similar length. The copy stays with the workspace (as much GPU memory as the
# graph again). "auto": where the graph has at least RELABEL_MIN_VERTICES vertices (and
# the copy fits). H200, 2026-11-24 (benchmarks/bfs.py, 64 roots, same process), on against
# off: Kronecker 21 1.177x (195.2 -> 229.8 GTEPS), Kronecker 20 1.069x, rmat 2M/128M 0.88x,
# so "auto" then also required the top 1 % of vertices by degree to be scattered over the
# ids (a Kronecker graph's ids are a random permutation; an R-MAT graph's hubs sit at ids
# of few one-bits), which left R-MAT alone. Since the trimmed, batched bottom-up levels
# (TRIM_BOTTOM_UP, BOTTOM_UP_BATCH) the copy pays on R-MAT too: rmat 2M/128M relabelled
# against as given, scripts/bfs_relabel_profile.py (32 roots interleaved) 1.071x with
# parents (457.6 -> 427.4 us) and 1.125x without; benchmarks/bfs.py 289.1 -> 308.7 GTEPS
# (1.068x); Kronecker 21 234.0 -> 320.4 GTEPS (1.37x). So the scatter test is gone.
RELABEL: bool | str = "auto"
# scripts/bfs_relabel_profile.py, H200, Kronecker 21, 64 roots, one process, whole calls
# with parents against the original graph's (313.7 us): the relabelled search alone 1.316x
# (238.3 us), with the old-id gather map 1.210x (259.2 us: the map costs ~20 us), with the
# new-id scatter map 1.046x (so the gather it is), without the hub cache 1.233x (254.4 us:
# the hubs' labels share a few cache lines once relabelled, so the shared-memory copy
# only costs), bitmap=on 0.98x, warp bottom-up 1.08x. R-MAT 2M/128M: search alone 0.98x.
RELABEL_HUB_CACHE = False  # the relabelled search's bottom-up hub cache (use_cache)
# Where a relabelled search's results go back to the caller's ids: "kernel", the tail of
# the search's own launch (direction.cu, out_dist), or "launch", kernels/relabel.cu after it.
MAP_BACK = "kernel"
# direction.cu's levels: TRIM_BOTTOM_UP, bottom-up levels stop at the last vertex with an
# in-neighbour (Workspace.bottom_up_end; on the relabelled Kronecker copy that drops its
# ~40 % isolated vertices from every bottom-up level); BOTTOM_UP_BATCH, (vertices per
# thread, in-neighbours probed first) of a fused bottom-up level (MG_BFS_BU_BATCH,
# MG_BFS_BU_PROBE; (1, 2) is one vertex after another); FUSED_FLAT, a top-down level with
# flat-table hubs is fused too (MG_BFS_FUSED_FLAT).
# direction calls (with FAST_CALL): SPARE_RESULTS, the results of the next call are
# allocated right after this call's launch, while the GPU searches, not before the launch
# while it waits (the workspace keeps one spare pair of result arrays); the prepared call
# (run_direction_persistent's ``fast``) builds the launch's argument list once.
# H200, 2026-11-24, scripts/bfs_relabel_profile.py (Kronecker 21, 64 roots, root by root
# in turn in one process, calls with parents, CUDA events around each call as in
# benchmarks/bfs.py): all of them, against the call before them (no prepared call or
# spares, map back by a second launch, one vertex at a time, no trim): 269.3 -> 195.7 us
# (1.376x; 236 -> 325 GTEPS). One at a time against the defaults: trim off 1.10x slower
# (215.4 us), the call prepared per call 1.18x (231.0), map back by a second launch 1.047x
# (204.9); bottom-up batches 1x2 / 2x4 / 4x1 / 4x2 / 8x1 1.032x / 1.031x / 1.023x / 1.055x
# / 1.090x slower than 2x2 (4x2 and 8x1 spill registers); fused flat level 195.7 vs 195.9
# us with parents, 184.7 vs 181.3 without (its scan saved ~8 us at that level in the
# level profile, which the claims' atomics give back), so it stays off. The host's share
# of a call (kept busy GPU): two result allocations 4.1 us, the prepared launch of 29
# arguments 11.8 us, the whole gpu.run 20.9 us.
TRIM_BOTTOM_UP = True
BOTTOM_UP_BATCH = (2, 2)
FUSED_FLAT = False
SPARE_RESULTS = True
# Rules that "auto" relabels for. Enterprise's gamma rule stays top-down while frontiers
# hold many hubs, and a relabelled queue (generated in id order) put the heaviest hubs on
# the first blocks (H200, Kronecker 21, 32 roots: mean 1570 vs 868 us per call) until
# SPREAD_QUEUE; with it, 311 vs 351 us.
RELABEL_RULES = ("beamer", "bottom-up", "gamma")
# direction, top-down levels: the queue dealt out entry by entry over the blocks
# (direction.cu MG_BFS_SPREAD_QUEUE), on the graph as given / on the relabelled copy.
# H200, Kronecker 21, 32 roots, one process (scripts/bfs_relabel_profile.py), calls with
# parents: beamer relabelled 264.2 -> 245.2 us (1.077x; without parents 1.10x), beamer on
# the graph as given 312.2 -> 296.6 us (1.05x), gamma rule 801.6 -> 351.2 us (its slow
# roots were top-down levels of many hubs on few blocks), gamma relabelled 1590 -> 311 us.
# benchmarks/bfs.py (64 roots, rows in sequence, same process): rmat 2M/128M beamer 170.6
# -> 273.3 GTEPS, direction-optimizing 176.7 -> 274.5; Kronecker 21 beamer relabelled
# 239.1 without it, 216.6-231.4 with it (rows of one configuration differ by up to 7 %
# there, so the interleaved profile above decides).
SPREAD_QUEUE = True
SPREAD_QUEUE_RELABELLED = True
RELABEL_MIN_VERTICES = 1 << 20
FLAT_HUBS = True  # direction top-down levels: the frontier's hubs expanded by the whole grid
WARP_RESERVE = True  # direction queue generation: two __syncthreads per block step, not ten
NULL = np.uint64(0)  # a null device pointer (kernels test `if (parent)`)


@functools.lru_cache(maxsize=16)
def _module(path: str, vid: str, eid: str) -> Any:
    defines = {**kernels.index_defines(np.dtype(vid), np.dtype(eid)), "MG_BFS_BLOCK": LEVEL_BLOCK}
    return kernels.load_module(path, defines=defines)


def _level_module(vid: str, eid: str) -> Any:
    return _module(LEVEL_FILE, vid, eid)


def bitmap_bytes(n_vertices: int, ell_width: int, bitmap: bool) -> int:
    """Dynamic shared memory of a persistent launch with block 0's visited bitmap (0: no
    bitmap: off, no ELL rows, or more than BITMAP_MAX_VERTICES vertices)."""
    if not bitmap or ell_width <= 0 or n_vertices > BITMAP_MAX_VERTICES:
        return 0
    words = max(1, -(-n_vertices // 32))
    return -(-4 * words // BITMAP_BYTES_STEP) * BITMAP_BYTES_STEP


def _current_device() -> int:
    return int(backend.cupy_module().cuda.runtime.getDevice())


def _persistent_grid(vid: str, eid: str, mode: str, ell_width: int = 0,
                     idle_wait: bool = False,
                     bitmap_bytes: int = 0) -> barrier.PersistentGrid:
    """The persistent grid for the current GPU: a grid holds that device's barrier state
    and grid size, so the cache is per device (as CuPy caches its modules)."""
    return _persistent_grid_on(_current_device(), vid, eid, mode, ell_width, idle_wait,
                               bitmap_bytes)


@functools.lru_cache(maxsize=16)
def _persistent_grid_on(device_id: int, vid: str, eid: str, mode: str, ell_width: int,
                        idle_wait: bool, bitmap_bytes: int) -> barrier.PersistentGrid:
    del device_id  # a cache key: the grid is built on the current device
    defines = {
        **kernels.index_defines(np.dtype(vid), np.dtype(eid)),
        "MG_BFS_BLOCK": PERSISTENT_BLOCK,
        "MG_BFS_LOCAL_CAP": LOCAL_CAP,
        "MG_BFS_ELL_K": ell_width,
    }
    if idle_wait:
        defines["MG_BFS_IDLE_WAIT"] = 1
    if bitmap_bytes:
        defines["MG_BFS_LOCAL_BITMAP"] = 1
    return barrier.persistent_kernel(PERSISTENT_FILE, "bfs_persistent", mode=mode,  # type: ignore[arg-type]
                                     block=PERSISTENT_BLOCK, defines=defines,
                                     shared_mem=bitmap_bytes)


def _direction_grid(vid: str, eid: str, mode: str, spread_queue: bool, fused_flat: bool,
                    bottom_up_batch: tuple[int, int]) -> barrier.PersistentGrid:
    """The direction-optimising grid for the current GPU (cached per device)."""
    return _direction_grid_on(_current_device(), vid, eid, mode, spread_queue, fused_flat,
                              bottom_up_batch)


@functools.lru_cache(maxsize=16)
def _direction_grid_on(device_id: int, vid: str, eid: str, mode: str, spread_queue: bool,
                       fused_flat: bool,
                       bottom_up_batch: tuple[int, int]) -> barrier.PersistentGrid:
    del device_id  # a cache key: the grid is built on the current device
    defines = {
        **kernels.index_defines(np.dtype(vid), np.dtype(eid)),
        "MG_BFS_BLOCK": DIRECTION_BLOCK,
        "MG_BFS_FUSED_FLAT": int(fused_flat),
        "MG_BFS_BU_BATCH": bottom_up_batch[0],
        "MG_BFS_BU_PROBE": bottom_up_batch[1],
    }
    if spread_queue:
        defines["MG_BFS_SPREAD_QUEUE"] = 1
    return barrier.persistent_kernel(DIRECTION_FILE, "bfs_direction_persistent",
                                     mode=mode, block=DIRECTION_BLOCK,  # type: ignore[arg-type]
                                     defines=defines)


class Workspace:
    """Buffers and statistics of one GPU graph, made on first use."""

    def __init__(self, g: CSRGraph) -> None:
        cp = backend.cupy_module()
        self.cp = cp
        # Weak: the cache of workspaces is keyed weakly by the graph, and a strong reference
        # from the value would keep every graph (and its GPU buffers) alive forever.
        self._graph = weakref.ref(g)
        n = max(g.n_vertices, 1)
        vid = g.indices.dtype
        backend.require_gpu_bytes(n * (4 + 4 * vid.itemsize) + 4096,
                                  f"bfs workspace for {g.n_vertices} vertices")
        # The persistent kernel's one-block levels may list a vertex twice (plain label
        # stores), bounded by LOCAL_CAP entries, which can exceed a tiny graph's n.
        slots = max(n, LOCAL_CAP)
        self.queues = (cp.empty(slots, dtype=vid), cp.empty(slots, dtype=vid))
        self.hub_queue = cp.empty(n, dtype=vid)
        self.frontier_bits = cp.empty((n + 31) // 32, dtype=cp.uint32)
        self.level_rows = 1024
        self.counts = cp.zeros((self.level_rows, 4), dtype=cp.uint64)
        self.tails = cp.zeros(3, dtype=cp.uint64)
        self.ctrl = cp.zeros(8, dtype=cp.int32)  # 3 rotating slots of 2, the idle flag
        self.stats = cp.zeros(9, dtype=cp.uint64)
        degrees = g.degrees().astype(cp.int64)
        self.degrees = degrees
        stats = cp.stack([degrees.sum(), degrees.max() if g.n_vertices else degrees.sum()]).get()
        self.n_edges = int(stats[0])
        self.max_degree = int(stats[1])
        mean = self.n_edges / max(g.n_vertices, 1)
        # Hubs: rows far above the mean (Enterprise's tau is graph-specific).
        self.hub_degree = max(32, int(8 * mean))
        self.n_hubs = int((degrees > self.hub_degree).sum())
        self._reverse: CSRGraph | None = None
        self._edge_queues: dict[int, tuple[Any, Any]] = {}
        self._scan: Any = None
        self._buffers: dict[str, Any] = {}
        self._ell: Any = None
        self._sorted_reverse: CSRGraph | None = None
        self._relabelled: tuple[CSRGraph, Any, Any, np.ndarray] | None = None
        self._relabel_fits: bool | None = None  # the copy within half the free memory
        self._bottom_up_end: int | None = None
        # The next direction search's label and parent arrays (_DirectionCall, SPARE_RESULTS).
        self.spare_results: dict[str, Any] = {}
        # run_persistent's and run_direction_persistent's prepared calls
        self._launches: dict[tuple[Any, ...], Any] = {}
        self.persistent_calls = 0
        self.widest_frontier = 0  # as last read from the device (0: not read yet)
        self.blocks = backend.gpu_properties()["multiprocessors"] * (2048 // LEVEL_BLOCK)

    @property
    def g(self) -> CSRGraph:
        g = self._graph()
        if g is None:
            raise RuntimeError("bfs workspace used after its graph was freed")
        return g

    def reverse(self) -> CSRGraph:
        if not self.g.directed:
            return self.g
        if self._reverse is None:
            self._reverse = _reverse_on_gpu(self.g)
        return self._reverse

    def sorted_reverse(self) -> CSRGraph:
        """reverse() with each row's in-neighbours in descending out-degree (ties by id), for
        the bottom-up scans: the same graph, so results are unchanged except which frontier
        neighbour becomes the parent."""
        if self._sorted_reverse is None:
            cp = self.cp
            rev = self.reverse()
            m = rev.n_edges
            indices = rev.indices
            if m:
                backend.require_gpu_bytes(40 * m, "bfs sorted reverse rows")
                rows = cp.searchsorted(rev.indptr, cp.arange(m, dtype=rev.indptr.dtype),
                                       side="right") - 1
                top = self.max_degree + 1
                key = rows.astype(cp.int64) * top + (self.max_degree - self.degrees[indices])
                del rows
                indices = indices[cp.argsort(key)]
            self._sorted_reverse = CSRGraph(rev.indptr, indices, None, rev.n_vertices,
                                            rev.directed)
        return self._sorted_reverse

    def bottom_up_end(self) -> int:
        """One past the last vertex with an in-neighbour, which bottom-up levels need not
        pass; made once."""
        if self._bottom_up_end is None:
            cp = self.cp
            nonempty = cp.flatnonzero(cp.diff(self.reverse().indptr))
            self._bottom_up_end = int(nonempty[-1].get()) + 1 if nonempty.size else 0
        return self._bottom_up_end

    @property
    def ell_width(self) -> int:
        """Row width of the ELL form (4 or 8), or 0 where the maximum degree is too large."""
        if self.max_degree > ELL_MAX_DEGREE:
            return 0
        return 4 if self.max_degree <= 4 else 8

    def ell(self) -> Any:
        """The graph as fixed-width rows (n * ell_width ids, -1 past a row's end), for
        traversal/ell.cuh; made on first use and kept with the workspace."""
        k = self.ell_width
        if k == 0:
            raise ValueError(f"no ELL form: maximum degree {self.max_degree} > {ELL_MAX_DEGREE}")
        if self._ell is None:
            g = self.g
            cp = self.cp
            n, m = g.n_vertices, g.n_edges
            backend.require_gpu_bytes(max(n, 1) * k * g.indices.dtype.itemsize + 16 * m,
                                      "bfs ELL rows")
            ell = cp.full(max(n, 1) * k, -1, dtype=g.indices.dtype)
            if m:
                edge = cp.arange(m, dtype=cp.int64)
                rows = cp.searchsorted(g.indptr, edge, side="right") - 1
                column = edge - g.indptr[rows].astype(cp.int64)
                ell[rows * k + column] = g.indices
            self._ell = ell
        return self._ell

    def relabel_bytes(self) -> int:
        """GPU memory that building the relabelled copy takes at its peak."""
        return 48 * max(self.g.n_edges, 1) + 24 * max(self.g.n_vertices, 1)

    def relabel_pays(self, relabel: bool | str) -> bool:
        """``relabel`` resolved: True / False as given; "auto" by size, and only where
        building the copy takes at most half the free GPU memory (the copy is an
        optimisation: where it does not fit, the search runs on the graph as given)."""
        if relabel != "auto":
            return bool(relabel)
        if self.g.n_vertices < RELABEL_MIN_VERTICES:
            return False
        if self._relabel_fits is None:
            cp = self.cp
            free = cp.cuda.runtime.memGetInfo()[0] + cp.get_default_memory_pool().free_bytes()
            self._relabel_fits = self.relabel_bytes() <= free // 2
        return self._relabel_fits

    def degree_relabelled(self) -> tuple[CSRGraph, Any, Any, np.ndarray]:
        """(graph relabelled by reorder.degree_order, perm, its inverse, the inverse on the
        host): new vertex i is old vertex perm[i]; rows sorted, so each row lists its
        neighbours in non-increasing degree. Made on first use, kept with the workspace
        (which keeps the relabelled graph, and so its own workspace, alive)."""
        if self._relabelled is None:
            g = self.g
            backend.require_gpu_bytes(self.relabel_bytes(), "bfs degree-relabelled graph")
            perm = reorder.degree_order(g)
            built = reorder.apply(g, perm)  # its index widths are the kernels' too
            relabelled = CSRGraph(built.indptr.astype(g.indptr.dtype, copy=False),
                                  built.indices.astype(g.indices.dtype, copy=False), None,
                                  built.n_vertices, built.directed)
            vid = g.indices.dtype
            inverse = inverse_permutation(perm)
            self._relabelled = (relabelled, perm.astype(vid), inverse.astype(vid),
                                inverse.get())
        return self._relabelled

    def edge_queues(self, pair: int = 0) -> tuple[Any, Any]:
        """(neighbour, discoverer) queues of one edge per slot; a level never fills more
        than m slots (each vertex's row is expanded once)."""
        if pair not in self._edge_queues:
            m = max(self.g.n_edges, 1)
            vid = self.g.indices.dtype
            backend.require_gpu_bytes(2 * m * vid.itemsize, "bfs edge queue")
            self._edge_queues[pair] = (self.cp.empty(m, dtype=vid),
                                       self.cp.empty(m, dtype=vid))
        return self._edge_queues[pair]

    def scan(self) -> Any:
        if self._scan is None:
            self._scan = self.cp.empty(max(self.g.n_vertices, 1), dtype=self.cp.int64)
        return self._scan

    def buffer(self, name: str, shape: tuple[int, ...], dtype: Any) -> Any:
        """A named scratch array of this graph, made on first use (contents undefined)."""
        have = self._buffers.get(name)
        if have is None or have.shape != shape or have.dtype != np.dtype(dtype):
            nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
            backend.require_gpu_bytes(nbytes, f"bfs {name}")
            have = self.cp.empty(shape, dtype=dtype)
            self._buffers[name] = have
        return have

    def reset_counts(self) -> None:
        self.counts.fill(0)

    def grow_counts(self, level: int) -> None:
        """More per-level rows (zeroed) when a search runs past the table."""
        if level + 2 < self.level_rows:
            return
        extra = self.cp.zeros((self.level_rows, 4), dtype=self.cp.uint64)
        self.counts = self.cp.concatenate([self.counts, extra])
        self.level_rows *= 2


def _reverse_on_gpu(g: CSRGraph) -> CSRGraph:
    """The in-edges as CSR with this graph's index widths (the kernels are compiled for
    them): rows found by binary search in indptr, columns ordered by a stable sort."""
    cp = backend.cupy_module()
    m = g.n_edges
    rows = cp.searchsorted(g.indptr, cp.arange(m, dtype=g.indptr.dtype), side="right") - 1
    order = cp.argsort(g.indices)  # CuPy sorts stably (radix sort)
    indptr = cp.zeros(g.n_vertices + 1, dtype=g.indptr.dtype)
    if m:
        indptr[1:] = cp.cumsum(cp.bincount(g.indices, minlength=g.n_vertices))
    return CSRGraph(indptr, rows[order].astype(g.indices.dtype), None, g.n_vertices, True)


_workspaces: weakref.WeakKeyDictionary[CSRGraph, Workspace] = weakref.WeakKeyDictionary()


def workspace(g: CSRGraph) -> Workspace:
    ws = _workspaces.get(g)
    if ws is None:
        ws = Workspace(g)
        _workspaces[g] = ws
    return ws


def _labels(ws: Workspace, source: int, want_parents: bool) -> tuple[Any, Any]:
    cp = ws.cp
    n = ws.g.n_vertices
    dist = cp.full(n, -1, dtype=cp.int32)
    dist[source] = 0
    parent = None
    if want_parents:
        parent = cp.full(n, -1, dtype=ws.g.indices.dtype)
        parent[source] = source
    return dist, parent


def _ptr(a: Any) -> Any:
    return NULL if a is None else a


def grid_blocks(grid: barrier.PersistentGrid, n_vertices: int, small_grid: int,
                widest: int = 0) -> int:
    """Blocks of a persistent launch: the resident grid, or ceil(n / small_grid) of them
    where that is fewer (cooperative mode only: the other barriers' state is laid out for
    the whole grid); with ``widest`` (the widest frontier seen, ADAPTIVE_GRID) fewer still."""
    if grid.mode != "cooperative":
        return grid.grid
    blocks = grid.grid
    if small_grid > 0:
        blocks = max(1, min(blocks, -(-max(n_vertices, 1) // small_grid)))
    if widest > 0:
        wanted = max(ADAPTIVE_MIN_BLOCKS, -(-widest // ADAPTIVE_WIDTH_PER_BLOCK))
        blocks = max(1, min(blocks, wanted))
    return blocks


def _widest_frontier(ws: Workspace, adaptive: bool) -> int:
    """The widest frontier of the workspace's persistent searches so far, re-read from the
    device at its 2nd, 4th, 8th, ... call (0: adaptive off or not read yet)."""
    ws.persistent_calls += 1
    if not adaptive:
        return 0
    calls = ws.persistent_calls
    if calls >= 2 and calls & (calls - 1) == 0:
        ws.widest_frontier = int(ws.ctrl[CTRL_WIDEST_FRONTIER].get())
    return ws.widest_frontier


def _launch(grid: barrier.PersistentGrid, *args: Any, blocks: int | None = None) -> None:
    """grid.launch, less the zeroing of the barrier state where grid.sync() does not read it
    (cooperative mode): one launch fewer per search. ``blocks``: fewer blocks than the
    resident grid (cooperative mode only)."""
    if grid.mode == "cooperative":
        grid.kernel((blocks or grid.grid,), (grid.block,), (*args, grid.state),
                    shared_mem=grid.shared_mem)
    else:
        if blocks not in (None, grid.grid):
            raise ValueError("a smaller grid needs the cooperative barrier")
        grid.launch(*args)


def run_persistent(ws: Workspace, source: int, want_parents: bool, *,
                   enter_local: int = ENTER_LOCAL, mode: str = BARRIER_MODE,
                   local_batch: bool = LOCAL_BATCH, spread: bool = SPREAD_WIDE,
                   hysteresis: bool = LOCAL_HYSTERESIS, ell: bool = ELL,
                   idle_wait: bool | None = None, small_grid: int | None = None,
                   fast: bool | None = None, bitmap: bool | None = None,
                   adaptive: bool | None = None) -> tuple[Any, Any]:
    """One launch of persistent.cu. All three options False is the path measured before
    the follow-up: ``local_batch`` (one-block levels reserve queue slots per warp),
    ``spread`` (grid levels spread the frontier over every block), ``hysteresis`` (a
    frontier given back by block 0 lowers the size that enters it). ``ell``: where the
    maximum degree is at most ELL_MAX_DEGREE, levels read fixed-width rows (Workspace.ell;
    ignored on other graphs). ``idle_wait``, ``small_grid``, ``fast``: the per-call
    overhead options (IDLE_WAIT, SMALL_GRID, FAST_CALL; None takes the constant).
    ``bitmap``: block 0's visited bitmap (LOCAL_BITMAP). ``adaptive``: ADAPTIVE_GRID."""
    idle_wait = IDLE_WAIT if idle_wait is None else idle_wait
    small_grid = SMALL_GRID if small_grid is None else small_grid
    fast = FAST_CALL if fast is None else fast
    bitmap = LOCAL_BITMAP if bitmap is None else bitmap
    widest = _widest_frontier(ws, ADAPTIVE_GRID if adaptive is None else adaptive)
    options = (1 if local_batch else 0) | (2 if spread else 0) | (4 if hysteresis else 0)
    g = ws.g
    cp = ws.cp
    width = ws.ell_width if ell else 0
    bits = bitmap_bytes(g.n_vertices, width, bitmap)
    enter = max(0, min(enter_local, LOCAL_CAP))
    if fast:
        key = (mode, width, bool(idle_wait), int(small_grid), options, enter, bits)
        args = ws._launches.get(key)
        if args is None:
            grid = _persistent_grid(str(g.indices.dtype), str(g.indptr.dtype), mode, width,
                                    bool(idle_wait), bits)
            if grid.mode != "cooperative":  # the other barriers zero their state per launch
                return run_persistent(ws, source, want_parents, enter_local=enter_local,
                                      mode=mode, local_batch=local_batch, spread=spread,
                                      hysteresis=hysteresis, ell=ell, idle_wait=idle_wait,
                                      small_grid=0, fast=False, bitmap=bitmap,
                                      adaptive=False)
            blocks = grid_blocks(grid, g.n_vertices, small_grid)
            # [kernel, grid, block, shared memory, arguments (dist, parent and source filled
            # per call), vertex id type, the PersistentGrid]
            args = [grid.kernel, (blocks,), (grid.block,), grid.shared_mem,
                    [g.indptr, g.indices, None, NULL, ws.queues[0], ws.queues[1], ws.tails,
                     ws.ctrl, np.int64(g.n_vertices), None, np.int32(enter),
                     np.int64(ws.max_degree), np.int32(options),
                     ws.ell() if width else NULL, grid.state], g.indices.dtype.type, grid]
            ws._launches[key] = args
        kernel, grid_dim, block_dim, shared_mem, arguments, vid_type, grid = args
        if widest:
            grid_dim = (grid_blocks(grid, g.n_vertices, small_grid, widest),)
        n = g.n_vertices
        dist = cp.empty(n, dtype=cp.int32)
        parent = cp.empty(n, dtype=g.indices.dtype) if want_parents else None
        call = arguments.copy()  # the cached list keeps no result alive
        call[2] = dist
        call[3] = NULL if parent is None else parent
        call[9] = vid_type(source)
        kernel(grid_dim, block_dim, tuple(call), shared_mem=shared_mem)
        return dist, parent
    grid = _persistent_grid(str(g.indices.dtype), str(g.indptr.dtype), mode, width,
                            bool(idle_wait), bits)
    dist = cp.empty(g.n_vertices, dtype=cp.int32)
    parent = cp.empty(g.n_vertices, dtype=g.indices.dtype) if want_parents else None
    vid = g.indices.dtype.type
    _launch(grid, g.indptr, g.indices, dist, _ptr(parent), ws.queues[0], ws.queues[1],
            ws.tails, ws.ctrl, np.int64(g.n_vertices), vid(source), np.int32(enter),
            np.int64(ws.max_degree), np.int32(options), ws.ell() if width else NULL,
            blocks=grid_blocks(grid, g.n_vertices, small_grid, widest))
    grid.check()
    return dist, parent


def _culling(ws: Workspace, cull: str | tuple[str, ...]) -> tuple[Any, ...]:
    """The culled kernels' last two arguments (mask, bitmask or NULL), or () for none; a
    bitmask is zeroed for the search."""
    mask = variants.cull_mask(cull)
    if not mask:
        return ()
    bits: Any = NULL
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
    mod = _level_module(str(g.indices.dtype), str(g.indptr.dtype))
    culling = _culling(ws, cull)
    dist, parent = _labels(ws, source, want_parents)
    ws.reset_counts()
    ws.queues[0][0] = source
    ws.counts[0, 0] = 1
    grid, block = (ws.blocks,), (LEVEL_BLOCK,)
    if two_phase:
        edge_dst, edge_src = ws.edge_queues()
        expand = mod.get_function("bfs_two_phase_expand")
        contract = mod.get_function("bfs_two_phase_contract_culled" if culling
                                    else "bfs_two_phase_contract")
    else:
        fused = mod.get_function("bfs_expand_contract_culled" if culling
                                 else "bfs_expand_contract")
    level = 0
    while True:
        for _ in range(max(1, check_every)):
            ws.grow_counts(level)
            in_q, out_q = ws.queues[level & 1], ws.queues[(level + 1) & 1]
            here, nxt = ws.counts[level], ws.counts[level + 1]
            if two_phase:
                expand(grid, block, (g.indptr, g.indices, dist, in_q, here, edge_dst,
                                     edge_src, nxt[3:]))
                contract(grid, block, (edge_dst, edge_src, nxt[3:], dist, _ptr(parent),
                                       out_q, nxt, np.int32(level + 1), *culling))
            else:
                fused(grid, block, (g.indptr, g.indices, dist, _ptr(parent), in_q, here,
                                    out_q, nxt, np.int32(level + 1), *culling))
            level += 1
        if int(ws.counts[level, 0]) == 0:
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
    mod = _level_module(str(g.indices.dtype), str(g.indptr.dtype))
    culling = _culling(ws, cull)
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
    grid, block = (ws.blocks,), (LEVEL_BLOCK,)
    every = 1 if hybrid else max(1, check_every)  # the hybrid's switch needs every count
    queued = 1
    level = 0
    while queued:
        ws.grow_counts(level)
        (in_dst, in_src), (out_dst, out_src) = pairs[level & 1], pairs[(level + 1) & 1]
        here, nxt = ws.counts[level], ws.counts[level + 1]
        if hybrid and queued > switch:
            contract(grid, block, (in_dst, in_src, here[3:], dist, _ptr(parent), ws.queues[0],
                                   here, np.int32(level), *culling))
            expand(grid, block, (g.indptr, g.indices, dist, ws.queues[0], here, out_dst,
                                 out_src, nxt[3:]))
        else:
            fused(grid, block, (g.indptr, g.indices, dist, _ptr(parent), in_dst, in_src,
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
    mod = _level_module(str(g.indices.dtype), str(g.indptr.dtype))
    kernel = mod.get_function("bfs_merge_path_expand")
    dist, parent = _labels(ws, source, want_parents)
    ws.reset_counts()
    ws.queues[0][0] = source
    ws.counts[0, 0] = 1
    scan = ws.scan()
    grid, block = (ws.blocks,), (LEVEL_BLOCK,)
    size, level = 1, 0
    while size:
        ws.grow_counts(level)
        in_q, out_q = ws.queues[level & 1], ws.queues[(level + 1) & 1]
        cp.cumsum(ws.degrees[in_q[:size]], out=scan[:size])
        kernel(grid, block, (g.indptr, g.indices, dist, _ptr(parent), in_q, scan,
                             ws.counts[level], out_q, ws.counts[level + 1], np.int32(level + 1)))
        size = int(ws.counts[level + 1, 0])
        level += 1
    return dist, parent


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
    mod = _module(MERGE_PATH_FILE, str(g.indices.dtype), str(g.indptr.dtype))
    scan_chunks = mod.get_function("bfs_mp_scan_chunks")
    scan_write = mod.get_function("bfs_mp_scan_write")
    code = variants.COUPLINGS[coupling]
    dist, parent = _labels(ws, source, want_parents)
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
    grid, block = (ws.blocks,), (LEVEL_BLOCK,)
    level = 0
    while True:
        for _ in range(max(1, check_every)):
            ws.grow_counts(level)
            in_q, out_q = ws.queues[level & 1], ws.queues[(level + 1) & 1]
            here, nxt = ws.counts[level], ws.counts[level + 1]
            scan_chunks(grid, block, (g.indptr, in_q, here, block_sums))
            scan_write(grid, block, (g.indptr, in_q, here, block_sums, ends))
            if code == 0:
                redistribute(grid, block, (g.indptr, in_q, ends, here, positions, sources))
                gather(grid, block, (g.indices, dist, _ptr(parent), ends, here, positions,
                                     sources, out_q, nxt, np.int32(level + 1)))
            else:
                coupled(grid, block, (g.indptr, g.indices, dist, _ptr(parent), in_q, ends, here,
                                      out_q, nxt, np.int32(level + 1), np.int32(code),
                                      np.float32(f0)))
            level += 1
        if int(ws.counts[level, 0]) == 0:
            return dist, parent


def run_frontier_classes(ws: Workspace, source: int, want_parents: bool, *,
                         bounds: tuple[int, int, int] = variants.CLASS_BOUNDS,
                         check_every: int = CHECK_EVERY) -> tuple[Any, Any]:
    """Frontier classes (classes.cu): four queues per level by out-degree, served by a
    thread / warp / block / the grid in one launch; discovered vertices are classified by
    their discoverer. ``bounds`` = first degree of the warp, block and grid classes
    (variants.check_class_bounds says what the kernel accepts). The runner serves both
    adjacency layouts (layouts.run_classes)."""
    from . import layouts  # noqa: PLC0415  (it builds on this module)

    return layouts.run_classes(layouts.csr_view(ws), source, want_parents, bounds=bounds,
                               check_every=check_every)


def run_direction_persistent(ws: Workspace, source: int, want_parents: bool, *,
                             rule: str = "gamma", use_cache: bool = True,
                             mode: str = BARRIER_MODE, bitmap: bool = FRONTIER_BITMAP,
                             warp_bottom_up: bool = WARP_BOTTOM_UP,
                             flat_hubs: bool = FLAT_HUBS,
                             warp_reserve: bool = WARP_RESERVE,
                             sorted_rows: bool = SORTED_ROWS,
                             relabel: bool | str = RELABEL,
                             spread_queue: bool | None = None,
                             map_back: str | None = None,
                             fast: bool | None = None,
                             fused_flat: bool | None = None,
                             bottom_up_batch: tuple[int, int] | None = None,
                             trim: bool | None = None) -> tuple[Any, Any]:
    """The direction-optimising BFS with its level loop on the device (direction.cu).
    ``bitmap``: bottom-up probes read a frontier bitmap instead of the labels;
    ``warp_bottom_up``: a warp finishes the scan of each long unvisited row together;
    ``flat_hubs``: top-down levels expand the frontier's hubs over the whole grid;
    ``warp_reserve``: queue generation reserves its slots per warp (two __syncthreads per
    block step instead of up to ten). All four False is the path measured before.
    ``sorted_rows``: bottom-up scans read Workspace.sorted_reverse (hubs first).
    ``relabel``: search Workspace.degree_relabelled and map the results back (True,
    False or "auto": RELABEL). ``spread_queue``: top-down levels deal the queue out entry
    by entry (direction.cu MG_BFS_SPREAD_QUEUE; None: SPREAD_QUEUE, or
    SPREAD_QUEUE_RELABELLED on the relabelled copy). ``map_back`` (relabelled searches):
    "kernel", the search's launch writes the results in the caller's ids, or "launch", a
    second launch does (kernels/relabel.cu); None: MAP_BACK. ``fast``: the prepared call
    is kept with the workspace (None: FAST_CALL); False prepares it again (the per-call
    host cost measured before). ``fused_flat``, ``bottom_up_batch`` (vertices per thread,
    in-neighbours probed), ``trim``: FUSED_FLAT, BOTTOM_UP_BATCH and TRIM_BOTTOM_UP when
    None."""
    key = ("direction", rule, use_cache, mode, bitmap, warp_bottom_up, flat_hubs,
           warp_reserve, sorted_rows, relabel, spread_queue, map_back, fused_flat,
           bottom_up_batch, trim)
    fast = FAST_CALL if fast is None else fast
    call = ws._launches.get(key) if fast else None
    if call is None:
        call = _DirectionCall(ws, rule=rule, use_cache=use_cache, mode=mode, bitmap=bitmap,
                              warp_bottom_up=warp_bottom_up, flat_hubs=flat_hubs,
                              warp_reserve=warp_reserve, sorted_rows=sorted_rows,
                              relabel=relabel, spread_queue=spread_queue,
                              map_back=MAP_BACK if map_back is None else map_back,
                              fused_flat=FUSED_FLAT if fused_flat is None else fused_flat,
                              bottom_up_batch=(BOTTOM_UP_BATCH if bottom_up_batch is None
                                               else tuple(bottom_up_batch)),
                              trim=TRIM_BOTTOM_UP if trim is None else trim,
                              keep_spares=fast and SPARE_RESULTS)
        if fast:
            ws._launches[key] = call
    return call(source, want_parents)


class _DirectionCall:
    """One option set of run_direction_persistent on one graph, resolved once: the kernel,
    the graph (or its relabelled copy) it searches, and the launch's arguments with the
    per-call ones (source, labels, parents) left to fill in. A call then costs the host
    two allocations and one launch (two with map_back="launch")."""

    # Positions of the per-call entries in self.arguments (direction.cu's parameters).
    DIST, PARENT, SOURCE, PERM, INVERSE, OUT_DIST, OUT_PARENT = 4, 5, 10, 24, 25, 26, 27

    def __init__(self, ws: Workspace, *, rule: str, use_cache: bool, mode: str,
                 bitmap: bool, warp_bottom_up: bool, flat_hubs: bool, warp_reserve: bool,
                 sorted_rows: bool, relabel: bool | str, spread_queue: bool | None,
                 map_back: str, fused_flat: bool, bottom_up_batch: tuple[int, int],
                 trim: bool, keep_spares: bool) -> None:
        if map_back not in ("kernel", "launch"):
            raise ValueError(f"map_back must be 'kernel' or 'launch', not {map_back!r}")
        g = ws.g
        self.cp = ws.cp
        self.n = g.n_vertices
        self.vid = g.indices.dtype
        self.spares = ws.spare_results
        self.keep_spares = keep_spares
        if relabel == "auto" and rule not in RELABEL_RULES:
            relabel = False
        self.relabelled = bool(g.n_vertices) and ws.relabel_pays(relabel)
        search_ws = ws
        self.inverse_host: np.ndarray | None = None
        if self.relabelled:
            relabelled, self.perm, self.inverse, self.inverse_host = ws.degree_relabelled()
            search_ws = workspace(relabelled)
            use_cache = use_cache and RELABEL_HUB_CACHE
            if spread_queue is None:
                spread_queue = SPREAD_QUEUE_RELABELLED
        elif spread_queue is None:
            spread_queue = SPREAD_QUEUE
        self.search_ws = search_ws
        sg = search_ws.g
        self.grid = _direction_grid(str(sg.indices.dtype), str(sg.indptr.dtype), mode,
                                    bool(spread_queue), bool(fused_flat),
                                    (int(bottom_up_batch[0]), int(bottom_up_batch[1])))
        if rule == "top-down":
            rev = sg
        else:
            rev = search_ws.sorted_reverse() if sorted_rows else search_ws.reverse()
        self.arguments = [
            sg.indptr, sg.indices, rev.indptr, rev.indices, None, None, search_ws.queues[0],
            search_ws.hub_queue, search_ws.stats, np.int64(sg.n_vertices), None,
            np.int64(search_ws.hub_degree), np.int64(search_ws.n_hubs),
            np.int64(search_ws.n_edges), np.int32(RULES[rule]), np.int32(use_cache),
            np.float32(GAMMA), np.float32(ALPHA), np.float32(BETA), np.int32(warp_bottom_up),
            np.int32(flat_hubs), np.int32(warp_reserve),
            search_ws.frontier_bits if bitmap else NULL,
            np.int64(search_ws.bottom_up_end() if trim and rule != "top-down"
                     else sg.n_vertices),
            NULL, NULL, NULL, NULL]
        self.source_type = self.vid.type
        if self.relabelled:
            # The search's own labels stay with the relabelled workspace, reused per call.
            self.inner_dist = search_ws.buffer("direction labels", (self.n,), np.int32)
            self.inner_parent = search_ws.buffer("direction parents", (self.n,), self.vid)
            if map_back == "kernel":
                self.arguments[self.PERM] = self.perm
                self.arguments[self.INVERSE] = self.inverse
        self.unrelabel = None
        if self.relabelled and map_back == "launch":
            self.unrelabel = _module(RELABEL_FILE, str(self.vid),
                                     str(g.indptr.dtype)).get_function("bfs_unrelabel")
            self.unrelabel_grid = kernels.launch_config(self.n, 256, ws.blocks)[0]

    def __call__(self, source: int, want_parents: bool) -> tuple[Any, Any]:
        n = self.n
        spares = self.spares
        dist = spares.pop("labels", None)
        if dist is None:
            dist = self.cp.empty(n, dtype=np.int32)
        parent = None
        if want_parents:
            parent = spares.pop("parents", None)
            if parent is None:
                parent = self.cp.empty(n, dtype=self.vid)
        call = self.arguments.copy()  # the kept list holds no result alive
        if not self.relabelled:
            call[self.DIST] = dist
            call[self.PARENT] = NULL if parent is None else parent
            call[self.SOURCE] = self.source_type(source)
        else:
            inner_dist = self.inner_dist
            inner_parent = self.inner_parent if want_parents else None
            call[self.DIST] = inner_dist
            call[self.PARENT] = NULL if inner_parent is None else inner_parent
            call[self.SOURCE] = self.source_type(self.inverse_host[source])
            if self.unrelabel is None:
                call[self.OUT_DIST] = dist
                call[self.OUT_PARENT] = NULL if parent is None else parent
        _launch(self.grid, *call)
        self.grid.check()
        if self.unrelabel is not None:
            self.unrelabel(self.unrelabel_grid, (256,),
                           (inner_dist, NULL if inner_parent is None else inner_parent,
                            self.perm, self.inverse, np.int64(n), dist,
                            NULL if parent is None else parent))
        if self.keep_spares:
            # The next call's results, allocated while this search runs.
            spares["labels"] = self.cp.empty(n, dtype=np.int32)
            if want_parents:
                spares["parents"] = self.cp.empty(n, dtype=self.vid)
        return dist, parent


def run_direction_optimizing(ws: Workspace, source: int, want_parents: bool, *,
                             rule: str = "gamma", force: str | None = None,
                             use_cache: bool = True, loop: str = "device",
                             mode: str = BARRIER_MODE, **device_options: Any
                             ) -> tuple[Any, Any]:
    """Direction-optimising BFS; ``loop="host"`` runs one launch pair per level and reads
    the statistics back (level.cu), ``"device"`` the persistent kernel (direction.cu,
    which also takes run_direction_persistent's ``bitmap`` and ``warp_bottom_up``)."""
    if loop == "device":
        return run_direction_persistent(ws, source, want_parents, rule=force or rule,
                                        use_cache=use_cache, mode=mode, **device_options)
    if device_options:
        raise ValueError(f"options {sorted(device_options)} need loop='device'")
    g = ws.g
    mod = _level_module(str(g.indices.dtype), str(g.indptr.dtype))
    top_down = mod.get_function("bfs_status_top_down")
    bottom_up = mod.get_function("bfs_bottom_up")
    gen = mod.get_function("bfs_queue_from_status")
    rev = ws.reverse() if force != "top-down" else g
    dist, parent = _labels(ws, source, want_parents)
    ws.reset_counts()
    grid, block = (ws.blocks,), (LEVEL_BLOCK,)
    n = np.int64(g.n_vertices)
    hub_degree = np.int64(ws.hub_degree)
    queue = ws.queues[0]

    def generate(level: int, write_queue: bool) -> np.ndarray:
        gen(grid, block, (dist, g.indptr, n, np.int32(level), queue, ws.counts[level],
                          hub_degree, np.int32(write_queue), ws.hub_queue))
        return ws.counts[level].get()

    stats = generate(0, True)
    direction = force or "top-down"
    unexplored = ws.n_edges - int(stats[1])
    level = 0
    while True:
        ws.grow_counts(level)
        if direction == "top-down":
            top_down(grid, block, (g.indptr, g.indices, dist, _ptr(parent), queue,
                                   ws.counts[level], np.int32(level + 1)))
        else:
            bottom_up(grid, block, (rev.indptr, rev.indices, dist, _ptr(parent), n,
                                    np.int32(level), ws.hub_queue, ws.counts[level][2:],
                                    np.int32(use_cache)))
        level += 1
        keep_queue = force != "bottom-up" and (direction == "top-down" or rule == "beamer")
        stats = generate(level, keep_queue)
        n_f, m_f, hubs = int(stats[0]), int(stats[1]), int(stats[2])
        if n_f == 0:
            return dist, parent
        unexplored -= m_f
        if force is not None:
            continue
        if rule == "gamma":
            if direction == "top-down" and ws.n_hubs and hubs > GAMMA * ws.n_hubs:
                direction = "bottom-up"
        elif direction == "top-down" and m_f > unexplored / ALPHA:
            direction = "bottom-up"
        elif direction == "bottom-up" and n_f < g.n_vertices / BETA:
            direction = "top-down"
        if direction == "top-down" and not keep_queue:
            # Left bottom-up: the queue of this level was not written; write it now.
            ws.counts[level].fill(0)
            generate(level, True)


def choose(ws: Workspace, variant: str) -> str:
    if variant != "auto":
        return variant
    mean = ws.n_edges / max(ws.g.n_vertices, 1)
    return variants.auto_gpu_from_stats(mean, ws.max_degree, symmetric=not ws.g.directed)


def run(g: CSRGraph, source: int, *, variant: str, want_parents: bool,
        **options: Any) -> tuple[Any, Any, str]:
    """Distances (int32 CuPy), parents or None, and the variant that ran."""
    ws = workspace(g)
    name = choose(ws, variant)
    if name == "persistent":
        dist, parent = run_persistent(ws, source, want_parents, **options)
    elif name in ("expand-contract", "top-down"):
        dist, parent = run_expand_contract(ws, source, want_parents, **options)
    elif name == "two-phase":
        dist, parent = run_expand_contract(ws, source, want_parents, two_phase=True,
                                           **options)
    elif name == "contract-expand":
        dist, parent = run_contract_expand(ws, source, want_parents, **options)
    elif name == "hybrid":
        dist, parent = run_contract_expand(ws, source, want_parents, hybrid=True, **options)
    elif name == "merge-path":
        dist, parent = run_merge_path(ws, source, want_parents)
    elif name in variants.COUPLINGS:
        dist, parent = run_merge_path_coupled(ws, source, want_parents, coupling=name,
                                              **options)
    elif name == "frontier-classes":
        dist, parent = run_frontier_classes(ws, source, want_parents, **options)
    elif name in ("frontier-classes-deferred", "dynamic-parallelism"):
        from . import layouts  # noqa: PLC0415  (it builds on this module)

        dist, parent = layouts.run(layouts.csr_view(ws), source, name, want_parents)
    elif name == "direction-optimizing":
        dist, parent = run_direction_optimizing(ws, source, want_parents, **options)
    elif name == "beamer":
        dist, parent = run_direction_optimizing(ws, source, want_parents, rule="beamer",
                                                **options)
    elif name == "bottom-up":
        dist, parent = run_direction_optimizing(ws, source, want_parents, force="bottom-up",
                                                **options)
    elif name == "async":  # bfs/asynchronous.py (issue 22)
        dist, parent = asynchronous.run_async(ws, source, want_parents, **options)
    else:
        raise ValueError(f"variant {name!r} has no GPU implementation")
    return dist, parent, name


def edges_out_of_reached(g: CSRGraph, dist: Any) -> int:
    """CSR entries leaving reached vertices (the TEPS numerator)."""
    ws = workspace(g)
    return int((ws.degrees * (dist >= 0)).sum())
