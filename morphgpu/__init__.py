"""morphgpu: morph graph algorithms and graph traversal on NVIDIA GPUs, with a NumPy path.

Wings (import them by name): ``morphgpu.bfs``, ``morphgpu.mst``, ``morphgpu.dmr``,
``morphgpu.sp``, ``morphgpu.pta``. Graphs: :class:`CSRGraph` (static) and
:class:`DynamicGraph` (batches of edge insertions and deletions). Importing this package
never imports CuPy.
"""

from .backend import DeviceError, GPUOutOfMemoryError, gpu_available, resolve_device
from .csr import CSRGraph, GraphFormatError
from .dynamic_graph import BatchResult, DynamicGraph, DynamicGraphError
from .graph_cache import forget

__version__ = "0.1.0"

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
