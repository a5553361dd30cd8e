"""The MST wing's door: ``minimum_spanning_tree`` (SciPy's call) and ``boruvka``.

Edges and ties. The graph is read as SciPy reads it: every stored entry (i, j), i != j,
of the CSR matrix is an undirected edge {i, j}; (i, j) and (j, i) are two parallel edges
that may differ in weight; self-loops are ignored. Edges are ordered by (weight, CSR
position), so the forest is unique, the CPU and GPU paths return the same edges, and
they are the edges SciPy's stable-sorted Kruskal returns. Positions are those of the
matrix as SciPy's Kruskal reads it: a float64 CSR matrix as stored (a non-canonical one,
rows unsorted or with duplicates, is read entry by entry, ties in stored order), anything
else after SciPy's conversion to float64 CSR (which sums duplicates and sorts rows).

Duplicate entries: in a float64 CSR matrix (and a CSRGraph) they are parallel edges, the
lightest counts, as in SciPy's Kruskal; other dtypes and formats sum them on the way to
float64 CSR, as SciPy's conversion does.

Explicit zeros (SciPy's convention, followed): in a *sparse* input a stored zero is an
edge of weight 0 and may be in the tree; in a *dense* input 0, NaN and +-inf mean "no
edge". Like SciPy, :func:`minimum_spanning_tree` returns a matrix from which stored zeros
are eliminated, so a tree edge of weight 0 does not appear in it; :func:`boruvka` lists
every forest edge, zero-weight ones included. One divergence: a NaN weight in a sparse
input is a ValueError (SciPy silently sorts it somewhere).

Undirected CSRGraphs (``directed=False``: every edge stored both ways with one weight)
let the paths consider only the entries (u, v) with u < v, half the work; the result is
the same, because the twin (v, u) has a larger position and so always loses the tie.

Which code runs on a machine without a GPU: ``minimum_spanning_tree(..., device="auto")``
calls SciPy's own (compiled Kruskal; the same edges, as above), which is faster than our
NumPy rounds; ``device="cpu"`` runs our NumPy Borůvka, the CPU twin of the GPU kernel that
the tests compare it with. :func:`boruvka` under ``auto`` without a GPU runs SciPy's
Kruskal too, on keys that encode (weight rank, CSR position), so it returns the same
forest with its edge positions (``n_rounds`` is 0 then); past 2**53 / (m + 1) distinct
weights it runs our NumPy rounds.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .. import backend
from ..csr import CSRGraph, _dense_host, check_dense_adjacency, index_dtype, validate_graph
from . import keys as keymod
from .totals import exact_integer_sum


@dataclass(frozen=True)
class MSTResult:
    """A minimum spanning forest.

    ``src``/``dst``/``weights``/``edge_ids`` are arrays on the input's side, one entry per
    forest edge, ordered by ``edge_ids`` (the edge's position in the input's CSR entries).
    ``total_weight`` is exact for integer weights (a Python int).
    """

    src: Any
    dst: Any
    weights: Any
    edge_ids: Any
    total_weight: int | float
    n_components: int
    n_rounds: int
    n_vertices: int
    device: str
    method: str = "boruvka"  # or "scipy-kruskal" (device="auto" without a GPU)

    @property
    def n_edges(self) -> int:
        return int(self.edge_ids.size)

    def to_scipy(self) -> sp.csr_array:
        """The forest as an n x n SciPy CSR array (explicit zeros kept)."""
        src, dst, w = (backend.to_host(a) for a in (self.src, self.dst, self.weights))
        return sp.csr_array((w, (src, dst)), shape=(self.n_vertices, self.n_vertices))


@dataclass(frozen=True)
class _Prepared:
    n: int
    indptr: Any
    indices: Any
    weights: Any
    symmetric: bool
    side: str
    graph: Any = None  # the validated CSRGraph (graph_cache keeps its GPU structure)


def _prepare(graph: Any, symmetric: bool | None, what: str,
             pending: list | None = None) -> _Prepared:
    # The one validation path of every wing: SciPy's null rules for dense input (0, NaN,
    # +-inf are no edge), sparse duplicates summed, ragged lists and bad shapes refused.
    # ``pending``: a cached CuPy matrix's fingerprint check is queued, not read (see
    # graph_cache.confirm).
    given = isinstance(graph, CSRGraph)
    raw = _stored_rows(graph)
    g = raw if raw is not None else validate_graph(graph, what=what, pending=pending)
    n, indptr, indices, weights, side = g.n_vertices, g.indptr, g.indices, g.weights, g.side
    if symmetric is None:
        symmetric = not g.directed if given else False
    xp = backend.xp_for(side)  # type: ignore[arg-type]
    if weights is None:
        weights = xp.ones(indices.size, dtype=np.int32)
    weights = xp.asarray(weights)
    if weights.dtype.kind not in "biuf":
        raise ValueError(f"{what}: weights must be real numbers, got dtype {weights.dtype}")
    # NaN weights are reported by the path that runs (_check_no_nan; on the GPU, the
    # kernel), so a GPU input costs no extra pass and synchronisation here.
    # Narrow types widen to the ones the kernel reads bit-wise (exactly).
    if weights.dtype.kind == "b" or (weights.dtype.kind in "iu" and weights.dtype.itemsize < 4):
        weights = weights.astype(np.int32)
    elif weights.dtype.kind == "f" and weights.dtype.itemsize < 4:
        weights = weights.astype(np.float32)
    if indices.size >= keymod.MAX_POSITIONS:
        raise ValueError(
            f"{what}: {indices.size} CSR entries; boruvka supports fewer than 2**32"
        )
    return _Prepared(int(n), indptr, indices, weights, bool(symmetric), side, g)


def _stored_rows(graph: Any) -> CSRGraph | None:
    """A float64 CSR matrix (SciPy or CuPy) not in canonical format, as stored: SciPy's
    Kruskal reads such a matrix's entries as they are, duplicates as parallel edges (the
    lightest counts) and ties in stored order, where the shared conversion (validate_graph)
    sums duplicates; ``csr_matrix(([3., 1., 2.], [2, 1, 1], [0, 3, 3, 3]))`` gave edge
    (0, 1) weight 3 here and 1 in SciPy. Other dtypes SciPy converts to float64 with
    ``astype``, which sums duplicates and sorts the rows: the shared conversion's result.
    None for anything else."""
    if getattr(graph, "format", None) != "csr" or not hasattr(graph, "has_canonical_format"):
        return None
    shape = getattr(graph, "shape", ())
    if len(shape) != 2 or shape[0] != shape[1] or np.dtype(graph.data.dtype) != np.float64:
        return None
    if graph.has_canonical_format:
        return None
    return CSRGraph.from_arrays(graph.indptr, graph.indices, graph.data,
                                n_vertices=int(shape[0]), directed=True)


def _check_no_nan(weights: np.ndarray, what: str) -> None:
    # min() propagates NaN: one pass, no temporary (isnan().any() writes a mask first).
    if weights.dtype.kind == "f" and weights.size and np.isnan(weights.min()):
        bad = int(np.argmax(np.isnan(weights)))
        raise ValueError(f"{what}: weight of CSR entry {bad} is NaN")


# Graphs whose symmetric claim has been checked (counts match), so a repeated call on the
# same graph (a CSRGraph, or the one graph_cache hands back for an unchanged matrix) pays
# the pass once.
_claims_checked: weakref.WeakSet[Any] = weakref.WeakSet()


def _check_symmetric_claim(prep: _Prepared, indptr: Any, indices: Any, what: str) -> None:
    """A graph run as symmetric (declared, or an undirected CSRGraph) must have as many
    entries above the diagonal as below: both paths read only those above, so a false
    claim gave the upper triangle's forest (of a lower-triangular matrix, none). Equal
    counts are taken on trust (checking every twin costs a search per entry)."""
    with contextlib.suppress(TypeError):  # a graph not weakly referable: checked every call
        if prep.graph is not None and prep.graph in _claims_checked:
            return
    if backend.side_of(indices) == "gpu":
        from . import gpu  # noqa: PLC0415

        above, below = gpu.diagonal_sides(prep.n, indptr, indices)
    else:
        rows = np.repeat(np.arange(prep.n, dtype=np.int64), np.diff(indptr))
        above = int(np.count_nonzero(indices > rows))
        below = int(np.count_nonzero(indices < rows))
    if above != below:
        raise ValueError(
            f"{what}: declared symmetric (undirected) but it has {above} entries above the "
            f"diagonal and {below} below, so it is not; pass symmetric=False")
    if prep.graph is not None:
        with contextlib.suppress(TypeError):
            _claims_checked.add(prep.graph)


def _solve_gpu(prep: _Prepared, what: str) -> tuple[MSTResult, int]:
    """The forest by the GPU kernels, and how many of its edges weigh zero.

    The kernels hand back the finished arrays; the only host work left is slicing them
    (GPU-side results) or one copy (host-side results).
    """
    from .. import graph_cache  # noqa: PLC0415
    from . import gpu  # noqa: PLC0415

    # A host matrix's structure crosses once: graph_cache keeps its GPU copy (per device,
    # never stale) for the next call; the weights cross every call (a canonical SciPy
    # matrix's data stays writeable, so a GPU copy of it could go stale).
    kept = None
    if prep.side == "cpu" and prep.graph is not None:
        kept = graph_cache.structure_on(prep.graph, "gpu", only_cached=True)
    indptr = kept.indptr if kept is not None else backend.to_side(prep.indptr, "gpu")
    indices = kept.indices if kept is not None else backend.to_side(prep.indices, "gpu")
    weights = backend.to_side(prep.weights, "gpu")
    vdt, edt = index_dtype(prep.n), index_dtype(indices.size)
    indptr, indices = indptr.astype(edt, copy=False), indices.astype(vdt, copy=False)
    if prep.symmetric:
        _check_symmetric_claim(prep, indptr, indices, what)
    forest = gpu.spanning_forest(
        prep.n, indptr, indices, weights, symmetric=prep.symmetric,
        side=prep.side, what=what,  # type: ignore[arg-type]
    )
    result = MSTResult(
        src=forest.src,
        dst=forest.dst,
        weights=forest.weights,
        edge_ids=forest.edge_ids,
        total_weight=forest.total_weight,
        n_components=prep.n - int(forest.edge_ids.size),
        n_rounds=forest.n_rounds,
        n_vertices=prep.n,
        device="gpu",
    )
    return result, forest.n_zero_weight


def _solve_cpu(prep: _Prepared, what: str) -> tuple[MSTResult, int]:
    """The forest by the NumPy rounds, and how many of its edges weigh zero."""
    from . import cpu  # noqa: PLC0415

    indptr = backend.to_host(prep.indptr).astype(np.int64, copy=False)
    indices = backend.to_host(prep.indices)
    weights = backend.to_host(prep.weights)
    _check_no_nan(weights, what)
    if prep.symmetric:
        _check_symmetric_claim(prep, indptr, indices, what)
    keys = keymod.weight_keys(np, weights)
    positions, rounds = cpu.minimum_spanning_forest(
        prep.n, indptr, indices, keys, symmetric=prep.symmetric
    )
    return _host_result(prep, indptr, indices, weights, positions, rounds=int(rounds))


def _host_result(prep: Any, indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray,
                 positions: np.ndarray, *, rounds: int, method: str | None = None
                 ) -> tuple[MSTResult, int]:
    """The MSTResult of a forest found on the host as CSR positions (and its count of
    zero-weight edges), on the input's side."""
    positions = positions.astype(np.int64, copy=False)
    # Row r holds positions [indptr[r], indptr[r+1]): r row ends lie at or before it.
    src = np.searchsorted(indptr[1:], positions, side="right")
    dst = indices[positions].astype(np.int64, copy=False)
    w = weights[positions]
    if w.dtype.kind in "iub":
        total: int | float = exact_integer_sum(w)
    else:
        total = float(w.sum(dtype=np.float64)) if w.size else 0.0
    out = prep.side
    extra = {"method": method} if method is not None else {}
    result = MSTResult(
        src=backend.to_side(src.astype(np.int64, copy=False), out),  # type: ignore[arg-type]
        dst=backend.to_side(dst, out),  # type: ignore[arg-type]
        weights=backend.to_side(w, out),  # type: ignore[arg-type]
        edge_ids=backend.to_side(positions, out),  # type: ignore[arg-type]
        total_weight=total,
        n_components=prep.n - int(positions.size),
        n_rounds=rounds,
        n_vertices=prep.n,
        device="cpu",
        **extra,
    )
    return result, int(np.count_nonzero(w == 0))


