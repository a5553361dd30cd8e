"""Delaunay mesh refinement (Triangle's ``-q``/``-a`` interface) on the GPU or the CPU."""

from .api import random_mesh, refine, refine_with_stats

__all__ = ["random_mesh", "refine", "refine_with_stats"]
