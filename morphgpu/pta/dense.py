"""Points-to analysis of small programs over dense bit matrices: the whole fixpoint in one
persistent GPU launch (kernels/dense.cu), and the same iteration in NumPy.

The round solver (gpu.py) pays fixed costs per round (launches, sorts, host reads), which
dominate a program of ten thousand nodes: on ex (9.5k nodes) its 21 rounds took 31 ms on
an H200, 4.3x our CPU path. Here the copy graph is an n x n bit matrix as well, each
iteration re-applies every rule to the current state and the loop stays on the device, so
the solve is one launch and one read of two counters. It fits where the edge matrix is
small: at most DENSE_MAX_NODES nodes (32 MiB of edges) and rows of at most
32 * LANE_WORDS words.

No merging (offline HCD facts, cycle collapsing): they only make equal sets share a row,
so one row per node is the same least solution.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from .. import backend, barrier
from ..unique import sorted_unique
from .cpu import set_bits, unpack_rows
from .layout import Layout

KERNEL_FILE = "pta/kernels/dense.cu"
DENSE_MAX_NODES = 16384
LANE_WORDS = 8  # PTA_DENSE_LANE_WORDS in kernels/dense.cu
KIND_LOAD, KIND_STORE, KIND_GEP = 0, 1, 2
BLOCK = 256
MAX_ITERATIONS = 1 << 24


def fits(lay: Layout) -> bool:
    """Whether ``lay`` is small enough for the dense solver."""
    return lay.n_nodes <= DENSE_MAX_NODES and lay.n_words <= 32 * LANE_WORDS


def require_fit(lay: Layout, who: str) -> None:
    if not fits(lay):
        raise ValueError(
            f"{who}: method='dense' takes at most {DENSE_MAX_NODES} nodes and "
            f"{32 * LANE_WORDS * 64} pointed-to objects; this program has {lay.n_nodes} "
            f"nodes and {lay.n_bits} objects (use method='auto' or 'rounds')")


def complex_table(lay: Layout) -> tuple[np.ndarray, ...]:
    """Loads, stores and geps as one table: kind, pointer node, other node, offset.

    A load ``other = *(ptr + off)`` adds an edge field -> other; a store
    ``*(ptr + off) = other`` adds other -> field; a gep ``other = &ptr->off`` adds a bit.
    """
    kind = np.concatenate([np.full(lay.load_src.size, KIND_LOAD),
                           np.full(lay.store_src.size, KIND_STORE),
                           np.full(lay.gep_src.size, KIND_GEP)]).astype(np.int64)
    ptr = np.concatenate([lay.load_src, lay.store_dst, lay.gep_src]).astype(np.int64)
    other = np.concatenate([lay.load_dst, lay.store_src, lay.gep_dst]).astype(np.int64)
    off = np.concatenate([lay.load_off, lay.store_off, lay.gep_off]).astype(np.int64)
    return kind, ptr, other, off


def _stats(iterations: int, edges: int, lay: Layout, seconds: float) -> dict[str, Any]:
    return {"method": "dense", "rounds": iterations, "sweeps": iterations,
            "copy_edges": edges, "edges_added": edges - int(lay.copy_src.size),
            "nodes_merged": 0, "cycles_collapsed": 0, "slow_merges": 0, "retries": 0,
            "seconds": {"dense": seconds}}


# ---------------------------------------------------------------------------- GPU
_KERNELS: dict[str, Any] = {}
_POPCOUNT: list[Any] = []


def _popcount(cp: Any) -> Any:
    """Set bits of a uint64 array, summed (a CuPy reduction)."""
    if not _POPCOUNT:
        _POPCOUNT.append(cp.ReductionKernel("uint64 x", "int64 y", "__popcll(x)", "a + b",
                                            "y = a", "0", "mg_popcount"))
    return _POPCOUNT[0]


def _kernel(barrier_mode: str) -> Any:
    if barrier_mode not in _KERNELS:
        sms = backend.gpu_properties()["multiprocessors"]
        _KERNELS[barrier_mode] = barrier.persistent_kernel(
            KERNEL_FILE, "pta_dense", mode=barrier_mode, block=BLOCK, max_blocks=sms,
            defines={"PTA_DENSE_LANE_WORDS": LANE_WORDS})
    return _KERNELS[barrier_mode]


def solve_gpu(lay: Layout, *, barrier_mode: str = "xiao-feng",
              max_iterations: int = MAX_ITERATIONS) -> tuple[Any, np.ndarray, dict[str, Any]]:
    """Rows (CuPy (n_nodes, words) uint64), the row of every variable, statistics."""
    require_fit(lay, "pta.solve")
    cp = backend.cupy_module()
    n, w = lay.n_nodes, lay.n_words
    edge_words = max(1, -(-n // 64))
    backend.require_gpu_bytes(8 * n * (w + edge_words), f"pta dense rows ({n} nodes)")
    t0 = time.perf_counter()
    kind, ptr, other, off = complex_table(lay)
    host = [lay.addr_node, lay.addr_bit, lay.copy_src, lay.copy_dst, kind, ptr, other, off,
            lay.objects, lay.obj_size, lay.node_of_var, lay.bit_of_var]
    # One upload for every table (each is a view of it).
    flat = cp.asarray(np.concatenate([np.asarray(a, dtype=np.int64) for a in host]))
    views, at = [], 0
    for a in host:
        views.append(flat[at:at + a.size])
        at += a.size
    (addr_node, addr_bit, copy_src, copy_dst, kind_d, ptr_d, other_d, off_d, objects,
     obj_size, node_of_var, bit_of_var) = views
    P = cp.zeros((n, w), dtype=cp.uint64)
    E = cp.zeros((n, edge_words), dtype=cp.uint64)
    changed = cp.zeros(3, dtype=cp.uint32)
    outcome = cp.zeros(2, dtype=cp.int64)
    kernel = _kernel(barrier_mode)
    kernel.launch(np.int64(n), np.int64(w), np.int64(edge_words), P, E,
                  np.int64(lay.addr_node.size), addr_node, addr_bit,
                  np.int64(lay.copy_src.size), copy_src, copy_dst,
                  np.int64(kind.size), kind_d, ptr_d, other_d, off_d,
                  np.int64(lay.n_vars), objects, obj_size, node_of_var, bit_of_var,
                  np.int64(max_iterations), changed, outcome)
    iterations, fixpoint = (int(x) for x in outcome.get())
    kernel.check()
    if not fixpoint:
        raise RuntimeError(f"pta: the dense solver reached no fixed point in {iterations} "
                           "iterations")
    seconds = time.perf_counter() - t0
    edges = int(_popcount(cp)(E))  # no self loops (the kernel skips them)
    return P, np.asarray(lay.node_of_var), _stats(iterations, edges, lay, seconds)


# ---------------------------------------------------------------------------- NumPy
def solve_numpy(lay: Layout, *, max_iterations: int = MAX_ITERATIONS
                ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The dense iteration on the host: each iteration applies the complex rules to the
    state at its start, then every copy edge once (Jacobi), until nothing changes."""
    require_fit(lay, "pta.solve")
    n, w = lay.n_nodes, lay.n_words
    backend.require_host_bytes(3 * 8 * n * w, f"pta dense rows ({n} nodes)")
    t0 = time.perf_counter()
    P = np.zeros((n, w), dtype=np.uint64)
    set_bits(P, lay.addr_node, lay.addr_bit)
    edge_keys = sorted_unique(lay.copy_src * n + lay.copy_dst)
    kind, ptr, other, off = complex_table(lay)
    for iteration in range(1, max_iterations + 1):
        before = P.copy()
        r, b = unpack_rows(P[ptr])
        k, o, f = kind[r], other[r], off[r]
        new_src, new_dst = [], []
        for which, is_store in ((KIND_LOAD, False), (KIND_STORE, True)):
            sel = k == which
            node = lay.field_node(b[sel], f[sel], is_store=is_store)
            ok = node >= 0
            pair = (node[ok], o[sel][ok]) if which == KIND_LOAD else (o[sel][ok], node[ok])
            new_src.append(pair[0])
            new_dst.append(pair[1])
        sel = k == KIND_GEP
        bits = lay.gep_bit(b[sel], f[sel])
        set_bits(P, o[sel][bits >= 0], bits[bits >= 0])
        src, dst = np.concatenate(new_src), np.concatenate(new_dst)
        keys = sorted_unique(src[src != dst] * n + dst[src != dst])
        grown = np.setdiff1d(keys, edge_keys, assume_unique=True)
        if grown.size:
            edge_keys = np.union1d(edge_keys, grown)
        # Copy edges, Jacobi: every row gains its in-neighbours' rows as they were.
        start = P.copy()
        np.bitwise_or.at(P, edge_keys % n, start[edge_keys // n])
        if not grown.size and np.array_equal(P, before):
            return P, np.asarray(lay.node_of_var), _stats(
                iteration, int(edge_keys.size), lay, time.perf_counter() - t0)
    raise RuntimeError(f"pta: the dense solver reached no fixed point in {max_iterations} "
                       "iterations")
