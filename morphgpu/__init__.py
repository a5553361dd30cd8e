"""morphgpu: morph graph algorithms and graph traversal on NVIDIA GPUs, with a NumPy path.

Wings (import them by name): ``morphgpu.bfs``, ``morphgpu.mst``, ``morphgpu.dmr``,
``morphgpu.sp``, ``morphgpu.pta``. Graphs: :class:`CSRGraph` (static) and
:class:`DynamicGraph` (batches of edge insertions and deletions). Importing this package
never imports CuPy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .backend import DeviceError, GPUOutOfMemoryError, gpu_available, resolve_device

if TYPE_CHECKING:
    from .csr import CSRGraph, GraphFormatError
    from .dynamic_graph import BatchResult, DynamicGraph, DynamicGraphError
    from .graph_cache import forget

__version__ = "0.1.0"

# The graph classes load on first use (PEP 562): a `morphgpu sat` run, say, needs neither
# DynamicGraph (its page pool and kernel loader) nor the sparse-matrix cache.
_LAZY = {"CSRGraph": "csr", "GraphFormatError": "csr", "BatchResult": "dynamic_graph",
         "DynamicGraph": "dynamic_graph", "DynamicGraphError": "dynamic_graph",
         "forget": "graph_cache"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

__all__ = [
    "BatchResult",
    "CSRGraph",
    "DynamicGraph",
    "DynamicGraphError",
    "DeviceError",
    "GPUOutOfMemoryError",
    "GraphFormatError",
    "forget",
    "gpu_available",
    "resolve_device",
    "__version__",
]
