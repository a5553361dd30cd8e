"""The door of the BFS wing: argument checks, device choice, and results on the caller's side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import backend
from ..csr import CSRGraph, validate_graph
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


def _as_graph(graph: Any, what: str = "graph") -> CSRGraph:
    """The shared validation path (:func:`morphgpu.csr.validate_graph`): dense input by
    SciPy's null rules (0, NaN, +-inf are no edge), nested lists accepted."""
    try:
        return validate_graph(graph, what=what)
    except TypeError as exc:
        raise ValueError(str(exc)) from exc


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
) -> BFSResult:
    """Breadth-first search from ``source``: distances, optional parents, levels, edges.

    ``graph`` is a :class:`~morphgpu.csr.CSRGraph`, a SciPy/CuPy sparse matrix or a dense
    adjacency matrix (edges follow CSR rows: u -> v for every stored (u, v)). ``variant``
    names a strategy from :data:`morphgpu.bfs.variants.VARIANTS` or ``"auto"`` (chosen from
    the degree distribution; see that module). Results come back on the graph's side.
    """
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
    g = _as_graph(csgraph, "csgraph")
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
