"""The door of the dmr wing: ``refine`` (Triangle's interface) and ``random_mesh``.

Inputs are Triangle-style dicts (``vertices`` plus optional ``triangles``, ``segments``,
``holes``, markers). A PSLG without triangles is first triangulated (constrained Delaunay):
on the GPU, Triangle triangulates only the segments' vertices and the device inserts every
other vertex (:mod:`morphgpu.dmr.cdt_gpu`; inputs it does not handle, such as crossing
segments or a vertex on a segment, go to Triangle whole, said in ``stats["cdt"]``); on the
CPU the ``triangle`` package triangulates it. The refinement itself is ours, on the GPU or
the CPU.

Which code runs on a machine without a GPU: ``device="auto"`` there hands the whole
refinement to Triangle (``triangle.triangulate`` with ``-rpq<angle>a<area>``), which is
faster than our NumPy rounds; ``device="cpu"`` runs our NumPy path, the CPU twin of the
GPU kernels that the tests compare them with. On a machine with a GPU, ``device="auto"``
runs the GPU path only where it pays: an input whose refined mesh is expected to have
fewer than ``AUTO_GPU_MIN_TRIANGLES`` triangles (from the input's sizes, the angle and
the area bound over the vertices' bounding box: no pass over the triangles, so the
Triangle side costs little more than Triangle; :func:`estimate_output_triangles` is the
finer figure, from the domain's area) goes to Triangle too, and the choice is logged
(logger ``morphgpu``, INFO) and named in the statistics (``auto``). The first GPU
refinement in a process also loads every kernel build and CuPy kernel the GPU path uses
(:func:`warm_up_gpu`), so no later input compiles anything. Per-triangle area limits
(``triangle_max_area``, Triangle's ``.area`` files with ``-r -a``) always run through
Triangle, under ``device="auto"``; our paths refuse them rather than ignore them.
Vertex attributes (``vertex_attributes``) come back for every output vertex: Triangle
interpolates them itself; on our paths input vertices keep theirs and new vertices get
linear interpolation over the input vertices (exact for linear data).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import arguments, backend, device_reduce
from ..csr import check_declared_size
from ..reorder import morton_order
from .mesh import LazyNeighbors, Mesh, mesh_from_arrays, permute_triangles, to_triangle_dict

# Ruppert/Shewchuk: termination is proven up to about 20.7°, observed up to about 33.8°.
TERMINATION_ANGLE = 33.8

log = logging.getLogger("morphgpu")

# device="auto" on a GPU machine: inputs whose refined mesh is expected to have fewer
# triangles than this (estimate_output_triangles) are refined by Triangle on the CPU, where
# the GPU path's fixed costs (transfers, neighbour construction on the device, a few
# hundred small rounds of launches and host reads) exceed Triangle's whole run.
# TO BE MEASURED: the default, 100,000 estimated output triangles, is issue 19's figure,
# not a measurement. The lead sets it from a device run of benchmarks/dmr.py (the smallest
# size whose steady end_to_end_s beats triangle_s on all three inputs, uniform, clustered
# and PSLG with holes; see est_out in its rows) and records the machine here.
AUTO_GPU_MIN_TRIANGLES = 100_000
# Output triangles per input triangle of Triangle's -rpq<angle> on uniform random
# Delaunay meshes (random_mesh, 10k and 100k triangles in, measured on the CPU machine:
# 1.13 at 10°, 1.56-1.61 at 20°, 2.0 at 25°, 2.79-2.87 at 30°, 3.71-3.82 at 33°), and per
# (domain area / max_area) for an area bound (1.55 at 20°, 1.58 at 30°, 1.71 at 33°, unit
# square, 1e-3 to 1e-5). Linear in between; a rough figure, it only picks the side.
_ANGLE_GROWTH = ((0.0, 1.0), (10.0, 1.13), (20.0, 1.6), (25.0, 2.0), (30.0, 2.85),
                 (33.0, 3.8), (TERMINATION_ANGLE, 4.2), (60.0, 8.0))
_AREA_GROWTH = 1.55


def _angle_growth(min_angle: float) -> float:
    """``_ANGLE_GROWTH`` interpolated at ``min_angle`` (in (0, 60)): plain floats, as
    np.interp, without its array set-up (issue 19: the device="auto" side pays it)."""
    for (a0, g0), (a1, g1) in zip(_ANGLE_GROWTH, _ANGLE_GROWTH[1:]):
        if min_angle <= a1:
            return g0 + (g1 - g0) * (min_angle - a0) / (a1 - a0)
    return _ANGLE_GROWTH[-1][1]


def _triangle_module():
    try:
        import triangle  # noqa: PLC0415
    except ImportError as exc:
        raise ValueError(
            "mesh: a PSLG without triangles needs the 'triangle' package for the initial "
            "constrained Delaunay triangulation (pip install triangle)"
        ) from exc
    return triangle


def _host(value: Any, name: str, dtype: Any, width: int | None) -> np.ndarray:
    if type(value) is np.ndarray and (dtype is None or value.dtype == dtype):
        arr = value  # the usual case, without the conversions' calls (issue 19)
    else:
        try:
            arr = np.asarray(backend.to_host(value), dtype=dtype)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"mesh['{name}']: not a numeric array ({exc})") from exc
    if width is not None:
        if arr.size == 0:
            return arr.reshape(0, width)
        if arr.ndim != 2 or arr.shape[1] != width:
            raise ValueError(f"mesh['{name}']: expected shape (n, {width}), got {arr.shape}")
    return arr


def _validated(mesh: dict[str, Any], index_dtype: Any = np.int64, *,
               values: bool = True, triangle_checks_int32: bool = False,
               ) -> dict[str, np.ndarray]:
    """The user's dict checked, as host arrays (indices as ``index_dtype``; None: int32
    and int64 arrays as they are, other integers as int64). ``values=False``: the passes
    over the two big arrays' values (the vertices' scale, the triangles' index range) are
    left to the caller, which makes them on the device after the upload
    (:func:`_checked_on_device`); everything else is checked here.
    ``triangle_checks_int32``: int32 triangles are handed to Triangle as they are, and
    Triangle (``-r``) rejects an index out of range itself (the caller names the problem
    with a full check after Triangle's error), so their range pass is left out."""
    if not isinstance(mesh, dict) or "vertices" not in mesh:
        raise ValueError("mesh: expected a Triangle-style dict with at least 'vertices'")
    out: dict[str, np.ndarray] = {}
    v = _host(mesh["vertices"], "vertices", np.float64, 2)
    if len(v) < 3:
        raise ValueError(f"mesh['vertices']: need at least 3 vertices, got {len(v)}")
    if values:
        _check_scale(v, "vertices")  # finite, not too large, not too small
    out["vertices"] = v
    for name, width in (("triangles", 3), ("segments", 2)):
        if mesh.get(name) is not None:
            raw = mesh[name]
            if type(raw) is not np.ndarray:
                raw = backend.to_host(raw)
            integral = np.asarray(raw).dtype.kind in "iu"  # the usual case: no float detour
            # integers are range-checked in their own dtype, then converted once
            arr = _host(raw, name, None if integral else np.float64, width)
            trusted = name == "triangles" and (not values or (
                triangle_checks_int32 and arr.dtype == np.int32))
            if len(arr) and (not integral or not trusted) and (
                (not integral and np.any(arr != np.round(arr)))
                or _out_of_range(arr, len(v))
            ):
                raise ValueError(f"mesh['{name}']: indices must be integers in [0, {len(v)})")
            keep = index_dtype is None and arr.dtype in (np.int32, np.int64)
            out[name] = arr if keep else arr.astype(index_dtype or np.int64, copy=False)
    if mesh.get("holes") is not None:
        out["holes"] = _host(mesh["holes"], "holes", np.float64, 2)
        if not np.all(np.isfinite(out["holes"])):
            raise ValueError("mesh['holes']: coordinates must be finite (found NaN or inf)")
    for name in ("vertex_markers", "segment_markers"):
        if mesh.get(name) is not None:
            raw = _host(mesh[name], name, None, None).ravel()
            if raw.size and (
                raw.dtype.kind not in "iufb"
                or (raw.dtype.kind == "f" and not np.all(raw == np.round(raw)))
                or (not _fits_int32(raw.dtype)
                    and (raw.min() < -(2**31) or raw.max() >= 2**31))
            ):
                raise ValueError(
                    f"mesh['{name}']: markers must be integers that fit in 32 bits "
                    f"(Triangle keeps them in an int)"
                )
            # int32 (they fit) for Triangle; an int32 array (Triangle's) is kept for the
            # device path, which converts it there; otherwise int64, as before
            if index_dtype is np.int32 or (index_dtype is None and raw.dtype == np.int32):
                out[name] = raw.astype(np.int32, copy=False)
            else:
                out[name] = raw.astype(np.int64)
    if "segments" in out and len(out["segments"]):
        s = out["segments"]
        if np.any(s[:, 0] == s[:, 1]):
            raise ValueError("mesh['segments']: a segment joins a vertex to itself")
    if "segment_markers" in out and len(out["segment_markers"]) != len(out.get("segments", [])):
        raise ValueError("mesh['segment_markers']: one marker per segment expected")
    if "vertex_markers" in out and len(out["vertex_markers"]) != len(v):
        raise ValueError("mesh['vertex_markers']: one marker per vertex expected")
    if mesh.get("vertex_attributes") is not None:
        # Checked here, not only where they are interpolated: a short array reached Qhull
        # (QhullError, "not enough points") on our path and failed Triangle unnamed.
        attributes = _host(mesh["vertex_attributes"], "vertex_attributes", np.float64, None)
        if attributes.ndim not in (1, 2) or len(attributes) != len(v):
            raise ValueError(
                f"mesh['vertex_attributes']: one row per vertex expected ({len(v)} "
                f"vertices), got shape {attributes.shape}")
    if mesh.get("regions") is not None:
        out["regions"] = _host(mesh["regions"], "regions", np.float64, 4)
        if not np.all(np.isfinite(out["regions"])):
            raise ValueError("mesh['regions']: values must be finite (found NaN or inf)")
    return out


def _fits_int32(dtype: np.dtype) -> bool:
    """Every value of an integer (or bool) dtype fits in 32 signed bits."""
    return dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 4) or (
        dtype.kind == "i" and dtype.itemsize == 4)


