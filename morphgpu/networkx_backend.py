"""A NetworkX backend: ``nx.bfs_edges(G, 0, backend="morphgpu")`` runs on morphgpu.

NetworkX finds it through two entry points (``pyproject.toml``)::

    [project.entry-points."networkx.backends"]
    morphgpu = "morphgpu.networkx_backend:BackendInterface"
    [project.entry-points."networkx.backend_info"]
    morphgpu = "morphgpu.networkx_backend:get_info"

so it is there once the package is installed (``pip install morphgpu``, or ``-e .``).
Call a function with ``backend="morphgpu"``, or set ``NETWORKX_BACKEND_PRIORITY=morphgpu``
to try it first everywhere. The device is a backend setting:
``nx.config.backends.morphgpu.device = "cpu"`` (default ``"auto"``: the GPU when CuPy sees
one).

What runs here, and what NetworkX users get back:

- the BFS family (``bfs_edges``, ``generic_bfs_edges``, ``bfs_tree``,
  ``bfs_predecessors``, ``bfs_successors``, ``bfs_layers``, ``descendants_at_distance``,
  ``single_source_shortest_path_length``, ``single_target_shortest_path_length``):
  distances come from :func:`morphgpu.bfs.bfs`; the order NetworkX defines (a FIFO queue,
  neighbours in adjacency order, the first parent to reach a vertex) is rebuilt from them
  level by level with NumPy (:mod:`morphgpu.bfs.order`), so results are NetworkX's,
  element for element and in order.
- ``minimum_spanning_edges`` / ``minimum_spanning_tree`` and their ``maximum_`` twins:
  :func:`morphgpu.mst.boruvka` over the edges in ``G.edges()`` order, so ties are broken
  as NetworkX's Kruskal breaks them (by weight, then edge order); edges come out in
  Kruskal's order with their data dicts. Only ``algorithm="kruskal"`` (the default) runs
  here: Prim's and Borůvka's output comes in their own order.

Not run here (``can_run`` says why, and NetworkX runs its own code when asked to fall
back): ``sort_neighbors``, ``generic_bfs_edges``'s ``neighbors`` function, multigraphs and
``algorithm="prim"``/``"boruvka"`` for the spanning-tree functions.

A converted graph keeps a reference to the NetworkX graph it came from (for node
objects, attributes and the result graphs), plus CSR arrays built once per direction.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

BACKEND_NAME = "morphgpu"

_BFS_FUNCTIONS = (
    "generic_bfs_edges",
    "bfs_edges",
    "bfs_tree",
    "bfs_predecessors",
    "bfs_successors",
    "bfs_layers",
    "descendants_at_distance",
    "single_source_shortest_path_length",
    "single_target_shortest_path_length",
)
_MST_FUNCTIONS = (
    "minimum_spanning_edges",
    "minimum_spanning_tree",
    "maximum_spanning_edges",
    "maximum_spanning_tree",
)
FUNCTIONS = _BFS_FUNCTIONS + _MST_FUNCTIONS


def get_info() -> dict[str, Any]:
    """What the ``networkx.backend_info`` entry point returns (read when NetworkX imports)."""
    from . import __version__  # noqa: PLC0415

    bfs_note = ("Distances by morphgpu's BFS (GPU or NumPy); NetworkX's order rebuilt "
                "from them. `sort_neighbors` is not supported.")
    mst_note = ("Borůvka (GPU or NumPy) with NetworkX's Kruskal tie rule; not for "
                "multigraphs, nor algorithm='prim' or 'boruvka'.")
    return {
        "backend_name": BACKEND_NAME,
        "project": "morphgpu",
        "package": "morphgpu",
        "version": __version__,
        "short_summary": "BFS and minimum spanning trees on NVIDIA GPUs (CuPy) or NumPy.",
        "default_config": {"device": "auto"},
        "functions": {
            **{name: {"additional_docs": bfs_note} for name in _BFS_FUNCTIONS},
            **{name: {"additional_docs": mst_note} for name in _MST_FUNCTIONS},
        },
    }


# --------------------------------------------------------------------------- the graph
class MorphGraph:
    """A NetworkX graph seen as CSR arrays (vertex i is the i-th node of ``G``)."""

    __networkx_backend__ = BACKEND_NAME

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.nodes = list(graph)
        self.index = {node: i for i, node in enumerate(self.nodes)}
        self._csr: dict[bool, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node: Any) -> bool:
        try:
            return node in self.index
        except TypeError:  # unhashable
            return False

    def is_directed(self) -> bool:
        return bool(self.graph.is_directed())

    def csr(self, reverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(indptr, indices) of the successor lists (predecessors if ``reverse``), each
        row in the adjacency dict's order, which is the order NetworkX visits."""
        reverse = bool(reverse and self.is_directed())
        if reverse not in self._csr:
            adj = self.graph._pred if reverse else self.graph._adj
            n = len(self.nodes)
            degrees = np.fromiter((len(nbrs) for nbrs in adj.values()), dtype=np.int64,
                                  count=n)
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(degrees, out=indptr[1:])
            index = self.index
            indices = np.fromiter((index[v] for nbrs in adj.values() for v in nbrs),
                                  dtype=np.int64, count=int(indptr[-1]))
            self._csr[reverse] = (indptr, indices)
        return self._csr[reverse]


