"""The mesh as a structure of arrays, and its conversion from and to Triangle-style dicts.

Layout (shared by the CPU and GPU paths):
- ``x``, ``y``: vertex coordinates (float64);
- ``tri[t]``: the three vertex ids of triangle t, counter-clockwise;
- ``nbr[t, i]``: the triangle across edge i, or -1 on the domain boundary. Edge i is the one
  opposite vertex i, from ``tri[t, (i+1)%3]`` to ``tri[t, (i+2)%3]``;
- ``seg[t, i]``: 0 if edge i is free, else 1 + the index into ``segment_markers`` of the
  constrained segment it belongs to (kept as constrained edges, so segments travel with
  the triangles and need no separate structure during refinement);
- ``vertex_markers``: Triangle's boundary markers per vertex.
Every domain-boundary edge is constrained (Triangle's boundary segments, marker 1 when the
input gave none). The construction functions run on NumPy or CuPy arrays alike (the GPU
path builds its neighbours on the device); the marker table stays on the host.

Tests over whole arrays go through :mod:`morphgpu.device_reduce` (NumPy for NumPy arrays, one
fixed build for CuPy ones), never CuPy's ``.any()``/``argmax``/``count_nonzero``: those
compile per array size (issue 19). Masked updates use ``where``, not boolean indexing
(CuPy's adds a scan kernel past 512 elements).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .. import backend, device_reduce
from .predicates import orient2d_signs

BOUNDARY_MARKER = 1


@dataclass
class Mesh:
    x: np.ndarray
    y: np.ndarray
    tri: np.ndarray
    nbr: np.ndarray
    seg: np.ndarray
    vertex_markers: np.ndarray
    segment_markers: np.ndarray  # distinct marker values; seg codes index it (minus 1)
    holes: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    extra: dict[str, Any] = field(default_factory=dict)  # regions etc., passed through

    @property
    def n_vertices(self) -> int:
        return len(self.x)

    @property
    def n_triangles(self) -> int:
        return len(self.tri)


def _edge_keys(a: Any, b: Any, n_vertices: int) -> Any:
    xp = backend.array_module(a)
    lo, hi = xp.minimum(a, b).astype(xp.int64), xp.maximum(a, b).astype(xp.int64)
    return lo * n_vertices + hi


def orient_ccw(x: Any, y: Any, tri: Any) -> Any:
    """The triangles with clockwise ones flipped (Triangle writes CCW; other tools may not).

    ValueError names the first triangle of zero area (the orientation is computed anyway).
    """
    xp = backend.array_module(tri)
    tri = tri.copy()
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    # Exact signs where the float one is in doubt: Triangle's own output has slivers
    # (nearly collinear input, scaled) whose float sign is wrong, and flipping one of those
    # made two valid triangles overlap.
    sign = orient2d_signs(x[a], y[a], x[b], y[b], x[c], y[c])
    degenerate = sign == 0
    if device_reduce.any_true(degenerate):
        k = device_reduce.first_true(degenerate)
        raise ValueError(f"mesh['triangles']: triangle {k} has zero area")
    cw = sign < 0
    second, third = xp.where(cw, c, b), xp.where(cw, b, c)  # both before either is written
    tri[:, 1], tri[:, 2] = second, third
    return tri


def _half_edge_order(keys: Any, n_vertices: int) -> Any:
    """The half-edges sorted by edge key (ties in any order).

    NumPy's plain sort is several times faster than its argsort, so when key and index fit
    in 63 bits together they are packed into one integer and sorted by value. CuPy's
    argsort is a radix sort already and is left as it is.
    """
    xp = backend.array_module(keys)
    index_bits = max(1, int(len(keys) - 1).bit_length())
    key_bits = 2 * max(1, int(n_vertices - 1).bit_length())
    if xp is not np or key_bits + index_bits > 63:
        return xp.argsort(keys)
    packed = np.sort((keys << index_bits) | np.arange(len(keys), dtype=np.int64))
    return packed & ((1 << index_bits) - 1)


def build_neighbors(tri: Any, n_vertices: int) -> Any:
    """``nbr`` from the triangles alone; ValueError when an edge has more than two sides."""
    xp = backend.array_module(tri)
    n = len(tri)
    a = tri[:, [1, 2, 0]].ravel()
    b = tri[:, [2, 0, 1]].ravel()
    keys = _edge_keys(a, b, n_vertices)
    order = _half_edge_order(keys, n_vertices)
    sk = keys[order]
    nbr = xp.full(3 * n, -1, dtype=xp.int64)
    same = sk[1:] == sk[:-1]
    triple = same[1:] & same[:-1]
    if device_reduce.any_true(triple):
        # triple[i]: sk[i], sk[i+1], sk[i+2] equal
        bad = int(sk[1 + device_reduce.first_true(triple)])
        raise ValueError(
            f"triangles: edge ({bad // n_vertices}, {bad % n_vertices}) belongs to more than "
            "two triangles (overlapping or duplicated triangles)"
        )
    i = xp.nonzero(same)[0]
    first, second = order[i], order[i + 1]
    # Counter-clockwise neighbours traverse their shared edge in opposite directions; the
    # same direction means the two triangles lie on the same side of it and overlap.
    clash = a[first] != b[second]
    if device_reduce.any_true(clash):
        k = device_reduce.first_true(clash)
        t1, t2 = int(first[k]) // 3, int(second[k]) // 3
        raise ValueError(
            f"triangles: triangles {min(t1, t2)} and {max(t1, t2)} overlap (they lie on the "
            f"same side of their shared edge ({int(a[first[k]])}, {int(b[first[k]])}))"
        )
    nbr[first] = second // 3
    nbr[second] = first // 3
    return nbr.reshape(n, 3)


def edge_segment_codes(
    tri: Any, nbr: Any, n_vertices: int, segments: np.ndarray,
    segment_markers: np.ndarray | None,
) -> tuple[Any, np.ndarray]:
    """(``seg`` per triangle edge, distinct marker table on the host) from the segments."""
    xp = backend.array_module(tri)
    markers = (
        np.full(len(segments), BOUNDARY_MARKER, dtype=np.int64)
        if segment_markers is None else np.asarray(segment_markers, dtype=np.int64).ravel()
    )
    table = np.unique(np.concatenate([markers, [BOUNDARY_MARKER]]))
    a = tri[:, [1, 2, 0]].ravel()
    b = tri[:, [2, 0, 1]].ravel()
    keys = _edge_keys(a, b, n_vertices)
    seg = xp.zeros(len(keys), dtype=xp.int32)
    if len(segments):
        seg_xp = xp.asarray(segments, dtype=xp.int64)
        skeys = _edge_keys(seg_xp[:, 0], seg_xp[:, 1], n_vertices)
        # each half-edge looks its key up among the sorted segment keys; a segment that no
        # half-edge found is missing (a scatter into a flag per segment, not isin: CuPy's
        # compares every pair, half-edges times segments)
        order = xp.argsort(skeys)
        sorted_keys = skeys[order]
        pos = xp.searchsorted(sorted_keys, keys)
        pos = xp.minimum(pos, len(skeys) - 1)
        hit = sorted_keys[pos] == keys
        found = xp.zeros(len(skeys) + 1, dtype=xp.uint8)
        found[xp.where(hit, order[pos], len(skeys))] = 1  # misses land in the spare slot
        missing = found[:-1] == 0
        if device_reduce.any_true(missing):
            k = device_reduce.first_true(missing)
            raise ValueError(
                f"segments: segment {k} ({int(seg_xp[k, 0])}, {int(seg_xp[k, 1])}) is not an "
                "edge of the triangles (give a PSLG without triangles to have it inserted)"
            )
        codes = xp.asarray(np.searchsorted(table, markers) + 1, dtype=xp.int32)
        seg = xp.where(hit, codes[order][pos], seg).astype(xp.int32, copy=False)
    boundary = (nbr.ravel() < 0) & (seg == 0)
    code = xp.int32(int(np.searchsorted(table, BOUNDARY_MARKER)) + 1)
    seg = xp.where(boundary, code, seg).astype(xp.int32, copy=False)
    return seg.reshape(-1, 3), table


def mesh_from_arrays(
    vertices: np.ndarray, triangles: np.ndarray, segments: np.ndarray | None = None,
    segment_markers: np.ndarray | None = None, vertex_markers: np.ndarray | None = None,
    holes: np.ndarray | None = None, *, side: str = "cpu",
) -> Mesh:
    """Our mesh from Triangle-style arrays, built on ``side`` ("gpu": CuPy arrays)."""
    xp = backend.xp_for(side)  # type: ignore[arg-type]
    vertices = xp.asarray(vertices, dtype=xp.float64)
    x, y = vertices[:, 0].copy(), vertices[:, 1].copy()
    nv = len(x)
    # copied in its own dtype, converted where it lands (CuPy converts a NumPy array to
    # the asked dtype on the host before copying it)
    tri = orient_ccw(x, y, xp.asarray(triangles).astype(xp.int64, copy=False))
    nbr = build_neighbors(tri, nv)
    segs = np.zeros((0, 2), dtype=np.int64) if segments is None else np.asarray(segments, np.int64)
    seg, table = edge_segment_codes(tri, nbr, nv, segs, segment_markers)
    vm = (
        xp.zeros(nv, dtype=xp.int64) if vertex_markers is None
        else xp.asarray(vertex_markers, dtype=xp.int64).ravel()
    )
    return Mesh(
        x, y, tri.astype(xp.int32), nbr.astype(xp.int32), seg, vm, table,
        np.zeros((0, 2)) if holes is None else np.asarray(holes, dtype=np.float64).reshape(-1, 2),
    )


def output_segments(mesh: Mesh) -> tuple[Any, Any]:
    """Every constrained edge once, as (segments n×2, markers n), on the mesh's side."""
    xp = backend.array_module(mesh.tri)
    edge = xp.flatnonzero(mesh.seg.reshape(-1))
    t, i = edge // 3, edge % 3
    tri = mesh.tri.reshape(-1)
    a, b = tri[t * 3 + (i + 1) % 3], tri[t * 3 + (i + 2) % 3]
    other = mesh.nbr.reshape(-1)[edge]
    keep = (other < 0) | (t < other)  # each shared edge once, from its lower-numbered side
    segs = xp.stack([a[keep], b[keep]], axis=1).astype(xp.int32, copy=False)
    table = xp.asarray(mesh.segment_markers, dtype=xp.int32)
    markers = table[mesh.seg.reshape(-1)[edge[keep]] - 1]
    return segs, markers


