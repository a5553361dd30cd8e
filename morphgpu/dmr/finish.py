"""Finishing the GPU's stuck triangles on the host, one window of the mesh at a time.

The GPU gives up on a triangle when a predicate's float sign is uncertain or its walk or
cavity outgrows the kernel's bounds (kernels/dmr.cu); the host then refines it with exact
arithmetic (``cpu.finish_cpu``). Only a window around the stuck triangles crosses to the
host: the triangles within ``hops`` edge steps of them, plus the rim one step further
(frozen: a plan may rewrite a rim triangle's neighbour pointer, but may not walk into it
or take it into its cavity), and the vertices these use. The window is renumbered into a
small mesh, finished, and only what changed goes back: rewritten slots, new slots and new
vertices, at the end of the device arrays. A triangle whose plan reached the rim
(``cpu.WindowEdge``) is retried in a window twice as deep, so the result is what the
whole mesh would give; a window with no rim is the whole connected mesh around its seeds.

Issue 19, H100, 2M triangles in: moving the whole mesh to the host and back for 2 stuck
triangles cost 0.11 s (the copies, and the host finish growing full-size arrays).

``slots`` is the GPU path's ``DeviceMesh`` (CuPy arrays) or anything with the same
attributes: flat ``tri``/``nbr``/``seg`` (3 int32 words per slot), ``x``, ``y``,
``vmark``, ``apex`` per vertex, the counts ``nt``/``nv`` in use, and ``reserve``.
Transfers are a few small gathers per window (one per BFS level and two for the vertices)
and one scatter per array.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import backend
from .cpu import finish_cpu
from .mesh import Mesh

# Edge steps around each stuck triangle in the first window (a few hundred triangles
# each): the GPU's small build gives up past 24-triangle cavities and its large one past
# 256, so most of what is left fits; deeper windows follow when a plan reaches the rim.
FIRST_HOPS = 8


@dataclass
class Window:
    """A window's triangles and vertices, renumbered: local id i is global ``tris[i]``
    (vertex j is ``verts[j]``, sorted, so the input vertices keep coming first)."""

    tris: np.ndarray  # global slot ids, inner triangles first, then the rim
    verts: np.ndarray  # global vertex ids, sorted
    tri: np.ndarray  # (n, 3) local vertex ids
    nbr: np.ndarray  # (n, 3) local triangle ids, -1 outside (beyond the rim, or none)
    seg: np.ndarray  # (n, 3) segment codes
    nbr_global: np.ndarray  # (n, 3) as fetched: what an unchanged entry writes back
    x: np.ndarray
    y: np.ndarray
    vmark: np.ndarray
    apex: np.ndarray  # local vertex ids, -1 none
    n_inner: int
    n_input: int  # local: the input vertices among verts


def _take(xp: Any, arrays: list[Any], idx: np.ndarray) -> np.ndarray:
    """``arrays`` (one dtype) gathered at ``idx``, stacked, on the host: one copy back."""
    at = xp.asarray(idx, dtype=xp.int64)
    return backend.to_host(xp.stack([a[at] for a in arrays]))


def _rows(slots: Any, xp: Any, ids: np.ndarray) -> np.ndarray:
    """(3, len(ids), 3): the tri, nbr and seg rows of slots ``ids``."""
    flat = (3 * ids[:, None] + np.arange(3)).ravel()
    return _take(xp, [slots.tri, slots.nbr, slots.seg], flat).reshape(3, len(ids), 3)


def _local(sorted_ids: np.ndarray, order: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Global ids -> local ids (``order[i]``: the local id of ``sorted_ids[i]``), -1 for
    ids not in the window (and for -1)."""
    if len(sorted_ids) == 0:
        return np.full(values.shape, -1, np.int32)
    pos = np.minimum(np.searchsorted(sorted_ids, values), len(sorted_ids) - 1)
    hit = (values >= 0) & (sorted_ids[pos] == values)
    return np.where(hit, order[pos], -1).astype(np.int32)


def take_window(slots: Any, seeds: np.ndarray, hops: int, n_input: int) -> Window:
    """The triangles within ``hops`` edge steps of ``seeds`` and their rim, from
    ``slots`` (a breadth-first search, one gather per level)."""
    xp = backend.array_module(slots.tri)
    level = np.unique(np.asarray(seeds, dtype=np.int64))
    levels, rows = [level], [_rows(slots, xp, level)]
    known = level
    rim = False
    for _ in range(hops):
        nb = rows[-1][1].ravel()
        nb = np.unique(nb[nb >= 0]).astype(np.int64)
        level = np.setdiff1d(nb, known, assume_unique=True)
        if len(level) == 0:
            break
        levels.append(level)
        rows.append(_rows(slots, xp, level))
        known = np.union1d(known, level)
    else:
        rim = True  # the last level's neighbours were not fetched: it is the rim
    tris = np.concatenate(levels)
    tri_g, nbr_g, seg = (np.concatenate([r[i] for r in rows]) for i in range(3))
    n_inner = len(tris) - (len(levels[-1]) if rim else 0)
    order = np.argsort(tris)
    nbr = _local(tris[order], order.astype(np.int32), nbr_g)

    verts = np.unique(tri_g).astype(np.int64)
    f = _take(xp, [slots.x, slots.y], verts)
    i = _take(xp, [slots.vmark, slots.apex], verts)
    apex_of = i[1][i[1] >= 0].astype(np.int64)
    extra = np.setdiff1d(apex_of, verts)  # shell vertices' apexes (input vertices)
    if len(extra):
        fe = _take(xp, [slots.x, slots.y], extra)
        ie = _take(xp, [slots.vmark, slots.apex], extra)
        verts = np.concatenate([verts, extra])
        f, i = np.concatenate([f, fe], axis=1), np.concatenate([i, ie], axis=1)
        by = np.argsort(verts)
        verts, f, i = verts[by], f[:, by], i[:, by]
    ident = np.arange(len(verts), dtype=np.int32)
    return Window(
        tris=tris, verts=verts, tri=_local(verts, ident, tri_g.astype(np.int64)),
        nbr=nbr, seg=seg.astype(np.int32), nbr_global=nbr_g, x=f[0], y=f[1],
        vmark=i[0].astype(np.int32), apex=_local(verts, ident, i[1].astype(np.int64)),
        n_inner=n_inner, n_input=int(np.searchsorted(verts, n_input)),
    )


