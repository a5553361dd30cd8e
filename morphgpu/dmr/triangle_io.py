"""Triangle's file formats: ``.node``, ``.ele``, ``.poly`` and ``.neigh``, read and written.

Files are read into the same dicts the ``triangle`` package uses (``vertices``,
``vertex_markers``, ``triangles``, ``segments``, ``segment_markers``, ``holes``,
``regions``, ``neighbors``, ``vertex_attributes``, ``triangle_max_area`` from ``.area``),
with indices from 0 whatever the file's first index was (:func:`first_index` tells it, and
:func:`write` writes either base).
Malformed files raise :class:`MeshFormatError` (a ValueError) naming the file and the line.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..compressed import read_bounded, without_bom
from ..whole_file import written_whole


class MeshFormatError(ValueError):
    """A Triangle file is malformed; the message names the file and the line."""


_INT64 = (-(2**63), 2**63 - 1)
_INT32 = (-(2**31), 2**31 - 1)


class _Lines:
    """The file's meaningful lines (comments and blank lines dropped), with line numbers."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            raw = read_bounded(path, MeshFormatError)
        except OSError as exc:
            raise MeshFormatError(f"{path}: cannot read ({exc.strerror or exc})") from exc
        raw = without_bom(raw)  # kept, it made the header's first number unreadable
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise MeshFormatError(
                f"{path}:{line}: not a text file (byte {exc.start} is not UTF-8 text)"
            ) from None
        # Lines end at LF, CRLF or CR only: str.splitlines would also end them at form
        # feeds, vertical tabs, \x1c-\x1e and \x85, reading a comment's tail as data and
        # shifting every later line number.
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        physical = text.split("\n")
        self.n_lines = max(1, len(physical) - (physical[-1] == ""))
        self.size = len(raw)
        self._items: Iterator[tuple[int, list[str]]] = (
            (n, line.split("#", 1)[0].split())
            for n, line in enumerate(physical, start=1)
        )
        self.line_no = 0

    def more(self) -> bool:
        """Whether another meaningful line follows (it is kept for :meth:`next`)."""
        for n, fields in self._items:
            if fields:
                self._items = itertools.chain([(n, fields)], self._items)
                return True
        return False

    def next(self, what: str) -> list[str]:
        for n, fields in self._items:
            if fields:
                self.line_no = n
                return fields
        # the line the file ends on (a file with no data line has not set line_no)
        raise MeshFormatError(
            f"{self.path}:{self.line_no or self.n_lines}: ended early, expected {what}")

    def no_more(self, what: str) -> None:
        """Refuse a meaningful line after the last one the headers declare."""
        if self.more():
            self.next("")
            raise self.error(f"more lines than {what}")

    def error(self, message: str, line_no: int | None = None) -> MeshFormatError:
        return MeshFormatError(f"{self.path}:{line_no or self.line_no}: {message}")

    def numbers(self, what: str, count: int, kinds: str) -> list[float]:
        """The next line's first ``count`` numbers; ``kinds`` holds 'i' (int64), 'm' (a marker:
        int32) or 'f' (a finite float) per field."""
        fields = self.next(what)
        if len(fields) < count:
            raise self.error(f"expected {count} values for {what}, found {len(fields)}")
        out = []
        for k, (field, kind) in enumerate(zip(fields[:count], kinds)):
            try:
                out.append(_number(field, kind))
            except ValueError:
                raise self.error(f"value {k + 1} of {what} is not a number: {field!r}") from None
            if kind == "i" and not _INT64[0] <= out[-1] <= _INT64[1]:
                raise self.error(f"value {k + 1} of {what} does not fit in int64: {field!r}")
            if kind == "m" and not _INT32[0] <= out[-1] <= _INT32[1]:
                raise self.error(
                    f"value {k + 1} of {what} is a marker, which Triangle keeps in an int "
                    f"(32 bits): {field!r}"
                )
        if kinds.count("f") and not np.all(np.isfinite([v for v in out])):
            raise self.error(f"{what} has a NaN or infinite value")
        return out


