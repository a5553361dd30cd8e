"""Graph files: read and write every format the wings use, as :class:`CSRGraph`.

Formats (``fmt`` names): ``"mtx"`` MatrixMarket, ``"dimacs"`` DIMACS shortest-path text,
``"pace"`` PACE 2016 tree-width text, ``"galois"`` Galois/LonestarGPU binary ``.gr``
(version 1), ``"egr"`` ECL binary. Files may be compressed with gzip, xz or bzip2 (detected
from the content). ``.gr`` is ambiguous (Galois binary, DIMACS text or PACE text), so
its format is detected from the content. A malformed file raises
:class:`~morphgpu.csr.GraphFormatError` naming the file and the line (text formats) or
byte offset (binary formats).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .csr import CSRGraph, GraphFormatError

__all__ = [
    "FORMATS",
    "GraphFormatError",
    "detect_format",
    "read_graph",
    "write_graph",
    "read_matrix_market",
    "write_matrix_market",
    "read_dimacs",
    "write_dimacs",
    "read_pace",
    "write_pace",
    "read_galois_gr",
    "write_galois_gr",
    "read_ecl_egr",
    "write_ecl_egr",
]

FORMATS = ("mtx", "dimacs", "pace", "galois", "egr")

PathLike = str | Path


def detect_format(path: PathLike) -> str:
    """The format of ``path`` from its extension, or its content when that is ambiguous."""
    raise NotImplementedError


def read_graph(path: PathLike, fmt: str | None = None, *, directed: bool | None = None) -> CSRGraph:
    """Read a graph file of any supported format into a host :class:`CSRGraph`.

    ``fmt`` is one of :data:`FORMATS`; None detects it from the extension (after any
    ``.gz``/``.xz``/``.bz2``) or, for ``.gr`` and unknown extensions, from the content.
    ``directed=None`` keeps the format's meaning (PACE and symmetric MatrixMarket files are
    undirected and come back with both directions; DIMACS, Galois and ECL files are read
    as stored). ``directed=False`` makes any file undirected (adds reverse edges, one entry
    per pair); ``directed=True`` keeps an undirected file's edges only as listed.
    """
    raise NotImplementedError


def write_graph(graph: Any, path: PathLike, fmt: str | None = None) -> None:
    """Write ``graph`` (CSRGraph or sparse matrix, either side) in ``fmt`` (or by extension).

    A ``.gz``/``.xz``/``.bz2`` suffix compresses. ``.gr`` needs an explicit ``fmt``.
    """
    raise NotImplementedError


def read_matrix_market(path: PathLike, *, directed: bool | None = None) -> CSRGraph:
    """MatrixMarket through scipy.io; symmetric files become both directions."""
    raise NotImplementedError


def write_matrix_market(graph: Any, path: PathLike) -> None:
    """MatrixMarket coordinate file (``pattern`` without weights, else ``real``/``integer``)."""
    raise NotImplementedError


def read_dimacs(path: PathLike, *, directed: bool | None = None) -> CSRGraph:
    """DIMACS shortest-path text: ``c`` comments, ``p sp n m``, ``a u v w`` (1-based)."""
    raise NotImplementedError


def write_dimacs(graph: Any, path: PathLike) -> None:
    """DIMACS shortest-path text; a graph without weights is written with weight 1."""
    raise NotImplementedError


def read_pace(path: PathLike, *, directed: bool | None = None) -> CSRGraph:
    """PACE 2016 ``p tw n m`` then ``u v`` per line (1-based); undirected: both directions."""
    raise NotImplementedError


def write_pace(graph: Any, path: PathLike) -> None:
    """PACE 2016 text: each unordered pair {u, v}, u != v, once (weights are dropped)."""
    raise NotImplementedError


def read_galois_gr(
    path: PathLike, *, directed: bool | None = None, weight_dtype: Any = None
) -> CSRGraph:
    """Galois/LonestarGPU binary ``.gr`` version 1 (see the module notes for the layout)."""
    raise NotImplementedError


def write_galois_gr(graph: Any, path: PathLike) -> None:
    """Galois binary ``.gr`` version 1, with 4-byte edge data when the graph has weights."""
    raise NotImplementedError


def read_ecl_egr(path: PathLike, *, directed: bool | None = None) -> CSRGraph:
    """ECL binary ``.egr``: int32 n, int32 m, int32 offsets (n+1), int32 neighbours (m),
    then optionally int32 weights (m)."""
    raise NotImplementedError


def write_ecl_egr(graph: Any, path: PathLike) -> None:
    """ECL binary ``.egr`` (weights appended when present; they must fit int32)."""
    raise NotImplementedError