def _out_of_range(indices: np.ndarray, n: int) -> bool:
    """Any index outside [0, n)? Integers in one pass: viewed as unsigned, a negative
    one is larger than any n; floats by their minimum and maximum."""
    if indices.dtype.kind in "iu":
        unsigned = indices.view(np.dtype(f"u{indices.dtype.itemsize}"))
        return int(unsigned.max()) >= n
    return bool(indices.min() < 0 or indices.max() >= n)


# Coordinates Triangle (and our predicates) handle: products of a few coordinate
# differences must neither underflow nor overflow a double. Triangle segfaults on a
# domain 1e-200 wide; these bounds leave a wide margin on both sides.
MAX_COORDINATE = 1e75
MIN_EXTENT = 1e-75


# The first points the cheap tests look at before any pass over the whole array.
HEAD_POINTS = 64


def _check_scale(v: Any, name: str) -> None:
    """Finite coordinates of a supported magnitude and extent. Finiteness and magnitude:
    on the device one min and one max pass (device_reduce.min_max: NaN shows in both);
    on the host one BLAS pass first, the sum of squares, which is finite and small
    exactly when no coordinate is NaN, infinite or large (a quarter of the bound squared:
    far beyond the sum's rounding); min and max name the problem otherwise. The extent
    (the larger of the columns' spans) is at least any coordinate difference among the
    first points, which nearly always settles it, else per column. Issue 19: right after
    a Triangle run, at 5k points, one pass cost 35 us, min and max 70 us and the four
    strided passes with their small NumPy steps about 100 us, most of what
    ``device="auto"`` added to Triangle at 10k triangles."""
    if not backend.is_cupy_array(v):
        flat = v.reshape(-1)
        with np.errstate(over="ignore", invalid="ignore"):  # inf and NaN answer below
            squares = float(np.dot(flat, flat))
        if squares <= MAX_COORDINATE * MAX_COORDINATE / 4:
            lo = hi = 0.0  # the magnitude is fine: only the extent below is left
        else:
            lo, hi = device_reduce.min_max(v)
    else:
        lo, hi = device_reduce.min_max(v)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"mesh['{name}']: coordinates must be finite (found NaN or inf)")
    top = max(-lo, hi)
    if top > MAX_COORDINATE:
        raise ValueError(
            f"mesh['{name}']: coordinates up to {top:.3g} in magnitude; at most "
            f"{MAX_COORDINATE:g} are supported (scale the input)"
        )
    head = backend.to_host(v[:HEAD_POINTS]).tolist()  # plain floats: no NumPy set-up
    x0, y0 = head[0]
    if any(abs(x - x0) >= MIN_EXTENT or abs(y - y0) >= MIN_EXTENT for x, y in head):
        return
    # per column: NumPy's min(axis=0) over an n×2 array is about 25x slower than these
    (x_lo, x_hi), (y_lo, y_hi) = device_reduce.min_max(v[:, 0]), device_reduce.min_max(v[:, 1])
    extent = max(x_hi - x_lo, y_hi - y_lo)
    if 0 < extent < MIN_EXTENT:
        raise ValueError(
            f"mesh['{name}']: the vertices span only {extent:.3g}; at least {MIN_EXTENT:g} "
            f"is supported (tiny or denormal extents break the geometric predicates: scale "
            f"the input)"
        )