def _solve(graph: Any, symmetric: bool | None, device: str, what: str) -> tuple[MSTResult, int]:
    run_side = backend.resolve_device(device, who=f"mst.{what.split('(')[0]}")
    prep = _prepare(graph, symmetric, what)
    if run_side == "gpu":
        return _solve_gpu(prep, what)
    if device == "auto":
        solved = _solve_scipy(prep, what)
        if solved is not None:
            return solved
    return _solve_cpu(prep, what)


# SciPy's keys must order (weight, CSR position) exactly in float64: key * (m + 1) + pos.
_SCIPY_EXACT = 2**53


def _solve_scipy(prep: _Prepared, what: str) -> tuple[MSTResult, int] | None:
    """The forest by SciPy's Kruskal (``device="auto"`` without a GPU), or None where its
    float64 keys could not hold (weight order, position) exactly (then our NumPy path runs).

    Each entry's key is its weight's rank times (m + 1) plus its position + 1: unique and
    positive, ordered as this module orders edges, so SciPy picks the same forest and the
    tree's values name the positions (stored zeros and ties cannot get lost).
    """
    import scipy.sparse.csgraph as scipy_csgraph  # noqa: PLC0415

    indptr = backend.to_host(prep.indptr).astype(np.int64, copy=False)
    indices = backend.to_host(prep.indices)
    weights = backend.to_host(prep.weights)
    _check_no_nan(weights, what)
    n, m = prep.n, int(indices.size)
    if m == 0:
        return None
    if weights.dtype.kind in "iub":
        low = int(weights.min())
        span = int(weights.max()) - low + 1
        if span * (m + 1) < _SCIPY_EXACT:
            # Subtracted in the weights' own type (exact: the span is small), then
            # narrowed: a uint64 weight past 2**63 does not fit int64 before.
            rank = (weights - weights.dtype.type(low)).astype(np.int64)  # no sort needed
        else:
            rank = np.unique(weights, return_inverse=True)[1].ravel()
    else:
        rank = np.unique(weights, return_inverse=True)[1].ravel()
    if (int(rank.max()) + 1) * (m + 1) >= _SCIPY_EXACT:
        return None
    keys = rank.astype(np.float64) * (m + 1) + np.arange(1, m + 1, dtype=np.float64)
    tree = scipy_csgraph.minimum_spanning_tree(
        sp.csr_matrix((keys, indices, indptr), shape=(n, n)))
    positions = np.sort(np.fmod(tree.data, m + 1).astype(np.int64) - 1)
    # SciPy's Kruskal has no rounds.
    return _host_result(prep, indptr, indices, weights, positions, rounds=0,
                        method="scipy-kruskal")


