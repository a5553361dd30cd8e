"""The GPU path: rounds of complex-rule evaluation and pull-based propagation (kernels/pta.cu).

Per round the host launches ``take_delta`` and ``eval_complex``, reads back one pair of
counters (how many edge keys were produced, whether a gep added a bit: the buffer size and
the stopping decision need them), merges the nodes that online HCD facts name (the few
merge requests go to the host for a union; ``merge_rows`` ORs the rows on the device, and
constraints, variables and edges are relabelled by one gather each), merges the new keys
into the sorted incoming-edge CSR with one CuPy sort, and launches the persistent
``propagate`` kernel, which loops over sweeps on the device (mg::grid_sync between sweeps)
until nothing changes.

Why a per-round CSR rebuild instead of chunked incoming lists grown in the kernel: the
sweeps read every recent in-edge of a node as one contiguous run, which a sorted CSR gives
for free; a round adds its edges in bulk, and one radix sort of all keys (perl ends with
~55 k edges once HCD merges apply, ~9 M without) is expected to cost less than chasing
chunk lists in every sweep (not yet measured: see the wing's report).
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
                                               block=BLOCK)
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


def solve(layout: Layout, *, barrier_mode: str = "xiao-feng",
          max_rounds: int = 100000) -> tuple[Any, dict[str, Any]]:
    """Rows (CuPy (n_nodes, words) uint64), the row of every variable (NumPy), statistics."""
    cp = backend.cupy_module()
    n, W = layout.n_nodes, layout.n_words
    with backend.gpu_memory_guard(f"pta on {n} nodes x {W} words"):
        backend.require_gpu_bytes(3 * n * W * 8 + 64 * n, "pta bit rows (P, seen, delta)")
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
    changed_at = cp.full(n, -1, dtype=cp.int32)
    force = cp.zeros(n, dtype=cp.int32)
    clock = cp.ones(1, dtype=cp.int32)
    changes = cp.zeros(3, dtype=cp.uint32)
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

    a_row = cp.asarray(lay.addr_node, dtype=i64)
    a_bit = cp.asarray(lay.addr_bit, dtype=i64)
    if a_row.size:
        dev.set_bits(int(a_row.size), P, a_row, a_bit, np.int64(a_row.size), np.int64(W),
                     changed_at, np.int32(1))

    keys = cp.sort(cp.asarray(lay.copy_dst * n + lay.copy_src, dtype=i64))
    force[keys // n] = 1
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

    def propagate(keys: Any) -> None:
        in_ptr = cp.searchsorted(keys, node_ids)
        in_src = keys % n
        active = cp.flatnonzero(in_ptr[1:] > in_ptr[:-1]).astype(i64)
        if active.size == 0:
            return
        ph = timed("propagate")
        dev.propagate(P, np.int64(W), active, np.int64(active.size), in_ptr, in_src, force,
                    changed_at, clock, changes, np.int32(max_sweeps), error)
        ph[2].record()
        events.append(ph)

    propagate(keys)
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
                    counters[1:].view(cp.int32), changed_at, clock)
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
            merge_keys = new[new >= n * n] - n * n
            new = new[(new >= 0) & (new < n * n)]
            if merge_keys.size:
                remap = _leaders_after(backend.to_host(merge_keys), n)
                if remap is not None:
                    member, new_leader = remap
                    merged_now = int(member.size)
                    stats["nodes_merged"] += merged_now
                    dev.merge_rows(merged_now * W, P, seen, cp.asarray(member),
                                   cp.asarray(new_leader), np.int64(merged_now), np.int64(W),
                                   changed_at, force, clock)
                    table = np.arange(n, dtype=np.int64)
                    table[member] = new_leader
                    leader = table[leader]
                    table_dev = cp.asarray(table)
                    node_of_var = table_dev[node_of_var]
                    c_src = table_dev[c_src]
                    c_dst = table_dev[c_dst]
                    new = table_dev[new // n] * n + table_dev[new % n]
                    keys = table_dev[keys // n] * n + table_dev[keys % n]
                    keys = keys[(keys // n) != (keys % n)]
            new = new[(new // n) != (new % n)]
            merged = cp.sort(cp.concatenate([keys, new]))
            first = cp.empty(merged.size, dtype=cp.bool_)
            first[:1] = True
            first[1:] = merged[1:] != merged[:-1]
            keys = merged[first]
            force[new // n] = 1
            ph[2].record()
            events.append(ph)
        added = int(keys.size) - old_size
        stats["edges_added"] += max(0, added)
        if added <= 0 and not gep_seen and not merged_now:
            break
        propagate(keys)
    else:
        raise RuntimeError(f"pta: no fixed point after {max_rounds} rounds")
    err = int(backend.to_host(error)[0])
    if err:
        raise RuntimeError(f"pta: propagation did not converge within {max_sweeps} sweeps")
    cp.cuda.get_current_stream().synchronize()
    seconds: dict[str, float] = {}
    for phase, start, stop in events:
        seconds[phase] = seconds.get(phase, 0.0) + cp.cuda.get_elapsed_time(start, stop) / 1e3
    stats["seconds"] = seconds
    stats["sweeps"] = int(backend.to_host(clock)[0])
    stats["copy_edges"] = int(keys.size)
    stats["wall_seconds"] = time.perf_counter() - t_start
    return P.reshape(n, W), leader[lay.node_of_var], stats


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
