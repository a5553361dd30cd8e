"""The graph every algorithm reads: compressed sparse rows on either side.

A :class:`CSRGraph` holds ``indptr`` (row offsets, length ``n + 1``), ``indices`` (column
ids, length ``m``) and optional ``weights``, all NumPy arrays or all CuPy arrays. Index
types are chosen by size: vertex ids are int32 below 2^31 vertices, offsets int32 below
2^31 edges, int64 above. Construction validates by default, so a kernel never sees an
out-of-range id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from . import arguments, backend
from .unique import run_starts

if TYPE_CHECKING:  # SciPy is imported where a matrix is built, not with every CSRGraph user
    import scipy.sparse as sp

INT32_LIMIT = 2**31 - 1
INT64_LIMIT = 2**63 - 1

MergeRule = Literal["min", "max", "sum", "first"]


class GraphFormatError(ValueError):
    """A graph's arrays or file contents are inconsistent; the message says where."""


# Where the host's free memory is unknown, declared sizes are still held to this.
_UNKNOWN_HOST_LIMIT = 2**48
# Below this a declared size is never refused here (the work's own checks still apply).
_ALWAYS_FITS = 2**26


def check_declared_size(
    where: str, what: str, needed_bytes: float, error: type[Exception] | None = None,
    *, verb: str = "declares",
) -> None:
    """Refuse, before allocating, what a file or argument declares but the host cannot hold.

    ``where`` names the file and line (or the argument), ``what`` the declared counts,
    ``needed_bytes`` the least the arrays for them take; ``error`` is the caller's error
    type (GraphFormatError by default). The message says what is declared, what it would
    need and what is available, so a two-line file with a huge header gets a sentence,
    not NumPy's MemoryError.
    """
    if needed_bytes <= _ALWAYS_FITS:
        return
    available = backend.host_available_bytes()
    limit = _UNKNOWN_HOST_LIMIT if available is None else available
    if needed_bytes > limit:
        have = (
            f"only {limit / 2**30:.2f} GiB is available"
            if available is not None else f"the limit is {limit / 2**30:.0f} GiB"
        )
        raise (error or GraphFormatError)(
            f"{where}: {verb} {what}, which would need at least "
            f"{_human_bytes(needed_bytes)} of host memory but {have}: it does not fit"
        )


def _human_bytes(n: float) -> str:
    if n >= 2**70:
        return f"{float(min(n, 1e308)):.3g} bytes" if n < float("inf") else "unboundedly many bytes"
    return f"{n / 2**30:.2f} GiB ({n} bytes)"


def _vertex_count(n_vertices: Any) -> int:
    """``n_vertices`` as an int: int() truncated 1.5 to 1 and read "3" and True."""
    return arguments.integer(n_vertices, "n_vertices", error=GraphFormatError)


def _check_weights_real(weights: Any) -> None:
    # string weights were kept as a '<U1' array, to fail later in whatever read them
    if weights.dtype.kind not in "biuf":
        raise GraphFormatError(f"weights must be real numbers, got dtype {weights.dtype}")


def index_dtype(count: int) -> np.dtype:
    """int32 while ``count`` fits, else int64."""
    return np.dtype(np.int32) if count <= INT32_LIMIT else np.dtype(np.int64)


def _xp(side: str) -> Any:
    return backend.xp_for(side)  # type: ignore[arg-type]


