"""The GPU batch pipeline of :class:`~morphgpu.dynamic_graph.DynamicGraph`.

The NumPy path in dynamic_graph.py is an array program of a few dozen steps; on the GPU
each step would be a CuPy launch with its host-side cost (the first H100 run measured a
fixed ~4 ms per batch that way), so here a batch is a dozen kernels
(kernels/dynamic_graph.cu) around one sort and three prefix sums:

    keys (ids checked) -> sort -> mark (last of each key, first of each row) -> rows
    -> row lookups (a thread per light row, a block per heavy one) -> entries classified
    -> plan per row -> one read of the totals (bad ids, pages and table entries needed,
    counts) -> pool / table growth on the host if needed -> commit kernels

Nothing is written into the graph before the read, so a batch with a bad id or one that
cannot get its memory leaves the graph as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import backend, kernels

if TYPE_CHECKING:
    from .dynamic_graph import DynamicGraph

KERNEL_FILE = "kernels/dynamic_graph.cu"
(T_BAD_SRC, T_BAD_DST, T_BAD_WEIGHT, T_APPLIED, T_REQUESTED, T_STORED, T_PAGES, T_TABLE,
 T_TABLE_LEFT) = range(9)
N_TOTALS = 14
NO_BAD = np.iinfo(np.int64).max
BLOCK = 256


def _kernel(dg: DynamicGraph, name: str) -> Any:
    defines = {**kernels.index_defines(dg.vid_dtype, np.int64), "MG_PAGE_SHIFT": dg.page_shift}
    return kernels.get_kernel(KERNEL_FILE, name, defines=defines)


def _grid(items: int, per_block: int = BLOCK) -> tuple[tuple[int], tuple[int]]:
    blocks = max(1, min(-(-max(items, 1) // per_block), 8 * 1024))
    return (blocks,), (BLOCK,)


def _heavy_grid() -> tuple[tuple[int], tuple[int]]:
    return (2 * backend.gpu_properties()["multiprocessors"],), (BLOCK,)


def _null() -> np.uint64:
    return np.uint64(0)


SCAN_SMALL = 4 * 1024  # dyn_scan_small's reach: one block of 1024 threads, 4 items each


def _scan(dg: DynamicGraph, values: Any, out: Any) -> Any:
    """Inclusive prefix sum of int64 ``values`` into ``out`` (one launch while it fits one
    block, else CuPy's scan)."""
    if values.size <= SCAN_SMALL:
        _kernel(dg, "dyn_scan_small")((1,), (1024,), (values, np.int64(values.size), out))
    else:
        dg.xp.cumsum(values, out=out)
    return out


# Rows of a batch's int64 arena: one allocation instead of one per array.
(A_ROWFIRST, A_ROWID, A_HIT, A_TOUCHED, A_SEG, A_HEAVY, A_HEAVY_PAGES, A_HEAVY_INCL, A_FLAG,
 A_FLAG_INCL, A_PRESENT, A_C, A_DEG, A_BEFORE, A_PAGES, A_NEWCAP, N_ARENA) = range(17)


class _Batch:
    """The sorted keys of a batch and what every later kernel reads of them."""

    def __init__(self, dg: DynamicGraph, who: str, src: Any, dst: Any, weights: Any) -> None:
        cp = dg.xp
        self.dg, self.who = dg, who
        n = max(dg.n_vertices, 1)
        n_in = int(src.size)
        both = not dg.directed
        m = n_in * (2 if both else 1)
        self.m, self.n, self.src, self.dst, self.weights = m, n, src, dst, weights
        start = np.zeros(N_TOTALS, dtype=np.int64)
        start[:3] = NO_BAD
        self.totals = cp.asarray(start)
        width = max(m, 1)
        self.arena = cp.empty((N_ARENA, width + 1), dtype=np.int64)
        row = self.row
        keys = cp.empty(max(m, 1), dtype=np.int64)
        w = cp.empty(max(m, 1), dtype=np.float64) if weights is not None else None
        _kernel(dg, "dyn_keys")(*_grid(n_in), (
            src, dst, np.int64(n_in), np.int64(dg.n_vertices), np.int32(both),
            weights if weights is not None else _null(), keys, w if w is not None else _null(),
            self.totals))
        keys = keys[:m]
        if w is not None:
            order = cp.argsort(keys)  # stable: the batch's last weight of a key wins
            keys, w = keys[order], w[:m][order]
        else:
            keys = cp.sort(keys)
        self.keys, self.w = keys, w
        self.keep = cp.empty(width, dtype=np.uint8)
        rowfirst, self.hit = row(A_ROWFIRST), row(A_HIT)
        g = _grid(m)
        _kernel(dg, "dyn_mark")(*g, (keys, np.int64(m), np.int64(n), self.keep, rowfirst,
                                     self.hit))
        self.rowid = row(A_ROWID)
        if m:
            _scan(dg, rowfirst, self.rowid)
        self.touched = row(A_TOUCHED)
        self.seg_start = self.arena[A_SEG]  # m + 1 entries
        _kernel(dg, "dyn_rows")(*g, (keys, np.int64(m), np.int64(n), rowfirst, self.rowid,
                                     self.touched, self.seg_start))
        self.heavy, heavy_pages = row(A_HEAVY), row(A_HEAVY_PAGES)
        heavy_pages.fill(0)
        _kernel(dg, "dyn_lookup_light")(*g, (
            dg.bounds, dg.table, dg.pool.data, self.touched, self.rowid, self.seg_start, keys,
            np.int64(m), np.int64(n), self.hit, self.heavy, heavy_pages, self.totals))
        heavy_incl = _scan(dg, heavy_pages, row(A_HEAVY_INCL))
        _kernel(dg, "dyn_lookup_heavy")(*_grid(m, BLOCK // 32), (
            dg.bounds, dg.table, dg.pool.data, self.touched, self.seg_start, keys,
            np.int64(n), self.hit, self.heavy, heavy_incl, self.totals))

    def row(self, which: int) -> Any:
        """Row ``which`` of the arena: max(m, 1) int64 entries, contents undefined."""
        return self.arena[which, : max(self.m, 1)]

    def plan(self, grow: bool, fresh: Any) -> tuple[list[Any], list[int]]:
        """Per-row counts of the flagged entries and the batch's totals (the one read)."""
        dg, m = self.dg, self.m
        flag_incl = self.row(A_FLAG_INCL)
        if m:
            _scan(dg, fresh, flag_incl)
        rows = [self.row(k) for k in (A_C, A_DEG, A_BEFORE, A_PAGES, A_NEWCAP)]
        c, deg, before, pages, newcap = rows
        _kernel(dg, "dyn_plan")(*_grid(m), (
            self.touched, self.rowid, np.int64(m), self.seg_start, flag_incl, dg.bounds,
            dg.table_cap, np.int32(grow), c, deg, before, pages, newcap, self.totals))
        return [flag_incl, *rows], self.read_totals()

    def read_totals(self) -> list[int]:
        """The one host read of a batch; raises (before any write) on bad input."""
        from .dynamic_graph import DynamicGraphError  # noqa: PLC0415  (it imports this)

        t = [int(x) for x in self.totals.get()]
        who = self.who
        for slot, name, arr in ((T_BAD_SRC, "src", self.src), (T_BAD_DST, "dst", self.dst)):
            if t[slot] != NO_BAD:
                raise DynamicGraphError(
                    f"{who}: {name}[{t[slot]}] = {int(arr[t[slot]])} is outside "
                    f"[0, {self.dg.n_vertices}) (the graph has {self.dg.n_vertices} vertices)")
        if t[T_BAD_WEIGHT] != NO_BAD:
            i = t[T_BAD_WEIGHT]
            raise DynamicGraphError(f"{who}: weights[{i}] = {float(self.weights[i])} is not a "
                                    "finite number")
        return t


def insert(dg: DynamicGraph, src: Any, dst: Any, weights: Any) -> tuple[int, int, int, Any]:
    """Insert a validated batch on the GPU; (applied, requested, stored entries, the sorted
    keys for the journal)."""
    b = _Batch(dg, "insert_edges", src, dst, weights)
    m, n = b.m, b.n
    fresh, present = b.row(A_FLAG), b.row(A_PRESENT)
    g = _grid(m)
    _kernel(dg, "dyn_classify")(*g, (b.keys, np.int64(m), np.int64(n), np.int32(dg.directed),
                                     b.keep, b.hit, dg.table, fresh, _null(), present,
                                     b.totals))
    (fresh_incl, c, deg, before, need, newcap), t = b.plan(True, fresh)
    # -- plan on the host: memory for the pages and the table (nothing written yet)
    dg.pool.reserve(t[T_PAGES])
    dg._reserve_table(t[T_TABLE])
    # -- commit
    rows = (np.int64(dg.table_used), dg.table, dg.table_cap, dg.bounds, dg.pool.free_pages,
            np.int64(dg.pool.n_free), np.int64(dg.pool.high_water))
    _kernel(dg, "dyn_insert_rows")(*g, (b.touched, b.rowid, np.int64(m), c, deg, before, need,
                                        newcap, *rows, b.heavy, b.totals))
    _kernel(dg, "dyn_insert_rows_heavy")(*_heavy_grid(), (b.touched, c, deg, before, need,
                                                          newcap, *rows, b.heavy, b.totals))
    _kernel(dg, "dyn_insert_entries")(*g, (
        b.keys, np.int64(m), np.int64(n), fresh, fresh_incl, b.rowid, b.seg_start, deg,
        dg.bounds, dg.table, dg.pool.data,
        dg.pool.weights if dg.weighted else _null(),
        b.w if b.w is not None else _null(), present))
    dg.pool.commit_take(t[T_PAGES])
    dg.table_used += t[T_TABLE]
    dg.table_owned += t[T_TABLE] - t[T_TABLE_LEFT]
    return t[T_APPLIED], t[T_REQUESTED], t[T_STORED], b.keys


def delete(dg: DynamicGraph, src: Any, dst: Any) -> tuple[int, int, int]:
    """Delete a validated batch on the GPU; (applied, requested, stored entries removed)."""
    cp = dg.xp
    b = _Batch(dg, "delete_edges", src, dst, None)
    m, n = b.m, b.n
    found = b.row(A_FLAG)
    g = _grid(m)
    _kernel(dg, "dyn_classify")(*g, (b.keys, np.int64(m), np.int64(n), np.int32(dg.directed),
                                     b.keep, b.hit, dg.table, _null(), found, _null(),
                                     b.totals))
    (_, k, _, _, freed, _), t = b.plan(False, found)
    scratch = cp.empty(max(t[T_STORED], 1), dtype=np.int64)
    rows = (dg.bounds, dg.table, dg.pool.data, dg.pool.weights if dg.weighted else _null())
    _kernel(dg, "dyn_delete_rows")(*g, (b.touched, b.rowid, np.int64(m), b.seg_start, b.keep,
                                        b.hit, k, freed, *rows, dg.pool.free_pages,
                                        np.int64(dg.pool.n_free), b.heavy, b.totals))
    _kernel(dg, "dyn_delete_rows_heavy")(*_heavy_grid(), (
        b.touched, b.seg_start, b.keep, b.hit, k, freed, *rows, scratch, dg.pool.free_pages,
        np.int64(dg.pool.n_free), b.heavy, b.totals))
    dg.pool.n_free += t[T_PAGES]
    return t[T_APPLIED], t[T_REQUESTED], t[T_STORED]
