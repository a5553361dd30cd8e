"""The door of the BFS wing: argument checks, device choice, and results on the caller's side.

Which code runs on a machine without a GPU. ``device="auto"`` there runs SciPy's
breadth-first search (``scipy.sparse.csgraph.breadth_first_order``, compiled), which is
faster than our NumPy levels; distances come from its FIFO order (``order.py``).
``device="cpu"`` runs our NumPy path, the CPU twin of the GPU kernels that the tests
compare them with. An explicitly named ``variant`` also runs our path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import backend, graph_cache
from ..csr import CSRGraph, validate_graph
from ..dynamic_graph import DynamicGraph
from . import cpu, order, variants

SCIPY_NO_PREDECESSOR = -9999  # what scipy.sparse.csgraph writes for "no predecessor"


@dataclass(frozen=True)
class BFSResult:
    """What :func:`bfs` returns; arrays live on the side the graph came from.

    On the GPU, :func:`bfs` returns as soon as the search is queued, as CuPy calls do:
    ``n_levels`` and ``n_edges_traversed`` are counted on the device after the search and
    read back (one small copy, which waits for the search) the first time either is asked
    for, so a caller that only wants the arrays never waits on the host.
    """

    distances: Any  # int32, -1 where unreached
    predecessors: Any  # vertex-id dtype, root is its own parent, -1 unreached; or None
    variant: str  # the variant that ran (auto's choice resolved)
    device: str  # "cpu" or "gpu"
    source: int = -1
    # For a DynamicGraph: the graph version searched, and whether the labels were repaired
    # from an earlier result (bfs(..., previous=)) rather than searched afresh.
    graph_version: int | None = None
    incremental: bool = False
    # (CSR entries out of reached vertices, largest label) as ints, or a device array
    # holding them (read on first use).
    figures: Any = field(default=None, repr=False, compare=False)

    def _figures(self) -> tuple[int, int]:
        figures = self.figures
        if not isinstance(figures, tuple):
            words = figures.get()
            figures = (int(words[0]), int(words[1]))
            object.__setattr__(self, "figures", figures)  # read once
        return figures

    @property
    def n_levels(self) -> int:
        """Number of non-empty levels (1 for an isolated source)."""
        return self._figures()[1] + 1

    @property
    def n_edges_traversed(self) -> int:
        """CSR entries out of reached vertices (directed entries: on a symmetric graph
        twice Graph500's count of undirected edges)."""
        return self._figures()[0]


def _as_graph(graph: Any, what: str = "graph", pending: list | None = None) -> CSRGraph:
    """The shared validation path (:func:`morphgpu.csr.validate_graph`): dense input by
    SciPy's null rules (0, NaN, +-inf are no edge), nested lists accepted."""
    try:
        return validate_graph(graph, what=what, pending=pending)
    except TypeError as exc:
        raise ValueError(str(exc)) from exc


def _scipy_matrix(host: CSRGraph) -> Any:
    """The graph's structure as a SciPy CSR matrix. SciPy's traversals read only indptr and
    indices; the data is a read-only broadcast 1.0 (float64, what SciPy converts to), so
    no array of the edges' size is written."""
    import scipy.sparse as sp  # noqa: PLC0415

    n = host.n_vertices
    ones = np.broadcast_to(np.float64(1.0), (host.indices.size,))
    return sp.csr_matrix((ones, host.indices, host.indptr), shape=(n, n))


def _scipy_sparse(graph: Any) -> bool:
    import scipy.sparse as sp  # noqa: PLC0415

    return bool(sp.issparse(graph))


def _scipy_can_hold(g: CSRGraph) -> bool:
    """SciPy's csgraph routines index with int32."""
    return g.n_vertices < 2**31 and g.n_edges < 2**31


def _delegate_to_scipy(device: str, side: str, g: CSRGraph) -> bool:
    """device="auto" on a machine without a GPU, and a graph SciPy's int32 ids can hold."""
    return device == "auto" and side == "cpu" and _scipy_can_hold(g)


def _scipy_bfs(host: CSRGraph, source: int) -> tuple[np.ndarray, np.ndarray]:
    """(distances, parents with the root its own parent and -1 unreached) by SciPy."""
    import scipy.sparse.csgraph as csgraph  # noqa: PLC0415

    n = host.n_vertices
    node_order, pred = csgraph.breadth_first_order(_scipy_matrix(host), source, directed=True,
                                                   return_predecessors=True)
    dist = order.distances_from_fifo(node_order, pred, n)
    parent = pred.astype(host.indices.dtype if host.indices.dtype.kind == "i" else np.int64)
    parent[dist < 0] = -1
    parent[source] = source
    return dist, parent


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
    partitions: int | None = None,
    devices: Any = None,
) -> BFSResult:
    """Breadth-first search from ``source``: distances, optional parents, levels, edges.

    ``graph`` is a :class:`~morphgpu.csr.CSRGraph`, a SciPy/CuPy sparse matrix, a dense
    adjacency matrix (edges follow CSR rows: u -> v for every stored (u, v)) or a
    :class:`~morphgpu.dynamic_graph.DynamicGraph`. ``variant`` names a strategy from
    :data:`morphgpu.bfs.variants.VARIANTS` or ``"auto"`` (chosen from the degree
    distribution; see that module; on a deep, narrow GPU CSRGraph, ``persistent`` until
    the graph's searches have cost about what timing ``persistent``, ``tiled`` (at each
    of its horizons) and ``overlay`` (at each of its deltas) costs, then that timing once,
    and the fastest from then on,
    unless its first search found few, wide levels, after which it runs ``beamer``:
    :mod:`morphgpu.bfs.gpu.deep_choice`). Results come back on the graph's side;
    every call returns arrays of its own (never shared with another call's result). Repeated GPU
    searches on one GPU ``CSRGraph`` with one ``variant`` take a prepared path from the
    second call: the source is checked and the search launched before anything else.

    A CSR, CSC or COO matrix is converted once: the graph (and its GPU workspace) is kept
    per matrix object and reused while the matrix is unchanged (:mod:`morphgpu.graph_cache`).
    While cached, a SciPy matrix's index arrays are read-only (in-place writes raise
    instead of giving a stale result; ``morphgpu.forget(matrix)`` undoes it) and a CuPy
    matrix's arrays are fingerprinted on the GPU at every call; edits that replace arrays
    (``m[i, j] = 1`` adding an entry, ``setdiag``) get a fresh graph.

    ``previous`` (DynamicGraph only): a result of an earlier search from the same source on
    this graph. When only insertions happened since, its labels are repaired from the
    inserted edges (decrease-only) instead of searching again; the result is the same as a
    fresh search's (distances equal; parents valid). Otherwise a fresh search runs.
    ``device="auto"`` without a GPU runs SciPy's search (``variant="scipy"``) on CSR
    inputs, faster than our NumPy path, which ``device="cpu"`` runs.

    ``partitions=P`` runs the partitioned search (:mod:`morphgpu.bfs.partitioned`): the
    vertices split into P ranges balanced by edges, each part expanding its own rows and
    sending remote discoveries to their owners, all in this process on ``device`` (the
    partition logic that several GPUs run). ``devices=[0, 1, ...]`` runs one part per GPU
    of this process over NCCL (``cupy.cuda.nccl``). Results are the same as an
    unpartitioned search's (distances equal; parents valid), in global vertex order on
    the graph's side; ``variant`` is then ``"auto"`` (reported as ``partitioned-P`` or
    ``partitioned-nccl-P``). ``graph`` may also be a
    :class:`~morphgpu.bfs.partitioned.PartitionedGraph` built part by part (for example
    ``PartitionedGraph.from_edge_chunks(generators.kronecker_edge_chunks(26), ...)``), so
    a graph larger than one GPU's memory is never held whole; it is searched in its parts.
    """
    global _gpu
    # A GPU CSRGraph searched before with this variant: straight to its prepared search. So
    # too a cached CuPy matrix whose graph was searched so, its fingerprint check run by the
    # search kernel and confirmed (graph_cache's rule): the general path's dispatch cost
    # ~50 us of host time per call (H200, a 16k-vertex graph).
    if (_gpu is not None and previous is None and partitions is None and devices is None
            and (device == "gpu" or device == "auto")):
        g = graph if type(graph) is CSRGraph else graph_cache.unchanged_cupy_graph(graph)
        prepared = None if g is None else _gpu.prepared_search(g, variant)
        if prepared is not None:
            if type(source) is not int and isinstance(source, np.integer):
                source = int(source)
            if type(source) is int and 0 <= source < g.n_vertices:
                if g is graph:
                    return _prepared_bfs(g, source, prepared, predecessors)
                # The check inside the search's first phase where it can run there (the
                # prepared searches are direction.cu's), else launched beside it first.
                check = graph_cache.check_inside(graph)
                pending = graph_cache.check_launch(graph) if check is None else [check]
                result = _prepared_bfs(g, source, prepared, predecessors, check)
                if graph_cache.confirm(pending):
                    return result
                # Changed in place since cached (confirm dropped its graph): the general
                # path below builds the graph afresh.
    # A CSRGraph needs no look at the partitioned module (its import statement alone is
    # host time before every search's launch).
    if partitions is not None or devices is not None or (
            type(graph) is not CSRGraph and _is_partitioned(graph)):
        return _bfs_partitioned(graph, source, variant, device, predecessors, previous,
                                partitions, devices)
    if isinstance(graph, DynamicGraph):
        return _bfs_dynamic(graph, source, variant, device, predecessors, previous)
    if previous is not None:
        raise ValueError("previous: incremental searches need a DynamicGraph")
    # A cached CuPy matrix's fingerprint check is queued, not read: it is confirmed after
    # the search is queued (graph_cache.confirm), so the GPU never waits for the host.
    pending: list = []
    g = _as_graph(graph, pending=pending)
    source = _check_source(source, g.n_vertices, "source")
    chosen = variants.check(variant)
    side = backend.resolve_device(device, who="morphgpu.bfs")
    if pending and side != "gpu" and not graph_cache.confirm(pending):
        g = _as_graph(graph)  # changed in place since cached: its graph afresh
    home = g.side
    if chosen.name == "auto" and _delegate_to_scipy(device, side, g):
        host = g.to("cpu")
        dist, parent = _scipy_bfs(host, source)
        figures = (int(np.diff(host.indptr)[dist >= 0].sum()), int(dist.max()))
        name = "scipy"
    elif side == "gpu":
        from . import gpu  # noqa: PLC0415  (CuPy only where the GPU runs)

        _gpu = gpu
        with backend.gpu_memory_guard(f"bfs on {g.n_vertices} vertices, {g.n_edges} edges"):
            on_gpu = graph_cache.structure_on(g, "gpu")  # kept per matrix and device
            dist, parent, name, figures = gpu.search(  # figures: read when asked for
                on_gpu, source, variant=chosen.name, want_parents=predecessors)
        if pending and not graph_cache.confirm(pending):
            # The matrix was changed in place since its graph was cached: that search ran
            # on the old graph. Search the new one (its graph is built afresh).
            return bfs(graph, source, variant=variant, device=device,
                       predecessors=predecessors)
    else:
        host = g.to("cpu")
        cg = cpu.CPUGraph(host.indptr, host.indices, symmetric=not host.directed)
        direction = chosen.cpu_direction
        if chosen.name == "auto":
            direction = variants.auto_cpu(np.diff(host.indptr))
        dist, parent, _ = cpu.bfs(cg, source, want_parents=predecessors, direction=direction)
        figures = (int(np.diff(host.indptr)[dist >= 0].sum()), int(dist.max()))
        name = chosen.name if chosen.name != "auto" else f"cpu-{direction}"
    return BFSResult(
        distances=backend.to_side(dist, home),  # type: ignore[arg-type]
        predecessors=backend.to_side(parent, home) if predecessors else None,  # type: ignore[arg-type]
        figures=figures,
        variant=name,
        device=side,
        source=source,
    )