def _all_collinear(v: np.ndarray) -> bool:
    """Exactly: do all points lie on one line (Triangle crashes on such input)?"""
    from .predicates import ORIENT_BOUND, orient2d_signs  # noqa: PLC0415

    # The first points nearly always answer, in plain floats (the same IEEE double steps
    # as the array code below: 58 us of NumPy calls on 64 points, issue 19), where the
    # passes over the whole array cost 13 ms at 1M points.
    head = v[:HEAD_POINTS].tolist()
    (ax, ay) = head[0]
    bx, by = next(((x, y) for x, y in head if x != ax or y != ay), (ax, ay))
    if (bx, by) != (ax, ay):
        for x, y in head:
            left, right = (ax - x) * (by - y), (ay - y) * (bx - x)
            if abs(left - right) > ORIENT_BOUND * (abs(left) + abs(right)):
                return False
    differs = (v[:, 0] != v[0, 0]) | (v[:, 1] != v[0, 1])
    if not differs.any():
        return True
    a, b = v[0], v[int(np.argmax(differs))]
    # the float filter: any point it puts clearly off the line answers (the usual case);
    # exact signs only where it cannot decide
    x, y = v[:, 0], v[:, 1]
    left = (a[0] - x) * (b[1] - y)
    right = (a[1] - y) * (b[0] - x)
    if np.any(np.abs(left - right) > ORIENT_BOUND * (np.abs(left) + np.abs(right))):
        return False
    ones = np.ones(len(v))
    return not orient2d_signs(a[0] * ones, a[1] * ones, b[0] * ones, b[1] * ones,
                              x, y).any()


def initial_triangulation(pslg: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Constrained Delaunay triangulation of a PSLG by Triangle (holes removed)."""
    triangle = _triangle_module()
    if _all_collinear(pslg["vertices"]):
        raise ValueError("mesh: all vertices are collinear (or equal): there is no area to mesh")
    has_segments = "segments" in pslg and len(pslg["segments"])
    # Empty holes or regions are left out: Triangle's wrapper reads past an empty list
    # ("Out of bounds on buffer access"), which refused a PSLG with holes=zeros((0, 2)).
    src = {k: v for k, v in pslg.items()
           if k != "triangles" and not (k in ("holes", "regions") and len(v) == 0)}
    if "segments" in src:
        src["segments"] = src["segments"].astype(np.int32)
    for name in ("vertex_markers", "segment_markers"):
        if name in src:
            src[name] = src[name].astype(np.int32).reshape(-1, 1)
    opts = "pQ" if has_segments else "cQ"
    try:
        out = triangle.triangulate(src, opts)
    except (RuntimeError, IndexError) as exc:  # IndexError: the wrapper's output buffers
        raise ValueError(
            f"mesh: Triangle could not triangulate the input ({type(exc).__name__}: {exc})"
        ) from exc
    if "triangles" not in out or len(out["triangles"]) == 0:
        raise ValueError(
            "mesh: the input has no area to mesh (collinear points, or segments that do not "
            "enclose a region)"
        )
    return out


def _checked_on_device(m: dict[str, np.ndarray]) -> dict[str, Any]:
    """``m`` (validated with ``values=False``) with its big arrays on the device, moved
    through the pinned ring (morphgpu.transfer), and the value checks ``_validated`` left
    out made there: the vertices' scale (device_reduce.min_max per column, as on the
    host) and the triangles' index range. Issue 19: at 2M triangles these passes took
    13 ms on the H100's host, the uploads most of the 14 ms of building the mesh."""
    from .. import transfer  # noqa: PLC0415

    names = [k for k in ("vertices", "triangles", "vertex_markers") if k in m]
    dev = dict(zip(names, transfer.to_device_many([m[k] for k in names])))
    _check_scale(dev["vertices"], "vertices")
    tri, n = dev.get("triangles"), len(dev["vertices"])
    if tri is not None and len(tri) and device_reduce.any_true((tri < 0) | (tri >= n)):
        raise ValueError(f"mesh['triangles']: indices must be integers in [0, {n})")
    return {**m, **dev}


def _to_mesh(m: dict[str, np.ndarray], side: str) -> Mesh:
    # mesh_from_arrays moves the arrays to ``side`` and rejects zero-area triangles while
    # it orients them
    if side == "gpu":
        m = _checked_on_device(m)
    mesh = mesh_from_arrays(
        m["vertices"], m["triangles"], m.get("segments"), m.get("segment_markers"),
        m.get("vertex_markers"), m.get("holes"), side=side,
    )
    if "regions" in m:
        mesh.extra["regions"] = m["regions"]
    return mesh


def _morton_layout(mesh: Mesh, among: Any = None) -> Mesh:
    """Triangles in Morton order of their centroids, so cavities stay in one thread's range.
    ``among``: the slots to keep (the others are dropped, neighbours across to them -1)."""
    tri = mesh.tri if among is None else mesh.tri[among]
    t = [tri[:, i] for i in range(3)]  # element-wise (no CuPy mean: a reduction)
    cx = (mesh.x[t[0]] + mesh.x[t[1]] + mesh.x[t[2]]) / 3
    cy = (mesh.y[t[0]] + mesh.y[t[1]] + mesh.y[t[2]]) / 3
    order = morton_order(cx, cy)
    return permute_triangles(mesh, order if among is None else among[order])


def prepare(mesh: dict[str, Any], side: str = "cpu",
            parts: dict[str, float] | None = None) -> tuple[Mesh, dict[str, np.ndarray]]:
    """(our mesh, built on ``side``; the triangulated input, on the host) from a user's dict.

    For ``side="gpu"`` the index arrays keep their integer dtype on the host (Triangle's
    int32: half the bytes to copy) and become int64 on the device, and the checks of the
    big arrays' values run there (:func:`_checked_on_device`). ``parts``: receives the
    seconds of each step (validate, triangulate, mesh), the device synchronised at the
    end of each.
    """
    t0 = time.perf_counter()
    gpu = side == "gpu"
    fallback = None  # why the GPU's constrained triangulation left the input to Triangle
    src = _validated(mesh, None if gpu else np.int64, values=not gpu)
    t1 = time.perf_counter()
    if "triangles" not in src or len(src["triangles"]) == 0:
        if gpu:
            built = _cdt_on_gpu(src)  # checks the scale where it does not return None
            if built is None:
                _check_scale(src["vertices"], "vertices")  # before Triangle sees them
            if isinstance(built, str):
                fallback = built
            elif built is not None:
                t2 = time.perf_counter()
                if parts is not None:
                    backend.synchronize()
                    parts.update(validate=t1 - t0, triangulate=t2 - t1, mesh=0.0)
                return built
        tri_out = initial_triangulation(src)
        src = {**src, **{k: np.asarray(v) for k, v in tri_out.items()}}
        for name in ("triangles", "segments"):
            if name in src and side == "cpu":
                src[name] = src[name].astype(np.int64)
        for name in ("vertex_markers", "segment_markers"):
            if name in src:  # Triangle's int32 stays for the device, which converts it
                src[name] = src[name].astype(np.int32 if gpu else np.int64).ravel()
    t2 = time.perf_counter()
    ours = _to_mesh(src, side)
    if fallback is not None:
        ours.extra["cdt"] = {"engine": "triangle", "reason": fallback}
    if parts is not None:
        backend.synchronize()
        parts.update(validate=t1 - t0, triangulate=t2 - t1,
                     mesh=time.perf_counter() - t2)
    return ours, src


