"""The door of the BFS wing: argument checks, device choice, and results on the caller's side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import backend
from ..csr import CSRGraph
from ..dynamic_graph import DynamicGraph
from . import cpu, variants

SCIPY_NO_PREDECESSOR = -9999  # what scipy.sparse.csgraph writes for "no predecessor"


@dataclass(frozen=True)
class BFSResult:
    """What :func:`bfs` returns; arrays live on the side the graph came from."""

    distances: Any  # int32, -1 where unreached
    predecessors: Any  # vertex-id dtype, root is its own parent, -1 unreached; or None
    n_levels: int  # number of non-empty levels (1 for an isolated source)
    n_edges_traversed: int  # CSR entries out of reached vertices (the TEPS numerator)
    variant: str  # the variant that ran (auto's choice resolved)
    device: str  # "cpu" or "gpu"
    source: int = -1
    # For a DynamicGraph: the graph version searched, and whether the labels were repaired
    # from an earlier result (bfs(..., previous=)) rather than searched afresh.
    graph_version: int | None = None
    incremental: bool = False


def _as_graph(graph: Any) -> CSRGraph:
    try:
        return CSRGraph.coerce(graph)
    except TypeError as exc:
        raise ValueError(f"graph: {exc}") from exc


def _check_source(source: Any, n: int, name: str) -> int:
    if isinstance(source, (bool, np.bool_)) or not isinstance(source, (int, np.integer)):
        if not (hasattr(source, "ndim") and source.ndim == 0 and source.dtype.kind in "iu"):
            raise ValueError(f"{name} must be an integer vertex id, got {source!r}")
        source = int(source)
    source = int(source)
    if n == 0:
        raise ValueError(f"{name}={source}: the graph has no vertices")
    if not 0 <= source < n:
        raise ValueError(f"{name}={source} is outside [0, {n})")
    return source


def bfs(
    graph: Any,
    source: int,
    *,
    variant: str = "auto",
    device: str = "auto",
    predecessors: bool = False,
    previous: BFSResult | None = None,
) -> BFSResult:
    """Breadth-first search from ``source``: distances, optional parents, levels, edges.

    ``graph`` is a :class:`~morphgpu.csr.CSRGraph`, a SciPy/CuPy sparse matrix, a dense
    adjacency matrix (edges follow CSR rows: u -> v for every stored (u, v)) or a
    :class:`~morphgpu.dynamic_graph.DynamicGraph`. ``variant`` names a strategy from
    :data:`morphgpu.bfs.variants.VARIANTS` or ``"auto"`` (chosen from the degree
    distribution; see that module). Results come back on the graph's side.

    ``previous`` (DynamicGraph only): a result of an earlier search from the same source on
    this graph. When only insertions happened since, its labels are repaired from the
    inserted edges (decrease-only) instead of searching again; the result is the same as a
    fresh search's (distances equal; parents valid). Otherwise a fresh search runs.
    """
    if isinstance(graph, DynamicGraph):
        return _bfs_dynamic(graph, source, variant, device, predecessors, previous)
    if previous is not None:
        raise ValueError("previous: incremental searches need a DynamicGraph")
    g = _as_graph(graph)
    source = _check_source(source, g.n_vertices, "source")
    chosen = variants.check(variant)
    side = backend.resolve_device(device, who="morphgpu.bfs")
    home = g.side
    if side == "gpu":
        from . import gpu  # noqa: PLC0415  (CuPy only where the GPU runs)

        with backend.gpu_memory_guard(f"bfs on {g.n_vertices} vertices, {g.n_edges} edges"):
            on_gpu = g.to("gpu")
            dist, parent, name = gpu.run(on_gpu, source, variant=chosen.name,
                                         want_parents=predecessors)
            reached_edges = gpu.edges_out_of_reached(on_gpu, dist)
            top = int(dist.max())
    else:
        host = g.to("cpu")
        cg = cpu.CPUGraph(host.indptr, host.indices, symmetric=not host.directed)
        direction = chosen.cpu_direction
        if chosen.name == "auto":
            direction = variants.auto_cpu(np.diff(host.indptr))
        dist, parent, _ = cpu.bfs(cg, source, want_parents=predecessors, direction=direction)
        reached_edges = int(np.diff(host.indptr)[dist >= 0].sum())
        top = int(dist.max())
        name = chosen.name if chosen.name != "auto" else f"cpu-{direction}"
    return BFSResult(
        distances=backend.to_side(dist, home),  # type: ignore[arg-type]
        predecessors=backend.to_side(parent, home) if predecessors else None,  # type: ignore[arg-type]
        n_levels=top + 1,
        n_edges_traversed=reached_edges,
        variant=name,
        device=side,
        source=source,
    )


def _bfs_dynamic(dg: DynamicGraph, source: Any, variant: str, device: str, predecessors: bool,
                 previous: BFSResult | None) -> BFSResult:
    """bfs() on a DynamicGraph: on the GPU through the paged layout (bfs/layouts.py), on
    the CPU through a CSR view of its rows; repaired from ``previous`` where it can be."""
    source = _check_source(source, dg.n_vertices, "source")
    chosen = variants.check(variant)
    side = backend.resolve_device(device, who="morphgpu.bfs")
    if device == "auto":
        side = dg.side  # the search runs where the graph lives
    elif side == "gpu" and dg.side != "gpu":
        raise ValueError("device='gpu': this DynamicGraph lives on the CPU; make it with "
                         "device='gpu' (or DynamicGraph.from_csr(..., device='gpu'))")
    inserted = None
    if previous is not None:
        if not isinstance(previous, BFSResult) or previous.graph_version is None:
            raise ValueError("previous must be a BFSResult of bfs() on a DynamicGraph")
        if previous.source != source:
            raise ValueError(f"previous is a search from {previous.source}, not from {source}")
        if predecessors and previous.predecessors is None:
            raise ValueError("predecessors=True needs a previous result with predecessors")
        inserted = dg.inserted_since(previous.graph_version)
    if inserted is not None and predecessors and dg.vid_dtype != np.int32:
        inserted = None  # the packed (distance, parent) key holds 32-bit parents
    if side == "gpu":
        from . import layouts  # noqa: PLC0415  (CuPy only where the GPU runs)

        dev = layouts.view(dg)
        cp = backend.cupy_module()

        def search() -> tuple[Any, Any, str]:
            name = chosen.name
            if name == "auto":
                name = variants.auto_dynamic(dev.n_entries / max(dev.n, 1), dev.max_degree,
                                             symmetric=not dg.directed)
            return (*layouts.run(dev, source, name, predecessors), name)

        with backend.gpu_memory_guard(f"bfs on a DynamicGraph of {dg.n_vertices} vertices"):
            if inserted is not None:
                old_parent = (cp.asarray(previous.predecessors, dtype=dg.vid_dtype)
                              if predecessors else None)
                dist, parent, gave_up = layouts.repair(dev, cp.asarray(previous.distances),
                                                       old_parent, *inserted)
                name = previous.variant
                reached_edges, top, failed = dev.result_figures(dist, gave_up)
                if failed:  # the repair would cost more than a search: search afresh
                    inserted = None
            if inserted is None:
                dist, parent, name = search()
                reached_edges, top, _ = dev.result_figures(dist)
    else:
        src, dst, _ = dg.entries()
        indptr = np.zeros(dg.n_vertices + 1, dtype=np.int64)
        np.cumsum(backend.to_host(dg.degree()), out=indptr[1:])
        indices = backend.to_host(dst).astype(dg.vid_dtype)
        if inserted is not None:
            old_parent = (backend.to_host(previous.predecessors).astype(dg.vid_dtype)
                          if predecessors else None)
            dist, parent = cpu.repair(indptr, indices, backend.to_host(previous.distances),
                                      old_parent, *(backend.to_host(a) for a in inserted))
            name = previous.variant
        else:
            cg = cpu.CPUGraph(indptr, indices, symmetric=not dg.directed)
            direction = chosen.cpu_direction
            if chosen.name == "auto":
                direction = variants.auto_cpu(np.diff(indptr))
            dist, parent, _ = cpu.bfs(cg, source, want_parents=predecessors,
                                      direction=direction)
            name = chosen.name if chosen.name != "auto" else f"cpu-{direction}"
        reached_edges = int(np.diff(indptr)[dist >= 0].sum())
        top = int(dist.max())
    return BFSResult(
        distances=dist if side == dg.side else backend.to_side(dist, dg.side),
        predecessors=(parent if side == dg.side else backend.to_side(parent, dg.side))
        if predecessors else None,
        n_levels=top + 1,
        n_edges_traversed=reached_edges,
        variant=name,
        device=side,
        source=source,
        graph_version=dg.version,
        incremental=inserted is not None,
    )


def breadth_first_order(
    csgraph: Any,
    i_start: int,
    directed: bool = True,
    return_predecessors: bool = True,
    *,
    device: str = "auto",
) -> Any:
    """``scipy.sparse.csgraph.breadth_first_order`` with the same arguments and results.

    Returns ``node_array`` (int32, the reached vertices in breadth-first order: by distance,
    ties by vertex id) and, if ``return_predecessors``, ``predecessors`` (int32, -9999 for
    the source and unreached vertices). ``directed=False`` follows edges both ways. A valid
    BFS tree may pick a different parent than SciPy where several are one level up.
    """
    g = _as_graph(csgraph)
    home = g.side
    i_start = _check_source(i_start, g.n_vertices, "i_start")
    if not directed:
        g = g.symmetrized(merge_duplicates="first")
    result = bfs(g, i_start, device=device, predecessors=return_predecessors)
    dist = backend.to_host(result.distances)
    reached = np.flatnonzero(dist >= 0)
    order = reached[np.argsort(dist[reached], kind="stable")].astype(np.int32)
    if not return_predecessors:
        return backend.to_side(order, home)  # type: ignore[arg-type]
    pred = backend.to_host(result.predecessors).astype(np.int32)
    pred[dist < 0] = SCIPY_NO_PREDECESSOR
    pred[i_start] = SCIPY_NO_PREDECESSOR
    return backend.to_side(order, home), backend.to_side(pred, home)  # type: ignore[arg-type]
