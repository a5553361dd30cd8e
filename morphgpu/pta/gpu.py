"""The GPU path: rounds of complex-rule evaluation and pull-based propagation (kernels/pta.cu).

Per round the host launches ``take_delta`` (only the rows that loads, stores, geps and HCD
facts point through, and of those only rows changed since the last round) and
``eval_complex``, and reads back one small counter vector (new edges, merge requests, gep
bit added, table overflow: the buffer sizes and the stopping decision need it). Every
produced edge key (dst*n+src) and merge request first goes through a device hash set of
the known keys, so the host receives only distinct, new edges: the rounds re-produce known
edges in bulk (constraints that merges made identical, objects a merged leader sees anew),
and on php sorting those repeats took most of the 2.8 s solve. A round without merges
then sorts only its batch and ``merge_batch`` places it into the sorted incoming
(dst*n+src) and outgoing (src*n+dst) key lists, one binary search per key, no host sync.
A round whose HCD facts merge nodes (the few requests go to the host for a union;
``merge_rows`` ORs the rows on the device; constraints, variables and edges are relabelled
by a gather each) takes the general merge (``_merge_keys``: one tagged sort) and rebuilds
the key table from the relabelled list. Then the persistent ``propagate`` kernel loops over
sweeps on the device (mg::grid_sync between sweeps) until nothing changes.

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
from . import dense
from .layout import Layout, union_leaders

KERNEL_FILE = "pta/kernels/pta.cu"
BLOCK = 256
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
        self._insert = mod.get_function("insert_keys")
        self._merge_batch = mod.get_function("merge_batch")
        self._prop = barrier.persistent_kernel(KERNEL_FILE, "propagate", mode=barrier_mode,
                                               block=BLOCK, defines={"PTA_BLOCK": BLOCK})
        self.grid = self._prop.grid

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

    def merge_rows(self, n_items: int, *args: Any) -> None:
        self._flat(self._merge, n_items, args)

    def insert_keys(self, n_items: int, *args: Any) -> None:
        self._flat(self._insert, n_items, args)

    def merge_batch(self, n_items: int, *args: Any) -> None:
        self._flat(self._merge_batch, n_items, args)

    def propagate(self, *args: Any) -> None:
        self._prop.launch(*args)

    def check(self) -> None:
        """Raise if a grid barrier of any propagate launch timed out (results invalid)."""
        self._prop.check()


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
MIN_MERGE_BUFFER = 1 << 12
NULL = np.uint64(0)  # a null device pointer (merge_batch tests `if (flag)`)
# Hubs: a node with more than HUB_MIN in-edges is pulled by one warp per HUB_CHUNK of them
# (kernels/pta.cu chunks_of); HUB_CHUNK = 0 pulls every node with one warp (the path
# before). On svn one warp pulling a merged leader's hundreds of in-edges set the length
# of most later sweeps. H200, one process (scripts/pta_compare.py, against c8d2d76):
# HUB_CHUNK 32 / HUB_MIN 64 made svn 1.94x faster (0.177 -> 0.091 s; later sweeps' median
# 115 -> 24 us), python 1.43x, gcc 1.17x, php 2.25x, mplayer 2.27x (64 / 128: 1.84x,
# 1.34x, 1.17x, 2.18x, 2.21x). Listing the hubs costs a host sync per propagation
# (~0.35 ms a round: ex 0.79x), so launches over fewer than HUB_MIN_EDGES edges skip it
# (ex has 6.8 k edges, perl 54 k). With the gate (H200, 2026-11-24, benchmarks/pta.py): ex
# 0.0306 s (0.037 s with hub listing on the day before), every referenced set exact.
HUB_CHUNK = 32
HUB_MIN = 64
HUB_MIN_EDGES = 20000


def _solve(cp: Any, dev: Any, lay: Layout, max_rounds: int,
           progress: Callable[[dict[str, int]], None] | None = None
           ) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """The round loop over array module ``cp`` and kernels ``dev`` (see CudaKernels)."""
    t_start = time.perf_counter()
    n, W = lay.n_nodes, lay.n_words
    i64 = cp.int64
    P = cp.zeros(n * W, dtype=cp.uint64)
    seen = cp.zeros_like(P)
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
    todo_tail = cp.zeros(3, dtype=cp.uint64)
    clock = cp.ones(1, dtype=cp.int32)
    take_clock = cp.zeros(2, dtype=cp.int32)  # clock at the last two takes (round parity)
    error = cp.zeros(1, dtype=cp.int32)
    counters = cp.zeros(5, dtype=cp.uint64)
    claim = cp.empty(n, dtype=i64)  # per node: smallest HCD partner asking for it this round

    objects = cp.asarray(lay.objects, dtype=i64)
    obj_size = cp.asarray(lay.obj_size, dtype=i64)
    node_of_var = cp.asarray(lay.node_of_var, dtype=i64)
    bit_of_var = cp.asarray(lay.bit_of_var, dtype=i64)
    # Online HCD facts ride along as kind 5 with the pointer x in src and y in dst.
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
    # The rows whose deltas the complex rules read (take_delta computes only these).
    # (a flag per node, not a list: relabelling after merges then needs no unique/sync).
    ptr_nodes = np.unique(np.concatenate([lay.load_src, lay.store_dst, lay.gep_src, lay.hcd_x]))
    ptr_nodes = cp.asarray(ptr_nodes.astype(np.int64))
    is_ptr = cp.zeros(n, dtype=cp.uint8)
    is_ptr[ptr_nodes] = 1
    has_ptr = bool(ptr_nodes.size)
    leader = cp.arange(n, dtype=i64)  # node -> the node whose row it shares now
    n_complex = int(kinds.size)

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
    stats: dict[str, Any] = {"rounds": 0, "edges_added": 0, "nodes_merged": 0,
                             "grid": dev.grid, "delta_objects": 0, "slow_merges": 0,
                             "table_rebuilds": 0, "retries": 0}
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

    def hub_items(in_ptr: Any) -> tuple[Any, Any, int, int]:
        """(sweep 0's items: every node, then every hub's further chunks; the hubs; the
        capacity of a sweep's list; the launch's hub chunk, 0 for none: the kernel then
        takes no node for a hub). The hubs are few, so their chunks are listed on the
        host (one sync per propagation)."""
        if not hub_chunk or keys.size < HUB_MIN_EDGES:
            return all_nodes, None, n, 0
        deg = in_ptr[1:] - in_ptr[:-1]
        hubs = cp.flatnonzero(deg > hub_min)
        if not hubs.size:
            return all_nodes, None, n, hub_chunk
        h = backend.to_host(hubs).astype(np.int64)
        extra = -(-backend.to_host(deg[hubs]).astype(np.int64) // hub_chunk) - 1
        first = np.repeat(np.cumsum(extra) - extra, extra)
        chunk = np.arange(int(extra.sum()), dtype=np.int64) - first + 1
        more = np.repeat(h, extra) + chunk * n
        gained_blocks[:n * bitmap_words].fill(0)  # sweep 0's buffer: hubs OR into it
        return (cp.concatenate([all_nodes, cp.asarray(more, dtype=i64)]),
                cp.asarray(h, dtype=i64), n + int(keys.size) // hub_chunk, hub_chunk)

    def propagate() -> None:
        if keys.size == 0:
            return
        in_ptr = cp.searchsorted(keys, node_ids)
        out_ptr = cp.searchsorted(out_keys, node_ids)
        active, hubs, list_cap, launch_chunk = hub_items(in_ptr)
        if list_cap > todo["cap"]:
            todo["cap"] = int(list_cap * 1.25)
            todo["lists"] = cp.empty(3 * todo["cap"], dtype=i64)
        ph = timed("propagate")
        todo_tail.fill(0)
        # Sweep 0 visits every node; one without in-edges costs a warp two reads.
        dev.propagate(P, np.int64(W), np.int64(block_words), np.int64(bitmap_words),
                      active, np.int64(active.size), np.int64(n), in_ptr, in_src, in_new,
                      out_ptr, out_dst, ext_blocks, changed_at, swept_at, gained_blocks,
                      occupied, queued_at,
                      todo["lists"], todo_tail, clock, np.int32(max_sweeps), error,
                      NULL if sweep_log is None else sweep_log,
                      np.int64(0 if sweep_log is None else (sweep_log.size - 1) // 2),
                      np.int64(todo["cap"]), np.int64(hub_min), np.int64(launch_chunk),
                      NULL if hubs is None else hubs,
                      np.int64(0 if hubs is None else hubs.size))
        ph[2].record()
        events.append(ph)

    rebuild_table()
    propagate()
    for rnd in range(max_rounds):
        stats["rounds"] += 1
        ph = timed("complex")
        ext_blocks.fill(0)  # the last propagation read them
        if has_ptr:
            dev.take_delta(n, P, seen, D, np.int64(W), is_ptr, occupied, dblocks,
                           np.int64(block_words),
                           np.int64(bitmap_words), changed_at, swept_at, np.int64(n),
                           take_clock, np.int32(rnd & 1), clock)
        gep_seen = False
        while True:
            counters[:OVERFLOW].fill(0)
            claim.fill(-1)
            if n_complex:
                dev.eval_complex(
                    n_complex, c_kind, c_src, c_dst, c_off, np.int64(n_complex), D, dblocks,
                    P, np.int64(W), objects, obj_size, node_of_var, bit_of_var,
                    np.int64(lay.n_vars), np.int64(n), table["keys"], np.uint64(table["mask"]),
                    key_buf, np.int64(capacity), merge_buf, np.int64(merge_capacity),
                    counters, claim, changed_at, clock, occupied, np.int64(block_words),
                    np.int64(bitmap_words), ext_blocks)
            c = [int(x) for x in backend.to_host(counters)]
            gep_seen |= (c[GEP] & 0xFFFFFFFF) != 0
            table_full = c[OVERFLOW] and table["keys"].size < MAX_TABLE
            if c[N_NEW] <= capacity and c[N_MERGE] <= merge_capacity and not table_full:
                break
            # Keys past a buffer's end are in the table but were not written, and an
            # overflowed table let repeats through: grow what was short, forget the round's
            # keys (rebuild from the known edges) and evaluate again. The counts of an
            # overflowed round overestimate its distinct keys, so one retry suffices.
            if c[N_NEW] > capacity:
                capacity = int(c[N_NEW] * 1.5)
                key_buf = cp.empty(capacity, dtype=i64)
            if c[N_MERGE] > merge_capacity:
                merge_capacity = int(c[N_MERGE] * 1.5)
                merge_buf = cp.empty(merge_capacity, dtype=i64)
            stats["retries"] += 1
            rebuild_table(4 * (int(keys.size) + c[N_NEW] + c[N_MERGE]) if c[OVERFLOW] else 0)
        ph[2].record()
        events.append(ph)
        n_new, n_req = c[N_NEW], c[N_MERGE]
        stats["delta_objects"] += c[RAW]
        round_counts.append({"new": n_new, "merge_requests": n_req, "delta_objects": c[RAW]})
        table["fill"] += n_new + n_req
        remap = _leaders_after(backend.to_host(merge_buf[:n_req]), n) if n_req else None
        merged_now = 0 if remap is None else int(remap[0].size)
        ph = timed("merge")
        if remap is not None or c[OVERFLOW]:
            # Merges relabel edges (some collapse or become self loops) and an overflowed
            # table may have let known or repeated keys through: the general merge.
            stats["slow_merges"] += 1
            round_counts[-1]["general_merge"] = 1
            old_size = int(keys.size)
            new = key_buf[:n_new]
            if remap is not None:
                member, new_leader = (cp.asarray(x) for x in remap)
                stats["nodes_merged"] += merged_now
                dev.merge_rows(merged_now * W, P, seen, member, new_leader,
                               np.int64(merged_now), np.int64(W), changed_at, ext_blocks,
                               clock, occupied, np.int64(bitmap_words))
                relabel_dev = cp.arange(n, dtype=i64)
                relabel_dev[member] = new_leader
                leader = relabel_dev[leader]
                node_of_var = relabel_dev[node_of_var]
                c_src = relabel_dev[c_src]
                c_dst = relabel_dev[c_dst]
                is_ptr.fill(0)
                is_ptr[leader[ptr_nodes]] = 1
                new = relabel_dev[new // n] * n + relabel_dev[new % n]
                # Relabelled edges are not new: a leader holds its members' sets, which held
                # their in-neighbours', and its readers pull its changed (all) blocks.
                keys = relabel_dev[keys // n] * n + relabel_dev[keys % n]
            keys, in_new = _merge_keys(cp, keys, None, new, n)
            in_src = keys % n
            out_keys = cp.sort((keys % n) * n + keys // n)
            out_dst = out_keys % n
            added = int(keys.size) - old_size
            rebuild_table()
        elif n_new:
            batch = cp.sort(key_buf[:n_new])
            merged = cp.empty(keys.size + n_new, dtype=i64)
            in_new = cp.empty(merged.size, dtype=cp.uint8)
            in_src = cp.empty(merged.size, dtype=i64)
            dev.merge_batch(int(merged.size), keys, np.int64(keys.size), batch,
                            np.int64(n_new), merged, in_new, in_src, np.int64(n))
            keys = merged
            out_batch = cp.sort((batch % n) * n + batch // n)
            merged = cp.empty(keys.size, dtype=i64)
            out_dst = cp.empty(keys.size, dtype=i64)
            dev.merge_batch(int(merged.size), out_keys, np.int64(out_keys.size), out_batch,
                            np.int64(n_new), merged, NULL, out_dst, np.int64(n))
            out_keys = merged
            added = n_new
            if 2 * table["fill"] > table["keys"].size:
                rebuild_table()
        else:
            in_new = cp.zeros(keys.size, dtype=cp.uint8)
            added = 0
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


def _merge_keys(cp: Any, old: Any, old_is_new: Any, new: Any, n: int) -> tuple[Any, Any]:
    """The sorted distinct edge keys (dst * n + src, no self loops) of ``old`` and ``new``,
    and a uint8 flag per key: 1 for an edge that is new this round (in ``new`` only, or
    only among the ``old`` keys marked by ``old_is_new``, which merges relabelled).

    One sort of all keys tagged in their lowest bit (old 0, new 1), so the first of equal
    keys tells whether the edge was known. The edge lists stay below a million keys on the
    shared programs, where a radix sort costs far less than the per-call overhead of a
    longer sequence of smaller array operations; produced keys that repeat known edges are
    dropped before this (see ``_solve``).
    """
    old_tag = old * 2 if old_is_new is None else old * 2 + old_is_new
    tagged = cp.sort(cp.concatenate([old_tag, new * 2 + 1]))
    key = tagged >> 1
    keep = cp.empty(tagged.size, dtype=cp.bool_)
    keep[:1] = True
    keep[1:] = key[1:] != key[:-1]
    keep &= (key // n) != (key % n)
    kept = tagged[keep]
    return kept >> 1, (kept & 1).astype(cp.uint8)


def _leaders_after(pairs: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """(member, leader) of every current leader that merging ``pairs`` (a * n + b) absorbs.

    The pairs are few (objects newly found behind HCD pointers), so the union is computed
    on the host; each component's smallest node leads it.
    """
    a, b = pairs // n, pairs % n
    keep = a != b
    a, b = a[keep], b[keep]
    if not a.size:
        return None
    nodes, lead = union_leaders(a, b)
    moved = lead != nodes
    return nodes[moved], lead[moved]