def _scalar(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


@dataclass(frozen=True, eq=False)
class CSRGraph:
    indptr: Any
    indices: Any
    weights: Any = None
    n_vertices: int = 0
    directed: bool = True

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_arrays(
        cls,
        indptr: Any,
        indices: Any,
        weights: Any = None,
        *,
        n_vertices: int | None = None,
        directed: bool = True,
        validate: bool = True,
    ) -> CSRGraph:
        side = backend.side_of(indptr)
        xp = _xp(side)
        indptr = xp.asarray(indptr)
        indices = xp.asarray(indices)
        if indptr.ndim != 1 or indices.ndim != 1:
            raise GraphFormatError("indptr and indices must be one-dimensional")
        if indptr.size < 1:
            raise GraphFormatError("indptr must have at least one entry (n_vertices + 1)")
        n = indptr.size - 1 if n_vertices is None else _vertex_count(n_vertices)
        if n < 0:
            raise GraphFormatError(f"negative vertex count {n}")
        if indptr.size != n + 1:
            raise GraphFormatError(
                f"indptr has {indptr.size} entries but n_vertices={n} needs {n + 1}"
            )
        m = indices.size
        vdt, edt = index_dtype(max(n, 1)), index_dtype(max(m, 1))
        if validate:
            _validate_arrays(xp, indptr, indices, weights, n)
        indptr = indptr.astype(edt, copy=False)
        indices = indices.astype(vdt, copy=False)
        if weights is not None:
            weights = xp.asarray(weights)
            if validate:
                _check_weights_real(weights)
        return cls(indptr, indices, weights, n, directed)

    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        weights: Any = None,
        *,
        n_vertices: int | None = None,
        symmetrize: bool = False,
        drop_self_loops: bool = False,
        merge_duplicates: MergeRule | None = None,
    ) -> CSRGraph:
        """Build from an edge list; rows are sorted by (source, destination).

        ``symmetrize`` adds every reverse edge (the result is marked undirected);
        ``merge_duplicates`` keeps one edge per (u, v), combining weights by the rule.
        """
        if merge_duplicates not in (None, "min", "max", "sum", "first"):
            # any other string merged by "max" (the sign of a non-"min" rule), silently
            raise GraphFormatError(
                f"merge_duplicates must be None, 'min', 'max', 'sum' or 'first', got "
                f"{merge_duplicates!r}")
        side = backend.side_of(src)
        xp = _xp(side)
        src = xp.asarray(src).ravel()
        dst = xp.asarray(dst).ravel()
        if src.shape != dst.shape:
            raise GraphFormatError(f"src has {src.size} entries but dst has {dst.size}")
        if weights is not None:
            weights = xp.asarray(weights).ravel()
            _check_weights_real(weights)
            if weights.shape != src.shape:
                raise GraphFormatError(
                    f"weights has {weights.size} entries but there are {src.size} edges"
                )
        if src.size and (src.dtype.kind not in "iu" or dst.dtype.kind not in "iu"):
            raise GraphFormatError("edge endpoints must be integers")
        for name, ends in (("source", src), ("destination", dst)):
            if ends.size and ends.dtype.kind == "u" and int(_scalar(ends.max())) > INT64_LIMIT:
                bad = int(_scalar(xp.argmax(ends > INT64_LIMIT)))
                raise GraphFormatError(
                    f"edge {bad} has {name} vertex {int(_scalar(ends[bad]))}, past the largest "
                    f"supported id 2**63 - 1"
                )
        src = src.astype(np.int64, copy=False)
        dst = dst.astype(np.int64, copy=False)
        if src.size:
            lo = min(_scalar(src.min()), _scalar(dst.min()))
            if lo < 0:
                bad = int(_scalar(xp.argmax((src < 0) | (dst < 0))))
                raise GraphFormatError(f"edge {bad} has a negative vertex id")
            hi = max(_scalar(src.max()), _scalar(dst.max()))
        else:
            hi = -1
        n = hi + 1 if n_vertices is None else _vertex_count(n_vertices)
        if n < 0:
            raise GraphFormatError(f"negative vertex count {n}")
        if hi >= n:
            bad = int(_scalar(xp.argmax((src >= n) | (dst >= n))))
            raise GraphFormatError(
                f"edge {bad} ({int(_scalar(src[bad]))}, {int(_scalar(dst[bad]))}) "
                f"names a vertex >= n_vertices={n}"
            )
        if side == "cpu":
            largest = f" (the largest vertex id is {hi})" if n_vertices is None else ""
            m_out = src.size * (2 if symmetrize else 1)
            check_declared_size(
                "CSRGraph.from_edges", f"{n} vertices{largest} and {m_out} edges",
                16 * (n + 1) + 32 * m_out,
            )
        if drop_self_loops:
            keep = src != dst
            src, dst = src[keep], dst[keep]
            weights = weights[keep] if weights is not None else None
        if symmetrize:
            src, dst = xp.concatenate([src, dst]), xp.concatenate([dst, src])
            weights = xp.concatenate([weights, weights]) if weights is not None else None
        key = src * max(n, 1) + dst
        if weights is None and side == "cpu":
            # Only the keys travel: NumPy's sort, 12.6x faster than a stable argsort and its
            # gather on 33.5M keys (Kronecker 20; the 2-core CPU machine, session 20).
            key = np.sort(key)
        else:
            order = xp.argsort(key, kind="stable") if side == "cpu" else xp.argsort(key)
            key = key[order]
            weights = weights[order] if weights is not None else None
        if merge_duplicates is not None and key.size:
            first = run_starts(key)
            if weights is not None and merge_duplicates != "first":
                group = xp.cumsum(first) - 1
                n_groups = int(_scalar(group[-1])) + 1
                weights = _combine(xp, weights, group, n_groups, merge_duplicates)
            elif weights is not None:
                weights = weights[first]
            key = key[first]
        src = key // max(n, 1)
        dst = key - src * max(n, 1)
        counts = xp.bincount(src, minlength=n) if n else xp.zeros(0, dtype=np.int64)
        indptr = xp.zeros(n + 1, dtype=np.int64)
        if n:
            xp.cumsum(counts, out=indptr[1:])
        return cls.from_arrays(
            indptr, dst, weights, n_vertices=n, directed=not symmetrize, validate=False
        )

    @classmethod
    def from_scipy(cls, matrix: Any, *, directed: bool = True) -> CSRGraph:
        """From a SciPy or CuPy sparse matrix (any format) or a dense array.

        Like ``scipy.sparse.csgraph``, a dense input treats 0, NaN and +-inf as missing
        edges; explicit zeros stored in a sparse matrix are kept as zero-weight edges, and
        a sparse matrix's duplicate entries are summed. See :func:`validate_graph`.
        """
        return validate_graph(matrix, directed=directed)

    @classmethod
    def _from_square(cls, indptr, indices, data, shape, directed) -> CSRGraph:
        if shape[0] != shape[1]:
            raise GraphFormatError(f"adjacency matrix must be square, got shape {shape}")
        weights = data if data is not None and data.size == indices.size else None
        return cls.from_arrays(indptr, indices, weights, n_vertices=shape[0], directed=directed)

    @classmethod
    def coerce(cls, graph: Any) -> CSRGraph:
        """Accept a CSRGraph, a SciPy/CuPy sparse matrix or a dense adjacency matrix
        (array or nested list); :func:`validate_graph` with its default null rules."""
        return validate_graph(graph)

    # ----------------------------------------------------------------- properties
    @property
    def side(self) -> str:
        return backend.side_of(self.indptr)

    @property
    def xp(self) -> Any:
        return _xp(self.side)

    @property
    def n_edges(self) -> int:
        """Directed CSR entries (an undirected edge counts twice)."""
        return int(self.indices.size)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_vertices, self.n_vertices)

    def degrees(self) -> Any:
        return self.indptr[1:] - self.indptr[:-1]

    def edge_sources(self) -> Any:
        """The row of every CSR entry (the COO expansion of indptr)."""
        xp = self.xp
        if xp is np:
            return xp.repeat(xp.arange(self.n_vertices, dtype=self.indices.dtype), self.degrees())
        # CuPy's repeat rejects an array of counts: the row of entry e is the number of
        # rows that end at or before e.
        entries = xp.arange(self.n_edges, dtype=self.indptr.dtype)
        rows = xp.searchsorted(self.indptr[1:], entries, side="right")
        return rows.astype(self.indices.dtype)

    def __repr__(self) -> str:
        w = f", weights={self.weights.dtype}" if self.weights is not None else ""
        return (
            f"CSRGraph(n_vertices={self.n_vertices}, n_edges={self.n_edges}, "
            f"side={self.side!r}, indices={self.indices.dtype}{w})"
        )

    # ----------------------------------------------------------------- conversion
    def to(self, side: str) -> CSRGraph:
        """The same graph on ``side`` ("cpu" or "gpu"); self when it is already there."""
        if side not in ("cpu", "gpu"):
            # "GPU" or "cuda" returned the host graph as if moved
            raise ValueError(f"side must be 'cpu' or 'gpu', got {side!r}")
        if side == self.side:
            return self
        return CSRGraph(
            backend.to_side(self.indptr, side),  # type: ignore[arg-type]
            backend.to_side(self.indices, side),  # type: ignore[arg-type]
            backend.to_side(self.weights, side),  # type: ignore[arg-type]
            self.n_vertices,
            self.directed,
        )

    def to_scipy(self) -> sp.csr_matrix:
        import scipy.sparse as sp  # noqa: PLC0415  (see the TYPE_CHECKING import)

        g = self.to("cpu")
        data = g.weights if g.weights is not None else np.ones(g.n_edges, dtype=np.float64)
        return sp.csr_matrix((data, g.indices, g.indptr), shape=self.shape)

    def with_weights(self, weights: Any) -> CSRGraph:
        w = self.xp.asarray(weights)
        if w.shape != (self.n_edges,):
            raise GraphFormatError(f"weights must have shape ({self.n_edges},), got {w.shape}")
        return CSRGraph(self.indptr, self.indices, w, self.n_vertices, self.directed)

    def transpose(self) -> CSRGraph:
        """Reverse every edge (the in-edges as CSR)."""
        return CSRGraph.from_edges(
            self.indices, self.edge_sources(), self.weights, n_vertices=self.n_vertices
        )

    def symmetrized(self, merge_duplicates: MergeRule = "min") -> CSRGraph:
        """Every edge in both directions, one entry per (u, v); self-loops dropped."""
        return CSRGraph.from_edges(
            self.edge_sources(),
            self.indices,
            self.weights,
            n_vertices=self.n_vertices,
            symmetrize=True,
            drop_self_loops=True,
            merge_duplicates=merge_duplicates,
        )

    def permuted(self, perm: Any) -> CSRGraph:
        """Relabel vertex ``perm[i]`` as ``i`` (``perm`` lists old ids in new order)."""
        xp = self.xp
        raw = xp.asarray(perm)
        if raw.dtype.kind not in "iu":
            # int64 conversion truncated 0.5 to 0; strings and None met int()'s errors
            raise GraphFormatError(f"perm must be an integer array, got dtype {raw.dtype}")
        perm = raw.astype(np.int64)
        if perm.shape != (self.n_vertices,):
            raise GraphFormatError(f"perm must have {self.n_vertices} entries")
        # [0, 0, 1] or [-1, 0, 1] relabelled into a different graph; [0, 1, 5] raised
        # IndexError: a permutation holds every id once
        if perm.size and not bool((xp.sort(perm) == xp.arange(perm.size)).all()):
            raise GraphFormatError(
                f"perm must be a permutation of 0 .. {self.n_vertices - 1} (each id once)")
        inverse = inverse_permutation(perm)
        g = CSRGraph.from_edges(
            inverse[self.edge_sources()],
            inverse[self.indices],
            self.weights,
            n_vertices=self.n_vertices,
        )
        return CSRGraph(g.indptr, g.indices, g.weights, g.n_vertices, self.directed)