def _device() -> str:
    import networkx as nx  # noqa: PLC0415

    cfg = getattr(nx.config.backends, BACKEND_NAME, None)
    return getattr(cfg, "device", "auto") if cfg is not None else "auto"


def _distances(mg: MorphGraph, sources: list[int], reverse: bool) -> np.ndarray:
    """Hop distances (int64, -1 unreached) from the nearest of ``sources``, by morphgpu's BFS."""
    from . import backend  # noqa: PLC0415
    from .bfs import bfs  # noqa: PLC0415
    from .csr import CSRGraph  # noqa: PLC0415

    indptr, indices = mg.csr(reverse)
    n = len(mg.nodes)
    if len(sources) == 1:
        g = CSRGraph.from_arrays(indptr, indices, n_vertices=n,
                                 directed=mg.is_directed(), validate=False)
        dist = backend.to_host(bfs(g, sources[0], device=_device()).distances)
        return dist.astype(np.int64)
    # Several sources: one extra vertex n whose row lists them; distances are one less.
    src = np.asarray(sources, dtype=np.int64)
    indptr2 = np.concatenate([indptr, [indptr[-1] + src.size]])
    g = CSRGraph.from_arrays(indptr2, np.concatenate([indices, src]), n_vertices=n + 1,
                             directed=True, validate=False)
    dist = backend.to_host(bfs(g, n, device=_device()).distances)[:n].astype(np.int64)
    return np.where(dist >= 0, dist - 1, -1)


def _fifo_levels(indptr: np.ndarray, indices: np.ndarray, dist: np.ndarray,
                 first: np.ndarray, depth_limit: float) -> Iterator[tuple[np.ndarray,
                                                                         np.ndarray]]:
    from .bfs.order import fifo_levels  # noqa: PLC0415

    return fifo_levels(indptr, indices, dist, first, depth_limit)


def _graph_arg(args: tuple, kwargs: dict, name: str = "G") -> Any:
    return args[0] if args else kwargs.get(name)


# --------------------------------------------------------------------------- BFS family
def _missing(node: Any, kind: str = "graph") -> Exception:
    import networkx as nx  # noqa: PLC0415

    return nx.NetworkXError(f"The node {node} is not in the {kind}.")


def _bfs_edge_arrays(G: MorphGraph, source: Any, reverse: bool,
                     depth_limit: Any) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    # NetworkX's generic_bfs_edges starts with seen = {source} (TypeError for an unhashable
    # source), then G.neighbors(source), whose error says "digraph" on a directed graph
    # (successors and predecessors alike). Both were "The node ... is not in the graph."
    hash(source)
    if source not in G:
        raise _missing(source, "digraph" if G.is_directed() else "graph")
    s = G.index[source]
    dist = _distances(G, [s], reverse)
    indptr, indices = G.csr(reverse)
    limit = len(G) if depth_limit is None else depth_limit
    yield from _fifo_levels(indptr, indices, dist, np.array([s], dtype=np.int64), limit)


def bfs_edges(G: MorphGraph, source: Any, reverse: bool = False, depth_limit: Any = None,
              sort_neighbors: Any = None) -> Iterator[tuple[Any, Any]]:
    nodes = G.nodes
    for children, parents in _bfs_edge_arrays(G, source, reverse, depth_limit):
        for p, c in zip(parents.tolist(), children.tolist()):
            yield nodes[p], nodes[c]


