"""The GPU path: rounds of complex-rule evaluation and pull-based propagation (kernels/pta.cu).

Per round the host launches ``take_delta`` (only the rows that loads, stores, geps and HCD
facts point through, and of those only rows changed since the last round), then
``eval_complex`` twice: over the HCD facts, whose merge requests (few: a device claim per
node keeps one per merged node) are joined on the device (``union_pairs``,
``list_merges``: each group's smallest node leads) and applied at once (``merge_rows`` ORs
rows; ``relabel_labels`` maps constraints, variables and leaders through ``leader``), and
then over the loads, stores and geps, which so produce edges between the merged leaders.
The host reads the round's counters once, after both evaluations (HCD pairs and members
merged, new edges, gep bit added, table overflow: the buffer sizes and the stopping
decision need them); the merges in between take their counts from device words. Before,
each evaluation read its counters back, the merge pairs came to the host for a union
(SciPy) and the relabelling was a dozen array operations: per round four host reads
where there are now one or two. Every produced edge key (dst*n+src) and merge request
first goes through a device hash set of the known keys, so the host receives only
distinct, new edges: the rounds re-produce known edges in bulk (constraints that merges
made identical, objects a merged leader sees anew). A round without merges then sorts
its batch and the batch's reversed keys in one sort and ``merge_batch`` places them
into the sorted incoming (dst*n+src) and outgoing (src*n+dst) key lists, one binary
search per key, no host sync. A round with merges (or a cycle search) relabels the known
keys too (``_relabel_keys``: three launches around one tagged sort, one read of the kept
count and of the cycle members merged) and rebuilds the key table. Then the persistent
``propagate`` kernel loops over sweeps on the device (mg::grid_sync between sweeps) until
nothing changes; the hubs it pulls in chunks are listed on the device before the launch.

Why merges come between the two evaluations: evaluated together, a round's loads produced
an edge from every object an HCD fact merged in that same round, keys that the merge then
turned into self loops or repeats (22 million in one php round, all sorted on the device
to be dropped).

Cycles: before the first propagation, and in a round's merge once the edges added since
the last search reach 1 / CYCLE_EDGE_SHARE of the known ones, ``find_cycles``
(kernels/cycles.cu) finds strongly connected components of the copy edges, the known ones
and the round's new ones, on the device, and the solver merges each into its smallest
node as it applies HCD merges (``merge``: rows ORed, labels relabelled, the member count
read by the device alone), so one relabelling of the edge keys serves both; a searched
round relabels whether or not the search found a cycle (that spares its count a host
read of its own). A cycle's nodes hold one
set at the fixed point, so this is exact; without it the set went round the cycle sweep
after sweep, one copy per node, and every load and store through a member read the same
new objects again.

Propagation is difference propagation over blocks of 32 words (2048 objects): the first
sweep of a round pulls whole rows (the blocks a per-row ``occupied`` bitmap names) only
along new edges, and along old edges only the blocks that geps, merges or address-of
constraints grew since the last propagation (``ext_blocks``; merges force nothing else:
a leader holds its members' sets, which held their in-neighbours'); every later sweep
pulls, for each node queued by the previous sweep (the shared BlockWorklist, with the
out-edge lists saying whom a gain concerns), only the blocks its in-neighbours gained in
the previous sweep (a per-node bitmap of gained blocks, double-buffered by sweep parity).
A warp pulls 32 in-edges at a time, block by block, with the neighbours' words of a block
loaded in batches, so hubs with many changed in-neighbours do not serialise one memory
round trip per neighbour.

Why sorted key lists instead of chunked incoming lists grown in the kernel (ChunkPool):
the sweeps read every in-edge of a node as one contiguous run, which a sorted CSR gives
for free, and the rounds add their edges in bulk after the one counter read the loop
needs anyway. With repeats filtered by the key table a round adds at most tens of
thousands of edges to lists of 7 k to 0.7 M keys, which ``merge_batch`` does in one
launch; chasing chunk links in every sweep of every round would cost more than that.
The host-side merge time per round is in ``stats["seconds"]["merge"]``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import backend, barrier, kernels
from ..unique import sorted_unique
from . import dense
from .layout import Layout

KERNEL_FILE = "pta/kernels/pta.cu"
CYCLES_FILE = "pta/kernels/cycles.cu"
BLOCK = 256
CYCLES_BLOCK = 512
WARP = 32


class CudaKernels:
    """The kernels of kernels/pta.cu behind plain calls (the solver's only device code).

    ``_solve`` takes any object with these methods; the CPU tests drive the round logic
    with a NumPy stand-in of each kernel (tests/test_pta_gpu_rounds.py).
    """

    def __init__(self, barrier_mode: str) -> None:
        mod = kernels.load_module(KERNEL_FILE)
        self._set_bits = mod.get_function("set_bits")
        self._delta = mod.get_function("take_delta")
        self._complex = mod.get_function("eval_complex")
        self._merge = mod.get_function("merge_rows")
        self._relabel_labels = mod.get_function("relabel_labels")
        self._union_pairs = mod.get_function("union_pairs")
        self._list_merges = mod.get_function("list_merges")
        self._pair_keys = mod.get_function("pair_keys")
        self._insert = mod.get_function("insert_keys")
        self._merge_batch = mod.get_function("merge_batch")
        self._relabel_tag = mod.get_function("relabel_tag")
        self._first_of_key = mod.get_function("first_of_key")
        self._scatter_kept = mod.get_function("scatter_kept")
        self._hub_chunks = mod.get_function("list_hub_chunks")
        self._prop = barrier.persistent_kernel(KERNEL_FILE, "propagate", mode=barrier_mode,
                                               block=BLOCK, defines={"PTA_BLOCK": BLOCK})
        # One block per SM: its sweeps are light (a few loads per edge), so a smaller grid
        # mostly makes each barrier cheaper.
        self._cycles = barrier.persistent_kernel(
            CYCLES_FILE, "find_cycles", mode=barrier_mode, block=CYCLES_BLOCK,
            max_blocks=backend.gpu_properties()["multiprocessors"])
        self.grid = self._prop.grid
        # Launches whose item count lives on the device (merge_rows: members x words) take
        # a fixed grid and stride over it.
        self._device_sized = 8 * backend.gpu_properties()["multiprocessors"] * BLOCK

    @staticmethod
    def _flat(kernel: Any, n_items: int, args: tuple) -> None:
        grid, block = kernels.launch_config(n_items, BLOCK, max_blocks=65535)
        kernel(grid, block, args)

    def set_bits(self, n_items: int, *args: Any) -> None:
        self._flat(self._set_bits, n_items, args)

    def take_delta(self, n_rows: int, *args: Any) -> None:
        self._flat(self._delta, n_rows * WARP, args)

    def eval_complex(self, n_constraints: int, *args: Any) -> None:
        self._flat(self._complex, n_constraints * WARP, args)

    def merge_rows(self, *args: Any) -> None:
        self._flat(self._merge, self._device_sized, args)

    def relabel_labels(self, n_items: int, *args: Any) -> None:
        self._flat(self._relabel_labels, n_items, args)

    def union_pairs(self, n_items: int, *args: Any) -> None:
        self._flat(self._union_pairs, n_items, args)

    def list_merges(self, n_items: int, *args: Any) -> None:
        self._flat(self._list_merges, n_items, args)

    def pair_keys(self, n_items: int, *args: Any) -> None:
        self._flat(self._pair_keys, n_items, args)

    def insert_keys(self, n_items: int, *args: Any) -> None:
        self._flat(self._insert, n_items, args)

    def merge_batch(self, n_items: int, *args: Any) -> None:
        self._flat(self._merge_batch, n_items, args)

    def relabel_tag(self, n_items: int, *args: Any) -> None:
        self._flat(self._relabel_tag, n_items, args)

    def first_of_key(self, n_items: int, *args: Any) -> None:
        self._flat(self._first_of_key, n_items, args)

    def scatter_kept(self, n_items: int, *args: Any) -> None:
        self._flat(self._scatter_kept, n_items, args)

    def list_hub_chunks(self, n_nodes: int, *args: Any) -> None:
        self._flat(self._hub_chunks, n_nodes, args)

    def propagate(self, *args: Any) -> None:
        self._prop.launch(*args)

    def find_cycles(self, *args: Any) -> None:
        self._cycles.launch(*args)

    def check(self) -> None:
        """Raise if a grid barrier of any persistent launch timed out (results invalid)."""
        self._prop.check()
        self._cycles.check()


METHODS = ("auto", "dense", "rounds")


def solve(layout: Layout, *, barrier_mode: str = "xiao-feng", method: str = "auto",
          max_rounds: int = 100000, progress: Callable[[dict[str, int]], None] | None = None
          ) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """Rows (CuPy (n_nodes, words) uint64), the row of every variable (NumPy), statistics.

    ``method``: "rounds" (this module's round solver), "dense" (dense.py: one persistent
    launch over dense bit matrices, for small programs) or "auto" (dense where it fits).
    ``progress``: called after each round of the round solver with its number and the
    copy edges (values the host holds anyway: no extra device reads or syncs).
    """
    if method not in METHODS:
        raise ValueError(f"pta.solve: method must be one of {METHODS}, got {method!r}")
    if method == "dense" or (method == "auto" and dense.fits(layout)):
        return dense.solve_gpu(layout, barrier_mode=barrier_mode)
    cp = backend.cupy_module()
    n, W = layout.n_nodes, layout.n_words
    with backend.gpu_memory_guard(f"pta on {n} nodes x {W} words"):
        backend.require_gpu_bytes(3 * n * W * 8 + 32 * n * _block_layout(W)[1] + 96 * n,
                                  "pta bit rows (P, seen, delta) and block bitmaps")
        return _solve(cp, CudaKernels(barrier_mode), layout, max_rounds, progress)


# counters: edge keys written, gep added a bit (low word), merge requests written, objects
# read from deltas, key table overflowed (sticky until the table is rebuilt).
N_NEW, GEP, N_MERGE, RAW, OVERFLOW = range(5)
MIN_TABLE = 1 << 16
MAX_TABLE = 1 << 28  # slots (2 GiB): past this an overflowing round keeps its repeats
MIN_KEY_BUFFER = 1 << 16  # first sizes of the round's edge and merge-request buffers
# Merge pairs are about one per merged node (at most a few thousand a round): a buffer
# that holds them spares the round a second HCD evaluation (and a host read) to grow it.
MIN_MERGE_BUFFER = 1 << 16
NULL = np.uint64(0)  # a null device pointer (merge_batch tests `if (flag)`)
# Hubs: a node with more than HUB_MIN in-edges is pulled by one warp per HUB_CHUNK of them
# (kernels/pta.cu chunks_of); HUB_CHUNK = 0 pulls every node with one warp (the path
# before). On svn one warp pulling a merged leader's hundreds of in-edges set the length
# of most later sweeps. H200, one process (scripts/pta_compare.py, against c8d2d76):
# HUB_CHUNK 32 / HUB_MIN 64 made svn 1.94x faster (0.177 -> 0.091 s; later sweeps' median
# 115 -> 24 us), python 1.43x, gcc 1.17x, php 2.25x, mplayer 2.27x (64 / 128: 1.84x,
# 1.34x, 1.17x, 2.18x, 2.21x). The hubs and their chunks are listed on the device
# (list_hub_chunks) before each propagation: listed on the host, they cost a host round
# trip per round (ex 0.79x).
HUB_CHUNK = 32
HUB_MIN = 64
# Passes of find_cycles per call (kernels/cycles.cu): each pass finds every cycle that holds
# the smallest id reaching it and takes those nodes out, so the next can find the cycles
# downstream of them; cycles left over are found in a later round's call.
CYCLE_PASSES = 2
# A round searches for cycles once the edges added since the last search reach
# 1 / CYCLE_EDGE_SHARE of the known ones: a search costs ~0.5 ms whatever it finds, and the
# later rounds of a solve add a few edges each.
CYCLE_EDGE_SHARE = 16


def _solve(cp: Any, dev: Any, lay: Layout, max_rounds: int,
           progress: Callable[[dict[str, int]], None] | None = None
           ) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """The round loop over array module ``cp`` and kernels ``dev`` (see CudaKernels)."""
    t_start = time.perf_counter()
    n, W = lay.n_nodes, lay.n_words
    i64 = cp.int64
    P = cp.zeros(n * W, dtype=cp.uint64)
    seen = cp.zeros_like(P)  # per pointer node: what its constraints have read
    D = cp.zeros_like(P)
    changed_at = cp.full(n, -1, dtype=cp.int32)  # clock value when rules outside sweeps grew
    block_words, bitmap_words = _block_layout(W)
    swept_at = cp.full(2 * n, -1, dtype=cp.int32)  # per sweep parity: stamp of the last gain
    # Per sweep % 3: the blocks each node gained in its last sweep (see propagate).
    gained_blocks = cp.zeros(3 * n * bitmap_words, dtype=cp.uint64)
    occupied = cp.zeros(n * bitmap_words, dtype=cp.uint64)  # per row: blocks holding a bit
    dblocks = cp.zeros(n * bitmap_words, dtype=cp.uint64)  # per pointer row: blocks of D
    # Per row: blocks that rules outside the sweeps grew since the last propagation.
    ext_blocks = cp.zeros(n * bitmap_words, dtype=cp.uint64)
    queued_at = cp.full(n, -1, dtype=cp.int32)  # stamp of the sweep that last queued a node
    hub_chunk, hub_min = int(HUB_CHUNK), max(int(HUB_MIN), int(HUB_CHUNK))
    todo = {"lists": cp.empty(3 * n, dtype=i64), "cap": n}  # three rotating lists to pull
    # propagate's counters, zeroed together before each launch: [0:2] hub_counts (sweep
    # 0's extra items, hubs: list_hub_chunks), [2:5] todo_tail (the three lists' lengths).
    prop_counts = cp.zeros(5, dtype=cp.uint64)
    hub_counts, todo_tail = prop_counts[:2], prop_counts[2:]
    clock = cp.ones(1, dtype=cp.int32)
    take_clock = cp.zeros(2, dtype=cp.int32)  # clock at the last two takes (round parity)
    error = cp.zeros(1, dtype=cp.int32)
    # What the host reads once per round, in one copy (see the round loop): the HCD
    # evaluation's counters, the HCD merges' member count, then the loads', stores' and
    # geps' counters (their OVERFLOW word last: sticky until the table is rebuilt, so one
    # fill zeroes everything else).
    readback = cp.zeros(11, dtype=cp.uint64)
    hcd_counters, hcd_members = readback[:5], readback[5:6]
    counters = readback[6:]
    claim = cp.empty(n, dtype=i64)  # per node: smallest HCD partner asking for it this round
    # HCD merges on the device (union_pairs / list_merges): a forest over the nodes, a
    # listed flag per node (neither is ever reset: a merged node never comes back) and
    # the merge lists.
    parent = cp.arange(n, dtype=i64)
    listed = cp.zeros(n, dtype=cp.int32)
    hcd_member = cp.empty(n, dtype=i64)
    hcd_root = cp.empty(n, dtype=i64)

    objects = cp.asarray(lay.objects, dtype=i64)
    obj_size = cp.asarray(lay.obj_size, dtype=i64)
    node_of_var = cp.array(lay.node_of_var, dtype=i64)  # relabelled in place: a copy
    # The node of each bit's object, relabelled with node_of_var after merges; and the
    # null object's bit (-1: not an object here), which stores skip.
    node_of_bit = node_of_var[objects]
    null_at = int(np.searchsorted(lay.objects, 1))
    null_bit = null_at if null_at < lay.objects.size and lay.objects[null_at] == 1 else -1
    bit_of_var = cp.asarray(lay.bit_of_var, dtype=i64)
    # Online HCD facts ride along as kind 5 with the pointer x in src and y in dst, last:
    # each round evaluates them first (their merges), then the first n_lsg constraints.
    kinds = np.concatenate([np.full(lay.load_src.size, 2), np.full(lay.store_src.size, 3),
                            np.full(lay.gep_src.size, 4), np.full(lay.hcd_x.size, 5)])
    kinds = kinds.astype(np.int32)
    c_kind = cp.asarray(kinds)
    c_src = cp.asarray(np.concatenate([lay.load_src, lay.store_src, lay.gep_src, lay.hcd_x]),
                       dtype=i64)
    c_dst = cp.asarray(np.concatenate([lay.load_dst, lay.store_dst, lay.gep_dst, lay.hcd_y]),
                       dtype=i64)
    c_off = cp.asarray(np.concatenate([lay.load_off, lay.store_off, lay.gep_off,
                                       np.zeros(lay.hcd_x.size, np.int64)]), dtype=i64)
    # The pointer nodes, whose deltas the complex rules read (take_delta computes only
    # these). A constraint keeps its pointer node for good (merges relabel only its other
    # end), so seen and D stay per pointer node (see take_delta in kernels/pta.cu).
    ptr_nodes = sorted_unique(np.concatenate([lay.load_src, lay.store_dst, lay.gep_src,
                                              lay.hcd_x]))
    is_ptr = cp.zeros(n, dtype=cp.uint8)
    is_ptr[cp.asarray(ptr_nodes.astype(np.int64))] = 1
    has_ptr = bool(ptr_nodes.size)
    leader = cp.arange(n, dtype=i64)  # node -> the node whose row it shares now
    n_complex = int(kinds.size)
    n_hcd = int(lay.hcd_x.size)
    n_lsg = n_complex - n_hcd

    a_row = cp.asarray(lay.addr_node, dtype=i64)
    a_bit = cp.asarray(lay.addr_bit, dtype=i64)
    if a_row.size:
        dev.set_bits(int(a_row.size), P, a_row, a_bit, np.int64(a_row.size), np.int64(W),
                     changed_at, np.int32(1), occupied, np.int64(block_words),
                     np.int64(bitmap_words), ext_blocks)

    keys = cp.sort(cp.asarray(lay.copy_dst * n + lay.copy_src, dtype=i64))
    in_src = keys % n
    out_keys = cp.sort(cp.asarray(lay.copy_src * n + lay.copy_dst, dtype=i64))
    out_dst = out_keys % n
    # Initial edges need no whole-row reads: only address-of rows are non-empty, and those
    # are read whole in the first sweep as changed rows.
    in_new = cp.zeros(keys.size, dtype=cp.uint8)
    capacity = max(MIN_KEY_BUFFER, int(keys.size))
    key_buf = cp.empty(capacity, dtype=i64)
    merge_capacity = MIN_MERGE_BUFFER
    merge_buf = cp.empty(merge_capacity, dtype=i64)
    node_ids = cp.arange(n + 1, dtype=i64) * n
    all_nodes = cp.arange(n, dtype=i64)
    max_sweeps = n + 2
    colour = cp.empty(n, dtype=i64)  # find_cycles' scratch and its list of merges
    mark = cp.empty(n, dtype=i64)
    candidates = cp.empty(2 * n, dtype=i64)
    cycle_member = cp.empty(n, dtype=i64)
    cycle_root = cp.empty(n, dtype=i64)
    cycle_counts = cp.zeros(16, dtype=cp.uint64)
    trim_flags = cp.empty(n, dtype=cp.int32)
    cycle_edges = {"cap": 0, "src": None, "dst": None}  # the live edges it compacts
    pending_edges = 0  # new edges since the last cycle search
    stats: dict[str, Any] = {"rounds": 0, "edges_added": 0, "nodes_merged": 0,
                             "grid": dev.grid, "delta_objects": 0, "slow_merges": 0,
                             "table_rebuilds": 0, "retries": 0, "cycles_collapsed": 0,
                             "cycle_sweeps": 0}
    events: list[tuple[tuple[str, int], Any, Any]] = []
    table = {"keys": None, "mask": 0, "fill": 0}
    round_counts: list[dict[str, int]] = []
    # MORPHGPU_PTA_SWEEP_LOG=N: the propagate kernel logs (time, items) of its first N
    # sweeps over the solve (stats["sweep_log"]); a profiling aid, off by default.
    log_cap = int(os.environ.get("MORPHGPU_PTA_SWEEP_LOG", "0"))
    sweep_log = cp.zeros(1 + 2 * log_cap, dtype=i64) if log_cap > 0 else None

    def rebuild_table(min_size: int = 0) -> None:
        """A key table holding exactly the current edges, at most an eighth full (it
        never shrinks: one round can add several times the edges there are)."""
        size = max(MIN_TABLE, min(MAX_TABLE, max(min_size, 8 * int(keys.size))))
        size = 1 << (size - 1).bit_length()
        if table["keys"] is None or table["keys"].size < size:
            table["keys"] = cp.empty(size, dtype=i64)
        table["keys"].fill(-1)
        table["mask"] = int(table["keys"].size) - 1
        counters[OVERFLOW:].fill(0)
        if keys.size:
            dev.insert_keys(int(keys.size), table["keys"], np.uint64(table["mask"]), keys,
                            np.int64(keys.size), counters[OVERFLOW:])
        table["fill"] = int(keys.size)
        stats["table_rebuilds"] += 1

    def timed(phase: str):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        return (phase, stats["rounds"]), start, stop

    # Sweep 0's items: the n plain ones, then the hubs' further chunks (list_hub_chunks).
    active = {"items": all_nodes, "cap": n}
    hubs = cp.empty(n, dtype=i64)

    def propagate() -> None:
        if keys.size == 0:
            return
        in_ptr = cp.searchsorted(keys, node_ids)
        out_ptr = cp.searchsorted(out_keys, node_ids)
        list_cap = n + (int(keys.size) // hub_chunk if hub_chunk else 0)
        if list_cap > todo["cap"]:
            todo["cap"] = int(list_cap * 1.25)
            todo["lists"] = cp.empty(3 * todo["cap"], dtype=i64)
        if list_cap > active["cap"]:
            active["cap"] = todo["cap"]
            active["items"] = cp.empty(active["cap"], dtype=i64)
            active["items"][:n] = all_nodes
        ph = timed("propagate")
        prop_counts.fill(0)
        if hub_chunk:
            dev.list_hub_chunks(n, in_ptr, np.int64(n), np.int64(hub_min), np.int64(hub_chunk),
                                active["items"], hubs, hub_counts, gained_blocks,
                                np.int64(bitmap_words))
        # Sweep 0 visits every node; one without in-edges costs a warp two reads.
        dev.propagate(P, np.int64(W), np.int64(block_words), np.int64(bitmap_words),
                      active["items"], hub_counts, np.int64(n), in_ptr, in_src, in_new,
                      out_ptr, out_dst, ext_blocks, changed_at, swept_at, gained_blocks,
                      occupied, queued_at,
                      todo["lists"], todo_tail, clock, np.int32(max_sweeps), error,
                      NULL if sweep_log is None else sweep_log,
                      np.int64(0 if sweep_log is None else (sweep_log.size - 1) // 2),
                      np.int64(todo["cap"]), np.int64(hub_min), np.int64(hub_chunk), hubs)
        ph[2].record()
        events.append(ph)

    n_labels = n + lay.n_vars + int(lay.objects.size) + n_complex

    def merge(member: Any, root: Any, count: Any) -> None:
        """Merge the current leaders ``member[:count]`` into ``root[:count]`` (current
        leaders that stay), the count a device word the host does not read: rows and
        bitmaps, then every node label the solver keeps (a constraint's pointer end
        excepted) through ``leader``, which then relabels the edge keys too (they hold
        leaders of before the merge). Two launches whatever merged."""
        dev.merge_rows(P, member, root, count, np.int64(W), changed_at, ext_blocks, clock,
                       occupied, np.int64(block_words), np.int64(bitmap_words), leader)
        dev.relabel_labels(n_labels, count, leader, np.int64(n), node_of_var,
                           np.int64(lay.n_vars), node_of_bit, np.int64(lay.objects.size),
                           c_kind, c_src, c_dst, np.int64(n_complex))

    def collapse_cycles(batch: Any) -> None:
        """Merge the nodes of the copy graph's cycles (kernels/cycles.cu finds them; a
        cycle's nodes share one set at the fixed point): the known edges mapped through
        ``leader`` (the round's HCD merges) and the round's new ``batch``. How many merged
        stays on the device (cycle_counts[1]) until the key relabelling reads it."""
        ph = timed("cycles")
        total = int(keys.size + batch.size)
        if cycle_edges["cap"] < total:
            cycle_edges["cap"] = int(total * 1.25)
            cycle_edges["src"] = cp.empty(cycle_edges["cap"], dtype=i64)
            cycle_edges["dst"] = cp.empty(cycle_edges["cap"], dtype=i64)
        cycle_counts.fill(0)
        dev.find_cycles(np.int64(n), keys, np.int64(keys.size), leader, batch,
                        np.int64(batch.size), colour, mark, trim_flags, candidates,
                        cycle_edges["src"], cycle_edges["dst"], cycle_member, cycle_root,
                        cycle_counts, np.int32(CYCLE_PASSES))
        merge(cycle_member, cycle_root, cycle_counts[1:2])
        ph[2].record()
        events.append(ph)

    def run_complex(lo: int, hi: int, ctr: Any) -> None:
        """eval_complex over constraints [lo, hi) with counter vector ``ctr``."""
        dev.eval_complex(
            hi - lo, c_kind[lo:hi], c_src[lo:hi], c_dst[lo:hi], c_off[lo:hi],
            np.int64(hi - lo), D, dblocks, P, np.int64(W), objects, node_of_bit,
            np.int64(null_bit), obj_size,
            node_of_var, bit_of_var, np.int64(lay.n_vars), np.int64(n), table["keys"],
            np.uint64(table["mask"]), key_buf, np.int64(capacity), merge_buf,
            np.int64(merge_capacity), ctr, claim, changed_at, clock, occupied,
            np.int64(block_words), np.int64(bitmap_words), ext_blocks)

    def hcd_merges() -> None:
        """Evaluate the HCD facts and apply their merges, all on the device: pairs, their
        union (smallest node leads), rows and labels. No host read."""
        claim.fill(-1)
        run_complex(n_lsg, n_complex, hcd_counters)
        dev.union_pairs(merge_capacity, merge_buf, hcd_counters[N_MERGE:N_MERGE + 1],
                        np.int64(merge_capacity), np.int64(n), parent)
        dev.list_merges(2 * merge_capacity, merge_buf, hcd_counters[N_MERGE:N_MERGE + 1],
                        np.int64(merge_capacity), np.int64(n), parent, listed, hcd_member,
                        hcd_root, hcd_members)
        merge(hcd_member, hcd_root, hcd_members)

    def read_round() -> list[int]:
        """The round's one host read: HCD counters, HCD members merged, then the others'
        counters (see readback)."""
        return [int(x) for x in backend.to_host(readback)]

    rebuild_table()
    if keys.size:
        collapse_cycles(keys[:0])
        keys, in_new, in_src, out_keys, found = _relabel_keys(
            cp, dev, keys, keys[:0], leader, n, cycle_counts[1:2])
        stats["cycles_collapsed"] += found
        out_dst = out_keys % n
        rebuild_table()
    propagate()
    for rnd in range(max_rounds):
        stats["rounds"] += 1
        ph = timed("complex")
        ext_blocks.fill(0)  # the last propagation read them
        if has_ptr:
            dev.take_delta(n, P, seen, D, np.int64(W), is_ptr, leader, occupied, dblocks,
                           np.int64(block_words),
                           np.int64(bitmap_words), changed_at, swept_at, np.int64(n),
                           take_clock, np.int32(rnd & 1), clock)
        # The HCD facts first, and their merges at once: the loads and stores then produce
        # edges between the merged leaders. Evaluated together (before), a php round
        # produced 22 million keys ending at nodes that the same round merged, almost all
        # self loops or repeats once relabelled, and sorted them all. Both evaluations'
        # counters come back in one read after the second (the merges between them happen
        # on the device): one host round trip a round where there were three.
        readback[:OVERFLOW + 6].fill(0)  # all but the table's sticky overflow word
        if n_hcd:
            hcd_merges()
        if n_lsg:
            run_complex(0, n_lsg, counters)
        r = read_round()
        h, merged_now, c = r[:5], r[5], r[6:]
        # Buffers too small: keys (or merge pairs) past a buffer's end are in the table
        # but were not written. Grow what was short, forget the keys (rebuild the table
        # from the known edges) and evaluate again. An overflowed table let repeats
        # through: the general merge drops them (a repeated merge pair is harmless); the
        # counts of an overflowed run overestimate its distinct keys, so one retry
        # suffices. The HCD facts are evaluated again alone: the loads' and stores' edges
        # of the first run hold leaders that the further merges relabel with the rest.
        raw = h[RAW]
        while h[N_MERGE] > merge_capacity:
            merge_capacity = int(h[N_MERGE] * 1.5)
            merge_buf = cp.empty(merge_capacity, dtype=i64)
            stats["retries"] += 1
            rebuild_table(4 * (int(keys.size) + c[N_NEW] + h[N_MERGE]))
            readback[:6].fill(0)
            hcd_merges()
            h = [int(x) for x in backend.to_host(readback[:6])]
            merged_now, raw = merged_now + h[5], raw + h[RAW]
        table["fill"] += h[N_MERGE]
        gep = c[GEP] & 0xFFFFFFFF
        while n_lsg and (c[N_NEW] > capacity
                         or (c[OVERFLOW] and table["keys"].size < MAX_TABLE)):
            if c[N_NEW] > capacity:
                capacity = int(c[N_NEW] * 1.5)
                key_buf = cp.empty(capacity, dtype=i64)
            stats["retries"] += 1
            rebuild_table(4 * (int(keys.size) + c[N_NEW]) if c[OVERFLOW] else 0)
            raw += c[RAW]
            counters[:OVERFLOW].fill(0)
            run_complex(0, n_lsg, counters)
            c = [int(x) for x in backend.to_host(counters)]
            gep |= c[GEP] & 0xFFFFFFFF
        stats["nodes_merged"] += merged_now
        ph[2].record()
        events.append(ph)
        n_new = c[N_NEW]
        gep_seen = gep != 0
        raw += c[RAW]
        stats["delta_objects"] += raw
        round_counts.append({"new": n_new, "merged": merged_now, "delta_objects": raw})
        table["fill"] += n_new
        found = 0
        searched = False
        pending_edges += n_new
        if pending_edges and pending_edges * CYCLE_EDGE_SHARE >= keys.size:
            pending_edges = 0
            searched = True
            collapse_cycles(key_buf[:n_new])
        ph = timed("merge")
        if merged_now or searched or c[OVERFLOW]:
            # Merges (HCD facts', cycles') relabel the known edges (some collapse or become
            # self loops) and an overflowed table may have let known or repeated keys
            # through. A searched round takes this path whether or not it found a cycle
            # (the count stays on the device until this relabelling's one read).
            stats["slow_merges"] += 1
            round_counts[-1]["general_merge"] = 1
            old_size = int(keys.size)
            keys, in_new, in_src, out_keys, found = _relabel_keys(
                cp, dev, keys, key_buf[:n_new], leader, n,
                cycle_counts[1:2] if searched else None)
            out_dst = out_keys % n
            added = int(keys.size) - old_size
            rebuild_table()
        elif n_new:
            # The batch and its reversed keys (biased past every key) in one sort.
            both = cp.empty(2 * n_new, dtype=i64)
            dev.pair_keys(n_new, key_buf, np.int64(n_new), np.int64(n), both)
            both = cp.sort(both)
            merged = cp.empty(keys.size + n_new, dtype=i64)
            in_new = cp.empty(merged.size, dtype=cp.uint8)
            in_src = cp.empty(merged.size, dtype=i64)
            dev.merge_batch(int(merged.size), keys, np.int64(keys.size), both,
                            np.int64(n_new), np.int64(0), merged, in_new, in_src, np.int64(n))
            keys = merged
            merged = cp.empty(keys.size, dtype=i64)
            out_dst = cp.empty(keys.size, dtype=i64)
            dev.merge_batch(int(merged.size), out_keys, np.int64(out_keys.size),
                            both[n_new:], np.int64(n_new), np.int64(n * n), merged, NULL,
                            out_dst, np.int64(n))
            out_keys = merged
            added = n_new
            if 2 * table["fill"] > table["keys"].size:
                rebuild_table()
        else:
            in_new = cp.zeros(keys.size, dtype=cp.uint8)
            added = 0
        if searched:
            round_counts[-1]["cycle_members"] = found
            stats["cycles_collapsed"] += found
            merged_now += found  # merged edges may outnumber new ones: go on regardless
        ph[2].record()
        events.append(ph)
        stats["edges_added"] += max(0, added)
        if progress is not None:
            progress({"round": stats["rounds"], "copy_edges": int(keys.size)})
        if added <= 0 and not gep_seen and not merged_now:
            break
        propagate()
    else:
        raise RuntimeError(f"pta: no fixed point after {max_rounds} rounds")
    err = int(backend.to_host(error)[0])
    if err:
        raise RuntimeError(f"pta: propagation did not converge within {max_sweeps} sweeps")
    dev.check()
    cp.cuda.get_current_stream().synchronize()
    seconds: dict[str, float] = {}
    per_round: list[dict[str, float]] = [{} for _ in range(stats["rounds"] + 1)]
    for (phase, rnd), start, stop in events:
        t = cp.cuda.get_elapsed_time(start, stop) / 1e3
        seconds[phase] = seconds.get(phase, 0.0) + t
        per_round[rnd][phase] = per_round[rnd].get(phase, 0.0) + t
    stats["seconds"] = seconds
    # Per round (entry 0: the first propagation): phase seconds and the counter values.
    stats["round_seconds"] = per_round
    stats["round_counts"] = round_counts
    if sweep_log is not None:
        log = backend.to_host(sweep_log)
        stats["sweep_log"] = log[1:1 + 2 * int(log[0])].reshape(-1, 2)
    stats["sweeps"] = int(backend.to_host(clock)[0])
    stats["copy_edges"] = int(keys.size)
    stats["wall_seconds"] = time.perf_counter() - t_start
    return P.reshape(n, W), backend.to_host(leader)[lay.node_of_var], stats


def _block_layout(words: int) -> tuple[int, int]:
    """(words per block, 64-bit words of a gained-block bitmap) for rows of ``words`` words.

    Blocks are warp multiples; at most 2048 blocks per row, so one bit per block fits in
    one register of each of a warp's 32 lanes.
    """
    block_words = WARP * -(-words // (WARP * 2048))
    n_blocks = -(-words // block_words)
    return block_words, -(-n_blocks // 64)


def _relabel_keys(cp: Any, dev: Any, old: Any, new: Any, relabel: Any, n: int,
                  also: Any = None) -> tuple[Any, Any, Any, Any, int]:
    """The known edge keys ``old`` (dst * n + src, sorted) and the round's ``new`` ones,
    both ends mapped through ``relabel``, sorted, without repeats or self loops: (keys, a
    uint8 flag per key, 1 for an edge that only ``new`` holds, the sources, the sorted
    reversed keys src * n + dst, the value of the uint64 device word ``also`` (None: 0),
    read with the kept count).

    Three launches around one sort of both lists tagged in their lowest bit (known 0, new
    1: the first of equal keys tells whether the edge was known) and one scan, with one
    read of the kept count. The list stays below a few million keys, where the sort costs
    tens of microseconds; what cost milliseconds before (two dozen array operations, each
    a launch issued from Python, and three host round trips) was the host's.
    """
    total = int(old.size) + int(new.size)
    if not total:
        extra = int(backend.to_host(also)[0]) if also is not None else 0
        return old, cp.zeros(0, dtype=cp.uint8), old, old, extra
    tagged = cp.empty(total, dtype=cp.int64)
    dev.relabel_tag(total, old, np.int64(old.size), new, np.int64(new.size), relabel,
                    np.int64(n), tagged)
    tagged = cp.sort(tagged)
    position = cp.empty(total, dtype=cp.int64)
    dev.first_of_key(total, tagged, np.int64(total), position)
    position = cp.cumsum(position)
    if also is None:
        kept, extra = int(backend.to_host(position[-1:])[0]), 0
    else:
        both = backend.to_host(cp.concatenate([position[-1:], also.view(cp.int64)]))
        kept, extra = int(both[0]), int(both[1])
    keys = cp.empty(kept, dtype=cp.int64)
    is_new = cp.empty(kept, dtype=cp.uint8)
    src = cp.empty(kept, dtype=cp.int64)
    reversed_keys = cp.empty(kept, dtype=cp.int64)
    dev.scatter_kept(total, tagged, position, np.int64(total), np.int64(n), keys, is_new, src,
                     reversed_keys)
    return keys, is_new, src, cp.sort(reversed_keys), extra
