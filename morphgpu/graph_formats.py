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
import re
from pathlib import Path
from typing import Any

import numpy as np

from . import graph_io
from .csr import CSRGraph, GraphFormatError, check_declared_size

EXTRA_FORMATS = ("metis", "snap")
FORMATS = (*graph_io.FORMATS, *EXTRA_FORMATS)
_EXTENSIONS = {".graph": "metis", ".metis": "metis", ".txt": "snap", ".edges": "snap",
               ".el": "snap", ".tsv": "snap", ".snap": "snap"}
_COMPRESSED = (".gz", ".xz", ".bz2")
_HEADER_NUMBER = re.compile(r"[-+]?[0-9]+")  # a str pattern: [0-9] is ASCII digits only


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
    """The file as text whose lines end at LF, whatever ended them (LF, CRLF or CR).

    Lines ending in CR alone were one line: a SNAP file starting with a '#' comment was
    all comment, read as an empty graph without a word.
    """
    data = graph_io._read_bytes(path)  # decompresses by magic number
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
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
    # ASCII digits with an optional sign only: int() also reads '1_0' as 10 and non-ASCII
    # digits, which the body's ids refuse (a sign goes on to the checks below)
    if not all(_HEADER_NUMBER.fullmatch(x) for x in head.split()):
        raise GraphFormatError(f"{path}:{head_line}: the header must be integers, got "
                               f"{head.strip()!r}")
    fields = [int(x) for x in head.split()]
    if not 2 <= len(fields) <= 4 or fields[0] < 0 or fields[1] < 0:
        raise GraphFormatError(f"{path}:{head_line}: expected 'n m [fmt [ncon]]'")
    n, m = fields[0], fields[1]
    code = f"{fields[2]:03d}" if len(fields) > 2 else "000"
    if len(code) != 3 or set(code) - {"0", "1"}:
        raise GraphFormatError(f"{path}:{head_line}: fmt must be 0, 1, 10, 11, 100, 101, 110 "
                               f"or 111, got {fields[2]}")
    sizes, vweights, eweights = (c == "1" for c in code)
    ncon = fields[3] if len(fields) > 3 else (1 if vweights else 0)
    if ncon < 0:  # a negative count would slice the neighbours from the line's end
        raise GraphFormatError(f"{path}:{head_line}: ncon must be non-negative, got {ncon}")
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
    # the line of every token, for errors
    line_of = np.repeat(np.array([ln for ln, _ in body], dtype=np.int64), counts * per)
    nbr_tokens = tokens[::per] if eweights else tokens
    nbr = _ids(path, nbr_tokens, line_of[::per], "neighbour")
    if nbr.size and (nbr.min() < 1 or nbr.max() > n):
        bad = int(np.flatnonzero((nbr < 1) | (nbr > n))[0])
        row = int(np.searchsorted(np.cumsum(counts), bad, side="right"))
        raise GraphFormatError(f"{path}:{body[row][0]}: vertex {row + 1} names neighbour "
                               f"{nbr[bad]}, outside 1..{n}")
    if nbr.size != 2 * m:
        raise GraphFormatError(f"{path}:{head_line}: the header says {m} edges, so "
                               f"{2 * m} neighbour entries, but the lines hold {nbr.size}")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    weights = None
    if eweights:
        weights = _weights(path, tokens[1::per], line_of[1::per])
    src = np.repeat(np.arange(n, dtype=np.int64), counts)
    _check_both_ends(path, src, nbr - 1, weights, [ln for ln, _ in body])
    return CSRGraph.from_arrays(indptr, nbr - 1, weights, n_vertices=n, directed=False)


def _bad_token(path: str | Path, tokens: list[str], line_of: np.ndarray, ok: Any,
               what: str) -> GraphFormatError:
    """The error for the first of ``tokens`` that ``ok`` refuses, naming its line."""
    k = next(k for k, t in enumerate(tokens) if not ok(t))
    return GraphFormatError(f"{path}:{int(line_of[k])}: {what} {tokens[k][:30]!r}")


def _ids(path: str | Path, tokens: list[str], line_of: np.ndarray, what: str) -> np.ndarray:
    """Vertex ids: plain ASCII digits (NumPy's and int()'s string conversion also take
    '1_0', '+1', '1.0' through floats, and non-ASCII digits), within int64."""
    joined = "".join(tokens)
    if not (joined.isascii() and (joined.isdigit() or not joined)):
        raise _bad_token(path, tokens, line_of, lambda t: t.isascii() and t.isdigit(),
                         f"{what} id is not a non-negative integer:")
    try:
        return np.array(tokens, dtype=np.int64)
    except OverflowError:
        raise _bad_token(path, tokens, line_of, lambda t: int(t) < 2**63,
                         f"{what} id past int64:") from None