# Errors name the call and its argument, as SciPy's name the argument.
_MST_WHAT = "minimum_spanning_tree(csgraph)"


def _scipy_minimum_spanning_tree(csgraph: Any) -> Any:
    """SciPy's Kruskal on the graph as this module reads it (same checks, same result type)."""
    import scipy.sparse.csgraph as scipy_csgraph  # noqa: PLC0415

    if sp.issparse(csgraph) and csgraph.ndim == 2 and csgraph.shape[0] == csgraph.shape[1]:
        # SciPy's own input: its own call on it (duplicates summed and stored zeros kept,
        # as here), after the one check SciPy lacks. LIL and DOK hold no numeric
        # ``data`` array (LIL's is an object array of lists, DOK has none): read as CSR.
        if csgraph.format not in ("csr", "csc", "coo"):
            csgraph = csgraph.tocsr()
        data = csgraph.data
        if data.dtype.kind not in "biuf":
            raise ValueError(f"{_MST_WHAT}: weights must be real numbers, got dtype {data.dtype}")
        _check_no_nan(data, _MST_WHAT)
        return scipy_csgraph.minimum_spanning_tree(csgraph)
    if not (isinstance(csgraph, CSRGraph) or sp.issparse(csgraph)
            or backend.is_cupy_array(csgraph) or backend.is_cupy_sparse(csgraph)):
        # A dense host matrix: SciPy's null rules are ours (0, NaN, +-inf: no edge), so
        # after our checks of shape and type SciPy converts it itself, once (building
        # our CSR first, then SciPy's copy of it, cost up to twice SciPy's own call).
        if not isinstance(csgraph, (np.ndarray, list, tuple)) and not hasattr(
                csgraph, "__array__"):
            # What validate_graph (device="cpu") says of a non-array, not NumPy's 0-d
            # array of it ("got shape ()" for a string).
            raise TypeError(f"{_MST_WHAT}: expected a CSRGraph, a sparse matrix or a 2-D "
                            f"array, got {type(csgraph).__name__}")
        dense = _dense_host(csgraph, _MST_WHAT)
        check_dense_adjacency(dense, _MST_WHAT)
        if isinstance(csgraph, np.ma.MaskedArray):
            dense = csgraph  # SciPy's own rule for the mask (unmasked entries are edges)
        tree = scipy_csgraph.minimum_spanning_tree(dense)
        # SciPy gives a NumPy matrix a csr_matrix (np.asarray above made it an ndarray).
        return sp.csr_matrix(tree) if isinstance(csgraph, np.matrix) else tree
    prep = _prepare(csgraph, None, _MST_WHAT)
    weights = backend.to_host(prep.weights)
    _check_no_nan(weights, _MST_WHAT)
    n = prep.n
    # float64 here, not by SciPy: its dtype conversion would sum repeated entries, which
    # in a CSRGraph are parallel edges.
    matrix = sp.csr_matrix((weights.astype(np.float64), backend.to_host(prep.indices),
                            backend.to_host(prep.indptr)), shape=(n, n))
    tree = scipy_csgraph.minimum_spanning_tree(matrix)
    if isinstance(csgraph, sp.spmatrix):
        return sp.csr_matrix(tree)
    return sp.csr_array(tree)