def validate_graph(
    graph: Any,
    *,
    directed: bool = True,
    what: str = "graph",
    null_value: float = 0,
    infinity_null: bool = True,
    nan_null: bool = True,
    pending: list | None = None,
) -> CSRGraph:
    """The one way a graph argument comes in, for every wing (SciPy's ``validate_graph``).

    - a :class:`CSRGraph` is returned as it is;
    - a SciPy or CuPy sparse matrix (any format) keeps every stored entry, explicit zeros
      included, as an edge; duplicate entries are summed (SciPy's rule). A CSR, CSC or COO
      matrix's graph is cached per matrix object (:mod:`morphgpu.graph_cache`): the next
      call returns the same graph while the matrix is unchanged, and its index arrays are
      read-only meanwhile (:func:`morphgpu.forget` undoes that);
    - a dense matrix (NumPy or CuPy array, or a nested list) has an edge wherever the
      entry is not ``null_value`` and, for floats, not +-inf (``infinity_null``) and not
      NaN (``nan_null``): SciPy's null rules.

    The result stays on the input's side. Malformed input (not square, not 2-D, ragged
    lists, non-numeric entries) raises :class:`GraphFormatError` naming ``what``; a value
    of the wrong type raises TypeError.

    ``pending`` (a list): a cached CuPy matrix's fingerprint check is queued on the GPU
    and appended there instead of read back now; the caller runs its work on the graph
    and then calls :func:`morphgpu.graph_cache.confirm` on the list, which says whether
    the graph was still the matrix's (if not, the caller validates again and redoes it).
    """
    if isinstance(graph, CSRGraph):
        return graph
    if backend.is_cupy_sparse(graph) or backend.is_scipy_sparse(graph):
        from . import graph_cache  # noqa: PLC0415  (it builds on this module)

        return graph_cache.graph_of(
            graph, directed, lambda m: _sparse_to_graph(m, directed, what), pending=pending
        )
    if backend.is_cupy_array(graph):
        dense = graph
    elif isinstance(graph, np.ndarray) or isinstance(graph, (list, tuple)) or hasattr(
        graph, "__array__"
    ):
        dense = _dense_host(graph, what)
    else:
        raise TypeError(
            f"{what}: expected a CSRGraph, a sparse matrix or a 2-D array, "
            f"got {type(graph).__name__}"
        )
    check_dense_adjacency(dense, what)
    if isinstance(graph, np.ma.MaskedArray):
        # SciPy's rule for a masked array: every unmasked entry is an edge (0 included).
        present = ~np.ma.getmaskarray(graph)
        rows, cols = np.nonzero(present)
        indptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
        indices, data = cols, dense[rows, cols]
    else:
        indptr, indices, data = _dense_to_csr(dense, null_value, infinity_null, nan_null)
    return CSRGraph.from_arrays(
        indptr, indices, data, n_vertices=int(dense.shape[0]), directed=directed,
        validate=False,
    )