def _cdt_on_gpu(src: dict[str, np.ndarray]) -> tuple[Mesh, dict[str, np.ndarray]] | str | None:
    """A PSLG's constrained triangulation on the GPU (cdt.py: Triangle triangulates the
    segment vertices, the device inserts the others), as our mesh, already in the Morton
    layout (``extra['morton_layout']``), with ``src`` completed as Triangle's output would
    (segments, markers); None where Triangle is to triangulate the whole input: no
    segments (Triangle's convex hull, ``-c``), collinear input (its error); a string, why,
    for an input the insertion does not handle (:class:`cdt.Unsupported`: logged, and
    named in the statistics' ``cdt``). Checks the vertices' scale (on the device) where
    it does not return None."""
    from . import cdt, cdt_gpu  # noqa: PLC0415

    if "segments" not in src or not len(src["segments"]):
        return None
    from .. import transfer  # noqa: PLC0415

    t0 = time.perf_counter()
    parts: dict[str, float] = {}
    (vertices,) = transfer.to_device_many([src["vertices"]])
    # the whole array's scale on the device (one min and one max pass), before Triangle
    # sees any vertex (issue 19: the host's pass took milliseconds at millions of points)
    _check_scale(vertices, "vertices")
    if _all_collinear(src["vertices"]):
        return None
    x, y = vertices[:, 0].copy(), vertices[:, 1].copy()
    backend.synchronize()
    parts["upload"] = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        base = cdt.segment_vertex_cdt(src, _triangle_module())
        parts["segment_cdt"] = time.perf_counter() - t1
        tri, nbr, seg, kept, stats = cdt_gpu.insert_gpu(base, x, y)
    except cdt.Unsupported as exc:
        log.info("morphgpu.dmr.refine: the constrained triangulation on the GPU does not "
                 "handle this input (%s): Triangle triangulates all of it", exc)
        return str(exc)
    t2 = time.perf_counter()
    cp = backend.cupy_module()
    # the vertex markers: the input's (0 if none), -p's on the segment vertices
    vm_in = base.input_vertex_markers
    vm = (cp.zeros(len(x), dtype=cp.int64) if vm_in is None
          else transfer.to_device_many([np.asarray(vm_in).ravel()])[0].astype(cp.int64))
    vm[cp.asarray(base.segment_vertices)] = cp.asarray(base.segment_vertex_markers,
                                                       dtype=cp.int64)
    holes = src.get("holes")
    # The insertion's own slots, not a rebuild from the triangles (mesh_from_arrays: an
    # orientation pass, a sort of every half-edge for the neighbours, a search for the
    # segment codes): the fans are counter-clockwise by the exact signs that built them,
    # their neighbours and segment codes are kept by every round, and the domain's
    # boundary is made of -p's segments, so dropping the outside slots leaves -1 exactly
    # where the domain ends. One permutation keeps the domain's slots, in the Morton
    # order the refinement wants.
    holes = np.zeros((0, 2)) if holes is None else np.asarray(holes, np.float64).reshape(-1, 2)
    grown = Mesh(x, y, tri, nbr, seg, vm, base.table, holes)
    mesh = _morton_layout(grown, kept)
    mesh.extra["morton_layout"] = True
    if "regions" in src:
        mesh.extra["regions"] = src["regions"]
    backend.synchronize()
    parts["mesh"] = time.perf_counter() - t2
    stats["parts"] = {**parts, **stats.get("parts", {})}
    stats["seconds_with_segment_cdt"] = time.perf_counter() - t0
    mesh.extra["cdt"] = stats
    done = {**src, "segments": base.segments, "segment_markers": base.segment_markers,
            "vertex_markers": base.vertex_markers}
    return mesh, done


def _real(value: Any, name: str, expected: str) -> float:
    """A real number as a float (NaN passes: the callers' range checks refuse it)."""
    return arguments.real(value, name, allow_nan=True,
                          message="{name}: expected " + expected + ", got {value!r}")


# Host bytes a refined triangle costs at least (three vertex ids, three neighbours, flags,
# and its share of the vertex coordinates).
BYTES_PER_TRIANGLE = 48


def _check_output_size(src: dict[str, np.ndarray], max_area: float,
                       area: float | None = None) -> None:
    """Refuse, before the first round, an area bound whose mesh cannot fit in memory.

    Every output triangle has area at most ``max_area``, so the output has at least
    (domain area) / max_area triangles. ``area``: the domain's, where the caller has it
    (:func:`_mesh_area`, on the mesh's side); else it is summed from ``src``.
    """
    if area is None:
        area = _domain_area(src["vertices"], src["triangles"])
    estimate = area / max_area
    needed = estimate * BYTES_PER_TRIANGLE if estimate > 2**60 else (
        int(estimate) * BYTES_PER_TRIANGLE
    )
    check_declared_size(
        f"max_area={max_area:g}",
        f"a refined mesh of at least {estimate:.3g} triangles (the domain's area is "
        f"{area:.6g})", needed, ValueError, verb="asks for",
    )


# The shortest input edge must be at least this share of the extent: a double holds about
# 16 digits, and refinement needs room below the smallest feature to place its points
# (Steiner points at 1e18 are spaced 128 apart, so features of size 1 cannot be resolved).
MIN_FEATURE_RATIO = 2.0**-40


def _corners(mesh: Mesh) -> tuple[list[Any], list[Any]]:
    """([xa, xb, xc], [ya, yb, yc]): the corners' coordinates per triangle, 1-D gathers on
    the mesh's side (no n×3×2 copies)."""
    t = [mesh.tri[:, i] for i in range(3)]
    return [mesh.x[c] for c in t], [mesh.y[c] for c in t]


def _mesh_area(mesh: Mesh) -> float:
    """The domain's area (the triangles' total) on the mesh's side; the per-triangle
    areas are summed on the host (one n-element copy from the device, no CuPy reduction:
    issue 19)."""
    (xa, xb, xc), (ya, yb, yc) = _corners(mesh)
    twice = (xb - xa) * (yc - ya) - (yb - ya) * (xc - xa)
    return float(np.abs(backend.to_host(twice)).sum() / 2)


def _check_resolution(mesh: Mesh) -> None:
    """The shortest edge against the extent, on the mesh's side: squared lengths (no
    square root over every edge) and device_reduce's min/max (one build on the GPU). The
    numbers of the message are recomputed in full where it fails."""
    (xa, xb, xc), (ya, yb, yc) = _corners(mesh)
    xp = backend.array_module(xa)
    length2 = [(p - q) * (p - q) + (u - w) * (u - w)
               for p, q, u, w in ((xb, xa, yb, ya), (xc, xb, yc, yb), (xa, xc, ya, yc))]
    shortest2 = device_reduce.min_max(xp.minimum(xp.minimum(length2[0], length2[1]),
                                                 length2[2]))[0]
    xlo, xhi = device_reduce.min_max(mesh.x)
    ylo, yhi = device_reduce.min_max(mesh.y)
    extent = max(xhi - xlo, yhi - ylo)
    limit = extent * MIN_FEATURE_RATIO
    if shortest2 >= limit * limit and shortest2 > 0:
        return
    # the failing case (or a squared length that underflowed): lengths in full on the
    # host, by hypot (no underflow: the message names the real length)
    x, y, tri = (backend.to_host(a) for a in (mesh.x, mesh.y, mesh.tri))
    nxt = np.roll(tri, -1, axis=1)
    shortest = float(np.hypot(x[nxt] - x[tri], y[nxt] - y[tri]).min())
    if shortest < extent * MIN_FEATURE_RATIO:
        raise ValueError(
            f"mesh['vertices']: the shortest edge ({shortest:.3g}) is {shortest / extent:.3g} "
            f"of the extent ({extent:.3g}); refinement needs at least {MIN_FEATURE_RATIO:.3g} "
            f"(double precision cannot place points finer than that across the domain)"
        )


