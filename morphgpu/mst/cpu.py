"""Borůvka minimum spanning forest in NumPy: the GPU path's rounds, vectorised.

Each round (paper §5/§8.4, extended as in gpu.py):
1. filter: keep only edges whose endpoints lie in different components (the active
   edge set shrinks every round; edges never get merged into adjacency lists);
2. every component's lightest edge, by the packed (weight key, position) order;
3. each component points at the component across its lightest edge; two components that
   chose each other (the same edge) form the only possible cycle, broken by letting the
   smaller id be the root; pointer jumping then labels every vertex with its root.

The edges are processed in passes of increasing key (keys.pass_limits: one pass below
3 entries per vertex; a later pass takes every remaining key once keys.split_continues
finds too little of the rest live), exactly as on the GPU, so both report the same
rounds; each pass continues from the forest of the ones before.
"""

from __future__ import annotations

import numpy as np

from ..unique import sorted_unique
from . import keys as keymod

NO_EDGE = np.uint64(0xFFFFFFFFFFFFFFFF)


def candidate_edges(
    n: int, indptr: np.ndarray, indices: np.ndarray, symmetric: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source, target, CSR position) of every entry that can be a tree edge.

    Self-loops never can. On a symmetric graph the entry (u, v) with u < v stands for the
    pair: its twin (v, u) has the same weight and a larger position, so it never wins.
    """
    degrees = np.diff(indptr)
    src = np.repeat(np.arange(n, dtype=np.int64), degrees)
    dst = indices.astype(np.int64, copy=False)
    keep = src < dst if symmetric else src != dst
    positions = np.flatnonzero(keep)
    return src[positions], dst[positions], positions


def boruvka_rounds(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    packed: np.ndarray,
    component: np.ndarray,
) -> tuple[list[np.ndarray], int]:
    """Run rounds until no edge joins two components; returns (chosen packed values, rounds).

    ``component`` (vertex -> root label) is updated in place, so a second pass continues
    from the forest of the first.
    """
    chosen: list[np.ndarray] = []
    rounds = 0
    ru, rv = component[src], component[dst]
    while True:
        active = ru != rv
        src, dst, packed = src[active], dst[active], packed[active]
        ru, rv = ru[active], rv[active]
        if packed.size == 0:
            return chosen, rounds
        rounds += 1
        lightest = np.full(n, NO_EDGE, dtype=np.uint64)
        np.minimum.at(lightest, ru, packed)
        np.minimum.at(lightest, rv, packed)
        lightest_of_u = packed == lightest[ru]
        lightest_of_v = packed == lightest[rv]
        chosen.append(packed[lightest_of_u | lightest_of_v])

        successor = np.arange(n, dtype=np.int64)
        successor[ru[lightest_of_u]] = rv[lightest_of_u]
        successor[rv[lightest_of_v]] = ru[lightest_of_v]
        mutual = (successor[successor] == np.arange(n)) & (np.arange(n) < successor)
        successor[mutual] = np.flatnonzero(mutual)
        while True:
            jumped = successor[successor]
            if np.array_equal(jumped, successor):
                break
            successor = jumped
        component[:] = successor[component]
        ru, rv = successor[ru], successor[rv]


def minimum_spanning_forest(
    n: int,
    indptr: np.ndarray,
    indices: np.ndarray,
    weight_keys: np.ndarray,
    *,
    symmetric: bool,
) -> tuple[np.ndarray, int]:
    """Sorted CSR positions of the forest's edges, and the number of Borůvka rounds."""
    src, dst, positions = candidate_edges(n, indptr, indices, symmetric)
    cand_keys = weight_keys[positions].astype(np.uint64)
    packed = (cand_keys << np.uint64(32)) | positions.astype(np.uint64)
    component = np.arange(n, dtype=np.int64)
    chosen: list[np.ndarray] = []
    rounds = 0
    low = -1
    signed_keys = cand_keys.astype(np.int64)  # pass 0's lower bound is -1
    limits = keymod.pass_limits(weight_keys, n)
    sample = keymod.live_sample_positions(indices.size)
    sample_rows = np.searchsorted(indptr[1:], sample, side="right")
    sample_cols = indices[sample].astype(np.int64) if indices.size else sample
    sample_keys = weight_keys[sample].astype(np.int64) if indices.size else sample
    p = 0
    while p < len(limits):
        if 0 < p < len(limits) - 1:
            live = int(np.count_nonzero(
                (sample_keys > low) & (sample_rows != sample_cols)
                & (component[sample_rows] != component[sample_cols])))
            if not keymod.split_continues(live):
                limits = limits[:p] + [keymod.ALL_KEYS]
        limit = limits[p]
        taken = (signed_keys > low) & (signed_keys <= limit)
        more, more_rounds = boruvka_rounds(n, src[taken], dst[taken], packed[taken], component)
        chosen += more
        rounds += more_rounds
        low = limit
        p += 1
    if not chosen:
        return np.zeros(0, dtype=np.int64), rounds
    tree = np.concatenate(chosen) & np.uint64(0xFFFFFFFF)
    return sorted_unique(tree).astype(np.int64), rounds