def _number(field: str, kind: str) -> float:
    """One field: 'i'/'m' an integer, 'f' a float. int() and float() alone would also take
    '1_0' (as 10) and non-ASCII digits, which Triangle's strtol/strtod do not."""
    if not field.isascii() or "_" in field:
        raise ValueError(field)
    return int(field) if kind in "im" else float(field)


def _read_vertices(lines: _Lines, header: list[int]) -> tuple[dict[str, Any], int]:
    n, dim, n_attr, n_markers = (header + [0, 0, 0, 0])[:4]
    if n and dim != 2:
        raise lines.error(f"only 2-D vertices are supported, header says dimension {dim}")
    out: dict[str, Any] = {}
    if min(n, dim, n_attr, n_markers) < 0:
        raise lines.error("the vertex header's counts must be non-negative")
    if n and n_attr >= lines.size:
        # each attribute takes at least a byte of every vertex line; checked before the
        # per-line field counts are built (a count near 2**62 ran out of memory)
        raise lines.error(
            f"the header declares {n_attr} attributes a vertex, more than the file's "
            f"{lines.size} bytes can hold")
    ids, coords, attrs, markers, line_of = [], [], [], [], []
    kinds = "iff" + "f" * n_attr + ("m" if n_markers else "")
    for k in range(n):
        row = lines.numbers(f"vertex {k + 1}", 3 + n_attr + (1 if n_markers else 0), kinds)
        ids.append(int(row[0]))
        line_of.append(lines.line_no)
        coords.append(row[1:3])
        attrs.append(row[3: 3 + n_attr])
        if n_markers:
            markers.append(int(row[3 + n_attr]))
    first = ids[0] if ids else 0
    if first not in (0, 1):
        raise lines.error(f"vertices must be numbered from 0 or 1, the first is {first}",
                          line_of[0])
    if ids != list(range(first, first + n)):
        k = next(k for k, i in enumerate(ids) if i != first + k)
        raise lines.error(
            f"vertex {ids[k]} where {first + k} was expected (vertices are numbered "
            f"consecutively from {first})", line_of[k]
        )
    out["vertices"] = np.asarray(coords, dtype=np.float64).reshape(-1, 2)
    if n_attr:
        out["vertex_attributes"] = np.asarray(attrs, dtype=np.float64)
    if n_markers:
        out["vertex_markers"] = np.asarray(markers, dtype=np.int32).reshape(-1, 1)
    return out, first


def _check_indices(lines: _Lines, name: str, arr: np.ndarray, n_vertices: int,
                   line_of: list[int], first: int) -> None:
    if arr.size and (arr.min() < 0 or arr.max() >= n_vertices):
        row = int(np.nonzero((arr < 0).any(1) | (arr >= n_vertices).any(1))[0][0])
        bad = int(arr[row][(arr[row] < 0) | (arr[row] >= n_vertices)][0]) + first
        have = (f"vertices are {first}..{n_vertices - 1 + first}" if n_vertices
                else "there are no vertices")
        raise lines.error(
            f"{name} {row + 1} refers to vertex {bad}, which does not exist ({have})",
            line_of[row]
        )


def _header(lines: _Lines, what: str, width: int) -> list[int]:
    fields = lines.next(what)
    try:
        values = [int(_number(f, "i")) for f in fields[:width]]
    except ValueError:
        raise lines.error(f"{what} must be integers, got {' '.join(fields)!r}") from None
    if not values or values[0] < 0:
        raise lines.error(f"{what}: a non-negative count comes first")
    if any(not 0 <= v <= _INT64[1] for v in values):
        raise lines.error(f"{what}: counts must be non-negative and fit in int64")
    return values


def _read_node_lines(lines: _Lines) -> tuple[dict[str, Any], int]:
    header = _header(lines, "the .node header", 4)
    header_line = lines.line_no
    out = _read_vertices(lines, header)
    # a whole .node file: nothing may follow the vertices it declares
    lines.no_more(f"the {header[0]} vertices the header (line {header_line}) declares")
    return out


def read_node(path: str | Path) -> dict[str, Any]:
    """A ``.node`` file: vertices, attributes, markers."""
    return _read_node_lines(_Lines(Path(path)))[0]


