"""The CPU path: the GPU's rounds in NumPy/SciPy over dense bit rows.

Each round (1) evaluates loads, stores and geps against what each pointer gained since
the last evaluation (difference propagation: ``P & ~P_seen``), adding copy edges and gep
bits, and merges the objects that online HCD facts name with their partner; (2) collapses
the cycles of the copy graph for good (strongly connected components, SciPy), since
members of a cycle share one set forever; (3) propagates along the acyclic
copy graph once, in topological levels, each edge carrying only what its source gained
this round (new edges carry the whole set). Rounds end when (1) finds nothing new.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .. import backend
from ..unique import sorted_unique
from .constraints import NULL_OBJECT
from .layout import Layout, union_leaders

BIT_ORDER = "little"


def unpack_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row index, bit index) of every set bit of a (k, W) uint64 block, row-major."""
    r, w = np.nonzero(rows)
    if not r.size:
        return r.astype(np.int64), w.astype(np.int64)
    words = rows[r, w]
    bits = np.unpackbits(words.view(np.uint8).reshape(-1, 8), axis=1, bitorder=BIT_ORDER)
    k, b = np.nonzero(bits)
    return r[k].astype(np.int64), (w[k].astype(np.int64) << 6) | b


def rows_differing(a: np.ndarray, b: np.ndarray, chunk_bytes: int = 1 << 25) -> np.ndarray:
    """Indices of the rows where two equally shaped bit blocks differ (bounded temporaries)."""
    step = max(1, chunk_bytes // max(1, a.shape[1] * 8))
    out = [np.flatnonzero(np.any(a[i:i + step] != b[i:i + step], axis=1)) + i
           for i in range(0, a.shape[0], step)]
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def set_bits(rows: np.ndarray, row: np.ndarray, bit: np.ndarray) -> None:
    """rows[row] |= 1 << bit, duplicates allowed."""
    if row.size:
        words = np.left_shift(np.uint64(1), (bit & 63).astype(np.uint64))
        np.bitwise_or.at(rows, (row, bit >> 6), words)


def _or_by_group(block: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OR the rows of ``block`` sharing a ``group`` id: (groups, OR per group)."""
    order = np.argsort(group, kind="stable")
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    return g[starts], np.bitwise_or.reduceat(block[order], starts, axis=0)


class CpuSolver:
    """State of one solve; :meth:`run` returns (rows per leader, leader per node, stats)."""

    CHUNK_BYTES = 1 << 25  # bound on the rows gathered at once (temporary memory)

    def __init__(self, layout: Layout,
                 progress: Callable[[dict[str, int]], None] | None = None) -> None:
        self.lay = layout
        self.progress = progress
        n, w = layout.n_nodes, layout.n_words
        # P, seen and the per-round delta are n x w words each.
        backend.require_host_bytes(3 * n * w * 8, f"points-to bit rows ({n} nodes x {w} words)")
        self.P = np.zeros((n, w), dtype=np.uint64)
        self.seen = np.zeros((n, w), dtype=np.uint64)  # what the complex rules have read
        self.leader = np.arange(n, dtype=np.int64)
        self.edge_keys = np.zeros(0, dtype=np.int64)  # src * n + dst over leaders, sorted
        self.stats: dict[str, Any] = {"rounds": 0, "edges_added": 0, "cycles_collapsed": 0,
                                      "nodes_merged": 0,
                                      "seconds": {"complex": 0.0, "collapse": 0.0,
                                                  "propagate": 0.0}}

    # ------------------------------------------------------------------ complex rules
    def _evaluate_complex(self, start: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """New copy edges (src, dst leaders) and whether a gep added a bit."""
        lay, P, lead = self.lay, self.P, self.leader
        changed = rows_differing(P, self.seen)
        pos = np.full(lay.n_nodes, -1, dtype=np.int64)
        pos[changed] = np.arange(changed.size)
        delta = P[changed] & ~self.seen[changed]
        self.seen[changed] = P[changed]
        n = lay.n_nodes
        srcs, dsts = [], []
        gep_added = False

        def deltas_of(ptr: np.ndarray, other: np.ndarray, off: np.ndarray):
            """(other leader, offset, bit) for each new object of each constraint's pointer.

            Constraints that cycle collapsing made identical are evaluated once.
            """
            lp = lead[ptr]
            sel = pos[lp] >= 0
            if not sel.any():
                e = np.zeros(0, dtype=np.int64)
                return e, e, e
            key = sorted_unique((lp[sel] * n + lead[other[sel]]) * (int(off.max()) + 1)
                                + off[sel])
            k_off = key % (int(off.max()) + 1)
            k_other = (key // (int(off.max()) + 1)) % n
            k_row = pos[key // (int(off.max()) + 1) // n]
            out_o, out_f, out_b = [], [], []
            step = max(1, (1 << 24) // (lay.n_words * 64))
            for a in range(0, key.size, step):
                r, b = unpack_rows(delta[k_row[a:a + step]])
                out_o.append(k_other[a:a + step][r])
                out_f.append(k_off[a:a + step][r])
                out_b.append(b)
            return np.concatenate(out_o), np.concatenate(out_f), np.concatenate(out_b)

        dst, off, b = deltas_of(lay.load_src, lay.load_dst, lay.load_off)
        if b.size:
            t = lay.field_node(b, off, is_store=False)
            ok = t >= 0
            srcs.append(lead[t[ok]])
            dsts.append(dst[ok])
        src, off, b = deltas_of(lay.store_dst, lay.store_src, lay.store_off)
        if b.size:
            t = lay.field_node(b, off, is_store=True)
            ok = t >= 0
            srcs.append(src[ok])
            dsts.append(lead[t[ok]])
        dst, off, b = deltas_of(lay.gep_src, lay.gep_dst, lay.gep_off)
        if b.size:
            tbit = lay.gep_bit(b, off)
            ok = tbit >= 0
            tbit = tbit[ok]
            rows = dst[ok]
            before = P[rows, tbit >> 6].copy()
            set_bits(P, rows, tbit)
            gep_added = bool(np.any(P[rows, tbit >> 6] != before))
        if lay.hcd_x.size:
            self._merge_hcd(lay.hcd_x, lay.hcd_y, start, deltas_of)
        if srcs:
            s = np.concatenate(srcs)
            d = np.concatenate(dsts)
        else:
            s = d = np.zeros(0, dtype=np.int64)
        return s, d, gep_added

    def _add_edges(self, s: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Insert new edges; return the keys that were not there before."""
        n = self.lay.n_nodes
        keep = s != d
        keys = sorted_unique(s[keep] * n + d[keep])
        if self.edge_keys.size and keys.size:
            pos = np.searchsorted(self.edge_keys, keys)
            pos = np.minimum(pos, self.edge_keys.size - 1)
            keys = keys[self.edge_keys[pos] != keys]
        if keys.size:
            self.edge_keys = np.sort(np.concatenate([self.edge_keys, keys]))
        return keys

    # ------------------------------------------------------------------ cycles
    def _collapse_cycles(self, start: np.ndarray) -> None:
        """Merge every strongly connected component into one leader (the smallest id)."""
        n = self.lay.n_nodes
        if not self.edge_keys.size:
            return
        s, d = self.edge_keys // n, self.edge_keys % n
        g = sp.csr_matrix((np.ones(s.size, dtype=np.int8), (s, d)), shape=(n, n))
        n_comp, comp = connected_components(g, directed=True, connection="strong")
        if n_comp == n:
            return
        size = np.bincount(comp, minlength=n_comp)
        in_cycle = np.flatnonzero(size[comp] > 1)
        if not in_cycle.size:
            return
        first = np.full(n_comp, n, dtype=np.int64)
        np.minimum.at(first, comp[in_cycle], in_cycle)
        self.stats["cycles_collapsed"] += self._merge(in_cycle, first[comp[in_cycle]], start)

    def _merge(self, members: np.ndarray, leaders: np.ndarray, start: np.ndarray) -> int:
        """Merge the nodes ``members`` (current leaders, leaders included) into ``leaders``.

        Members' sets meet in the leader; ``start`` and ``seen`` keep only what every member
        had, so the leader's round gain covers each member's own gain and each moved
        constraint still sees every object. Returns how many nodes stopped leading.
        """
        n = self.lay.n_nodes
        new_leader = np.arange(n, dtype=np.int64)
        new_leader[members] = leaders
        grp, ors = _or_by_group(self.P[members], leaders)
        self.P[grp] = ors
        order = np.argsort(leaders, kind="stable")
        g_sorted = leaders[order]
        starts = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
        start[grp] = np.bitwise_and.reduceat(start[members][order], starts, axis=0)
        self.seen[grp] = np.bitwise_and.reduceat(self.seen[members][order], starts, axis=0)
        self.leader = new_leader[self.leader]
        s, d = new_leader[self.edge_keys // n], new_leader[self.edge_keys % n]
        keep = s != d
        self.edge_keys = sorted_unique(s[keep] * n + d[keep])
        return int(members.size - grp.size)

    def _merge_hcd(self, x_nodes: np.ndarray, y_nodes: np.ndarray, start: np.ndarray,
                   delta_of) -> None:
        """Online HCD: every new object of pts(x) (but the null object) joins y's node."""
        lay, lead = self.lay, self.leader
        y, _, b = delta_of(x_nodes, y_nodes, np.zeros(x_nodes.size, dtype=np.int64))
        obj = lay.objects[b]
        keep = obj != NULL_OBJECT
        a, y = lead[lay.node_of_var[obj[keep]]], y[keep]
        keep = a != y
        a, y = a[keep], y[keep]
        if not a.size:
            return
        nodes, lead = union_leaders(a, y)
        self.stats["nodes_merged"] += self._merge(nodes, lead, start)

    # ------------------------------------------------------------------ propagation
    def _propagate(self, start: np.ndarray, new_keys: np.ndarray) -> None:
        """One pass over the acyclic copy graph in topological order."""
        n = self.lay.n_nodes
        if not self.edge_keys.size:
            return
        lead = self.leader
        s_all, d_all = self.edge_keys // n, self.edge_keys % n
        is_new = np.zeros(s_all.size, dtype=bool)
        if new_keys.size:
            nk = sorted_unique(lead[new_keys // n] * n + lead[new_keys % n])
            pos = np.minimum(np.searchsorted(self.edge_keys, nk), self.edge_keys.size - 1)
            is_new[pos[self.edge_keys[pos] == nk]] = True
        level = _levels(s_all, d_all, n)
        order = np.argsort(level[d_all], kind="stable")
        s_all, d_all, is_new = s_all[order], d_all[order], is_new[order]
        lv = level[d_all]
        bounds = np.flatnonzero(np.r_[True, lv[1:] != lv[:-1], True])
        gained = np.zeros(n, dtype=bool)
        gained[rows_differing(self.P, start)] = True
        P = self.P
        chunk = max(256, self.CHUNK_BYTES // (8 * self.lay.n_words))
        for a, b in zip(bounds[:-1], bounds[1:]):
            s, d, new = s_all[a:b], d_all[a:b], is_new[a:b]
            use = new | gained[s]
            s, d, new = s[use], d[use], new[use]
            if not s.size:
                continue
            for c0 in range(0, s.size, chunk):
                cs, cd, cn = s[c0:c0 + chunk], d[c0:c0 + chunk], new[c0:c0 + chunk]
                rows = np.where(cn[:, None], P[cs], P[cs] & ~start[cs])
                grp, ors = _or_by_group(rows, cd)
                P[grp] |= ors
            touched = sorted_unique(d)
            gained[touched] = (P[touched] & ~start[touched]).any(axis=1)

    # ------------------------------------------------------------------ driver
    def run(self, max_rounds: int = 100000) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        lay, sec = self.lay, self.stats["seconds"]
        set_bits(self.P, lay.addr_node, lay.addr_bit)
        initial = self._add_edges(lay.copy_src, lay.copy_dst)
        start = np.zeros_like(self.P)
        t = time.perf_counter()
        self._collapse_cycles(start)
        sec["collapse"] += time.perf_counter() - t
        t = time.perf_counter()
        self._propagate(start, initial)
        sec["propagate"] += time.perf_counter() - t
        for _ in range(max_rounds):
            self.stats["rounds"] += 1
            start = self.P.copy()
            t = time.perf_counter()
            merged_before = self.stats["nodes_merged"]
            s, d, gep_added = self._evaluate_complex(start)
            new = self._add_edges(self.leader[s], self.leader[d])
            sec["complex"] += time.perf_counter() - t
            if not new.size and not gep_added and self.stats["nodes_merged"] == merged_before:
                self._report()
                break
            self.stats["edges_added"] += int(new.size)
            t = time.perf_counter()
            self._collapse_cycles(start)
            sec["collapse"] += time.perf_counter() - t
            t = time.perf_counter()
            self._propagate(start, new)
            sec["propagate"] += time.perf_counter() - t
            self._report()
        else:
            raise RuntimeError(f"pta: no fixed point after {max_rounds} rounds")
        self.stats["copy_edges"] = int(self.edge_keys.size)
        return self.P, self.leader, self.stats


    def _report(self) -> None:
        if self.progress is not None:
            self.progress({"round": self.stats["rounds"], "facts": self.n_facts(),
                           "copy_edges": int(self.edge_keys.size)})

    def n_facts(self) -> int:
        """Points-to facts so far, summed over every variable (a pass over the rows)."""
        lay = self.lay
        per_node = np.bincount(lay.node_of_var, minlength=lay.n_nodes)
        weight = np.bincount(self.leader, weights=per_node, minlength=lay.n_nodes)
        rows = np.flatnonzero(weight)
        total = 0
        step = max(1, self.CHUNK_BYTES // (8 * lay.n_words))
        for a in range(0, rows.size, step):
            r = rows[a:a + step]
            counts = np.bitwise_count(self.P[r]).sum(axis=1, dtype=np.int64)
            total += int(counts @ weight[r].astype(np.int64))
        return total


def _levels(src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """Topological level of every node of a DAG (longest path from a source), Kahn-style."""
    level = np.zeros(n, dtype=np.int64)
    order = np.argsort(src, kind="stable")
    s_sorted, d_sorted = src[order], dst[order]
    out_ptr = np.searchsorted(s_sorted, np.arange(n + 1))
    indeg = np.bincount(dst, minlength=n)
    frontier = np.flatnonzero(indeg == 0)
    depth = 0
    while frontier.size:
        level[frontier] = depth
        lo, hi = out_ptr[frontier], out_ptr[frontier + 1]
        count = hi - lo
        if not count.sum():
            break
        idx = np.repeat(lo - np.cumsum(np.r_[0, count[:-1]]), count) + np.arange(count.sum())
        targets = d_sorted[idx]
        dec = np.bincount(targets, minlength=n)
        before = indeg
        indeg = indeg - dec
        frontier = np.flatnonzero((indeg == 0) & (before > 0))
        depth += 1
    return level


def solve(layout: Layout, progress: Callable[[dict[str, int]], None] | None = None
          ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """Rows per node (valid at leaders), leader per node, statistics.

    ``progress``, if given, is called after each round with its number, the points-to
    facts so far (summed over variables) and the copy edges.
    """
    return CpuSolver(layout, progress).run()
