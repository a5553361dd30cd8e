"""Robust orientation and in-circle tests for the CPU refinement (float filter, exact fallback).

Shewchuk's observation: the float64 determinant is almost always far from zero, and a
cheap bound on its rounding error tells when its sign can be trusted. Only when the value
lies inside that bound do we recompute exactly; there we use Python's rationals, which
represent every float64 exactly, so the sign is the true sign of the input coordinates.
The bounds are Shewchuk's "errboundA" constants for orient2d and incircle.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .. import backend, device_reduce

_EPS = np.finfo(np.float64).eps / 2  # unit roundoff, 2^-53
ORIENT_BOUND = (3.0 + 16.0 * _EPS) * _EPS
INCIRCLE_BOUND = (10.0 + 96.0 * _EPS) * _EPS


def _orient_exact(ax, ay, bx, by, cx, cy) -> int:
    ax, ay, bx, by, cx, cy = (Fraction(v) for v in (ax, ay, bx, by, cx, cy))
    det = (ax - cx) * (by - cy) - (ay - cy) * (bx - cx)
    return (det > 0) - (det < 0)


def orient2d(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> int:
    """+1 if a, b, c turn counter-clockwise, -1 clockwise, 0 collinear (exact sign)."""
    left = (ax - cx) * (by - cy)
    right = (ay - cy) * (bx - cx)
    det = left - right
    bound = ORIENT_BOUND * (abs(left) + abs(right))
    if det > bound:
        return 1
    if -det > bound:
        return -1
    return _orient_exact(ax, ay, bx, by, cx, cy)


def orient2d_signs(ax: Any, ay: Any, bx: Any, by: Any, cx: Any, cy: Any) -> Any:
    """orient2d over arrays (NumPy or CuPy, one sign per element, int8): the float filter
    for all of them, the exact sign for the few it cannot decide."""
    xp = backend.array_module(ax)
    left = (ax - cx) * (by - cy)
    right = (ay - cy) * (bx - cx)
    det = left - right
    bound = ORIENT_BOUND * (xp.abs(left) + xp.abs(right))
    sign = xp.where(det > bound, 1, xp.where(-det > bound, -1, 0)).astype(xp.int8)
    # counted with device_reduce (CuPy's flatnonzero adds a scan kernel past 512 elements:
    # issue 19); the few unsure ones are listed on the host, where they are decided
    undecided = sign == 0
    if device_reduce.any_true(undecided):
        unsure = np.flatnonzero(backend.to_host(undecided))
        coords = [backend.to_host(v[unsure]) for v in (ax, ay, bx, by, cx, cy)]
        exact = [orient2d(*(float(v[i]) for v in coords)) for i in range(unsure.size)]
        sign[xp.asarray(unsure)] = xp.asarray(exact, dtype=xp.int8)
    return sign


def _incircle_exact(ax, ay, bx, by, cx, cy, dx, dy) -> int:
    ax, ay, bx, by, cx, cy, dx, dy = (Fraction(v) for v in (ax, ay, bx, by, cx, cy, dx, dy))
    adx, ady, bdx, bdy, cdx, cdy = ax - dx, ay - dy, bx - dx, by - dy, cx - dx, cy - dy
    det = (
        (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy)
        + (bdx * bdx + bdy * bdy) * (cdx * ady - adx * cdy)
        + (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady)
    )
    return (det > 0) - (det < 0)


def incircle(
    ax: float, ay: float, bx: float, by: float, cx: float, cy: float, dx: float, dy: float
) -> int:
    """+1 if d is inside the circle through the counter-clockwise a, b, c; 0 on it; -1 out."""
    adx, ady, bdx, bdy, cdx, cdy = ax - dx, ay - dy, bx - dx, by - dy, cx - dx, cy - dy
    bdxcdy, cdxbdy = bdx * cdy, cdx * bdy
    cdxady, adxcdy = cdx * ady, adx * cdy
    adxbdy, bdxady = adx * bdy, bdx * ady
    alift, blift, clift = adx * adx + ady * ady, bdx * bdx + bdy * bdy, cdx * cdx + cdy * cdy
    det = alift * (bdxcdy - cdxbdy) + blift * (cdxady - adxcdy) + clift * (adxbdy - bdxady)
    permanent = (
        (abs(bdxcdy) + abs(cdxbdy)) * alift
        + (abs(cdxady) + abs(adxcdy)) * blift
        + (abs(adxbdy) + abs(bdxady)) * clift
    )
    bound = INCIRCLE_BOUND * permanent
    if det > bound:
        return 1
    if -det > bound:
        return -1
    return _incircle_exact(ax, ay, bx, by, cx, cy, dx, dy)