def _read_ele(path: Path, first: int, n_vertices: int) -> dict[str, Any]:
    lines = _Lines(path)
    header = _header(lines, "the .ele header", 3)
    n, per, n_attr = (header + [3, 0][len(header) - 1:])[:3]
    if per not in (3, 6):
        raise lines.error(f"triangles must have 3 (or 6) nodes, header says {per}")
    if n and n_attr >= lines.size:
        raise lines.error(
            f"the header declares {n_attr} attributes a triangle, more than the file's "
            f"{lines.size} bytes can hold")
    header_line = lines.line_no
    rows, line_of = [], []
    for k in range(n):
        rows.append(lines.numbers(f"triangle {k + 1}", 1 + per + n_attr,
                                  "i" * (1 + per) + "f" * n_attr))
        line_of.append(lines.line_no)
    # as for .node: lines past the declared triangles mean the header's count is wrong, and
    # reading on would drop those triangles without a word
    lines.no_more(f"the {n} triangles the header (line {header_line}) declares")
    tri = np.asarray([r[1:4] for r in rows], dtype=np.int64).reshape(-1, 3) - first
    _check_indices(lines, "triangle", tri, n_vertices, line_of, first)
    out = {"triangles": tri.astype(np.int32)}
    if n_attr:  # Triangle's regional attributes (-A), which triangle.load keeps
        out["triangle_attributes"] = np.asarray(
            [r[1 + per:] for r in rows], dtype=np.float64).reshape(-1, n_attr)
    return out


def read_ele(path: str | Path, node_path: str | Path | None = None) -> dict[str, Any]:
    """A ``.ele`` file with its ``.node`` (by default the file beside it)."""
    path = Path(path)
    node = Path(node_path) if node_path else path.with_suffix(".node")
    out, first = _read_node_lines(_Lines(node))
    out.update(_read_ele(path, first, len(out["vertices"])))
    return out


def read_poly(path: str | Path) -> dict[str, Any]:
    """A ``.poly`` file (vertices inline, or in the ``.node`` beside it when it says 0)."""
    path = Path(path)
    lines = _Lines(path)
    header = _header(lines, "the .poly header", 4)
    if header[0] == 0:
        node = path.with_suffix(".node")
        if not node.exists():
            raise MeshFormatError(f"{path}: lists 0 vertices and {node.name} does not exist")
        out, first = _read_node_lines(_Lines(node))
    else:
        out, first = _read_vertices(lines, header)
    nv = len(out["vertices"])
    n_seg, seg_markers = (_header(lines, "the segment header", 2) + [0])[:2]
    rows, line_of = [], []
    for k in range(n_seg):
        rows.append(lines.numbers(f"segment {k + 1}", 3 + (1 if seg_markers else 0), "iiim"))
        line_of.append(lines.line_no)
    segs = np.asarray([r[1:3] for r in rows], dtype=np.int64).reshape(-1, 2) - first
    _check_indices(lines, "segment", segs, nv, line_of, first)
    out["segments"] = segs.astype(np.int32)
    if seg_markers:
        out["segment_markers"] = np.asarray([r[3] for r in rows], np.int32).reshape(-1, 1)
    n_holes = _header(lines, "the hole count", 1)[0]
    holes = [lines.numbers(f"hole {k + 1}", 3, "iff")[1:] for k in range(n_holes)]
    if n_holes:
        out["holes"] = np.asarray(holes, dtype=np.float64)
    if not lines.more():
        return out
    n_regions = _header(lines, "the region count", 1)[0]
    regions = []
    for k in range(n_regions):
        fields = lines.next(f"region {k + 1}")
        try:
            values = [_number(f, "f") for f in fields[1:5]]
        except ValueError:
            raise lines.error(f"region {k + 1} is not numeric") from None
        if len(values) < 3:
            raise lines.error(f"region {k + 1} needs x, y and an attribute or area")
        if not np.all(np.isfinite(values)):
            raise lines.error(f"region {k + 1} has a NaN or infinite value")
        # Triangle reads "x y value" as x, y and a maximum area
        regions.append(values if len(values) == 4 else [values[0], values[1], 0.0, values[2]])
    if n_regions:
        out["regions"] = np.asarray(regions, dtype=np.float64).reshape(-1, 4)
    lines.no_more(f"the {n_regions} regions the region count declares")
    return out