def to_triangle_dict(mesh: Mesh) -> dict[str, Any]:
    """Triangle's output dict: vertices, markers, triangles, neighbors, segments, holes.

    Built where the mesh lives (the GPU path builds it on the device and moves each array
    once); ``holes`` and the pass-through extras stay as they are.
    """
    xp = backend.array_module(mesh.tri)
    segs, smark = output_segments(mesh)
    out = {
        "vertices": xp.stack([mesh.x, mesh.y], axis=1),
        "vertex_markers": mesh.vertex_markers.reshape(-1, 1).astype(xp.int32, copy=False),
        "triangles": mesh.tri.astype(xp.int32, copy=False),
        "neighbors": mesh.nbr.astype(xp.int32, copy=False),
        "segments": segs,
        "segment_markers": smark.reshape(-1, 1),
    }
    if len(mesh.holes):
        out["holes"] = mesh.holes
    out.update({k: v for k, v in mesh.extra.items() if k not in ("n_input", "vertex_apex", "cdt")})
    return out


def permute_triangles(mesh: Mesh, perm: Any) -> Mesh:
    """The mesh with triangle slot i holding old triangle perm[i] (neighbours renumbered).
    ``perm`` may leave slots out: they are dropped, and neighbours across to them become
    -1 (the domain's boundary)."""
    xp = backend.array_module(mesh.tri)
    perm = xp.asarray(perm, dtype=xp.int64)
    if len(perm) == len(mesh.tri):
        new_id = xp.empty(len(perm), dtype=xp.int64)
    else:
        new_id = xp.full(len(mesh.tri), -1, dtype=xp.int64)
    new_id[perm] = xp.arange(len(perm))
    nbr = mesh.nbr[perm]
    nbr = xp.where(nbr >= 0, new_id[xp.maximum(nbr, 0)], -1).astype(mesh.nbr.dtype)
    # the vertex arrays are shared, not copied: only the triangle arrays change
    return replace(mesh, tri=mesh.tri[perm], nbr=nbr, seg=mesh.seg[perm], extra=dict(mesh.extra))