def _sparse_to_graph(graph: Any, directed: bool, what: str) -> CSRGraph:
    """The conversion of a SciPy/CuPy sparse matrix (what graph_cache keeps per matrix)."""
    shape = tuple(graph.shape)
    if len(shape) != 2 or shape[0] != shape[1]:
        raise GraphFormatError(
            f"{what}: the adjacency matrix must be square, got shape {shape}"
        )
    m = graph.tocsr()
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()
    if m.data.dtype.kind not in "biuf":
        raise GraphFormatError(
            f"{what}: weights must be real numbers, got dtype {m.data.dtype}"
        )
    return CSRGraph._from_square(m.indptr, m.indices, m.data, shape, directed)


def check_dense_adjacency(dense: np.ndarray, what: str) -> None:
    """A dense adjacency matrix must be square, 2-D and hold real numbers."""
    if dense.ndim != 2 or dense.shape[0] != dense.shape[1]:
        raise GraphFormatError(
            f"{what}: a dense adjacency matrix must be square and 2-D, got shape "
            f"{tuple(dense.shape)}"
        )
    if dense.dtype.kind not in "biuf":
        raise GraphFormatError(
            f"{what}: adjacency entries must be real numbers, got dtype {dense.dtype}"
        )


def _dense_host(graph: Any, what: str) -> np.ndarray:
    """A host array from an array-like; ragged or non-numeric lists get a clear error."""
    try:
        with np.errstate(all="ignore"):
            dense = np.asarray(np.ma.getdata(graph))
    except ValueError as exc:  # NumPy's "inhomogeneous shape" for ragged nested lists
        raise GraphFormatError(
            f"{what}: a nested list must be rectangular (every row as long as the number "
            f"of rows); got rows of different lengths"
        ) from exc
    if dense.dtype == object:
        raise GraphFormatError(
            f"{what}: a dense adjacency matrix must hold numbers in rows of equal length"
        )
    return dense