def read_neigh(path: str | Path) -> np.ndarray:
    """A ``.neigh`` file: neighbours per triangle (-1 on the boundary), from index 0."""
    path = Path(path)
    lines = _Lines(path)
    n = _header(lines, "the .neigh header", 2)[0]
    rows, line_of = [], []
    for k in range(n):
        rows.append(lines.numbers(f"triangle {k + 1}", 4, "iiii"))
        line_of.append(lines.line_no)
    first = rows[0][0] if rows else 0
    nbr = np.asarray([r[1:] for r in rows], dtype=np.int64).reshape(-1, 3)
    # -1 marks the boundary; any other id must be a triangle (an int32 cast would wrap)
    bad = np.flatnonzero(((nbr != -1) & ((nbr < first) | (nbr >= first + n))).any(axis=1))
    if bad.size:
        row = int(bad[0])
        raise lines.error(
            f"triangle {row + 1} names neighbour(s) {rows[row][1:]} outside -1 and "
            f"{first}..{first + n - 1}", line_of[row])
    return np.where(nbr >= 0, nbr - first, -1).astype(np.int32)


def read_area(path: str | Path, n_triangles: int) -> np.ndarray:
    """An ``.area`` file: one maximum area per triangle (-1: no limit), as (n, 1) floats."""
    path = Path(path)
    lines = _Lines(path)
    n = _header(lines, "the .area header", 1)[0]
    if n != n_triangles:
        raise lines.error(f"lists {n} areas for {n_triangles} triangles")
    rows = [lines.numbers(f"area {k + 1}", 2, "if") for k in range(n)]
    return np.asarray([r[1] for r in rows], dtype=np.float64).reshape(-1, 1)


def first_index(path: str | Path) -> int:
    """The file's first vertex number, 0 or 1 (Triangle writes output in the input's base)."""
    path = Path(path)
    if path.suffix == ".poly":
        lines = _Lines(path)
        if _header(lines, "the .poly header", 4)[0] == 0:
            return first_index(path.with_suffix(".node"))
    else:
        lines = _Lines(path.with_suffix(".node"))
        if _header(lines, "the .node header", 4)[0] == 0:
            return 0
    # as a number, as the readers take it: "01" (or "+1") is vertex 1 there too
    try:
        return 1 if _number(lines.next("vertex 1")[0], "i") == 1 else 0
    except ValueError:
        return 0  # not a number: the vertex reader names the line


def read(path: str | Path) -> dict[str, Any]:
    """``FILE.poly``, ``FILE.node`` (with ``FILE.ele`` when present; a ``.poly`` whose
    vertices are in the ``.node`` takes the ``.ele`` too, as Triangle's ``-rp`` and
    ``triangle.load`` do); with triangles, ``FILE.area`` gives ``triangle_max_area``."""
    path = Path(path)
    if path.suffix == ".poly":
        out = read_poly(path)
        ele = path.with_suffix(".ele")
        if not ele.exists() or _header(_Lines(path), "the .poly header", 4)[0] != 0:
            return out
        out.update(_read_ele(ele, first_index(path), len(out["vertices"])))
    elif path.suffix == ".ele":
        out = read_ele(path)
    elif path.suffix != ".node":
        raise MeshFormatError(f"{path}: expected a .poly, .node or .ele file")
    else:
        ele = path.with_suffix(".ele")
        if not ele.exists():
            return read_node(path)
        out = read_ele(ele, path)
    area = path.with_suffix(".area")
    if area.exists():
        out["triangle_max_area"] = read_area(area, len(out["triangles"]))
    return out


def _text(header: str, rows: list[str]) -> str:
    return header + "\n" + "".join(r + "\n" for r in rows)