class LazyNeighbors(dict):
    """A Triangle-style output dict whose ``neighbors`` are built on first use.

    ``device="auto"`` hands small inputs to Triangle, whose ``-n`` switch costs it two
    passes over its triangle pool: 5-10% of a ``-rpq30`` run at 10k-100k triangles on
    the CPU machine, where plain Triangle, without neighbours, is the baseline. The key
    is there from the start (``in``, ``keys``, ``len``, iteration, copies and ``**``
    unpacking see it); the array is computed from the triangles (:func:`build_neighbors`,
    Triangle's layout and int32) the first time anything reads it or the whole dict.
    A value stored under the key (assignment, ``update``) replaces it, as in a dict.
    """

    KEY = "neighbors"

    def _waiting(self) -> bool:
        return not dict.__contains__(self, self.KEY) and self._pending

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self._pending = True

    def _fill(self) -> None:
        if self._waiting():
            tri = np.asarray(dict.__getitem__(self, "triangles"))
            n = len(dict.__getitem__(self, "vertices"))
            dict.__setitem__(self, self.KEY, build_neighbors(tri, n).astype(np.int32))
        self._pending = False

    def __getitem__(self, key: Any) -> Any:
        if key == self.KEY:
            self._fill()
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __contains__(self, key: Any) -> bool:
        return (key == self.KEY and self._waiting()) or super().__contains__(key)

    def __len__(self) -> int:
        return super().__len__() + self._waiting()

    def __delitem__(self, key: Any) -> None:
        if key == self.KEY and self._waiting():
            self._pending = False
            return
        super().__delitem__(key)

    def pop(self, key: Any, *default: Any) -> Any:
        if key == self.KEY:
            self._fill()
        return super().pop(key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key == self.KEY:
            self._fill()
        return super().setdefault(key, default)

    # Everything that reads the whole dict fills it first. Overriding __iter__ also
    # turns dict(d), {**d} and f(**d) from CPython's direct copy of the stored entries
    # into keys() and __getitem__.
    def __iter__(self):
        self._fill()
        return super().__iter__()

    def keys(self):
        self._fill()
        return super().keys()

    def values(self):
        self._fill()
        return super().values()

    def items(self):
        self._fill()
        return super().items()

    def popitem(self) -> tuple[Any, Any]:
        self._fill()
        return super().popitem()

    def copy(self) -> dict[str, Any]:
        self._fill()
        return dict(super().items())

    def __repr__(self) -> str:
        self._fill()
        return super().__repr__()

    def __eq__(self, other: object) -> bool:
        self._fill()
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        self._fill()
        return super().__ne__(other)

    __hash__ = None  # type: ignore[assignment]  # as dict's

    def __reduce__(self) -> tuple[Any, ...]:  # pickle and copy: a plain dict
        return (dict, (self.copy(),))

    def __or__(self, other: Any) -> dict[str, Any]:
        return self.copy() | other

    def __ror__(self, other: Any) -> dict[str, Any]:
        return other | self.copy()