# Above TERMINATION_ANGLE a refinement that does not converge grows its mesh without end
# (random_mesh(300) at 34.5°: 5e5 triangles after 500 rounds, 30 s on the CPU, and growing
# threefold every hundred rounds), which the memory guard alone stops only after hours on a
# large host. Converging runs there end near the estimate (about 2x it at 34°), so a mesh
# DIVERGENCE_FACTOR times the estimate, and past DIVERGENCE_FLOOR triangles, is taken as
# not converging. The floor is for thin domains, which the estimate does not see: a 1 x 0.01
# rectangle at 34° ends at 192 triangles, 5.7x its estimate, and that ratio grows with the
# aspect ratio; a diverging run on the CPU passes 1e5 triangles within seconds.
DIVERGENCE_FACTOR = 20
DIVERGENCE_FLOOR = 100_000


def _memory_guard(progress: Callable[[dict], None] | None,
                  most_triangles: float = float("inf"),
                  min_angle: float | None = None) -> Callable[[dict], None]:
    """A progress callback that stops a refinement before its mesh outgrows host memory.

    The area bound is checked upfront (_check_output_size); this bounds the rest (tiny
    input angles, extreme aspect ratios), where no estimate is known: the growing arrays
    double, so the mesh may use a quarter of what is available. ``most_triangles``: a
    mesh larger than this is taken as a refinement above ``TERMINATION_ANGLE`` that does
    not converge (see DIVERGENCE_FACTOR), and stopped.
    """
    def most(available: int | None) -> float:
        return float("inf") if available is None else available / (4 * BYTES_PER_TRIANGLE)

    limit = most(backend.host_available_bytes())  # re-read only when reached: a round on
    # the GPU costs about as much as reading /proc/meminfo

    def guard(info: dict) -> None:
        nonlocal limit
        if progress is not None:
            progress(info)
        if int(info.get("triangles", 0)) > most_triangles:
            raise RuntimeError(
                f"dmr.refine: min_angle={min_angle} is above {TERMINATION_ANGLE}°, where "
                f"refinement need not terminate, and the mesh has grown to "
                f"{info['triangles']} triangles after {info['round'] + 1} rounds "
                f"(more than {most_triangles:.0f}, {DIVERGENCE_FACTOR}x the estimate or "
                f"{DIVERGENCE_FLOOR}) with {info.get('bad', '?')} bad triangles left: it is "
                f"not converging, stopped"
            )
        if int(info.get("triangles", 0)) <= limit:
            return
        available = backend.host_available_bytes()
        limit = most(available)
        if available is not None and int(info["triangles"]) > limit:
            raise RuntimeError(
                f"dmr.refine: the mesh has grown to {info['triangles']} triangles after "
                f"{info['round'] + 1} rounds with {info.get('bad', '?')} bad triangles left; "
                f"growing further would exceed the {available / 2**30:.2f} GiB of host "
                f"memory available (small input angles or an extreme aspect ratio make the "
                f"refined mesh very large): stopped"
            )

    return guard


def _domain_area(vertices: np.ndarray, triangles: np.ndarray) -> float:
    x, y = vertices[:, 0], vertices[:, 1]
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    ax, ay = x[a], y[a]
    twice = (x[b] - ax) * (y[c] - ay) - (y[b] - ay) * (x[c] - ax)
    return float(np.abs(twice).sum() / 2)


def estimate_output_triangles(src: dict[str, np.ndarray], min_angle: float,
                              max_area: float | None, *, at_least: float = float("inf"),
                              ) -> float:
    """About how many triangles refining ``src`` (validated, as ``_validated`` returns)
    gives: the input's triangles (about twice the vertices for a PSLG) times the angle's
    growth (``_ANGLE_GROWTH``), or the domain's area over ``max_area`` times
    ``_AREA_GROWTH``, whichever is more. Once the angle term reaches ``at_least`` the area
    is not computed (a PSLG's needs its constrained triangulation)."""
    tri = src.get("triangles")
    n_in = len(tri) if tri is not None and len(tri) else 2 * len(src["vertices"])
    estimate = _angle_growth(float(min_angle)) * n_in
    if max_area is None or estimate >= at_least:
        return estimate
    if tri is None or not len(tri):
        plain = initial_triangulation(src)
        vertices = np.asarray(plain["vertices"], dtype=np.float64)
        tri = np.asarray(plain["triangles"], dtype=np.int64)
    else:
        vertices = src["vertices"]
    return max(estimate, _AREA_GROWTH * _domain_area(vertices, tri) / float(max_area))


def _auto_on_gpu(mesh: dict[str, Any], min_angle: float, max_area: float | None) -> str:
    """Under device="auto" with a GPU: "gpu", or "triangle" for an input too small for the
    GPU to pay (AUTO_GPU_MIN_TRIANGLES). Decided from the input's sizes alone, so the
    Triangle side costs nothing before Triangle's own call (which validates what it is
    handed, issue 19): the input's triangles (twice its vertices for a PSLG) times the
    angle's growth, and with ``max_area`` the vertices' bounding box over it (at least the
    domain's area, so a large area term is not missed; a domain with holes may be sent to
    the GPU a little early). Malformed input goes on to the GPU path, whose checks name
    the problem."""
    if float(min_angle) > TERMINATION_ANGLE:
        return "gpu"  # Triangle may not terminate; ours stops after a bound on rounds
    try:
        given = mesh.get("triangles")
        vertices = mesh["vertices"]
        n_in = len(given) if given is not None and len(given) else 2 * len(vertices)
        estimate = _angle_growth(float(min_angle)) * n_in
        if estimate < AUTO_GPU_MIN_TRIANGLES and max_area is not None:
            v = np.asarray(backend.to_host(vertices), dtype=np.float64)
            x, y = v[:, 0], v[:, 1]
            box = float((x.max() - x.min()) * (y.max() - y.min()))
            if not box < float("inf"):  # NaN or inf: the checks will say which
                return "gpu"
            estimate = max(estimate, _AREA_GROWTH * box / float(max_area))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
        return "gpu"
    if estimate >= AUTO_GPU_MIN_TRIANGLES:
        return "gpu"
    log.info("morphgpu.dmr.refine: about %d output triangles expected, below "
             "AUTO_GPU_MIN_TRIANGLES=%d: Triangle on the CPU (device='auto')",
             int(estimate), AUTO_GPU_MIN_TRIANGLES)
    return "triangle"


# Devices whose GPU path has been warmed up in this process (warm_up_gpu).
_warmed: set[int] = set()


