"""Delaunay mesh refinement (Triangle's ``-q``/``-a`` interface) on the GPU or the CPU.

``refine(mesh, min_angle=, max_area=)`` takes and returns Triangle-style dicts;
``triangulate(tri, "pq30a0.01")`` reads Triangle's switch strings.
"""

from .api import clustered_mesh, holes_pslg, random_mesh, refine, refine_with_stats
from .switches import parse_switches, triangulate

__all__ = [
    "clustered_mesh", "holes_pslg", "parse_switches", "random_mesh", "refine",
    "refine_with_stats", "triangulate",
]