def bfs_tree(G: MorphGraph, source: Any, reverse: bool = False, depth_limit: Any = None,
             sort_neighbors: Any = None) -> Any:
    import networkx as nx  # noqa: PLC0415

    T = nx.DiGraph()
    T.add_node(source)
    T.add_edges_from(bfs_edges(G, source, reverse=reverse, depth_limit=depth_limit))
    return T


def bfs_predecessors(G: MorphGraph, source: Any, depth_limit: Any = None,
                     sort_neighbors: Any = None) -> Iterator[tuple[Any, Any]]:
    for s, t in bfs_edges(G, source, depth_limit=depth_limit):
        yield (t, s)


def bfs_successors(G: MorphGraph, source: Any, depth_limit: Any = None,
                   sort_neighbors: Any = None) -> Iterator[tuple[Any, list]]:
    parent = source
    children: list = []
    for p, c in bfs_edges(G, source, depth_limit=depth_limit):
        if p == parent:
            children.append(c)
            continue
        yield (parent, children)
        children = [c]
        parent = p
    yield (parent, children)


def _layers(G: MorphGraph, sources: Any) -> Iterator[list]:
    if sources in G:
        sources = [sources]
    current = list(set(sources))  # NetworkX's first layer is list(set(sources)) too
    for node in current:
        if node not in G:
            raise _missing(node)
    if not current:
        return
    yield current
    first = np.array([G.index[v] for v in current], dtype=np.int64)
    dist = _distances(G, first.tolist(), reverse=False)
    indptr, indices = G.csr(False)
    nodes = G.nodes
    for level, _ in _fifo_levels(indptr, indices, dist, first, np.inf):
        yield [nodes[i] for i in level.tolist()]


def bfs_layers(G: MorphGraph, sources: Any) -> Iterator[list]:
    yield from _layers(G, sources)


def descendants_at_distance(G: MorphGraph, source: Any, distance: int) -> set:
    if source not in G:
        raise _missing(source)
    for i, layer in enumerate(_layers(G, source)):
        if i == distance:
            return set(layer)
    return set()


def generic_bfs_edges(G: MorphGraph, source: Any, neighbors: Any = None,
                      depth_limit: Any = None) -> Iterator[tuple[Any, Any]]:
    yield from bfs_edges(G, source, depth_limit=depth_limit)  # neighbors=None: can_run


def _path_lengths(G: MorphGraph, node: Any, cutoff: Any, reverse: bool) -> dict:
    limit = np.inf if cutoff is None else cutoff
    out = {node: 0}
    s = G.index[node]
    dist = _distances(G, [s], reverse=reverse)
    indptr, indices = G.csr(reverse)
    nodes = G.nodes
    levels = _fifo_levels(indptr, indices, dist, np.array([s], dtype=np.int64), limit)
    for depth, (level, _) in enumerate(levels, start=1):
        out.update((nodes[i], depth) for i in level.tolist())
    return out


def single_source_shortest_path_length(G: MorphGraph, source: Any,
                                       cutoff: Any = None) -> dict:
    import networkx as nx  # noqa: PLC0415

    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    return _path_lengths(G, source, cutoff, reverse=False)


def single_target_shortest_path_length(G: MorphGraph, target: Any,
                                       cutoff: Any = None) -> dict:
    import networkx as nx  # noqa: PLC0415

    if target not in G:
        raise nx.NodeNotFound(f"Target {target} is not in G")
    return _path_lengths(G, target, cutoff, reverse=True)  # predecessors when directed


# --------------------------------------------------------------------------- spanning trees
_MST_ALGORITHMS = ("kruskal", "prim", "boruvka")
# NetworkX's other algorithm names (networkx.algorithms.tree.mst.ALGORITHMS): can_run
# declines them, so NetworkX runs its own.
_OTHER_MST_ALGORITHMS = ("prim", "boruvka", "borůvka")