def _weights(path: str | Path, tokens: list[str], line_of: np.ndarray) -> np.ndarray:
    """Edge weights: int64 when every one is an integer (parsed as floats, those past 2**53
    were rounded and those past int64 became -2**63) or a whole float below 2**53, else
    finite float64 (NaN and infinity are not weights; 1e999 was read as infinity)."""
    joined = "".join(tokens)
    if not joined.isascii() or "_" in joined:
        raise _bad_token(path, tokens, line_of, lambda t: t.isascii() and "_" not in t,
                         "weight is not a number:")
    try:
        return np.array(tokens, dtype=np.int64)
    except OverflowError:
        raise _bad_token(path, tokens, line_of, lambda t: -(2**63) <= int(t) < 2**63,
                         "integer weight past int64:") from None
    except ValueError:
        pass

    def finite(t: str) -> bool:
        try:
            return bool(np.isfinite(float(t)))
        except ValueError:
            return False

    try:
        values = np.array(tokens, dtype=np.float64)
    except ValueError:
        raise _bad_token(path, tokens, line_of, finite, "weight is not a number:") from None
    if not np.isfinite(values).all():
        raise _bad_token(path, tokens, line_of, finite, "weight is not a finite number:")
    if np.all(values == np.round(values)) and np.abs(values).max(initial=0) < 2**53:
        return values.astype(np.int64)  # whole numbers written as '2.0': integers, as before
    return values


def _check_both_ends(path: str | Path, src: np.ndarray, dst: np.ndarray,
                     weights: np.ndarray | None, line_of_vertex: list[int]) -> None:
    """An undirected METIS graph lists every edge from both ends, with the same weight;
    a one-sided entry was taken as an undirected edge that one end does not know."""
    ends = (src, dst) if weights is None else (src, dst, weights)
    other = (dst, src) if weights is None else (dst, src, weights)
    # both multisets sorted the same way: equal exactly when every entry has its reverse
    f = np.stack([c[np.lexsort(ends[::-1])] for c in ends])
    b = np.stack([c[np.lexsort(other[::-1])] for c in other])
    diff = np.flatnonzero((f != b).any(axis=0))
    if not diff.size:
        return
    p = int(diff[0])
    # the smaller of the two is an entry (seen from its own end, or from the other) that
    # one multiset holds more often than the other
    own = tuple(f[:, p].tolist()) < tuple(b[:, p].tolist())
    u, v = (int(f[0, p]), int(f[1, p])) if own else (int(b[1, p]), int(b[0, p]))
    w = "" if weights is None else f" with weight {(f if own else b)[2, p].tolist()}"
    raise GraphFormatError(
        f"{path}:{line_of_vertex[u]}: vertex {u + 1} lists neighbour {v + 1}{w}, but "
        f"vertex {v + 1} (line {line_of_vertex[v]}) does not list {u + 1}{w}: a METIS "
        "graph lists every edge from both ends"
    )


def read_snap(path: str | Path) -> CSRGraph:
    """A SNAP edge list (see the module notes)."""
    text = _text(path)
    undirected = False
    rows: list[str] = []
    lines: list[int] = []
    for k, ln in enumerate(text.split("\n")):
        s = ln.strip()
        if not s:
            continue
        if s[0] in "#%":
            undirected |= "undirected" in s.lower()
            continue
        rows.append(s)
        lines.append(k + 1)
    if not rows:
        return CSRGraph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), n_vertices=0)
    width = len(rows[0].split())
    if width not in (2, 3):
        raise GraphFormatError(f"{path}:{lines[0]}: expected 'src dst [weight]', got "
                               f"{rows[0]!r}")
    tokens = " ".join(rows).split()
    if len(tokens) != width * len(rows):
        bad = next(i for i, r in enumerate(rows) if len(r.split()) != width)
        raise GraphFormatError(f"{path}:{lines[bad]}: edge {bad + 1} has "
                               f"{len(rows[bad].split())} fields, the first has {width}")
    line_of = np.array(lines, dtype=np.int64)
    src = _ids(path, tokens[0::width], line_of, "source")
    dst = _ids(path, tokens[1::width], line_of, "destination")
    both = np.maximum(src, dst)
    if both.size and both.max() >= 2**31:
        bad = int(np.argmax(both >= 2**31))
        raise GraphFormatError(f"{path}:{lines[bad]}: edge {bad + 1}: ids must be integers "
                               "in [0, 2**31)")
    weights: Any = None
    if width == 3:
        weights = _weights(path, tokens[2::width], line_of)
    n = int(both.max()) + 1
    # the vertex count comes from the largest id: name the line that sets it
    top = int(np.argmax(both))
    check_declared_size(
        f"{path}:{lines[top]}", f"vertex id {n - 1}, so {n} vertices, and {src.size} edges",
        graph_io._CSR_BYTES_PER_VERTEX * (n + 1) + graph_io._CSR_BYTES_PER_EDGE * src.size,
        verb="names",
    )
    if undirected:
        return CSRGraph.from_edges(src, dst, weights, n_vertices=n, symmetrize=True,
                                   merge_duplicates="min")
    return CSRGraph.from_edges(src, dst, weights, n_vertices=n)
