"""Minimum spanning forests by Borůvka's algorithm, on the GPU or in NumPy.

``minimum_spanning_tree`` is SciPy's call; ``boruvka`` returns the edges with the total
weight, the number of components and the number of rounds (see api.py for the rules on
ties, explicit zeros and symmetric graphs).
"""

from .api import MSTResult, boruvka, minimum_spanning_tree

__all__ = ["MSTResult", "boruvka", "minimum_spanning_tree"]
