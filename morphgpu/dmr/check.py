"""An independent checker of refined meshes (shares no code with the refinement).

Given Triangle-style output (and optionally the input it came from) it verifies: positive
areas, consistent neighbours recomputed from scratch, a manifold edge structure whose
boundary is made of segments, area preserved, constrained Delaunay (every free interior
edge locally Delaunay, which implies it for the whole mesh), the minimum angle and maximum
area, input segments as unions of output edges, input vertices kept, holes empty.
Signs of the geometric tests are exact: a loose float filter, rational arithmetic beyond.
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Any

import numpy as np

_FILTER = 1e-12  # far looser than the rounding error: anything near zero is redone exactly


def _exact_orient(p, q, r) -> int:
    px, py, qx, qy, rx, ry = (Fraction(float(v)) for v in (*p, *q, *r))
    d = (qx - px) * (ry - py) - (qy - py) * (rx - px)
    return (d > 0) - (d < 0)


def orientation_signs(pts: np.ndarray, tri: np.ndarray) -> np.ndarray:
    p, q, r = pts[tri[:, 0]], pts[tri[:, 1]], pts[tri[:, 2]]
    t1 = (q[:, 0] - p[:, 0]) * (r[:, 1] - p[:, 1])
    t2 = (q[:, 1] - p[:, 1]) * (r[:, 0] - p[:, 0])
    d = t1 - t2
    sign = np.sign(d).astype(np.int64)
    unsure = np.abs(d) <= _FILTER * (np.abs(t1) + np.abs(t2))
    for k in np.nonzero(unsure)[0]:
        sign[k] = _exact_orient(p[k], q[k], r[k])
    return sign


def _exact_incircle(a, b, c, d) -> int:
    rows = []
    for p in (a, b, c):
        px, py = Fraction(float(p[0])) - Fraction(float(d[0])), Fraction(float(p[1])) - Fraction(
            float(d[1])
        )
        rows.append((px, py, px * px + py * py))
    (a0, a1, a2), (b0, b1, b2), (c0, c1, c2) = rows
    det = a0 * (b1 * c2 - b2 * c1) - a1 * (b0 * c2 - b2 * c0) + a2 * (b0 * c1 - b1 * c0)
    return (det > 0) - (det < 0)


def incircle_signs(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Sign of the in-circle determinant (a, b, c counter-clockwise): +1 means d inside."""
    ad, bd, cd = a - d, b - d, c - d
    al, bl, cl = (ad**2).sum(1), (bd**2).sum(1), (cd**2).sum(1)
    m1 = bd[:, 1] * cl - bl * cd[:, 1]
    m2 = bd[:, 0] * cl - bl * cd[:, 0]
    m3 = bd[:, 0] * cd[:, 1] - bd[:, 1] * cd[:, 0]
    det = ad[:, 0] * m1 - ad[:, 1] * m2 + al * m3
    scale = (
        np.abs(ad[:, 0]) * (np.abs(bd[:, 1] * cl) + np.abs(bl * cd[:, 1]))
        + np.abs(ad[:, 1]) * (np.abs(bd[:, 0] * cl) + np.abs(bl * cd[:, 0]))
        + al * (np.abs(bd[:, 0] * cd[:, 1]) + np.abs(bd[:, 1] * cd[:, 0]))
    )
    sign = np.sign(det).astype(np.int64)
    for k in np.nonzero(np.abs(det) <= _FILTER * scale)[0]:
        sign[k] = _exact_incircle(a[k], b[k], c[k], d[k])
    return sign


def triangle_angles_deg(pts: np.ndarray, tri: np.ndarray) -> np.ndarray:
    p = pts[tri]
    out = np.empty((len(tri), 3))
    for k in range(3):
        u = p[:, (k + 1) % 3] - p[:, k]
        v = p[:, (k + 2) % 3] - p[:, k]
        cross = np.abs(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])
        dot = (u * v).sum(1)
        out[:, k] = np.degrees(np.arctan2(cross, dot))
    return out


def small_input_angle_vertices(vertices: np.ndarray, segments: np.ndarray, limit: float) -> set:
    """Input vertices where two input segments meet at an angle below ``limit`` degrees."""
    around: dict[int, list[float]] = defaultdict(list)
    for a, b in segments:
        for u, v in ((a, b), (b, a)):
            d = vertices[v] - vertices[u]
            around[int(u)].append(np.arctan2(d[1], d[0]))
    out = set()
    for v, dirs in around.items():
        if len(dirs) < 2:
            continue
        ang = np.sort(np.asarray(dirs))
        gaps = np.diff(np.concatenate([ang, [ang[0] + 2 * np.pi]]))
        if np.degrees(gaps.min()) < limit:
            out.add(v)
    return out


