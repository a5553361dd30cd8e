"""Deep searches (``persistent``) on a locality-relabelled copy of the graph.

A graph whose vertex ids are scattered (a Delaunay graph of random points, any graph read
in an arbitrary order) gives every level of a search a frontier whose labels and rows lie
in as many cache lines as it has vertices. The copy numbers vertices by the Z-order of
their distances to two landmarks (``reorder.landmark_order``: four searches of the graph
as given, one sort, one rebuild), so a wavefront touches a few vertices per line; the
searches run on the copy and one launch writes the results back in the caller's ids
(kernels/relabel_back.cu).

The copy is a per-graph preparation, built at the graph's second deep search (the first
search of a graph runs as given, so a one-off search never pays for it) and kept with the
workspace; its build time is in :func:`preparation`. ``relabel="auto"`` keeps the copy only
where its ids are more local than the given ones for a wavefront (``reorder.
wavefront_locality`` of one more search: vertices per level and 32-id line, about 1 for
scattered ids, and for a grid numbered row by row, whose wavefronts are diagonals); a graph
whose ids already serve its wavefronts is searched as given.

``async`` searched the copy too until the H100 run of 2026-11-26 (scripts/bfs_deep_probe.py,
folded into benchmarks/bfs.py since, same process): 5.3 ms against 3.4 ms as given on road
COL, 364 ms against 23 ms on a 4000² grid with deleted edges (its label-correcting work
depends on the order in which ids meet), so only the level-synchronous search uses it.
"""

from __future__ import annotations

import dataclasses
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import backend, kernels, reorder
from ...csr import CSRGraph, inverse_permutation
from . import modules
from .workspace import Workspace

BACK_FILE = "bfs/kernels/relabel_back.cu"


@dataclass
class Copy:
    """The relabelled copy of one workspace's graph, or the decision not to keep one."""

    graph: CSRGraph | None  # None: the given ids are as local (auto), no copy kept
    perm: Any  # new vertex i is old vertex perm[i] (the graph's id dtype, on the GPU)
    inverse: Any
    inverse_host: np.ndarray | None
    seconds: float  # wall time of the build, searches included
    locality_given: float  # reorder.wavefront_locality of one more search, as given
    locality_copy: float  # the same search in the copy's ids


_copies: weakref.WeakKeyDictionary[Workspace, Copy] = weakref.WeakKeyDictionary()
_searches: weakref.WeakKeyDictionary[Workspace, int] = weakref.WeakKeyDictionary()


def preparation(ws: Workspace) -> Copy | None:
    """The workspace's copy as built (None: not built yet)."""
    return _copies.get(ws)


def build(ws: Workspace, distances: Callable[[int], Any]) -> Copy:
    """The copy of ``ws``'s graph, built now if it was not (``distances(source)``: labels
    of a search of the graph as given)."""
    copy = _copies.get(ws)
    if copy is not None and copy.graph is not None:
        return copy
    g = ws.g
    cp = ws.cp
    cp.cuda.get_current_stream().synchronize()
    started = time.perf_counter()
    backend.require_gpu_bytes(ws.relabel_bytes(), "bfs locality-relabelled graph")
    fields: dict[str, Any] = {}
    perm = reorder.landmark_order(g, distances, fields)
    built = reorder.apply(g, perm)
    relabelled = CSRGraph(built.indptr.astype(g.indptr.dtype, copy=False),
                          built.indices.astype(g.indices.dtype, copy=False), None,
                          built.n_vertices, built.directed)
    vid = g.indices.dtype
    inverse = inverse_permutation(perm)
    # The judge: one more search, from the middle of the order (reached vertices come
    # first; a landmark's own wavefronts would follow the order's axes), in both numberings.
    dist = distances(int(perm[int((fields["a"] >= 0).sum()) // 2]))
    given = reorder.wavefront_locality(dist)
    local = reorder.wavefront_locality(dist, inverse)
    cp.cuda.get_current_stream().synchronize()
    copy = Copy(relabelled, perm.astype(vid), inverse.astype(vid), inverse.get(),
                time.perf_counter() - started, given, local)
    _copies[ws] = copy
    return copy


def searches(ws: Workspace) -> int:
    """The workspace's deep searches under ``relabel="auto"`` so far."""
    return _searches.get(ws, 0)


def keep_if_serving(ws: Workspace) -> Copy | None:
    """The workspace's copy after auto's rule: a built copy whose ids serve a wavefront no
    better than the given ones is dropped (its memory freed), only the decision kept."""
    copy = _copies.get(ws)
    if copy is not None and copy.graph is not None and not serves_better(copy):
        copy = dataclasses.replace(copy, graph=None, perm=None, inverse=None,
                                   inverse_host=None)
        _copies[ws] = copy
    return copy


def serves_better(copy: Copy) -> bool:
    """Whether the copy's ids serve a wavefront with fewer cache lines than the given ids."""
    return copy.locality_copy > copy.locality_given


def chosen(ws: Workspace, relabel: bool | str,
           distances: Callable[[int], Any]) -> Copy | None:
    """The copy this search runs on, or None (as given). ``relabel``: True (build now if
    needed), False, or "auto" (from the workspace's second deep search on, and only where
    the copy's ids are the more local; otherwise the copy is dropped and only the decision
    kept)."""
    if relabel is False or ws.g.n_vertices == 0:
        return None
    if relabel == "auto":
        earlier = _searches.get(ws, 0)
        _searches[ws] = earlier + 1
        copy = _copies.get(ws)
        if copy is None:
            if earlier < 1:
                return None
            build(ws, distances)
            copy = keep_if_serving(ws)
        return copy if copy is not None and copy.graph is not None and serves_better(copy) \
            else None
    if relabel is not True:
        raise ValueError(f"relabel must be True, False or 'auto', not {relabel!r}")
    return build(ws, distances)


def back(ws: Workspace, copy: Copy, dist_new: Any, parent_new: Any) -> tuple[Any, Any]:
    """The copy's search results in the caller's ids (one launch)."""
    cp = ws.cp
    n = ws.g.n_vertices
    vid = ws.g.indices.dtype
    dist = cp.empty(n, dtype=cp.int32)
    parent = cp.empty(n, dtype=vid) if parent_new is not None else None
    null = np.uint64(0)
    kernels.get_kernel(BACK_FILE, "bfs_relabel_back",
                       defines=modules.csr_defines(vid, ws.g.indptr.dtype))(
        *kernels.launch_config(n, 256, 4096),
        (dist_new, null if parent_new is None else parent_new, copy.perm, copy.inverse,
         np.int64(n), dist, null if parent is None else parent))
    return dist, parent