def window_mesh(w: Window, segment_markers: np.ndarray) -> Mesh:
    """The window as a mesh of its own (copies: the window keeps the originals)."""
    return Mesh(
        w.x.copy(), w.y.copy(), w.tri.copy(), w.nbr.copy(), w.seg.copy(), w.vmark.copy(),
        segment_markers, np.zeros((0, 2)),
        {"n_input": w.n_input, "vertex_apex": w.apex.copy()},
    )


def put_window(slots: Any, w: Window, done: Mesh) -> tuple[np.ndarray, np.ndarray]:
    """Write the finished window back: its rewritten slots, new slots at ``slots.nt`` on
    and new vertices at ``slots.nv`` on. Returns (slot, vertex) maps, local -> global."""
    xp = backend.array_module(slots.tri)
    n_old, nt = len(w.tris), done.n_triangles
    n_new_v = done.n_vertices - len(w.verts)
    tri_map = np.concatenate([w.tris, slots.nt + np.arange(nt - n_old)]).astype(np.int64)
    vert_map = np.concatenate([w.verts, slots.nv + np.arange(n_new_v)]).astype(np.int64)
    tri, nbr, seg = (np.asarray(a[:nt]) for a in (done.tri, done.nbr, done.seg))
    nbr_changed = np.ones((nt, 3), dtype=bool)
    nbr_changed[:n_old] = nbr[:n_old] != w.nbr
    changed = nbr_changed.any(axis=1)
    changed[:n_old] |= np.any((tri[:n_old] != w.tri) | (seg[:n_old] != w.seg), axis=1)
    rows = np.flatnonzero(changed)
    old = np.full((nt, 3), -1, dtype=np.int64)
    old[:n_old] = w.nbr_global
    local_nbr = nbr[rows].astype(np.int64)
    mapped = np.where(local_nbr >= 0, tri_map[np.maximum(local_nbr, 0)], -1)
    nbr_out = np.where(nbr_changed[rows], mapped, old[rows])
    slots.reserve(slots.nt + nt - n_old, slots.nv + n_new_v)
    if len(rows):
        at = xp.asarray((3 * tri_map[rows][:, None] + np.arange(3)).ravel())
        for name, values in (("tri", vert_map[tri[rows].astype(np.int64)]),
                             ("nbr", nbr_out), ("seg", seg[rows])):
            getattr(slots, name)[at] = xp.asarray(values.ravel().astype(np.int32))
    if n_new_v:
        new = slice(len(w.verts), done.n_vertices)
        apex = np.asarray(done.extra["vertex_apex"][new]).astype(np.int64)
        at = slice(slots.nv, slots.nv + n_new_v)
        for name, values in (("x", np.asarray(done.x[new], np.float64)),
                             ("y", np.asarray(done.y[new], np.float64)),
                             ("vmark", np.asarray(done.vertex_markers[new]).astype(np.int32)),
                             ("apex", np.where(apex >= 0, vert_map[np.maximum(apex, 0)],
                                               -1).astype(np.int32))):
            getattr(slots, name)[at] = xp.asarray(values)
    slots.nt += nt - n_old
    slots.nv += n_new_v
    return tri_map, vert_map


def finish_stuck(
    slots: Any, stuck: np.ndarray, segment_markers: np.ndarray, min_angle: float,
    max_area: float | None, *, n_input: int, min_split: float, hops: int = FIRST_HOPS,
) -> dict[str, Any]:
    """Refine the ``stuck`` slots (and what that creates) exactly on the host, in
    windows (module doc); ``slots`` is updated in place. Returns the statistics: the
    refinements, the windows and their triangles, and ``stuck``, the triangles left bad
    (failed with the whole mesh around them, as ``cpu.finish_cpu`` counts them)."""
    stats = {"refinements": 0, "windows": 0, "window_triangles": 0, "stuck": 0}
    seeds = np.unique(np.asarray(stuck, dtype=np.int64))
    while len(seeds):
        w = take_window(slots, seeds, hops, n_input)
        frozen = np.arange(w.n_inner, len(w.tris))
        seeds_local = _local(np.sort(w.tris), np.argsort(w.tris).astype(np.int32), seeds)
        done, st = finish_cpu(window_mesh(w, segment_markers), min_angle, max_area,
                              seeds_local, min_split=min_split, frozen=frozen)
        tri_map, _ = put_window(slots, w, done)
        stats["refinements"] += st["refinements"]
        stats["windows"] += 1
        stats["window_triangles"] += len(w.tris)
        if st["outside"] == 0:
            stats["stuck"] = st["stuck"]
            break
        if len(frozen) == 0:
            raise RuntimeError("dmr: a window without a rim reported a plan beyond it")
        seeds = np.unique(tri_map[st["left"]])
        hops *= 2
    return stats
