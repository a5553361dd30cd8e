"""The GPU path: rounds of complex-rule evaluation and pull-based propagation (kernels/pta.cu).

Per round the host launches ``take_delta`` and ``eval_complex``, reads back one pair of
counters (how many edge keys were produced, whether a gep added a bit: the buffer size and
the stopping decision need them), merges the nodes that online HCD facts name (the few
merge requests go to the host for a union; ``merge_rows`` ORs the rows on the device, and
constraints, variables and the edges at merged nodes are relabelled by a gather each),
merges the round's new edges into the sorted incoming key list (dst*n+src; one tagged sort
flags the new edges, ``_merge_keys``) and sorts the outgoing list (src*n+dst) from it,
and launches the persistent ``propagate`` kernel, which
loops over sweeps on the device (mg::grid_sync between sweeps) until nothing changes.

Propagation is difference propagation over blocks of 32 words (2048 objects): the first
sweep of a round pulls whole rows (the blocks a per-row ``occupied`` bitmap names) only
along new edges and from rows that the complex rules or merges grew; every later sweep
pulls, for each node queued by the previous sweep (the shared BlockWorklist, with the
out-edge lists saying whom a gain concerns), only the blocks its in-neighbours gained in
the previous sweep (a per-node bitmap of gained blocks, double-buffered by sweep parity).
A warp pulls 32 in-edges at a time, block by block, with the neighbours' words of a block
loaded in batches, so hubs with many changed in-neighbours do not serialise one memory
round trip per neighbour.

Why sorted key lists instead of chunked incoming lists grown in the kernel (ChunkPool):
the sweeps read every in-edge of a node as one contiguous run, which a sorted CSR gives
for free, and the rounds add their edges in bulk after one counter read the loop needs
anyway. The final edge lists of the shared programs hold 7 k to 0.7 M keys: sorting them
costs less than a millisecond per round, so chasing chunk lists in every sweep is not
expected to pay (the round's host-side merge time is in ``stats["seconds"]["merge"]``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import backend, barrier, kernels
from .layout import Layout, union_leaders

KERNEL_FILE = "pta/kernels/pta.cu"
BLOCK = 256
WARP = 32


class CudaKernels:
    """The four kernels of kernels/pta.cu behind plain calls (the solver's only device code).

    ``_solve`` takes any object with these methods; the CPU tests drive the round logic
    with a NumPy stand-in of each kernel (tests/test_pta_gpu_rounds.py).
    """

    def __init__(self, barrier_mode: str) -> None:
        mod = kernels.load_module(KERNEL_FILE)
        self._set_bits = mod.get_function("set_bits")
        self._delta = mod.get_function("take_delta")
        self._complex = mod.get_function("eval_complex")
        self._merge = mod.get_function("merge_rows")
        self._prop = barrier.persistent_kernel(KERNEL_FILE, "propagate", mode=barrier_mode,
                                               block=BLOCK, defines={"PTA_BLOCK": BLOCK})
        self.grid = self._prop.grid

    @staticmethod
    def _flat(kernel: Any, n_items: int, args: tuple) -> None:
        grid, block = kernels.launch_config(n_items, BLOCK, max_blocks=65535)
        kernel(grid, block, args)

    def set_bits(self, n_items: int, *args: Any) -> None:
        self._flat(self._set_bits, n_items, args)

    def take_delta(self, n_items: int, *args: Any) -> None:
        self._flat(self._delta, n_items, args)

    def eval_complex(self, n_constraints: int, *args: Any) -> None:
        self._flat(self._complex, n_constraints * WARP, args)

    def merge_rows(self, n_items: int, *args: Any) -> None:
        self._flat(self._merge, n_items, args)

    def propagate(self, *args: Any) -> None:
        self._prop.launch(*args)

    def check(self) -> None:
        """Raise if a grid barrier of any propagate launch timed out (results invalid)."""
        self._prop.check()


def solve(layout: Layout, *, barrier_mode: str = "xiao-feng",
          max_rounds: int = 100000) -> tuple[Any, dict[str, Any]]:
    """Rows (CuPy (n_nodes, words) uint64), the row of every variable (NumPy), statistics."""
    cp = backend.cupy_module()
    n, W = layout.n_nodes, layout.n_words
    with backend.gpu_memory_guard(f"pta on {n} nodes x {W} words"):
        backend.require_gpu_bytes(3 * n * W * 8 + 24 * n * _block_layout(W)[1] + 96 * n,
                                  "pta bit rows (P, seen, delta) and gained-block bitmaps")
        return _solve(cp, CudaKernels(barrier_mode), layout, max_rounds)


def _solve(cp: Any, dev: Any, lay: Layout,
           max_rounds: int) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """The round loop over array module ``cp`` and kernels ``dev`` (see CudaKernels)."""
    t_start = time.perf_counter()
    n, W = lay.n_nodes, lay.n_words
    i64 = cp.int64
    P = cp.zeros(n * W, dtype=cp.uint64)
    seen = cp.zeros_like(P)
    D = cp.zeros_like(P)
    changed_at = cp.full(n, -1, dtype=cp.int32)  # clock value when rules outside sweeps grew
    force = cp.zeros(n, dtype=cp.int32)
    block_words, bitmap_words = _block_layout(W)
    swept_at = cp.full(2 * n, -1, dtype=cp.int32)  # per sweep parity: stamp of the last gain
    gained_blocks = cp.zeros(2 * n * bitmap_words, dtype=cp.uint64)
    occupied = cp.zeros(n * bitmap_words, dtype=cp.uint64)  # per row: blocks holding a bit
    queued_at = cp.full(n, -1, dtype=cp.int32)  # stamp of the sweep that last queued a node
    todo = cp.empty(3 * n, dtype=i64)  # three rotating lists of the nodes to pull
    todo_tail = cp.zeros(3, dtype=cp.uint64)
    clock = cp.ones(1, dtype=cp.int32)
    error = cp.zeros(1, dtype=cp.int32)
    counters = cp.zeros(2, dtype=cp.uint64)  # [edge keys produced, gep added a bit]

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
    leader = np.arange(n, dtype=np.int64)  # node -> the node whose row it shares now
    n_complex = int(kinds.size)
    n_hcd = int(lay.hcd_x.size)

    a_row = cp.asarray(lay.addr_node, dtype=i64)
    a_bit = cp.asarray(lay.addr_bit, dtype=i64)
    if a_row.size:
        dev.set_bits(int(a_row.size), P, a_row, a_bit, np.int64(a_row.size), np.int64(W),
                     changed_at, np.int32(1), occupied, np.int64(block_words),
                     np.int64(bitmap_words))

    keys = cp.sort(cp.asarray(lay.copy_dst * n + lay.copy_src, dtype=i64))
    out_keys = cp.sort(cp.asarray(lay.copy_src * n + lay.copy_dst, dtype=i64))
    # Initial edges need no whole-row reads: only address-of rows are non-empty, and those
    # are read whole in the first sweep as changed rows.
    in_new = cp.zeros(keys.size, dtype=cp.uint8)
    capacity = max(1 << 20, 4 * int(keys.size))
    key_buf = cp.empty(capacity, dtype=i64)
    node_ids = cp.arange(n + 1, dtype=i64) * n
    max_sweeps = n + 2
    stats: dict[str, Any] = {"rounds": 0, "edges_added": 0, "nodes_merged": 0,
                             "grid": dev.grid}
    events: list[tuple[str, Any, Any]] = []

    def timed(phase: str):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        return phase, start, stop

    def propagate(keys: Any, in_new: Any, out_keys: Any) -> None:
        in_ptr = cp.searchsorted(keys, node_ids)
        in_src = keys % n
        active = cp.flatnonzero(in_ptr[1:] > in_ptr[:-1]).astype(i64)
        if active.size == 0:
            return
        out_ptr = cp.searchsorted(out_keys, node_ids)
        out_dst = out_keys % n
        ph = timed("propagate")
        todo_tail.fill(0)
        dev.propagate(P, np.int64(W), np.int64(block_words), np.int64(bitmap_words), active,
                      np.int64(active.size), np.int64(n), in_ptr, in_src, in_new, out_ptr,
                      out_dst, force, changed_at, swept_at, gained_blocks, occupied, queued_at,
                      todo, todo_tail, clock, np.int32(max_sweeps), error)
        ph[2].record()
        events.append(ph)

    propagate(keys, in_new, out_keys)
    for _ in range(max_rounds):
        stats["rounds"] += 1
        ph = timed("complex")
        dev.take_delta(n * W, P, seen, D, np.int64(n * W))
        gep_seen = False
        while True:
            counters.fill(0)
            if n_complex:
                dev.eval_complex(
                    n_complex, c_kind, c_src, c_dst, c_off, np.int64(n_complex), D, P,
                    np.int64(W), objects, obj_size, node_of_var, bit_of_var,
                    np.int64(lay.n_vars), np.int64(n), key_buf, counters, np.int64(capacity),
                    counters[1:].view(cp.int32), changed_at, clock, occupied,
                    np.int64(block_words), np.int64(bitmap_words))
            produced, gep_flag = (int(x) for x in backend.to_host(counters))
            gep_seen |= gep_flag != 0
            if produced <= capacity:
                break
            capacity = int(produced * 1.5)
            key_buf = cp.empty(capacity, dtype=i64)
        ph[2].record()
        events.append(ph)
        old_size = int(keys.size)
        merged_now = 0
        if produced:
            ph = timed("merge")
            new = key_buf[:produced]
            valid = (new >= 0) & (new < n * n)
            if keys.size and produced > keys.size:
                # Most produced keys then repeat known edges: a binary search drops them
                # before the sort.
                at = cp.minimum(cp.searchsorted(keys, new), keys.size - 1)
                valid &= keys[at] != new
            merge_keys = new[new >= n * n] - n * n if n_hcd else new[:0]
            new = new[valid]
            old_is_new = None
            if merge_keys.size:
                remap = _leaders_after(backend.to_host(merge_keys), n)
                if remap is not None:
                    member, new_leader = remap
                    merged_now = int(member.size)
                    stats["nodes_merged"] += merged_now
                    dev.merge_rows(merged_now * W, P, seen, cp.asarray(member),
                                   cp.asarray(new_leader), np.int64(merged_now), np.int64(W),
                                   changed_at, force, clock, occupied, np.int64(bitmap_words))
                    table = np.arange(n, dtype=np.int64)
                    table[member] = new_leader
                    leader = table[leader]
                    table_dev = cp.asarray(table)
                    node_of_var = table_dev[node_of_var]
                    c_src = table_dev[c_src]
                    c_dst = table_dev[c_dst]
                    new = table_dev[new // n] * n + table_dev[new % n]
                    # Edges at a merged node change their key and count as new (their
                    # readers pull whole rows).
                    moved = cp.zeros(n, dtype=cp.bool_)
                    moved[cp.asarray(member)] = True
                    old_is_new = moved[keys // n] | moved[keys % n]
                    keys = table_dev[keys // n] * n + table_dev[keys % n]
            keys, in_new = _merge_keys(cp, keys, old_is_new, new, n)
            out_keys = cp.sort((keys % n) * n + keys // n)
            ph[2].record()
            events.append(ph)
        else:
            in_new = cp.zeros(keys.size, dtype=cp.uint8)
        added = int(keys.size) - old_size
        stats["edges_added"] += max(0, added)
        if added <= 0 and not gep_seen and not merged_now:
            break
        propagate(keys, in_new, out_keys)
    else:
        raise RuntimeError(f"pta: no fixed point after {max_rounds} rounds")
    err = int(backend.to_host(error)[0])
    if err:
        raise RuntimeError(f"pta: propagation did not converge within {max_sweeps} sweeps")
    dev.check()
    cp.cuda.get_current_stream().synchronize()
    seconds: dict[str, float] = {}
    for phase, start, stop in events:
        seconds[phase] = seconds.get(phase, 0.0) + cp.cuda.get_elapsed_time(start, stop) / 1e3
    stats["seconds"] = seconds
    stats["sweeps"] = int(backend.to_host(clock)[0])
    stats["copy_edges"] = int(keys.size)
    stats["wall_seconds"] = time.perf_counter() - t_start
    return P.reshape(n, W), leader[lay.node_of_var], stats


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