def _twice_areas(pts: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """Twice each triangle's signed area (positive counter-clockwise)."""
    p = pts[tri]
    return ((p[:, 1, 0] - p[:, 0, 0]) * (p[:, 2, 1] - p[:, 0, 1])
            - (p[:, 1, 1] - p[:, 0, 1]) * (p[:, 2, 0] - p[:, 0, 0]))


def _polygon_area(pts: np.ndarray, tri: np.ndarray) -> float:
    """The output's area, signed: a flipped triangle takes its area off (and is reported
    as flipped besides)."""
    return float(0.5 * np.sum(_twice_areas(pts, tri)))


def _domain_area(pts: np.ndarray, tri: np.ndarray) -> float:
    """The input's area: its triangles in either orientation (the refinement orients a
    clockwise input triangle; its area is the domain's all the same)."""
    return float(0.5 * np.sum(np.abs(_twice_areas(pts, tri))))


def check_mesh(
    out: dict[str, Any], source: dict[str, Any] | None = None, *, min_angle: float | None = None,
    max_area: float | None = None, domain_area: float | None = None,
    small_angle_limit: float = 60.0, check_delaunay: bool = True,
) -> dict[str, Any]:
    """Every property; returns {"ok": bool, "problems": [str], plus figures}."""
    problems: list[str] = []
    pts = np.asarray(out["vertices"], dtype=np.float64)
    tri = np.asarray(out["triangles"], dtype=np.int64)
    segs = np.asarray(out.get("segments", np.zeros((0, 2))), dtype=np.int64).reshape(-1, 2)
    seg_set = {(min(a, b), max(a, b)) for a, b in segs.tolist()}
    figures: dict[str, Any] = {"triangles": len(tri), "vertices": len(pts)}

    if len(tri) == 0:
        return {"ok": False, "problems": ["no triangles"], **figures}
    if tri.min() < 0 or tri.max() >= len(pts):
        return {"ok": False, "problems": ["triangle refers to a missing vertex"], **figures}

    signs = orientation_signs(pts, tri)
    if np.any(signs <= 0):
        problems.append(f"{int(np.sum(signs <= 0))} triangles are not counter-clockwise/positive")

    # Edges from scratch: each directed edge once, each undirected edge at most twice.
    directed: dict[tuple[int, int], tuple[int, int]] = {}
    for t, (a, b, c) in enumerate(tri.tolist()):
        for k, (u, v) in enumerate(((b, c), (c, a), (a, b))):
            if (u, v) in directed:
                problems.append(f"directed edge ({u},{v}) used twice: overlapping triangles")
            directed[(u, v)] = (t, k)
    nbr_given = out.get("neighbors")
    nbr_given = None if nbr_given is None else np.asarray(nbr_given, dtype=np.int64)
    boundary_edges = 0
    locally_checked = []
    for (u, v), (t, k) in directed.items():
        other = directed.get((v, u))
        expect = -1 if other is None else other[0]
        if nbr_given is not None and nbr_given[t, k] != expect:
            problems.append(f"neighbors[{t},{k}] is {nbr_given[t, k]}, expected {expect}")
            if len(problems) > 20:
                break
        if other is None:
            boundary_edges += 1
            if (min(u, v), max(u, v)) not in seg_set:
                problems.append(f"boundary edge ({u},{v}) is not a segment")
        elif t < other[0] and (min(u, v), max(u, v)) not in seg_set:
            locally_checked.append((t, other[0], other[1]))
    figures["boundary_edges"] = boundary_edges

    area = _polygon_area(pts, tri)
    figures["area"] = area
    if domain_area is None and source is not None and "triangles" in source:
        domain_area = _domain_area(
            np.asarray(source["vertices"], float), np.asarray(source["triangles"], np.int64)
        )
    if domain_area is not None and abs(area - domain_area) > 1e-9 * max(1.0, abs(domain_area)):
        problems.append(f"area {area!r} differs from the domain's {domain_area!r}")

    if check_delaunay and locally_checked:
        lc = np.asarray(locally_checked, dtype=np.int64)
        a, b, c = pts[tri[lc[:, 0], 0]], pts[tri[lc[:, 0], 1]], pts[tri[lc[:, 0], 2]]
        d = pts[tri[lc[:, 1], lc[:, 2]]]
        inside = incircle_signs(a, b, c, d) > 0
        figures["non_delaunay_edges"] = int(inside.sum())
        if inside.any():
            problems.append(f"{int(inside.sum())} free edges are not locally Delaunay")

    angles = triangle_angles_deg(pts, tri)
    figures["min_angle"] = float(angles.min())
    if min_angle is not None:
        low = np.nonzero(angles.min(1) < min_angle - 1e-9)[0]
        exempt = set()
        if source is not None and len(low):
            src_segs = np.asarray(source.get("segments", np.zeros((0, 2))), np.int64).reshape(-1, 2)
            src_pts = np.asarray(source["vertices"], float)
            corners = small_input_angle_vertices(src_pts, src_segs, small_angle_limit)
            for t in low:
                if corners.intersection(tri[t].tolist()) or _between_corner_segments(
                    pts, tri[t], src_pts, src_segs, corners
                ):
                    exempt.add(int(t))
        figures["small_angle_triangles"] = len(low)
        figures["exempt_small_angle_triangles"] = len(exempt)
        if len(low) > len(exempt):
            problems.append(
                f"{len(low) - len(exempt)} triangles have an angle below {min_angle}° "
                f"(smallest {angles.min():.3f}°) away from small input angles"
            )
    if max_area is not None:
        areas = 0.5 * np.abs(_twice_areas(pts, tri))
        figures["max_area"] = float(areas.max())
        if areas.max() > max_area * (1 + 1e-9):
            problems.append(f"largest area {areas.max()!r} exceeds {max_area!r}")

    if source is not None:
        src_pts = np.asarray(source["vertices"], float)
        if len(pts) < len(src_pts) or not np.array_equal(pts[: len(src_pts)], src_pts):
            problems.append("input vertices are not kept (first vertices differ)")
        src_segs = np.asarray(source.get("segments", np.zeros((0, 2))), np.int64).reshape(-1, 2)
        used = np.zeros(len(pts), dtype=bool)
        used[tri.ravel()] = True  # duplicate input vertices stay unused, as in Triangle
        problems += _segments_covered(pts, used, seg_set, src_segs, src_pts)
        for h in np.asarray(source.get("holes", np.zeros((0, 2))), float).reshape(-1, 2):
            if _point_in_some_triangle(pts, tri, h):
                problems.append(f"hole point {h.tolist()} lies inside an output triangle")
    return {"ok": not problems, "problems": problems, **figures}


def _segments_through(p: np.ndarray, src_pts: np.ndarray, src_segs: np.ndarray) -> set:
    a, b = src_pts[src_segs[:, 0]], src_pts[src_segs[:, 1]]
    d = b - a
    rel = p - a
    length2 = (d**2).sum(1)
    t = (rel * d).sum(1) / length2
    dist = np.abs(rel[:, 0] * d[:, 1] - rel[:, 1] * d[:, 0]) / np.sqrt(length2)
    return set(np.nonzero((t >= -1e-12) & (t <= 1 + 1e-12) & (dist <= 1e-9 * np.sqrt(length2)))[0])


def _between_corner_segments(pts, corners_of_t, src_pts, src_segs, corners) -> bool:
    """Triangle's exception: the shortest edge runs between two segments that meet at a
    small input angle (the skinny triangles there cannot be removed)."""
    p = pts[corners_of_t]
    lengths = [np.hypot(*(p[(i + 2) % 3] - p[(i + 1) % 3])) for i in range(3)]
    i = int(np.argmin(lengths))
    u, v = p[(i + 1) % 3], p[(i + 2) % 3]
    for su in _segments_through(u, src_pts, src_segs):
        for sv in _segments_through(v, src_pts, src_segs):
            shared = set(src_segs[su].tolist()) & set(src_segs[sv].tolist())
            if su != sv and shared & corners:
                return True
    return False


def _segments_covered(pts, used, seg_set, src_segs, src_pts) -> list[str]:
    problems = []
    for a, b in src_segs.tolist():
        pa, pb = src_pts[a], src_pts[b]
        d = pb - pa
        length2 = float(d @ d)
        rel = pts - pa
        t = rel @ d / length2
        dist = np.abs(rel[:, 0] * d[1] - rel[:, 1] * d[0]) / np.sqrt(length2)
        close = dist < 1e-12 * np.sqrt(length2)
        on = np.nonzero(used & (t > -1e-12) & (t < 1 + 1e-12) & close)[0]
        chain = on[np.argsort(t[on])]
        if len(chain) < 2 or chain[0] != a or chain[-1] != b:
            problems.append(f"segment ({a},{b}) endpoints are not the ends of its chain")
            continue
        for u, v in zip(chain[:-1].tolist(), chain[1:].tolist()):
            if (min(u, v), max(u, v)) not in seg_set:
                problems.append(f"segment ({a},{b}) is not covered: piece ({u},{v}) missing")
                break
    return problems


def _point_in_some_triangle(pts, tri, h) -> bool:
    p = pts[tri]
    inside = np.ones(len(tri), dtype=bool)
    for k in range(3):
        u, v = p[:, (k + 1) % 3], p[:, (k + 2) % 3]
        cross = (v[:, 0] - u[:, 0]) * (h[1] - u[:, 1]) - (v[:, 1] - u[:, 1]) * (h[0] - u[:, 0])
        inside &= cross > 0
    return bool(inside.any())