def _spanning_edges(G: MorphGraph, weight: Any, data: bool, ignore_nan: bool,
                    minimum: bool) -> Iterator[tuple]:
    from . import backend  # noqa: PLC0415
    from .csr import CSRGraph  # noqa: PLC0415
    from .mst import boruvka  # noqa: PLC0415

    edges = list(G.graph.edges(data=True))
    keep, rank = _weight_ranks(edges, [d.get(weight, 1) for _, _, d in edges], ignore_nan)
    index = G.index
    n = len(G.nodes)
    u = np.fromiter((index[a] for a, _, _ in edges), dtype=np.int64, count=len(edges))[keep]
    v = np.fromiter((index[b] for _, b, _ in edges), dtype=np.int64, count=len(edges))[keep]
    key = rank if minimum else (rank.max(initial=0) - rank)
    # G.edges() lists edges by their first endpoint in node order, so rows are already
    # grouped and a CSR position is the edge's place in G.edges(): Borůvka's tie rule
    # (weight, position) is Kruskal's stable sort.
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(u, minlength=n), out=indptr[1:])
    g = CSRGraph.from_arrays(indptr, v, key, n_vertices=n, directed=True, validate=False)
    result = boruvka(g, device=_device(), symmetric=False)
    ids = backend.to_host(result.edge_ids).astype(np.int64)
    ids = ids[np.lexsort((ids, key[ids]))]  # Kruskal's order: by weight, then edge order
    for e in keep[ids].tolist():
        a, b, d = edges[e]
        yield (a, b, d) if data else (a, b)


def _weight_ranks(edges: list, values: list, ignore_nan: bool) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """(keep, rank): the positions of the edges that take part (NaN weights left out under
    ``ignore_nan``) and each one's dense rank among their weights, ordered exactly as
    NetworkX's Kruskal orders the weights themselves (Python comparisons).

    Ranks, not the weights, go to Borůvka: weights NumPy cannot hold exactly (integers
    beyond 2**53 among floats, beyond int64, Fractions, Decimals) were rounded into false
    ties, and -w of int64's least value overflowed; weights that are not real numbers
    (None, complex, strings) were cast or taken for NaN where NetworkX raises TypeError.
    """
    try:
        w = np.asarray(values) if values else np.zeros(0, dtype=np.int64)
    except (ValueError, TypeError):  # ragged sequences and the like: Python's path says
        w = np.zeros(0, dtype=object)
    exact = w.ndim == 1 and w.size == len(values) and w.dtype.kind in "biuf"
    if exact and w.dtype.kind == "f":
        # np.asarray rounds the integers (or other numbers) it meets among floats; Python
        # compares them with floats exactly (NumPy scalars as Python numbers: np.uint64
        # compares with a float in float64). NaN is never equal: it is handled below.
        exact = all(b != b or (a.item() if isinstance(a, np.generic) else a) == b
                    for a, b in zip(values, w.tolist()))
    if not exact:
        return _python_ranks(edges, values, ignore_nan)
    keep = np.arange(len(values))
    if w.dtype.kind == "f":
        nan = np.isnan(w)
        if nan.any():
            if not ignore_nan:
                bad = edges[int(np.argmax(nan))]
                raise ValueError(f"NaN found as an edge weight. Edge {bad}")
            keep = np.flatnonzero(~nan)
            w = w[keep]
    return keep, np.unique(w, return_inverse=True)[1].astype(np.int64).reshape(-1)


def _python_ranks(edges: list, values: list, ignore_nan: bool) -> tuple[np.ndarray,
                                                                        np.ndarray]:
    """_weight_ranks by NetworkX's own steps: ``isnan`` on each weight in edge order (a
    TypeError for a weight that is not a real number, as there), then Python's sort."""
    from math import isnan  # noqa: PLC0415

    keep = []
    for i, value in enumerate(values):
        if isnan(value):
            if not ignore_nan:
                raise ValueError(f"NaN found as an edge weight. Edge {edges[i]}")
            continue
        keep.append(i)
    kept = [values[i] for i in keep]
    order = sorted(range(len(kept)), key=kept.__getitem__)
    rank = np.zeros(len(kept), dtype=np.int64)
    r = 0
    for before, i in zip([None, *order], order):
        if before is not None and kept[before] < kept[i]:
            r += 1
        rank[i] = r
    return np.asarray(keep, dtype=np.int64), rank


def _check_algorithm(algorithm: str) -> None:
    if algorithm not in _MST_ALGORITHMS:
        raise ValueError(f"{algorithm} is not a valid choice for an algorithm.")