# The GPU package (bfs/gpu), set by the first GPU search: its import statement alone, on
# every call, would be host time before the launch.
_gpu: Any = None


def _prepared_bfs(g: CSRGraph, source: int, prepared: tuple[str, Any],
                  predecessors: bool, check: Any = None) -> BFSResult:
    """bfs() on a GPU graph whose search for this variant is prepared (gpu.prepared_search;
    only an earlier call on the same graph made it, so the graph is on the GPU and the
    variant valid): the launch first, then the result object. The host's work before the
    launch is the GPU's idle time in every search (H100, Kronecker 21: ~25 µs of the full
    path's dispatch against a search of ~150 µs). ``check``: a cached CuPy matrix's
    fingerprint check for the search kernel to run (graph_cache.check_inside)."""
    name, call = prepared
    try:
        dist, parent, figures = (call(source, predecessors) if check is None
                                 else call(source, predecessors, check))
    except backend.cupy_module().cuda.memory.OutOfMemoryError as exc:  # evaluated on errors only
        raise backend.gpu_out_of_memory(
            f"bfs on {g.n_vertices} vertices, {g.n_edges} edges", exc) from exc
    return BFSResult(distances=dist, predecessors=parent, figures=figures, variant=name,
                     device="gpu", source=source)


def _bfs_partitioned(graph: Any, source: Any, variant: str, device: str, predecessors: bool,
                     previous: BFSResult | None, partitions: Any, devices: Any) -> BFSResult:
    """bfs(..., partitions=P) and bfs(..., devices=[...]): the partitioned search."""
    from . import partitioned  # noqa: PLC0415

    if isinstance(graph, DynamicGraph) or previous is not None:
        raise ValueError("partitions/devices: a partitioned search takes a static graph "
                         "(no DynamicGraph, no previous=)")
    if variant != "auto":
        raise ValueError(f"partitions/devices: the partitioned search has one strategy; "
                         f"variant={variant!r} is not available with it")
    if devices is not None:
        if isinstance(devices, (int, np.integer)) or not hasattr(devices, "__iter__"):
            raise ValueError(f"devices must be a list of GPU ids, got {devices!r}")
        devices = list(devices)
        if not devices:
            raise ValueError("devices: give at least one GPU id")
    # A PartitionedGraph (built part by part, e.g. from edge chunks: never whole) is
    # searched as it is split; its parts live on the host, or on the GPUs that built them.
    g = graph if _is_partitioned(graph) else _as_graph(graph)
    if _is_partitioned(graph) and graph.side == "gpu":
        where = [int(graph.parts[p].indices.device.id) for p in sorted(graph.parts)]
        if devices != where:
            raise ValueError(f"this graph's parts were built on GPUs {where}, one each: "
                             f"search it with devices={where}")
    source = _check_source(source, g.n_vertices, "source")
    if partitions is not None:
        partitions = partitioned.check_partitions(partitions, g.n_vertices)
    side = "gpu" if devices is not None else backend.resolve_device(device, who="morphgpu.bfs")
    home = g.side  # a PartitionedGraph: where its parts were built
    with backend.gpu_memory_guard(f"partitioned bfs on {g.n_vertices} vertices") \
            if side == "gpu" else _nothing():
        out, name = partitioned.run(g, source, side=side, want_parents=predecessors,
                                    partitions=partitions, devices=devices)
    return BFSResult(
        distances=backend.to_side(out.distances, home),  # type: ignore[arg-type]
        predecessors=backend.to_side(out.predecessors, home) if predecessors else None,  # type: ignore[arg-type]
        figures=(out.edges, out.top),
        variant=name,
        device=side,
        source=source,
    )


