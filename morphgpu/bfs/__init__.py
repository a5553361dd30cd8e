"""Breadth-first search on CSR graphs, on the GPU (CuPy kernels) or the CPU (NumPy).

``bfs(graph, source, variant=..., device=..., predecessors=...)`` and SciPy's
``breadth_first_order``; variants by name in :mod:`morphgpu.bfs.variants`; Graph500's
checks in :mod:`morphgpu.bfs.validate`.
"""

from .api import BFSResult, bfs, breadth_first_order
from .validate import BFSValidationError, graph500_check
from .variants import VARIANTS

__all__ = [
    "BFSResult",
    "BFSValidationError",
    "VARIANTS",
    "bfs",
    "breadth_first_order",
    "graph500_check",
]