def minimum_spanning_edges(G: MorphGraph, algorithm: str = "kruskal", weight: Any = "weight",
                           keys: bool = True, data: bool = True,
                           ignore_nan: bool = False) -> Iterator[tuple]:
    _check_algorithm(algorithm)
    return _spanning_edges(G, weight, data, ignore_nan, minimum=True)


def maximum_spanning_edges(G: MorphGraph, algorithm: str = "kruskal", weight: Any = "weight",
                           keys: bool = True, data: bool = True,
                           ignore_nan: bool = False) -> Iterator[tuple]:
    _check_algorithm(algorithm)
    return _spanning_edges(G, weight, data, ignore_nan, minimum=False)


def _tree(G: MorphGraph, edges: Iterator[tuple]) -> Any:
    if G.is_directed():
        # NetworkX's minimum_spanning_edges carries @not_implemented_for("directed"), which
        # its tree functions meet when they call it; ours call the module's functions, so a
        # DiGraph got a tree back instead of the error.
        import networkx as nx  # noqa: PLC0415

        raise nx.NetworkXNotImplemented("not implemented for directed type")
    T = G.graph.__class__()
    T.graph.update(G.graph.graph)
    T.add_nodes_from(G.graph.nodes.items())
    T.add_edges_from(edges)
    return T


def minimum_spanning_tree(G: MorphGraph, weight: Any = "weight", algorithm: str = "kruskal",
                          ignore_nan: bool = False) -> Any:
    return _tree(G, minimum_spanning_edges(G, algorithm, weight, ignore_nan=ignore_nan))


def maximum_spanning_tree(G: MorphGraph, weight: Any = "weight", algorithm: str = "kruskal",
                          ignore_nan: bool = False) -> Any:
    return _tree(G, maximum_spanning_edges(G, algorithm, weight, ignore_nan=ignore_nan))


# --------------------------------------------------------------------------- the interface
class BackendInterface:
    """What the ``networkx.backends`` entry point names: conversions plus the functions."""

    @staticmethod
    def convert_from_nx(graph: Any, *args: Any, **kwargs: Any) -> MorphGraph:
        if isinstance(graph, MorphGraph):
            return graph
        return MorphGraph(graph)

    @staticmethod
    def convert_to_nx(obj: Any, *, name: str | None = None) -> Any:
        if isinstance(obj, MorphGraph):
            return obj.graph
        return obj

    @staticmethod
    def can_run(name: str, args: tuple, kwargs: dict) -> bool | str:
        if name not in FUNCTIONS:
            return f"morphgpu does not implement {name}"
        if name == "generic_bfs_edges":
            neighbors = kwargs.get("neighbors", args[2] if len(args) > 2 else None)
            return True if neighbors is None else "a neighbors function is not supported"
        if name in _BFS_FUNCTIONS:
            sort_neighbors = kwargs.get("sort_neighbors")
            if sort_neighbors is None and name in ("bfs_edges", "bfs_tree") and len(args) > 4:
                sort_neighbors = args[4]
            elif sort_neighbors is None and name in ("bfs_predecessors",
                                                     "bfs_successors") and len(args) > 3:
                sort_neighbors = args[3]
            if sort_neighbors is not None:
                return "sort_neighbors is not supported (NetworkX's own order is)"
            return True
        G = _graph_arg(args, kwargs)
        graph = G.graph if isinstance(G, MorphGraph) else G
        if graph is not None and graph.is_multigraph():
            return "multigraphs are not supported by morphgpu's spanning trees"
        # Prim's and NetworkX's Borůvka yield their edges in their own order (Prim's also
        # oriented from the tree outward) and break ties their own way: only Kruskal's
        # output is rebuilt here. Names NetworkX refuses run on, to be refused as it does.
        at = 1 if name.endswith("_edges") else 2  # (G, algorithm, ...) / (G, weight, algorithm)
        algorithm = kwargs.get("algorithm", args[at] if len(args) > at else "kruskal")
        if isinstance(algorithm, str) and algorithm in _OTHER_MST_ALGORITHMS:
            return f"algorithm={algorithm!r} is not supported (only Kruskal's order is)"
        return True

    @staticmethod
    def should_run(name: str, args: tuple, kwargs: dict) -> bool | str:
        return True


for _name in FUNCTIONS:
    setattr(BackendInterface, _name, staticmethod(globals()[_name]))
del _name