def boruvka(graph: Any, *, device: str = "auto", symmetric: bool | None = None) -> MSTResult:
    """Minimum spanning forest of an undirected weighted graph by Borůvka's algorithm.

    ``graph``: a :class:`~morphgpu.csr.CSRGraph`, a SciPy/CuPy sparse matrix, or a dense
    2-D array (zeros are missing edges); weights may be integers or floats, negative too;
    a graph without weights gets weight 1 everywhere. ``symmetric``: every edge is stored
    in both directions with the same weight (default: True for an undirected CSRGraph,
    otherwise False, which is always correct). Results come back on the input's side.
    """
    return _solve(graph, symmetric, device, "boruvka(graph)")[0]


def minimum_spanning_tree(csgraph: Any, overwrite: bool = False, *, device: str = "auto") -> Any:
    """SciPy's ``scipy.sparse.csgraph.minimum_spanning_tree``, computed by Borůvka.

    Same call, same result: an n x n float64 CSR matrix holding each forest edge at the
    position (i, j) of the input entry it came from (a forest when the graph is
    disconnected), with stored zeros eliminated as SciPy does (see the module notes).
    The result's type follows SciPy: ``csr_matrix`` for a ``spmatrix`` input,
    ``csr_array`` for a sparse array, a dense array or a CSRGraph; CuPy inputs give a
    ``cupyx.scipy.sparse.csr_matrix``. ``device="auto"`` without a GPU calls SciPy's
    function (faster than our NumPy rounds, which ``device="cpu"`` runs). ``overwrite`` is
    accepted for compatibility and ignored: the input is never modified.
    """
    del overwrite
    who = "mst.minimum_spanning_tree"
    run_side = backend.resolve_device(device, who=who)
    if device == "auto" and run_side == "cpu":
        return _scipy_minimum_spanning_tree(csgraph)
    if run_side == "gpu":
        tree = _gpu_matrix(csgraph)
        if tree is not None:
            return tree
    result, n_zero_weight = _solve(csgraph, None, device, _MST_WHAT)
    n = result.n_vertices
    side = backend.side_of(result.edge_ids)
    xp = backend.xp_for(side)  # type: ignore[arg-type]
    # float64 weights are used as they are: the forest buffer is this call's own.
    data = result.weights.astype(np.float64, copy=False)
    src, dst = result.src, result.dst
    if n_zero_weight:
        # Known from the solver, so the usual case (no zero-weight tree edge) skips the
        # masking, which on CuPy synchronises once per mask.
        keep = data != 0
        src, dst, data = src[keep], dst[keep], data[keep]
    # Edges are ordered by input position, hence by row and, within a row, as stored:
    # row r's edges start where the first source >= r does.
    rows = xp.arange(n + 1, dtype=src.dtype)
    indptr = xp.searchsorted(src, rows, side="left").astype(index_dtype(n), copy=False)
    return _tree_matrix(csgraph, side, n, data, dst.astype(index_dtype(n)), indptr)