def _dense_to_csr(dense: Any, null_value: float, infinity_null: bool,
                  nan_null: bool) -> tuple[Any, Any, Any]:
    """(indptr, indices, data) of a dense matrix by SciPy's null rules (either side)."""
    xp = backend.array_module(dense)
    if null_value != null_value:  # NaN as the null value
        present = ~xp.isnan(dense) if dense.dtype.kind == "f" else xp.ones(dense.shape, bool)
    else:
        present = dense != null_value
    if dense.dtype.kind == "f":
        if infinity_null:
            present &= ~xp.isinf(dense)
        if nan_null:
            present &= ~xp.isnan(dense)
    rows, cols = xp.nonzero(present)  # row-major, as a CSR stores them
    n = dense.shape[0]
    indptr = xp.zeros(n + 1, dtype=np.int64)
    if n:
        xp.cumsum(xp.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, cols, dense[rows, cols]


def inverse_permutation(perm: Any) -> Any:
    """inverse[perm[i]] = i, on perm's side and in its dtype."""
    xp = backend.array_module(perm)
    inverse = xp.empty_like(perm)
    inverse[perm] = xp.arange(perm.size, dtype=perm.dtype)
    return inverse


def expand_counts(xp: Any, counts: Any) -> tuple[Any, Any]:
    """For counts c_i: the owner i and the rank 0..c_i-1 of each of sum(c) slots.

    A prefix sum and a search, so it runs on CuPy too (whose repeat takes no array of
    counts).
    """
    ends = xp.cumsum(counts)
    total = int(ends[-1]) if counts.size else 0
    slots = xp.arange(total, dtype=xp.int64)
    owner = xp.searchsorted(ends, slots, side="right")
    return owner, slots - (ends[owner] - counts[owner])


def _combine(xp: Any, weights: Any, group: Any, n_groups: int, rule: str) -> Any:
    if rule == "sum":
        out = xp.zeros(n_groups, dtype=weights.dtype)
        if xp is np:
            np.add.at(out, group, weights)
        else:
            xp.add.at(out, group, weights)
        return out
    # Rows are sorted by key and stably by input order, so a segmented min/max is a sort.
    sign = 1 if rule == "min" else -1
    order = xp.lexsort(xp.stack([sign * weights, group])) if xp is np else None
    if order is None:
        # CuPy: sort by weight, then stably by group (two passes make a lexicographic order).
        o1 = xp.argsort(sign * weights)
        o2 = xp.argsort(group[o1])
        order = o1[o2]
    g_sorted = group[order]
    return weights[order][run_starts(g_sorted)]


def _validate_arrays(xp: Any, indptr: Any, indices: Any, weights: Any, n: int) -> None:
    if indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise GraphFormatError("indptr and indices must be integer arrays")
    if _scalar(indptr[0]) != 0:
        raise GraphFormatError(f"indptr[0] must be 0, got {_scalar(indptr[0])}")
    if _scalar(indptr[-1]) != indices.size:
        raise GraphFormatError(
            f"indptr[-1]={_scalar(indptr[-1])} but there are {indices.size} column indices"
        )
    if n and indptr.size > 1:
        steps = indptr[1:] - indptr[:-1]
        if _scalar((steps < 0).any()):
            row = int(_scalar(xp.argmax(steps < 0)))
            raise GraphFormatError(f"indptr decreases at row {row} (offsets must not decrease)")
    if indices.size:
        lo, hi = _scalar(indices.min()), _scalar(indices.max())
        if lo < 0 or hi >= n:
            bad = int(_scalar(xp.argmax((indices < 0) | (indices >= n))))
            raise GraphFormatError(
                f"column index {_scalar(indices[bad])} at position {bad} is outside [0, {n})"
            )
    if weights is not None:
        w = xp.asarray(weights)
        if w.shape != indices.shape:
            raise GraphFormatError(
                f"weights has {w.size} entries but there are {indices.size} edges"
            )