def _is_partitioned(graph: Any) -> bool:
    from .partitioned import PartitionedGraph  # noqa: PLC0415  (loaded on first use)

    return isinstance(graph, PartitionedGraph)


def _nothing() -> Any:
    import contextlib  # noqa: PLC0415

    return contextlib.nullcontext()


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
                                                       old_parent, inserted)
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
            keys = backend.to_host(inserted)
            n = max(dg.n_vertices, 1)
            dist, parent = cpu.repair(indptr, indices, backend.to_host(previous.distances),
                                      old_parent, keys // n, keys % n)
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
        figures=(reached_edges, top),
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
    """``scipy.sparse.csgraph.breadth_first_order``: same arguments, same arrays, same order.

    Returns ``node_array`` (int32, the reached vertices in SciPy's order: a FIFO queue
    that scans each vertex's CSR row in stored order; with ``directed=False`` the row,
    then the vertex's in-edges by source) and, if ``return_predecessors``,
    ``predecessors`` (int32, the vertex whose row reached each vertex first, -9999 for the
    source and unreached vertices), equal to SciPy's element for element. Our search
    (GPU, or ``device="cpu"``) finds the distances and the order is rebuilt from them
    (:mod:`morphgpu.bfs.order`); ``device="auto"`` calls SciPy itself on any machine (on
    the host copy of a CuPy input, the result going back to the GPU), since the order is
    what SciPy's sequential queue makes: rebuilding it from distances on the host costs
    more than SciPy's whole traversal, GPU or not (NumPy, 2-core host: 5-15x, grids of
    90k and 1M vertices, Kronecker 14 and 18; an H100 machine's ``auto`` ran 17-33x
    SciPy's time on the small ones before this).
    """
    if device == "auto" and _scipy_sparse(csgraph):
        # SciPy's own input: its own call, nothing converted (the fast path of auto).
        import scipy.sparse.csgraph as scipy_csgraph  # noqa: PLC0415

        shape = csgraph.shape
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"graph: a square matrix is needed, got shape {shape}")
        i_start = _check_source(i_start, shape[0], "i_start")
        return scipy_csgraph.breadth_first_order(csgraph, i_start, directed=directed,
                                                 return_predecessors=return_predecessors)
    g = _as_graph(csgraph, "csgraph")
    home = g.side
    i_start = _check_source(i_start, g.n_vertices, "i_start")
    side = backend.resolve_device(device, who="morphgpu.bfs")
    n = g.n_vertices
    if device == "auto" and _scipy_can_hold(g):  # SciPy's order on any machine (above)
        import scipy.sparse.csgraph as scipy_csgraph  # noqa: PLC0415

        res = scipy_csgraph.breadth_first_order(
            _scipy_matrix(g.to("cpu")), i_start, directed=directed,
            return_predecessors=return_predecessors)
        if not return_predecessors:
            return backend.to_side(res.astype(np.int32, copy=False), home)  # type: ignore[arg-type]
        node_order, pred = (r.astype(np.int32, copy=False) for r in res)
        return backend.to_side(node_order, home), backend.to_side(pred, home)  # type: ignore[arg-type]
    host = g.to("cpu")
    indptr, indices = host.indptr, host.indices
    if _scipy_sparse(csgraph):
        # SciPy scans the rows as stored (unsorted, duplicates and all; g is canonical),
        # and with directed=False reads a CSC matrix as its transpose's CSR.
        raw = csgraph.T if not directed and csgraph.format == "csc" else csgraph
        raw = raw.tocsr()
        indptr, indices = raw.indptr, raw.indices
    if not directed:
        indptr, indices = order.undirected_rows(indptr, indices, n)
    scan = CSRGraph.from_arrays(indptr, indices, n_vertices=n, directed=True, validate=False)
    result = bfs(scan.to(side), i_start, device=side)
    dist = backend.to_host(result.distances).astype(np.int64)
    node_order, parent = order.fifo_order(indptr, indices, dist, i_start)
    node_order = node_order.astype(np.int32)
    if not return_predecessors:
        return backend.to_side(node_order, home)  # type: ignore[arg-type]
    pred = parent.astype(np.int32)
    pred[pred < 0] = SCIPY_NO_PREDECESSOR
    return backend.to_side(node_order, home), backend.to_side(pred, home)  # type: ignore[arg-type]