def _tree_matrix(csgraph: Any, side: str, n: int, data: Any, indices: Any, indptr: Any) -> Any:
    """minimum_spanning_tree's result type for ``csgraph`` (see its docstring)."""
    if side == "gpu":
        import cupyx.scipy.sparse as cusp  # noqa: PLC0415

        return cusp.csr_matrix((data, indices, indptr), shape=(n, n))
    if isinstance(csgraph, (sp.spmatrix, np.matrix)):  # SciPy's result type for both
        return sp.csr_matrix((data, indices, indptr), shape=(n, n))
    return sp.csr_array((data, indices, indptr), shape=(n, n))


def _gpu_matrix(csgraph: Any) -> Any:
    """``minimum_spanning_tree`` on the GPU for an input on either side (None for an empty
    host input, which the general path answers).

    The result's arrays are written by mst_write_matrix, queued right behind the forest
    writer (sized for n - 1 edges, the size read from the kernels' stats on the device;
    zero-weight tree edges left out there too), so the GPU never waits for the host within
    the call, and a host input's result comes back in one copy (the three arrays share one
    buffer): a host matrix costs one copy each way, its weights over and its tree back,
    besides the stats read. A matrix stored both ways (every entry below the diagonal
    matched by a twin at least as light above it) runs as a symmetric graph: the kernel
    checks that once per matrix content and keeps the verdict with the graph. The runner and
    its buffers are kept with the graph, which graph_cache keeps while the matrix is
    unchanged (for a SciPy matrix with its GPU structure, made once), so a repeated call
    only binds the weights; a CuPy matrix's fingerprint check is queued ahead of the
    kernels and its result copied behind them into the words the stats read brings back
    (no second read), and a matrix changed in place is solved again on its rebuilt graph.
    """
    from .. import graph_cache  # noqa: PLC0415
    from . import gpu  # noqa: PLC0415

    for _ in range(2):
        pending: list = []
        prep = _prepare(csgraph, None, _MST_WHAT, pending=pending)
        n, side = prep.n, prep.side
        if n == 0:
            if side != "gpu":
                return None
            graph_cache.confirm(pending)
            cp = backend.cupy_module()
            return _tree_matrix(csgraph, side, 0, cp.zeros(0, dtype=np.float64),
                                cp.zeros(0, dtype=np.int32), cp.zeros(1, dtype=np.int32))
        owner: Any = prep.graph
        structure: Any = prep
        if side != "gpu":
            # Kept only where graph_cache keeps the GPU copy of a matrix's structure (its
            # host arrays are read-only meanwhile); other host graphs cross every call.
            structure = graph_cache.structure_on(prep.graph, "gpu", only_cached=True)
            if structure is None:
                owner, structure = object(), prep

        def make(g: Any = structure, n: int = n) -> tuple[int, Any, Any]:
            vdt, edt = index_dtype(n), index_dtype(g.indices.size)
            indptr = backend.to_side(g.indptr, "gpu").astype(edt, copy=False)
            return n, indptr, backend.to_side(g.indices, "gpu").astype(vdt, copy=False)

        weights = backend.to_side(prep.weights, "gpu")
        with backend.gpu_memory_guard(f"boruvka on {n} vertices"):
            # A matrix stored both ways runs as symmetric (half the entries read past
            # their column), which the kernel finds and remembers with the graph.
            runner = gpu.kept_runner(owner, make, weights, symmetric=prep.symmetric,
                                     what=_MST_WHAT, find_symmetry=True)
            runner.launch(write_matrix=True)
            # The matrix's fingerprints come back with the kernels' stats: one read.
            carried = bool(pending) and runner.carry(graph_cache.fingerprints(pending))
            data, indices, indptr = runner.matrix(side)
        if not pending or graph_cache.confirm(pending, runner.carried() if carried else None):
            return _tree_matrix(csgraph, side, n, data, indices, indptr)
    raise RuntimeError(f"{_MST_WHAT}: the matrix changed while it was being read")
