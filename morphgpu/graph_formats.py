"""Two more graph formats for the command line: METIS ``.graph`` and SNAP edge lists.

:func:`read` reads these and everything :func:`morphgpu.graph_io.read_graph` reads, by
``fmt`` or by extension (after any ``.gz``/``.xz``/``.bz2``):

- ``metis`` (``.graph``, ``.metis``): the METIS/KaHIP/Chaco adjacency format. A header
  ``n m [fmt [ncon]]``, then one line per vertex (1-based neighbours, blank for none),
  ``%`` comments; ``fmt`` 1 / 11 / 111 adds edge weights, vertex weights, vertex sizes
  (vertex weights and sizes are read past and dropped). Undirected: every edge is listed
  from both ends, which the reader checks against ``m``.
- ``snap`` (``.txt``, ``.edges``, ``.el``, ``.tsv``, ``.snap``): SNAP's edge lists, one
  ``src dst [weight]`` per line, ``#`` or ``%`` comments; a header comment saying
  "Undirected graph" makes the graph undirected (both directions, one entry per pair);
  otherwise edges are kept as listed. Ids are kept as the file's (vertices 0..max id).

Malformed files raise :class:`~morphgpu.csr.GraphFormatError` naming the file and line.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from . import graph_io
from .csr import CSRGraph, GraphFormatError

EXTRA_FORMATS = ("metis", "snap")
FORMATS = (*graph_io.FORMATS, *EXTRA_FORMATS)
_EXTENSIONS = {".graph": "metis", ".metis": "metis", ".txt": "snap", ".edges": "snap",
               ".el": "snap", ".tsv": "snap", ".snap": "snap"}
_COMPRESSED = (".gz", ".xz", ".bz2")


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """``--format`` for a subcommand that reads a graph file."""
    parser.add_argument("--format", choices=FORMATS, default=None,
                        help="the file's format (default: from the extension, or the content)")


def format_of(path: str | Path) -> str | None:
    """``metis``/``snap`` by extension, or None (graph_io decides)."""
    p = Path(path)
    if p.suffix.lower() in _COMPRESSED:
        p = p.with_suffix("")
    return _EXTENSIONS.get(p.suffix.lower())


def read(path: str | Path, fmt: str | None = None) -> CSRGraph:
    """A graph file of any format morphgpu knows, as a host CSRGraph."""
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    fmt = fmt or format_of(path)
    if fmt == "metis":
        return read_metis(path)
    if fmt == "snap":
        return read_snap(path)
    try:
        return graph_io.read_graph(path, fmt)
    except GraphFormatError as exc:
        if fmt is None and "cannot tell the graph format" in str(exc):
            raise GraphFormatError(f"{path}: cannot tell the graph format from the extension "
                                   f"or the content; pass --format, one of {FORMATS}") from exc
        raise


def _text(path: str | Path) -> str:
    data = graph_io._read_bytes(path)  # decompresses by magic number
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise GraphFormatError(f"{path}: not a text file ({exc})") from exc


def read_metis(path: str | Path) -> CSRGraph:
    """A METIS ``.graph`` file (see the module notes)."""
    lines = _text(path).split("\n")
    numbered = [(k + 1, ln) for k, ln in enumerate(lines) if not ln.lstrip().startswith("%")]
    if not numbered or not numbered[0][1].strip():
        raise GraphFormatError(f"{path}:1: expected the METIS header 'n m [fmt [ncon]]'")
    head_line, head = numbered[0]
    try:
        fields = [int(x) for x in head.split()]
    except ValueError:
        raise GraphFormatError(f"{path}:{head_line}: the header must be integers, got "
                               f"{head.strip()!r}") from None
    if len(fields) < 2 or fields[0] < 0 or fields[1] < 0:
        raise GraphFormatError(f"{path}:{head_line}: expected 'n m [fmt [ncon]]'")
    n, m = fields[0], fields[1]
    code = f"{fields[2]:03d}" if len(fields) > 2 else "000"
    if len(code) != 3 or set(code) - {"0", "1"}:
        raise GraphFormatError(f"{path}:{head_line}: fmt must be 0, 1, 10, 11, 100, 101, 110 "
                               f"or 111, got {fields[2]}")
    sizes, vweights, eweights = (c == "1" for c in code)
    ncon = fields[3] if len(fields) > 3 else (1 if vweights else 0)
    skip = int(sizes) + (ncon if vweights else 0)
    body = numbered[1:1 + n]
    if len(body) < n:
        raise GraphFormatError(f"{path}: the header says {n} vertices, the file has "
                               f"{len(body)} vertex lines")
    if any(ln.strip() for _, ln in numbered[1 + n:]):
        extra = next(k for k, ln in numbered[1 + n:] if ln.strip())
        raise GraphFormatError(f"{path}:{extra}: more vertex lines than the header's {n}")
    per = 2 if eweights else 1
    counts = np.empty(n, dtype=np.int64)
    tokens: list[str] = []
    for i, (line_no, ln) in enumerate(body):
        row = ln.split()
        if len(row) < skip or (len(row) - skip) % per:
            raise GraphFormatError(f"{path}:{line_no}: vertex {i + 1}: expected "
                                   f"{skip} leading numbers and then "
                                   f"{'neighbour weight pairs' if eweights else 'neighbours'}")
        tokens.extend(row[skip:])
        counts[i] = (len(row) - skip) // per
    try:
        values = np.array(tokens, dtype=np.float64 if eweights else np.int64)
    except ValueError:
        raise GraphFormatError(f"{path}: a vertex line holds a non-number") from None
    nbr = values[::per] if eweights else values
    if nbr.size and (nbr.min() < 1 or nbr.max() > n or np.any(nbr != np.round(nbr))):
        bad = int(np.flatnonzero((nbr < 1) | (nbr > n) | (nbr != np.round(nbr)))[0])
        row = int(np.searchsorted(np.cumsum(counts), bad, side="right"))
        raise GraphFormatError(f"{path}:{body[row][0]}: vertex {row + 1} names neighbour "
                               f"{nbr[bad]:g}, outside 1..{n}")
    if nbr.size != 2 * m:
        raise GraphFormatError(f"{path}:{head_line}: the header says {m} edges, so "
                               f"{2 * m} neighbour entries, but the lines hold {nbr.size}")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    weights = None
    if eweights:
        w = values[1::per]
        weights = w.astype(np.int64) if np.all(w == np.round(w)) else w
    return CSRGraph.from_arrays(indptr, nbr.astype(np.int64) - 1, weights, n_vertices=n,
                                directed=False)


def read_snap(path: str | Path) -> CSRGraph:
    """A SNAP edge list (see the module notes)."""
    text = _text(path)
    undirected = False
    rows: list[str] = []
    first_line = 0
    for k, ln in enumerate(text.split("\n")):
        s = ln.strip()
        if not s:
            continue
        if s[0] in "#%":
            undirected |= "undirected" in s.lower()
            continue
        if not rows:
            first_line = k + 1
        rows.append(s)
    if not rows:
        return CSRGraph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n_vertices=0)
    width = len(rows[0].split())
    if width not in (2, 3):
        raise GraphFormatError(f"{path}:{first_line}: expected 'src dst [weight]', got "
                               f"{rows[0]!r}")
    tokens = " ".join(rows).split()
    if len(tokens) != width * len(rows):
        bad = next(i for i, r in enumerate(rows) if len(r.split()) != width)
        raise GraphFormatError(f"{path}: edge {bad + 1} has {len(rows[bad].split())} "
                               f"fields, the first has {width}")
    try:
        table = np.array(tokens, dtype=np.float64).reshape(-1, width)
    except ValueError:
        raise GraphFormatError(f"{path}: an edge line holds a non-number") from None
    ids = table[:, :2]
    if np.any(ids < 0) or np.any(ids != np.round(ids)) or (ids.size and ids.max() >= 2**31):
        bad = int(np.flatnonzero(np.any((ids < 0) | (ids != np.round(ids)) | (ids >= 2**31),
                                        axis=1))[0])
        raise GraphFormatError(f"{path}: edge {bad + 1}: ids must be integers in [0, 2**31)")
    src, dst = ids[:, 0].astype(np.int64), ids[:, 1].astype(np.int64)
    weights: Any = None
    if width == 3:
        w = table[:, 2]
        weights = w.astype(np.int64) if np.all(w == np.round(w)) else w
    n = int(ids.max()) + 1
    if undirected:
        return CSRGraph.from_edges(src, dst, weights, n_vertices=n, symmetrize=True,
                                   merge_duplicates="min")
    return CSRGraph.from_edges(src, dst, weights, n_vertices=n)