def _warm_up_inputs() -> list[tuple[dict[str, np.ndarray], float | None]]:
    """Small fixed inputs that between them take every data-dependent branch of the GPU
    path that runs CuPy kernels: a PSLG with a hole and markers (Triangle's constrained
    triangulation, segment codes matched on the device, refinement with growth, output
    built on the device) and a triangle list with a clockwise triangle (orient_ccw's swap)
    on a grid (cocircular corners: uncertain in-circle signs, stuck triangles, the host
    finish)."""
    rng = np.random.default_rng(19)
    box = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [.4, .4], [.6, .4], [.6, .6], [.4, .6]])
    pslg = {
        "vertices": np.concatenate([box, rng.random((60, 2)) * [1, 0.35]]),
        "segments": np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]),
        "segment_markers": np.array([1, 2, 1, 2, 3, 3, 3, 3]),
        "holes": np.array([[0.5, 0.5]]),
    }
    k = 6
    g = np.linspace(0.0, 1.0, k + 1)
    vertices = np.stack(np.meshgrid(g, g), axis=-1).reshape(-1, 2)
    cells = [(j * (k + 1) + i, j * (k + 1) + i + 1, (j + 1) * (k + 1) + i + 1,
              (j + 1) * (k + 1) + i) for j in range(k) for i in range(k)]
    tris = np.array([t for a, b, c, d in cells for t in ((a, b, c), (a, c, d))])
    tris[0] = tris[0][::-1]  # clockwise
    grid = {"vertices": vertices, "triangles": tris}
    # and one past CuPy's size thresholds: its scans (nonzero, boolean indexing) add a
    # kernel past 512 elements, its CUB reductions pick their block size up to 2048
    # (issue 19); every array of this one is larger
    return [(pslg, 0.002), (grid, 0.5 / (2 * k * k)), (random_mesh(1500, seed=19), None)]


def warm_up_gpu() -> float:
    """Load, once per device and process, everything the GPU path can compile: every
    kernel build (gpu.build_variants, through a refinement) and the CuPy kernels of each
    data-dependent branch (``_warm_up_inputs``, and the exact fix-up of uncertain
    orientation signs). Issue 19: a later input must not compile (the first refinement of
    a clustered mesh after a uniform one took 5.9 s instead of 0.55 s). Returns the
    seconds it took (0 once done)."""
    cp = backend.cupy_module()
    device = backend.current_device_id()
    if device in _warmed:
        return 0.0
    _warmed.add(device)  # first: the refinements below come through _refine_ours
    t0 = time.perf_counter()
    try:
        from .. import transfer  # noqa: PLC0415
        from .predicates import orient2d_signs  # noqa: PLC0415

        device_reduce.warm_up()  # the floor's reductions (one build, issue 19)
        transfer.warm_up()  # the pinned ring and its threads (allocated once)
        # CuPy's scans (nonzero/flatnonzero, boolean indexing, cumsum) add a block-sum
        # kernel (cupy_bsum_shfl) for arrays past 512 elements, one build per (input,
        # output) dtype, and scan the 512-element blocks' sums with the same code: an
        # int32 -> int32 block sum only runs for arrays past 512 * 512 elements. On an
        # H100 that build was the one compile left on a new input of 200 k points after a
        # warm-up over 4096 elements, so the flags here pass 2^18.
        flags = cp.arange(1 << 19, dtype=cp.int64) % 3 == 0
        cp.flatnonzero(flags)
        cp.nonzero(flags)
        cp.cumsum(cp.ones(1 << 19, dtype=cp.int32), dtype=cp.int32)
        cp.cumsum(cp.ones(1 << 19, dtype=cp.int64))

        # (0,0), (1,1), (2,2): collinear, so the float filter cannot decide
        pts = [cp.asarray([0.0, 0.0, 3.0]), cp.asarray([0.0, 0.0, 0.0])]
        orient2d_signs(pts[0], pts[1], pts[0] + 1, pts[1] + 1, pts[0] + 2, pts[1] + 2)
        for mesh, max_area in _warm_up_inputs():
            _refine_ours(mesh, 30.0, max_area, "gpu", None)
    except BaseException:
        _warmed.discard(device)
        raise
    return time.perf_counter() - t0