def write(mesh: dict[str, Any], stem: str | Path, *, first: int = 0) -> list[Path]:
    """Write ``stem.node`` (with vertex attributes), ``stem.ele`` (with triangle
    attributes), ``stem.poly`` (segments, holes, regions) and ``stem.neigh`` for whatever
    the dict holds, numbered from ``first`` (0 or
    1: Triangle keeps its input's base). Returns the paths written. Every file's text is
    made, and written under a temporary name, before any file is replaced, so a mesh that
    cannot be written leaves the files as they were."""
    stem = Path(stem)
    texts: dict[str, str] = {}
    b = int(first)
    v = np.asarray(mesh["vertices"], dtype=np.float64)
    vm = mesh.get("vertex_markers")
    vm = None if vm is None else np.asarray(vm).ravel()
    va = mesh.get("vertex_attributes")
    va = np.zeros((len(v), 0)) if va is None else np.asarray(va, np.float64).reshape(len(v), -1)
    rows = [
        f"{k + b} {x!r} {y!r}" + "".join(f" {a!r}" for a in va[k].tolist())
        + ("" if vm is None else f" {int(vm[k])}")
        for k, (x, y) in enumerate(v.tolist())
    ]
    header = f"{len(v)} 2 {va.shape[1]} {0 if vm is None else 1}"
    texts[".node"] = _text(header, rows)
    if mesh.get("triangles") is not None:
        tri = np.asarray(mesh["triangles"]).reshape(-1, 3)
        ta = mesh.get("triangle_attributes")  # written as read (it was dropped)
        ta = (np.zeros((len(tri), 0)) if ta is None
              else np.asarray(ta, np.float64).reshape(len(tri), -1))
        rows = [f"{k + b} {p + b} {q + b} {r + b}" + "".join(f" {a!r}" for a in ta[k].tolist())
                for k, (p, q, r) in enumerate(tri.tolist())]
        texts[".ele"] = _text(f"{len(tri)} 3 {ta.shape[1]}", rows)
    if mesh.get("neighbors") is not None:
        nbr = np.asarray(mesh["neighbors"]).reshape(-1, 3)
        rows = [f"{k + b} " + " ".join(str(t + b if t >= 0 else -1) for t in row)
                for k, row in enumerate(nbr.tolist())]
        texts[".neigh"] = _text(f"{len(nbr)} 3", rows)
    if mesh.get("segments") is not None:
        segs = np.asarray(mesh["segments"]).reshape(-1, 2)
        sm = mesh.get("segment_markers")
        sm = None if sm is None else np.asarray(sm).ravel()
        rows = ["0 2 0 0", f"{len(segs)} {0 if sm is None else 1}"]
        rows += [
            f"{k + b} {p + b} {q + b}" + ("" if sm is None else f" {int(sm[k])}")
            for k, (p, q) in enumerate(segs.tolist())
        ]
        holes = mesh.get("holes")  # None as no holes (it failed: "cannot reshape ... size 1")
        holes = np.asarray(np.zeros((0, 2)) if holes is None else holes,
                           dtype=np.float64).reshape(-1, 2)
        rows.append(f"{len(holes)}")
        rows += [f"{k + b} {x!r} {y!r}" for k, (x, y) in enumerate(holes.tolist())]
        regions = mesh.get("regions")  # x, y, attribute, area limit (they were dropped)
        if regions is not None and len(regions):
            regions = np.asarray(regions, dtype=np.float64).reshape(-1, 4)
            rows.append(f"{len(regions)}")
            rows += [f"{k + b} " + " ".join(repr(c) for c in row)
                     for k, row in enumerate(regions.tolist())]
        texts[".poly"] = "\n".join(rows) + "\n"
    # Each file goes to a temporary name beside its target first and is moved into place
    # only once all of them are written: writing in place left stem.node replaced when
    # stem.ele then failed (a directory of that name, a full disk).
    targets = [stem.with_suffix(suffix) for suffix in texts]
    for path in targets:
        if path.is_dir():
            raise IsADirectoryError(f"{path}: is a directory; no mesh file was written")
    # Every file through written_whole, none moved into place until all are written.
    with contextlib.ExitStack() as files:
        for path, text in zip(targets, texts.values(), strict=True):
            files.enter_context(written_whole(path, "w")).write(text)
    return targets
