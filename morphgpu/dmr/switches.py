"""Triangle's switch strings: ``triangulate(A, "pq30a0.01")`` as ``triangle.triangulate``.

The switches that say *what* to build are read: ``p`` (the PSLG's segments and holes),
``r`` (refine the given triangles), ``c`` (convex hull), ``q[angle]`` (quality: smallest
angle, 20° when no number is given, as in Triangle), ``a<area>`` (largest area) and bare
``a`` (per-triangle limits ``triangle_max_area`` with ``r``, regional limits with ``p``).
Switches about verbosity and files (``z``, ``Q``, ``V``, ``n``, ``P``, ``N``, ``E``, ``I``,
``B``, ``X``, ``l``) are passed to Triangle when it runs and otherwise ignored (our output
always has ``neighbors``, and indices start at 0 as the ``triangle`` package's do).

Which code runs: with ``device="auto"`` on a machine without a GPU, or for what only
Triangle does (per-triangle and regional area limits, switches such as ``D``, ``Y``,
``S``, ``o2``, ``e``, ``A``, ``j``, ``O``), the string goes to ``triangle.triangulate``
unchanged, so the result is Triangle's. Otherwise (``device="gpu"``, ``"cpu"``, or
``"auto"`` with a GPU) our refinement runs with the angle and area the switches give,
except that ``"auto"`` leaves inputs too small for the GPU to pay to Triangle
(``api.AUTO_GPU_MIN_TRIANGLES``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import backend
from . import api

# What our refinement reads, what it can leave to the defaults, and what needs Triangle.
_OURS = set("prcqaz")
_IGNORED = set("QVnPNEIXBl")  # verbosity, files not written, algorithm choices
# conforming Delaunay, no Steiner points, edges/attributes/jettison/no-holes output, ...
_TRIANGLE_ONLY = set("DYSiFsCuvgGkKLMRTWejAO")


# The keys of Triangle's dicts (the triangle package's tri.terms), in and out.
_KEYS = frozenset({
    "vertices", "vertex_attributes", "vertex_markers", "triangles", "triangle_max_area",
    "triangle_attributes", "segments", "segment_markers", "holes", "regions", "neighbors",
    "edges", "edge_markers"})
_OUTPUT_ONLY = frozenset({"neighbors", "edges", "edge_markers"})  # Triangle never reads them


@dataclass
class Switches:
    """A parsed switch string."""

    text: str
    flags: set[str] = field(default_factory=set)
    min_angle: float | None = None  # from q
    max_area: float | None = None  # from a<number>
    local_areas: bool = False  # bare a
    triangle_only: list[str] = field(default_factory=list)


_NUMBER = re.compile(r"[0-9.]+")


def parse_switches(opts: str) -> Switches:
    """Read a Triangle switch string (a leading ``-`` is allowed)."""
    if not isinstance(opts, str):
        raise ValueError(f"switches: expected a string such as 'pq30a0.01', got {opts!r}")
    text = opts[1:] if opts.startswith("-") else opts
    sw = Switches(opts)
    i = 0
    while i < len(text):
        ch = text[i]
        i += 1
        if ch in "qa" or (ch == "o" and text[i:i + 1] == "2") or ch in "SY" or ch == "u":
            m = _NUMBER.match(text, i)
            number = m.group(0) if m else ""
            i = m.end() if m else i
            if number:
                try:
                    float(number)
                except ValueError:
                    raise ValueError(f"switches {opts!r}: {ch}{number} is not a number") from None
            if ch == "q":
                sw.min_angle = float(number) if number else 20.0
            elif ch == "a":
                if number:
                    sw.max_area = float(number)
                else:
                    sw.local_areas = True
            else:
                sw.triangle_only.append(ch + number)
            sw.flags.add(ch)
            continue
        if ch in _OURS or ch in _IGNORED:
            sw.flags.add(ch)
        elif ch in _TRIANGLE_ONLY:
            sw.flags.add(ch)
            sw.triangle_only.append(ch)
        else:
            raise ValueError(f"switches {opts!r}: unknown switch {ch!r}")
    if sw.min_angle is not None and not 0 <= sw.min_angle < 60:
        raise ValueError(f"switches {opts!r}: q wants an angle in [0, 60) degrees")
    if sw.max_area is not None and not sw.max_area > 0:
        raise ValueError(f"switches {opts!r}: a wants a positive area")
    return sw


def _needs_triangle(sw: Switches, tri: dict[str, Any]) -> str | None:
    """Why only Triangle can do this, or None."""
    if sw.triangle_only:
        return f"switches {''.join(sw.triangle_only)}"
    if sw.local_areas and (tri.get("triangle_max_area") is not None
                           or tri.get("regions") is not None):
        return "per-triangle or regional area limits (bare a)"
    if sw.min_angle is None and sw.max_area is None:
        return "no refinement asked (no q, no a): a plain triangulation"
    return None


def triangulate(tri: dict[str, Any], opts: str = "", *, device: str = "auto") -> dict[str, Any]:
    """``triangle.triangulate(tri, opts)``, refined by morphgpu where it can.

    See the module notes for the switches read and which code runs. ``device="cpu"`` or
    ``"gpu"`` with switches only Triangle implements is a ValueError naming them.
    """
    if not isinstance(tri, dict):
        raise ValueError("tri: expected a Triangle-style dict with at least 'vertices'")
    unknown = sorted(str(k) for k in tri if k not in _KEYS)
    if unknown:
        # Triangle's wrapper raised a bare KeyError on these; our path ignored them (a
        # misspelt 'segment' meshed without its segments).
        raise ValueError(f"tri: unknown keys {unknown}; Triangle reads {sorted(_KEYS)}")
    sw = parse_switches(opts)
    side = backend.resolve_device(device, who="morphgpu.dmr.triangulate")
    why = _needs_triangle(sw, tri)
    if why is not None and device != "auto":
        raise ValueError(f"triangulate: {why} run through Triangle: use device='auto'")
    mesh = {k: v for k, v in tri.items()}
    if "r" not in sw.flags:
        mesh.pop("triangles", None)  # Triangle triangulates the vertices anew without r
        mesh.pop("triangle_attributes", None)
    if "p" not in sw.flags:
        for name in ("segments", "segment_markers", "holes", "regions"):
            mesh.pop(name, None)
    if not sw.local_areas:
        mesh.pop("triangle_max_area", None)
    if why is not None or (device == "auto" and side == "cpu"):
        # Triangle reads the dict unchecked: NaN or inf coordinates came back as a mesh of
        # no triangles, out-of-range segments were dropped silently, and a 3-column
        # 'vertices' or a flat 'holes' tripped an assertion in its wrapper. Our checks of
        # what these switches make it read come first, naming the key.
        api._validated(mesh, None)
        if mesh.get("triangle_max_area") is not None:
            api._host(mesh["triangle_max_area"], "triangle_max_area", np.float64, None)
        triangle = api._triangle_module()
        try:
            # Output-only keys stay behind: the triangle package fails on its own output
            # fed back with "neighbors" ("Buffer dtype mismatch, expected 'int' but got
            # 'double'"), which refine's output and Triangle's "n" output carry.
            # Empty holes or regions likewise: the wrapper reads past an empty list.
            given = {k: v for k, v in tri.items() if k not in _OUTPUT_ONLY and not (
                k in ("holes", "regions") and v is not None and len(v) == 0)}
            return dict(triangle.triangulate(given, sw.text.lstrip("-")))
        except RuntimeError as exc:
            raise ValueError(f"triangulate: Triangle failed on the input ({exc})") from exc
    # Without q Triangle keeps any angle: a vanishing bound leaves only the area limit.
    angle = sw.min_angle if sw.min_angle else 1e-9
    # "auto" stays "auto": refine picks Triangle for inputs below the GPU's crossover
    return api.refine(mesh, min_angle=angle, max_area=sw.max_area,
                      device="auto" if device == "auto" else side)