def refine_with_stats(
    mesh: dict[str, Any], *, min_angle: float = 30.0, max_area: float | None = None,
    device: str = "auto", progress: Callable[[dict], None] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`refine`, plus statistics: rounds, refinements, abort ratio, times."""
    min_angle = _real(min_angle, "min_angle", "a number of degrees in (0, 60)")
    if max_area is not None:
        max_area = _real(max_area, "max_area", "a positive number or None")
    if not (0.0 < float(min_angle) < 60.0):
        raise ValueError(f"min_angle: must be in (0, 60) degrees, got {min_angle}")
    if float(min_angle) > TERMINATION_ANGLE:
        warnings.warn(
            f"min_angle={min_angle} is above {TERMINATION_ANGLE}°: refinement is not "
            "guaranteed to terminate (after a bounded number of rounds it raises "
            "RuntimeError)",
            stacklevel=2,
        )
    if max_area is not None and not float(max_area) > 0:
        raise ValueError(f"max_area: must be positive, got {max_area}")
    side = backend.resolve_device(device, who="morphgpu.dmr.refine")
    per_triangle = mesh.get("triangle_max_area") if isinstance(mesh, dict) else None
    if per_triangle is not None and device != "auto":
        raise ValueError(
            "mesh['triangle_max_area']: per-triangle area limits (Triangle's -r -a, .area "
            f"files) run through Triangle, with device='auto' (got device={device!r})")
    # Triangle carries triangle_attributes (-r) into the triangles it splits; ours drops them
    attributed = isinstance(mesh, dict) and mesh.get("triangle_attributes") is not None
    if (device == "auto" and (side == "cpu" or per_triangle is not None or attributed)
            and float(min_angle) <= TERMINATION_ANGLE):
        return refine_by_triangle(mesh, min_angle=float(min_angle), max_area=max_area)
    if device == "auto" and side == "gpu" and _auto_on_gpu(mesh, min_angle, max_area) != "gpu":
        out, stats = refine_by_triangle(mesh, min_angle=float(min_angle), max_area=max_area)
        stats["auto"] = (f"Triangle: fewer than AUTO_GPU_MIN_TRIANGLES="
                         f"{AUTO_GPU_MIN_TRIANGLES} output triangles expected")
        return out, stats
    return _refine_ours(mesh, float(min_angle), max_area, side, progress)


def _refine_ours(mesh: dict[str, Any], min_angle: float, max_area: float | None, side: str,
                 progress: Callable[[dict], None] | None) -> tuple[dict[str, Any], dict]:
    """Our refinement on ``side`` (arguments checked by refine_with_stats)."""
    if isinstance(mesh, dict) and mesh.get("triangle_attributes") is not None:
        raise ValueError("mesh['triangle_attributes']: carried through refinement only by "
                         "Triangle, with device='auto'")
    warm_up_seconds = warm_up_gpu() if side == "gpu" else 0.0
    out_side = backend.side_of(mesh.get("vertices") if isinstance(mesh, dict) else None)
    t0 = time.perf_counter()
    parts: dict[str, float] = {}
    ours, src = prepare(mesh, side, parts)
    cdt_stats = ours.extra.pop("cdt", None)  # the GPU's constrained triangulation, or why not
    tc = time.perf_counter()
    _check_resolution(ours)  # both on the mesh's side: the device's for side == "gpu"
    if max_area is not None:
        _check_output_size(src, float(max_area), area=_mesh_area(ours))
    most = float("inf")
    if min_angle > TERMINATION_ANGLE:
        most = max(DIVERGENCE_FACTOR * estimate_output_triangles(src, min_angle, max_area),
                   DIVERGENCE_FLOOR)
    progress = _memory_guard(progress, most, min_angle)
    tl = time.perf_counter()
    if not ours.extra.pop("morton_layout", False):  # the GPU's CDT builds it laid out
        ours = _morton_layout(ours)
    ours.extra["n_input"] = ours.n_vertices  # for concentric-shell segment splitting
    backend.synchronize()
    t1 = time.perf_counter()
    parts.update(checks=tl - tc, layout=t1 - tl)
    if side == "gpu":
        from .gpu import refine_gpu  # noqa: PLC0415

        refined, stats = refine_gpu(ours, float(min_angle), max_area, progress=progress)
    else:
        from .cpu import refine_cpu  # noqa: PLC0415

        refined, stats = refine_cpu(ours, float(min_angle), max_area, progress=progress)
    stats.update(
        device=backend.device_name(side), prepare_seconds=t1 - t0,
        prepare_parts={k: round(v, 6) for k, v in parts.items()},
        warm_up_seconds=warm_up_seconds,
        total_seconds=time.perf_counter() - t0, triangles_in=ours.n_triangles,
        triangles_out=refined.n_triangles,
    )
    if cdt_stats is not None:
        stats["cdt"] = cdt_stats
    t2 = time.perf_counter()
    result = to_triangle_dict(refined)  # where the refined mesh lives
    if out_side == "gpu":
        result = {k: backend.to_side(v, "gpu") for k, v in result.items()}
    else:
        from .. import transfer  # noqa: PLC0415

        moved = [k for k, v in result.items() if backend.is_cupy_array(v)]
        result.update(zip(moved, transfer.to_host_many([result[k] for k in moved])))
    if isinstance(mesh, dict) and mesh.get("vertex_attributes") is not None:
        attributes = _carried_attributes(
            mesh["vertex_attributes"], src["vertices"], backend.to_host(result["vertices"]))
        result["vertex_attributes"] = backend.to_side(attributes, out_side)  # type: ignore[arg-type]
    stats["output_seconds"] = time.perf_counter() - t2
    return result, stats


def area_switch(max_area: float) -> str:
    """Triangle's ``a`` switch for a fixed area: plain decimals (Triangle reads no exponent)."""
    return "a" + np.format_float_positional(float(max_area), trim="-")


def refine_by_triangle(mesh: dict[str, Any], *, min_angle: float = 30.0,
                       max_area: float | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`refine_with_stats` by Triangle (``-rpq<angle>a<area>``, with ``-a`` for
    per-triangle limits), our input checks first; the output is Triangle's, host side,
    with ``neighbors`` built on first use (:class:`mesh.LazyNeighbors`: Triangle's ``-n``
    cost 5-10% of its run, and plain Triangle, without it, is what this competes with)."""
    triangle = _triangle_module()
    t0 = time.perf_counter()
    # Triangle's dtype: handed on without a copy; Triangle checks int32 triangles' range
    src = _validated(mesh, np.int32, triangle_checks_int32=True)
    tin: dict[str, Any] = {"vertices": src["vertices"]}
    for name, width in (("triangles", 3), ("segments", 2), ("segment_markers", 1),
                        ("vertex_markers", 1)):
        if name in src and len(src[name]):
            tin[name] = src[name].astype(np.int32, copy=False).reshape(-1, width)
    for name in ("holes", "regions"):
        if name in src and len(src[name]):
            tin[name] = src[name]
    for name, width in (("vertex_attributes", None), ("triangle_max_area", 1),
                        ("triangle_attributes", None)):
        if mesh.get(name) is not None:
            arr = _host(mesh[name], name, np.float64, None)
            tin[name] = arr.reshape(len(arr), -1) if width is None else arr.reshape(-1, 1)
    has_triangles = "triangles" in tin
    if "triangle_attributes" in tin and len(tin["triangle_attributes"]) != len(
            tin.get("triangles", ())):
        raise ValueError("mesh['triangle_attributes']: one row per triangle expected")
    if "triangle_max_area" in tin and not has_triangles:
        raise ValueError("mesh['triangle_max_area']: needs mesh['triangles'] (one limit each)")
    if not has_triangles and _all_collinear(src["vertices"]):
        raise ValueError("mesh: all vertices are collinear (or equal): there is no area to mesh")
    opts = ("r" if has_triangles else "") + ("p" if "segments" in tin else "c")
    opts += "q" + np.format_float_positional(min_angle, trim="-")
    if max_area is not None:
        opts += area_switch(max_area)
    if "triangle_max_area" in tin or ("regions" in tin and not has_triangles):
        opts += "a"
    opts += "Q"  # no n: the neighbours are built on first use (mesh.LazyNeighbors)
    if max_area is not None:
        # The same upfront refusal as our own path: an area bound whose mesh cannot fit.
        # Without input triangles, the domain's are Triangle's unrefined mesh of it.
        base = {"vertices": src["vertices"], "triangles": src.get("triangles")}
        if not has_triangles:
            try:
                plain = triangle.triangulate(tin, ("p" if "segments" in tin else "") + "Q")
            except RuntimeError as exc:
                raise ValueError(f"mesh: Triangle could not mesh the input ({exc})") from exc
            base = {"vertices": np.asarray(plain["vertices"], dtype=np.float64),
                    "triangles": np.asarray(plain.get("triangles", np.zeros((0, 3))),
                                            dtype=np.int64).reshape(-1, 3)}
        _check_output_size(base, float(max_area))
    try:
        out = triangle.triangulate(tin, opts)
    except RuntimeError as exc:
        _validated(mesh)  # every check: names the argument where it is one of ours
        raise ValueError(f"mesh: Triangle could not refine the input ({exc})") from exc
    if "triangles" not in out or len(out["triangles"]) == 0:
        raise ValueError("mesh: the input has no area to mesh")
    seconds = time.perf_counter() - t0
    n_in = len(src.get("triangles", ()))
    stats = {"engine": "triangle", "switches": opts, "device": "cpu (Triangle)",
             "rounds": None, "total_seconds": seconds, "triangles_in": n_in,
             "triangles_out": len(out["triangles"])}
    return LazyNeighbors(out), stats


def _carried_attributes(attrs: Any, src_vertices: np.ndarray, out_vertices: np.ndarray,
                        ) -> np.ndarray:
    """Input vertices keep their attributes; later vertices get linear interpolation over
    the input vertices (nearest input vertex where a point falls outside their hull)."""
    from scipy.interpolate import LinearNDInterpolator, NearestNDInterpolator  # noqa: PLC0415

    a = _host(attrs, "vertex_attributes", np.float64, None)
    a = a.reshape(len(a), -1)
    n_in = len(a)
    if n_in > len(src_vertices) or n_in > len(out_vertices):
        raise ValueError("mesh['vertex_attributes']: one row per vertex expected")
    new = out_vertices[n_in:]
    out = np.empty((len(out_vertices), a.shape[1]))
    out[:n_in] = a
    if len(new):
        values = LinearNDInterpolator(src_vertices[:n_in], a)(new)
        missing = np.isnan(values).any(axis=1)
        if missing.any():
            values[missing] = NearestNDInterpolator(src_vertices[:n_in], a)(new[missing])
        out[n_in:] = values
    return out


def refine(
    mesh: dict[str, Any], *, min_angle: float = 30.0, max_area: float | None = None,
    device: str = "auto",
) -> dict[str, Any]:
    """Refine a 2D mesh or PSLG until every triangle's smallest angle is ≥ ``min_angle``
    and its area ≤ ``max_area`` (Triangle's ``-q``/``-a``; Triangle-style dicts in and out).

    The output is a constrained Delaunay triangulation of the same domain: input vertices
    first and unchanged, segments split into output edges (``segments``), holes empty,
    ``neighbors`` as Triangle writes them. As in Triangle, triangles next to input angles
    smaller than ``min_angle`` may keep small angles. Raises ValueError on malformed input,
    RuntimeError when the refinement does not end within its bound on rounds (possible
    above 33.8°, where termination is not guaranteed).
    """
    return refine_with_stats(mesh, min_angle=min_angle, max_area=max_area, device=device)[0]


# The refusals of the generators' integer arguments.
_INTEGER_MESSAGE = "{name}: expected an integer, got {value!r}"
_RANGE_MESSAGE = "{name}: expected an integer in [{low}, {high}], got {value}"


def _point_count(n_points: Any, at_least: int, who: str) -> int:
    """``n_points`` as an int of at least ``at_least``, with the declared-size check of
    the generators (points, Triangle's output and the edges)."""
    n_points = arguments.integer(n_points, "n_points", low=at_least,
                                 message=_INTEGER_MESSAGE,
                                 range_message="{name}: need at least {low}, got {value}")
    check_declared_size(f"{who}: n_points", f"{int(n_points)} points",
                        int(n_points) * 8 * BYTES_PER_TRIANGLE, ValueError, verb="asks for")
    return int(n_points)


def _whole(value: Any, name: str, low: int, high: float = float("inf")) -> int:
    """``value`` as an int in [low, high], or a ValueError naming ``name``."""
    return arguments.integer(value, name, low=low, high=high, message=_INTEGER_MESSAGE,
                             range_message=_RANGE_MESSAGE)


def random_mesh(n_points: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The paper's input: Delaunay triangulation of ``n_points`` uniform random points in
    the unit square with its convex hull as segments (about 2n triangles)."""
    n_points = _point_count(n_points, 3, "random_mesh")
    rng = arguments.generator(seed)
    pts = rng.random((int(n_points), 2))
    triangle = _triangle_module()
    out = triangle.triangulate({"vertices": pts}, "cQ")
    return {
        "vertices": out["vertices"],
        "vertex_markers": out["vertex_markers"],
        "triangles": out["triangles"],
        "segments": out["segments"],
        "segment_markers": out["segment_markers"],
    }


def clustered_mesh(n_points: int, seed: int = 0, clusters: int = 5,
                   spread: float = 0.05) -> dict[str, np.ndarray]:
    """Delaunay triangulation of ``n_points`` points drawn from ``clusters`` Gaussian
    clusters (centres uniform in [0.2, 0.8]², standard deviation ``spread``), with the four
    corners of the unit square added so the domain is that square (convex hull as
    segments). Dense clusters next to nearly empty space: long skinny triangles between
    them, large cavities, a wide range of sizes (issue 19's clustered input)."""
    n_points = _point_count(n_points, 4, "clustered_mesh")
    # More clusters than points only allocates centres (clusters=10**9: 16 GB, then a
    # hang); clusters=0 reached NumPy's "high <= 0". A NaN spread made NaN points, on
    # which Triangle never returns.
    clusters = _whole(clusters, "clusters", 1, n_points)
    spread = arguments.real(spread, "spread", low=0.0, finite=True,
                            message="{name}: expected a finite number >= 0, got {value!r}")
    rng = arguments.generator(seed)
    centres = 0.2 + 0.6 * rng.random((clusters, 2))
    which = rng.integers(0, clusters, int(n_points) - 4)
    pts = np.clip(centres[which] + spread * rng.standard_normal((len(which), 2)), 0.0, 1.0)
    pts = np.concatenate([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], pts])
    pts = np.unique(pts, axis=0)  # clipping can repeat a point on the border
    out = _triangle_module().triangulate({"vertices": pts}, "cQ")
    return {k: out[k] for k in ("vertices", "vertex_markers", "triangles", "segments",
                                "segment_markers")}


def holes_pslg(n_points: int, seed: int = 0, holes: int = 8) -> dict[str, np.ndarray]:
    """A PSLG: the unit square with ``holes`` square holes (disjoint, on a grid with
    random sizes) and about ``n_points`` interior points outside them, for the
    PSLG-with-holes input (no triangles: the refinement triangulates it first)."""
    n_points = _point_count(n_points, 0, "holes_pslg")
    # holes=0 divided by zero below (side 0), -1 took the square root of -1; each hole is
    # 4 vertices and 4 segments built in a Python loop, held to what the host can take.
    holes = _whole(holes, "holes", 0)
    check_declared_size("holes_pslg: holes", f"{holes} holes",
                        holes * 8 * BYTES_PER_TRIANGLE, ValueError, verb="asks for")
    rng = arguments.generator(seed)
    side = max(1, int(np.ceil(np.sqrt(holes))))
    cell = 1.0 / side
    verts = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    segs = [[0, 1], [1, 2], [2, 3], [3, 0]]
    marks = [1, 1, 1, 1]
    centres, halves = [], []
    for h in range(holes):
        cx, cy = (h % side + 0.5) * cell, (h // side + 0.5) * cell
        half = cell * (0.15 + 0.2 * rng.random())
        base = len(verts)
        verts += [[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half],
                  [cx - half, cy + half]]
        segs += [[base + i, base + (i + 1) % 4] for i in range(4)]
        marks += [2 + h] * 4
        centres.append((cx, cy))
        halves.append(half)
    pts = rng.random((max(0, int(n_points)), 2))
    inside = np.zeros(len(pts), dtype=bool)
    for (cx, cy), half in zip(centres, halves):
        inside |= (np.abs(pts[:, 0] - cx) <= half * 1.01) & (np.abs(pts[:, 1] - cy) <= half * 1.01)
    return {
        "vertices": np.concatenate([np.array(verts), pts[~inside]]),
        "segments": np.array(segs, dtype=np.int64),
        "segment_markers": np.array(marks, dtype=np.int64),
        "holes": np.array(centres, dtype=np.float64).reshape(-1, 2),  # (0, 2) for none
    }
